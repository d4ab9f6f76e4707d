#include "compiler/triton/ir/printer.h"

#include <cctype>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/triton/ir/ttir_syntax.h"

namespace mtlemu::triton::ir {
namespace {

constexpr const char* kUnknownValue = "<<UNKNOWN SSA VALUE>>";

std::string TypeText(const Type* t) {
  return t == nullptr ? "<<NULL TYPE>>" : t->ToString();
}

// A pointer or tensor-descriptor type without its "!tt.ptr" or
// "!tt.tensordesc" prefix, as MLIR prints a type whose kind the op's
// syntax already fixes (tt.make_tensor_ptr's "<tensor<64x64xf16>>").
std::string StrippedTypeText(const Type* t) {
  const std::string s = TypeText(t);
  const size_t angle = s.find('<');
  if (t != nullptr && (t->IsPointer() || t->IsTensorDesc()) &&
      angle != std::string::npos) {
    return s.substr(angle);
  }
  return s;
}

bool IsBareIdentifier(std::string_view s) {
  if (s.empty() ||
      !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) {
    return false;
  }
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '$' &&
        c != '.') {
      return false;
    }
  }
  return true;
}

// MLIR's sanitizeIdentifier for SSA names: valid characters are letters,
// digits and $._-; a leading digit gets a '_' in front; a space becomes
// '_', any other byte its hex digits.
std::string SanitizeName(const std::string& name) {
  auto valid = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '$' ||
           c == '.' || c == '_' || c == '-';
  };
  std::string out;
  if (std::isdigit(static_cast<unsigned char>(name[0]))) out += '_';
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (char c : name) {
    if (valid(c)) {
      out += c;
    } else if (c == ' ') {
      out += '_';
    } else {
      const unsigned char u = static_cast<unsigned char>(c);
      if (u >= 16) out += kHex[u >> 4];
      out += kHex[u & 0xF];
    }
  }
  return out;
}

std::string IntText(int64_t value, const Type* type) {
  const int bits = type != nullptr && type->IsInt() ? type->bits() : 64;
  if (bits == 1) return (value & 1) ? "true" : "false";
  return std::to_string(SignExtend(value, bits));
}

std::string ElementText(const std::variant<int64_t, double>& v,
                        const Type* element) {
  if (element != nullptr && element->IsFloat()) {
    const double d = std::holds_alternative<double>(v)
                         ? std::get<double>(v)
                         : static_cast<double>(std::get<int64_t>(v));
    return FormatFloat(d, element->float_format());
  }
  const int64_t i = std::holds_alternative<int64_t>(v)
                        ? std::get<int64_t>(v)
                        : static_cast<int64_t>(std::get<double>(v));
  return IntText(i, element);
}

// The elements of a dense attribute, nested by its shape.
void DenseElements(const DenseAttr& d, const std::vector<int64_t>& shape,
                   size_t dim, size_t& next, std::string& out) {
  const Type* element = d.type != nullptr ? d.type->ScalarType() : nullptr;
  if (dim == shape.size()) {
    out += next < d.values.size() ? ElementText(d.values[next], element)
                                  : "<<MISSING>>";
    ++next;
    return;
  }
  out += '[';
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (i > 0) out += ", ";
    DenseElements(d, shape, dim + 1, next, out);
  }
  out += ']';
}

std::string DenseText(const DenseAttr& d) {
  std::string out = "dense<";
  const Type* element = d.type != nullptr ? d.type->ScalarType() : nullptr;
  if (d.values.size() == 1 || d.type == nullptr || !d.type->IsTensor() ||
      static_cast<int64_t>(d.values.size()) != d.type->NumElements()) {
    if (d.values.size() == 1) {
      out += ElementText(d.values[0], element);
    } else {
      // Not the shape's count: write what there is, flat.
      out += '[';
      for (size_t i = 0; i < d.values.size(); ++i) {
        if (i > 0) out += ", ";
        out += ElementText(d.values[i], element);
      }
      out += ']';
    }
  } else {
    size_t next = 0;
    DenseElements(d, d.type->shape(), 0, next, out);
  }
  return out + "> : " + TypeText(d.type);
}

// An attribute's value. `in_dict`: inside an attribute dictionary, where
// MLIR leaves out ": i64" and ": f64".
std::string AttrText(const Attribute& attr, bool in_dict) {
  if (const auto* i = std::get_if<IntAttr>(&attr)) {
    const int bits =
        i->type != nullptr && i->type->IsInt() ? i->type->bits() : 64;
    std::string s = IntText(i->value, i->type);
    if (bits == 1 || (in_dict && bits == 64)) return s;
    return s + " : " + (i->type != nullptr ? i->type->ToString() : "i64");
  }
  if (const auto* f = std::get_if<FloatAttr>(&attr)) {
    const FloatFormat format = f->type != nullptr && f->type->IsFloat()
                                   ? f->type->float_format()
                                   : FloatFormat::kF64;
    std::string s = FormatFloat(f->value, format);
    if (in_dict && format == FloatFormat::kF64) return s;
    return s + " : " + FloatFormatName(format);
  }
  if (const auto* b = std::get_if<bool>(&attr)) return *b ? "true" : "false";
  if (const auto* s = std::get_if<std::string>(&attr)) return QuoteString(*s);
  if (const auto* d = std::get_if<DenseAttr>(&attr)) return DenseText(*d);
  if (const auto* a = std::get_if<ArrayAttr>(&attr)) {
    std::string s = "array<i32";
    for (size_t k = 0; k < a->values.size(); ++k) {
      s += k == 0 ? ": " : ", ";
      s += std::to_string(a->values[k]);
    }
    return s + ">";
  }
  if (const auto* t = std::get_if<const Type*>(&attr)) return TypeText(*t);
  return "<<ATTRIBUTE>>";
}

