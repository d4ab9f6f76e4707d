// Memory: tt.load and tt.store on tensors of pointers and on scalars,
// atomics, block pointers (tt.make_tensor_ptr, tt.advance) and tensor
// descriptors. A masked-off element is never touched; a store, and an
// atomic, is done once per element, by its canonical thread.
#include <cmath>

#include "compiler/triton/lower/kernel_lowering.h"
#include "compiler/triton/lower/msl_expr.h"

namespace mtlemu::triton::lower {
namespace {

using ir::OpCode;

bool IsTensor(const ir::Value* v) { return v->type()->IsTensor(); }

std::string Zero(const ir::Type* t) {
  if (t->IsFloat()) return FloatLiteral(0, t);
  if (t->IsPointer()) return "nullptr";
  return IntLiteral(0, t);
}

// The padding value of a block-pointer or descriptor load.
std::string Padding(const ir::Operation& op, const ir::Type* t) {
  std::string p;
  if (const ir::Attribute* a = op.attr("padding")) {
    if (const auto* s = std::get_if<std::string>(a)) p = *s;
    if (const auto* i = std::get_if<ir::IntAttr>(a))
      p = i->value == 2 ? "nan" : "zero";
  }
  if (p == "nan" && t->IsFloat()) return FloatLiteral(NAN, t);
  return Zero(t);
}

}  // namespace

void KernelLowering::EmitLoad(const ir::Operation& op) {
  SetLocation(op.loc());
  const ir::Value* r = op.result();
  const ir::Type* t = r->type()->ScalarType();
  const std::string type = TypeOf(t);
  const bool masked = op.num_operands() > 1;
  const bool other = op.num_operands() > 2;
  if (!IsTensor(r)) {
    const std::string p = Scalar(op.operand(0));
    const std::string name = NewName(r);
    if (!masked) {
      Line(type + " " + name + " = *" + p + ";");
    } else {
      Line(type + " " + name + " = " +
           (other ? Scalar(op.operand(2)) : Zero(t)) + ";");
      Line("if (" + Scalar(op.operand(1)) + ") " + name + " = *" + p + ";");
    }
    BindScalar(r, name);
    return;
  }
  const Layout l = layouts_.home(r);
  const Slots p = Get(op.operand(0), l);
  const Slots m = masked ? Get(op.operand(1), l) : Slots();
  const Slots o = other ? Get(op.operand(2), l) : Slots();
  current_ = &op;
  SetLocation(op.loc());
  const std::string base = NewName(r);
  Slots out(l.slots());
  Joined joined(*this);
  for (int s = 0; s < l.slots(); ++s) {
    const std::string name = base + "_" + std::to_string(s);
    if (!masked) {
      Line(type + " " + name + " = *" + p[s] + ";");
    } else {
      Line(type + " " + name + " = " + (other ? o[s] : Zero(t)) + ";");
      Line("if (" + m[s] + ") " + name + " = *" + p[s] + ";");
    }
    out[s] = name;
  }
  Bind(r, l, std::move(out));
}

void KernelLowering::EmitStore(const ir::Operation& op) {
  SetLocation(op.loc());
  const bool masked = op.num_operands() > 2;
  if (!IsTensor(op.operand(0))) {
    OrderStoreAfterLoads();
    std::string guard = "mtlemu_tid == 0u";
    if (masked) guard += " && " + Scalar(op.operand(2));
    Line("if (" + guard + ") *" + Scalar(op.operand(0)) + " = " +
         Scalar(op.operand(1)) + ";");
    return;
  }
  const Layout l = layouts_.StoreLayout(op);
  const Slots p = Get(op.operand(0), l);
  const Slots v = Get(op.operand(1), l);
  const Slots m = masked ? Get(op.operand(2), l) : Slots();
  current_ = &op;
  SetLocation(op.loc());
  const std::string canonical = Canonical(l);
  const bool guarded = canonical != "true";
  if (guarded) {
    OrderStoreAfterLoads();
    Line("if (" + canonical + ") {");
    ++indent_;
  }
  {
    Joined joined(*this);
    for (int s = 0; s < l.slots(); ++s) {
      if (masked) {
        Line("if (" + m[s] + ") *" + p[s] + " = " + v[s] + ";");
      } else {
        Line("*" + p[s] + " = " + v[s] + ";");
      }
    }
  }
  if (guarded) {
    --indent_;
    Line("}");
  }
}

namespace {

// Metal's atomic functions take memory_order_relaxed only; Triton's `sem`
// is given by device fences around the atomic (the emulator's atomics are
// sequentially consistent in any case). `scope` cta is the threadgroup,
// gpu and sys the device (Metal has no wider scope).
std::string Fence(const ir::Operation& op) {
  const std::string scope = op.string_attr("scope") == "cta"
                                ? "thread_scope_threadgroup"
                                : "thread_scope_device";
  return "atomic_thread_fence(mem_flags::mem_device, memory_order_seq_cst, " +
         scope + ");";
}

// The new value of a read-modify-write `kind` from the old value `o` and
// operand `v`, both of MSL type `type` (Triton's ints are unsigned MSL
// types; `sig` is the signed type of the same width).
std::string RmwValue(const std::string& kind, const std::string& type,
                     const std::string& sig, const std::string& o,
                     const std::string& v, bool is_float) {
  if (kind == "exch") return v;
  if (kind == "fadd" || (kind == "add" && is_float)) {
    return type + "(float(" + o + ") + float(" + v + "))";
  }
  if (kind == "add") return type + "(" + o + " + " + v + ")";
  if (kind == "and") return type + "(" + o + " & " + v + ")";
  if (kind == "or") return type + "(" + o + " | " + v + ")";
  if (kind == "xor") return type + "(" + o + " ^ " + v + ")";
  if (is_float && (kind == "max" || kind == "min")) {
    // Triton's order (a signed integer max where the operand's sign bit is
    // clear, an unsigned min where it is set): the bits ordered as
    // -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN.
    const bool wide = type == "float";
    const std::string u = wide ? "uint" : "ushort";
    const std::string sign = wide ? "0x80000000u" : "0x8000u";
    const auto key = [&](const std::string& x) {
      const std::string b = "as_type<" + u + ">(" + x + ")";
      return "((" + b + " & " + sign + ") != 0u ? (" + u + ")~" + b + " : (" +
             u + ")(" + b + " | " + sign + "))";
    };
    return "(" + key(v) + (kind == "max" ? " > " : " < ") + key(o) + " ? " + v +
           " : " + o + ")";
  }
  if (kind == "max")
    return type + "(max((" + sig + ")" + o + ", (" + sig + ")" + v + "))";
  if (kind == "min")
    return type + "(min((" + sig + ")" + o + ", (" + sig + ")" + v + "))";
  if (kind == "umax") return type + "(max(" + o + ", " + v + "))";
  if (kind == "umin") return type + "(min(" + o + ", " + v + "))";
  return "";
}

}  // namespace

std::string KernelLowering::AtomicExpr(const ir::Operation& op,
                                       const std::string& ptr,
                                       const std::string& val,
                                       const std::string& cmp) {
  const ir::Type* t = op.result()->type()->ScalarType();
  const std::string type = TypeOf(t);
  const bool cas = op.code() == OpCode::kAtomicCAS;
  const std::string kind = cas ? "cas" : op.string_attr("atomic_rmw_op");
  const std::string sem = op.string_attr("sem");
  const bool acquire = sem != "relaxed" && sem != "release";
  const bool release = sem != "relaxed" && sem != "acquire";
  const std::string relaxed = "memory_order_relaxed";
  const int bits = t->bits();
  const bool is_float = t->IsFloat();
  if (bits != 16 && bits != 32 && bits != 64) {
    Fail("tt.atomic on " + t->ToString() +
         ": atomics take 16-, 32- and 64-bit elements");
  }
  if (!cas && RmwValue(kind, type, "int", "o", "v", is_float).empty()) {
    Fail("unknown atomic_rmw_op '" + kind + "' on " + t->ToString());
  }
  if (is_float && (kind == "and" || kind == "or" || kind == "xor" ||
                   kind == "umax" || kind == "umin")) {
    Fail("tt.atomic_rmw " + kind + " on " + t->ToString() +
         ": a bitwise or unsigned operation on a float");
  }
  const std::string result = NewTemp("old");
  Line(type + " " + result + ";");
  if (release) Line(Fence(op));
  if (bits == 16) {
    // No 16-bit atomics: a compare-exchange loop on the aligned 32-bit word
    // that holds the element, replacing only its half.
    const std::string w = NewTemp("word"), sh = NewTemp("shift"),
                      o = NewTemp("seen"), h = NewTemp("half");
    const std::string bits_of = is_float ? "as_type<ushort>" : "ushort";
    Line("{");
    ++indent_;
    Line("device atomic_uint* " + w + " = (device atomic_uint*)((ulong)(" +
         ptr + ") & ~3ul);");
    Line("const uint " + sh + " = uint((ulong)(" + ptr + ") & 2ul) * 8u;");
    Line("uint " + o + " = atomic_load_explicit(" + w + ", " + relaxed + ");");
    Line("while (true) {");
    ++indent_;
    const std::string cur =
        is_float ? "as_type<" + type + ">((ushort)(" + o + " >> " + sh + "))"
                 : "(" + type + ")(" + o + " >> " + sh + ")";
    Line("const " + type + " " + h + " = " + cur + ";");
    std::string next;
    if (cas) {
      Line("if (" + bits_of + "(" + h + ") != " + bits_of + "((" + type + ")(" +
           cmp + "))) break;");
      next = "(" + type + ")(" + val + ")";
    } else {
      next = RmwValue(kind, type, "short", h, "(" + type + ")(" + val + ")",
                      is_float);
    }
    const std::string n = NewTemp("desired");
    Line("const uint " + n + " = (" + o + " & ~(0xffffu << " + sh +
         ")) | (uint(" + bits_of + "((" + type + ")(" + next + "))) << " + sh +
         ");");
    Line("if (atomic_compare_exchange_weak_explicit(" + w + ", &" + o + ", " +
         n + ", " + relaxed + ", " + relaxed + ")) break;");
    --indent_;
    Line("}");
    Line(result + " = " + cur + ";");
    --indent_;
    Line("}");
  } else if (cas) {
    // Compare-and-swap on the bits. Metal's compare-exchange is weak: retry
    // while it failed spuriously.
    const std::string word = bits == 64 ? "ulong" : "uint";
    const std::string bits_of = is_float ? "as_type<uint>(" : "(" + word + ")(";
    const std::string e = NewTemp("expected");
    Line(word + " " + e + " = " + bits_of + cmp + ");");
    Line("while (!atomic_compare_exchange_weak_explicit((device atomic_" +
         word + "*)" + ptr + ", &" + e + ", " + bits_of + val + "), " +
         relaxed + ", " + relaxed + ") && " + e + " == " + bits_of + cmp +
         ")) {}");
    Line(result + " = " + (is_float ? "as_type<float>(" + e + ")" : e) + ";");
  } else if (is_float && (kind == "fadd" || kind == "exch")) {
    // Metal's atomic_float: add and exchange.
    const std::string f = kind == "fadd" ? "atomic_fetch_add_explicit"
                                         : "atomic_exchange_explicit";
    Line(result + " = " + f + "((device atomic_float*)" + ptr + ", " + val +
         ", " + relaxed + ");");
  } else if (is_float) {
    // float max and min: a compare-exchange loop on the bits.
    const std::string o = NewTemp("seen"), n = NewTemp("desired");
    const std::string w = "(device atomic_uint*)" + ptr;
    Line("{");
    ++indent_;
    Line("uint " + o + " = atomic_load_explicit(" + w + ", " + relaxed + ");");
    Line("while (true) {");
    ++indent_;
    Line("const uint " + n + " = as_type<uint>((float)(" +
         RmwValue(kind, type, "int", "as_type<float>(" + o + ")",
                  "(float)(" + val + ")", true) +
         "));");
    Line("if (" + n + " == " + o +
         " || atomic_compare_exchange_weak_explicit(" + w + ", &" + o + ", " +
         n + ", " + relaxed + ", " + relaxed + ")) break;");
    --indent_;
    Line("}");
    Line(result + " = as_type<float>(" + o + ");");
    --indent_;
    Line("}");
  } else {
    // Integers (Triton's are unsigned MSL types): signed min and max on the
    // signed atomic type.
    const bool is_signed = kind == "max" || kind == "min";
    const std::string word = bits == 64 ? (is_signed ? "long" : "ulong")
                                        : (is_signed ? "int" : "uint");
    std::string f;
    if (kind == "add")
      f = "atomic_fetch_add_explicit";
    else if (kind == "and")
      f = "atomic_fetch_and_explicit";
    else if (kind == "or")
      f = "atomic_fetch_or_explicit";
    else if (kind == "xor")
      f = "atomic_fetch_xor_explicit";
    else if (kind == "max" || kind == "umax")
      f = "atomic_fetch_max_explicit";
    else if (kind == "min" || kind == "umin")
      f = "atomic_fetch_min_explicit";
    else
      f = "atomic_exchange_explicit";
    Line(result + " = (" + type + ")" + f + "((device atomic_" + word + "*)" +
         ptr + ", (" + word + ")(" + val + "), " + relaxed + ");");
  }
  if (acquire) Line(Fence(op));
  return result;
}

void KernelLowering::EmitAtomic(const ir::Operation& op) {
  SetLocation(op.loc());
  const bool cas = op.code() == OpCode::kAtomicCAS;
  const ir::Value* r = op.result();
  const ir::Type* t = r->type()->ScalarType();
  const std::string type = TypeOf(t);
  const bool used = layouts_.uses(r) > 0;
  if (!IsTensor(r)) {
    // One thread does it; the others learn the old value if it is used.
    const std::string name = NewName(r);
    Line(type + " " + name + " = " + Zero(t) + ";");
    std::string guard = "mtlemu_tid == 0u";
    if (!cas && op.num_operands() > 2) guard += " && " + Scalar(op.operand(2));
    Line("if (" + guard + ") {");
    ++indent_;
    const std::string e =
        cas ? AtomicExpr(op, Scalar(op.operand(0)), Scalar(op.operand(2)),
                         Scalar(op.operand(1)))
            : AtomicExpr(op, Scalar(op.operand(0)), Scalar(op.operand(1)), "");
    Line(name + " = " + e + ";");
    --indent_;
    Line("}");
    if (used) {
      const std::string buf = ScratchPointer(t, 0, 8);
      Line("if (mtlemu_tid == 0u) " + buf + "[0] = " + name + ";");
      Barrier();
      Line(name + " = " + buf + "[0];");
      Barrier();
    }
    BindScalar(r, name);
    return;
  }
  const Layout l = layouts_.home(r);
  const Slots p = Get(op.operand(0), l);
  const Slots a = Get(op.operand(1), l);
  const Slots b = Get(op.operand(2), l);
  current_ = &op;
  SetLocation(op.loc());
  const std::string canonical = Canonical(l);
  const std::string base = NewName(r);
  Slots out(l.slots());
  for (int s = 0; s < l.slots(); ++s) {
    const std::string name = base + "_" + std::to_string(s);
    Line(type + " " + name + " = " + Zero(t) + ";");
    const std::string guard = cas ? canonical : canonical + " && " + b[s];
    Line("if (" + guard + ") {");
    ++indent_;
    const std::string e =
        cas ? AtomicExpr(op, p[s], b[s], a[s]) : AtomicExpr(op, p[s], a[s], "");
    Line(name + " = " + e + ";");
    --indent_;
    Line("}");
    out[s] = name;
  }
  if (used && l.replicated()) {
    // Copies of an element learn its old value from its canonical thread.
    const int64_t bytes = r->type()->NumElements() * 8;
    const std::string buf = ScratchPointer(t, 0, bytes);
    Line("if (" + canonical + ") {");
    for (int s = 0; s < l.slots(); ++s) {
      Line("  " + buf + "[" + FlatIndex(l, s) + "] = " + out[s] + ";");
    }
    Line("}");
    Barrier();
    for (int s = 0; s < l.slots(); ++s) {
      Line(out[s] + " = " + buf + "[" + FlatIndex(l, s) + "];");
    }
    Barrier();
  }
  Bind(r, l, std::move(out));
}

// --- block pointers
// ------------------------------------------------------------------

void KernelLowering::EmitBlockPointer(const ir::Operation& op) {
  SetLocation(op.loc());
  const ir::Value* r = op.result();
  const std::string type = TypeOf(r->type());
  const std::string name = NewName(r);
  if (op.code() == OpCode::kMakeTensorPtr) {
    const int rank = r->type()->pointee()->rank();
    Line(type + " " + name + ";");
    Line(name + ".base = " + Scalar(op.operand(0)) + ";");
    for (int d = 0; d < rank; ++d) {
      const std::string i = "[" + std::to_string(d) + "]";
      Line(name + ".shape" + i + " = (long)" + Scalar(op.operand(1 + d)) + ";");
      Line(name + ".strides" + i + " = (long)" +
           Scalar(op.operand(1 + rank + d)) + ";");
      Line(name + ".offsets" + i + " = (int)" +
           Scalar(op.operand(1 + 2 * rank + d)) + ";");
    }
  } else {
    Line(type + " " + name + " = " + Scalar(op.operand(0)) + ";");
    for (int d = 1; d < op.num_operands(); ++d) {
      Line(name + ".offsets[" + std::to_string(d - 1) + "] += (int)" +
           Scalar(op.operand(d)) + ";");
    }
  }
  BindScalar(r, name);
}

void KernelLowering::EmitBlockLoad(const ir::Operation& op) {
  SetLocation(op.loc());
  const ir::Value* r = op.result();
  const Layout l = layouts_.home(r);
  const std::string bp = Scalar(op.operand(0));
  std::vector<bool> check(l.rank(), false);
  for (int64_t d : op.array_attr("boundaryCheck")) check[d] = true;
  const ir::Type* t = r->type()->element();
  const std::string type = TypeOf(t);
  const std::string pad = Padding(op, t);
  const std::string base = NewName(r);
  Slots out(l.slots());
  for (int s = 0; s < l.slots(); ++s) {
    const auto [addr, ok] = BlockElement(bp, l, s, check);
    const std::string name = base + "_" + std::to_string(s);
    if (ok.empty()) {
      Line(type + " " + name + " = *(" + addr + ");");
    } else {
      Line(type + " " + name + " = " + pad + ";");
      Line("if (" + ok + ") " + name + " = *(" + addr + ");");
    }
    out[s] = name;
  }
  Bind(r, l, std::move(out));
}

std::pair<std::string, std::string> KernelLowering::BlockElement(
    const std::string& bp, const Layout& l, int slot,
    const std::vector<bool>& check) {
  std::string addr = bp + ".base", ok;
  for (int d = 0; d < l.rank(); ++d) {
    const std::string c = NewTemp("c");
    Line("const int " + c + " = " + bp + ".offsets[" + std::to_string(d) +
         "] + (int)" + Coordinate(l, slot, d) + ";");
    addr +=
        " + (long)" + c + " * " + bp + ".strides[" + std::to_string(d) + "]";
    if (check[d]) {
      ok += (ok.empty() ? "" : " && ") + c + " >= 0 && (long)" + c + " < " +
            bp + ".shape[" + std::to_string(d) + "]";
    }
  }
  return {addr, ok};
}

void KernelLowering::EmitBlockStore(const ir::Operation& op) {
  SetLocation(op.loc());
  const ir::Value* value = op.operand(1);
  const Layout l = layouts_.StoreLayout(op);
  const Slots v = Get(value, l);
  current_ = &op;
  const std::string bp = Scalar(op.operand(0));
  std::vector<bool> check(l.rank(), false);
  for (int64_t d : op.array_attr("boundaryCheck")) check[d] = true;
  const std::string canonical = Canonical(l);
  if (canonical != "true") OrderStoreAfterLoads();
  Line("if (" + canonical + ") {");
  ++indent_;
  for (int s = 0; s < l.slots(); ++s) {
    const auto [addr, ok] = BlockElement(bp, l, s, check);
    Line((ok.empty() ? "" : "if (" + ok + ") ") + "*(" + addr + ") = " + v[s] +
         ";");
  }
  --indent_;
  Line("}");
}

// --- tensor descriptors
// ---------------------------------------------------------------

void KernelLowering::EmitDescriptor(const ir::Operation& op) {
  SetLocation(op.loc());
  if (op.code() == OpCode::kMakeTensorDesc) {
    const ir::Value* r = op.result();
    const int rank = r->type()->element()->rank();
    const std::string name = NewName(r);
    Line(TypeOf(r->type()) + " " + name + ";");
    Line(name + ".base = " + Scalar(op.operand(0)) + ";");
    for (int d = 0; d < rank; ++d) {
      const std::string i = "[" + std::to_string(d) + "]";
      Line(name + ".shape" + i + " = (int)" + Scalar(op.operand(1 + d)) + ";");
      Line(name + ".strides" + i + " = (long)" +
           Scalar(op.operand(1 + rank + d)) + ";");
    }
    BindScalar(r, name);
    return;
  }
  const bool load = op.code() == OpCode::kDescriptorLoad;
  const ir::Value* desc = op.operand(0);
  const ir::Type* block = desc->type()->element();
  const int rank = block->rank();
  const int first_offset = load ? 1 : 2;
  const Layout l = load ? layouts_.home(op.result()) : layouts_.StoreLayout(op);
  const Slots v = load ? Slots() : Get(op.operand(1), l);
  current_ = &op;
  const std::string d = Scalar(desc);
  std::vector<std::string> offsets;
  for (int i = 0; i < rank; ++i)
    offsets.push_back(Scalar(op.operand(first_offset + i)));
  const ir::Type* t = block->element();
  const std::string type = TypeOf(t);
  std::string pad = Zero(t);
  if (const ir::Operation* make = desc->defining_op()) {
    if (make->code() == OpCode::kMakeTensorDesc) pad = Padding(*make, t);
  }
  const std::string canonical = load ? "true" : Canonical(l);
  if (!load) {
    if (canonical != "true") OrderStoreAfterLoads();
    Line("if (" + canonical + ") {");
    ++indent_;
  }
  const std::string base = load ? NewName(op.result()) : "";
  Slots out(l.slots());
  for (int s = 0; s < l.slots(); ++s) {
    std::string addr = d + ".base", ok;
    for (int i = 0; i < rank; ++i) {
      const std::string c = NewTemp("c");
      Line("const int " + c + " = (int)" + offsets[i] + " + (int)" +
           Coordinate(l, s, i) + ";");
      addr +=
          " + (long)" + c + " * " + d + ".strides[" + std::to_string(i) + "]";
      ok += (ok.empty() ? "" : " && ") + c + " >= 0 && " + c + " < " + d +
            ".shape[" + std::to_string(i) + "]";
    }
    if (load) {
      const std::string name = base + "_" + std::to_string(s);
      Line(type + " " + name + " = " + pad + ";");
      Line("if (" + ok + ") " + name + " = *(" + addr + ");");
      out[s] = name;
    } else {
      Line("if (" + ok + ") *(" + addr + ") = " + v[s] + ";");
    }
  }
  if (!load) {
    --indent_;
    Line("}");
    return;
  }
  Bind(op.result(), l, std::move(out));
}

}  // namespace mtlemu::triton::lower
