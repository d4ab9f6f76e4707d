#include "compiler/triton/lower/kernel_lowering.h"

#include <algorithm>

#include "compiler/triton/ir/printer.h"
#include "compiler/triton/lower/msl_expr.h"
#include "compiler/triton/lower/msl_names.h"

namespace mtlemu::triton::lower {
namespace {

using ir::OpCode;

constexpr int kMaxBuffers = 31;
constexpr int64_t kMaxThreadgroupMemory = 32 * 1024;

bool IsTensor(const ir::Value* v) { return v->type()->IsTensor(); }

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llxu", static_cast<unsigned long long>(v));
  return buf;
}

// The coordinates of the element whose flat index is `flat` in `shape`.
std::vector<int64_t> Coords(const Layout& l, int64_t flat) {
  std::vector<int64_t> c(l.shape.size());
  for (int d = 0; d < l.rank(); ++d) {
    c[d] = (flat >> l.dim_low_bit(d)) & (l.shape[d] - 1);
  }
  return c;
}

int64_t FlatOf(const Layout& l, const std::vector<int64_t>& c) {
  int64_t f = 0;
  for (int d = 0; d < l.rank(); ++d) f |= c[d] << l.dim_low_bit(d);
  return f;
}

}  // namespace

KernelLowering::KernelLowering(const ir::Function& function,
                               const LowerOptions& options)
    : function_(function),
      options_(options),
      layouts_(function, options.num_warps) {}

void KernelLowering::Fail(const std::string& message) {
  throw LowerError{message,
                   current_ != nullptr ? current_->loc() : function_.loc()};
}

// --- writing
// -------------------------------------------------------------------------

void KernelLowering::BeginJoin() { joining_ = true; }

void KernelLowering::EndJoin() {
  joining_ = false;
  if (!pending_.empty()) Line(pending_);
  pending_.clear();
  pending_count_ = 0;
}

void KernelLowering::Line(const std::string& s) {
  // Slot statements of one op share a line (four at a time).
  if (joining_) {
    pending_ += (pending_.empty() ? "" : " ") + s;
    if (++pending_count_ == 4) {
      joining_ = false;
      Line(pending_);
      joining_ = true;
      pending_.clear();
      pending_count_ = 0;
    }
    return;
  }
  // A #line names the line after it; the lines after that count up from
  // there, so each line of an op's code is put back on the op's line.
  if (wanted_loc_.known() && (wanted_loc_.line != presumed_line_ ||
                              wanted_loc_.file != presumed_file_)) {
    std::string directive = "#line " + std::to_string(wanted_loc_.line);
    if (wanted_loc_.file != presumed_file_) {
      directive += " \"";
      for (char c : wanted_loc_.file) {
        if (c == '"' || c == '\\') directive += '\\';
        directive += c;
      }
      directive += "\"";
    }
    body_ << directive << "\n";
    presumed_line_ = wanted_loc_.line;
    presumed_file_ = wanted_loc_.file;
  }
  body_ << std::string(2 * indent_, ' ') << s << "\n";
  ++presumed_line_;
}

void KernelLowering::SetLocation(const SourceLocation& loc) {
  if (loc.known()) wanted_loc_ = loc;
}

std::string KernelLowering::NewName(const ir::Value* v) {
  // Cut short for the MSL's reader: the number makes it unique.
  return MslIdentifier(v->name().empty() ? "v" : v->name(), 20) + "_" +
         std::to_string(next_name_++);
}

std::string KernelLowering::NewTemp(const std::string& base) {
  return base + "_" + std::to_string(next_name_++);
}

std::string KernelLowering::TypeOf(const ir::Type* scalar) {
  if (scalar->IsBlockPointer()) {
    const ir::Type* block = scalar->pointee();
    const std::string elem = TypeOf(block->element());
    const std::string name =
        "mtlemu_block_ptr_" + elem + "_" + std::to_string(block->rank());
    if (helper_structs_.insert(name).second) {
      const std::string r = std::to_string(block->rank());
      structs_ += "struct " + name + " {\n  device " + elem +
                  "* base;\n  long shape[" + r + "];\n  long strides[" + r +
                  "];\n  int offsets[" + r + "];\n};\n";
    }
    return name;
  }
  if (scalar->IsTensorDesc()) {
    const ir::Type* block = scalar->element();
    const std::string elem = TypeOf(block->element());
    const std::string name =
        "mtlemu_tensor_desc_" + elem + "_" + std::to_string(block->rank());
    if (helper_structs_.insert(name).second) {
      const std::string r = std::to_string(block->rank());
      structs_ += "struct " + name + " {\n  device " + elem +
                  "* base;\n  int shape[" + r + "];\n  long strides[" + r +
                  "];\n};\n";
    }
    return name;
  }
  Result<std::string> t = MslType(scalar);
  if (!t.ok()) Fail(t.error().message);
  return t.value();
}

std::string KernelLowering::ScratchType(const ir::Type* scalar) {
  if (scalar->IsPointer()) return "ulong";
  if (scalar->IsInt(1)) return "uchar";
  return TypeOf(scalar);
}

std::string KernelLowering::ScratchPointer(const ir::Type* scalar,
                                           int64_t offset, int64_t bytes) {
  const int64_t end = offset + bytes;
  if (end > scratch_bytes_) scratch_bytes_ = end;
  if (current_ != nullptr) {
    scratch_users_.push_back(std::string(current_->name()) + " at " +
                             current_->loc().file + ":" +
                             std::to_string(current_->loc().line) + " (" +
                             std::to_string(bytes) + " bytes)");
  }
  const std::string t = ScratchType(scalar);
  const std::string name = NewTemp("tg");
  Line("threadgroup " + t + "* " + name + " = (threadgroup " + t +
       "*)(mtlemu_scratch + " + std::to_string(offset) + ");");
  return name;
}