// Attributes that are "unit" attributes in Triton (present or absent; the
// IR holds them as bools): written as the bare name when true.
bool IsUnitAttr(OpCode code, const std::string& key) {
  return (code == OpCode::kGather && key == "efficient_layout") ||
         (code == OpCode::kStore && key == "ignore_cta") ||
         (code == OpCode::kReshape &&
          (key == "allow_reorder" || key == "efficient_layout"));
}

// Whether `attr` is the default value of `key`, which TTIR leaves out.
bool IsDefaultAttr(OpCode code, const std::string& key, const Attribute& a) {
  const auto* s = std::get_if<std::string>(&a);
  const auto* b = std::get_if<bool>(&a);
  const auto* i = std::get_if<IntAttr>(&a);
  const auto* arr = std::get_if<ArrayAttr>(&a);
  switch (code) {
    case OpCode::kLoad:
    case OpCode::kStore:
    case OpCode::kDescriptorLoad:
      if (key == "cache") return s != nullptr && *s == "none";
      if (key == "evict") return s != nullptr && *s == "evict_normal";
      if (key == "isVolatile") return b != nullptr && !*b;
      if (key == "boundaryCheck") return arr != nullptr && arr->values.empty();
      return false;
    case OpCode::kDot:
      if (key == "inputPrecision") return s != nullptr && *s == "ieee";
      if (key == "maxNumImpreciseAcc") return i != nullptr && i->value == 0;
      return false;
    case OpCode::kMakeTensorDesc:
      return key == "padding" && s != nullptr && *s == "zero";
    case OpCode::kDotScaled:
      return (key == "lhs_k_pack" || key == "rhs_k_pack") && b != nullptr && *b;
    default:
      return false;
  }
}

// What a symbolic attribute becomes where MLIR writes its integer.
Attribute EnumAsInt(OpCode code, const std::string& key, const Attribute& a) {
  const EnumAttrInfo* info = EnumAttrOf(code, key);
  const auto* s = std::get_if<std::string>(&a);
  if (info == nullptr || s == nullptr) return a;
  std::optional<int64_t> v = EnumValue(*info, *s);
  if (!v) return a;
  return IntAttr{*v, Type::Int(info->bits)};
}

struct AliasKey {
  std::string file;
  int line, column;
  bool operator<(const AliasKey& o) const {
    return std::tie(file, line, column) < std::tie(o.file, o.line, o.column);
  }
};

class Printer {
 public:
  explicit Printer(const PrintOptions& options) : options_(options) {}

  std::string Finish(std::string body) {
    if (options_.locations && options_.location_aliases) {
      for (size_t k = 0; k < aliases_.size(); ++k) {
        body += AliasName(k) + " = loc(" + InlineLoc(aliases_[k]) + ")\n";
      }
    }
    return body;
  }

  void Module(const ir::Module& m) {
    out_ += "module {\n";
    for (const auto& f : m.functions()) Function(*f, 2);
    out_ += "}\n";
  }

  void Function(const ir::Function& f, int indent) {
    NameValues(*f.body());
    const std::string pad(indent, ' ');
    const std::string loc = Loc(f.loc());
    out_ += pad + "tt.func " + (f.is_public() ? "public " : "private ") + "@" +
            Symbol(f.name()) + "(";
    const Block& body = *f.body();
    for (int i = 0; i < body.num_args(); ++i) {
      if (i > 0) out_ += ", ";
      const Value* arg = body.arg(i);
      out_ += Name(arg) + ": " + TypeText(arg->type());
      const ArgInfo* info = i < static_cast<int>(f.arg_info().size())
                                ? &f.arg_info()[i]
                                : nullptr;
      if (info != nullptr && info->divisibility != 0) {
        out_ += " {tt.divisibility = " + std::to_string(info->divisibility) +
                " : i32}";
      }
      if (options_.locations && info != nullptr) {
        const std::string inner = LocRef(info->loc);
        out_ += info->name.empty()
                    ? " loc(" + inner + ")"
                    : " loc(" + QuoteString(info->name) + "(" + inner + "))";
      }
    }
    out_ += ")";
    const auto& results = f.result_types();
    if (results.size() == 1) {
      out_ += " -> " + TypeText(results[0]);
    } else if (!results.empty()) {
      out_ += " -> (" + TypeList(results) + ")";
    }
    out_ += std::string(" attributes {noinline = ") +
            (f.noinline() ? "true" : "false") + "} {\n";
    for (const auto& op : body.ops()) Op(*op, indent + 2);
    out_ += pad + "}" + loc + "\n";
  }

  void TopOp(const Operation& op) {
    const Block* root = op.parent_block();
    while (root != nullptr && root->parent_op() != nullptr) {
      root = root->parent_op()->parent_block();
    }
    if (root != nullptr) NameValues(*root);
    Op(op, 0);
  }

  std::string& out() { return out_; }

 private:
  // --- naming ----------------------------------------------------------------

  struct Counters {
    int value = 0;
    int arg = 0;
    int conflict = 0;
  };
  struct Scope {
    const Scope* parent;
    std::unordered_set<std::string> names;
    bool Has(const std::string& n) const {
      for (const Scope* s = this; s != nullptr; s = s->parent) {
        if (s->names.count(n)) return true;
      }
      return false;
    }
  };

  void NameValues(const Block& root) {
    Counters counters;
    NameBlock(root, counters, nullptr);
  }

