// tt.dot: C += A x B on simdgroup_matrix 8x8 tiles. A, B and C live in the
// tile layouts of layout.h, so a thread's registers already hold its lanes'
// two elements of each tile it works on: the tiles are built from
// registers (thread_elements()), multiplied, and read back, with no trip
// through memory. Inputs of fp16 and bf16 are widened to the accumulator's
// type (exactly), so the products and sums are those of the accumulator's
// precision; K is summed tile by tile, in order. Integer dots (int8 ->
// int32) have no simdgroup_matrix: they sum in a loop over threadgroup
// memory.
#include "compiler/triton/lower/kernel_lowering.h"
#include "compiler/triton/lower/msl_expr.h"

namespace mtlemu::triton::lower {

void KernelLowering::EmitDot(const ir::Operation& op) {
  SetLocation(op.loc());
  const ir::Value* a = op.operand(0);
  const ir::Value* b = op.operand(1);
  const ir::Value* c = op.operand(2);
  if (a->type()->rank() != 2) {
    Fail(
        "tt.dot on 3-D (batched) tensors is not supported by the Metal "
        "lowering yet");
  }
  const ir::Type* in = a->type()->element();
  const ir::Type* acc = c->type()->element();
  if (in->IsInt()) return EmitScalarDot(op);
  const int64_t m = a->type()->shape()[0], k = a->type()->shape()[1];
  const int64_t n = b->type()->shape()[1];
  const int w = options_.num_warps;
  const Layout la = DotOperandA(m, k, n, w);
  const Layout lb = DotOperandB(k, n, m, w);
  const Layout lc = layouts_.home(op.result());
  const Slots av = Get(a, la);
  const Slots bv = Get(b, lb);
  const Slots cv = Get(c, lc);
  current_ = &op;
  SetLocation(op.loc());
  const std::string acc_type = TypeOf(acc);
  if (acc_type != "float" && acc_type != "half") {
    Fail("tt.dot accumulating in " + acc->ToString() +
         ": simdgroup_matrix accumulates in float or half");
  }
  const std::string matrix = "simdgroup_" + acc_type + "8x8";
  auto widen = [&](const std::string& x) {
    return TypeOf(in) == acc_type ? x : "(" + acc_type + ")" + x;
  };
  const int64_t tm = m / 8, tn = n / 8, tk = k / 8;
  // The tiles of A and B this thread's SIMD group holds.
  std::map<std::pair<int64_t, int64_t>, std::string> a_tiles, b_tiles;
  auto tile = [&](const Layout& l, const Slots& v, int64_t r, int64_t col,
                  std::map<std::pair<int64_t, int64_t>, std::string>& cache,
                  const char* base) -> std::string {
    auto it = cache.find({r, col});
    if (it != cache.end()) return it->second;
    const int s0 = DotTileSlot(l, r, col, 0), s1 = DotTileSlot(l, r, col, 1);
    if (s0 < 0 || s1 < 0) Fail("internal error: dot operand tile mapping");
    const std::string name = NewTemp(base);
    Line(matrix + " " + name + ";");
    Line(name + ".thread_elements()[0] = " + widen(v[s0]) + ";");
    Line(name + ".thread_elements()[1] = " + widen(v[s1]) + ";");
    cache[{r, col}] = name;
    return name;
  };
  const std::string base = NewName(op.result());
  Slots out(lc.slots());
  for (int64_t i = 0; i < tm; ++i) {
    for (int64_t j = 0; j < tn; ++j) {
      const int c0 = DotTileSlot(lc, i, j, 0), c1 = DotTileSlot(lc, i, j, 1);
      if (c0 < 0) continue;  // another SIMD group's tile
      const std::string ct = NewTemp("c_tile");
      Line(matrix + " " + ct + ";");
      Line(ct + ".thread_elements()[0] = " + cv[c0] + ";");
      Line(ct + ".thread_elements()[1] = " + cv[c1] + ";");
      for (int64_t kk = 0; kk < tk; ++kk) {
        const std::string at = tile(la, av, i, kk, a_tiles, "a_tile");
        const std::string bt = tile(lb, bv, kk, j, b_tiles, "b_tile");
        Line("simdgroup_multiply_accumulate(" + ct + ", " + at + ", " + bt +
             ", " + ct + ");");
      }
      for (int e = 0; e < 2; ++e) {
        const int s = e == 0 ? c0 : c1;
        out[s] = base + "_" + std::to_string(s);
        Line(acc_type + " " + out[s] + " = " + ct + ".thread_elements()[" +
             std::to_string(e) + "];");
      }
    }
  }
  Bind(op.result(), lc, std::move(out));
}

void KernelLowering::EmitScalarDot(const ir::Operation& op) {
  const ir::Value* a = op.operand(0);
  const ir::Value* b = op.operand(1);
  const ir::Value* c = op.operand(2);
  const int64_t m = a->type()->shape()[0], k = a->type()->shape()[1];
  const int64_t n = b->type()->shape()[1];
  const Layout la = layouts_.HomeOrBlocked(a);
  const Layout lb = layouts_.HomeOrBlocked(b);
  const Layout lc = layouts_.home(op.result());
  const Slots av = Get(a, la), bv = Get(b, lb), cv = Get(c, lc);
  current_ = &op;
  SetLocation(op.loc());
  const ir::Type* in = a->type()->element();
  const int bits = in->bits();
  // A and B as int32 in threadgroup memory, row-major.
  const std::string abuf = ScratchPointer(ir::Type::I32(), 0, m * k * 4);
  const int64_t b_offset = (m * k * 4 + 15) / 16 * 16;
  const std::string bbuf = ScratchPointer(ir::Type::I32(), b_offset, k * n * 4);
  auto store = [&](const Layout& l, const Slots& v, const std::string& buf) {
    Line("if (" + Canonical(l) + ") {");
    for (int s = 0; s < l.slots(); ++s) {
      Line("  " + buf + "[" + FlatIndex(l, s) + "] = (uint)(int)(" +
           SignedType(bits) + ")" + v[s] + ";");
    }
    Line("}");
  };
  store(la, av, abuf);
  store(lb, bv, bbuf);
  Barrier();
  const std::string base = NewName(op.result());
  Slots out(lc.slots());
  for (int s = 0; s < lc.slots(); ++s) {
    const std::string row = Coordinate(lc, s, 0), col = Coordinate(lc, s, 1);
    out[s] = base + "_" + std::to_string(s);
    Line("uint " + out[s] + " = " + cv[s] + ";");
    Line("for (uint kk = 0u; kk < " + std::to_string(k) + "u; ++kk) " + out[s] +
         " += " + abuf + "[" + row + " * " + std::to_string(k) + "u + kk] * " +
         bbuf + "[kk * " + std::to_string(n) + "u + " + col + "];");
  }
  Barrier();
  Bind(op.result(), lc, std::move(out));
}

}  // namespace mtlemu::triton::lower
