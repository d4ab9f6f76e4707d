// Ops that combine elements held by different threads: tt.reduce (in
// registers, then across lanes with simd_shuffle_xor, then across SIMD
// groups in threadgroup memory), tt.scan (Sklansky's levels in registers,
// simd_shuffle, then threadgroup memory), tt.histogram (threadgroup atomics)
// and tt.gather. The combiner region is written out at each combining step.
#include "compiler/triton/lower/kernel_lowering.h"
#include "compiler/triton/lower/msl_expr.h"

namespace mtlemu::triton::lower {
namespace {

bool IsTensor(const ir::Value* v) { return v->type()->IsTensor(); }

int64_t ScratchBytes(const ir::Type* t) {
  if (t->IsPointer() || t->bits() == 64) return 8;
  if (t->IsInt(1)) return 1;
  return t->bits() / 8;
}

// simd_shuffle_xor(x, arg) or simd_shuffle(x, arg) (`fn`) of a value of
// any scalar type, through 32-bit words.
std::string Shuffle(const std::string& fn, const std::string& x,
                    const ir::Type* t, const std::string& type,
                    const std::string& arg) {
  const std::string m = ", " + arg + ")";
  if (t->IsInt(1)) return "(" + fn + "((uint)" + x + m + " != 0u)";
  if (t->bits() == 64) {
    return "as_type<" + type + ">(uint2(" + fn + "(as_type<uint2>(" + x +
           ").x" + m + ", " + fn + "(as_type<uint2>(" + x + ").y" + m + "))";
  }
  if (t->bits() == 32) {
    return "as_type<" + type + ">(" + fn + "(as_type<uint>(" + x + ")" + m +
           ")";
  }
  if (t->bits() == 16) {
    return "as_type<" + type + ">((ushort)" + fn + "((uint)as_type<ushort>(" +
           x + ")" + m + ")";
  }
  return "(" + type + ")" + fn + "((uint)" + x + m;
}

}  // namespace

void KernelLowering::EmitReduce(const ir::Operation& op) {
  SetLocation(op.loc());
  const int n = op.num_operands();
  const int axis = static_cast<int>(op.int_attr("axis"));
  const Layout src = layouts_.HomeOrBlocked(op.operand(0));
  std::vector<Slots> in;
  for (int j = 0; j < n; ++j) in.push_back(Get(op.operand(j), src));
  current_ = &op;
  SetLocation(op.loc());
  const Layout dst = Reduced(src, axis);
  const bool scalar_result = !IsTensor(op.result(0));
  std::vector<const ir::Type*> types;
  std::vector<std::string> type_names;
  for (int j = 0; j < n; ++j) {
    types.push_back(op.operand(j)->type()->element());
    type_names.push_back(TypeOf(types.back()));
  }
  const ir::Block& combiner = *op.region(0);
  auto combine = [&](const std::vector<std::string>& a,
                     const std::vector<std::string>& b) {
    std::vector<std::string> args = a;
    args.insert(args.end(), b.begin(), b.end());
    std::vector<std::string> r = InlineRegion(combiner, args);
    // Keep each partial in a variable of its own.
    std::vector<std::string> vars;
    for (int j = 0; j < n; ++j) {
      const std::string v = NewTemp("acc");
      Line(type_names[j] + " " + v + " = " + r[j] + ";");
      vars.push_back(v);
    }
    return vars;
  };
  // 1. The thread's own registers.
  std::vector<std::vector<std::string>> acc(dst.slots());
  std::vector<bool> started(dst.slots(), false);
  for (int s = 0; s < src.slots(); ++s) {
    int64_t f = src.SlotFlat(s);
    // The result element: the flat index with the axis bits removed.
    int64_t rf = 0;
    for (int d = 0, rd = 0; d < src.rank(); ++d) {
      if (d == axis) continue;
      const int64_t c = (f >> src.dim_low_bit(d)) & (src.shape[d] - 1);
      rf |= c << dst.dim_low_bit(rd++);
    }
    const int t = dst.SlotOfFlat(rf);
    if (t < 0) Fail("internal error: reduction slot mapping");
    std::vector<std::string> x;
    for (int j = 0; j < n; ++j) x.push_back(in[j][s]);
    if (!started[t]) {
      acc[t] = x;
      started[t] = true;
    } else {
      acc[t] = combine(acc[t], x);
    }
  }
  // 2. Lanes: a butterfly over the lane bits of the axis.
  for (int i = 0; i < kLaneBits; ++i) {
    const int b = src.lane[i];
    if (b < 0 || src.dim_of_bit(b) != axis) continue;
    for (int t = 0; t < dst.slots(); ++t) {
      std::vector<std::string> other;
      for (int j = 0; j < n; ++j) {
        const std::string v = NewTemp("lane");
        Line(type_names[j] + " " + v + " = " +
             Shuffle("simd_shuffle_xor", acc[t][j], types[j], type_names[j],
                     std::to_string(1 << i) + "u") +
             ";");
        other.push_back(v);
      }
      acc[t] = combine(acc[t], other);
    }
  }
  // 3. SIMD groups: partials through threadgroup memory.
  std::vector<int> warp_bits;
  for (size_t i = 0; i < src.warp.size(); ++i) {
    const int b = src.warp[i];
    if (b >= 0 && src.dim_of_bit(b) == axis)
      warp_bits.push_back(static_cast<int>(i));
  }
  if (!warp_bits.empty()) {
    const int groups = 1 << warp_bits.size();
    std::string group = "0u";
    uint32_t axis_warp_mask = 0;
    for (size_t k = 0; k < warp_bits.size(); ++k) {
      group += " | (((mtlemu_warp >> " + std::to_string(warp_bits[k]) +
               ") & 1u) << " + std::to_string(k) + ")";
      axis_warp_mask |= 1u << warp_bits[k];
    }
    const std::string g = NewTemp("group");
    Line("const uint " + g + " = " + group + ";");
    // One writer per (result element, group): the canonical thread of the
    // result layout, the axis's warp bits aside.
    Layout writers = dst;
    for (size_t i = 0; i < writers.warp.size(); ++i) {
      if (axis_warp_mask & (1u << i)) writers.warp[i] = 0;  // not a copy here
    }
    const std::string canonical = Canonical(writers);
    const int64_t elements = dst.rank() == 0 ? 1 : [&] {
      int64_t e = 1;
      for (int64_t d : dst.shape) e *= d;
      return e;
    }();
    std::vector<std::string> bufs;
    int64_t offset = 0;
    for (int j = 0; j < n; ++j) {
      const int64_t bytes = elements * groups * ScratchBytes(types[j]);
      bufs.push_back(ScratchPointer(types[j], offset, bytes));
      offset += (bytes + 15) / 16 * 16;
    }
    const std::string tf = dst.rank() == 0 ? "0u" : ThreadFlat(dst);
    Line("if (" + canonical + ") {");
    for (int t = 0; t < dst.slots(); ++t) {
      const std::string e =
          "(" + tf + " + " + std::to_string(dst.SlotFlat(t)) + "u)";
      for (int j = 0; j < n; ++j) {
        std::string v = acc[t][j];
        if (types[j]->IsPointer()) v = "(ulong)(" + v + ")";
        Line("  " + bufs[j] + "[" + e + " * " + std::to_string(groups) +
             "u + " + g + "] = " + v + ";");
      }
    }
    Line("}");
    Barrier();
    for (int t = 0; t < dst.slots(); ++t) {
      const std::string e =
          "(" + tf + " + " + std::to_string(dst.SlotFlat(t)) + "u)";
      std::vector<std::string> total;
      for (int k = 0; k < groups; ++k) {
        std::vector<std::string> x;
        for (int j = 0; j < n; ++j) {
          const std::string v = NewTemp("part");
          std::string load = bufs[j] + "[" + e + " * " +
                             std::to_string(groups) + "u + " +
                             std::to_string(k) + "u]";
          if (types[j]->IsPointer() || types[j]->IsInt(1)) {
            load = "(" + type_names[j] + ")" + load;
          }
          Line(type_names[j] + " " + v + " = " + load + ";");
          x.push_back(v);
        }
        total = k == 0 ? x : combine(total, x);
      }
      acc[t] = total;
    }
    Barrier();
  }
  for (int j = 0; j < n; ++j) {
    if (scalar_result) {
      BindScalar(op.result(j), acc[0][j]);
    } else {
      Slots out(dst.slots());
      for (int t = 0; t < dst.slots(); ++t) out[t] = acc[t][j];
      Bind(op.result(j), dst, std::move(out));
    }
  }
}

// A scan as Sklansky's: at level a (each bit of the axis coordinate, low
// to high), an element whose bit a is set takes the last element of the
// lower half of its block of 2^(a+1) (already the scan of that half) as
// the left operand of the combiner; in a reverse scan, an element whose
// bit a is clear takes the first element of the upper half. Where the
// source lives decides how it is read: a register of the same thread when
// the axis bits up to a are all register bits, simd_shuffle when some are
// lane bits, threadgroup memory when some are warp bits.
void KernelLowering::EmitScan(const ir::Operation& op) {
  SetLocation(op.loc());
  const int n = op.num_operands();
  const int axis = static_cast<int>(op.int_attr("axis"));
  const bool reverse = op.bool_attr("reverse");
  const Layout l = layouts_.HomeOrBlocked(op.operand(0));
  std::vector<Slots> cur;
  for (int j = 0; j < n; ++j) cur.push_back(Get(op.operand(j), l));
  current_ = &op;
  SetLocation(op.loc());
  std::vector<const ir::Type*> types;
  std::vector<std::string> type_names;
  for (int j = 0; j < n; ++j) {
    types.push_back(op.operand(j)->type()->element());
    type_names.push_back(TypeOf(types.back()));
  }
  const int low = l.dim_low_bit(axis);
  const int bits = l.dim_bits(axis);
  const ir::Block& combiner = *op.region(0);
  // Where flat-index bit f lives: its register bit, lane bit or warp bit.
  auto find = [](const std::vector<int>& v, int f) {
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] == f) return static_cast<int>(i);
    }
    return -1;
  };
  // Threadgroup memory, for levels that cross SIMD groups.
  std::vector<std::string> bufs;
  auto scratch = [&] {
    if (!bufs.empty()) return;
    current_ = &op;  // the op that needs the memory, for messages
    const int64_t numel = op.operand(0)->type()->NumElements();
    int64_t offset = 0;
    for (int j = 0; j < n; ++j) {
      const int64_t bytes = numel * ScratchBytes(types[j]);
      bufs.push_back(ScratchPointer(types[j], offset, bytes));
      offset += (bytes + 15) / 16 * 16;
    }
  };
  auto combine = [&](const std::vector<std::string>& left,
                     const std::vector<std::string>& mine,
                     const std::string& has) {
    std::vector<std::string> args = left;
    args.insert(args.end(), mine.begin(), mine.end());
    std::vector<std::string> r = InlineRegion(combiner, args);
    std::vector<std::string> out;
    for (int j = 0; j < n; ++j) {
      const std::string v = NewTemp("scan");
      Line(type_names[j] + " " + v + " = " +
           (has.empty() ? r[j] : has + " ? " + r[j] + " : " + mine[j]) + ";");
      out.push_back(v);
    }
    return out;
  };
  for (int a = 0; a < bits; ++a) {
    // The source's axis bits 0..a: forward, bit a clear and the lower ones
    // set; reverse, bit a set and the lower ones clear.
    uint32_t lane_le = 0, lane_set = 0, warp_le = 0;
    int64_t reg_le = 0, reg_set = 0;
    for (int b = 0; b <= a; ++b) {
      const int f = low + b;
      const bool set = reverse ? b == a : b < a;
      if (int i = find(l.reg, f); i >= 0) {
        reg_le |= int64_t{1} << i;
        if (set) reg_set |= int64_t{1} << i;
      } else if (int i = find(l.lane, f); i >= 0) {
        lane_le |= 1u << i;
        if (set) lane_set |= 1u << i;
      } else if (int i = find(l.warp, f); i >= 0) {
        warp_le |= 1u << i;
      }
    }
    const int f = low + a;
    const int reg_a = find(l.reg, f), lane_a = find(l.lane, f);
    std::vector<Slots> next = cur;
    // Whether slot s's element combines at this level: "" always, "false"
    // never, else a run-time condition on the lane or warp.
    auto has_for = [&](int s) -> std::string {
      if (reg_a >= 0) {
        const bool bit = ((s >> reg_a) & 1) != 0;
        return bit != reverse ? "" : "false";
      }
      const std::string which =
          lane_a >= 0
              ? "(mtlemu_lane >> " + std::to_string(lane_a) + ")"
              : "(mtlemu_warp >> " + std::to_string(find(l.warp, f)) + ")";
      const std::string h = NewTemp("has");
      Line("const bool " + h + " = (" + which + " & 1u) " +
           (reverse ? "==" : "!=") + " 0u;");
      return h;
    };
    if (warp_le != 0) {
      // Across SIMD groups: every element through threadgroup memory.
      scratch();
      const std::string canonical = Canonical(l);
      Line("if (" + canonical + ") {");
      for (int s = 0; s < l.slots(); ++s) {
        for (int j = 0; j < n; ++j) {
          std::string v = cur[j][s];
          if (types[j]->IsPointer()) v = "(ulong)(" + v + ")";
          Line("  " + bufs[j] + "[" + FlatIndex(l, s) + "] = " + v + ";");
        }
      }
      Line("}");
      Barrier();
      const uint64_t le_mask = ((uint64_t{2} << a) - 1) << low;
      const uint64_t set_bits =
          (reverse ? uint64_t{1} << a : (uint64_t{1} << a) - 1) << low;
      for (int s = 0; s < l.slots(); ++s) {
        const std::string has = has_for(s);
        if (has == "false") continue;
        const std::string from = NewTemp("from");
        Line("const uint " + from + " = (" + FlatIndex(l, s) + " & ~" +
             std::to_string(le_mask) + "u) | " + std::to_string(set_bits) +
             "u;");
        std::vector<std::string> left, mine;
        for (int j = 0; j < n; ++j) {
          std::string e = bufs[j] + "[" + from + "]";
          if (types[j]->IsPointer() || types[j]->IsInt(1)) {
            e = "(" + type_names[j] + ")" + e;
          }
          const std::string v = NewTemp("left");
          Line(type_names[j] + " " + v + " = " + e + ";");
          left.push_back(v);
          mine.push_back(cur[j][s]);
        }
        const std::vector<std::string> r = combine(left, mine, has);
        for (int j = 0; j < n; ++j) next[j][s] = r[j];
      }
      Barrier();
    } else {
      // Within a SIMD group: the source slot, from the source lane.
      std::string src_lane;
      if (lane_le != 0) {
        src_lane = NewTemp("src_lane");
        Line("const ushort " + src_lane + " = (ushort)((mtlemu_lane & ~" +
             std::to_string(lane_le) + "u) | " + std::to_string(lane_set) +
             "u);");
      }
      for (int s = 0; s < l.slots(); ++s) {
        const std::string has = has_for(s);
        if (has == "false") continue;
        const int src_slot = static_cast<int>((s & ~reg_le) | reg_set);
        std::vector<std::string> left, mine;
        for (int j = 0; j < n; ++j) {
          std::string v = cur[j][src_slot];
          if (!src_lane.empty()) {
            const std::string t = NewTemp("left");
            Line(type_names[j] + " " + t + " = " +
                 Shuffle("simd_shuffle", v, types[j], type_names[j], src_lane) +
                 ";");
            v = t;
          }
          left.push_back(v);
          mine.push_back(cur[j][s]);
        }
        const std::vector<std::string> r = combine(left, mine, has);
        for (int j = 0; j < n; ++j) next[j][s] = r[j];
      }
    }
    cur = std::move(next);
  }
  for (int j = 0; j < n; ++j) Bind(op.result(j), l, cur[j]);
}