void KernelLowering::Barrier() {
  if (loads_pending_ && options_.num_warps > 1) {
    // The same barrier orders the loads before it, at no extra cost.
    Line(
        "threadgroup_barrier(mem_flags::mem_device | "
        "mem_flags::mem_threadgroup);");
    loads_pending_ = false;
    return;
  }
  Line("threadgroup_barrier(mem_flags::mem_threadgroup);");
}

void KernelLowering::OrderStoreAfterLoads() {
  if (!loads_pending_ || options_.num_warps <= 1) return;
  Line("threadgroup_barrier(mem_flags::mem_device);");
  loads_pending_ = false;
}

namespace {

bool HasDeviceLoad(const ir::Block& block) {
  bool found = false;
  ir::Walk(block, [&](const ir::Operation* op) {
    found = found || op->code() == ir::OpCode::kLoad ||
            op->code() == ir::OpCode::kDescriptorLoad;
  });
  return found;
}

}  // namespace

// --- layouts at run time
// -----------------------------------------------------------------

std::string KernelLowering::ThreadFlat(const Layout& l) {
  const std::string key = l.ToString();
  auto it = thread_flat_.find(key);
  if (it != thread_flat_.end()) return it->second;
  std::vector<std::string> terms;
  auto runs = [&](const std::vector<int>& bits, const std::string& var) {
    for (size_t i = 0; i < bits.size();) {
      if (bits[i] < 0) {
        ++i;
        continue;
      }
      size_t j = i + 1;
      while (j < bits.size() && bits[j] == bits[j - 1] + 1) ++j;
      const uint64_t mask = (uint64_t{1} << (j - i)) - 1;
      std::string t = "(" + var;
      if (i > 0) t += " >> " + std::to_string(i);
      t += ") & " + Hex(mask);
      const int shift = bits[i];
      terms.push_back(shift > 0
                          ? "((" + t + ") << " + std::to_string(shift) + ")"
                          : "(" + t + ")");
      i = j;
    }
  };
  runs(l.lane, "mtlemu_lane");
  runs(l.warp, "mtlemu_warp");
  const std::string name = "tf" + std::to_string(thread_flat_.size());
  std::string expr = terms.empty() ? "0u" : terms[0];
  for (size_t i = 1; i < terms.size(); ++i) expr += " | " + terms[i];
  prologue_ << "  const uint " << name << " = " << expr << ";  // " << key
            << "\n";
  thread_flat_[key] = name;
  return name;
}

std::string KernelLowering::Canonical(const Layout& l) {
  const uint32_t lanes = l.replicated_lane_mask();
  const uint32_t warps = l.replicated_warp_mask();
  if (lanes == 0 && warps == 0) return "true";
  const std::string key = std::to_string(lanes) + "/" + std::to_string(warps);
  auto it = canonical_.find(key);
  if (it != canonical_.end()) return it->second;
  std::string cond;
  if (lanes) cond = "(mtlemu_lane & " + Hex(lanes) + ") == 0u";
  if (warps) {
    cond += (cond.empty() ? "" : " && ") + std::string("(mtlemu_warp & ") +
            Hex(warps) + ") == 0u";
  }
  const std::string name = "canonical" + std::to_string(canonical_.size());
  prologue_ << "  const bool " << name << " = " << cond << ";\n";
  canonical_[key] = name;
  return name;
}

std::string KernelLowering::FlatIndex(const Layout& l, int slot) {
  const int64_t c = l.SlotFlat(slot);
  const std::string tf = ThreadFlat(l);
  return c == 0 ? tf : "(" + tf + " + " + std::to_string(c) + "u)";
}

std::string KernelLowering::Coordinate(const Layout& l, int slot, int dim) {
  const std::string tf = ThreadFlat(l);
  const int low = l.dim_low_bit(dim);
  const int64_t reg = (l.SlotFlat(slot) >> low) & (l.shape[dim] - 1);
  std::string t = tf;
  if (low > 0) t = "(" + t + " >> " + std::to_string(low) + ")";
  t = "(" + t + " & " + Hex(static_cast<uint64_t>(l.shape[dim] - 1)) + ")";
  // Register bits and thread bits of one dimension never overlap: OR them.
  return reg == 0 ? t : "(" + t + " | " + std::to_string(reg) + "u)";
}

// --- scopes and values
// ----------------------------------------------------------------

void KernelLowering::PushScope() { scopes_.emplace_back(); }
void KernelLowering::PopScope() { scopes_.pop_back(); }

void KernelLowering::Bind(const ir::Value* v, const Layout& l, Slots slots) {
  scopes_.back().tensors[{v, l.ToString()}] = std::move(slots);
}

void KernelLowering::BindScalar(const ir::Value* v, std::string expr) {
  scopes_.back().scalars[v] = std::move(expr);
}

const KernelLowering::Slots* KernelLowering::Find(const ir::Value* v,
                                                  const Layout& l) const {
  const std::pair<const ir::Value*, std::string> key{v, l.ToString()};
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto f = it->tensors.find(key);
    if (f != it->tensors.end()) return &f->second;
  }
  return nullptr;
}

std::string KernelLowering::Scalar(const ir::Value* v) {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto f = it->scalars.find(v);
    if (f != it->scalars.end()) return f->second;
  }
  const ir::Operation* def = v->defining_op();
  if (def != nullptr && def->code() == OpCode::kConstant) {
    EmitOp(*def);
    return Scalar(v);
  }
  Fail("internal error: scalar value used before it is defined");
}

