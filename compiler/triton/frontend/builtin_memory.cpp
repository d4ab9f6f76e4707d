// Memory builtins: tl.load and tl.store (tensors of pointers, scalar
// pointers, block pointers), atomics, block pointers and tensor
// descriptors. Follows semantic.py's _load_legacy, _store_legacy,
// atom_red_typechecking_impl, make_block_ptr and make_tensor_descriptor.
#include "compiler/triton/frontend/builtins.h"

namespace mtlemu::triton::frontend {
namespace {

using ir::OpCode;

PyValue T(Tensor t) { return PyValue::TensorValue(std::move(t)); }

void SetCacheAttrs(ir::Operation* op, BuiltinCall& call, int cache_arg,
                   int evict_arg) {
  const std::string cache = call.ConstString(cache_arg);
  const std::string evict = call.ConstString(evict_arg);
  static const char* kCache[] = {"", ".ca", ".cg", ".cv", ".wb", ".cs", ".wt"};
  static const char* kEvict[] = {"", "evict_normal", "evict_first",
                                 "evict_last"};
  bool ok = false;
  for (const char* c : kCache) ok |= cache == c;
  if (!ok) Fail("Cache modifier " + cache + " not supported");
  ok = false;
  for (const char* e : kEvict) ok |= evict == e;
  if (!ok) Fail("Eviction policy " + evict + " not supported");
  if (!cache.empty()) op->set_attr("cache", cache);
  if (!evict.empty()) op->set_attr("evict", evict);
}

// `x` as an i32 or i64 scalar (make_block_ptr's _convert_to_ir_values).
Tensor IndexScalar(Semantic& sem, const PyValue& x, bool i64,
                   const std::string& what) {
  Tensor t = sem.ToTensor(x);
  if (t.is_block() || !t.dtype->is_int()) {
    Fail("Expected an integer scalar for " + what + ", got " +
         Semantic::TypeText(t));
  }
  return sem.Cast(t, i64 ? DType::I64() : DType::I32());
}

std::vector<PyValue> Items(const PyValue& v) {
  if (v.is(PyValue::Kind::kTuple)) return v.items();
  return {v};
}

std::vector<int64_t> BoundaryCheck(BuiltinCall& call, int arg, int rank) {
  std::vector<int64_t> dims;
  for (const PyValue& d : Items(call.arg(arg))) {
    if (!d.is(PyValue::Kind::kInt))
      Fail("boundary_check must be a tuple of integers");
    int64_t x = static_cast<int64_t>(d.as_int());
    if (x < -rank || x >= rank) {
      Fail("boundary_check dimension " + std::to_string(x) +
           " is out of range for a block of rank " + std::to_string(rank));
    }
    dims.push_back(x < 0 ? x + rank : x);
  }
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  return dims;
}

std::string Padding(BuiltinCall& call, int arg, const DType* element) {
  const std::string p = call.ConstString(arg);
  if (p.empty()) return "";
  if (p != "zero" && p != "nan") {
    Fail("Padding option " + p + " not supported");
  }
  if (p == "nan" && element->is_int()) {
    Fail("Padding option `nan` is not supported for integer block pointers");
  }
  return p;
}

}  // namespace

PyValue HandlekLoad(BuiltinCall& call) {
  Semantic& sem = call.sem();
  ir::Builder& b = call.cg.builder();
  Tensor ptr = call.AsTensor(0);
  if (!ptr.dtype->is_ptr()) {
    Fail("Unsupported ptr type " + Semantic::TypeText(ptr) + " in `tl.load`");
  }
  if (ptr.dtype->is_block_ptr()) {
    if (call.has(1) || call.has(2)) {
      Fail(
          "`mask` and `other` arguments cannot be specified for loading "
          "block pointers");
    }
    const DType* elt = ptr.dtype->element();
    const std::vector<int64_t>& shape = ptr.dtype->block_shape();
    const std::vector<int64_t> check =
        BoundaryCheck(call, 3, static_cast<int>(shape.size()));
    const std::string padding = Padding(call, 4, elt);
    ir::Operation* op =
        b.Create(OpCode::kLoad, {ptr.handle}, {elt->ToIr()->WithShape(shape)});
    if (!check.empty()) op->set_attr("boundaryCheck", ir::ArrayAttr{check});
    if (!padding.empty()) op->set_attr("padding", padding);
    SetCacheAttrs(op, call, 5, 6);
    if (call.ConstBool(7)) op->set_attr("isVolatile", true);
    return T(Tensor{op->result(), elt, shape});
  }
  if (!call.has(1) && call.has(2)) {
    Fail("`other` cannot be provided without `mask`");
  }
  if (call.arg(3).is(PyValue::Kind::kTuple) && !call.arg(3).items().empty()) {
    Fail(
        "`padding_option` or `boundary_check` argument is not supported for "
        "loading a tensor of pointers or loading a scalar. Because the "
        "compiler does not know the boundary; please use block pointers "
        "(defined by `make_block_ptr`) instead");
  }
  if (!call.ConstString(4).empty()) {
    Fail(
        "`padding_option` or `boundary_check` argument is not supported for "
        "loading a tensor of pointers or loading a scalar. Because the "
        "compiler does not know the boundary; please use block pointers "
        "(defined by `make_block_ptr`) instead");
  }
  std::optional<Tensor> mask, other;
  if (call.has(1)) mask = sem.Cast(call.AsTensor(1), DType::Bool());
  if (call.has(2)) other = call.AsTensor(2);
  if (!ptr.is_block()) {
    if (mask && mask->is_block()) {
      Fail(
          "Mask argument cannot be block type if pointer argument is not a "
          "block");
    }
    if (other && other->is_block()) {
      Fail(
          "Other argument cannot be block type if pointer argument is not a "
          "block");
    }
  } else {
    if (mask) std::tie(ptr, *mask) = sem.Broadcast(ptr, *mask);
    if (other) std::tie(ptr, *other) = sem.Broadcast(ptr, *other);
    if (mask && mask->shape != ptr.shape)
      *mask = sem.BroadcastTo(*mask, ptr.shape);
  }
  const DType* elt = ptr.dtype->element();
  const bool is_bool = elt->is_bool();
  if (is_bool) {
    elt = DType::Int(8);
    ptr = sem.Cast(ptr, DType::Pointer(elt, ptr.dtype->address_space()));
  }
  if (other) other = sem.Cast(*other, elt);
  std::vector<ir::Value*> operands = {ptr.handle};
  if (mask) operands.push_back(mask->handle);
  if (other) operands.push_back(other->handle);
  ir::Operation* op =
      b.Create(OpCode::kLoad, operands, {elt->ToIr()->WithShape(ptr.shape)});
  SetCacheAttrs(op, call, 5, 6);
  if (call.ConstBool(7)) op->set_attr("isVolatile", true);
  Tensor result{op->result(), elt, ptr.shape};
  if (is_bool) result = sem.Cast(result, DType::Bool());
  return T(result);
}

PyValue HandlekStore(BuiltinCall& call) {
  Semantic& sem = call.sem();
  ir::Builder& b = call.cg.builder();
  Tensor ptr = call.AsTensor(0);
  if (!ptr.dtype->is_ptr()) {
    Fail("Unsupported ptr type " + Semantic::TypeText(ptr) + " in `tl.store`");
  }
  Tensor value = call.AsTensor(1);
  if (ptr.dtype->is_block_ptr()) {
    if (call.has(2))
      Fail("`mask` argument cannot be specified for storing block pointers");
    const DType* elt = ptr.dtype->element();
    const std::vector<int64_t>& shape = ptr.dtype->block_shape();
    value = sem.BroadcastTo(value, shape);
    value = sem.Cast(value, elt);
    const std::vector<int64_t> check =
        BoundaryCheck(call, 3, static_cast<int>(shape.size()));
    ir::Operation* op =
        b.Create(OpCode::kStore, {ptr.handle, value.handle}, {});
    if (!check.empty()) op->set_attr("boundaryCheck", ir::ArrayAttr{check});
    SetCacheAttrs(op, call, 4, 5);
    return PyValue::None();
  }
  if (call.arg(3).is(PyValue::Kind::kTuple) && !call.arg(3).items().empty()) {
    Fail(
        "`boundary_check` argument is not supported for storing a tensor of "
        "pointers or storing a scalar. Because the compiler does not know "
        "the boundary; please use block pointers (defined by "
        "`make_block_ptr`) instead");
  }
  std::optional<Tensor> mask;
  if (call.has(2)) mask = call.AsTensor(2);
  if (!ptr.is_block()) {
    if (value.is_block()) {
      Fail(
          "Value argument cannot be block type if pointer argument is not a "
          "block");
    }
    if (mask && mask->is_block()) {
      Fail(
          "Mask argument cannot be block type if pointer argument is not a "
          "block");
    }
  } else {
    value = sem.BroadcastTo(value, ptr.shape);
    if (mask) *mask = sem.BroadcastTo(*mask, ptr.shape);
  }
  const DType* elt = ptr.dtype->element();
  if (elt->is_bool()) {
    elt = DType::Int(8);
    ptr = sem.Cast(ptr, DType::Pointer(elt, ptr.dtype->address_space()));
  }
  value = sem.Cast(value, elt);
  std::vector<ir::Value*> operands = {ptr.handle, value.handle};
  if (mask) {
    if (!mask->dtype->is_bool()) Fail("Mask must have boolean scalar type");
    operands.push_back(mask->handle);
  }
  ir::Operation* op = b.Create(OpCode::kStore, operands, {});
  SetCacheAttrs(op, call, 4, 5);
  return PyValue::None();
}

// --- atomics
// ---------------------------------------------------------------------------

namespace {

std::string Sem(BuiltinCall& call, int arg) {
  std::string s = call.ConstString(arg);
  if (s.empty()) return "acq_rel";
  if (s != "acquire" && s != "release" && s != "acq_rel" && s != "relaxed") {
    Fail("Memory semantic " + s + " not supported");
  }
  return s;
}

std::string Scope(BuiltinCall& call, int arg) {
  std::string s = call.ConstString(arg);
  if (s.empty()) return "gpu";
  if (s != "gpu" && s != "cta" && s != "sys")
    Fail("Memory scope " + s + " not supported");
  return s;
}

struct AtomicOperands {
  Tensor ptr, val, mask;
};

AtomicOperands CheckAtomic(BuiltinCall& call, const std::string& op) {
  Semantic& sem = call.sem();
  Tensor ptr = call.AsTensor(0);
  if (!ptr.dtype->is_ptr() || ptr.dtype->is_block_ptr()) {
    Fail("Pointer argument of store instruction is " + Semantic::TypeText(ptr));
  }
  if (ptr.dtype->is_const()) Fail("Cannot store to a constant pointer");
  const DType* elt = ptr.dtype->element();
  if (elt->is_fp16() && op != "add")
    Fail("atomic_" + op + " does not support fp16");
  if (elt->is_bf16() && op != "add")
    Fail("atomic_" + op + " does not support bf16");
  if ((elt->is_int() && elt->bits() == 16) || elt->bits() < 16) {
    Fail("atomic_" + op + " does not support " + elt->Name());
  }
  Tensor val = call.AsTensor(1);
  std::optional<Tensor> mask;
  if (call.has(2)) mask = sem.Cast(call.AsTensor(2), DType::Bool());
  if (ptr.is_block()) {
    val = sem.BroadcastTo(val, ptr.shape);
    if (mask) *mask = sem.BroadcastTo(*mask, ptr.shape);
  } else if (val.is_block()) {
    // A scalar pointer with a block value: Triton broadcasts the pointer.
    ptr = sem.BroadcastTo(ptr, val.shape);
    if (mask) *mask = sem.BroadcastTo(*mask, ptr.shape);
  }
  val = sem.Cast(val, elt);
  if (!mask) mask = sem.Full(ptr.shape, PyValue::Bool(true), DType::Bool());
  return {ptr, val, *mask};
}

Tensor Rmw(BuiltinCall& call, const std::string& kind, const Tensor& ptr,
           const Tensor& val, const Tensor& mask) {
  ir::Operation* op = call.cg.builder().Create(
      OpCode::kAtomicRMW, {ptr.handle, val.handle, mask.handle},
      {val.handle->type()});
  op->set_attr("atomic_rmw_op", kind);
  op->set_attr("sem", Sem(call, 3));
  op->set_attr("scope", Scope(call, 4));
  return Tensor{op->result(), val.dtype, val.shape};
}

PyValue IntRmw(BuiltinCall& call, const std::string& op,
               const std::string& kind) {
  AtomicOperands a = CheckAtomic(call, op);
  if (!a.val.dtype->is_int()) {
    Fail("atomic_" + op + " does not support " + a.val.dtype->Name());
  }
  return T(Rmw(call, kind, a.ptr, a.val, a.mask));
}

// Float max/min as Triton does them: a signed integer max (min) where the
// sign bit is clear, an unsigned integer min (max) where it is set (-0.0
// included: it is not `>= 0` as bits).
PyValue FloatMinMax(BuiltinCall& call, AtomicOperands a, bool is_max) {
  Semantic& sem = call.sem();
  const DType* f = a.val.dtype;
  if (!f->is_fp32() && !f->is_fp64()) {
    Fail(std::string("atomic_") + (is_max ? "max" : "min") +
         " not supported for dtype " + f->Name());
  }
  const int bits = f->bits();
  Tensor i_val = sem.Bitcast(a.val, DType::Int(bits));
  Tensor zero = sem.Full(a.val.shape, PyValue::Int(0), DType::Int(bits));
  Tensor i_ptr = sem.Bitcast(a.ptr, DType::Pointer(DType::Int(bits)));
  Tensor u_val = sem.Bitcast(a.val, DType::UInt(bits));
  Tensor u_ptr = sem.Bitcast(a.ptr, DType::Pointer(DType::UInt(bits)));
  Tensor pos = sem.Binary(BinaryOp::kGe, T(i_val), T(zero));
  Tensor neg = sem.Binary(BinaryOp::kLt, T(i_val), T(zero));
  Tensor pos_mask = sem.Binary(BinaryOp::kAnd, T(a.mask), T(pos));
  Tensor neg_mask = sem.Binary(BinaryOp::kAnd, T(a.mask), T(neg));
  Tensor pos_ret = Rmw(call, is_max ? "max" : "min", i_ptr, i_val, pos_mask);
  Tensor neg_ret = Rmw(call, is_max ? "umin" : "umax", u_ptr, u_val, neg_mask);
  Tensor neg_as_int = sem.Bitcast(neg_ret, DType::Int(bits));
  Tensor ret = sem.Where(T(pos), T(pos_ret), T(neg_as_int));
  return T(sem.Bitcast(ret, f));
}

}  // namespace

PyValue HandlekAtomicAdd(BuiltinCall& call) {
  AtomicOperands a = CheckAtomic(call, "add");
  return T(Rmw(call, a.val.dtype->is_floating() ? "fadd" : "add", a.ptr, a.val,
               a.mask));
}

PyValue HandlekAtomicMax(BuiltinCall& call) {
  AtomicOperands a = CheckAtomic(call, "max");
  if (a.val.dtype->is_floating()) return FloatMinMax(call, a, true);
  return T(Rmw(call, a.val.dtype->is_int_signed() ? "max" : "umax", a.ptr,
               a.val, a.mask));
}

PyValue HandlekAtomicMin(BuiltinCall& call) {
  AtomicOperands a = CheckAtomic(call, "min");
  if (a.val.dtype->is_floating()) return FloatMinMax(call, a, false);
  return T(Rmw(call, a.val.dtype->is_int_signed() ? "min" : "umin", a.ptr,
               a.val, a.mask));
}

PyValue HandlekAtomicXchg(BuiltinCall& call) {
  AtomicOperands a = CheckAtomic(call, "xchg");
  return T(Rmw(call, "exch", a.ptr, a.val, a.mask));
}

PyValue HandlekAtomicAnd(BuiltinCall& call) {
  return IntRmw(call, "and", "and");
}
PyValue HandlekAtomicOr(BuiltinCall& call) { return IntRmw(call, "or", "or"); }
PyValue HandlekAtomicXor(BuiltinCall& call) {
  return IntRmw(call, "xor", "xor");
}

PyValue HandlekAtomicCas(BuiltinCall& call) {
  Semantic& sem = call.sem();
  Tensor ptr = call.AsTensor(0);
  if (!ptr.dtype->is_ptr() || ptr.dtype->is_block_ptr()) {
    Fail("Pointer argument of atomic_cas is " + Semantic::TypeText(ptr));
  }
  const DType* elt = ptr.dtype->element();
  if (elt->bits() != 16 && elt->bits() != 32 && elt->bits() != 64) {
    Fail("atomic_cas only supports elements with width {16, 32, 64}");
  }
  Tensor cmp = sem.Cast(call.AsTensor(1), elt);
  Tensor val = sem.Cast(call.AsTensor(2), elt);
  if (ptr.is_block()) {
    cmp = sem.BroadcastTo(cmp, ptr.shape);
    val = sem.BroadcastTo(val, ptr.shape);
  }
  ir::Operation* op = call.cg.builder().Create(
      OpCode::kAtomicCAS, {ptr.handle, cmp.handle, val.handle},
      {val.handle->type()});
  op->set_attr("sem", Sem(call, 3));
  op->set_attr("scope", Scope(call, 4));
  return T(Tensor{op->result(), elt, val.shape});
}

// --- block pointers
// -------------------------------------------------------------------

PyValue HandlekMakeBlockPtr(BuiltinCall& call) {
  Semantic& sem = call.sem();
  Tensor base = call.AsTensor(0);
  if (!base.dtype->is_ptr() || base.dtype->is_block_ptr() || base.is_block()) {
    Fail(
        "Expected `base` to be a pointer type (but not a block pointer type "
        "or others)");
  }
  if (base.dtype->element()->is_bool()) {
    base = sem.Cast(base, DType::Pointer(DType::Int(8)));
  }
  std::vector<PyValue> shape = Items(call.arg(1)), strides = Items(call.arg(2)),
                       offsets = Items(call.arg(3));
  std::vector<int64_t> block_shape = call.ConstShape(4);
  std::vector<int64_t> order = call.ConstShape(5);
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] != static_cast<int64_t>(i)) {
      Fail("Expected a permutation of (0, 1, ..., len(order)-1) in order");
    }
  }
  const size_t rank = block_shape.size();
  if (shape.size() != rank || strides.size() != rank ||
      offsets.size() != rank || order.size() != rank) {
    Fail("Expected shape/strides/offsets/block_shape to have the same length");
  }
  for (int64_t d : block_shape) {
    if (d <= 0 || (d & (d - 1)) != 0) {
      Fail("block_shape elements must be powers of 2, got " +
           std::to_string(d));
    }
  }
  std::vector<ir::Value*> operands = {base.handle};
  for (const PyValue& s : shape)
    operands.push_back(IndexScalar(sem, s, true, "shape").handle);
  for (const PyValue& s : strides)
    operands.push_back(IndexScalar(sem, s, true, "strides").handle);
  for (const PyValue& s : offsets)
    operands.push_back(IndexScalar(sem, s, false, "offsets").handle);
  const DType* type = DType::BlockPointer(base.dtype->element(), block_shape);
  ir::Operation* op = call.cg.builder().Create(OpCode::kMakeTensorPtr, operands,
                                               {type->ToIr()});
  op->set_attr("order", ir::ArrayAttr{order});
  return T(Tensor{op->result(), type, {}});
}

