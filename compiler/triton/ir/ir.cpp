#include "compiler/triton/ir/ir.h"

#include <array>
#include <cassert>

namespace mtlemu::triton::ir {
namespace {

struct OpInfo {
  const char* name;
  OpForm form;
  unsigned traits;
};

constexpr std::array<OpInfo, kNumOpCodes> kOps = {{
#define OP(e, name, form, traits) {name, OpForm::form, traits},
#include "compiler/triton/ir/ops.def"
#undef OP
}};

}  // namespace

const char* OpName(OpCode code) { return kOps[static_cast<int>(code)].name; }
OpForm FormOf(OpCode code) { return kOps[static_cast<int>(code)].form; }
unsigned TraitsOf(OpCode code) { return kOps[static_cast<int>(code)].traits; }

std::optional<OpCode> OpCodeOf(std::string_view name) {
  for (int i = 0; i < kNumOpCodes; ++i) {
    if (name == kOps[i].name) return static_cast<OpCode>(i);
  }
  return std::nullopt;
}

// --- Operation
// -------------------------------------------------------------------

Operation* Operation::parent_op() const {
  return parent_ == nullptr ? nullptr : parent_->parent_op();
}

Value* Operation::add_result(const Type* type) {
  results_.push_back(std::unique_ptr<Value>(
      new Value(type, this, nullptr, static_cast<int>(results_.size()))));
  return results_.back().get();
}

const Attribute* Operation::attr(const std::string& key) const {
  auto it = attrs_.find(key);
  return it == attrs_.end() ? nullptr : &it->second;
}

int64_t Operation::int_attr(const std::string& key, int64_t fallback) const {
  const Attribute* a = attr(key);
  if (a == nullptr) return fallback;
  if (const auto* i = std::get_if<IntAttr>(a)) return i->value;
  if (const auto* b = std::get_if<bool>(a)) return *b ? 1 : 0;
  return fallback;
}

std::string Operation::string_attr(const std::string& key,
                                   const std::string& fallback) const {
  const Attribute* a = attr(key);
  if (a == nullptr) return fallback;
  if (const auto* s = std::get_if<std::string>(a)) return *s;
  return fallback;
}

bool Operation::bool_attr(const std::string& key, bool fallback) const {
  const Attribute* a = attr(key);
  if (a == nullptr) return fallback;
  if (const auto* b = std::get_if<bool>(a)) return *b;
  if (const auto* i = std::get_if<IntAttr>(a)) return i->value != 0;
  return fallback;
}

std::vector<int64_t> Operation::array_attr(const std::string& key) const {
  const Attribute* a = attr(key);
  if (a == nullptr) return {};
  if (const auto* arr = std::get_if<ArrayAttr>(a)) return arr->values;
  return {};
}

Block* Operation::add_region() {
  regions_.push_back(std::make_unique<Block>());
  regions_.back()->parent_ = this;
  return regions_.back().get();
}

// --- Block
// -----------------------------------------------------------------------

Value* Block::add_arg(const Type* type, std::string name) {
  args_.push_back(std::unique_ptr<Value>(
      new Value(type, nullptr, this, static_cast<int>(args_.size()))));
  args_.back()->set_name(std::move(name));
  return args_.back().get();
}

Operation* Block::terminator() const {
  Operation* last = back();
  return last != nullptr && IsTerminator(last->code()) ? last : nullptr;
}

Operation* Block::Append(std::unique_ptr<Operation> op) {
  op->parent_ = this;
  ops_.push_back(std::move(op));
  return ops_.back().get();
}

Operation* Block::Insert(size_t index, std::unique_ptr<Operation> op) {
  assert(index <= ops_.size());
  op->parent_ = this;
  auto it = ops_.insert(ops_.begin() + static_cast<std::ptrdiff_t>(index),
                        std::move(op));
  return it->get();
}

std::unique_ptr<Operation> Block::Take(size_t index) {
  assert(index < ops_.size());
  std::unique_ptr<Operation> op = std::move(ops_[index]);
  ops_.erase(ops_.begin() + static_cast<std::ptrdiff_t>(index));
  op->parent_ = nullptr;
  return op;
}

std::vector<std::unique_ptr<Operation>> Block::TakeAll() {
  std::vector<std::unique_ptr<Operation>> out = std::move(ops_);
  ops_.clear();
  for (auto& op : out) op->parent_ = nullptr;
  return out;
}

// --- Function, Module
// --------------------------------------------------------------

Value* Function::AddArgument(const Type* type, ArgInfo info) {
  Value* v = body_->add_arg(type, info.name);
  args_.push_back(std::move(info));
  return v;
}

Function* Module::Find(std::string_view name) const {
  for (const auto& f : functions_) {
    if (f->name() == name) return f.get();
  }
  return nullptr;
}

// --- Builder
// -----------------------------------------------------------------------

Operation* Builder::Create(OpCode code, std::vector<Value*> operands,
                           std::vector<const Type*> result_types) {
  auto op = std::make_unique<Operation>(code, loc_);
  op->set_operands(std::move(operands));
  for (const Type* t : result_types) op->add_result(t);
  return block_->Append(std::move(op));
}

Value* Builder::Create1(OpCode code, std::vector<Value*> operands,
                        const Type* result_type) {
  return Create(code, std::move(operands), {result_type})->result();
}

Value* Builder::IntConstant(int64_t value, const Type* type) {
  Operation* op = Create(OpCode::kConstant, {}, {type});
  if (type->IsTensor()) {
    op->set_attr("value", DenseAttr{type, {value}});
  } else {
    op->set_attr("value", IntAttr{value, type});
  }
  return op->result();
}

Value* Builder::FloatConstant(double value, const Type* type) {
  Operation* op = Create(OpCode::kConstant, {}, {type});
  if (type->IsTensor()) {
    op->set_attr("value", DenseAttr{type, {value}});
  } else {
    op->set_attr("value", FloatAttr{value, type});
  }
  return op->result();
}

}  // namespace mtlemu::triton::ir
