// The block IR: Triton's TTIR in memory. A Module holds Functions; a
// Function's body is a Block of Operations; an Operation has operands
// (Values), results (Values it owns), attributes, a source location and
// regions (each a single Block with arguments: the bodies of scf.for,
// scf.if, scf.while, tt.reduce and tt.scan). Values are SSA: defined once,
// by an operation's result or a block's argument, and used only where their
// definition dominates (after it in its block, or in a region nested below).
//
// The text form is TTIR (printer.h, compiler/triton/ttir/reader.h); the
// verifier (verifier.h) checks an IR against the rules of ops.def.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "compiler/triton/ir/types.h"
#include "compiler/triton/source_location.h"

namespace mtlemu::triton::ir {

// --- the op table
// -------------------------------------------------------------

enum class OpCode {
#define OP(e, name, form, traits) e,
#include "compiler/triton/ir/ops.def"
#undef OP
};
inline constexpr int kNumOpCodes = 0
#define OP(e, name, form, traits) +1
#include "compiler/triton/ir/ops.def"
#undef OP
    ;

enum class OpForm {
  kConstant,   // arith.constant VALUE : TYPE
  kBinary,     // %a, %b : TYPE
  kUnary,      // %a : TYPE
  kTernary,    // %a, %b, %c : TYPE
  kCompare,    // PRED, %a, %b : TYPE
  kSelect,     // %c, %a, %b : CTYPE, TYPE
  kCast,       // %x : FROM to TO
  kArrowCast,  // %x [attrs] : FROM -> TO
  kCustom,     // its own syntax
};

enum OpTraits : unsigned {
  kNone = 0,
  kElementwise = 1,
  kPure = 2,
  kTerminator = 4,
  kIntElements = 8,     // its operands' elements are integers
  kFloatElements = 16,  // its operands' elements are floats
};

const char* OpName(OpCode code);  // "arith.addi"
OpForm FormOf(OpCode code);
unsigned TraitsOf(OpCode code);
inline bool IsElementwise(OpCode c) { return TraitsOf(c) & kElementwise; }
inline bool IsPure(OpCode c) { return TraitsOf(c) & kPure; }
inline bool IsTerminator(OpCode c) { return TraitsOf(c) & kTerminator; }
inline bool HasIntElements(OpCode c) { return TraitsOf(c) & kIntElements; }
inline bool HasFloatElements(OpCode c) { return TraitsOf(c) & kFloatElements; }
// The op of a TTIR name, or nullopt.
std::optional<OpCode> OpCodeOf(std::string_view name);

// --- attributes
// ---------------------------------------------------------------

// An integer attribute: the value and its type (i1, i32, i64).
struct IntAttr {
  int64_t value = 0;
  const Type* type = nullptr;
  bool operator==(const IntAttr&) const = default;
};
// A float attribute (f16, bf16 and f32 values are held exactly in a double).
struct FloatAttr {
  double value = 0;
  const Type* type = nullptr;
  bool operator==(const FloatAttr&) const = default;
};
// A dense tensor constant. Triton only makes splats (one value); `values`
// has one element for a splat, else NumElements() in row-major order.
// Integers are held as int64 bit patterns, floats as doubles.
struct DenseAttr {
  const Type* type = nullptr;  // the tensor type
  std::vector<std::variant<int64_t, double>> values;
  bool operator==(const DenseAttr&) const = default;
};
// An array of integers ("order = array<i32: 1, 0>", "boundaryCheck").
struct ArrayAttr {
  std::vector<int64_t> values;
  bool operator==(const ArrayAttr&) const = default;
};

// Symbolic attributes (a cmpi predicate, an atomic's sem, a rounding mode)
// are strings, as TTIR spells them.
using Attribute = std::variant<IntAttr, FloatAttr, bool, std::string, DenseAttr,
                               ArrayAttr, const Type*>;

// --- values, operations, blocks
// -------------------------------------------------

class Operation;
class Block;

class Value {
 public:
  const Type* type() const { return type_; }
  // The operation that defines it, or null for a block argument.
  Operation* defining_op() const { return def_; }
  int result_index() const { return index_; }
  // The block whose argument it is, or null for an operation's result.
  Block* owner_block() const { return block_; }
  int arg_index() const { return index_; }

