#include "compiler/triton/ttir/reader.h"

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "compiler/triton/ir/ttir_syntax.h"
#include "compiler/triton/ttir/text_parser.h"

namespace mtlemu::triton::ttir {
namespace {

using namespace internal;  // NOLINT: the reader's own building blocks
using ir::Block;
using ir::OpCode;
using ir::Operation;
using ir::OpForm;
using ir::Value;

// A name MLIR makes up rather than one from the program: %3, %arg2.
bool IsMadeUpName(const std::string& s) {
  return AllDigits(s) || (s.size() > 3 && s.compare(0, 3, "arg") == 0 &&
                          AllDigits(s.substr(3)));
}

// i1 in the shape of `t`.
const Type* I1Like(const Type* t) { return t->WithElement(Type::I1()); }

// What a pointer-like type points to: the pointee of a pointer, a tensor
// of the pointees of a tensor of pointers, the tensor of a block pointer.
const Type* PointeeOf(const Type* t) {
  if (t->IsPointer()) return t->pointee();
  if (t->IsTensor() && t->element()->IsPointer()) {
    return Type::Tensor(t->shape(), t->element()->pointee());
  }
  return nullptr;
}

// Modules, functions, regions and operations, on TextParser's pieces.
class Reader : public TextParser {
 public:
  Reader(std::string_view text, std::string_view file)
      : TextParser(text, file), module_(std::make_unique<ir::Module>()) {}

  Result<std::unique_ptr<ir::Module>> Read() {
    if (!ReadFile() || !ResolveAll()) {
      if (!error_) error_ = Error{file_ + ": error: malformed TTIR"};
      return *error_;
    }
    return std::move(module_);
  }

 private:
  // --- values ----------------------------------------------------------------

  bool ExpectRefs(const std::vector<ValueRef>& refs, size_t n,
                  const Operation* op, size_t pos) {
    if (refs.size() == n) return true;
    return Fail(pos, std::string(op->name()) + " takes " + std::to_string(n) +
                         " operand" + (n == 1 ? "" : "s") + ", found " +
                         std::to_string(refs.size()));
  }

  Value* Lookup(const std::string& name, int index) const {
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
      auto it = s->find(name);
      if (it == s->end()) continue;
      const int i = index < 0 ? 0 : index;
      return i < static_cast<int>(it->second.size()) ? it->second[i] : nullptr;
    }
    return nullptr;
  }

  // The value `ref` names, which must have type `expected` (when given).
  bool Resolve(const ValueRef& ref, const Type* expected, Value** out) {
    Value* v = Lookup(ref.name, ref.index);
    if (v == nullptr) {
      std::string shown = "%" + ref.name;
      if (ref.index >= 0) shown += "#" + std::to_string(ref.index);
      if (body_names_.count(ref.name)) {
        return Fail(ref.pos, "'" + shown +
                                 "' is not defined on every path that "
                                 "reaches this use (its block does not "
                                 "dominate it)");
      }
      return Fail(ref.pos, "use of undefined value '" + shown + "'");
    }
    if (expected != nullptr && v->type() != expected) {
      return Fail(ref.pos, "'%" + ref.name + "' has type " +
                               TypeText(v->type()) + ", but is used as " +
                               TypeText(expected));
    }
    *out = v;
    return true;
  }

  bool AddOperand(Operation* op, const ValueRef& ref, const Type* expected) {
    Value* v = nullptr;
    if (!Resolve(ref, expected, &v)) return false;
    op->add_operand(v);
    return true;
  }

  bool AddOperands(Operation* op, const std::vector<ValueRef>& refs,
                   const std::vector<const Type*>& types, size_t pos) {
    if (refs.size() != types.size()) {
      return Fail(pos, std::string(op->name()) + " has " +
                           std::to_string(refs.size()) + " operands but " +
                           std::to_string(types.size()) + " operand types");
    }
    for (size_t k = 0; k < refs.size(); ++k) {
      if (!AddOperand(op, refs[k], types[k])) return false;
    }
    return true;
  }

  bool Define(const std::string& name, std::vector<Value*> values, size_t pos) {
    for (const auto& s : scopes_) {
      if (s.count(name))
        return Fail(pos, "redefinition of value '%" + name + "'");
    }
    scopes_.back().emplace(name, std::move(values));
    return true;
  }

  // A block argument named `ref` (its SSA name becomes the value's name
  // unless MLIR made it up).
  bool DefineArg(Value* arg, const ValueRef& ref, int loc) {
    if (ref.index >= 0) return Fail(ref.pos, "expected a plain name");
    if (!Define(ref.name, {arg}, ref.pos)) return false;
    if (IsMadeUpName(ref.name)) {
      if (loc >= 0) pending_values_.push_back({arg, loc});
    } else {
      arg->set_name(ref.name);
    }
    return true;
  }

  // --- structure -------------------------------------------------------------

  bool ReadFile() {
    bool seen_module = false;
    while (!AtEnd()) {
      const size_t at = Here();
      if (Peek() == '#') {
        if (!ParseAliasDef()) return false;
      } else if (PeekWord() == "module") {
        if (seen_module) return Fail(at, "a second module");
        seen_module = true;
        if (!ParseModule()) return false;
      } else if (PeekWord() == "tt.func") {
        if (!ParseFunction()) return false;
      } else {
        return Fail(
            at, "expected 'module', 'tt.func' or a #loc definition" + Found());
      }
    }
    return true;
  }

  bool ParseModule() {
    const size_t start = Here();
    TryWord("module");
    if (Try('@')) {
      std::string name;
      if (Raw() == '"' ? !ParseString(&name)
                       : !ParseWord(&name, "a module name")) {
        return false;
      }
    }
    if (TryWord("attributes")) {
      std::map<std::string, Attribute> ignored;
      if (!ParseAttrDict(&ignored)) return false;
    }
    if (!Expect('{', "to open the module")) return false;
    while (!Try('}')) {
      const size_t at = Here();
      if (at >= text_.size()) {
        return Fail(at, "the module opened at " + LineCol(start) +
                            " has no closing '}'");
      }
      if (PeekWord() != "tt.func") {
        return Fail(at, "expected a tt.func in the module" + Found());
      }
      if (!ParseFunction()) return false;
    }
    int loc = -1;
    if (!TryLoc(&loc)) return false;
    if (loc >= 0) checked_locs_.push_back(loc);
    return true;
  }

  struct ArgText {
    ValueRef ref;
    const Type* type = nullptr;
    int divisibility = 0;
    int loc = -1;
  };

  bool ParseFunction() {
    TryWord("tt.func");
    bool is_public = true;
    if (TryWord("private")) {
      is_public = false;
    } else if (!TryWord("public")) {
      TryWord("nested");
    }
    if (!Expect('@', "before the function's name")) return false;
    std::string name;
    if (Raw() == '"' ? !ParseString(&name)
                     : !ParseWord(&name, "the function's name")) {
      return false;
    }
    if (module_->Find(name) != nullptr) {
      return Fail(Here(), "redefinition of function @" + name);
    }
    if (!Expect('(', "to open the argument list")) return false;
    std::vector<ArgText> args;
    if (!Try(')')) {
      do {
        ArgText arg;
        if (Peek() != '%') {
          return Fail(Here(),
                      "function declarations (argument types without "
                      "names) are not supported");
        }
        if (!ParseValueRef(&arg.ref)) return false;
        if (!Expect(':', "after the argument's name")) return false;
        if (!ParseType(&arg.type)) return false;
        if (Peek() == '{') {
          std::map<std::string, Attribute> attrs;
          const size_t at = Here();
          if (!ParseAttrDict(&attrs)) return false;
          auto it = attrs.find("tt.divisibility");
          if (it != attrs.end()) {
            const auto* i = std::get_if<IntAttr>(&it->second);
            if (i == nullptr || i->value < 0 || i->value > (1 << 30)) {
              return Fail(at, "tt.divisibility must be an integer");
            }
            arg.divisibility = static_cast<int>(i->value);
          }
        }
        if (!TryLoc(&arg.loc)) return false;
        args.push_back(std::move(arg));
      } while (Try(','));
      if (!Expect(')', "to close the argument list")) return false;
    }
    std::vector<const Type*> results;
    if (TryArrow()) {
      if (Try('(')) {
        if (!Try(')')) {
          do {
            const Type* t = nullptr;
            if (!ParseType(&t)) return false;
            results.push_back(t);
            if (Peek() == '{') {
              std::map<std::string, Attribute> ignored;
              if (!ParseAttrDict(&ignored)) return false;
            }
          } while (Try(','));
          if (!Expect(')', "to close the result list")) return false;
        }
      } else {
        const Type* t = nullptr;
        if (!ParseType(&t)) return false;
        results.push_back(t);
      }
    }
    bool noinline = false;
    if (TryWord("attributes")) {
      std::map<std::string, Attribute> attrs;
      if (!ParseAttrDict(&attrs)) return false;
      auto it = attrs.find("noinline");
      if (it != attrs.end()) {
        const auto* b = std::get_if<bool>(&it->second);
        noinline = b != nullptr && *b;
      }
    }
    if (Peek() != '{') {
      return Fail(Here(), "function declarations (no body) are not supported" +
                              Found());
    }
    ir::Function* f = module_->AddFunction(
        std::make_unique<ir::Function>(name, SourceLocation{}));
    f->set_public(is_public);
    f->set_noinline(noinline);
    for (const Type* t : results) f->add_result_type(t);
    // A function sees nothing from outside.
    std::vector<std::unordered_map<std::string, std::vector<Value*>>> outer;
    outer.swap(scopes_);
    scopes_.emplace_back();
    bool ok = true;
    for (size_t k = 0; k < args.size() && ok; ++k) {
      const ArgText& a = args[k];
      const bool made_up = IsMadeUpName(a.ref.name);
      ir::ArgInfo info;
      info.name = made_up ? "" : a.ref.name;
      info.divisibility = a.divisibility;
      Value* v = f->AddArgument(a.type, info);
      if (a.ref.index >= 0) ok = Fail(a.ref.pos, "expected a plain name");
      ok = ok && Define(a.ref.name, {v}, a.ref.pos);
      pending_args_.push_back({f, static_cast<int>(k), a.loc, made_up});
    }
    ok = ok && ParseBody(f);
    scopes_.swap(outer);
    if (!ok) return false;
    int loc = -1;
    if (!TryLoc(&loc)) return false;
    pending_functions_.push_back({f, loc});
    return true;
  }

