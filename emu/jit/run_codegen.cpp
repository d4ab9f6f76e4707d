#include "emu/jit/run_codegen.h"

#include <llvm/Analysis/InstSimplifyFolder.h>
#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>

#include <array>
#include <cstddef>
#include <map>
#include <set>
#include <tuple>

#include "emu/exec/memory_access.h"
#include "emu/exec/streamed_stores.h"

namespace mtlemu::emu {
namespace {

using isa::Opcode;
using isa::ScalarType;

bool Is32Bit(ScalarType t) {
  return t == ScalarType::kInt || t == ScalarType::kUInt ||
         t == ScalarType::kFloat;
}

// The instructions written inline: 32-bit moves, arithmetic, bit
// operations, comparisons and selects. Division, conversions, math and
// everything that touches memory or other lanes call their handler.
bool Inlinable(Opcode op, ScalarType t) {
  if (!Is32Bit(t)) return false;
  const bool f = t == ScalarType::kFloat;
  switch (op) {
    case Opcode::kMov:
    case Opcode::kAdd:
    case Opcode::kSub:
    case Opcode::kMul:
    case Opcode::kMin:
    case Opcode::kMax:
    case Opcode::kAbs:
    case Opcode::kNeg:
    case Opcode::kEq:
    case Opcode::kNe:
    case Opcode::kLt:
    case Opcode::kLe:
    case Opcode::kGt:
    case Opcode::kGe:
    case Opcode::kSelect:
      return true;
    case Opcode::kFma:
      return f;
    case Opcode::kMad:
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
    case Opcode::kNot:
    case Opcode::kShl:
    case Opcode::kShr:
      return !f;
    default:
      return false;
  }
}

// Loads and stores of one 32-bit element per lane in device or
// threadgroup memory: a gather or scatter when every active lane is in
// bounds and no check is on, else the handler (which finds the fault).
bool InlinableMemory(const DecodedInstruction& d) {
  const isa::Instruction& inst = *d.inst;
  return (inst.op == Opcode::kLoad || inst.op == Opcode::kStore) &&
         Is32Bit(inst.type) && inst.vector == 1 &&
         (inst.space == isa::AddressSpace::kDevice ||
          inst.space == isa::AddressSpace::kThreadgroup);
}

// For a compiled run whose region `cache` missed: where [lowest, lowest +
// length) lies in one device region, its host address, else null
// (DeviceHost, as SpanOf asks it); the region found goes in the cache.
const uint8_t* DeviceSpanHost(ExecContext* ctx, uint64_t lowest,
                              uint64_t length, uint32_t cache) {
  const MemoryRegion* r = ctx->device->Find(lowest, length);
  if (r == nullptr) return nullptr;
  ctx->jit_regions[cache] = {r->base, r->length, r->host};
  return r->host + (lowest - r->base);
}

class RunEmitter {
 public:
  RunEmitter(llvm::Module& module, const DecodedKernel& kernel)
      : module_(module),
        c_(module.getContext()),
        b_(c_, llvm::InstSimplifyFolder(module.getDataLayout())),
        kernel_(kernel),
        i32_(b_.getInt32Ty()),
        f32_(b_.getFloatTy()),
        v32i32_(llvm::FixedVectorType::get(i32_, kLanes)),
        v32f32_(llvm::FixedVectorType::get(f32_, kLanes)),
        ptr_(llvm::PointerType::get(c_, 0)) {}

  llvm::Function* Emit(uint32_t begin, uint32_t end, const std::string& name) {
    trips_ = BeginFunction(name);
    mask_ = b_.CreateLoad(i32_, FieldOf(offsetof(ExecContext, mask)), "mask");
    std::vector<llvm::Constant*> bits;
    for (int l = 0; l < kLanes; ++l) bits.push_back(b_.getInt32(1u << l));
    active_ = b_.CreateICmpNE(b_.CreateAnd(b_.CreateVectorSplat(kLanes, mask_),
                                           llvm::ConstantVector::get(bits)),
                              llvm::Constant::getNullValue(v32i32_), "active");
    all_active_ = b_.CreateICmpEQ(mask_, b_.getInt32(~0u), "all_active");
    const DecodedInstruction* next =
        end < kernel_.code.size() ? &kernel_.code[end] : nullptr;
    const uint32_t join = IfThenEnd(kernel_, end);
    const bool loop =
        next != nullptr && next->target == begin &&
        (next->flow == Flow::kBranchNonZero || next->flow == Flow::kBranchZero);
    std::vector<std::pair<uint16_t, llvm::PHINode*>> carried;
    if (loop) carried = EnterLoop(begin, end);
    if (!EmitBody(begin, end, begin)) return Discard();
    if (join != 0) {
      if (!EmitIfThen(begin, end, join)) return Discard();
      b_.CreateRet(b_.getInt32(join - begin));
      return fn_;
    }
    if (const uint32_t reconverge = IfElseEnd(kernel_, end); reconverge != 0) {
      if (!EmitIfElse(begin, end, reconverge)) return Discard();
      b_.CreateRet(b_.getInt32(reconverge - begin));
      return fn_;
    }
    if (loop) LeaveLoop(*next, carried);
    // Lanes that exit next read no register again: nothing to write back.
    if (next == nullptr || next->flow != Flow::kExit) Flush();
    StoreProgress();
    b_.CreateRet(b_.getInt32(end - begin));
    return fn_;
  }

  // `phase` as JitPhaseRun: its run and if-then once for each SIMD group,
  // in its own lane file, with every lane active.
  llvm::Function* EmitPhase(const DecodedKernel::Phase& phase,
                            const std::string& name) {
    llvm::Value* arg = BeginFunction(name);
    const auto field = [&](size_t offset) {
      return b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), arg, offset);
    };
    trips_ = field(offsetof(JitPhase, trips));
    done_ = field(offsetof(JitPhase, done));
    counts_ = arg;
    llvm::Value* files =
        b_.CreateLoad(ptr_, field(offsetof(JitPhase, files)), "files");
    llvm::Value* count =
        b_.CreateLoad(i32_, field(offsetof(JitPhase, count)), "count");
    llvm::Value* first =
        b_.CreateLoad(i32_, field(offsetof(JitPhase, first)), "first");
    // Every SIMD group's file holds the same uniforms; a call has at least
    // one SIMD group.
    uniform_file_ = b_.CreateLoad(ptr_, files, "uniform_file");
    OpenSimdGroupLoop();
    EnterSimdGroup(count, phase.end - phase.begin);
    slots_ =
        b_.CreateLoad(ptr_,
                      b_.CreateInBoundsGEP(
                          ptr_, files, b_.CreateZExt(group_, b_.getInt64Ty())),
                      "slots");
    b_.CreateStore(slots_, FieldOf(offsetof(ExecContext, slots)));
    // For the findings of accesses just outside a buffer.
    b_.CreateStore(b_.CreateAdd(first, group_),
                   FieldOf(offsetof(ExecContext, simdgroup)));
    AllLanesActive();
    // Runs, each maybe with an if-then or an if-else after it, up to the
    // barrier or `exit`; every instruction counted under its lanes.
    llvm::Value* all = b_.getInt64(kLanes);
    lanes_ = all;
    count_from_ = phase.begin;
    counted_ = {b_.getInt64(0), b_.getInt64(0)};
    llvm::Value* end_lanes = all;  // the barrier's or exit's
    for (uint32_t at = phase.begin;;) {
      const uint32_t branch = std::max(kernel_.code[at].run_end, at);
      if (!EmitBody(at, branch, phase.begin)) return Discard();
      const uint32_t then_join = IfThenEnd(kernel_, branch);
      const uint32_t join =
          then_join != 0 ? then_join : IfElseEnd(kernel_, branch);
      if (join == 0) break;
      Count(branch + 1);
      if (then_join == 0) {
        if (!EmitIfElse(phase.begin, branch, join)) return Discard();
      } else {
        llvm::Value* mask = EmitIfThen(phase.begin, branch, join);
        if (mask == nullptr) return Discard();
        if (kernel_.code[join].flow == Flow::kExit) {
          // The lanes that skipped the body went to `exit` at the branch
          // (SimdGroup::Run), where some ran it.
          end_lanes = b_.CreateSelect(b_.CreateICmpEQ(mask, b_.getInt32(0)),
                                      all, Popcount(mask));
        }
      }
      count_from_ = join;
      at = join;
    }
    if (kernel_.code[phase.end].flow != Flow::kExit && !cache_.empty()) {
      Flush();
    }
    Count(phase.end);
    AddCounts(b_.CreateAdd(counted_[0], b_.getInt64(1)),
              b_.CreateAdd(counted_[1], end_lanes));
    NextSimdGroup();
    return fn_;
  }