  // MLIR's SSANameState: a region's block arguments, then its ops' results,
  // then (each starting from the counters where this region ended) the
  // regions nested in it.
  void NameBlock(const Block& block, Counters counters, const Scope* parent) {
    Scope scope{parent, {}};
    for (int i = 0; i < block.num_args(); ++i) {
      const Value* arg = block.arg(i);
      const std::string fallback = "arg" + std::to_string(counters.arg++);
      names_[arg] = "%" + Unique(arg->name().empty() ? fallback : arg->name(),
                                 scope, counters);
    }
    for (const auto& op : block.ops()) NameResults(*op, scope, counters);
    for (const auto& op : block.ops()) {
      for (int r = 0; r < op->num_regions(); ++r) {
        NameBlock(*op->region(r), counters, &scope);
      }
    }
  }

  std::string Unique(const std::string& name, Scope& scope,
                     Counters& counters) {
    std::string n = SanitizeName(name);
    if (scope.Has(n)) {
      std::string probe;
      do {
        probe = n + "_" + std::to_string(counters.conflict++);
      } while (scope.Has(probe));
      n = probe;
    }
    scope.names.insert(n);
    return n;
  }

  // arith.constant's own names for its result (OpAsmOpInterface).
  static std::string ConstantName(const Operation& op) {
    const Attribute* v = op.attr("value");
    if (v == nullptr) return "";
    if (const auto* i = std::get_if<IntAttr>(v)) {
      if (i->type != nullptr && i->type->IsInt(1)) {
        return (i->value & 1) ? "true" : "false";
      }
      return "c" + IntText(i->value, i->type) + "_" + TypeText(i->type);
    }
    if (const auto* b = std::get_if<bool>(v)) return *b ? "true" : "false";
    return "cst";
  }

  void NameResults(const Operation& op, Scope& scope, Counters& counters) {
    std::string lhs;
    int start = 0;
    while (start < op.num_results()) {
      const std::string& name = op.result(start)->name();
      int end = start + 1;
      while (end < op.num_results() && op.result(end)->name() == name) ++end;
      std::string base = name;
      if (base.empty() && start == 0 && op.code() == OpCode::kConstant) {
        base = ConstantName(op);
      }
      const std::string id = base.empty() ? std::to_string(counters.value++)
                                          : Unique(base, scope, counters);
      if (!lhs.empty()) lhs += ", ";
      lhs += "%" + id;
      if (end - start > 1) lhs += ":" + std::to_string(end - start);
      for (int k = start; k < end; ++k) {
        names_[op.result(k)] = end - start > 1
                                   ? "%" + id + "#" + std::to_string(k - start)
                                   : "%" + id;
      }
      start = end;
    }
    lhs_[&op] = lhs;
  }

  std::string Name(const Value* v) const {
    auto it = names_.find(v);
    return it == names_.end() ? kUnknownValue : it->second;
  }

  std::string Names(const std::vector<Value*>& vs, size_t from = 0,
                    size_t count = std::string::npos) const {
    std::string s;
    for (size_t k = from; k < vs.size() && k - from < count; ++k) {
      if (k > from) s += ", ";
      s += Name(vs[k]);
    }
    return s;
  }

  static std::string Symbol(const std::string& name) {
    return IsBareIdentifier(name) ? name : QuoteString(name);
  }

  // --- locations -------------------------------------------------------------

  static std::string InlineLoc(const SourceLocation& loc) {
    if (!loc.known()) return "unknown";
    return QuoteString(loc.file) + ":" + std::to_string(loc.line) + ":" +
           std::to_string(loc.column);
  }

  static std::string AliasName(size_t k) {
    return k == 0 ? "#loc" : "#loc" + std::to_string(k);
  }

  // What goes inside loc(...): an alias or the location itself.
  std::string LocRef(const SourceLocation& loc) {
    if (!options_.location_aliases) return InlineLoc(loc);
    AliasKey key{loc.known() ? loc.file : "", loc.known() ? loc.line : 0,
                 loc.known() ? loc.column : 0};
    auto [it, inserted] = alias_index_.try_emplace(key, aliases_.size());
    if (inserted) aliases_.push_back(loc);
    return AliasName(it->second);
  }

  // " loc(...)" after an op, or nothing.
  std::string Loc(const SourceLocation& loc) {
    return options_.locations ? " loc(" + LocRef(loc) + ")" : "";
  }

  // --- pieces of syntax ------------------------------------------------------

  static std::string TypeList(const std::vector<const Type*>& ts) {
    std::string s;
    for (size_t k = 0; k < ts.size(); ++k) {
      if (k > 0) s += ", ";
      s += TypeText(ts[k]);
    }
    return s;
  }
  static std::vector<const Type*> TypesOf(const std::vector<Value*>& vs,
                                          size_t from = 0,
                                          size_t count = std::string::npos) {
    std::vector<const Type*> ts;
    for (size_t k = from; k < vs.size() && k - from < count; ++k) {
      ts.push_back(vs[k] == nullptr ? nullptr : vs[k]->type());
    }
    return ts;
  }
  static std::vector<const Type*> ResultTypes(const Operation& op) {
    std::vector<const Type*> ts;
    for (int k = 0; k < op.num_results(); ++k)
      ts.push_back(op.result(k)->type());
    return ts;
  }
  // A function type's results: "T", "(T, U)" or "()".
  static std::string ResultList(const std::vector<const Type*>& ts) {
    if (ts.size() == 1) return TypeText(ts[0]);
    return "(" + TypeList(ts) + ")";
  }
  static std::string FunctionType(const std::vector<const Type*>& in,
                                  const std::vector<const Type*>& out) {
    return "(" + TypeList(in) + ") -> " + ResultList(out);
  }

