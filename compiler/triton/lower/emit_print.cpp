// tt.print: each element is appended to the print log (print_log.h) by the
// thread that holds it canonically; the host formats the lines.
#include "compiler/triton/lower/kernel_lowering.h"
#include "compiler/triton/lower/print_log.h"

namespace mtlemu::triton::lower {
namespace {

// How the host reads an operand of element type `t`.
PrintOperand OperandFormat(const ir::Type* t, bool is_signed) {
  PrintOperand o;
  if (t->IsFloat()) {
    switch (t->float_format()) {
      case ir::FloatFormat::kF16:
        o.kind = PrintOperand::Kind::kFloat16;
        break;
      case ir::FloatFormat::kBF16:
        o.kind = PrintOperand::Kind::kBFloat16;
        break;
      default:
        o.kind = PrintOperand::Kind::kFloat32;
        break;
    }
    o.bits = t->bits();
    return o;
  }
  // Integers by their signedness; pointers as 64-bit addresses.
  o.kind = is_signed && t->IsInt() ? PrintOperand::Kind::kSigned
                                   : PrintOperand::Kind::kUnsigned;
  o.bits = t->IsPointer() ? 64 : t->bits();
  return o;
}

// The low and high words of a value of scalar type `t` (MSL keeps integers
// in unsigned types; the host extends from the width).
std::pair<std::string, std::string> Words(const std::string& x,
                                          const ir::Type* t) {
  if (t->IsPointer()) {
    return {"(uint)(ulong)" + x, "(uint)((ulong)" + x + " >> 32)"};
  }
  if (t->IsFloat()) {
    if (t->bits() == 16) return {"(uint)as_type<ushort>(" + x + ")", "0u"};
    return {"as_type<uint>(" + x + ")", "0u"};
  }
  if (t->bits() == 64) return {"(uint)" + x, "(uint)(" + x + " >> 32)"};
  return {"(uint)" + x, "0u"};
}

}  // namespace

const char* PrintLogHelper() {
  return "static inline void mtlemu_print_record(device uint* log, uint at, "
         "uint tag,\n"
         "                                       uint3 pid, uint seq, uint "
         "index,\n"
         "                                       uint lo, uint hi) {\n"
         "  if (at >= log[1]) return;  // the log is full\n"
         "  device uint* r = log + 4u + 8u * at;\n"
         "  r[0] = tag; r[1] = pid.x; r[2] = pid.y; r[3] = pid.z;\n"
         "  r[4] = seq; r[5] = index; r[6] = lo; r[7] = hi;\n"
         "}\n";
}

void KernelLowering::EmitPrint(const ir::Operation& op) {
  current_ = &op;
  SetLocation(op.loc());
  const size_t site_index = print_sites_.size();
  if (site_index > 0xffff || op.num_operands() > 0xffff) {
    Fail("too many tl.device_print calls in one kernel");
  }
  PrintSite site;
  site.prefix = op.string_attr("prefix");
  site.hex = op.bool_attr("hex");
  const std::vector<int64_t> is_signed = op.array_attr("isSigned");
  Line("// tl.device_print: into the print log (see the host's output)");
  for (int k = 0; k < op.num_operands(); ++k) {
    const ir::Value* v = op.operand(k);
    const ir::Type* t = v->type()->ScalarType();
    PrintOperand format = OperandFormat(
        t, k < static_cast<int>(is_signed.size()) && is_signed[k] != 0);
    std::string cond;
    std::vector<std::pair<std::string, std::string>> elements;  // index, value
    if (v->type()->IsTensor()) {
      format.shape = v->type()->shape();
      const Layout l = layouts_.HomeOrBlocked(v);
      const Slots& slots = Get(v, l);
      cond = Canonical(l);
      for (int s = 0; s < static_cast<int>(slots.size()); ++s) {
        elements.emplace_back(FlatIndex(l, s), slots[s]);
      }
    } else {
      cond = "mtlemu_tid == 0u";
      elements.emplace_back("0u", Scalar(v));
    }
    const std::string tag =
        std::to_string(site_index | (static_cast<size_t>(k) << 16)) + "u";
    const std::string at = NewTemp("print_at");
    Line("if (" + cond + ") {");
    ++indent_;
    Line(
        "const uint " + at +
        " = atomic_fetch_add_explicit((device atomic_uint*)mtlemu_print_log, " +
        std::to_string(elements.size()) + "u, memory_order_relaxed);");
    for (size_t e = 0; e < elements.size(); ++e) {
      const auto [lo, hi] = Words(elements[e].second, t);
      Line("mtlemu_print_record(mtlemu_print_log, " + at + " + " +
           std::to_string(e) + "u, " + tag + ", mtlemu_program, " +
           "mtlemu_print_seq, " + elements[e].first + ", " + lo + ", " + hi +
           ");");
    }
    --indent_;
    Line("}");
    site.operands.push_back(std::move(format));
  }
  Line("mtlemu_print_seq += 1u;");
  print_sites_.push_back(std::move(site));
}

}  // namespace mtlemu::triton::lower