  // EmitPhase: the instructions from count_from_ to `to` counted under
  // lanes_ (in counted_, added to the JitPhase at the SIMD group's end).
  void Count(uint32_t to) {
    llvm::Value* n = b_.getInt64(to - count_from_);
    counted_ = {b_.CreateAdd(counted_[0], n),
                b_.CreateAdd(counted_[1], b_.CreateMul(n, lanes_))};
    count_from_ = to;
  }
  // Adds to the JitPhase's counts of instructions and lane-instructions.
  void AddCounts(llvm::Value* instructions, llvm::Value* lane_instructions) {
    const auto add = [&](size_t offset, llvm::Value* v) {
      llvm::Value* at =
          b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), counts_, offset);
      b_.CreateStore(b_.CreateAdd(b_.CreateLoad(b_.getInt64Ty(), at), v), at);
    };
    add(offsetof(JitPhase, instructions), instructions);
    add(offsetof(JitPhase, lane_instructions), lane_instructions);
  }
  llvm::Value* Popcount(llvm::Value* mask) {
    return b_.CreateZExt(b_.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, mask),
                         b_.getInt64Ty());
  }

  // Every lane active, known when the code is emitted (EmitGroups,
  // EmitPhase: whole SIMD groups).
  void AllLanesActive() {
    mask_ = b_.getInt32(~0u);
    active_ = llvm::ConstantVector::getSplat(
        llvm::ElementCount::getFixed(kLanes), b_.getTrue());
    all_active_ = b_.getTrue();
  }

  // The loop over the SIMD groups of a call (EmitGroups, EmitPhase):
  // opens its header, group_ the SIMD group's number in the call, as the
  // insert point (for more phis); returns the block before it.
  llvm::BasicBlock* OpenSimdGroupLoop() {
    llvm::BasicBlock* entry = b_.GetInsertBlock();
    loop_header_ = llvm::BasicBlock::Create(c_, "simdgroup", fn_);
    b_.CreateBr(loop_header_);
    b_.SetInsertPoint(loop_header_);
    group_ = b_.CreatePHI(i32_, 2, "k");
    group_->addIncoming(b_.getInt32(0), entry);
    return entry;
  }
  // Ends the header: on to the body, the new insert point, while group_ is
  // below `count`; else the progress stored and `result` returned.
  void EnterSimdGroup(llvm::Value* count, uint32_t result) {
    auto* body = llvm::BasicBlock::Create(c_, "body", fn_);
    auto* done = llvm::BasicBlock::Create(c_, "done", fn_);
    b_.CreateCondBr(b_.CreateICmpULT(group_, count), body, done);
    b_.SetInsertPoint(done);
    StoreProgress();
    b_.CreateRet(b_.getInt32(result));
    b_.SetInsertPoint(body);
  }
  // The body's end: round again for the next SIMD group.
  void NextSimdGroup() {
    group_->addIncoming(b_.CreateAdd(group_, b_.getInt32(1)),
                        b_.GetInsertBlock());
    b_.CreateBr(loop_header_);
  }

  // The kernel [0, end) then `exit`, as JitGroupRun: the run once for each
  // SIMD group, with every lane active; null if it reads a special register
  // that WriteSpecials does not know.
  llvm::Function* EmitGroups(uint32_t end, const std::string& name) {
    groups_ = BeginFunction(name);
    done_ = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), groups_,
                                          offsetof(JitGroups, done));
    AllLanesActive();
    // Whether a handler's write-back left registers in the lane file: the
    // next SIMD group's registers start at zero (StartSimdGroup).
    flushed_ = b_.CreateAlloca(b_.getInt1Ty(), nullptr, "flushed");
    b_.CreateStore(b_.getFalse(), flushed_);
    const auto field = [&](size_t offset) {
      return b_.CreateLoad(
          i32_, b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), groups_, offset));
    };
    llvm::Value* first = field(offsetof(JitGroups, first));
    llvm::Value* count = field(offsetof(JitGroups, count));
    llvm::Value* start[3];
    for (int a = 0; a < 3; ++a) {
      start[a] = field(offsetof(JitGroups, position) + 4 * a);
    }
    llvm::Value* width = field(offsetof(JitGroups, size));
    llvm::Value* height = field(offsetof(JitGroups, size) + 4);
    llvm::Value* base[3];
    for (int a = 0; a < 3; ++a)
      base[a] = field(offsetof(JitGroups, base) + 4 * a);

    llvm::BasicBlock* entry = OpenSimdGroupLoop();
    llvm::PHINode* p[3];
    for (int a = 0; a < 3; ++a) {
      p[a] = b_.CreatePHI(i32_, 2);
      p[a]->addIncoming(start[a], entry);
    }
    EnterSimdGroup(count, end);
    ZeroRegistersIfFlushed();
    llvm::Value* simd = b_.CreateAdd(first, group_, "simdgroup_index");
    b_.CreateStore(simd, FieldOf(offsetof(ExecContext, simdgroup)));
    llvm::Value* const at[3] = {p[0], p[1], p[2]};
    if (!WriteSpecials(simd, at, base)) return Discard();
    for (uint16_t r = 0; r < kernel_.layout.uniform_base; ++r) {
      cache_[r] = {Splat(0), false, false};
    }
    if (!EmitBody(0, end, 0)) return Discard();
    // The next SIMD group: 32 lanes on along the row, wrapping into the
    // next row and plane.
    llvm::Value* x = b_.CreateAdd(p[0], b_.getInt32(kLanes));
    llvm::Value* wrap_x = b_.CreateICmpEQ(x, width);
    llvm::Value* y = b_.CreateAdd(p[1], b_.CreateZExt(wrap_x, i32_));
    llvm::Value* wrap_y = b_.CreateICmpEQ(y, height);
    llvm::Value* next[3] = {b_.CreateSelect(wrap_x, b_.getInt32(0), x),
                            b_.CreateSelect(wrap_y, b_.getInt32(0), y),
                            b_.CreateAdd(p[2], b_.CreateZExt(wrap_y, i32_))};
    for (int a = 0; a < 3; ++a) p[a]->addIncoming(next[a], b_.GetInsertBlock());
    NextSimdGroup();
    return fn_;
  }

 private:
  // The function so far removed from the module: the emitter cannot
  // write it.
  llvm::Function* Discard() {
    fn_->eraseFromParent();
    fn_ = nullptr;
    return nullptr;
  }

  // A function (ExecContext*, code, third argument) -> i32 named `name`,
  // with the insert point in its entry block after the lane file's
  // address is loaded; returns its third argument (JitRun's trips,
  // JitGroupRun's groups).
  llvm::Value* BeginFunction(const std::string& name) {
    auto* type = llvm::FunctionType::get(i32_, {ptr_, ptr_, ptr_}, false);
    fn_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name,
                                 module_);
    fn_->addFnAttr(llvm::Attribute::NoUnwind);
    ctx_ = fn_->getArg(0);
    code_ = fn_->getArg(1);
    entry_ = llvm::BasicBlock::Create(c_, "entry", fn_);
    b_.SetInsertPoint(entry_);
    slots_ =
        b_.CreateLoad(ptr_, FieldOf(offsetof(ExecContext, slots)), "slots");
    uniform_file_ = slots_;
    // No handler sets or clears the check during a call.
    unchecked_ = b_.CreateICmpEQ(
        b_.CreateLoad(ptr_, FieldOf(offsetof(ExecContext, memory_checker))),
        llvm::Constant::getNullValue(ptr_), "unchecked");
    return fn_->getArg(2);
  }

  struct Entry {
    llvm::Value* value;
    bool dirty;
    bool raw;  // see Set
  };

  // The loop's header: a phi for the trip count and for each slot whose
  // value the body leaves in a register at its end (written after its
  // last handler call), so that those values go round in registers;
  // every other slot is in the lane file at the back edge.
  std::vector<std::pair<uint16_t, llvm::PHINode*>> EnterLoop(uint32_t begin,
                                                             uint32_t end) {
    std::set<uint16_t> written;
    for (uint32_t pc = begin; pc < end; ++pc) {
      const DecodedInstruction& d = kernel_.code[pc];
      if (!JitInlines(d)) {
        written.clear();  // EmitCall writes everything back
      } else if (d.inst->op != Opcode::kStore) {
        written.insert(d.slot[0]);
      }
    }
    std::vector<std::pair<uint16_t, llvm::Value*>> initial;
    for (uint16_t slot : written) initial.emplace_back(slot, Get(slot));
    cache_.clear();
    // Times round the budget allows: the run and its branch each time (a
    // division by a constant: a multiply).
    limit_ = b_.CreateUDiv(
        b_.CreateLoad(b_.getInt64Ty(), TripsField(offsetof(JitTrips, budget))),
        b_.getInt64(end - begin + 1), "limit");
    llvm::BasicBlock* entry = b_.GetInsertBlock();
    header_ = llvm::BasicBlock::Create(c_, "loop", fn_);
    b_.CreateBr(header_);
    b_.SetInsertPoint(header_);
    llvm::PHINode* count = b_.CreatePHI(b_.getInt64Ty(), 2, "trips");
    count->addIncoming(b_.getInt64(0), entry);
    count_ = count;
    std::vector<std::pair<uint16_t, llvm::PHINode*>> carried;
    for (const auto& [slot, value] : initial) {
      llvm::PHINode* phi = b_.CreatePHI(v32i32_, 2);
      phi->addIncoming(value, entry);
      cache_[slot] = {phi, true, false};
      carried.emplace_back(slot, phi);
    }
    return carried;
  }

  // The back edge: round again while every active lane takes `branch` and
  // the call's limit allows; the branch itself is left to the interpreter.
  void LeaveLoop(
      const DecodedInstruction& branch,
      const std::vector<std::pair<uint16_t, llvm::PHINode*>>& carried) {
    llvm::Value* taken = Takes(branch, true);
    llvm::Value* all =
        b_.CreateUnaryIntrinsic(llvm::Intrinsic::vector_reduce_and,
                                b_.CreateOr(taken, b_.CreateNot(active_)));
    llvm::Value* again =
        b_.CreateAnd(all, b_.CreateICmpULT(count_, limit_), "again");
    std::vector<llvm::Value*> values;
    for (const auto& [slot, phi] : carried) values.push_back(Get(slot));
    llvm::Value* next = b_.CreateAdd(count_, b_.getInt64(1));
    llvm::BasicBlock* latch = b_.GetInsertBlock();
    auto* done = llvm::BasicBlock::Create(c_, "done", fn_);
    b_.CreateCondBr(again, header_, done);
    count_->addIncoming(next, latch);
    for (size_t i = 0; i < carried.size(); ++i) {
      carried[i].second->addIncoming(values[i], latch);
    }
    b_.SetInsertPoint(done);
  }

  // False if an instruction that JitInlines accepts has no inline code
  // here (Inlinable and EmitInline disagree): the caller drops the
  // function, and the kernel runs in the interpreter, rather than leave
  // the instruction's result unwritten.
  // (`origin`: the function's first instruction, from which a fault's
  // index counts.)
  bool EmitBody(uint32_t begin, uint32_t end, uint32_t origin) {
    for (uint32_t pc = begin; pc < end; ++pc) {
      const DecodedInstruction& d = kernel_.code[pc];
      if (JitInlines(d) && d.inst->op != Opcode::kLoad &&
          d.inst->op != Opcode::kStore) {
        if (!EmitInline(d)) return false;
      } else if (JitInlines(d)) {
        // Every value held is live across each access's ways (dense,
        // sparse, gather, the handler's, which writes them all back), so
        // LLVM's time grew with accesses x values: 95 accesses with 60
        // values held took 10 s to compile. Once the values held at each
        // access since the last time sum to kWindow, they are written back
        // and read again after, as around a handler call; runs that hold
        // few values (tile loops) are left as they were.
        window_ += static_cast<int>(cache_.size());
        if (window_ > kWindow) {
          Flush();
          cache_.clear();
          window_ = 0;
        }
        EmitMemory(d, pc, pc - origin);
      } else {
        EmitCall(d, pc, pc - origin);
      }
    }
    return true;
  }

  // After the run [begin, branch): the if-then of IfThenEnd, its body
  // [branch + 1, join) under the active lanes that fall through the
  // branch, leaving the insert point at the join. Returns the body's lanes
  // (i32), null as EmitBody returns false.
  llvm::Value* EmitIfThen(uint32_t begin, uint32_t branch, uint32_t join) {
    const DecodedInstruction& d = kernel_.code[branch];
    b_.CreateStore(b_.getInt32(branch - begin + 1),
                   TripsField(offsetof(JitTrips, head)));
    llvm::Value* active = b_.CreateAnd(active_, Takes(d, false), "then_active");
    llvm::Value* mask = b_.CreateBitCast(active, i32_, "then_mask");
    b_.CreateStore(mask, TripsField(offsetof(JitTrips, body_mask)));
    // Lanes that exit at the join read no register again: nothing to write
    // back. Else what the run changed goes back under its own lanes; the
    // values stay valid in the body, whose lanes are among those.
    const bool exits = kernel_.code[join].flow == Flow::kExit;
    if (!exits) Flush();
    if (!EmitUnder(active, mask, branch + 1, join, begin, exits)) {
      return nullptr;
    }
    // Both ways' values are in the lane file now (or dead, at an exit).
    cache_.clear();
    patterns_.clear();
    return mask;
  }

  // After the run [begin, branch): the if-else of IfElseEnd, as the
  // interpreter runs it: the lanes that take the branch run its target's
  // run up to `join`, then those that fall through run the run before the
  // `br` (which needs no code), leaving the insert point at the join.
  bool EmitIfElse(uint32_t begin, uint32_t branch, uint32_t join) {
    const DecodedInstruction& d = kernel_.code[branch];
    b_.CreateStore(b_.getInt32(branch - begin + 1),
                   TripsField(offsetof(JitTrips, head)));
    llvm::Value* taken = b_.CreateAnd(active_, Takes(d, true), "taken");
    llvm::Value* fell = b_.CreateAnd(active_, Takes(d, false), "fell");
    llvm::Value* taken_mask = b_.CreateBitCast(taken, i32_, "taken_mask");
    llvm::Value* fell_mask = b_.CreateBitCast(fell, i32_, "fell_mask");
    b_.CreateStore(taken_mask, TripsField(offsetof(JitTrips, body_mask)));
    b_.CreateStore(fell_mask, TripsField(offsetof(JitTrips, else_mask)));
    const bool exits = kernel_.code[join].flow == Flow::kExit;
    if (!exits) Flush();
    // The run's values, valid in both ways (their lanes are the run's).
    const std::map<uint16_t, Entry> run = cache_;
    if (!EmitUnder(taken, taken_mask, d.target, join, begin, exits)) {
      return false;
    }
    cache_ = run;
    patterns_.clear();
    if (!EmitUnder(fell, fell_mask, branch + 1, d.target - 1, begin, exits,
                   /*with_br=*/true)) {
      return false;
    }
    cache_.clear();
    patterns_.clear();
    return true;
  }

  // [from, to) under the lanes `active` (their bits `mask`) where there
  // are any, each way's changes written back unless the lanes `exit`
  // next; then on in a block after it, whatever the lanes were. In
  // EmitPhase, counted under those lanes, with the `br` at `to` where
  // `with_br` (an if-else's way that falls through).
  bool EmitUnder(llvm::Value* active, llvm::Value* mask, uint32_t from,
                 uint32_t to, uint32_t origin, bool exits,
                 bool with_br = false) {
    auto* then = llvm::BasicBlock::Create(c_, "then", fn_);
    auto* done = llvm::BasicBlock::Create(c_, "join", fn_);
    llvm::BasicBlock* entry = b_.GetInsertBlock();
    b_.CreateCondBr(b_.CreateICmpNE(mask, b_.getInt32(0)), then, done);

    b_.SetInsertPoint(then);
    llvm::Value* const outer[3] = {mask_, active_, all_active_};
    llvm::Value* ctx_mask = FieldOf(offsetof(ExecContext, mask));
    b_.CreateStore(mask, ctx_mask);  // for the handlers
    mask_ = mask;
    active_ = active;
    all_active_ = b_.CreateICmpEQ(mask, b_.getInt32(~0u), "then_all_active");
    patterns_.clear();  // worked out for the run's lanes
    llvm::Value* const outer_lanes = lanes_;
    const uint32_t outer_from = count_from_;
    const std::array<llvm::Value*, 2> outer_counted = counted_;
    if (counts_ != nullptr) {
      lanes_ = Popcount(mask);
      count_from_ = from;
    }
    if (!EmitBody(from, to, origin)) return false;
    if (!exits) Flush();
    if (counts_ != nullptr) Count(to + with_br);
    b_.CreateStore(outer[0], ctx_mask);
    llvm::BasicBlock* ran = b_.GetInsertBlock();
    b_.CreateBr(done);

    b_.SetInsertPoint(done);
    mask_ = outer[0];
    active_ = outer[1];
    all_active_ = outer[2];
    if (counts_ != nullptr) {
      // What was counted before, and in the way where its lanes ran it.
      for (int k = 0; k < 2; ++k) {
        llvm::PHINode* phi = b_.CreatePHI(b_.getInt64Ty(), 2);
        phi->addIncoming(outer_counted[k], entry);
        phi->addIncoming(counted_[k], ran);
        counted_[k] = phi;
      }
      lanes_ = outer_lanes;
      count_from_ = outer_from;
    }
    return true;
  }

  // Tells the caller how often the loop went round, or how many SIMD
  // groups ran (before a return).
  void StoreProgress() {
    if (group_ != nullptr) b_.CreateStore(group_, done_);
    if (count_ == nullptr) return;
    b_.CreateStore(count_, TripsField(offsetof(JitTrips, taken)));
  }

  // EmitGroups: the registers back to zero where the SIMD group before
  // wrote some to the lane file.
  void ZeroRegistersIfFlushed() {
    const uint64_t bytes = uint64_t{kernel_.layout.uniform_base} * kLanes * 4;
    if (bytes == 0) return;
    auto* zero = llvm::BasicBlock::Create(c_, "zero_registers", fn_);
    auto* go = llvm::BasicBlock::Create(c_, "go", fn_);
    b_.CreateCondBr(b_.CreateLoad(b_.getInt1Ty(), flushed_), zero, go);
    b_.SetInsertPoint(zero);
    b_.CreateMemSet(slots_, b_.getInt8(0), bytes, llvm::Align(4));
    b_.CreateStore(b_.getFalse(), flushed_);
    b_.CreateBr(go);
    b_.SetInsertPoint(go);
  }

  // EmitGroups: the special registers that differ between the SIMD groups
  // of a threadgroup, for SIMD group `simd` whose lane 0 is at `p`, into
  // the lane file (for handlers) and the value cache. The others are the
  // same for all and StartSimdGroup wrote them. False if one that differs
  // is not known here.
  bool WriteSpecials(llvm::Value* simd, llvm::Value* const p[3],
                     llvm::Value* const base[3]) {
    using isa::SpecialRegister;
    const SlotLayout& layout = kernel_.layout;
    llvm::Value* iota = Steps(1, i32_);
    // Along x, and in thread index order, lane l is lane 0's value + l.
    const auto counting = [&](llvm::Value* first) {
      llvm::Value* v = b_.CreateAdd(b_.CreateVectorSplat(kLanes, first), iota);
      counting_[v] = first;
      return v;
    };
    const auto row = [&](int axis) -> llvm::Value* {
      return axis == 0 ? counting(p[axis])
                       : b_.CreateVectorSplat(kLanes, p[axis]);
    };
    const auto in_grid = [&](int axis) {
      llvm::Value* first = b_.CreateAdd(p[axis], base[axis]);
      return axis == 0 ? counting(first) : b_.CreateVectorSplat(kLanes, first);
    };
    const auto index = [&] {
      return counting(b_.CreateMul(simd, b_.getInt32(kLanes)));
    };
    for (size_t s = 0; s < layout.specials.size(); ++s) {
      llvm::Value* v = nullptr;
      switch (layout.specials[s]) {
        case SpecialRegister::kThreadPositionInGridX:
          v = in_grid(0);
          break;
        case SpecialRegister::kThreadPositionInGridY:
          v = in_grid(1);
          break;
        case SpecialRegister::kThreadPositionInGridZ:
          v = in_grid(2);
          break;
        case SpecialRegister::kThreadPositionInThreadgroupX:
          v = row(0);
          break;
        case SpecialRegister::kThreadPositionInThreadgroupY:
          v = row(1);
          break;
        case SpecialRegister::kThreadPositionInThreadgroupZ:
          v = row(2);
          break;
        case SpecialRegister::kThreadIndexInThreadgroup:
          v = index();
          break;
        case SpecialRegister::kQuadgroupIndexInThreadgroup:
          v = b_.CreateLShr(index(), Splat(2));
          break;
        case SpecialRegister::kSimdgroupIndexInThreadgroup:
          v = b_.CreateVectorSplat(kLanes, simd);
          break;
        default:
          // The same in every SIMD group of a threadgroup (the table's
          // varies_per_simdgroup column), unless a row that varies has no
          // case here.
          if (isa::VariesPerSimdgroup(layout.specials[s])) return false;
          break;
      }
      if (v == nullptr) continue;
      // Written to the lane file only where a handler may read it (Flush,
      // WriteBack).
      const uint16_t slot = static_cast<uint16_t>(layout.special_base + s);
      cache_[slot] = {v, true, false};
    }
    return true;
  }

  // The lanes where conditional `branch` goes to its target (`taken`), or
  // falls through (not `taken`), as <32 x i1>.
  llvm::Value* Takes(const DecodedInstruction& branch, bool taken) {
    llvm::Value* c = Get(branch.slot[0]);
    return (branch.flow == Flow::kBranchNonZero) == taken
               ? b_.CreateICmpNE(c, Splat(0))
               : b_.CreateICmpEQ(c, Splat(0));
  }

  llvm::Value* TripsField(size_t offset) {
    return b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), trips_, offset);
  }
  llvm::Value* FieldOf(size_t offset) {
    return b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), ctx_, offset);
  }
  llvm::Value* SlotAddress(uint16_t slot) {
    return b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), slots_,
                                         uint64_t{slot} * kLanes * 4);
  }

  // r = a + c (a - c with `sub`) counts on from lane to lane where a does
  // and c is the same in every lane (and for an add, the other way round).
  void CountOn(llvm::Value* r, llvm::Value* a, llvm::Value* c, bool sub) {
    for (int swap = 0; swap < (sub ? 1 : 2); ++swap) {
      const auto known = counting_.find(swap ? c : a);
      llvm::Value* step = llvm::getSplatValue(swap ? a : c);
      if (known == counting_.end() || step == nullptr) continue;
      counting_[r] = sub ? b_.CreateSub(known->second, step)
                         : b_.CreateAdd(known->second, step);
      return;
    }
  }

  // A slot's 32 lanes as <32 x i32>: the value this run computed for it,
  // an immediate as a constant, else loaded. Raw values (below) are made
  // canonical here, in the current block; call it where every later use
  // is dominated.
  llvm::Value* Get(uint16_t slot) {
    Entry& e = Lookup(slot);
    if (e.raw) {
      e.value = Canonical(e.value);
      e.raw = false;
    }
    return e.value;
  }
  // For float arithmetic and comparisons: the value with its NaNs as they
  // came (NaN or not is all they look at).
  llvm::Value* GetRawF(uint16_t slot) {
    return b_.CreateBitCast(Lookup(slot).value, v32f32_);
  }
  Entry& Lookup(uint16_t slot) {
    const auto it = cache_.find(slot);
    if (it != cache_.end()) return it->second;
    const SlotLayout& layout = kernel_.layout;
    llvm::Value* v;
    if (slot >= layout.immediate_base &&
        static_cast<size_t>(slot - layout.immediate_base) <
            layout.immediates.size()) {
      v = Splat(layout.immediates[slot - layout.immediate_base]);
    } else if (IsUniform(slot)) {
      v = b_.CreateVectorSplat(kLanes, UniformWord(slot));
    } else {
      v = b_.CreateAlignedLoad(v32i32_, SlotAddress(slot), llvm::Align(4));
    }
    return cache_[slot] = {v, false, false};
  }
  // `raw`: a float result of add, sub, mul or fma whose NaNs are not made
  // canonical yet. Those operations give NaN exactly when an operand is
  // NaN or the operation is invalid, whatever the NaNs' bits, so a chain
  // of them is made canonical once, where its bits are looked at:
  // sem::CanonicalNaN for each, as the interpreter does, costs two vector
  // instructions per instruction.
  void Set(uint16_t slot, llvm::Value* v, bool raw = false) {
    if (v->getType() != v32i32_) v = b_.CreateBitCast(v, v32i32_);
    cache_[slot] = {v, true, raw};
  }

  // Writes the values this run changed back, active lanes only.
  void Flush() {
    for (auto& [slot, entry] : cache_) {
      if (entry.raw) Get(slot);
    }
    WriteBack();
    for (auto& [slot, entry] : cache_) entry.dirty = false;
  }

  // A float result that is NaN becomes the canonical quiet NaN
  // (sem::CanonicalNaN).
  llvm::Value* Canonical(llvm::Value* r) {
    if (r->getType() != v32f32_) r = b_.CreateBitCast(r, v32f32_);
    return b_.CreateSelect(b_.CreateFCmpUNO(r, r), Splat(0x7fc00000u),
                           b_.CreateBitCast(r, v32i32_));
  }
  llvm::Value* Splat(uint32_t v) {
    return llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(kLanes),
                                          b_.getInt32(v));
  }

  // The instruction as vector code; false if it has none here.
  bool EmitInline(const DecodedInstruction& d) {
    const Opcode op = d.inst->op;
    const ScalarType t = d.inst->type;
    const bool f = t == ScalarType::kFloat;
    const bool s = t == ScalarType::kInt;
    const uint16_t* o = d.slot;
    switch (op) {
      case Opcode::kMov: {
        const Entry e = Lookup(o[1]);  // a copy, raw or not
        Set(o[0], e.value, e.raw);
        return true;
      }
      case Opcode::kAdd:
      case Opcode::kSub:
      case Opcode::kMul:
        if (f) {
          llvm::Value* a = GetRawF(o[1]);
          llvm::Value* c = GetRawF(o[2]);
          Set(o[0],
              op == Opcode::kAdd   ? b_.CreateFAdd(a, c)
              : op == Opcode::kSub ? b_.CreateFSub(a, c)
                                   : b_.CreateFMul(a, c),
              /*raw=*/true);
        } else {
          llvm::Value* a = Get(o[1]);
          llvm::Value* c = Get(o[2]);
          llvm::Value* r = op == Opcode::kAdd   ? b_.CreateAdd(a, c)
                           : op == Opcode::kSub ? b_.CreateSub(a, c)
                                                : b_.CreateMul(a, c);
          if (op != Opcode::kMul) CountOn(r, a, c, op == Opcode::kSub);
          Set(o[0], r);
        }
        return true;
      case Opcode::kFma:
        Set(o[0],
            b_.CreateIntrinsic(llvm::Intrinsic::fma, {v32f32_},
                               {GetRawF(o[1]), GetRawF(o[2]), GetRawF(o[3])}),
            /*raw=*/true);
        return true;
      case Opcode::kMad:
        Set(o[0], b_.CreateAdd(b_.CreateMul(Get(o[1]), Get(o[2])), Get(o[3])));
        return true;
      case Opcode::kMin:
      case Opcode::kMax: {
        const bool min = op == Opcode::kMin;
        llvm::Value* a = Get(o[1]);
        llvm::Value* c = Get(o[2]);
        if (!f) {
          llvm::Value* pick_a =
              min ? (s ? b_.CreateICmpSLT(a, c) : b_.CreateICmpULT(a, c))
                  : (s ? b_.CreateICmpSGT(a, c) : b_.CreateICmpUGT(a, c));
          Set(o[0], b_.CreateSelect(pick_a, a, c));
          return true;
        }
        // A NaN operand gives the other one; else a < b ? a : b (max:
        // a > b), the operands' bits unchanged.
        llvm::Value* fa = b_.CreateBitCast(a, v32f32_);
        llvm::Value* fc = b_.CreateBitCast(c, v32f32_);
        llvm::Value* r = b_.CreateSelect(
            min ? b_.CreateFCmpOLT(fa, fc) : b_.CreateFCmpOGT(fa, fc), a, c);
        r = b_.CreateSelect(b_.CreateFCmpUNO(fc, fc), a, r);
        r = b_.CreateSelect(b_.CreateFCmpUNO(fa, fa), c, r);
        Set(o[0], r);
        return true;
      }
      case Opcode::kAbs: {
        llvm::Value* a = Get(o[1]);
        if (f) {
          Set(o[0], b_.CreateAnd(a, Splat(0x7fffffffu)));
        } else if (s) {
          Set(o[0], b_.CreateSelect(b_.CreateICmpSLT(a, Splat(0)),
                                    b_.CreateSub(Splat(0), a), a));
        } else {
          Set(o[0], a);
        }
        return true;
      }
      case Opcode::kNeg:
        Set(o[0], f ? b_.CreateXor(Get(o[1]), Splat(0x80000000u))
                    : b_.CreateSub(Splat(0), Get(o[1])));
        return true;
      case Opcode::kAnd:
        Set(o[0], b_.CreateAnd(Get(o[1]), Get(o[2])));
        return true;
      case Opcode::kOr:
        Set(o[0], b_.CreateOr(Get(o[1]), Get(o[2])));
        return true;
      case Opcode::kXor:
        Set(o[0], b_.CreateXor(Get(o[1]), Get(o[2])));
        return true;
      case Opcode::kNot:
        Set(o[0], b_.CreateNot(Get(o[1])));
        return true;
      case Opcode::kShl:
      case Opcode::kShr: {
        // Shift amounts are taken modulo 32.
        llvm::Value* amount = b_.CreateAnd(Get(o[2]), Splat(31));
        llvm::Value* a = Get(o[1]);
        Set(o[0], op == Opcode::kShl ? b_.CreateShl(a, amount)
                  : s                ? b_.CreateAShr(a, amount)
                                     : b_.CreateLShr(a, amount));
        return true;
      }
      case Opcode::kEq:
      case Opcode::kNe:
      case Opcode::kLt:
      case Opcode::kLe:
      case Opcode::kGt:
      case Opcode::kGe: {
        llvm::CmpInst::Predicate p;
        switch (op) {
          case Opcode::kEq:
            p = f ? llvm::CmpInst::FCMP_OEQ : llvm::CmpInst::ICMP_EQ;
            break;
          case Opcode::kNe:  // true when either is NaN
            p = f ? llvm::CmpInst::FCMP_UNE : llvm::CmpInst::ICMP_NE;
            break;
          case Opcode::kLt:
            p = f ? llvm::CmpInst::FCMP_OLT
                  : (s ? llvm::CmpInst::ICMP_SLT : llvm::CmpInst::ICMP_ULT);
            break;
          case Opcode::kLe:
            p = f ? llvm::CmpInst::FCMP_OLE
                  : (s ? llvm::CmpInst::ICMP_SLE : llvm::CmpInst::ICMP_ULE);
            break;
          case Opcode::kGt:
            p = f ? llvm::CmpInst::FCMP_OGT
                  : (s ? llvm::CmpInst::ICMP_SGT : llvm::CmpInst::ICMP_UGT);
            break;
          default:
            p = f ? llvm::CmpInst::FCMP_OGE
                  : (s ? llvm::CmpInst::ICMP_SGE : llvm::CmpInst::ICMP_UGE);
            break;
        }
        llvm::Value* a = f ? GetRawF(o[1]) : Get(o[1]);
        llvm::Value* c = f ? GetRawF(o[2]) : Get(o[2]);
        Set(o[0], b_.CreateZExt(b_.CreateCmp(p, a, c), v32i32_));
        return true;
      }
      case Opcode::kSelect:
        Set(o[0], b_.CreateSelect(b_.CreateICmpNE(Get(o[1]), Splat(0)),
                                  Get(o[2]), Get(o[3])));
        return true;
      default:
        return false;
    }
  }

  // A handler call: the run's values written back first, read again after
  // (the handler may write any slot); a fault ends the run.
  void EmitCall(const DecodedInstruction& d, uint32_t pc, uint32_t index) {
    Flush();
    cache_.clear();
    window_ = 0;
    CallHandler(d, pc, index);
  }

  void CallHandler(const DecodedInstruction& d, uint32_t pc, uint32_t index) {
    auto* type = llvm::FunctionType::get(b_.getVoidTy(), {ptr_, ptr_}, false);
    b_.CreateCall(type, Address(reinterpret_cast<uint64_t>(d.fn)),
                  {ctx_, b_.CreateConstInBoundsGEP1_64(
                             b_.getInt8Ty(), code_,
                             uint64_t{pc} * sizeof(DecodedInstruction))});
    if (d.flow != Flow::kMayFault) return;
    llvm::Value* faulted =
        b_.CreateLoad(b_.getInt8Ty(), FieldOf(offsetof(ExecContext, faulted)));
    auto* fault = llvm::BasicBlock::Create(c_, "fault", fn_);
    auto* next = llvm::BasicBlock::Create(c_, "next", fn_);
    LikelyBr(b_.CreateICmpEQ(faulted, b_.getInt8(0)), next, fault);
    b_.SetInsertPoint(fault);
    if (counts_ != nullptr) {
      // EmitPhase: the instructions up to this one, it included.
      const uint64_t n = pc + 1 - count_from_;
      AddCounts(
          b_.CreateAdd(counted_[0], b_.getInt64(n)),
          b_.CreateAdd(counted_[1], b_.CreateMul(b_.getInt64(n), lanes_)));
    }
    StoreProgress();
    b_.CreateRet(b_.getInt32(index));
    b_.SetInsertPoint(next);
  }

  // A branch to `likely` nearly always: the other way's code is laid out
  // and its registers spilled away from the hot path.
  void LikelyBr(llvm::Value* condition, llvm::BasicBlock* likely,
                llvm::BasicBlock* unlikely) {
    b_.CreateCondBr(condition, likely, unlikely,
                    llvm::MDBuilder(c_).createBranchWeights(1 << 20, 1));
  }

  llvm::Value* Address(uint64_t a) {
    return llvm::ConstantExpr::getIntToPtr(b_.getInt64(a), ptr_);
  }

  // A uniform's value (the same in every lane): lane 0's.
  bool IsUniform(uint16_t slot) const {
    return slot >= kernel_.layout.uniform_base &&
           slot < kernel_.layout.special_base;
  }
  // Uniforms are read-only: read once, in the entry block (AtEntry).
  llvm::Value* UniformWord(uint16_t slot) {
    llvm::Value*& word = uniform_words_[slot];
    if (word == nullptr) {
      llvm::IRBuilder<> entry = AtEntry();
      word = entry.CreateAlignedLoad(
          i32_,
          entry.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), uniform_file_,
                                           uint64_t{slot} * kLanes * 4),
          llvm::Align(4));
    }
    return word;
  }
  // A device base pair that is a uniform pair, as one i64; else null.
  llvm::Value* UniformBase(const DecodedMemoryRef& mem) {
    if (mem.base == kNoSlot || !IsUniform(mem.base) ||
        !IsUniform(mem.base + 1)) {
      return nullptr;
    }
    llvm::Value*& base = uniform_bases_[mem.base];
    if (base == nullptr) {
      llvm::Value* lo = UniformWord(mem.base);
      llvm::Value* hi = UniformWord(mem.base + 1);
      llvm::IRBuilder<> entry = AtEntry();
      base = entry.CreateOr(
          entry.CreateZExt(lo, b_.getInt64Ty()),
          entry.CreateShl(entry.CreateZExt(hi, b_.getInt64Ty()), 32));
    }
    return base;
  }
  // A builder at the end of the entry block, before its branch if it has
  // one: what it writes is seen everywhere in the function.
  llvm::IRBuilder<> AtEntry() {
    llvm::Instruction* end = entry_->getTerminator();
    return llvm::IRBuilder<>(
        entry_, end != nullptr ? end->getIterator() : entry_->end());
  }

  // Device lanes' byte addresses as LaneAddress computes them, <32 x i64>
  // (threadgroup offsets: PatternOf).
  llvm::Value* DeviceAddresses(const DecodedMemoryRef& mem) {
    auto* v64 = llvm::FixedVectorType::get(b_.getInt64Ty(), kLanes);
    llvm::Value* a = llvm::ConstantVector::getSplat(
        llvm::ElementCount::getFixed(kLanes),
        b_.getInt64(static_cast<uint64_t>(int64_t{mem.displacement})));
    if (llvm::Value* base = UniformBase(mem)) {
      a = b_.CreateAdd(a, b_.CreateVectorSplat(kLanes, base));
    } else if (mem.base != kNoSlot) {
      llvm::Value* lo = b_.CreateZExt(Get(mem.base), v64);
      llvm::Value* hi = b_.CreateZExt(Get(mem.base + 1), v64);
      a = b_.CreateAdd(a, b_.CreateOr(lo, b_.CreateShl(hi, SplatOf(v64, 32))));
    }
    if (mem.index != kNoSlot) {
      llvm::Value* index = mem.index_signed
                               ? b_.CreateSExt(Get(mem.index), v64)
                               : b_.CreateZExt(Get(mem.index), v64);
      a = b_.CreateAdd(a, b_.CreateMul(index, SplatOf(v64, mem.scale)));
    }
    return a;
  }
  llvm::Value* SplatOf(llvm::FixedVectorType* type, uint64_t v) {
    return llvm::ConstantVector::getSplat(
        llvm::ElementCount::getFixed(kLanes),
        llvm::ConstantInt::get(type->getElementType(), v));
  }
  llvm::Value* Steps(uint64_t step, llvm::Type* element) {
    std::vector<llvm::Constant*> steps;
    for (int l = 0; l < kLanes; ++l) {
      steps.push_back(llvm::ConstantInt::get(element, step * l));
    }
    return llvm::ConstantVector::get(steps);
  }
  llvm::Value* AllOf(llvm::Value* lanes) {
    return b_.CreateUnaryIntrinsic(llvm::Intrinsic::vector_reduce_and, lanes);
  }

  // The active lanes' threadgroup offsets before the displacement, for
  // one base and index value: their range and, with every lane active,
  // whether they are consecutive words, the same 16 in both halves (two
  // rows of a 16-wide threadgroup), or one word per half.
  struct LanePattern {
    llvm::Value* offsets;
    llvm::Value* lowest;
    llvm::Value* highest;
    llvm::Value* consecutive;
    llvm::Value* same_halves;
    llvm::Value* uniform_halves;
  };
  const LanePattern& PatternOf(const DecodedMemoryRef& mem) {
    llvm::Value* base = mem.base == kNoSlot ? nullptr : Get(mem.base);
    llvm::Value* index = mem.index == kNoSlot ? nullptr : Get(mem.index);
    const auto key = std::make_tuple(base, index, mem.scale);
    const auto it = patterns_.find(key);
    if (it != patterns_.end()) return it->second;
    llvm::Value* a = Splat(0);
    if (base != nullptr) a = base;
    if (index != nullptr) {
      a = b_.CreateAdd(a, b_.CreateMul(index, Splat(mem.scale)));
    }
    LanePattern p;
    p.offsets = a;
    p.lowest = b_.CreateUnaryIntrinsic(llvm::Intrinsic::vector_reduce_umin,
                                       b_.CreateSelect(active_, a, Splat(~0u)));
    p.highest = b_.CreateUnaryIntrinsic(llvm::Intrinsic::vector_reduce_umax,
                                        b_.CreateSelect(active_, a, Splat(0)));
    llvm::Value* a0 =
        b_.CreateVectorSplat(kLanes, b_.CreateExtractElement(a, uint64_t{0}));
    std::vector<llvm::Constant*> row_steps;
    std::vector<int> halves;
    for (int l = 0; l < kLanes; ++l) {
      row_steps.push_back(b_.getInt32(4 * (l % (kLanes / 2))));
      halves.push_back(l < kLanes / 2 ? 0 : kLanes / 2);
    }
    const auto all_equal = [&](llvm::Value* expected) {
      return b_.CreateAnd(all_active_, AllOf(b_.CreateICmpEQ(a, expected)));
    };
    p.consecutive = all_equal(b_.CreateAdd(a0, Steps(4, i32_)));
    p.same_halves =
        all_equal(b_.CreateAdd(a0, llvm::ConstantVector::get(row_steps)));
    p.uniform_halves = all_equal(b_.CreateShuffleVector(a, a, halves));
    return patterns_[key] = p;
  }

  // A way through a memory instruction, ending in the merge block: the
  // loaded value (null for a store) and the block it comes from.
  using Incoming = std::vector<std::pair<llvm::Value*, llvm::BasicBlock*>>;

  // One vector load or store of the 32 words at `host`, then to `merge`.
  void EmitDense(bool load, llvm::Value* host, llvm::Value* stored,
                 llvm::BasicBlock* merge, Incoming& incoming) {
    if (load) {
      incoming.emplace_back(b_.CreateAlignedLoad(v32i32_, host, llvm::Align(1)),
                            b_.GetInsertBlock());
    } else {
      b_.CreateAlignedStore(stored, host, llvm::Align(1));
    }
    b_.CreateBr(merge);
  }

  // ld/st of a 32-bit element per lane in device or threadgroup memory:
  // with every active lane in bounds and no check on, a vector access
  // (all 32 lanes active at consecutive words: a coalesced access) or a
  // gather or scatter (lanes in lane order, as the handler stores them);
  // else the handler, which faults where the interpreter does.
  void EmitMemory(const DecodedInstruction& d, uint32_t pc, uint32_t index) {
    const bool load = d.inst->op == Opcode::kLoad;
    const DecodedMemoryRef& mem = d.mem;
    // Operands read here, where every way below sees them.
    llvm::Value* stored = load ? nullptr : Get(d.slot[1]);
    llvm::Value* unchecked = unchecked_;
    auto* merge = llvm::BasicBlock::Create(c_, "merge", fn_);
    auto* slow = llvm::BasicBlock::Create(c_, "slow", fn_);
    Incoming incoming;
    llvm::Value* host;              // where offset 0 is
    llvm::Value* pointers;          // each lane's, for a gather or scatter
    llvm::Value* first;             // lane 0's offset from host
    llvm::Value* second = nullptr;  // lane 16's offset (threadgroup)
    llvm::Value* in_bounds;
    llvm::Value* consecutive;
    const LanePattern* pattern = nullptr;  // threadgroup accesses
    if (mem.wide_base) {
      llvm::Value* base = UniformBase(mem);
      if (base != nullptr && mem.index != kNoSlot && mem.scale == 4) {
        // A uniform base and consecutive indices (a[i] with i the thread's
        // position): the span's first address and one region look-up,
        // without the lanes' 64-bit addresses.
        llvm::Value* indices = Get(mem.index);
        llvm::Value* index0;
        llvm::Value* steps;
        if (const auto known = counting_.find(indices);
            known != counting_.end()) {
          index0 = known->second;
          steps = b_.getTrue();
        } else {
          index0 = b_.CreateExtractElement(indices, uint64_t{0});
          steps = AllOf(b_.CreateICmpEQ(
              indices, b_.CreateAdd(b_.CreateVectorSplat(kLanes, index0),
                                    Steps(1, i32_))));
        }
        llvm::Value* no_wrap =
            mem.index_signed
                ? b_.CreateICmpSLE(index0, b_.getInt32(INT32_MAX - kLanes))
                : b_.CreateICmpULE(index0, b_.getInt32(UINT32_MAX - kLanes));
        auto* span = llvm::BasicBlock::Create(c_, "span", fn_);
        auto* general = llvm::BasicBlock::Create(c_, "general", fn_);
        LikelyBr(b_.CreateAnd(b_.CreateAnd(unchecked, all_active_),
                              b_.CreateAnd(no_wrap, steps)),
                 span, general);
        b_.SetInsertPoint(span);
        llvm::Value* index64 = mem.index_signed
                                   ? b_.CreateSExt(index0, b_.getInt64Ty())
                                   : b_.CreateZExt(index0, b_.getInt64Ty());
        llvm::Value* lowest =
            b_.CreateAdd(b_.CreateAdd(base, b_.getInt64(static_cast<uint64_t>(
                                                int64_t{mem.displacement}))),
                         b_.CreateShl(index64, 2));
        llvm::Value* region_length = nullptr;
        llvm::Value* span_host =
            DeviceSpan(lowest, b_.getInt64(4 * kLanes),
                       load || !kStreamedStores ? nullptr : &region_length);
        auto* dense = llvm::BasicBlock::Create(c_, "dense", fn_);
        LikelyBr(b_.CreateICmpNE(span_host, llvm::Constant::getNullValue(ptr_)),
                 dense, general);
        b_.SetInsertPoint(dense);
        if (region_length != nullptr) {
          EmitSpanStore(span_host, stored, region_length, merge);
        } else {
          EmitDense(load, span_host, stored, merge, incoming);
        }
        b_.SetInsertPoint(general);
      }
      // One device region holds the active lanes' span (SpanOf).
      auto* v64 = llvm::FixedVectorType::get(b_.getInt64Ty(), kLanes);
      llvm::Value* address = DeviceAddresses(mem);
      llvm::Value* lowest = b_.CreateUnaryIntrinsic(
          llvm::Intrinsic::vector_reduce_umin,
          b_.CreateSelect(active_, address, SplatOf(v64, ~uint64_t{0})));
      llvm::Value* highest = b_.CreateUnaryIntrinsic(
          llvm::Intrinsic::vector_reduce_umax,
          b_.CreateSelect(active_, address, SplatOf(v64, 0)));
      llvm::Value* end = b_.CreateAdd(highest, b_.getInt64(4));
      host = DeviceSpan(lowest, b_.CreateSub(end, lowest));
      in_bounds = b_.CreateAnd(
          b_.CreateICmpUGE(end, highest),
          b_.CreateICmpNE(host, llvm::Constant::getNullValue(ptr_)));
      llvm::Value* offsets =
          b_.CreateSub(address, b_.CreateVectorSplat(kLanes, lowest));
      first = b_.CreateExtractElement(offsets, uint64_t{0});
      consecutive = AllOf(b_.CreateICmpEQ(
          offsets, b_.CreateAdd(b_.CreateVectorSplat(kLanes, first),
                                Steps(4, b_.getInt64Ty()))));
      pointers = b_.CreateGEP(b_.getInt8Ty(), host, offsets);
    } else {
      // Threadgroup offsets are 32 bits. The lanes' offsets before the
      // displacement, their range and their shape are worked out once per
      // base and index value (PatternOf); each access adds its
      // displacement to the range.
      host = b_.CreateLoad(ptr_,
                           FieldOf(offsetof(ExecContext, threadgroup_memory)));
      llvm::Value* size = b_.CreateZExt(
          b_.CreateLoad(
              i32_, FieldOf(offsetof(ExecContext, threadgroup_memory_size))),
          b_.getInt64Ty());
      pattern = &PatternOf(mem);
      llvm::Value* displacement =
          b_.getInt64(static_cast<uint64_t>(int64_t{mem.displacement}));
      llvm::Value* lo = b_.CreateAdd(
          b_.CreateZExt(pattern->lowest, b_.getInt64Ty()), displacement);
      llvm::Value* hi = b_.CreateAdd(
          b_.CreateZExt(pattern->highest, b_.getInt64Ty()), displacement);
      in_bounds = b_.CreateAnd(
          b_.CreateICmpSGE(lo, b_.getInt64(0)),
          b_.CreateICmpULE(b_.CreateAdd(hi, b_.getInt64(4)), size));
      // In bounds, every active offset is below 2^16: no lane wraps, and a
      // gather's signed 32-bit indices are right.
      llvm::Value* offsets = b_.CreateAdd(
          pattern->offsets, Splat(static_cast<uint32_t>(mem.displacement)));
      first = b_.CreateZExt(b_.CreateExtractElement(offsets, uint64_t{0}),
                            b_.getInt64Ty());
      second =
          b_.CreateZExt(b_.CreateExtractElement(offsets, uint64_t{kLanes / 2}),
                        b_.getInt64Ty());
      consecutive = pattern->consecutive;
      pointers = b_.CreateGEP(b_.getInt8Ty(), host, offsets);
    }
    auto* fast = llvm::BasicBlock::Create(c_, "fast", fn_);
    LikelyBr(b_.CreateAnd(unchecked, in_bounds), fast, slow);

    b_.SetInsertPoint(fast);
    auto* dense = llvm::BasicBlock::Create(c_, "dense", fn_);
    auto* sparse = llvm::BasicBlock::Create(c_, "sparse", fn_);
    b_.CreateCondBr(b_.CreateAnd(all_active_, consecutive), dense, sparse);
    b_.SetInsertPoint(dense);
    EmitDense(load, b_.CreateGEP(b_.getInt8Ty(), host, first), stored, merge,
              incoming);

    b_.SetInsertPoint(sparse);
    if (load && pattern != nullptr) {
      // Two rows of 16 lanes (a 16-wide threadgroup): the same 16 words
      // in each half, or one word per half.
      auto* v16i32 = llvm::FixedVectorType::get(i32_, kLanes / 2);
      auto* rows = llvm::BasicBlock::Create(c_, "rows", fn_);
      auto* not_rows = llvm::BasicBlock::Create(c_, "not_rows", fn_);
      auto* words = llvm::BasicBlock::Create(c_, "words", fn_);
      auto* gather = llvm::BasicBlock::Create(c_, "gather", fn_);
      b_.CreateCondBr(pattern->same_halves, rows, not_rows);
      b_.SetInsertPoint(rows);
      llvm::Value* row = b_.CreateAlignedLoad(
          v16i32, b_.CreateGEP(b_.getInt8Ty(), host, first), llvm::Align(1));
      std::vector<int> twice;
      for (int l = 0; l < kLanes; ++l) twice.push_back(l % (kLanes / 2));
      incoming.emplace_back(b_.CreateShuffleVector(row, row, twice), rows);
      b_.CreateBr(merge);
      b_.SetInsertPoint(not_rows);
      b_.CreateCondBr(pattern->uniform_halves, words, gather);
      b_.SetInsertPoint(words);
      llvm::Value* low = b_.CreateAlignedLoad(
          i32_, b_.CreateGEP(b_.getInt8Ty(), host, first), llvm::Align(1));
      llvm::Value* high = b_.CreateAlignedLoad(
          i32_, b_.CreateGEP(b_.getInt8Ty(), host, second), llvm::Align(1));
      llvm::Value* pair = b_.CreateInsertElement(
          b_.CreateInsertElement(llvm::PoisonValue::get(v32i32_), low,
                                 uint64_t{0}),
          high, uint64_t{1});
      std::vector<int> halves;
      for (int l = 0; l < kLanes; ++l) halves.push_back(l < kLanes / 2 ? 0 : 1);
      incoming.emplace_back(b_.CreateShuffleVector(pair, pair, halves), words);
      b_.CreateBr(merge);
      b_.SetInsertPoint(gather);
    }
    if (load) {
      incoming.emplace_back(
          b_.CreateMaskedGather(v32i32_, pointers, llvm::Align(1), active_,
                                llvm::Constant::getNullValue(v32i32_)),
          b_.GetInsertBlock());
    } else {
      b_.CreateMaskedScatter(stored, pointers, llvm::Align(1), active_);
    }
    b_.CreateBr(merge);

    // The handler reads its operands from the lane file: write back what
    // this run changed (the values stay valid: a load changes only its
    // destination, a store none), and read a load's destination after.
    b_.SetInsertPoint(slow);
    WriteBack();
    CallHandler(d, pc, index);
    if (load) {
      incoming.emplace_back(
          b_.CreateAlignedLoad(v32i32_, SlotAddress(d.slot[0]), llvm::Align(4)),
          b_.GetInsertBlock());
    }
    b_.CreateBr(merge);

    b_.SetInsertPoint(merge);
    if (load) {
      llvm::PHINode* value =
          b_.CreatePHI(v32i32_, static_cast<unsigned>(incoming.size()));
      for (const auto& [v, from] : incoming) value->addIncoming(v, from);
      Set(d.slot[0], value);
    }
  }

  // The host address of [lowest, lowest + length) where one device region
  // holds it, else null: this memory instruction's JitRegion when it holds
  // the span, else DeviceSpanHost. With `region_length`, that region's
  // length too (meaningful where the address is not null).
  llvm::Value* DeviceSpan(llvm::Value* lowest, llvm::Value* length,
                          llvm::Value** region_length = nullptr) {
    const uint32_t cache = next_region_++ % kJitRegions;
    llvm::Value* entry =
        FieldOf(offsetof(ExecContext, jit_regions) + cache * sizeof(JitRegion));
    auto* i64 = b_.getInt64Ty();
    llvm::Value* base = b_.CreateLoad(
        i64, b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), entry,
                                           offsetof(JitRegion, base)));
    llvm::Value* size = b_.CreateLoad(
        i64, b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), entry,
                                           offsetof(JitRegion, length)));
    llvm::Value* offset = b_.CreateSub(lowest, base);
    llvm::Value* hit =
        b_.CreateAnd(b_.CreateICmpULE(offset, size),
                     b_.CreateICmpULE(length, b_.CreateSub(size, offset)));
    auto* found = llvm::BasicBlock::Create(c_, "region_hit", fn_);
    auto* miss = llvm::BasicBlock::Create(c_, "region_miss", fn_);
    auto* join = llvm::BasicBlock::Create(c_, "region", fn_);
    LikelyBr(hit, found, miss);
    b_.SetInsertPoint(found);
    llvm::Value* host = b_.CreateGEP(
        b_.getInt8Ty(),
        b_.CreateLoad(ptr_,
                      b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), entry,
                                                    offsetof(JitRegion, host))),
        offset);
    b_.CreateBr(join);
    b_.SetInsertPoint(miss);
    auto* type = llvm::FunctionType::get(ptr_, {ptr_, i64, i64, i32_}, false);
    llvm::Value* looked_up = b_.CreateCall(
        type, Address(reinterpret_cast<uint64_t>(&DeviceSpanHost)),
        {ctx_, lowest, length, b_.getInt32(cache)});
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    llvm::PHINode* result = b_.CreatePHI(ptr_, 2);
    result->addIncoming(host, found);
    result->addIncoming(looked_up, miss);
    if (region_length != nullptr) {
      // The entry holds the region now, found or just looked up.
      *region_length = b_.CreateLoad(
          i64, b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), entry,
                                             offsetof(JitRegion, length)));
    }
    return result;
  }

  // The store of a SIMD group's 32 consecutive words at `host` in a device
  // region `region_length` long, then to `merge`: streamed past the caches
  // (streamed_stores.h) where the region is long and the words fill two
  // whole host cache lines, else an ordinary store.
  void EmitSpanStore(llvm::Value* host, llvm::Value* stored,
                     llvm::Value* region_length, llvm::BasicBlock* merge) {
    llvm::Value* aligned = b_.CreateICmpEQ(
        b_.CreateAnd(b_.CreatePtrToInt(host, b_.getInt64Ty()), b_.getInt64(63)),
        b_.getInt64(0));
    llvm::Value* long_region =
        b_.CreateICmpUGE(region_length, b_.getInt64(kStreamedStoreMinLength));
    auto* streamed = llvm::BasicBlock::Create(c_, "streamed", fn_);
    auto* cached = llvm::BasicBlock::Create(c_, "cached", fn_);
    b_.CreateCondBr(b_.CreateAnd(aligned, long_region), streamed, cached);
    b_.SetInsertPoint(streamed);
    llvm::StoreInst* store =
        b_.CreateAlignedStore(stored, host, llvm::Align(64));
    store->setMetadata(
        llvm::LLVMContext::MD_nontemporal,
        llvm::MDNode::get(c_, llvm::ConstantAsMetadata::get(b_.getInt32(1))));
    b_.CreateStore(b_.getInt8(1), FieldOf(offsetof(ExecContext, streamed)));
    b_.CreateBr(merge);
    b_.SetInsertPoint(cached);
    b_.CreateAlignedStore(stored, host, llvm::Align(1));
    b_.CreateBr(merge);
  }

  // Flush's stores, leaving the cache as it is (dirty values stay dirty:
  // writing them again later is harmless).
  // (Raw values are made canonical for the store only: WriteBack may run in
  // a block that later code does not pass through.)
  void WriteBack() {
    if (flushed_ != nullptr) b_.CreateStore(b_.getTrue(), flushed_);
    for (auto& [slot, entry] : cache_) {
      if (!entry.dirty) continue;
      llvm::Value* address = SlotAddress(slot);
      llvm::Value* old = b_.CreateAlignedLoad(v32i32_, address, llvm::Align(4));
      llvm::Value* value = entry.raw ? Canonical(entry.value) : entry.value;
      b_.CreateAlignedStore(b_.CreateSelect(active_, value, old), address,
                            llvm::Align(4));
    }
  }

  llvm::Module& module_;
  llvm::LLVMContext& c_;
  // Folds what the emitter leaves trivial (an `and` with true, say), as
  // the JIT runs no optimization passes.
  llvm::IRBuilder<llvm::InstSimplifyFolder> b_;
  const DecodedKernel& kernel_;
  llvm::Type* i32_;
  llvm::Type* f32_;
  llvm::FixedVectorType* v32i32_;
  llvm::FixedVectorType* v32f32_;
  llvm::PointerType* ptr_;
  llvm::Function* fn_ = nullptr;
  llvm::Value* ctx_ = nullptr;
  llvm::Value* code_ = nullptr;
  llvm::Value* slots_ = nullptr;
  llvm::BasicBlock* entry_ = nullptr;
  // Where the uniforms are read (UniformWord), those read, and whether
  // the memory checker is off (ExecContext::memory_checker null).
  llvm::Value* uniform_file_ = nullptr;
  std::map<uint16_t, llvm::Value*> uniform_words_;
  std::map<uint16_t, llvm::Value*> uniform_bases_;  // by their low slot
  llvm::Value* unchecked_ = nullptr;
  // Vectors known to hold their lane 0's value plus the lane's number
  // (WriteSpecials), with that lane 0 value.
  std::map<llvm::Value*, llvm::Value*> counting_;
  llvm::Value* mask_ = nullptr;
  llvm::Value* active_ = nullptr;
  llvm::Value* all_active_ = nullptr;  // mask == all 32 lanes
  // The loop (EnterLoop), when the run is one: its JitTrips, trip count
  // and limit, and its first block.
  llvm::Value* trips_ = nullptr;
  llvm::PHINode* count_ = nullptr;
  llvm::Value* limit_ = nullptr;
  llvm::BasicBlock* header_ = nullptr;
  // EmitGroups: its JitGroups, the SIMD group's number in the call (also
  // EmitPhase's, with where each says how many are done), and whether the
  // lane file's registers may be non-zero.
  llvm::Value* groups_ = nullptr;
  llvm::PHINode* group_ = nullptr;
  // EmitPhase: its JitPhase (whose counts the code adds to), the lanes
  // now active as i64, and the first instruction not counted yet.
  llvm::Value* counts_ = nullptr;
  llvm::Value* lanes_ = nullptr;
  uint32_t count_from_ = 0;
  std::array<llvm::Value*, 2> counted_ = {};  // instructions, lane-instr.
  llvm::Value* done_ = nullptr;
  llvm::BasicBlock* loop_header_ = nullptr;
  llvm::Value* flushed_ = nullptr;
  // EmitBody: the values held at each memory access since the cache was
  // last emptied, summed (a measure of LLVM's work), and its limit.
  static constexpr int kWindow = 256;
  int window_ = 0;
  uint32_t next_region_ = 0;  // the JitRegion of the next memory access
  std::map<std::tuple<llvm::Value*, llvm::Value*, uint8_t>, LanePattern>
      patterns_;
  std::map<uint16_t, Entry> cache_;  // by slot, in slot order
};

}  // namespace