  // " {a = 1 : i32, b}" of the attributes not in `written` and not at their
  // default; symbolic attributes as their integers.
  static std::string AttrDict(const Operation& op,
                              std::initializer_list<const char*> written) {
    std::string s;
    for (const auto& [key, value] : op.attrs()) {
      bool skip = false;
      for (const char* w : written) skip = skip || key == w;
      if (skip || IsDefaultAttr(op.code(), key, value)) continue;
      const std::string name = IsBareIdentifier(key) ? key : QuoteString(key);
      if (IsUnitAttr(op.code(), key)) {
        const auto* b = std::get_if<bool>(&value);
        if (b != nullptr && !*b) continue;
        if (b != nullptr) {
          s += (s.empty() ? "" : ", ") + name;
          continue;
        }
      }
      s += (s.empty() ? "" : ", ") + name + " = " +
           AttrText(EnumAsInt(op.code(), key, value), true);
    }
    return s.empty() ? "" : " {" + s + "}";
  }

  // " cacheModifier = ca evictionPolicy = evict_last" (when not default).
  static std::string CacheEvict(const Operation& op) {
    std::string s;
    const std::string cache = op.string_attr("cache", "none");
    const std::string evict = op.string_attr("evict", "evict_normal");
    if (cache != "none") s += " cacheModifier = " + cache;
    if (evict != "evict_normal") s += " evictionPolicy = " + evict;
    return s;
  }

  // Whether symbolic attribute `key` holds a known spelling.
  static bool HasEnum(const Operation& op, const char* key) {
    const EnumAttrInfo* info = EnumAttrOf(op.code(), key);
    const Attribute* a = op.attr(key);
    const auto* s = a != nullptr ? std::get_if<std::string>(a) : nullptr;
    return info != nullptr && s != nullptr && EnumValue(*info, *s).has_value();
  }
  static bool HasOptionalEnum(const Operation& op, const char* key) {
    return op.attr(key) == nullptr || HasEnum(op, key);
  }

  // --- operations ------------------------------------------------------------

  void Op(const Operation& op, int indent) {
    const std::string pad(indent, ' ');
    auto lhs = lhs_.find(&op);
    out_ += pad;
    if (op.num_results() > 0 && lhs != lhs_.end()) out_ += lhs->second + " = ";
    if (!Custom(op, indent)) Generic(op, indent);
    out_ += Loc(op.loc()) + "\n";
  }

  void Generic(const Operation& op, int indent) {
    out_ += QuoteString(op.name()) + "(" + Names(op.operands()) + ")";
    std::string props;
    for (const auto& [key, value] : op.attrs()) {
      if (!props.empty()) props += ", ";
      props += (IsBareIdentifier(key) ? key : QuoteString(key)) + " = " +
               AttrText(EnumAsInt(op.code(), key, value), true);
    }
    if (!props.empty()) out_ += " <{" + props + "}>";
    if (op.num_regions() > 0) {
      out_ += " (";
      for (int r = 0; r < op.num_regions(); ++r) {
        if (r > 0) out_ += ", ";
        Region(*op.region(r), indent, /*entry_args=*/true,
               /*terminators=*/true);
      }
      out_ += ")";
    }
    out_ += " : " + FunctionType(TypesOf(op.operands()), ResultTypes(op));
  }

  // "{\n ops \n}" at `indent`; with `entry_args`, a "^bb0(...):" header
  // when the block has arguments; without `terminators`, a final
  // operand-less scf.yield is left out (implied, as MLIR prints it).
  void Region(const Block& block, int indent, bool entry_args,
              bool terminators) {
    const std::string pad(indent, ' ');
    out_ += "{\n";
    if (entry_args && block.num_args() > 0) {
      out_ += pad + "^bb0(";
      for (int i = 0; i < block.num_args(); ++i) {
        if (i > 0) out_ += ", ";
        out_ += Name(block.arg(i)) + ": " + TypeText(block.arg(i)->type());
      }
      out_ += "):\n";
    }
    for (size_t k = 0; k < block.ops().size(); ++k) {
      const Operation& op = *block.ops()[k];
      const bool last = k + 1 == block.ops().size();
      if (last && !terminators && op.code() == OpCode::kYield &&
          op.num_operands() == 0 && op.attrs().empty()) {
        continue;
      }
      Op(op, indent + 2);
    }
    out_ += pad + "}";
  }

  const Value* Operand(const Operation& op, int i) const {
    return i < op.num_operands() ? op.operand(i) : nullptr;
  }
  std::string OT(const Operation& op, int i) const {
    const Value* v = Operand(op, i);
    return TypeText(v == nullptr ? nullptr : v->type());
  }
  std::string RT(const Operation& op, int i = 0) const {
    return TypeText(i < op.num_results() ? op.result(i)->type() : nullptr);
  }
  bool Shape(const Operation& op, int operands, int results,
             int regions = 0) const {
    if (op.num_operands() != operands || op.num_results() != results ||
        op.num_regions() != regions) {
      return false;
    }
    for (Value* v : op.operands()) {
      if (v == nullptr) return false;
    }
    return true;
  }
  bool NoNullOperands(const Operation& op) const {
    for (Value* v : op.operands()) {
      if (v == nullptr) return false;
    }
    return op.num_regions() == 0;
  }