const KernelLowering::Slots& KernelLowering::Get(const ir::Value* v,
                                                 const Layout& l) {
  if (!IsTensor(v)) Fail("internal error: a scalar used as a tensor");
  if (const Slots* s = Find(v, l)) return *s;
  const ir::Operation* saved = current_;
  if (layouts_.rematerializable(v)) {
    Slots s = Materialize(*v->defining_op(), v, l);
    current_ = saved;
    Bind(v, l, std::move(s));
    return *Find(v, l);
  }
  // A broadcast (or expand_dims) wanted elsewhere than its home: computed
  // there from its operand, which is moved if it must be, rather than the
  // result moved (a [128, 32, 1] operand is 32 times smaller than its
  // [128, 32, 32] broadcast).
  if (const ir::Operation* d = v->defining_op();
      d != nullptr &&
      (d->code() == OpCode::kBroadcast || d->code() == OpCode::kExpandDims)) {
    Slots s = Materialize(*d, v, l);
    current_ = saved;
    Bind(v, l, std::move(s));
    return *Find(v, l);
  }
  const Layout& home = layouts_.home(v);
  const Slots* at_home = Find(v, home);
  if (at_home == nullptr)
    Fail("internal error: tensor used before its definition");
  Slots copy = *at_home;
  Slots s = Convert(v, copy, home, l);
  current_ = saved;
  Bind(v, l, std::move(s));
  return *Find(v, l);
}

KernelLowering::Slots KernelLowering::Materialize(const ir::Operation& op,
                                                  const ir::Value* v,
                                                  const Layout& l) {
  const int n = l.slots();
  Slots out(n);
  switch (op.code()) {
    case OpCode::kConstant: {
      const auto* dense = std::get_if<ir::DenseAttr>(op.attr("value"));
      if (dense == nullptr || dense->values.size() != 1) {
        Fail("only splat tensor constants are supported");
      }
      const ir::Type* t = v->type()->element();
      std::string lit;
      if (const auto* i = std::get_if<int64_t>(&dense->values[0])) {
        lit = t->IsFloat() ? FloatLiteral(static_cast<double>(*i), t)
                           : IntLiteral(*i, t);
      } else {
        const double d = std::get<double>(dense->values[0]);
        lit = t->IsFloat() ? FloatLiteral(d, t)
                           : IntLiteral(static_cast<int64_t>(d), t);
      }
      std::fill(out.begin(), out.end(), lit);
      return out;
    }
    case OpCode::kMakeRange: {
      current_ = &op;
      SetLocation(op.loc());
      const int64_t start = op.int_attr("start");
      const std::string base = NewName(v);
      const std::string tf = ThreadFlat(l);
      Line("const uint " + base + " = " + tf +
           (start ? " + " + IntLiteral(start, ir::Type::I32()) : "") + ";");
      for (int s = 0; s < n; ++s) {
        const int64_t c = l.SlotFlat(s);
        out[s] = c == 0 ? base : "(" + base + " + " + std::to_string(c) + "u)";
      }
      return out;
    }
    case OpCode::kSplat: {
      const std::string x = Scalar(op.operand(0));
      std::fill(out.begin(), out.end(), x);
      return out;
    }
    case OpCode::kExpandDims:
    case OpCode::kReshape: {
      const ir::Value* src = op.operand(0);
      return Get(src, Reshaped(l, src->type()->shape()));
    }
    case OpCode::kBroadcast: {
      const ir::Value* src = op.operand(0);
      const std::vector<int64_t>& src_shape = src->type()->shape();
      const Layout sl = BroadcastOperand(l, src_shape);
      const Slots& from = Get(src, sl);
      for (int s = 0; s < n; ++s) {
        std::vector<int64_t> c = Coords(l, l.SlotFlat(s));
        for (size_t d = 0; d < c.size(); ++d) {
          if (src_shape[d] == 1) c[d] = 0;
        }
        const int t = sl.SlotOfFlat(FlatOf(sl, c));
        if (t < 0) Fail("internal error: broadcast slot mapping");
        out[s] = from[t];
      }
      return out;
    }
    case OpCode::kTrans: {
      const ir::Value* src = op.operand(0);
      std::vector<int64_t> o = op.array_attr("order");
      const std::vector<int> order(o.begin(), o.end());
      const Layout sl = PermuteOperand(l, order, src->type()->shape());
      const Slots& from = Get(src, sl);
      for (int s = 0; s < n; ++s) {
        const std::vector<int64_t> c = Coords(l, l.SlotFlat(s));
        std::vector<int64_t> sc(c.size());
        for (size_t i = 0; i < order.size(); ++i) sc[order[i]] = c[i];
        const int t = sl.SlotOfFlat(FlatOf(sl, sc));
        if (t < 0) Fail("internal error: permutation slot mapping");
        out[s] = from[t];
      }
      return out;
    }
    default:
      break;
  }
  // Elementwise: operands in the same layout (scalars as they are).
  std::vector<const Slots*> operands;
  for (const ir::Value* o : op.operands()) {
    operands.push_back(IsTensor(o) ? &Get(o, Reshaped(l, o->type()->shape()))
                                   : nullptr);
  }
  std::vector<std::string> scalars;
  for (const ir::Value* o : op.operands()) {
    scalars.push_back(IsTensor(o) ? "" : Scalar(o));
  }
  current_ = &op;
  SetLocation(op.loc());
  const std::string type = TypeOf(v->type()->element());
  const std::string base = NewName(v);
  Joined joined(*this);
  for (int s = 0; s < n; ++s) {
    std::vector<std::string> args;
    for (size_t i = 0; i < operands.size(); ++i) {
      args.push_back(operands[i] ? (*operands[i])[s] : scalars[i]);
    }
    Result<std::optional<std::string>> e = ElementExpr(op, args);
    if (!e.ok()) Fail(e.error().message);
    if (!e.value()) {
      Fail(std::string("internal error: ") + op.name() +
           " cannot be computed element by element");
    }
    const std::string name = base + "_" + std::to_string(s);
    Line(type + " " + name + " = " + *e.value() + ";");
    out[s] = name;
  }
  return out;
}

