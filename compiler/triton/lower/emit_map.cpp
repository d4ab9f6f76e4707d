// tt.map_elementwise: its region (a jit function of scalars) written out
// once per group of `pack` elements a thread holds, on the elements' own
// values; the results are the region's terminator operands, element by
// element.
#include "compiler/triton/lower/kernel_lowering.h"

namespace mtlemu::triton::lower {

void KernelLowering::EmitMapElementwise(const ir::Operation& op) {
  SetLocation(op.loc());
  const Layout l = layouts_.home(op.result(0));
  std::vector<Slots> in;
  for (const ir::Value* v : op.operands()) in.push_back(Get(v, l));
  current_ = &op;
  SetLocation(op.loc());
  const int pack = static_cast<int>(op.int_attr("pack"));
  const int results = op.num_results();
  std::vector<Slots> out(results, Slots(l.slots()));
  for (int first = 0; first < l.slots(); first += pack) {
    // The group's elements; a thread holding fewer than `pack` repeats its
    // last one and keeps the results of the real ones.
    std::vector<std::string> args;
    for (const Slots& operand : in) {
      for (int j = 0; j < pack; ++j) {
        args.push_back(operand[std::min(first + j, l.slots() - 1)]);
      }
    }
    const std::vector<std::string> r = InlineRegion(*op.region(0), args);
    for (int k = 0; k < results; ++k) {
      const std::string type = TypeOf(op.result(k)->type()->element());
      for (int j = 0; j < pack && first + j < l.slots(); ++j) {
        const std::string v = NewTemp("mapped");
        Line(type + " " + v + " = " + r[k * pack + j] + ";");
        out[k][first + j] = v;
      }
    }
  }
  for (int k = 0; k < results; ++k) Bind(op.result(k), l, std::move(out[k]));
}

}  // namespace mtlemu::triton::lower