  // Writes `op` in its own syntax after "name"; false (nothing written)
  // when the IR does not fit that syntax.
  bool Custom(const Operation& op, int indent) {
    const std::string name = op.name();
    const std::string a0 = op.num_operands() > 0 ? Name(op.operand(0)) : "";
    switch (FormFor(op)) {
      case OpForm::kConstant: {
        const Attribute* v = op.attr("value");
        if (!Shape(op, 0, 1) || v == nullptr ||
            !(std::holds_alternative<IntAttr>(*v) ||
              std::holds_alternative<FloatAttr>(*v) ||
              std::holds_alternative<DenseAttr>(*v) ||
              std::holds_alternative<bool>(*v))) {
          return false;
        }
        out_ += name + AttrDict(op, {"value"}) + " " + AttrText(*v, false);
        return true;
      }
      case OpForm::kBinary:
      case OpForm::kUnary:
      case OpForm::kTernary: {
        const int n = FormFor(op) == OpForm::kUnary    ? 1
                      : FormFor(op) == OpForm::kBinary ? 2
                                                       : 3;
        if (!Shape(op, n, 1)) return false;
        out_ += name + " " + Names(op.operands()) + Flags(op) +
                AttrDict(op, {"fastmath", "overflowFlags"}) + " : " + RT(op);
        return true;
      }
      case OpForm::kCompare:
        if (!Shape(op, 2, 1) || !HasEnum(op, "predicate")) return false;
        out_ += name + " " + op.string_attr("predicate") + ", " +
                Names(op.operands()) + AttrDict(op, {"predicate"}) + " : " +
                OT(op, 0);
        return true;
      case OpForm::kSelect: {
        if (!Shape(op, 3, 1)) return false;
        const Type* c = op.operand(0)->type();
        out_ += name + " " + Names(op.operands()) + AttrDict(op, {}) + " : " +
                (c != nullptr && c->IsTensor() ? TypeText(c) + ", " : "") +
                RT(op);
        return true;
      }
      case OpForm::kCast:
        if (!Shape(op, 1, 1)) return false;
        out_ += name + " " + a0 + Flags(op) +
                AttrDict(op, {"fastmath", "roundingmode"}) + " : " + OT(op, 0) +
                " to " + RT(op);
        return true;
      case OpForm::kArrowCast: {
        if (!Shape(op, 1, 1)) return false;
        std::string keywords;
        if (op.code() == OpCode::kReshape) {
          if (op.bool_attr("allow_reorder")) keywords += " allow_reorder";
          if (op.bool_attr("efficient_layout")) keywords += " efficient_layout";
        }
        out_ +=
            name + " " + a0 + keywords +
            AttrDict(
                op, op.code() == OpCode::kReshape
                        ? std::initializer_list<const char*>{"allow_reorder",
                                                             "efficient_layout"}
                        : std::initializer_list<const char*>{}) +
            " : " + OT(op, 0) + " -> " + RT(op);
        return true;
      }
      case OpForm::kCustom:
        return CustomOp(op, indent);
    }
    return false;
  }

  static OpForm FormFor(const Operation& op) { return FormOf(op.code()); }

  // arith's optional flags, held as string attributes.
  static std::string Flags(const Operation& op) {
    std::string s;
    const std::string fm = op.string_attr("fastmath", "none");
    if (fm != "none") s += " fastmath<" + fm + ">";
    const std::string ov = op.string_attr("overflowFlags", "none");
    if (ov != "none") s += " overflow<" + ov + ">";
    const std::string rm = op.string_attr("roundingmode");
    if (!rm.empty()) s += " " + rm;
    return s;
  }