void KernelLowering::EmitHistogram(const ir::Operation& op) {
  SetLocation(op.loc());
  const ir::Value* x = op.operand(0);
  const Layout xl = layouts_.HomeOrBlocked(x);
  const Slots in = Get(x, xl);
  const bool masked = op.num_operands() > 1;
  const Slots mask = masked ? Get(op.operand(1), xl) : Slots();
  current_ = &op;
  SetLocation(op.loc());
  const ir::Value* r = op.result();
  const int64_t bins = r->type()->shape()[0];
  const std::string buf = ScratchPointer(ir::Type::I32(), 0, bins * 4);
  const int threads = 32 * options_.num_warps;
  Line("for (uint b = mtlemu_tid; b < " + std::to_string(bins) +
       "u; b += " + std::to_string(threads) + "u) " + buf + "[b] = 0u;");
  Barrier();
  const int bits = x->type()->element()->bits();
  Line("if (" + Canonical(xl) + ") {");
  for (int s = 0; s < xl.slots(); ++s) {
    std::string cond = "(" + SignedType(bits) + ")" + in[s] + " >= 0 && (" +
                       SignedType(bits) + ")" + in[s] + " < " +
                       std::to_string(bins);
    if (masked) cond = mask[s] + " && " + cond;
    Line("  if (" + cond +
         ") atomic_fetch_add_explicit((threadgroup atomic_uint*)&" + buf +
         "[(uint)" + in[s] + "], 1u, memory_order_relaxed);");
  }
  Line("}");
  Barrier();
  const Layout rl = layouts_.home(r);
  const std::string base = NewName(r);
  Slots out(rl.slots());
  for (int s = 0; s < rl.slots(); ++s) {
    out[s] = base + "_" + std::to_string(s);
    Line("uint " + out[s] + " = " + buf + "[" + FlatIndex(rl, s) + "];");
  }
  Barrier();
  Bind(r, rl, std::move(out));
}