PyValue HandlekAdvance(BuiltinCall& call) {
  Tensor base = call.AsTensor(0);
  if (!base.dtype->is_block_ptr()) {
    Fail("tl.advance needs a block pointer (from tl.make_block_ptr), got " +
         Semantic::TypeText(base));
  }
  std::vector<PyValue> offsets = Items(call.arg(1));
  if (offsets.size() != base.dtype->block_shape().size()) {
    Fail("tl.advance: expected " +
         std::to_string(base.dtype->block_shape().size()) + " offsets, got " +
         std::to_string(offsets.size()));
  }
  std::vector<ir::Value*> operands = {base.handle};
  for (const PyValue& o : offsets) {
    operands.push_back(IndexScalar(call.sem(), o, false, "offsets").handle);
  }
  ir::Value* v = call.cg.builder().Create1(OpCode::kAdvance, operands,
                                           base.handle->type());
  return T(Tensor{v, base.dtype, {}});
}

// --- tensor descriptors
// ------------------------------------------------------------------

PyValue HandlekMakeTensorDescriptor(BuiltinCall& call) {
  Semantic& sem = call.sem();
  Tensor base = call.AsTensor(0);
  if (!base.dtype->is_ptr() || base.dtype->is_block_ptr() || base.is_block()) {
    Fail("tl.make_tensor_descriptor needs a pointer as its base, got " +
         Semantic::TypeText(base));
  }
  std::vector<PyValue> shape = Items(call.arg(1)), strides = Items(call.arg(2));
  std::vector<int64_t> block_shape = call.ConstShape(3);
  const size_t ndim = shape.size();
  if (ndim < 1 || ndim > 5) {
    Fail("Expected 1 <= ndim <= 5 but got " + std::to_string(ndim) +
         " dimensions");
  }
  if (strides.size() != ndim) {
    Fail("Expected " + std::to_string(ndim) + " strides but got " +
         std::to_string(strides.size()));
  }
  if (block_shape.size() != ndim) {
    Fail("Expected block_shape to have " + std::to_string(ndim) +
         " dimensions but got " + std::to_string(block_shape.size()));
  }
  const DType* elt = base.dtype->element();
  const int64_t elem_size = elt->bits() / 8;
  if (block_shape.back() * elem_size < 16) {
    Fail(
        "Descriptor block shape must have at least 16 bytes in the last "
        "dimension, but got " +
        std::to_string(block_shape.back()) + " * " + std::to_string(elem_size) +
        " = " + std::to_string(block_shape.back() * elem_size) + " bytes");
  }
  const PyValue& last = strides.back();
  if (!last.is(PyValue::Kind::kInt) || last.as_int() != 1) {
    Fail("Tensor descriptor last dim must be 1 but got " +
         (last.is_tensor() ? std::string("a runtime value") : last.Repr()));
  }
  const std::string padding = call.ConstString(4);
  if (padding != "zero" && padding != "nan") {
    Fail("Padding option " + padding + " not supported");
  }
  if (padding == "nan" && elt->is_int()) {
    Fail("Padding option `nan` is not supported for integer blocks");
  }
  std::vector<ir::Value*> operands = {base.handle};
  for (const PyValue& s : shape)
    operands.push_back(IndexScalar(sem, s, false, "shape").handle);
  for (const PyValue& s : strides)
    operands.push_back(IndexScalar(sem, s, true, "strides").handle);
  const ir::Type* block = elt->ToIr()->WithShape(block_shape);
  ir::Operation* op = call.cg.builder().Create(
      OpCode::kMakeTensorDesc, operands, {ir::Type::TensorDesc(block)});
  op->set_attr("padding", padding);
  TensorDescriptor d;
  d.handle = op->result();
  d.element = elt;
  d.block_shape = block_shape;
  d.rank = static_cast<int>(ndim);
  return PyValue::Descriptor(d);
}