  struct RegionArg {
    ValueRef ref;
    int loc = -1;
  };

  // "{ ops }" into `block`, whose arguments (already added) are named by
  // `names`; with `entry_header`, the block may start with "^bb0(%a: T):".
  bool ParseRegion(Block* block, const std::vector<ValueRef>& names,
                   bool entry_header) {
    const size_t open = Here();
    if (!Expect('{', "to open a region")) return false;
    if (++depth_ > kMaxDepth) return Fail(open, "regions nested too deep");
    scopes_.emplace_back();
    bool ok = true;
    for (size_t k = 0; k < names.size() && ok; ++k) {
      ok = DefineArg(block->arg(static_cast<int>(k)), names[k], -1);
    }
    if (ok && Peek() == '^') {
      if (!entry_header || !names.empty()) {
        ok = Fail(Here(), "a block label is not allowed here");
      } else {
        ok = ParseBlockHeader(block);
      }
    }
    while (ok) {
      const size_t at = Here();
      if (at >= text_.size()) {
        ok = Fail(
            at, "unterminated region: no '}' for the '{' at " + LineCol(open));
        break;
      }
      if (Try('}')) break;
      if (Peek() == '^') {
        ok = Fail(at, "regions with more than one block are not supported");
        break;
      }
      ok = ParseOperation(block);
    }
    scopes_.pop_back();
    --depth_;
    return ok;
  }

  // --- a function body: blocks and branches ---------------------------------
  //
  // A body may hold several blocks that end in cf.br and cf.cond_br (Triton
  // prints a `return` inside an `if` that way). The IR has no blocks and no
  // branches, so the body is read twice. Pass 1 reads every block in text
  // order, with every value of the body in one scope: it checks the syntax,
  // the names and the types, and notes where each block's ops and
  // terminator are and where its branches go. If the entry block ends in a
  // branch, pass 2 reads the blocks again, walking the (acyclic) graph from
  // the entry: a cf.br goes on with its destination's ops in the same
  // block, its arguments standing for the branch's operands; a cf.cond_br
  // becomes an scf.if whose regions hold what each destination leads to,
  // every path ending in tt.return (scf.yield of the returned values inside
  // the scf.if, whose results the function then returns). A block reached
  // on several paths is read once for each; on each path only the values
  // defined along it are visible, which is dominance.

  // A branch's destination as written: "^bb3(%7, %8 : i32, f32)".
  struct Successor {
    std::string label;
    size_t pos = 0;  // the '^'
    std::vector<ValueRef> refs;
    std::vector<const Type*> types;
    int target = -1;  // the block's index, once every label is known
  };

  // One block of a function body, as pass 1 found it.
  struct BlockText {
    std::string label;  // empty for the entry block
    size_t pos = 0;     // the label ('{' for the entry block)
    size_t ops = 0;     // its first operation
    size_t term = 0;    // its terminator
    size_t end = 0;     // after its terminator
    std::vector<ValueRef> arg_names;
    std::vector<const Type*> arg_types;
    bool terminated = false;
    // A cf.br (one successor) or cf.cond_br (two) ends it.
    bool branch = false;
    ValueRef cond;
    std::vector<Successor> succs;
    int loc = -1;                    // the branch's
    std::unique_ptr<Block> scratch;  // pass 1's arguments and ops
    int state = 0;  // the walk for loops: 0 new, 1 on the path, 2 done
  };

  std::string BlockName(const BlockText& b) const {
    return b.label.empty() ? std::string("the entry block") : "^" + b.label;
  }

  // Where the pending lists stand, to forget what pass 1 added.
  struct PendingMarks {
    size_t ops = 0;
    size_t values = 0;
  };
  PendingMarks Mark() const {
    return {pending_ops_.size(), pending_values_.size()};
  }
  // Drops the pending entries after `m` (their ops are thrown away), but
  // still checks their locations.
  void Forget(PendingMarks m) {
    for (size_t k = m.ops; k < pending_ops_.size(); ++k) {
      checked_locs_.push_back(pending_ops_[k].loc);
    }
    for (size_t k = m.values; k < pending_values_.size(); ++k) {
      checked_locs_.push_back(pending_values_[k].loc);
    }
    pending_ops_.erase(pending_ops_.begin() + static_cast<ptrdiff_t>(m.ops),
                       pending_ops_.end());
    pending_values_.erase(
        pending_values_.begin() + static_cast<ptrdiff_t>(m.values),
        pending_values_.end());
  }

  // "^bb3" at the cursor: the label without '^'.
  bool ParseLabel(std::string* label) {
    if (!Expect('^', "before a block label")) return false;
    label->clear();
    while (IsSsaChar(Raw())) *label += text_[pos_++];
    if (label->empty()) return Fail(Here(), "expected a block label");
    return true;
  }

  // "{ blocks }" of function `f`, whose arguments are defined.
  bool ParseBody(ir::Function* f) {
    const size_t open = Here();
    if (!Expect('{', "to open a region")) return false;
    if (++depth_ > kMaxDepth) return Fail(open, "regions nested too deep");
    const PendingMarks start = Mark();
    PendingMarks entry_end;
    std::vector<BlockText> blocks(1);
    blocks[0].pos = open;
    blocks[0].ops = Here();
    std::map<std::string, int> labels;
    Block* into = f->body();
    scopes_.emplace_back();  // pass 1: the values of every block
    bool ok = true;
    while (ok) {
      const size_t at = Here();
      if (at >= text_.size()) {
        ok = Fail(
            at, "unterminated region: no '}' for the '{' at " + LineCol(open));
        break;
      }
      BlockText& current = blocks.back();
      if (Peek() == '^' && blocks.size() == 1 && at == current.ops) {
        ok = Fail(at, "a block label is not allowed here");
        break;
      }
      if (Peek() == '}' || Peek() == '^') {
        if (!current.terminated && (blocks.size() > 1 || Peek() == '^')) {
          ok = Fail(at, BlockName(current) +
                            " does not end in tt.return, cf.br or "
                            "cf.cond_br");
          break;
        }
        if (blocks.size() == 1) entry_end = Mark();
        if (Try('}')) break;
        ok = ParseLabelHeader(&blocks, &labels);
        into = blocks.back().scratch.get();
        continue;
      }
      if (current.terminated) {
        ok = Fail(at,
                  "an operation after the terminator of " + BlockName(current));
        break;
      }
      current.term = at;
      const std::string_view word = PeekWord();
      if (word == "cf.br" || word == "cf.cond_br") {
        ok = ParseBranch(&current);
        current.terminated = true;
      } else {
        ok = ParseOperation(into);
        current.terminated = ok && into->back() != nullptr &&
                             into->back()->code() == OpCode::kReturn;
      }
      current.end = Here();
    }
    // Every value of the body, for pass 2's messages.
    std::unordered_map<std::string, std::vector<Value*>> pass1;
    pass1.swap(scopes_.back());
    scopes_.pop_back();
    ok = ok && LinkBlocks(&blocks, labels);
    if (ok && !blocks[0].branch) {
      // One block (any others are unreachable and dropped).
      if (blocks.size() > 1) Forget(entry_end);
    } else if (ok) {
      ok = CheckAcyclic(&blocks);
      if (ok) {
        Forget(start);
        // Pass 1's ops go only after pass 2 (values may point at them).
        std::vector<std::unique_ptr<Operation>> pass1_ops =
            f->body()->TakeAll();
        for (const auto& [name, values] : pass1) body_names_.insert(name);
        copied_ = 0;
        copy_budget_ = 16 * (Here() - open) + (size_t{1} << 20);
        const size_t close = pos_;
        ok = EmitBlocks(&blocks, f, 0, {}, f->body(), false);
        body_names_.clear();
        pos_ = close;
      }
    }
    --depth_;
    return ok;
  }