KernelLowering::Slots KernelLowering::Convert(const ir::Value* v,
                                              const Slots& from,
                                              const Layout& fl,
                                              const Layout& tl) {
  const int n = tl.slots();
  Slots out(n);
  // The same threads hold the same elements: only the registers move.
  if (fl.lane == tl.lane && fl.warp == tl.warp) {
    bool ok = true;
    for (int s = 0; s < n && ok; ++s) {
      const int t = fl.SlotOfFlat(tl.SlotFlat(s));
      if (t < 0) {
        ok = false;
      } else {
        out[s] = from[t];
      }
    }
    if (ok) return out;
  }
  // Through threadgroup memory, in row-major order: a tensor of more than
  // half of Metal's 32 KB in pieces of that size, one after the other
  // (each thread stores and loads the elements of the piece it holds), so
  // long as the pieces' code stays small.
  const ir::Type* t = v->type()->element();
  const std::string st = ScratchType(t);
  const std::string type = TypeOf(t);
  const int64_t numel = v->type()->NumElements();
  const int64_t elem = st == "ulong" ? 8 : st == "uchar" ? 1 : t->bits() / 8;
  constexpr int64_t kPieceBytes = 16 * 1024;
  constexpr int64_t kMostPieceLines = 4096;
  int64_t pieces = 1;
  if (numel * elem > kPieceBytes) {
    const int64_t p = (numel * elem + kPieceBytes - 1) / kPieceBytes;
    if (p * (fl.slots() + n) <= kMostPieceLines) pieces = p;
  }
  const int64_t per = (numel + pieces - 1) / pieces;
  Line("// " + tl.ToString() + " from " + fl.ToString() +
       (pieces > 1 ? " in " + std::to_string(pieces) + " pieces" : ""));
  const std::string buf = ScratchPointer(t, 0, per * elem);
  const std::string canonical = Canonical(fl);
  const std::string base = NewName(v);
  for (int s = 0; s < n; ++s) out[s] = base + "_" + std::to_string(s);
  if (pieces > 1) {
    Joined joined(*this);
    for (int s = 0; s < n; ++s) Line(type + " " + out[s] + ";");
  }
  for (int64_t piece = 0; piece < pieces; ++piece) {
    const std::string lo = std::to_string(piece * per) + "u";
    const std::string size = std::to_string(per) + "u";
    // Slot `index` of this piece: its place in `buf`, and the condition.
    auto place = [&](const std::string& index) {
      return pieces == 1 ? index : "(" + index + ") - " + lo;
    };
    auto in_piece = [&](const std::string& index) {
      return pieces == 1
                 ? std::string()
                 : "if ((uint)(" + index + ") - " + lo + " < " + size + ") ";
    };
    Line("if (" + canonical + ") {");
    for (int s = 0; s < fl.slots(); ++s) {
      std::string value = from[s];
      if (t->IsPointer()) value = "(ulong)(" + value + ")";
      const std::string index = FlatIndex(fl, s);
      Line("  " + in_piece(index) + buf + "[" + place(index) + "] = " + value +
           ";");
    }
    Line("}");
    Barrier();
    {
      Joined joined(*this);
      for (int s = 0; s < n; ++s) {
        const std::string index = FlatIndex(tl, s);
        std::string load = buf + "[" + place(index) + "]";
        if (t->IsPointer() || t->IsInt(1)) load = "(" + type + ")" + load;
        Line(pieces == 1 ? type + " " + out[s] + " = " + load + ";"
                         : in_piece(index) + out[s] + " = " + load + ";");
      }
    }
    Barrier();
  }
  return out;
}

// --- ops
// -------------------------------------------------------------------------------

void KernelLowering::EmitBlock(const ir::Block& block) {
  for (const auto& op : block.ops()) {
    if (ir::IsTerminator(op->code())) continue;
    EmitOp(*op);
  }
}

std::vector<std::string> KernelLowering::InlineRegion(
    const ir::Block& region, const std::vector<std::string>& args) {
  PushScope();
  for (int i = 0; i < region.num_args(); ++i)
    BindScalar(region.arg(i), args[i]);
  EmitBlock(region);
  std::vector<std::string> results;
  const ir::Operation* term = region.terminator();
  if (term != nullptr) {
    for (const ir::Value* v : term->operands()) results.push_back(Scalar(v));
  }
  PopScope();
  return results;
}