  bool CustomOp(const Operation& op, int indent) {
    const std::string name = op.name();
    const int n = op.num_operands();
    const std::string a0 = n > 0 ? Name(op.operand(0)) : "";
    switch (op.code()) {
      case OpCode::kGetProgramId:
      case OpCode::kGetNumPrograms: {
        const int64_t axis = op.int_attr("axis", -1);
        if (!Shape(op, 0, 1) || axis < 0 || axis > 2) return false;
        out_ += name + " " + std::string(1, static_cast<char>('x' + axis)) +
                AttrDict(op, {"axis"}) + " : " + RT(op);
        return true;
      }
      case OpCode::kMakeRange:
        if (!Shape(op, 0, 1)) return false;
        out_ += name + AttrDict(op, {}) + " : " + RT(op);
        return true;
      case OpCode::kCat:
      case OpCode::kJoin:
        if (!Shape(op, 2, 1)) return false;
        out_ += name + " " + Names(op.operands()) + AttrDict(op, {}) + " : " +
                OT(op, 0) + " -> " + RT(op);
        return true;
      case OpCode::kSplit:
        if (!Shape(op, 1, 2)) return false;
        out_ += name + " " + a0 + AttrDict(op, {}) + " : " + OT(op, 0) +
                " -> " + RT(op);
        return true;
      case OpCode::kGather:
        if (!Shape(op, 2, 1)) return false;
        out_ += name + " " + a0 + "[" + Name(op.operand(1)) + "]" +
                AttrDict(op, {}) + " : " +
                FunctionType(TypesOf(op.operands()), ResultTypes(op));
        return true;
      case OpCode::kHistogram:
        if (!(Shape(op, 1, 1) || Shape(op, 2, 1))) return false;
        out_ += name + " " + Names(op.operands()) + AttrDict(op, {}) + " : " +
                OT(op, 0) + " -> " + RT(op);
        return true;
      case OpCode::kUnsplat:
        if (!Shape(op, 1, 1)) return false;
        out_ += name + " " + a0 + AttrDict(op, {}) + " : " + OT(op, 0);
        return true;
      case OpCode::kAddPtr:
        if (!Shape(op, 2, 1)) return false;
        out_ += name + " " + Names(op.operands()) + AttrDict(op, {}) + " : " +
                RT(op) + ", " + OT(op, 1);
        return true;
      case OpCode::kLoad:
        if (!((Shape(op, 1, 1) || Shape(op, 2, 1) || Shape(op, 3, 1)) &&
              HasOptionalEnum(op, "cache") && HasOptionalEnum(op, "evict") &&
              HasOptionalEnum(op, "padding"))) {
          return false;
        }
        out_ += name + " " + Names(op.operands()) + CacheEvict(op) +
                AttrDict(op, {"cache", "evict"}) + " : " + OT(op, 0);
        return true;
      case OpCode::kStore:
        if (!((Shape(op, 2, 0) || Shape(op, 3, 0)) &&
              HasOptionalEnum(op, "cache") && HasOptionalEnum(op, "evict"))) {
          return false;
        }
        out_ += name + " " + Names(op.operands()) + CacheEvict(op) +
                AttrDict(op, {"cache", "evict"}) + " : " + OT(op, 0);
        return true;
      case OpCode::kAtomicRMW:
        if (!((Shape(op, 2, 1) || Shape(op, 3, 1)) &&
              HasEnum(op, "atomic_rmw_op") && HasEnum(op, "sem") &&
              HasEnum(op, "scope"))) {
          return false;
        }
        out_ += name + " " + op.string_attr("atomic_rmw_op") + ", " +
                op.string_attr("sem") + ", " + op.string_attr("scope") + ", " +
                Names(op.operands()) +
                AttrDict(op, {"atomic_rmw_op", "sem", "scope"}) + " : " +
                FunctionType(TypesOf(op.operands()), ResultTypes(op));
        return true;
      case OpCode::kAtomicCAS:
        if (!(Shape(op, 3, 1) && HasEnum(op, "sem") && HasEnum(op, "scope"))) {
          return false;
        }
        out_ += name + " " + op.string_attr("sem") + ", " +
                op.string_attr("scope") + ", " + Names(op.operands()) +
                AttrDict(op, {"sem", "scope"}) + " : " +
                FunctionType(TypesOf(op.operands()), ResultTypes(op));
        return true;
      case OpCode::kMakeTensorPtr: {
        if (!NoNullOperands(op) || op.num_results() != 1 || n < 1 ||
            (n - 1) % 3 != 0) {
          return false;
        }
        const size_t rank = (n - 1) / 3;
        out_ += name + " " + a0 + ", [" + Names(op.operands(), 1, rank) +
                "], [" + Names(op.operands(), 1 + rank, rank) + "], [" +
                Names(op.operands(), 1 + 2 * rank, rank) + "]" +
                AttrDict(op, {}) + " : " +
                StrippedTypeText(op.result()->type());
        return true;
      }
      case OpCode::kAdvance:
        if (!NoNullOperands(op) || op.num_results() != 1 || n < 1) return false;
        out_ += name + " " + a0 + ", [" + Names(op.operands(), 1) + "]" +
                AttrDict(op, {}) + " : " +
                StrippedTypeText(op.result()->type());
        return true;
      case OpCode::kMakeTensorDesc: {
        if (!NoNullOperands(op) || op.num_results() != 1 || n < 1 ||
            (n - 1) % 2 != 0 || !HasOptionalEnum(op, "padding")) {
          return false;
        }
        const size_t rank = (n - 1) / 2;
        out_ += name + " " + a0 + ", [" + Names(op.operands(), 1, rank) +
                "], [" + Names(op.operands(), 1 + rank, rank) + "]" +
                AttrDict(op, {}) + " : " +
                StrippedTypeText(op.operand(0)->type()) + ", " +
                StrippedTypeText(op.result()->type());
        return true;
      }
      case OpCode::kDescriptorLoad:
        if (!(NoNullOperands(op) && op.num_results() == 1 && n >= 1 &&
              HasOptionalEnum(op, "cache") && HasOptionalEnum(op, "evict"))) {
          return false;
        }
        out_ += name + " " + a0 + "[" + Names(op.operands(), 1) + "]" +
                CacheEvict(op) + AttrDict(op, {"cache", "evict"}) + " : " +
                OT(op, 0) + " -> " + RT(op);
        return true;
      case OpCode::kDescriptorStore:
        if (!NoNullOperands(op) || op.num_results() != 0 || n < 2) return false;
        out_ += name + " " + a0 + "[" + Names(op.operands(), 2) + "], " +
                Name(op.operand(1)) + AttrDict(op, {}) + " : " + OT(op, 0) +
                ", " + OT(op, 1);
        return true;
      case OpCode::kDescriptorGather:
        if (!Shape(op, 3, 1)) return false;
        out_ += name + " " + a0 + "[" + Names(op.operands(), 1) + "]" +
                AttrDict(op, {}) + " : " +
                FunctionType(TypesOf(op.operands()), ResultTypes(op));
        return true;
      case OpCode::kDescriptorScatter:
        if (!Shape(op, 4, 0)) return false;
        out_ += name + " " + a0 + "[" + Names(op.operands(), 1, 2) + "], " +
                Name(op.operand(3)) + AttrDict(op, {}) + " : " +
                TypeList(TypesOf(op.operands()));
        return true;
      case OpCode::kDescriptorReduce:
        if (!NoNullOperands(op) || op.num_results() != 0 || n < 2 ||
            !HasEnum(op, "kind")) {
          return false;
        }
        out_ += name + " " + op.string_attr("kind") + ", " + a0 + "[" +
                Names(op.operands(), 2) + "], " + Name(op.operand(1)) +
                AttrDict(op, {"kind"}) + " : " + OT(op, 0) + ", " + OT(op, 1);
        return true;
      case OpCode::kDot: {
        if (!Shape(op, 3, 1) || !HasOptionalEnum(op, "inputPrecision")) {
          return false;
        }
        const std::string precision = op.string_attr("inputPrecision", "ieee");
        out_ += name + " " + Names(op.operands()) +
                (precision != "ieee" ? ", inputPrecision = " + precision : "") +
                AttrDict(op, {"inputPrecision"}) + " : " + OT(op, 0) + " * " +
                OT(op, 1) + " -> " + RT(op);
        return true;
      }
      case OpCode::kDotScaled:
        return DotScaled(op);
      case OpCode::kReduce:
      case OpCode::kScan:
      case OpCode::kMapElementwise:
        return false;  // Triton prints these generically
      case OpCode::kReduceReturn:
      case OpCode::kScanReturn:
        if (!NoNullOperands(op) || op.num_results() != 0) return false;
        out_ += name + " " + Names(op.operands()) + AttrDict(op, {}) + " : " +
                TypeList(TypesOf(op.operands()));
        return true;
      case OpCode::kMapElementwiseReturn:
      case OpCode::kReturn:
      case OpCode::kYield:
        if (!NoNullOperands(op) || op.num_results() != 0) return false;
        out_ += name + AttrDict(op, {});
        if (n > 0) {
          out_ += " " + Names(op.operands()) + " : " +
                  TypeList(TypesOf(op.operands()));
        }
        return true;
      case OpCode::kFpToFp:
        if (!Shape(op, 1, 1) || !HasOptionalEnum(op, "rounding")) return false;
        out_ += name + " " + a0 + AttrDict(op, {"rounding"});
        if (op.attr("rounding") != nullptr) {
          out_ += ", rounding = " + op.string_attr("rounding");
        }
        out_ += " : " + OT(op, 0) + " -> " + RT(op);
        return true;
      case OpCode::kClampF:
        if (!Shape(op, 3, 1) || !HasEnum(op, "propagateNan")) return false;
        out_ += name + " " + Names(op.operands()) +
                ", propagateNan = " + op.string_attr("propagateNan") +
                AttrDict(op, {"propagateNan"}) + " : " + RT(op);
        return true;
      case OpCode::kExternElementwise:
        if (!NoNullOperands(op) || op.num_results() != 1) return false;
        out_ += name + (n > 0 ? " " + Names(op.operands()) : "") +
                AttrDict(op, {}) + " : " +
                FunctionType(TypesOf(op.operands()), ResultTypes(op));
        return true;
      case OpCode::kElementwiseInlineAsm: {
        const Attribute* s = op.attr("asm_string");
        if (!NoNullOperands(op) || s == nullptr ||
            !std::holds_alternative<std::string>(*s)) {
          return false;
        }
        out_ += name + " " + QuoteString(std::get<std::string>(*s)) +
                AttrDict(op, {"asm_string"});
        if (n > 0) {
          out_ += " " + Names(op.operands()) + " : " +
                  TypeList(TypesOf(op.operands()));
        }
        out_ += " -> " + TypeList(ResultTypes(op));
        return true;
      }
      case OpCode::kPrint: {
        const Attribute* p = op.attr("prefix");
        if (!NoNullOperands(op) || op.num_results() != 0 || p == nullptr ||
            !std::holds_alternative<std::string>(*p)) {
          return false;
        }
        out_ += name + " " + QuoteString(std::get<std::string>(*p)) +
                AttrDict(op, {"prefix"});
        if (n > 0) {
          out_ += " : " + Names(op.operands()) + " : " +
                  TypeList(TypesOf(op.operands()));
        }
        return true;
      }
      case OpCode::kAssert: {
        const Attribute* m = op.attr("message");
        if (!Shape(op, 1, 0) || m == nullptr ||
            !std::holds_alternative<std::string>(*m)) {
          return false;
        }
        out_ += name + " " + a0 + ", " +
                QuoteString(std::get<std::string>(*m)) +
                AttrDict(op, {"message"}) + " : " + OT(op, 0);
        return true;
      }
      case OpCode::kBarrier:
        if (!Shape(op, 0, 0)) return false;
        out_ += name + AttrDict(op, {});
        return true;
      case OpCode::kAssume:
        if (!Shape(op, 1, 0)) return false;
        out_ += name + " " + a0 + " : " + OT(op, 0) + AttrDict(op, {});
        return true;
      case OpCode::kPoison:
        if (!Shape(op, 0, 1)) return false;
        out_ += name + AttrDict(op, {}) + " : " + RT(op);
        return true;
      case OpCode::kCall: {
        const Attribute* callee = op.attr("callee");
        if (!NoNullOperands(op) || callee == nullptr ||
            !std::holds_alternative<std::string>(*callee)) {
          return false;
        }
        out_ += name + " @" + Symbol(std::get<std::string>(*callee)) + "(" +
                Names(op.operands()) + ")" + AttrDict(op, {"callee"}) + " : " +
                FunctionType(TypesOf(op.operands()), ResultTypes(op));
        return true;
      }
      case OpCode::kFor:
        return For(op, indent);
      case OpCode::kIf:
        return If(op, indent);
      case OpCode::kWhile:
        return While(op, indent);
      case OpCode::kCondition:
        if (!NoNullOperands(op) || op.num_results() != 0 || n < 1) return false;
        out_ += name + "(" + a0 + ")" + AttrDict(op, {});
        if (n > 1) {
          out_ += " " + Names(op.operands(), 1) + " : " +
                  TypeList(TypesOf(op.operands(), 1));
        }
        return true;
      default:
        return false;  // a form-based op: written by Custom()
    }
  }

