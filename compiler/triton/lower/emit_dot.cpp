// tt.dot: C += A x B on simdgroup_matrix 8x8 tiles (dims that are not
// multiples of 8 take the element-by-element path below). A, B and C live in
// the tile layouts of layout.h, so a thread's registers already hold its lanes'
// two elements of each tile it works on: the tiles are built from
// registers (thread_elements()), multiplied, and read back, with no trip
// through memory. Inputs of fp16 and bf16 are widened to the accumulator's
// type (exactly), so the products and sums are those of the accumulator's
// precision; K is summed tile by tile, in order. Integer dots (int8 ->
// int32) and batched (3-D) dots have no simdgroup_matrix here: each output
// element sums its row and column in order, in the accumulator's type,
// from A and B staged in threadgroup memory.
#include "compiler/triton/lower/kernel_lowering.h"
#include "compiler/triton/lower/msl_expr.h"

namespace mtlemu::triton::lower {

void KernelLowering::EmitDot(const ir::Operation& op) {
  SetLocation(op.loc());
  const ir::Value* a = op.operand(0);
  const ir::Value* b = op.operand(1);
  const ir::Value* c = op.operand(2);
  const ir::Type* in = a->type()->element();
  const ir::Type* acc = c->type()->element();
  if (in->IsInt() || a->type()->rank() != 2) return EmitScalarDot(op);
  const int64_t m = a->type()->shape()[0], k = a->type()->shape()[1];
  const int64_t n = b->type()->shape()[1];
  if (!IsTiledDot(m, k, n)) return EmitScalarDot(op);
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
  const int rank = a->type()->rank();
  const int64_t batches = rank == 3 ? a->type()->shape()[0] : 1;
  const int64_t m = a->type()->shape()[rank - 2];
  const int64_t k = a->type()->shape()[rank - 1];
  const int64_t n = b->type()->shape()[rank - 1];
  const Layout la = layouts_.HomeOrBlocked(a);
  const Layout lb = layouts_.HomeOrBlocked(b);
  const Layout lc = layouts_.home(op.result());
  const Slots av = Get(a, la), bv = Get(b, lb), cv = Get(c, lc);
  current_ = &op;
  SetLocation(op.loc());
  const ir::Type* in = a->type()->element();
  const ir::Type* acc = c->type()->element();
  const std::string acc_type = TypeOf(acc);
  // A 16-bit float accumulator sums in float and rounds once at the end,
  // as a GPU's matrix unit rounds its float sum of products once per
  // instruction, not once per product.
  const bool narrow = acc->IsFloat() && acc->bits() == 16;
  const std::string sum_type = narrow ? "float" : acc_type;
  // An element of A or B as the sum's type: int8 sign-extended into the
  // 32-bit (unsigned, wrapping) sum, floats widened exactly.
  auto widen = [&](const std::string& e) {
    if (in->IsInt()) {
      return "(" + sum_type + ")(int)(" + SignedType(in->bits()) + ")" + e;
    }
    return "(" + sum_type + ")" + e;
  };
  // A and B in threadgroup memory in their own type, row-major: all
  // batches at once when they fit in half of Metal's 32 KB, else a batch
  // at a time.
  const int64_t elem = in->bits() / 8;
  const int64_t a_bytes = m * k * elem, b_bytes = k * n * elem;
  const bool by_batch = rank == 3 && batches * (a_bytes + b_bytes) > 16 * 1024;
  const int64_t per_stage = by_batch ? 1 : batches;
  const std::string abuf = ScratchPointer(in, 0, per_stage * a_bytes);
  const int64_t b_offset = (per_stage * a_bytes + 15) / 16 * 16;
  const std::string bbuf = ScratchPointer(in, b_offset, per_stage * b_bytes);
  const std::string base = NewName(op.result());
  Slots sums(lc.slots());
  for (int s = 0; s < lc.slots(); ++s) {
    sums[s] = base + (narrow ? "_sum_" : "_") + std::to_string(s);
    Line(sum_type + " " + sums[s] + " = " +
         (narrow ? "(float)" + cv[s] : cv[s]) + ";");
  }
  const std::string ks = std::to_string(k) + "u", ns = std::to_string(n) + "u";
  for (int64_t stage = 0; stage < batches / per_stage; ++stage) {
    // In this stage: the slots of batch `stage` (by_batch) or all.
    auto in_stage = [&](const Layout& l, int s) -> std::string {
      if (!by_batch) return "";
      return "if (" + Coordinate(l, s, 0) + " == " + std::to_string(stage) +
             "u) ";
    };
    auto store = [&](const Layout& l, const Slots& v, const std::string& buf,
                     int64_t batch_elems) {
      Line("if (" + Canonical(l) + ") {");
      for (int s = 0; s < l.slots(); ++s) {
        std::string index = FlatIndex(l, s);
        if (by_batch) {
          index += " - " + std::to_string(stage * batch_elems) + "u";
        }
        Line("  " + in_stage(l, s) + buf + "[" + index + "] = " + v[s] + ";");
      }
      Line("}");
    };
    store(la, av, abuf, m * k);
    store(lb, bv, bbuf, k * n);
    Barrier();
    for (int s = 0; s < lc.slots(); ++s) {
      const std::string row = Coordinate(lc, s, rank - 2);
      const std::string col = Coordinate(lc, s, rank - 1);
      std::string a_row = row + " * " + ks, b_col = col;
      if (rank == 3 && !by_batch) {
        const std::string bat = Coordinate(lc, s, 0);
        a_row =
            "(" + bat + " * " + std::to_string(m) + "u + " + row + ") * " + ks;
        b_col = bat + " * " + std::to_string(k * n) + "u + " + col;
      }
      Line(in_stage(lc, s) + "for (uint kk = 0u; kk < " + ks + "; ++kk) " +
           sums[s] + " += " + widen(abuf + "[" + a_row + " + kk]") + " * " +
           widen(bbuf + "[kk * " + ns + " + " + b_col + "]") + ";");
    }
    Barrier();
  }
  Slots out = sums;
  if (narrow) {
    for (int s = 0; s < lc.slots(); ++s) {
      out[s] = base + "_" + std::to_string(s);
      Line(acc_type + " " + out[s] + " = (" + acc_type + ")" + sums[s] + ";");
    }
  }
  Bind(op.result(), lc, std::move(out));
}

}  // namespace mtlemu::triton::lower