void KernelLowering::EmitGather(const ir::Operation& op) {
  SetLocation(op.loc());
  const ir::Value* src = op.operand(0);
  const ir::Value* index = op.operand(1);
  const int axis = static_cast<int>(op.int_attr("axis"));
  const Layout sl = layouts_.HomeOrBlocked(src);
  const Slots s_in = Get(src, sl);
  const ir::Value* r = op.result();
  const Layout rl = layouts_.home(r);
  const Slots idx = Get(index, Reshaped(rl, index->type()->shape()));
  current_ = &op;
  SetLocation(op.loc());
  const ir::Type* t = src->type()->element();
  const std::string type = TypeOf(t);
  const std::string buf =
      ScratchPointer(t, 0, src->type()->NumElements() * ScratchBytes(t));
  Line("if (" + Canonical(sl) + ") {");
  for (int s = 0; s < sl.slots(); ++s) {
    std::string v = s_in[s];
    if (t->IsPointer()) v = "(ulong)(" + v + ")";
    Line("  " + buf + "[" + FlatIndex(sl, s) + "] = " + v + ";");
  }
  Line("}");
  Barrier();
  const std::string base = NewName(r);
  const int ibits = index->type()->element()->bits();
  Slots out(rl.slots());
  for (int s = 0; s < rl.slots(); ++s) {
    // The source element: this element's coordinates, the axis's replaced
    // by the index (wrapped into range: Triton leaves others undefined).
    std::string flat;
    for (int d = 0; d < rl.rank(); ++d) {
      const std::string c =
          d == axis ? "((uint)(" + SignedType(ibits) + ")" + idx[s] + " & " +
                          std::to_string(src->type()->shape()[d] - 1) + "u)"
                    : Coordinate(rl, s, d);
      const int low = sl.dim_low_bit(d);
      flat += (flat.empty() ? "" : " | ") +
              ("(" + c + " << " + std::to_string(low) + ")");
    }
    out[s] = base + "_" + std::to_string(s);
    std::string load = buf + "[" + flat + "]";
    if (t->IsPointer() || t->IsInt(1)) load = "(" + type + ")" + load;
    Line(type + " " + out[s] + " = " + load + ";");
  }
  Barrier();
  Bind(r, rl, std::move(out));
}

}  // namespace mtlemu::triton::lower