PyValue HandlekDescLoad(BuiltinCall& call) {
  const TensorDescriptor& d = call.arg(0).descriptor();
  std::vector<PyValue> offsets = Items(call.arg(1));
  if (static_cast<int>(offsets.size()) != d.rank) {
    Fail("descriptor load: expected " + std::to_string(d.rank) + " offsets");
  }
  std::vector<ir::Value*> operands = {d.handle};
  for (const PyValue& o : offsets) {
    operands.push_back(IndexScalar(call.sem(), o, false, "offsets").handle);
  }
  ir::Value* v =
      call.cg.builder().Create1(OpCode::kDescriptorLoad, operands,
                                d.element->ToIr()->WithShape(d.block_shape));
  return T(Tensor{v, d.element, d.block_shape});
}

PyValue HandlekDescStore(BuiltinCall& call) {
  const TensorDescriptor& d = call.arg(0).descriptor();
  std::vector<PyValue> offsets = Items(call.arg(1));
  if (static_cast<int>(offsets.size()) != d.rank) {
    Fail("descriptor store: expected " + std::to_string(d.rank) + " offsets");
  }
  Tensor value = call.sem().Cast(
      call.sem().BroadcastTo(call.AsTensor(2), d.block_shape), d.element);
  std::vector<ir::Value*> operands = {d.handle, value.handle};
  for (const PyValue& o : offsets) {
    operands.push_back(IndexScalar(call.sem(), o, false, "offsets").handle);
  }
  call.cg.builder().Create(OpCode::kDescriptorStore, operands, {});
  return PyValue::None();
}

}  // namespace mtlemu::triton::frontend