void KernelLowering::EmitOp(const ir::Operation& op) {
  current_ = &op;
  if (op.code() == OpCode::kLoad || op.code() == OpCode::kDescriptorLoad)
    loads_pending_ = true;
  switch (op.code()) {
    case OpCode::kFor:
      return EmitFor(op);
    case OpCode::kIf:
      return EmitIf(op);
    case OpCode::kWhile:
      return EmitWhile(op);
    case OpCode::kLoad:
      if (op.operand(0)->type()->IsBlockPointer()) return EmitBlockLoad(op);
      return EmitLoad(op);
    case OpCode::kStore:
      if (op.operand(0)->type()->IsBlockPointer()) return EmitBlockStore(op);
      return EmitStore(op);
    case OpCode::kAtomicRMW:
    case OpCode::kAtomicCAS:
      return EmitAtomic(op);
    case OpCode::kMakeTensorPtr:
    case OpCode::kAdvance:
      return EmitBlockPointer(op);
    case OpCode::kMakeTensorDesc:
    case OpCode::kDescriptorLoad:
    case OpCode::kDescriptorStore:
      return EmitDescriptor(op);
    case OpCode::kReduce:
      return EmitReduce(op);
    case OpCode::kMapElementwise:
      return EmitMapElementwise(op);
    case OpCode::kScan:
      return EmitScan(op);
    case OpCode::kHistogram:
      return EmitHistogram(op);
    case OpCode::kGather:
      return EmitGather(op);
    case OpCode::kDot:
      return EmitDot(op);
    case OpCode::kBarrier:
      SetLocation(op.loc());
      Line(
          "threadgroup_barrier(mem_flags::mem_device | "
          "mem_flags::mem_threadgroup);");
      loads_pending_ = false;
      return;
    case OpCode::kAssume:
      return;
    case OpCode::kPrint:
      return EmitPrint(op);
    case OpCode::kAssert: {
      SetLocation(op.loc());
      const ir::Value* c = op.operand(0);
      std::vector<std::string> conds;
      if (IsTensor(c)) {
        const Slots& s = Get(c, layouts_.HomeOrBlocked(c));
        conds = s;
      } else {
        conds = {Scalar(c)};
      }
      std::string all = conds[0];
      for (size_t i = 1; i < conds.size(); ++i) all += " && " + conds[i];
      Line("mtlemu_device_assert(" + all + ");");
      return;
    }
    case OpCode::kCall:
      Fail("tt.call is not supported (the callee must be inlined)");
    case OpCode::kPoison: {
      const ir::Value* v = op.result();
      if (IsTensor(v)) {
        const Layout l = layouts_.HomeOrBlocked(v);
        Slots s(l.slots(), "0");
        Bind(v, l, s);
      } else {
        BindScalar(v, "0");
      }
      return;
    }
    case OpCode::kSplit: {
      const ir::Value* src = op.operand(0);
      Layout sl = layouts_.HomeOrBlocked(src);
      if (!SplitOperandOk(sl))
        sl = JoinResult(
            Blocked(op.result(0)->type()->shape(), options_.num_warps));
      const Slots& from = Get(src, sl);
      const Layout rl = SplitResult(sl);
      for (int which = 0; which < 2; ++which) {
        Slots out(rl.slots());
        for (int s = 0; s < rl.slots(); ++s) {
          const int t = sl.SlotOfFlat((rl.SlotFlat(s) << 1) | which);
          if (t < 0) Fail("internal error: split slot mapping");
          out[s] = from[t];
        }
        Bind(op.result(which), rl, std::move(out));
      }
      return;
    }
    case OpCode::kJoin: {
      const Layout rl = layouts_.home(op.result());
      const Layout sl =
          Reshaped(SplitResult(rl), op.operand(0)->type()->shape());
      const Slots& a = Get(op.operand(0), sl);
      const Slots& b = Get(op.operand(1), sl);
      Slots out(rl.slots());
      for (int s = 0; s < rl.slots(); ++s) {
        const int64_t f = rl.SlotFlat(s);
        out[s] = (f & 1 ? b : a)[sl.SlotOfFlat(f >> 1)];
      }
      Bind(op.result(), rl, std::move(out));
      return;
    }
    case OpCode::kCat: {
      const Layout rl = layouts_.home(op.result());
      Layout sl = rl;
      sl.shape = op.operand(0)->type()->shape();
      const int top = sl.flat_bits();
      sl.reg.erase(std::find(sl.reg.begin(), sl.reg.end(), top));
      const Slots& a = Get(op.operand(0), sl);
      const Slots& b = Get(op.operand(1), sl);
      Slots out(rl.slots());
      for (int s = 0; s < rl.slots(); ++s) {
        const int64_t f = rl.SlotFlat(s);
        const bool second = (f >> top) & 1;
        out[s] = (second ? b : a)[sl.SlotOfFlat(f & ~(int64_t{1} << top))];
      }
      Bind(op.result(), rl, std::move(out));
      return;
    }
    case OpCode::kGetProgramId:
    case OpCode::kGetNumPrograms: {
      static const char* kAxis[] = {"x", "y", "z"};
      const int64_t axis = op.int_attr("axis");
      const std::string src = op.code() == OpCode::kGetProgramId
                                  ? "mtlemu_program"
                                  : "mtlemu_programs";
      BindScalar(op.result(), src + "." + kAxis[axis]);
      return;
    }
    case OpCode::kConstant:
      if (!IsTensor(op.result())) {
        const auto* i = std::get_if<ir::IntAttr>(op.attr("value"));
        const auto* f = std::get_if<ir::FloatAttr>(op.attr("value"));
        const auto* b = std::get_if<bool>(op.attr("value"));
        const ir::Type* t = op.result()->type();
        if (i != nullptr) {
          BindScalar(op.result(),
                     t->IsFloat()
                         ? FloatLiteral(static_cast<double>(i->value), t)
                         : IntLiteral(i->value, t));
        } else if (f != nullptr) {
          BindScalar(op.result(), FloatLiteral(f->value, t));
        } else if (b != nullptr) {
          BindScalar(op.result(), *b ? "true" : "false");
        } else {
          Fail("unsupported scalar constant");
        }
      }
      return;
    default:
      break;
  }
  // Rematerializable and elementwise ops.
  for (int i = 0; i < op.num_results(); ++i) {
    const ir::Value* r = op.result(i);
    if (!IsTensor(r)) {
      std::vector<std::string> args;
      for (const ir::Value* o : op.operands()) {
        if (IsTensor(o))
          Fail(std::string("internal error: ") + op.name() +
               " mixes scalars and tensors");
        args.push_back(Scalar(o));
      }
      current_ = &op;
      SetLocation(op.loc());
      Result<std::optional<std::string>> e = ElementExpr(op, args);
      if (!e.ok()) Fail(e.error().message);
      if (!e.value())
        Fail(std::string(op.name()) +
             " is not supported by the Metal lowering yet");
      const std::string name = NewName(r);
      Line(TypeOf(r->type()) + " " + name + " = " + *e.value() + ";");
      BindScalar(r, name);
      continue;
    }
    if (layouts_.rematerializable(r)) continue;  // computed where used
    const Layout home = layouts_.home(r);
    Bind(r, home, Materialize(op, r, home));
  }
}