  bool DotScaled(const Operation& op) {
    const std::vector<int64_t> seg = op.array_attr("operandSegmentSizes");
    if (seg.size() != 5 || seg[0] != 1 || seg[1] != 1 || seg[2] != 1 ||
        seg[3] < 0 || seg[3] > 1 || seg[4] < 0 || seg[4] > 1 ||
        op.num_operands() != 3 + seg[3] + seg[4] || !NoNullOperands(op) ||
        op.num_results() != 1 || !HasEnum(op, "a_elem_type") ||
        !HasEnum(op, "b_elem_type")) {
      return false;
    }
    const int a_scale = seg[3] ? 3 : -1;
    const int b_scale = seg[4] ? 3 + static_cast<int>(seg[3]) : -1;
    out_ += std::string(op.name()) + " " + Name(op.operand(0));
    if (a_scale >= 0) out_ += " scale " + Name(op.operand(a_scale));
    out_ += ", " + Name(op.operand(1));
    if (b_scale >= 0) out_ += " scale " + Name(op.operand(b_scale));
    out_ +=
        ", " + Name(op.operand(2)) + " lhs = " + op.string_attr("a_elem_type") +
        " rhs = " + op.string_attr("b_elem_type") +
        AttrDict(op, {"a_elem_type", "b_elem_type", "operandSegmentSizes"}) +
        " : " + OT(op, 0);
    if (a_scale >= 0) out_ += ", " + OT(op, a_scale);
    out_ += " * " + OT(op, 1);
    if (b_scale >= 0) out_ += ", " + OT(op, b_scale);
    out_ += " -> " + RT(op);
    return true;
  }