  // "^bb3(%a: i32 loc(...), %b: f32):" after a block: a new block.
  bool ParseLabelHeader(std::vector<BlockText>* blocks,
                        std::map<std::string, int>* labels) {
    BlockText b;
    b.pos = Here();
    if (!ParseLabel(&b.label)) return false;
    if (labels->count(b.label)) {
      return Fail(b.pos, "redefinition of block '^" + b.label + "'");
    }
    b.scratch = std::make_unique<Block>();
    if (Try('(') && !Try(')')) {
      do {
        ValueRef ref;
        const Type* t = nullptr;
        int loc = -1;
        if (!ParseBlockArgument(&ref, &t, &loc)) return false;
        if (loc >= 0) checked_locs_.push_back(loc);
        if (!DefineArg(b.scratch->add_arg(t), ref, -1)) return false;
        b.arg_names.push_back(ref);
        b.arg_types.push_back(t);
      } while (Try(','));
      if (!Expect(')', "to close the block arguments")) return false;
    }
    if (!Expect(':', "after the block label")) return false;
    b.ops = Here();
    labels->emplace(b.label, static_cast<int>(blocks->size()));
    blocks->push_back(std::move(b));
    return true;
  }

  // "cf.br ^bb3(%a : i32)" or "cf.cond_br %c, ^bb1, ^bb2(%a : i32)", with
  // an optional {attrs} (ignored) and loc.
  bool ParseBranch(BlockText* b) {
    std::string name;
    if (!ParseWord(&name, "a branch")) return false;
    b->branch = true;
    const bool cond = name == "cf.cond_br";
    if (cond) {
      Value* ignored = nullptr;
      if (!ParseValueRef(&b->cond) || !Resolve(b->cond, Type::I1(), &ignored) ||
          !Expect(',', "after cf.cond_br's condition")) {
        return false;
      }
    }
    for (int k = 0; k < (cond ? 2 : 1); ++k) {
      if (k > 0 && !Expect(',', "between cf.cond_br's destinations")) {
        return false;
      }
      Successor s;
      s.pos = Here();
      if (!ParseLabel(&s.label)) return false;
      if (Raw() == '(') {
        ++pos_;
        if (!ParseValueRefs(&s.refs)) return false;
        if (s.refs.empty()) {
          return Fail(Here(), "expected the branch's operands" + Found());
        }
        if (!Expect(':', "before the branch operands' types") ||
            !ParseTypeList(&s.types) ||
            !Expect(')', "to close the branch's operands")) {
          return false;
        }
        if (s.refs.size() != s.types.size()) {
          return Fail(s.pos, "the branch to ^" + s.label + " has " +
                                 std::to_string(s.refs.size()) +
                                 " operands but " +
                                 std::to_string(s.types.size()) + " types");
        }
        for (size_t j = 0; j < s.refs.size(); ++j) {
          Value* ignored = nullptr;
          if (!Resolve(s.refs[j], s.types[j], &ignored)) return false;
        }
      }
      b->succs.push_back(std::move(s));
    }
    if (Peek() == '{') {
      std::map<std::string, Attribute> ignored;
      if (!ParseAttrDict(&ignored)) return false;
    }
    return TryLoc(&b->loc);
  }

  // Each branch's destination: a block that exists and takes what the
  // branch passes.
  bool LinkBlocks(std::vector<BlockText>* blocks,
                  const std::map<std::string, int>& labels) {
    for (BlockText& b : *blocks) {
      for (Successor& s : b.succs) {
        auto it = labels.find(s.label);
        if (it == labels.end()) {
          return Fail(s.pos, "branch to an undefined block '^" + s.label + "'");
        }
        s.target = it->second;
        const BlockText& to = (*blocks)[it->second];
        if (s.refs.size() != to.arg_types.size()) {
          const size_t n = to.arg_types.size();
          return Fail(s.pos, "^" + s.label + " takes " + std::to_string(n) +
                                 " argument" + (n == 1 ? "" : "s") +
                                 ", but the branch passes " +
                                 std::to_string(s.refs.size()));
        }
        for (size_t k = 0; k < s.refs.size(); ++k) {
          if (s.types[k] != to.arg_types[k]) {
            return Fail(s.refs[k].pos,
                        "'%" + s.refs[k].name + "' is passed as " +
                            TypeText(s.types[k]) + " to ^" + s.label +
                            "'s argument of type " + TypeText(to.arg_types[k]));
          }
        }
      }
    }
    return true;
  }

  // No path from the entry comes back to a block on it.
  bool CheckAcyclic(std::vector<BlockText>* blocks) {
    // A depth-first walk without recursion: (block, next successor).
    std::vector<std::pair<int, size_t>> stack = {{0, 0}};
    (*blocks)[0].state = 1;
    while (!stack.empty()) {
      auto& [index, next] = stack.back();
      BlockText& b = (*blocks)[index];
      if (next == b.succs.size()) {
        b.state = 2;
        stack.pop_back();
        continue;
      }
      const Successor& s = b.succs[next++];
      BlockText& to = (*blocks)[s.target];
      if (to.state == 1) {
        return Fail(s.pos, "the branch to ^" + s.label +
                               " closes a loop: unstructured loops are not "
                               "supported");
      }
      if (to.state == 0) {
        to.state = 1;
        stack.push_back({s.target, 0});
      }
    }
    return true;
  }

  // Pass 2: block `index` of function `f`, its arguments standing for
  // `args`, and what its branches lead to, into `out`; `nested` inside an
  // scf.if made from a cf.cond_br.
  bool EmitBlocks(std::vector<BlockText>* blocks, ir::Function* f, int index,
                  std::vector<Value*> args, Block* out, bool nested) {
    size_t pushed = 0;
    bool ok = true;
    while (ok) {
      const BlockText& b = (*blocks)[index];
      copied_ += b.end - b.ops + 1;
      if (copied_ > copy_budget_) {
        ok = Fail(b.pos, "the branches join too often: " + BlockName(b) +
                             " would be copied onto too many paths");
        break;
      }
      scopes_.emplace_back();
      ++pushed;
      for (size_t k = 0; k < args.size() && ok; ++k) {
        ok = Define(b.arg_names[k].name, {args[k]}, b.arg_names[k].pos);
      }
      pos_ = b.ops;
      while (ok && Here() < b.term) ok = ParseOperation(out);
      if (!ok) break;
      if (!b.branch) {
        pos_ = b.term;
        ok = ParseOperation(out) && (!nested || ReturnToYield(f, b, out));
        break;
      }
      if (b.succs.size() == 1) {
        const Successor& s = b.succs[0];
        std::vector<Value*> passed;
        ok = ResolveSuccessor(s, &passed);
        index = s.target;
        args = std::move(passed);
        continue;
      }
      ok = EmitIf(blocks, f, b, out, nested);
      break;
    }
    for (size_t k = 0; k < pushed; ++k) scopes_.pop_back();
    return ok;
  }

  bool ResolveSuccessor(const Successor& s, std::vector<Value*>* out) {
    for (size_t k = 0; k < s.refs.size(); ++k) {
      Value* v = nullptr;
      if (!Resolve(s.refs[k], s.types[k], &v)) return false;
      out->push_back(v);
    }
    return true;
  }

  // cf.cond_br ending block `b`: an scf.if with the function's result
  // types, then what returns them.
  bool EmitIf(std::vector<BlockText>* blocks, ir::Function* f,
              const BlockText& b, Block* out, bool nested) {
    if (++depth_ > kMaxDepth) return Fail(b.term, "branches nested too deep");
    Value* cond = nullptr;
    if (!Resolve(b.cond, Type::I1(), &cond)) return false;
    auto owned = std::make_unique<Operation>(OpCode::kIf, SourceLocation{});
    owned->add_operand(cond);
    for (const Type* t : f->result_types()) owned->add_result(t);
    Operation* op = out->Append(std::move(owned));
    Block* then_block = op->add_region();
    Block* else_block = op->add_region();
    std::vector<Value*> then_args, else_args;
    if (!ResolveSuccessor(b.succs[0], &then_args) ||
        !ResolveSuccessor(b.succs[1], &else_args) ||
        !EmitBlocks(blocks, f, b.succs[0].target, std::move(then_args),
                    then_block, true) ||
        !EmitBlocks(blocks, f, b.succs[1].target, std::move(else_args),
                    else_block, true)) {
      return false;
    }
    --depth_;
    // An else that does nothing is left empty, as MLIR prints it.
    if (op->num_results() == 0 && else_block->ops().size() == 1 &&
        else_block->back()->num_operands() == 0) {
      const Operation* yield = else_block->back();
      for (size_t k = pending_ops_.size(); k-- > 0;) {
        if (pending_ops_[k].op == yield) {
          checked_locs_.push_back(pending_ops_[k].loc);
          pending_ops_.erase(pending_ops_.begin() + static_cast<ptrdiff_t>(k));
          break;
        }
      }
      else_block->Take(0);
    }
    auto end = std::make_unique<Operation>(
        nested ? OpCode::kYield : OpCode::kReturn, SourceLocation{});
    for (int k = 0; k < op->num_results(); ++k) end->add_operand(op->result(k));
    Operation* last = out->Append(std::move(end));
    if (b.loc >= 0) {
      pending_ops_.push_back({op, b.loc, false});
      pending_ops_.push_back({last, b.loc, false});
    }
    return true;
  }