void KernelLowering::EmitFor(const ir::Operation& op) {
  SetLocation(op.loc());
  const ir::Block& body = *op.region(0);
  const ir::Type* iv_type = body.arg(0)->type();
  const std::string iv_signed = SignedType(iv_type->bits());
  const std::string lb = Scalar(op.operand(0));
  const std::string ub = Scalar(op.operand(1));
  const std::string step = Scalar(op.operand(2));
  // The carried values live in variables declared before the loop.
  struct Carried {
    const ir::Value* result;
    bool tensor;
    Layout layout;
    std::vector<std::string> vars;
  };
  std::vector<Carried> carried;
  for (int i = 0; i < op.num_results(); ++i) {
    Carried c;
    c.result = op.result(i);
    c.tensor = IsTensor(c.result);
    const ir::Value* init = op.operand(3 + i);
    const std::string type = TypeOf(c.result->type()->ScalarType());
    const std::string base = NewName(body.arg(1 + i));
    if (c.tensor) {
      c.layout = layouts_.home(c.result);
      const Slots& in = Get(init, c.layout);
      for (int s = 0; s < c.layout.slots(); ++s) {
        c.vars.push_back(base + "_" + std::to_string(s));
        Line(type + " " + c.vars.back() + " = " + in[s] + ";");
      }
    } else {
      c.vars.push_back(base);
      Line(type + " " + base + " = " + Scalar(init) + ";");
    }
    carried.push_back(std::move(c));
  }
  const std::string iv = NewName(body.arg(0));
  SetLocation(op.loc());
  // A load late in the body precedes the next iteration's stores; after
  // no iteration, those before the loop are still pending.
  const bool pending_before = loads_pending_;
  loads_pending_ = pending_before || HasDeviceLoad(body);
  Line("for (" + iv_signed + " " + iv + "_i = (" + iv_signed + ")" + lb + "; " +
       iv + "_i < (" + iv_signed + ")" + ub + "; " + iv + "_i += (" +
       iv_signed + ")" + step + ") {");
  ++indent_;
  PushScope();
  Line("const " + TypeOf(iv_type) + " " + iv + " = (" + TypeOf(iv_type) + ")" +
       iv + "_i;");
  BindScalar(body.arg(0), iv);
  for (size_t i = 0; i < carried.size(); ++i) {
    const ir::Value* arg = body.arg(1 + static_cast<int>(i));
    if (carried[i].tensor) {
      Bind(arg, carried[i].layout, carried[i].vars);
    } else {
      BindScalar(arg, carried[i].vars[0]);
    }
  }
  EmitBlock(body);
  const ir::Operation* yield = body.terminator();
  current_ = yield;
  // Two steps, as the new values may read the old ones.
  std::vector<std::pair<std::string, std::string>> assigns;
  for (size_t i = 0; i < carried.size(); ++i) {
    const ir::Value* y = yield->operand(static_cast<int>(i));
    const std::string type = TypeOf(y->type()->ScalarType());
    if (carried[i].tensor) {
      const Slots& s = Get(y, carried[i].layout);
      for (size_t k = 0; k < s.size(); ++k) {
        if (s[k] == carried[i].vars[k]) continue;
        const std::string tmp = NewTemp("next");
        Line(type + " " + tmp + " = " + s[k] + ";");
        assigns.emplace_back(carried[i].vars[k], tmp);
      }
    } else {
      const std::string s = Scalar(y);
      if (s == carried[i].vars[0]) continue;
      const std::string tmp = NewTemp("next");
      Line(type + " " + tmp + " = " + s + ";");
      assigns.emplace_back(carried[i].vars[0], tmp);
    }
  }
  for (auto& [var, tmp] : assigns) Line(var + " = " + tmp + ";");
  PopScope();
  --indent_;
  Line("}");
  loads_pending_ = loads_pending_ || pending_before;
  for (const Carried& c : carried) {
    if (c.tensor) {
      Bind(c.result, c.layout, c.vars);
    } else {
      BindScalar(c.result, c.vars[0]);
    }
  }
}

void KernelLowering::EmitIf(const ir::Operation& op) {
  SetLocation(op.loc());
  const std::string cond = Scalar(op.operand(0));
  struct Result {
    const ir::Value* value;
    bool tensor;
    Layout layout;
    std::vector<std::string> vars;
  };
  std::vector<Result> results;
  for (int i = 0; i < op.num_results(); ++i) {
    Result r;
    r.value = op.result(i);
    r.tensor = IsTensor(r.value);
    const std::string type = TypeOf(r.value->type()->ScalarType());
    const std::string base = NewName(r.value);
    if (r.tensor) {
      r.layout = layouts_.home(r.value);
      for (int s = 0; s < r.layout.slots(); ++s) {
        r.vars.push_back(base + "_" + std::to_string(s));
        Line(type + " " + r.vars.back() + ";");
      }
    } else {
      r.vars.push_back(base);
      Line(type + " " + base + ";");
    }
    results.push_back(std::move(r));
  }
  // Loads are pending after the if when they are after either branch.
  const bool pending_before = loads_pending_;
  bool pending_after = pending_before;
  for (int branch = 0; branch < 2; ++branch) {
    const ir::Block* region =
        branch < op.num_regions() ? op.region(branch) : nullptr;
    loads_pending_ = pending_before;
    if (branch == 1 && (region == nullptr || region->empty()) &&
        results.empty())
      break;
    Line(branch == 0 ? "if (" + cond + ") {" : "} else {");
    ++indent_;
    PushScope();
    if (region != nullptr) {
      EmitBlock(*region);
      const ir::Operation* yield = region->terminator();
      current_ = yield;
      for (size_t i = 0; i < results.size() && yield != nullptr; ++i) {
        const ir::Value* y = yield->operand(static_cast<int>(i));
        if (results[i].tensor) {
          const Slots& s = Get(y, results[i].layout);
          for (size_t k = 0; k < s.size(); ++k)
            Line(results[i].vars[k] + " = " + s[k] + ";");
        } else {
          Line(results[i].vars[0] + " = " + Scalar(y) + ";");
        }
      }
    }
    PopScope();
    --indent_;
    pending_after = pending_after || loads_pending_;
  }
  Line("}");
  loads_pending_ = pending_after;
  for (const Result& r : results) {
    if (r.tensor) {
      Bind(r.value, r.layout, r.vars);
    } else {
      BindScalar(r.value, r.vars[0]);
    }
  }
}