uint32_t IfThenEnd(const DecodedKernel& kernel, uint32_t pc) {
  if (pc + 1 >= kernel.code.size()) return 0;
  const DecodedInstruction& d = kernel.code[pc];
  if (d.flow != Flow::kBranchZero && d.flow != Flow::kBranchNonZero) return 0;
  const uint32_t join = d.target;
  if (d.reconverge != join || join <= pc + 1 || join >= kernel.code.size()) {
    return 0;
  }
  return kernel.code[pc + 1].run_end == join ? join : 0;
}

uint32_t IfElseEnd(const DecodedKernel& kernel, uint32_t pc) {
  const auto& code = kernel.code;
  if (pc + 2 >= code.size()) return 0;
  const DecodedInstruction& d = code[pc];
  if (d.flow != Flow::kBranchZero && d.flow != Flow::kBranchNonZero) return 0;
  // bz/bnz to `taken`; the run [pc + 1, taken - 1) and `br join` at
  // taken - 1; the run [taken, join).
  const uint32_t taken = d.target;
  const uint32_t join = d.reconverge;
  if (taken <= pc + 1 || join <= taken || join >= code.size()) return 0;
  const DecodedInstruction& br = code[taken - 1];
  if (br.flow != Flow::kBranch || br.target != join) return 0;
  if (taken - 1 > pc + 1 && code[pc + 1].run_end != taken - 1) return 0;
  return code[taken].run_end == join ? join : 0;
}

