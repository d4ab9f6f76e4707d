// The MSL writer behind lower.h: walks the function once, writing each op
// as MSL statements on the thread's registers (one MSL variable per slot of
// a tensor, per layout it is needed in). Split by concern:
//   kernel_lowering.cpp  values, layouts, conversions, control flow, entry
//   emit_memory.cpp      loads, stores, atomics, block pointers, descriptors
//   emit_reduce.cpp      tt.reduce, tt.scan, histogram, gather
//   emit_dot.cpp         tt.dot
//   emit_print.cpp       tt.print (into the print log of print_log.h)
#pragma once

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/triton/ir/ir.h"
#include "compiler/triton/lower/layout.h"
#include "compiler/triton/lower/layout_assignment.h"
#include "compiler/triton/lower/lower.h"
#include "compiler/triton/lower/print_log.h"

namespace mtlemu::triton::lower {

// Thrown inside the lowering for a kernel it cannot lower; LowerToMsl
// turns it into an Error.
struct LowerError {
  std::string message;
  SourceLocation loc;
};

class KernelLowering {
 public:
  KernelLowering(const ir::Function& function, const LowerOptions& options);
  LoweredKernel Run();

 private:
  using Slots = std::vector<std::string>;

  // --- values
  // ------------------------------------------------------------------ The
  // slots of tensor `v` in layout `l`, computing or converting them if this
  // scope has not yet.
  const Slots& Get(const ir::Value* v, const Layout& l);
  // The expression of scalar `v`.
  std::string Scalar(const ir::Value* v);
  void Bind(const ir::Value* v, const Layout& l, Slots slots);
  void BindScalar(const ir::Value* v, std::string expr);
  const Slots* Find(const ir::Value* v, const Layout& l) const;
  // A tensor's slots computed in `l` by its (rematerializable or
  // elementwise) defining op.
  Slots Materialize(const ir::Operation& op, const ir::Value* v,
                    const Layout& l);
  Slots Convert(const ir::Value* v, const Slots& from,
                const Layout& from_layout, const Layout& to);
  void PushScope();
  void PopScope();

  // --- ops
  // -----------------------------------------------------------------------
  void EmitBlock(const ir::Block& block);
  void EmitOp(const ir::Operation& op);
  void EmitFor(const ir::Operation& op);
  void EmitIf(const ir::Operation& op);
  void EmitWhile(const ir::Operation& op);
  // A region whose block arguments are bound to `args` (scalars), emitted
  // inline; returns its terminator's operands (a combiner's result).
  std::vector<std::string> InlineRegion(const ir::Block& region,
                                        const std::vector<std::string>& args);
  // emit_memory.cpp
  void EmitLoad(const ir::Operation& op);
  void EmitStore(const ir::Operation& op);
  void EmitAtomic(const ir::Operation& op);
  void EmitBlockPointer(const ir::Operation& op);
  void EmitBlockLoad(const ir::Operation& op);
  void EmitBlockStore(const ir::Operation& op);
  // Slot `slot`'s element of block pointer `bp` in layout `l`: its address
  // and, for the dimensions `check` marks, its bounds condition ("" for
  // none); the coordinates are written as lines.
  std::pair<std::string, std::string> BlockElement(
      const std::string& bp, const Layout& l, int slot,
      const std::vector<bool>& check);
  void EmitDescriptor(const ir::Operation& op);
  std::string AtomicExpr(const ir::Operation& op, const std::string& ptr,
                         const std::string& val, const std::string& cmp);
  // emit_reduce.cpp
  void EmitReduce(const ir::Operation& op);
  void EmitScan(const ir::Operation& op);
  void EmitHistogram(const ir::Operation& op);
  void EmitGather(const ir::Operation& op);
  // emit_map.cpp
  void EmitMapElementwise(const ir::Operation& op);
  // emit_dot.cpp
  void EmitDot(const ir::Operation& op);
  void EmitScalarDot(const ir::Operation& op);
  // emit_print.cpp
  void EmitPrint(const ir::Operation& op);

  // --- layouts at run time
  // ----------------------------------------------------------- The flat index
  // the thread part of `l` contributes (a prologue variable).
  std::string ThreadFlat(const Layout& l);
  // Whether this thread is the one writer of its elements of `l`.
  std::string Canonical(const Layout& l);
  // The coordinate along `dim` of slot `slot` (an expression).
  std::string Coordinate(const Layout& l, int slot, int dim);
  // The flat index of slot `slot` (an expression).
  std::string FlatIndex(const Layout& l, int slot);

  // --- writing
  // -------------------------------------------------------------------------
  void Line(const std::string& s);
  // Lines written between these share physical lines (an op's slots).
  void BeginJoin();
  void EndJoin();
  struct Joined {
    explicit Joined(KernelLowering& k) : k(k) { k.BeginJoin(); }
    ~Joined() { k.EndJoin(); }
    KernelLowering& k;
  };
  void SetLocation(const SourceLocation& loc);
  std::string NewName(const ir::Value* v);
  std::string NewTemp(const std::string& base);
  std::string TypeOf(const ir::Type* scalar);  // MSL type or LowerError
  // The type a value of `scalar` type is kept in, in threadgroup memory.
  std::string ScratchType(const ir::Type* scalar);
  // A threadgroup pointer to scratch memory of `bytes` at byte `offset`.
  std::string ScratchPointer(const ir::Type* scalar, int64_t offset,
                             int64_t bytes);
  void Barrier();
  // Before a store that only some of the threads holding its elements do
  // (a scalar, a replicated tensor): a device-memory barrier when a load
  // since the last one may have read what it overwrites in another SIMD
  // group (`o = tl.load(p); tl.store(p, o + 1)`), as the program's order
  // says it must.
  void OrderStoreAfterLoads();
  [[noreturn]] void Fail(const std::string& message);

  const ir::Function& function_;
  LowerOptions options_;
  LayoutAssignment layouts_;
  const ir::Operation* current_ = nullptr;

  std::ostringstream body_;
  std::ostringstream prologue_;
  std::set<std::string> helper_structs_;
  std::string structs_;
  int indent_ = 1;
  int next_name_ = 0;
  // The location the next lines belong to, and the line the MSL compiler
  // would give the next line (after the last #line).
  SourceLocation wanted_loc_;
  bool joining_ = false;
  // A device load may have run since the last device-memory barrier.
  bool loads_pending_ = false;
  std::string pending_;
  int pending_count_ = 0;
  int presumed_line_ = 0;
  std::string presumed_file_;

  struct Scope {
    std::map<std::pair<const ir::Value*, std::string>, Slots> tensors;
    std::map<const ir::Value*, std::string> scalars;
  };
  std::vector<Scope> scopes_;
  std::map<std::string, std::string> thread_flat_;  // layout key -> var
  std::map<std::string, std::string> canonical_;    // layout key -> var
  int64_t scratch_bytes_ = 0;
  std::vector<std::string> scratch_users_;  // ops that needed scratch
  std::ostringstream layout_report_;
  std::vector<PrintSite> print_sites_;  // one per tt.print, in order
};

// MSL of mtlemu_print_record(), which appends one record to the print log.
const char* PrintLogHelper();

}  // namespace mtlemu::triton::lower