void KernelLowering::EmitWhile(const ir::Operation& op) {
  SetLocation(op.loc());
  const ir::Block& before = *op.region(0);
  const ir::Block& after = *op.region(1);
  struct Var {
    bool tensor;
    Layout layout;
    std::vector<std::string> vars;
  };
  auto declare = [&](const ir::Value* v, const std::string& base,
                     const ir::Value* init) {
    Var x;
    x.tensor = IsTensor(v);
    const std::string type = TypeOf(v->type()->ScalarType());
    if (x.tensor) {
      x.layout = layouts_.home(v);
      const Slots* in = init ? &Get(init, x.layout) : nullptr;
      for (int s = 0; s < x.layout.slots(); ++s) {
        x.vars.push_back(base + "_" + std::to_string(s));
        Line(type + " " + x.vars.back() +
             (in ? " = " + (*in)[s] : std::string()) + ";");
      }
    } else {
      x.vars.push_back(base);
      Line(type + " " + base + (init ? " = " + Scalar(init) : std::string()) +
           ";");
    }
    return x;
  };
  std::vector<Var> loop_vars, after_vars, result_vars;
  for (int i = 0; i < before.num_args(); ++i) {
    loop_vars.push_back(
        declare(before.arg(i), NewName(before.arg(i)), op.operand(i)));
  }
  for (int i = 0; i < after.num_args(); ++i) {
    after_vars.push_back(declare(after.arg(i), NewName(after.arg(i)), nullptr));
  }
  for (int i = 0; i < op.num_results(); ++i) {
    result_vars.push_back(
        declare(op.result(i), NewName(op.result(i)), nullptr));
  }
  auto bind = [&](const ir::Value* v, const Var& x) {
    if (x.tensor) {
      Bind(v, x.layout, x.vars);
    } else {
      BindScalar(v, x.vars[0]);
    }
  };
  auto assign = [&](const Var& x, const ir::Value* v,
                    std::vector<std::pair<std::string, std::string>>& out) {
    if (x.tensor) {
      const Slots& s = Get(v, x.layout);
      for (size_t k = 0; k < s.size(); ++k) out.emplace_back(x.vars[k], s[k]);
    } else {
      out.emplace_back(x.vars[0], Scalar(v));
    }
  };
  const bool pending_before = loads_pending_;
  loads_pending_ =
      pending_before || HasDeviceLoad(before) || HasDeviceLoad(after);
  Line("while (true) {");
  ++indent_;
  PushScope();
  for (int i = 0; i < before.num_args(); ++i) bind(before.arg(i), loop_vars[i]);
  EmitBlock(before);
  const ir::Operation* cond = before.terminator();
  current_ = cond;
  const std::string c = Scalar(cond->operand(0));
  std::vector<std::pair<std::string, std::string>> forward;
  for (int i = 0; i + 1 < cond->num_operands(); ++i) {
    assign(after_vars[i], cond->operand(i + 1), forward);
    assign(result_vars[i], cond->operand(i + 1), forward);
  }
  for (auto& [var, value] : forward) Line(var + " = " + value + ";");
  PopScope();
  Line("if (!(" + c + ")) break;");
  PushScope();
  for (int i = 0; i < after.num_args(); ++i) bind(after.arg(i), after_vars[i]);
  EmitBlock(after);
  const ir::Operation* yield = after.terminator();
  current_ = yield;
  std::vector<std::pair<std::string, std::string>> next;
  for (int i = 0; i < yield->num_operands(); ++i) {
    assign(loop_vars[i], yield->operand(i), next);
  }
  std::vector<std::pair<std::string, std::string>> temps;
  for (auto& [var, value] : next) {
    if (var == value) continue;
    const std::string tmp = NewTemp("next");
    Line("const auto " + tmp + " = " + value + ";");
    temps.emplace_back(var, tmp);
  }
  for (auto& [var, tmp] : temps) Line(var + " = " + tmp + ";");
  PopScope();
  --indent_;
  Line("}");
  loads_pending_ = true;  // the loop may leave after `before`'s loads
  for (int i = 0; i < op.num_results(); ++i) bind(op.result(i), result_vars[i]);
}

// --- the kernel
// ------------------------------------------------------------------------