  bool For(const Operation& op, int indent) {
    const int n = op.num_operands();
    if (n < 3 || op.num_regions() != 1 || !NoNullOperandsOnly(op)) return false;
    const Block& body = *op.region(0);
    const int inits = n - 3;
    if (body.num_args() != inits + 1) return false;
    out_ += std::string(op.name()) +
            (op.bool_attr("unsignedCmp") ? " unsigned" : "") + " " +
            Name(body.arg(0)) + " = " + Name(op.operand(0)) + " to " +
            Name(op.operand(1)) + " step " + Name(op.operand(2));
    if (inits > 0) {
      out_ += " iter_args(";
      for (int k = 0; k < inits; ++k) {
        if (k > 0) out_ += ", ";
        out_ += Name(body.arg(k + 1)) + " = " + Name(op.operand(k + 3));
      }
      out_ += ") -> (" + TypeList(TypesOf(op.operands(), 3)) + ")";
    }
    out_ += "  : " + TypeText(body.arg(0)->type()) + " ";
    Region(body, indent, false, inits > 0);
    out_ += AttrDict(op, {"unsignedCmp"});
    return true;
  }

  bool If(const Operation& op, int indent) {
    if (op.num_operands() != 1 || op.operand(0) == nullptr ||
        op.num_regions() != 2 || op.region(0)->num_args() != 0 ||
        op.region(1)->num_args() != 0) {
      return false;
    }
    const bool results = op.num_results() > 0;
    out_ += std::string(op.name()) + " " + Name(op.operand(0));
    if (results) out_ += " -> (" + TypeList(ResultTypes(op)) + ")";
    out_ += " ";
    Region(*op.region(0), indent, false, results);
    if (!op.region(1)->empty()) {
      out_ += " else ";
      Region(*op.region(1), indent, false, results);
    }
    out_ += AttrDict(op, {});
    return true;
  }

  bool While(const Operation& op, int indent) {
    if (op.num_regions() != 2 || !NoNullOperandsOnly(op) ||
        op.region(0)->num_args() != op.num_operands()) {
      return false;
    }
    const Block& before = *op.region(0);
    out_ += op.name();
    if (op.num_operands() > 0) {
      out_ += " (";
      for (int k = 0; k < op.num_operands(); ++k) {
        if (k > 0) out_ += ", ";
        out_ += Name(before.arg(k)) + " = " + Name(op.operand(k));
      }
      out_ += ")";
    }
    out_ += " : " + FunctionType(TypesOf(op.operands()), ResultTypes(op)) + " ";
    Region(before, indent, false, true);
    out_ += " do ";
    Region(*op.region(1), indent, true, true);
    const std::string dict = AttrDict(op, {});
    if (!dict.empty()) out_ += " attributes" + dict;
    return true;
  }

  static bool NoNullOperandsOnly(const Operation& op) {
    for (Value* v : op.operands()) {
      if (v == nullptr) return false;
    }
    return true;
  }

  const PrintOptions& options_;
  std::string out_;
  std::unordered_map<const Value*, std::string> names_;
  std::unordered_map<const Operation*, std::string> lhs_;
  std::map<AliasKey, size_t> alias_index_;
  std::vector<SourceLocation> aliases_;
};

}  // namespace

std::string PrintModule(const Module& module, const PrintOptions& options) {
  Printer p(options);
  p.Module(module);
  return p.Finish(std::move(p.out()));
}

std::string PrintFunction(const Function& function,
                          const PrintOptions& options) {
  Printer p(options);
  p.Function(function, 0);
  return p.Finish(std::move(p.out()));
}

std::string PrintOperation(const Operation& op, const PrintOptions& options) {
  Printer p(options);
  p.TopOp(op);
  return p.Finish(std::move(p.out()));
}

std::string PrintAttribute(const Attribute& attr) {
  return AttrText(attr, false);
}

}  // namespace mtlemu::triton::ir