  // The tt.return just read (block `b`'s) inside an scf.if: an scf.yield
  // of what it returns.
  bool ReturnToYield(const ir::Function* f, const BlockText& b, Block* out) {
    Operation* ret = out->back();
    const std::vector<const Type*>& want = f->result_types();
    bool same = ret->num_operands() == static_cast<int>(want.size());
    for (int k = 0; same && k < ret->num_operands(); ++k) {
      same = ret->operand(k)->type() == want[k];
    }
    if (!same) {
      std::string types;
      for (const Type* t : want) {
        types += (types.empty() ? "" : ", ") + TypeText(t);
      }
      return Fail(b.term, "tt.return does not return what @" + f->name() +
                              " returns (" +
                              (types.empty() ? "nothing" : types) + ")");
    }
    auto yield = std::make_unique<Operation>(OpCode::kYield, SourceLocation{});
    yield->set_operands(ret->operands());
    if (!pending_ops_.empty() && pending_ops_.back().op == ret) {
      pending_ops_.back().op = yield.get();
    }
    out->Take(out->ops().size() - 1);
    out->Append(std::move(yield));
    return true;
  }

  // One block argument, "%a: f32 loc(...)" (the loc optional).
  bool ParseBlockArgument(ValueRef* ref, const Type** type, int* loc) {
    return ParseValueRef(ref) && Expect(':', "after a block argument") &&
           ParseType(type) && TryLoc(loc);
  }

  // "^bb0(%a: f32 loc(...), %b: f32):" or "^bb0:".
  bool ParseBlockHeader(Block* block) {
    ++pos_;
    std::string label;
    while (IsSsaChar(Raw())) label += text_[pos_++];
    if (label.empty()) return Fail(Here(), "expected a block label");
    if (Try('(')) {
      if (!Try(')')) {
        do {
          ValueRef ref;
          const Type* t = nullptr;
          int loc = -1;
          if (!ParseBlockArgument(&ref, &t, &loc)) return false;
          if (!DefineArg(block->add_arg(t), ref, loc)) return false;
        } while (Try(','));
        if (!Expect(')', "to close the block arguments")) return false;
      }
    }
    return Expect(':', "after the block label");
  }

  // --- operations ------------------------------------------------------------

  struct ResultGroup {
    std::string name;
    int count = 1;
    size_t pos = 0;
  };

  // What parsing one op gathers besides the op itself.
  struct OpText {
    Operation* op = nullptr;
    size_t pos = 0;  // the op's name
    std::vector<const Type*> results;
    std::vector<Operation*> implied;  // terminators the text left out
  };

  bool ParseOperation(Block* block) {
    std::vector<ResultGroup> groups;
    if (Peek() == '%') {
      do {
        ResultGroup g;
        ValueRef ref;
        if (!ParseValueRef(&ref)) return false;
        if (ref.index >= 0) return Fail(ref.pos, "expected a result name");
        g.name = ref.name;
        g.pos = ref.pos;
        if (Raw() == ':' && IsDigit(Raw(1))) {
          ++pos_;
          Number n;
          if (!ParseNumber(&n)) return false;
          if (n.integer < 1 || n.integer > 4096) {
            return Fail(n.pos, "bad result count");
          }
          g.count = static_cast<int>(n.integer);
        }
        groups.push_back(g);
      } while (Try(','));
      if (!Expect('=', "after the results")) return false;
    }
    OpText t;
    t.pos = Here();
    std::string name;
    const bool generic = Peek() == '"';
    if (generic ? !ParseString(&name) : !ParseWord(&name, "an operation")) {
      return false;
    }
    if (name == "cf.br" || name == "cf.cond_br") {
      if (depth_ > 1) {
        return Fail(t.pos, name +
                               " inside an operation's region is not "
                               "supported (only a function body may "
                               "branch)");
      }
      return Fail(t.pos, name + " is only supported in its own syntax");
    }
    const std::optional<OpCode> code = ir::OpCodeOf(name);
    if (!code) return Fail(t.pos, "unknown operation '" + name + "'");
    auto owned = std::make_unique<Operation>(*code, SourceLocation{});
    t.op = owned.get();
    if (!(generic ? ParseGeneric(t) : ParseCustom(t))) return false;
    if (!FixAttributes(t)) return false;
    int declared = 0;
    for (const ResultGroup& g : groups) declared += g.count;
    if (declared != static_cast<int>(t.results.size())) {
      return Fail(t.pos, name + " has " + std::to_string(t.results.size()) +
                             " result" + (t.results.size() == 1 ? "" : "s") +
                             ", but " + std::to_string(declared) +
                             (declared == 1 ? " is" : " are") + " named");
    }
    for (const Type* type : t.results) t.op->add_result(type);
    int loc = -1;
    if (!TryLoc(&loc)) return false;
    int next = 0;
    bool made_up = false;
    for (const ResultGroup& g : groups) {
      std::vector<Value*> values;
      for (int k = 0; k < g.count; ++k) {
        Value* v = t.op->result(next++);
        if (!IsMadeUpName(g.name)) v->set_name(g.name);
        values.push_back(v);
      }
      made_up = made_up || IsMadeUpName(g.name);
      if (!Define(g.name, std::move(values), g.pos)) return false;
    }
    Operation* op = block->Append(std::move(owned));
    if (loc >= 0) {
      pending_ops_.push_back({op, loc, made_up});
      for (Operation* implied : t.implied) {
        pending_ops_.push_back({implied, loc, false});
      }
    }
    return true;
  }

  // "(%a, %b) <{props}> ({regions}) {attrs} : (A, B) -> R"
  bool ParseGeneric(OpText& t) {
    Operation* op = t.op;
    std::vector<ValueRef> refs;
    if (!Expect('(', "to open the operand list") || !ParseValueRefs(&refs) ||
        !Expect(')', "to close the operand list")) {
      return false;
    }
    if (Peek() == '[')
      return Fail(Here(), "successor blocks are not supported");
    if (Try('<')) {
      if (!ParseOptionalAttrDict(op) || !Expect('>', "after <{...}")) {
        return false;
      }
    }
    if (Peek() == '(') {
      ++pos_;
      do {
        if (!ParseRegion(op->add_region(), {}, true)) return false;
      } while (Try(','));
      if (!Expect(')', "to close the region list")) return false;
    }
    if (!ParseOptionalAttrDict(op)) return false;
    std::vector<const Type*> ins;
    if (!Expect(':', "before the operation's type") ||
        !ParseFunctionType(&ins, &t.results)) {
      return false;
    }
    return AddOperands(op, refs, ins, t.pos);
  }

  // Symbolic attributes written as integers become their names; MLIR's
  // bookkeeping that the IR does not keep is dropped.
  bool FixAttributes(OpText& t) {
    Operation* op = t.op;
    std::vector<std::string> drop;
    for (const auto& [key, value] : op->attrs()) {
      if (const ir::EnumAttrInfo* info = ir::EnumAttrOf(op->code(), key)) {
        if (const auto* i = std::get_if<IntAttr>(&value)) {
          const char* n = ir::EnumName(*info, i->value);
          if (n == nullptr) {
            return Fail(t.pos, "no " + std::string(info->enum_name) +
                                   " has the value " +
                                   std::to_string(i->value));
          }
          op->set_attr(key, std::string(n));
        }
      }
      const auto* s = std::get_if<std::string>(&value);
      if ((key == "fastmath" || key == "overflowFlags") && s != nullptr &&
          *s == "none") {
        drop.push_back(key);
      }
      if (key == "operandSegmentSizes" && op->code() != OpCode::kDotScaled) {
        const auto* a = std::get_if<ArrayAttr>(&value);
        if (op->code() == OpCode::kLoad && a != nullptr &&
            a->values.size() == 3 && a->values[1] == 0 && a->values[2] != 0) {
          return Fail(t.pos,
                      "a tt.load with `other` but no mask is not "
                      "supported");
        }
        drop.push_back(key);
      }
    }
    for (const std::string& k : drop) op->remove_attr(k);
    return true;
  }