  // A name for the text form (%offs_m), from the Python variable when
  // known; may be empty. Not necessarily unique.
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  void set_type(const Type* type) { type_ = type; }

 private:
  friend class Operation;
  friend class Block;
  Value(const Type* type, Operation* def, Block* block, int index)
      : type_(type), def_(def), block_(block), index_(index) {}
  const Type* type_;
  Operation* def_;
  Block* block_;
  int index_;
  std::string name_;
};

class Operation {
 public:
  Operation(OpCode code, SourceLocation loc)
      : code_(code), loc_(std::move(loc)) {}
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;

  OpCode code() const { return code_; }
  const char* name() const { return OpName(code_); }
  const SourceLocation& loc() const { return loc_; }
  void set_loc(SourceLocation loc) { loc_ = std::move(loc); }
  Block* parent_block() const { return parent_; }
  // The operation whose region holds this one (null at function level).
  Operation* parent_op() const;

  // Operands.
  const std::vector<Value*>& operands() const { return operands_; }
  Value* operand(int i) const { return operands_[i]; }
  int num_operands() const { return static_cast<int>(operands_.size()); }
  void add_operand(Value* v) { operands_.push_back(v); }
  void set_operand(int i, Value* v) { operands_[i] = v; }
  void set_operands(std::vector<Value*> v) { operands_ = std::move(v); }

  // Results (owned).
  Value* result(int i = 0) const { return results_[i].get(); }
  int num_results() const { return static_cast<int>(results_.size()); }
  Value* add_result(const Type* type);

  // Attributes.
  const std::map<std::string, Attribute>& attrs() const { return attrs_; }
  bool has_attr(const std::string& key) const { return attrs_.count(key); }
  const Attribute* attr(const std::string& key) const;
  void set_attr(const std::string& key, Attribute value) {
    attrs_[key] = std::move(value);
  }
  void remove_attr(const std::string& key) { attrs_.erase(key); }
  // Typed accessors: the attribute's value, or `fallback` when it is absent
  // or of another kind.
  int64_t int_attr(const std::string& key, int64_t fallback = 0) const;
  std::string string_attr(const std::string& key,
                          const std::string& fallback = "") const;
  bool bool_attr(const std::string& key, bool fallback = false) const;
  std::vector<int64_t> array_attr(const std::string& key) const;

  // Regions: single blocks, owned.
  int num_regions() const { return static_cast<int>(regions_.size()); }
  Block* region(int i) const { return regions_[i].get(); }
  Block* add_region();

 private:
  friend class Block;
  OpCode code_;
  SourceLocation loc_;
  Block* parent_ = nullptr;
  std::vector<Value*> operands_;
  std::vector<std::unique_ptr<Value>> results_;
  std::map<std::string, Attribute> attrs_;
  std::vector<std::unique_ptr<Block>> regions_;
};

class Block {
 public:
  Block() = default;
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  Operation* parent_op() const { return parent_; }

  const std::vector<std::unique_ptr<Value>>& args() const { return args_; }
  Value* arg(int i) const { return args_[i].get(); }
  int num_args() const { return static_cast<int>(args_.size()); }
  Value* add_arg(const Type* type, std::string name = "");

  const std::vector<std::unique_ptr<Operation>>& ops() const { return ops_; }
  bool empty() const { return ops_.empty(); }
  Operation* back() const { return ops_.empty() ? nullptr : ops_.back().get(); }
  // The block's terminator (its last op, if that is one), or null.
  Operation* terminator() const;