LoweredKernel KernelLowering::Run() {
  LoweredKernel out;
  out.kernel = function_.name();
  out.threads_per_threadgroup = 32 * options_.num_warps;
  PushScope();
  // Arguments.
  std::vector<std::string> params;
  const ir::Block& body = *function_.body();
  if (body.num_args() > kMaxBuffers) {
    Fail("the kernel has " + std::to_string(body.num_args()) +
         " arguments; Metal binds at most 31 buffers");
  }
  for (int i = 0; i < body.num_args(); ++i) {
    const ir::Value* a = body.arg(i);
    const std::string name = ParameterName(function_.arg_info()[i].name);
    LoweredArg la;
    la.name = function_.arg_info()[i].name;
    la.type = a->type();
    la.buffer_index = i;
    la.is_pointer = a->type()->IsPointer() && !a->type()->IsBlockPointer();
    if (IsTensor(a)) Fail("a kernel argument cannot be a tensor");
    const std::string type = TypeOf(a->type());
    if (la.is_pointer) {
      params.push_back(type + " " + name + " [[buffer(" + std::to_string(i) +
                       ")]]");
    } else {
      params.push_back("constant " + type + "& " + name + " [[buffer(" +
                       std::to_string(i) + ")]]");
    }
    BindScalar(a, name);
    out.args.push_back(la);
  }
  EmitBlock(body);
  if (!print_sites_.empty()) {
    if (body.num_args() + 1 > kMaxBuffers) {
      Fail("the kernel has " + std::to_string(body.num_args()) +
           " arguments and prints (tl.device_print), which takes one more "
           "buffer; Metal binds at most 31");
    }
    out.print_log_index = body.num_args();
    out.prints = print_sites_;
    params.push_back("device uint* mtlemu_print_log [[buffer(" +
                     std::to_string(out.print_log_index) + ")]]");
  }
  // Layout report.
  ir::Walk(body, [&](const ir::Operation* op) {
    for (int i = 0; i < op->num_results(); ++i) {
      const ir::Value* r = op->result(i);
      if (!IsTensor(r)) continue;
      layout_report_ << op->name() << " " << r->type()->ToString() << ": "
                     << (layouts_.rematerializable(r)
                             ? std::string("computed where used")
                             : layouts_.home(r).ToString())
                     << "\n";
    }
  });
  if (scratch_bytes_ > kMaxThreadgroupMemory) {
    std::string users;
    for (const std::string& u : scratch_users_) users += "\n  " + u;
    Fail("the kernel needs " + std::to_string(scratch_bytes_) +
         " bytes of threadgroup memory, more than Metal's 32 KB; the tensors "
         "that needed it:" +
         users);
  }
  const KernelFunctionName kernel_name =
      KernelFunctionNameFor(function_.name());
  std::ostringstream msl;
  msl << "// MSL generated by mtlemu from the Triton kernel '"
      << function_.name() << "' (" << function_.loc().file << ").\n"
      << "// One program instance is one threadgroup of " << options_.num_warps
      << " SIMD groups (" << out.threads_per_threadgroup << " threads).\n"
      << "#include <metal_stdlib>\nusing namespace metal;\n"
      // Triton's enable_fp_fusion: whether a * b + c may be one fma. Not
      // Metal's fast math (NaN and inf are values here).
      << "#pragma clang fp contract("
      << (options_.enable_fp_fusion ? "fast" : "off") << ")\n\n"
      << MslHelpers() << "\n"
      << "#ifdef __MTLEMU__\n#define mtlemu_device_assert(c) do { if (!(c)) "
         "__builtin_trap(); } while (0)\n#else\n#define "
         "mtlemu_device_assert(c) do { } while (0)\n#endif\n\n"
      << structs_ << (structs_.empty() ? "" : "\n")
      << (print_sites_.empty() ? "" : std::string(PrintLogHelper()) + "\n")
      << "[[max_total_threads_per_threadgroup(" << out.threads_per_threadgroup
      << ")]] " << kernel_name.host_name_attribute << "kernel void "
      << kernel_name.identifier << "(";
  for (const std::string& p : params) msl << "\n    " << p << ",";
  msl << "\n    uint3 mtlemu_program [[threadgroup_position_in_grid]],"
      << "\n    uint3 mtlemu_programs [[threadgroups_per_grid]],"
      << "\n    uint mtlemu_tid [[thread_index_in_threadgroup]],"
      << "\n    uint mtlemu_lane [[thread_index_in_simdgroup]],"
      << "\n    uint mtlemu_warp [[simdgroup_index_in_threadgroup]]) {\n";
  if (scratch_bytes_ > 0) {
    const int64_t words = (scratch_bytes_ + 15) / 16;
    msl << "  threadgroup float4 mtlemu_scratch_words[" << words << "];\n"
        << "  threadgroup uchar* mtlemu_scratch = (threadgroup uchar*)"
           "mtlemu_scratch_words;\n";
  }
  if (!print_sites_.empty()) {
    msl << "  uint mtlemu_print_seq = 0u;  // this thread's prints so far\n";
  }
  msl << prologue_.str() << body_.str() << "}\n";
  out.msl = msl.str();
  out.threadgroup_memory_bytes = scratch_bytes_;
  out.layouts = layout_report_.str();
  return out;
}

namespace {

bool ScalarsOnly(const ir::Function& f) {
  bool tensors = false;
  auto note = [&](const ir::Type* t) {
    tensors =
        tensors || t->IsTensor() || t->IsBlockPointer() || t->IsTensorDesc();
  };
  ir::Walk(*f.body(), [&](const ir::Operation* op) {
    for (const ir::Value* v : op->operands()) note(v->type());
    for (int i = 0; i < op->num_results(); ++i) note(op->result(i)->type());
  });
  return !tensors;
}

}  // namespace

Result<LoweredKernel> LowerToMsl(const ir::Module& module,
                                 const LowerOptions& options) {
  const ir::Function* f = nullptr;
  for (const auto& fn : module.functions()) {
    if (fn->is_public()) f = fn.get();
  }
  if (f == nullptr) return Error{"the module has no public tt.func to lower"};
  if (options.num_warps < 1 || options.num_warps > 32 ||
      (options.num_warps & (options.num_warps - 1)) != 0) {
    return Error{
        "num_warps must be a power of two from 1 to 32 (Metal's "
        "1024 threads per threadgroup are 32 SIMD groups of 32); "
        "got " +
        std::to_string(options.num_warps)};
  }
  // A program of scalars alone computes the same values in every thread
  // (only thread 0 stores): one SIMD group does it, whatever num_warps
  // asked for, without the others' redundant copies of the work.
  LowerOptions effective = options;
  if (ScalarsOnly(*f)) effective.num_warps = 1;
  try {
    KernelLowering lowering(*f, effective);
    return lowering.Run();
  } catch (const LowerError& e) {
    std::string where;
    if (e.loc.known()) {
      where = e.loc.file + ":" + std::to_string(e.loc.line) + ":" +
              std::to_string(e.loc.column + 1) + ": ";
    }
    return Error{where + "error: " + e.message};
  }
}

}  // namespace mtlemu::triton::lower