  // arith's "fastmath<fast>", "overflow<nsw>" and truncf's rounding mode.
  bool ParseFlags(Operation* op) {
    while (true) {
      const std::string_view w = PeekWord();
      if (w == "fastmath" || w == "overflow") {
        pos_ += w.size();
        const size_t at = Here();
        if (!Expect('<', "after " + std::string(w))) return false;
        std::string body;
        while (pos_ < text_.size() && text_[pos_] != '>' &&
               text_[pos_] != '\n') {
          body += text_[pos_++];
        }
        if (!Expect('>', "to close " + std::string(w) + "<...>")) return false;
        if (body.empty()) return Fail(at, "empty " + std::string(w) + "<>");
        if (body != "none") {
          op->set_attr(w == "fastmath" ? "fastmath" : "overflowFlags", body);
        }
      } else if (w == "to_nearest_even" || w == "downward" || w == "upward" ||
                 w == "toward_zero" || w == "to_nearest_away") {
        op->set_attr("roundingmode", std::string(w));
        pos_ += w.size();
      } else {
        return true;
      }
    }
  }

  // A keyword naming a value of a symbolic attribute.
  bool ParseEnumWord(Operation* op, const char* key) {
    const size_t at = Here();
    std::string w;
    if (!ParseWord(&w, std::string("a ") + key)) return false;
    const ir::EnumAttrInfo* info = ir::EnumAttrOf(op->code(), key);
    if (info == nullptr || !ir::EnumValue(*info, w)) {
      return Fail(
          at,
          "unknown " + std::string(key) + " '" + w + "'" +
              (info ? " (expected one of " + ir::EnumNames(*info) + ")" : ""));
    }
    op->set_attr(key, w);
    return true;
  }

  // "cacheModifier = ca evictionPolicy = evict_last", in any order.
  bool ParseCacheEvict(Operation* op) {
    while (true) {
      if (TryWord("cacheModifier")) {
        if (!Expect('=', "after cacheModifier") ||
            !ParseEnumWord(op, "cache")) {
          return false;
        }
      } else if (TryWord("evictionPolicy")) {
        if (!Expect('=', "after evictionPolicy") ||
            !ParseEnumWord(op, "evict")) {
          return false;
        }
      } else {
        return true;
      }
    }
  }

  bool ParseColonType(const Type** t, const std::string& context) {
    return Expect(':', context) && ParseType(t);
  }

  // "[%a, %b]".
  bool ParseBracketRefs(std::vector<ValueRef>* refs) {
    return Expect('[', "to open an operand list") && ParseValueRefs(refs) &&
           Expect(']', "to close the operand list");
  }