  // Appends `op` (taking ownership); returns it.
  Operation* Append(std::unique_ptr<Operation> op);
  // Inserts `op` before position `index`.
  Operation* Insert(size_t index, std::unique_ptr<Operation> op);
  // Removes the op at `index` and returns it (its results must be unused).
  std::unique_ptr<Operation> Take(size_t index);
  // Replaces the whole list (for passes that rebuild a block).
  std::vector<std::unique_ptr<Operation>> TakeAll();

 private:
  friend class Operation;
  Operation* parent_ = nullptr;
  std::vector<std::unique_ptr<Value>> args_;
  std::vector<std::unique_ptr<Operation>> ops_;
};

// One parameter of a function: its name in the source and what Triton's
// specialization knows of it.
struct ArgInfo {
  std::string name;
  SourceLocation loc;
  int divisibility = 0;  // tt.divisibility (16 when the value was), or 0
};

class Function {
 public:
  Function(std::string name, SourceLocation loc)
      : name_(std::move(name)), loc_(std::move(loc)), body_(new Block) {}

  const std::string& name() const { return name_; }
  const SourceLocation& loc() const { return loc_; }
  void set_loc(SourceLocation loc) { loc_ = std::move(loc); }
  Block* body() const { return body_.get(); }
  bool is_public() const { return public_; }
  void set_public(bool p) { public_ = p; }
  // Triton's "noinline" function attribute.
  bool noinline() const { return noinline_; }
  void set_noinline(bool n) { noinline_ = n; }

  // Parameters are the body's block arguments; `args` holds their
  // names and attributes, one per argument.
  std::vector<ArgInfo>& arg_info() { return args_; }
  const std::vector<ArgInfo>& arg_info() const { return args_; }
  Value* AddArgument(const Type* type, ArgInfo info);

  const std::vector<const Type*>& result_types() const { return results_; }
  void add_result_type(const Type* t) { results_.push_back(t); }

 private:
  std::string name_;
  SourceLocation loc_;
  std::unique_ptr<Block> body_;
  std::vector<ArgInfo> args_;
  std::vector<const Type*> results_;
  bool public_ = true;
  bool noinline_ = false;
};

class Module {
 public:
  const std::vector<std::unique_ptr<Function>>& functions() const {
    return functions_;
  }
  Function* AddFunction(std::unique_ptr<Function> f) {
    functions_.push_back(std::move(f));
    return functions_.back().get();
  }
  Function* Find(std::string_view name) const;

 private:
  std::vector<std::unique_ptr<Function>> functions_;
};

// --- building ----------------------------------------------------------------

// Appends operations at the end of a block (or before a position in it).
class Builder {
 public:
  explicit Builder(Block* block) : block_(block) {}
  Block* block() const { return block_; }
  void set_block(Block* block) { block_ = block; }
  const SourceLocation& loc() const { return loc_; }
  void set_loc(SourceLocation loc) { loc_ = std::move(loc); }

  // A new operation at the builder's location, appended to the block.
  Operation* Create(OpCode code, std::vector<Value*> operands,
                    std::vector<const Type*> result_types);
  // The same with one result, returned.
  Value* Create1(OpCode code, std::vector<Value*> operands,
                 const Type* result_type);

  // Constants: scalars of int or float type, or splat tensors of them.
  Value* IntConstant(int64_t value, const Type* type);
  Value* FloatConstant(double value, const Type* type);

 private:
  Block* block_;
  SourceLocation loc_;
};

// --- walking
// -------------------------------------------------------------------

// Calls fn(op) for every operation in `block` and its regions, in order
// (an op before the ops of its regions).
template <class Fn>
void Walk(const Block& block, Fn&& fn) {
  for (const auto& op : block.ops()) {
    fn(op.get());
    for (int r = 0; r < op->num_regions(); ++r) Walk(*op->region(r), fn);
  }
}

}  // namespace mtlemu::triton::ir