bool JitInlines(const DecodedInstruction& d) {
  if (d.inst == nullptr) return false;
  if (d.flow == Flow::kMayFault) return InlinableMemory(d);
  return d.flow == Flow::kNext && Inlinable(d.inst->op, d.inst->type);
}

llvm::Function* EmitRun(llvm::Module& module, const DecodedKernel& kernel,
                        uint32_t begin, uint32_t end, const std::string& name) {
  return RunEmitter(module, kernel).Emit(begin, end, name);
}

llvm::Function* EmitGroups(llvm::Module& module, const DecodedKernel& kernel,
                           uint32_t end, const std::string& name) {
  return RunEmitter(module, kernel).EmitGroups(end, name);
}

std::vector<DecodedKernel::Phase> FindPhases(const DecodedKernel& kernel) {
  std::vector<DecodedKernel::Phase> phases;
  const auto& code = kernel.code;
  bool barrier = false;
  for (uint32_t pc = 0; pc < code.size();) {
    DecodedKernel::Phase phase;
    phase.begin = pc;
    // Runs, each maybe with an if-then or an if-else after it.
    bool branches = false;
    for (uint32_t at = pc;;) {
      const uint32_t branch = std::max(code[at].run_end, at);
      if (branch >= code.size()) return {};
      uint32_t join = IfThenEnd(kernel, branch);
      if (join == 0) join = IfElseEnd(kernel, branch);
      if (join == 0) {
        phase.end = branch;
        break;
      }
      branches = true;
      at = join;
    }
    phases.push_back(phase);
    switch (code[phase.end].flow) {
      case Flow::kThreadgroupBarrier:
        barrier = true;
        pc = phase.end + 1;
        break;
      case Flow::kExit:
        // Worth it where SIMD groups would otherwise take turns at
        // barriers, or run their branches one by one through Run.
        if (!barrier && !branches) return {};
        return phases;
      default:
        return {};
    }
  }
  return {};
}

llvm::Function* EmitPhase(llvm::Module& module, const DecodedKernel& kernel,
                          const DecodedKernel::Phase& phase,
                          const std::string& name) {
  return RunEmitter(module, kernel).EmitPhase(phase, name);
}

}  // namespace mtlemu::emu