  bool ParseCustom(OpText& t) {
    Operation* op = t.op;
    const std::string name = op->name();
    std::vector<ValueRef> refs;
    switch (ir::FormOf(op->code())) {
      case OpForm::kConstant: {
        if (!ParseOptionalAttrDict(op)) return false;
        const size_t at = Here();
        Attribute value;
        if (!ParseAttr(&value)) return false;
        const Type* type = nullptr;
        if (const auto* b = std::get_if<bool>(&value)) {
          value = IntAttr{*b ? 1 : 0, Type::I1()};
          type = Type::I1();
        } else if (const auto* i = std::get_if<IntAttr>(&value)) {
          type = i->type;
        } else if (const auto* f = std::get_if<FloatAttr>(&value)) {
          type = f->type;
        } else if (const auto* d = std::get_if<DenseAttr>(&value)) {
          type = d->type;
        } else {
          return Fail(at, "arith.constant needs a number or a dense<...>");
        }
        op->set_attr("value", std::move(value));
        t.results = {type};
        return true;
      }
      case OpForm::kBinary:
      case OpForm::kUnary:
      case OpForm::kTernary: {
        const size_t n = ir::FormOf(op->code()) == OpForm::kUnary    ? 1
                         : ir::FormOf(op->code()) == OpForm::kBinary ? 2
                                                                     : 3;
        const Type* type = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, n, op, t.pos) ||
            !ParseFlags(op) || !ParseOptionalAttrDict(op) ||
            !ParseColonType(&type, "before " + name + "'s type")) {
          return false;
        }
        for (const ValueRef& r : refs) {
          if (!AddOperand(op, r, type)) return false;
        }
        t.results = {type};
        return true;
      }
      case OpForm::kCompare: {
        const Type* type = nullptr;
        if (!ParseEnumWord(op, "predicate") ||
            !Expect(',', "after the predicate") || !ParseValueRefs(&refs) ||
            !ExpectRefs(refs, 2, op, t.pos) || !ParseOptionalAttrDict(op) ||
            !ParseColonType(&type, "before " + name + "'s type")) {
          return false;
        }
        for (const ValueRef& r : refs) {
          if (!AddOperand(op, r, type)) return false;
        }
        t.results = {I1Like(type)};
        return true;
      }
      case OpForm::kSelect: {
        const Type* first = nullptr;
        const Type* second = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 3, op, t.pos) ||
            !ParseOptionalAttrDict(op) ||
            !ParseColonType(&first, "before arith.select's type")) {
          return false;
        }
        if (Try(',') && !ParseType(&second)) return false;
        const Type* cond = second ? first : Type::I1();
        const Type* value = second ? second : first;
        if (!AddOperand(op, refs[0], cond) || !AddOperand(op, refs[1], value) ||
            !AddOperand(op, refs[2], value)) {
          return false;
        }
        t.results = {value};
        return true;
      }
      case OpForm::kCast: {
        const Type* from = nullptr;
        const Type* to = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 1, op, t.pos) ||
            !ParseFlags(op) || !ParseOptionalAttrDict(op) ||
            !ParseColonType(&from, "before " + name + "'s types") ||
            !ExpectWord("to", "between " + name + "'s types") ||
            !ParseType(&to) || !AddOperand(op, refs[0], from)) {
          return false;
        }
        t.results = {to};
        return true;
      }
      case OpForm::kArrowCast: {
        const Type* from = nullptr;
        const Type* to = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 1, op, t.pos)) {
          return false;
        }
        while (true) {
          const std::string_view w = PeekWord();
          if (op->code() == OpCode::kReshape &&
              (w == "allow_reorder" || w == "efficient_layout")) {
            op->set_attr(std::string(w), true);
            pos_ += w.size();
          } else {
            break;
          }
        }
        if (!ParseOptionalAttrDict(op) ||
            !ParseColonType(&from, "before " + name + "'s types") ||
            !ExpectArrow("between " + name + "'s types") || !ParseType(&to) ||
            !AddOperand(op, refs[0], from)) {
          return false;
        }
        t.results = {to};
        return true;
      }
      case OpForm::kCustom:
        return ParseCustomOp(t);
    }
    return Fail(t.pos, "no syntax for " + name);
  }

  bool ParseCustomOp(OpText& t) {
    Operation* op = t.op;
    const std::string name = op->name();
    const std::string before_type = "before " + name + "'s type";
    std::vector<ValueRef> refs;
    switch (op->code()) {
      case OpCode::kGetProgramId:
      case OpCode::kGetNumPrograms: {
        const size_t at = Here();
        std::string axis;
        const Type* type = nullptr;
        if (!ParseWord(&axis, "an axis (x, y or z)")) return false;
        if (axis != "x" && axis != "y" && axis != "z") {
          return Fail(at, "expected an axis (x, y or z), found '" + axis + "'");
        }
        op->set_attr("axis", IntAttr{axis[0] - 'x', Type::I32()});
        if (!ParseOptionalAttrDict(op) || !ParseColonType(&type, before_type)) {
          return false;
        }
        t.results = {type};
        return true;
      }
      case OpCode::kMakeRange: {
        const Type* type = nullptr;
        if (!ParseOptionalAttrDict(op) || !ParseColonType(&type, before_type)) {
          return false;
        }
        t.results = {type};
        return true;
      }
      case OpCode::kCat:
      case OpCode::kJoin: {
        const Type* from = nullptr;
        const Type* to = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 2, op, t.pos) ||
            !ParseOptionalAttrDict(op) || !ParseColonType(&from, before_type) ||
            !ExpectArrow("in " + name + "'s types") || !ParseType(&to) ||
            !AddOperand(op, refs[0], from) || !AddOperand(op, refs[1], from)) {
          return false;
        }
        t.results = {to};
        return true;
      }
      case OpCode::kSplit: {
        const Type* from = nullptr;
        const Type* to = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 1, op, t.pos) ||
            !ParseOptionalAttrDict(op) || !ParseColonType(&from, before_type) ||
            !ExpectArrow("in " + name + "'s types") || !ParseType(&to) ||
            !AddOperand(op, refs[0], from)) {
          return false;
        }
        t.results = {to, to};
        return true;
      }
      case OpCode::kGather:
      case OpCode::kDescriptorGather: {
        // "%src[%idx] {attrs} : (types) -> type" (src: a tensor or a
        // descriptor).
        ValueRef src;
        std::vector<const Type*> ins;
        if (!ParseValueRef(&src) || !ParseBracketRefs(&refs)) return false;
        refs.insert(refs.begin(), src);
        if (!ParseOptionalAttrDict(op) || !Expect(':', before_type) ||
            !ParseFunctionType(&ins, &t.results)) {
          return false;
        }
        return AddOperands(op, refs, ins, t.pos);
      }
      case OpCode::kHistogram: {
        const Type* from = nullptr;
        const Type* to = nullptr;
        if (!ParseValueRefs(&refs) || refs.empty() || refs.size() > 2) {
          return Fail(t.pos, name + " takes a tensor and an optional mask");
        }
        if (!ParseOptionalAttrDict(op) || !ParseColonType(&from, before_type) ||
            !ExpectArrow("in " + name + "'s types") || !ParseType(&to) ||
            !AddOperand(op, refs[0], from) ||
            (refs.size() == 2 && !AddOperand(op, refs[1], I1Like(from)))) {
          return false;
        }
        t.results = {to};
        return true;
      }
      case OpCode::kUnsplat: {
        const Type* from = nullptr;
        const size_t at = pos_;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 1, op, t.pos) ||
            !ParseOptionalAttrDict(op) || !ParseColonType(&from, before_type)) {
          return false;
        }
        if (!from->IsTensor()) return Fail(at, name + " takes a tensor");
        if (!AddOperand(op, refs[0], from)) return false;
        t.results = {from->element()};
        return true;
      }
      case OpCode::kAddPtr: {
        const Type* ptr = nullptr;
        const Type* offset = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 2, op, t.pos) ||
            !ParseOptionalAttrDict(op) || !ParseColonType(&ptr, before_type) ||
            !Expect(',', "between tt.addptr's types") || !ParseType(&offset) ||
            !AddOperand(op, refs[0], ptr) || !AddOperand(op, refs[1], offset)) {
          return false;
        }
        t.results = {ptr};
        return true;
      }
      case OpCode::kLoad:
      case OpCode::kStore:
        return ParseLoadStore(t);
      case OpCode::kAtomicRMW:
      case OpCode::kAtomicCAS: {
        if (op->code() == OpCode::kAtomicRMW &&
            (!ParseEnumWord(op, "atomic_rmw_op") ||
             !Expect(',', "after the atomic op"))) {
          return false;
        }
        std::vector<const Type*> ins;
        if (!ParseEnumWord(op, "sem") || !Expect(',', "after the semantic") ||
            !ParseEnumWord(op, "scope") || !Expect(',', "after the scope") ||
            !ParseValueRefs(&refs) || !ParseOptionalAttrDict(op) ||
            !Expect(':', before_type) || !ParseFunctionType(&ins, &t.results)) {
          return false;
        }
        return AddOperands(op, refs, ins, t.pos);
      }
      case OpCode::kMakeTensorPtr:
      case OpCode::kMakeTensorDesc:
        return ParseMakeTensorPtrOrDesc(t);
      case OpCode::kAdvance: {
        ValueRef ptr;
        const Type* type = nullptr;
        if (!ParseValueRef(&ptr) || !Expect(',', "after the pointer") ||
            !ParseBracketRefs(&refs) || !ParseOptionalAttrDict(op) ||
            !Expect(':', before_type) || !ParsePointerType(&type) ||
            !AddOperand(op, ptr, type)) {
          return false;
        }
        for (const ValueRef& r : refs) {
          if (!AddOperand(op, r, Type::I32())) return false;
        }
        t.results = {type};
        return true;
      }
      case OpCode::kDescriptorLoad: {
        ValueRef desc;
        const Type* desc_type = nullptr;
        const Type* result = nullptr;
        if (!ParseValueRef(&desc) || !ParseBracketRefs(&refs) ||
            !ParseCacheEvict(op) || !ParseOptionalAttrDict(op) ||
            !Expect(':', before_type) || !ParseDescType(&desc_type) ||
            !ExpectArrow("in " + name + "'s types") || !ParseType(&result) ||
            !AddOperand(op, desc, desc_type)) {
          return false;
        }
        for (const ValueRef& r : refs) {
          if (!AddOperand(op, r, Type::I32())) return false;
        }
        t.results = {result};
        return true;
      }
      case OpCode::kDescriptorStore:
      case OpCode::kDescriptorReduce: {
        if (op->code() == OpCode::kDescriptorReduce &&
            (!ParseEnumWord(op, "kind") || !Expect(',', "after the kind"))) {
          return false;
        }
        ValueRef desc, value;
        const Type* desc_type = nullptr;
        const Type* value_type = nullptr;
        if (!ParseValueRef(&desc) || !ParseBracketRefs(&refs) ||
            !Expect(',', "before the stored value") || !ParseValueRef(&value) ||
            !ParseOptionalAttrDict(op) || !Expect(':', before_type) ||
            !ParseDescType(&desc_type) ||
            !Expect(',', "between " + name + "'s types") ||
            !ParseType(&value_type) || !AddOperand(op, desc, desc_type) ||
            !AddOperand(op, value, value_type)) {
          return false;
        }
        for (const ValueRef& r : refs) {
          if (!AddOperand(op, r, Type::I32())) return false;
        }
        return true;
      }
      case OpCode::kDescriptorScatter: {
        ValueRef desc, value;
        std::vector<const Type*> types;
        if (!ParseValueRef(&desc) || !ParseBracketRefs(&refs) ||
            !Expect(',', "before the stored value") || !ParseValueRef(&value) ||
            !ParseOptionalAttrDict(op) || !Expect(':', before_type) ||
            !ParseTypeList(&types)) {
          return false;
        }
        refs.insert(refs.begin(), desc);
        refs.push_back(value);
        return AddOperands(op, refs, types, t.pos);
      }
      case OpCode::kDot: {
        const Type* a = nullptr;
        const Type* b = nullptr;
        const Type* d = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 3, op, t.pos)) {
          return false;
        }
        if (Try(',')) {
          if (!ExpectWord("inputPrecision", "after tt.dot's operands") ||
              !Expect('=', "after inputPrecision") ||
              !ParseEnumWord(op, "inputPrecision")) {
            return false;
          }
        }
        if (!ParseOptionalAttrDict(op) || !ParseColonType(&a, before_type) ||
            !Expect('*', "between tt.dot's operand types") || !ParseType(&b) ||
            !ExpectArrow("in tt.dot's types") || !ParseType(&d) ||
            !AddOperand(op, refs[0], a) || !AddOperand(op, refs[1], b) ||
            !AddOperand(op, refs[2], d)) {
          return false;
        }
        t.results = {d};
        return true;
      }
      case OpCode::kDotScaled:
        return ParseDotScaled(t);
      case OpCode::kReduce:
      case OpCode::kScan:
      case OpCode::kMapElementwise:
        return Fail(t.pos, name + " is written in the generic form (\"" + name +
                               "\"(...) ...)");
      case OpCode::kReduceReturn:
      case OpCode::kScanReturn: {
        std::vector<const Type*> types;
        if (!ParseValueRefs(&refs) || !ParseOptionalAttrDict(op) ||
            !Expect(':', before_type) || !ParseTypeList(&types)) {
          return false;
        }
        return AddOperands(op, refs, types, t.pos);
      }
      case OpCode::kMapElementwiseReturn:
      case OpCode::kReturn:
      case OpCode::kYield: {
        std::vector<const Type*> types;
        if (!ParseOptionalAttrDict(op) || !ParseValueRefs(&refs)) return false;
        if (!refs.empty() &&
            (!Expect(':', before_type) || !ParseTypeList(&types))) {
          return false;
        }
        return AddOperands(op, refs, types, t.pos);
      }
      case OpCode::kFpToFp: {
        const Type* from = nullptr;
        const Type* to = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 1, op, t.pos) ||
            !ParseOptionalAttrDict(op)) {
          return false;
        }
        if (Try(',') &&
            (!ExpectWord("rounding", "after tt.fp_to_fp's operand") ||
             !Expect('=', "after rounding") ||
             !ParseEnumWord(op, "rounding"))) {
          return false;
        }
        if (!ParseColonType(&from, before_type) ||
            !ExpectArrow("in tt.fp_to_fp's types") || !ParseType(&to) ||
            !AddOperand(op, refs[0], from)) {
          return false;
        }
        t.results = {to};
        return true;
      }
      case OpCode::kClampF: {
        const Type* type = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 3, op, t.pos) ||
            !Expect(',', "after tt.clampf's operands") ||
            !ExpectWord("propagateNan", "in tt.clampf") ||
            !Expect('=', "after propagateNan") ||
            !ParseEnumWord(op, "propagateNan") || !ParseOptionalAttrDict(op) ||
            !ParseColonType(&type, before_type)) {
          return false;
        }
        for (const ValueRef& r : refs) {
          if (!AddOperand(op, r, type)) return false;
        }
        t.results = {type};
        return true;
      }
      case OpCode::kExternElementwise: {
        std::vector<const Type*> ins;
        if (!ParseValueRefs(&refs) || !ParseOptionalAttrDict(op) ||
            !Expect(':', before_type) || !ParseFunctionType(&ins, &t.results)) {
          return false;
        }
        return AddOperands(op, refs, ins, t.pos);
      }
      case OpCode::kElementwiseInlineAsm: {
        std::string asm_string;
        std::vector<const Type*> ins;
        if (!ParseString(&asm_string)) return false;
        op->set_attr("asm_string", asm_string);
        if (!ParseOptionalAttrDict(op) || !ParseValueRefs(&refs)) return false;
        if (!refs.empty() &&
            (!Expect(':', before_type) || !ParseTypeList(&ins))) {
          return false;
        }
        if (!ExpectArrow("before the result types") ||
            !ParseTypeList(&t.results)) {
          return false;
        }
        return AddOperands(op, refs, ins, t.pos);
      }
      case OpCode::kPrint: {
        std::string prefix;
        std::vector<const Type*> types;
        if (!ParseString(&prefix)) return false;
        op->set_attr("prefix", prefix);
        if (!ParseOptionalAttrDict(op)) return false;
        if (Try(':') && (!ParseValueRefs(&refs) ||
                         !Expect(':', "before tt.print's types") ||
                         !ParseTypeList(&types))) {
          return false;
        }
        return AddOperands(op, refs, types, t.pos);
      }
      case OpCode::kAssert: {
        std::string message;
        const Type* type = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 1, op, t.pos) ||
            !Expect(',', "before tt.assert's message") ||
            !ParseString(&message)) {
          return false;
        }
        op->set_attr("message", message);
        if (!ParseOptionalAttrDict(op) || !ParseColonType(&type, before_type)) {
          return false;
        }
        return AddOperand(op, refs[0], type);
      }
      case OpCode::kBarrier:
        return ParseOptionalAttrDict(op);
      case OpCode::kAssume: {
        const Type* type = nullptr;
        if (!ParseValueRefs(&refs) || !ExpectRefs(refs, 1, op, t.pos) ||
            !ParseOptionalAttrDict(op) || !ParseColonType(&type, before_type) ||
            !ParseOptionalAttrDict(op)) {
          return false;
        }
        return AddOperand(op, refs[0], type);
      }
      case OpCode::kPoison: {
        const Type* type = nullptr;
        if (!ParseOptionalAttrDict(op)) return false;
        if (Try('<')) {
          Attribute ignored;
          if (!ParseAttr(&ignored) || !Expect('>', "after ub.poison<...")) {
            return false;
          }
        }
        if (!ParseColonType(&type, before_type)) return false;
        t.results = {type};
        return true;
      }
      case OpCode::kCall: {
        std::string callee;
        std::vector<const Type*> ins;
        if (!Expect('@', "before the callee")) return false;
        if (Raw() == '"' ? !ParseString(&callee)
                         : !ParseWord(&callee, "the callee's name")) {
          return false;
        }
        op->set_attr("callee", callee);
        if (!Expect('(', "to open the arguments") || !ParseValueRefs(&refs) ||
            !Expect(')', "to close the arguments") ||
            !ParseOptionalAttrDict(op) || !Expect(':', before_type) ||
            !ParseFunctionType(&ins, &t.results)) {
          return false;
        }
        return AddOperands(op, refs, ins, t.pos);
      }
      case OpCode::kFor:
        return ParseFor(t);
      case OpCode::kIf:
        return ParseIf(t);
      case OpCode::kWhile:
        return ParseWhile(t);
      case OpCode::kCondition: {
        ValueRef cond;
        std::vector<const Type*> types;
        if (!Expect('(', "after scf.condition") || !ParseValueRef(&cond) ||
            !Expect(')', "after the condition") || !ParseOptionalAttrDict(op) ||
            !ParseValueRefs(&refs)) {
          return false;
        }
        if (!refs.empty() &&
            (!Expect(':', before_type) || !ParseTypeList(&types))) {
          return false;
        }
        refs.insert(refs.begin(), cond);
        types.insert(types.begin(), Type::I1());
        return AddOperands(op, refs, types, t.pos);
      }
      default:
        return Fail(t.pos, "no syntax for " + name);
    }
  }

  bool ParseLoadStore(OpText& t) {
    Operation* op = t.op;
    const bool load = op->code() == OpCode::kLoad;
    const std::string name = op->name();
    std::vector<ValueRef> refs;
    const Type* ptr = nullptr;
    if (!ParseValueRefs(&refs)) return false;
    if (refs.size() < (load ? 1u : 2u) || refs.size() > 3) {
      return Fail(t.pos, load ? "tt.load takes a pointer, a mask and an other"
                              : "tt.store takes a pointer, a value and a mask");
    }
    if (!ParseCacheEvict(op) || !ParseOptionalAttrDict(op) ||
        !Expect(':', "before " + name + "'s type")) {
      return false;
    }
    const size_t type_at = Here();
    if (!ParseType(&ptr)) return false;
    const Type* pointee = PointeeOf(ptr);
    if (pointee == nullptr) {
      return Fail(type_at, name +
                               " needs a pointer or a tensor of pointers, "
                               "not " +
                               TypeText(ptr));
    }
    if (!AddOperand(op, refs[0], ptr)) return false;
    const size_t mask = load ? 1 : 2;
    if (!load && !AddOperand(op, refs[1], pointee)) return false;
    if (refs.size() > mask && !AddOperand(op, refs[mask], I1Like(pointee))) {
      return false;
    }
    if (load && refs.size() > 2 && !AddOperand(op, refs[2], pointee)) {
      return false;
    }
    if (load) t.results = {pointee};
    return true;
  }

  // tt.make_tensor_ptr %base, [shape], [strides], [offsets] : <tensor<..>>
  // tt.make_tensor_descriptor %base, [shape], [strides] : <f16>, <tensor<..>>
  bool ParseMakeTensorPtrOrDesc(OpText& t) {
    Operation* op = t.op;
    const bool ptr = op->code() == OpCode::kMakeTensorPtr;
    const std::string name = op->name();
    ValueRef base;
    std::vector<ValueRef> lists[3];
    const int count = ptr ? 3 : 2;
    if (!ParseValueRef(&base)) return false;
    for (int k = 0; k < count; ++k) {
      if (!Expect(',', "between " + name + "'s operand lists") ||
          !ParseBracketRefs(&lists[k])) {
        return false;
      }
      if (lists[k].size() != lists[0].size()) {
        return Fail(t.pos, name + "'s operand lists must have one length");
      }
    }
    if (!ParseOptionalAttrDict(op) ||
        !Expect(':', "before " + name + "'s type")) {
      return false;
    }
    const size_t at = Here();
    const Type* base_type = nullptr;
    const Type* result = nullptr;
    if (ptr) {
      if (!ParsePointerType(&result)) return false;
      if (!result->pointee()->IsTensor()) {
        return Fail(at, "tt.make_tensor_ptr makes a pointer to a tensor, not " +
                            TypeText(result));
      }
      base_type =
          Type::Pointer(result->pointee()->element(), result->address_space());
    } else if (!ParsePointerType(&base_type) ||
               !Expect(',', "between " + name + "'s types") ||
               !ParseDescType(&result)) {
      return false;
    }
    if (!AddOperand(op, base, base_type)) return false;
    const Type* kinds[3] = {ptr ? Type::I64() : Type::I32(), Type::I64(),
                            Type::I32()};
    for (int k = 0; k < count; ++k) {
      for (const ValueRef& r : lists[k]) {
        if (!AddOperand(op, r, kinds[k])) return false;
      }
    }
    t.results = {result};
    return true;
  }

  // tt.dot_scaled %a [scale %as], %b [scale %bs], %c lhs = e4m3 rhs = e2m1
  //   {attrs} : A [, AS] * B [, BS] -> D
  bool ParseDotScaled(OpText& t) {
    Operation* op = t.op;
    ValueRef a, b, c, a_scale, b_scale;
    bool has_a_scale = false, has_b_scale = false;
    if (!ParseValueRef(&a)) return false;
    if (TryWord("scale")) {
      has_a_scale = true;
      if (!ParseValueRef(&a_scale)) return false;
    }
    if (!Expect(',', "after tt.dot_scaled's lhs") || !ParseValueRef(&b)) {
      return false;
    }
    if (TryWord("scale")) {
      has_b_scale = true;
      if (!ParseValueRef(&b_scale)) return false;
    }
    const Type *at = nullptr, *ast = nullptr, *bt = nullptr, *bst = nullptr,
               *dt = nullptr;
    if (!Expect(',', "after tt.dot_scaled's rhs") || !ParseValueRef(&c) ||
        !ExpectWord("lhs", "in tt.dot_scaled") || !Expect('=', "after lhs") ||
        !ParseEnumWord(op, "a_elem_type") ||
        !ExpectWord("rhs", "in tt.dot_scaled") || !Expect('=', "after rhs") ||
        !ParseEnumWord(op, "b_elem_type") || !ParseOptionalAttrDict(op) ||
        !ParseColonType(&at, "before tt.dot_scaled's types")) {
      return false;
    }
    if (has_a_scale &&
        (!Expect(',', "before the lhs scale's type") || !ParseType(&ast))) {
      return false;
    }
    if (!Expect('*', "between tt.dot_scaled's operand types") ||
        !ParseType(&bt)) {
      return false;
    }
    if (has_b_scale &&
        (!Expect(',', "before the rhs scale's type") || !ParseType(&bst))) {
      return false;
    }
    if (!ExpectArrow("in tt.dot_scaled's types") || !ParseType(&dt) ||
        !AddOperand(op, a, at) || !AddOperand(op, b, bt) ||
        !AddOperand(op, c, dt) ||
        (has_a_scale && !AddOperand(op, a_scale, ast)) ||
        (has_b_scale && !AddOperand(op, b_scale, bst))) {
      return false;
    }
    op->set_attr("operandSegmentSizes", ArrayAttr{{1, 1, 1, has_a_scale ? 1 : 0,
                                                   has_b_scale ? 1 : 0}});
    t.results = {dt};
    return true;
  }

  // A terminator the text may leave out (MLIR's ensureTerminator).
  void ImplyYield(Block* block, OpText& t) {
    const Operation* last = block->back();
    if (last != nullptr && ir::IsTerminator(last->code())) return;
    t.implied.push_back(block->Append(
        std::make_unique<Operation>(OpCode::kYield, SourceLocation{})));
  }

  // scf.for [unsigned] %iv = %lb to %ub step %s
  //   [iter_args(%a = %init, ...) -> (types)] : T { ... } [{attrs}]
  bool ParseFor(OpText& t) {
    Operation* op = t.op;
    if (TryWord("unsigned")) op->set_attr("unsignedCmp", true);
    ValueRef iv, lb, ub, step;
    std::vector<ValueRef> args, inits;
    std::vector<const Type*> types;
    if (!ParseValueRef(&iv) || !Expect('=', "after the induction variable") ||
        !ParseValueRef(&lb) || !ExpectWord("to", "in scf.for") ||
        !ParseValueRef(&ub) || !ExpectWord("step", "in scf.for") ||
        !ParseValueRef(&step)) {
      return false;
    }
    if (TryWord("iter_args")) {
      if (!Expect('(', "after iter_args")) return false;
      do {
        args.emplace_back();
        inits.emplace_back();
        if (!ParseValueRef(&args.back()) ||
            !Expect('=', "in iter_args(... = ...)") ||
            !ParseValueRef(&inits.back())) {
          return false;
        }
      } while (Try(','));
      if (!Expect(')', "to close iter_args") ||
          !ExpectArrow("before the loop's result types") ||
          !ParseResultTypes(&types)) {
        return false;
      }
    }
    if (Peek() != ':') {
      return Fail(Here(),
                  "scf.for without ': type' counts in index, which is "
                  "not supported");
    }
    const Type* iv_type = nullptr;
    if (!ParseColonType(&iv_type, "before the induction variable's type")) {
      return false;
    }
    if (!AddOperand(op, lb, iv_type) || !AddOperand(op, ub, iv_type) ||
        !AddOperand(op, step, iv_type) ||
        !AddOperands(op, inits, types, t.pos)) {
      return false;
    }
    Block* body = op->add_region();
    body->add_arg(iv_type);
    for (const Type* type : types) body->add_arg(type);
    std::vector<ValueRef> names = {iv};
    names.insert(names.end(), args.begin(), args.end());
    if (!ParseRegion(body, names, false) || !ParseOptionalAttrDict(op)) {
      return false;
    }
    if (types.empty()) ImplyYield(body, t);
    t.results = types;
    return true;
  }

  // scf.if %c [-> (types)] { ... } [else { ... }] [{attrs}]
  bool ParseIf(OpText& t) {
    Operation* op = t.op;
    ValueRef cond;
    if (!ParseValueRef(&cond) || !AddOperand(op, cond, Type::I1())) {
      return false;
    }
    if (TryArrow() && !ParseResultTypes(&t.results)) return false;
    Block* then_block = op->add_region();
    Block* else_block = op->add_region();
    if (!ParseRegion(then_block, {}, false)) return false;
    if (t.results.empty()) ImplyYield(then_block, t);
    if (TryWord("else")) {
      if (!ParseRegion(else_block, {}, false)) return false;
      if (t.results.empty()) ImplyYield(else_block, t);
    }
    return ParseOptionalAttrDict(op);
  }

  // scf.while [(%a = %init, ...)] : (A, ...) -> R { before } do { after }
  //   [attributes {attrs}]
  bool ParseWhile(OpText& t) {
    Operation* op = t.op;
    std::vector<ValueRef> args, inits;
    if (Try('(')) {
      do {
        args.emplace_back();
        inits.emplace_back();
        if (!ParseValueRef(&args.back()) ||
            !Expect('=', "in scf.while (... = ...)") ||
            !ParseValueRef(&inits.back())) {
          return false;
        }
      } while (Try(','));
      if (!Expect(')', "to close scf.while's arguments")) return false;
    }
    std::vector<const Type*> ins;
    if (!Expect(':', "before scf.while's type") ||
        !ParseFunctionType(&ins, &t.results) ||
        !AddOperands(op, inits, ins, t.pos)) {
      return false;
    }
    Block* before = op->add_region();
    for (const Type* type : ins) before->add_arg(type);
    if (!ParseRegion(before, args, false) ||
        !ExpectWord("do", "between scf.while's regions") ||
        !ParseRegion(op->add_region(), {}, true)) {
      return false;
    }
    if (TryWord("attributes")) return ParseOptionalAttrDict(op);
    return true;
  }

  // --- after the text --------------------------------------------------------

  struct PendingOp {
    Operation* op;
    int loc;
    bool name_results;  // its results' SSA names were made up
  };
  struct PendingArg {
    ir::Function* function;
    int index;
    int loc;
    bool made_up_name;
  };
  struct PendingValue {
    Value* value;
    int loc;
  };
  struct PendingFunction {
    ir::Function* function;
    int loc;
  };

  bool ResolveAll() {
    ResolvedLoc r;
    for (const PendingOp& p : pending_ops_) {
      if (!ResolveLoc(p.loc, 0, &r)) return false;
      p.op->set_loc(r.loc);
      if (p.name_results && !r.name.empty()) {
        for (int k = 0; k < p.op->num_results(); ++k) {
          if (p.op->result(k)->name().empty())
            p.op->result(k)->set_name(r.name);
        }
      }
    }
    for (const PendingArg& p : pending_args_) {
      if (!ResolveLoc(p.loc, 0, &r)) return false;
      ir::ArgInfo& info = p.function->arg_info()[p.index];
      info.loc = r.loc;
      if (!r.name.empty()) info.name = r.name;
      if (p.made_up_name && !r.name.empty()) {
        p.function->body()->arg(p.index)->set_name(r.name);
      }
    }
    for (const PendingValue& p : pending_values_) {
      if (!ResolveLoc(p.loc, 0, &r)) return false;
      if (!r.name.empty()) p.value->set_name(r.name);
    }
    for (const PendingFunction& p : pending_functions_) {
      if (!ResolveLoc(p.loc, 0, &r)) return false;
      p.function->set_loc(r.loc);
    }
    for (int loc : checked_locs_) {
      if (!ResolveLoc(loc, 0, &r)) return false;
    }
    // Aliases nothing uses must still make sense.
    for (auto& [name, def] : aliases_) {
      if (def.state == 0) {
        LocNode use;
        use.kind = LocNode::kAlias;
        use.text = name;
        use.pos = def.pos;
        if (!ResolveLoc(AddLoc(std::move(use)), 0, &r)) return false;
      }
    }
    return true;
  }

  int depth_ = 0;
  // Pass 2 of a body with branches: every name pass 1 saw defined, and
  // how much text was read again, up to a budget.
  std::unordered_set<std::string> body_names_;
  size_t copied_ = 0;
  size_t copy_budget_ = 0;
  std::unique_ptr<ir::Module> module_;
  std::vector<std::unordered_map<std::string, std::vector<Value*>>> scopes_;
  std::vector<PendingOp> pending_ops_;
  std::vector<PendingArg> pending_args_;
  std::vector<PendingValue> pending_values_;
  std::vector<PendingFunction> pending_functions_;
  std::vector<int> checked_locs_;
};

}  // namespace

Result<std::unique_ptr<ir::Module>> ReadTtir(std::string_view text,
                                             std::string_view file) {
  Reader reader(text, file);
  return reader.Read();
}

}  // namespace mtlemu::triton::ttir
