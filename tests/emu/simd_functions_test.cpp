// Every SIMD-group and quad-group function at f32, i32, u32, f16 and i64
// (where the opcode allows the type), against a C++ reference over the
// lanes, with full SIMD groups, a partial last SIMD group, and lanes made
// inactive by divergent control flow.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include "fmt/format.h"
#include "tests/support/kernel_harness.h"

namespace mtlemu {
namespace {

using ::mtlemu::testing::KernelHarness;

constexpr int kSimdWidth = 32;
constexpr uint32_t kSentinel = 0xdeadbeef;

// --- the opcodes -------------------------------------------------------------

enum class Kind {
  kMove,  // a lane reads another lane's value
  kBroadcastFirst,
  kIsFirst,
  kBallot,
  kAll,
  kAny,
  kActiveMask,
  kReduce,
  kPrefixInclusive,
  kPrefixExclusive,
};

// Which lane a kMove reads (operand k; i is the lane within the cluster).
enum class Move {
  kNone,
  kIndex,
  kXor,
  kUp,
  kDown,
  kRotateUp,
  kRotateDown,
  kBroadcast
};

enum class Fold { kNone, kSum, kProduct, kMin, kMax, kAnd, kOr, kXor };

// The types an opcode accepts, as in opcodes.def.
enum class Types { kNone, kAny, kNumeric, kIntegers };

struct SimdOp {
  std::string name;
  int cluster;  // 32 for simd_*, 4 for quad_*
  Kind kind;
  Types types;
  Move move = Move::kNone;
  Fold fold = Fold::kNone;
  uint32_t k = 0;  // operand of moves (kIndex: per lane, see LaneOperand)
};

void PrintTo(const SimdOp& op, std::ostream* os) { *os << op.name; }

std::vector<SimdOp> AllOps() {
  std::vector<SimdOp> ops;
  for (int cluster : {32, 4}) {
    const bool simd = cluster == 32;
    auto add = [&](std::string_view suffix, Kind kind, Types types,
                   Move move = Move::kNone, Fold fold = Fold::kNone,
                   uint32_t k = 0) {
      ops.push_back({(simd ? "simd_" : "quad_") + std::string(suffix), cluster,
                     kind, types, move, fold, k});
    };
    add("shuffle", Kind::kMove, Types::kAny, Move::kIndex);
    add("shuffle_xor", Kind::kMove, Types::kAny, Move::kXor, Fold::kNone,
        simd ? 19 : 3);
    add("shuffle_up", Kind::kMove, Types::kAny, Move::kUp, Fold::kNone,
        simd ? 3 : 1);
    add("shuffle_down", Kind::kMove, Types::kAny, Move::kDown, Fold::kNone,
        simd ? 5 : 2);
    add("shuffle_rotate_up", Kind::kMove, Types::kAny, Move::kRotateUp,
        Fold::kNone, simd ? 7 : 1);
    add("shuffle_rotate_down", Kind::kMove, Types::kAny, Move::kRotateDown,
        Fold::kNone, simd ? 30 : 3);
    add("broadcast", Kind::kMove, Types::kAny, Move::kBroadcast, Fold::kNone,
        simd ? 6 : 2);
    add("broadcast_first", Kind::kBroadcastFirst, Types::kAny);
    add("is_first", Kind::kIsFirst, Types::kNone);
    add("ballot", Kind::kBallot, Types::kNone);
    add("all", Kind::kAll, Types::kNone);
    add("any", Kind::kAny, Types::kNone);
    add("active_threads_mask", Kind::kActiveMask, Types::kNone);
    add("sum", Kind::kReduce, Types::kNumeric, Move::kNone, Fold::kSum);
    add("product", Kind::kReduce, Types::kNumeric, Move::kNone, Fold::kProduct);
    add("min", Kind::kReduce, Types::kNumeric, Move::kNone, Fold::kMin);
    add("max", Kind::kReduce, Types::kNumeric, Move::kNone, Fold::kMax);
    add("and", Kind::kReduce, Types::kIntegers, Move::kNone, Fold::kAnd);
    add("or", Kind::kReduce, Types::kIntegers, Move::kNone, Fold::kOr);
    add("xor", Kind::kReduce, Types::kIntegers, Move::kNone, Fold::kXor);
    add("prefix_inclusive_sum", Kind::kPrefixInclusive, Types::kNumeric,
        Move::kNone, Fold::kSum);
    add("prefix_exclusive_sum", Kind::kPrefixExclusive, Types::kNumeric,
        Move::kNone, Fold::kSum);
    add("prefix_inclusive_product", Kind::kPrefixInclusive, Types::kNumeric,
        Move::kNone, Fold::kProduct);
    add("prefix_exclusive_product", Kind::kPrefixExclusive, Types::kNumeric,
        Move::kNone, Fold::kProduct);
  }
  return ops;
}

// --- the types ---------------------------------------------------------------

enum class Type { kNone, kF32, kI32, kU32, kF16, kI64 };

const char* Suffix(Type t) {
  switch (t) {
    case Type::kNone:
      return "";
    case Type::kF32:
      return "f32";
    case Type::kI32:
      return "i32";
    case Type::kU32:
      return "u32";
    case Type::kF16:
      return "f16";
    case Type::kI64:
      return "i64";
  }
  return "";
}

void PrintTo(Type t, std::ostream* os) { *os << Suffix(t); }

bool Accepts(Types types, Type t) {
  switch (types) {
    case Types::kNone:
      return t == Type::kNone;
    case Types::kAny:
    case Types::kNumeric:
      return t != Type::kNone;
    case Types::kIntegers:
      return t == Type::kI32 || t == Type::kU32 || t == Type::kI64;
  }
  return false;
}

// Calls f.template operator()<T>() with T the C++ type of `t` (uint32_t for
// kNone: the 32-bit results of votes and lane queries).
template <typename F>
void WithType(Type t, F&& f) {
  switch (t) {
    case Type::kNone:
      return f.template operator()<uint32_t>();
    case Type::kF32:
      return f.template operator()<float>();
    case Type::kI32:
      return f.template operator()<int32_t>();
    case Type::kU32:
      return f.template operator()<uint32_t>();
    case Type::kF16:
      return f.template operator()<_Float16>();
    case Type::kI64:
      return f.template operator()<int64_t>();
  }
}

template <typename T>
constexpr bool kIsFloat =
    std::is_floating_point_v<T> || std::is_same_v<T, _Float16>;

// Wrapping integer arithmetic (no signed overflow) and plain float.
template <typename T>
T Combine(Fold fold, T a, T b) {
  if constexpr (kIsFloat<T>) {
    switch (fold) {
      case Fold::kSum:
        return a + b;
      case Fold::kProduct:
        return a * b;
      case Fold::kMin:
        return b < a ? b : a;
      case Fold::kMax:
        return b > a ? b : a;
      default:
        break;
    }
  } else {
    using U = std::make_unsigned_t<T>;
    const U x = static_cast<U>(a), y = static_cast<U>(b);
    switch (fold) {
      case Fold::kSum:
        return static_cast<T>(static_cast<U>(x + y));
      case Fold::kProduct:
        return static_cast<T>(static_cast<U>(x * y));
      case Fold::kMin:
        return b < a ? b : a;
      case Fold::kMax:
        return b > a ? b : a;
      case Fold::kAnd:
        return static_cast<T>(x & y);
      case Fold::kOr:
        return static_cast<T>(x | y);
      case Fold::kXor:
        return static_cast<T>(x ^ y);
      default:
        break;
    }
  }
  ADD_FAILURE() << "bad fold";
  return a;
}

// Input of thread g. Float values are chosen so that every sum and product
// over any subset of lanes is exact, whatever the order.
template <typename T>
T Input(const SimdOp& op, int g) {
  const uint32_t hash = static_cast<uint32_t>(g + 1) * 0x9e3779b9u;
  if constexpr (kIsFloat<T>) {
    switch (op.fold) {
      case Fold::kProduct: {
        const float table[8] = {3, -1, 2, 0.5f, 1, 2, 1, 1};
        return static_cast<T>(table[g % 8]);
      }
      case Fold::kSum:
        return static_cast<T>(0.5f * (g % 13) - 2.75f);
      default:
        return static_cast<T>(0.25f * ((g * 37) % 96) - 11.75f);
    }
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return static_cast<int64_t>((uint64_t{hash} << 29) ^ (hash * 3u)) -
           (int64_t{1} << 60);
  } else {
    // Sums and products wrap; min and max see both signs.
    return static_cast<T>(hash ^ (static_cast<uint32_t>(g) << 26));
  }
}

// The operand register of thread g: the source lane of kIndex moves, the
// condition of votes.
uint32_t LaneOperand(const SimdOp& op, int g) {
  const int l = g % kSimdWidth;
  if (op.move == Move::kIndex) {
    return op.cluster == 32 ? (l * 5 + 3) % 32 : (l * 3 + 1) % 4;
  }
  if (g >= 64) return 0;  // third SIMD group: all false
  if (g >= 32) return 7;  // second: all true (nonzero)
  return (l % 4 != 1 && l < 24) ? l + 1 : 0;
}

// The instruction under test: result in r4 (r4:r5), value in r2 (r2:r3),
// lane operand in r6.
std::string Instruction(const SimdOp& op, Type t) {
  const std::string typed =
      t == Type::kNone ? op.name : fmt::format("{}.{}", op.name, Suffix(t));
  switch (op.kind) {
    case Kind::kMove:
      return op.move == Move::kIndex
                 ? fmt::format("{} r4, r2, r6", typed)
                 : fmt::format("{} r4, r2, {}", typed, op.k);
    case Kind::kIsFirst:
    case Kind::kActiveMask:
      return fmt::format("{} r4", typed);
    case Kind::kBallot:
    case Kind::kAll:
    case Kind::kAny:
      return fmt::format("{} r4, r6", typed);
    default:
      return fmt::format("{} r4, r2", typed);
  }
}

// Threads whose `active` word is 0 branch around the instruction; every
// thread stores r4, which starts as the sentinel.
std::string Kernel(const SimdOp& op, Type t) {
  const int in_size = t == Type::kF16 ? 2 : t == Type::kI64 ? 8 : 4;
  const char* in_type = t == Type::kNone ? "u32" : Suffix(t);
  return fmt::format(
      ".kernel simd_op\n"
      ".buffer 0 u0 device void in\n"
      ".buffer 1 u2 device void out\n"
      ".buffer 2 u4 device uint active\n"
      ".buffer 3 u6 device uint operand\n"
      "    mov.u32 r0, %thread_position_in_grid.x\n"
      "    ld.device.u32 r1, [u4 + r0*4]\n"
      "    ld.device.{1} r2, [u0 + r0*{0}]\n"
      "    ld.device.u32 r6, [u6 + r0*4]\n"
      "    mov.u32 r4, {2}\n"
      "    mov.u32 r5, {2}\n"
      "    bz r1, join, join\n"
      "    {3}\n"
      "join:\n"
      "    st.device.{1} [u2 + r0*{0}], r4\n"
      "    exit\n"
      ".end\n",
      in_size, in_type, kSentinel, Instruction(op, t));
}

// --- which lanes run ---------------------------------------------------------

struct Pattern {
  const char* name;
  int threads;  // in one threadgroup
  bool (*active)(int g);
};

const Pattern kPatterns[] = {
    {"three full SIMD groups", 96, [](int) { return true; }},
    {"a partial SIMD group of 8 lanes", 40, [](int) { return true; }},
    {"a partial SIMD group of 6 lanes", 38, [](int) { return true; }},
    {"divergent", 96,
     [](int g) {
       const int l = g % 32;
       if (g < 32) return l % 3 != 0 && !(l >= 8 && l < 12);
       if (g < 64) return l % 5 == 2;
       return l == 31;
     }},
    {"partial and divergent", 40,
     [](int g) {
       return g < 32 ? g % 2 == 1 : (g == 33 || g == 34 || g == 37);
     }},
};

// --- the reference -----------------------------------------------------------

// What thread g gets from `op`, or nullopt where Metal leaves it undefined
// (a move from an inactive lane). `on(x)`: thread x exists and is active.
template <typename T, typename On>
std::optional<T> Reference(const SimdOp& op, const std::vector<T>& in, int g,
                           On on) {
  const int c = op.cluster;
  const int i = g % c;
  const int base = g - i;  // first thread of g's cluster
  auto bits = [&](auto pred) {
    uint32_t m = 0;
    for (int x = base; x < base + c; ++x) {
      if (on(x) && pred(x)) m |= 1u << (x - base);
    }
    return m;
  };
  const uint32_t active = bits([](int) { return true; });
  const uint32_t set = bits([&](int x) { return LaneOperand(op, x) != 0; });
  const int first = base + std::countr_zero(active);
  switch (op.kind) {
    case Kind::kMove: {
      const int k =
          static_cast<int>(op.move == Move::kIndex ? LaneOperand(op, g) : op.k);
      int from = g;
      switch (op.move) {
        case Move::kIndex:
          from = base + k;
          break;
        case Move::kXor:
          from = base + (i ^ k);
          break;
        case Move::kUp:
          from = i >= k ? g - k : g;
          break;
        case Move::kDown:
          from = i + k < c ? g + k : g;
          break;
        case Move::kRotateUp:
          from = base + (i - k + c) % c;
          break;
        case Move::kRotateDown:
          from = base + (i + k) % c;
          break;
        case Move::kBroadcast:
          from = base + k;
          break;
        case Move::kNone:
          break;
      }
      if (!on(from)) return std::nullopt;
      return in[from];
    }
    case Kind::kBroadcastFirst:
      return in[first];
    case Kind::kIsFirst:
      return static_cast<T>(g == first);
    case Kind::kBallot:
      return static_cast<T>(set);
    case Kind::kAll:
      return static_cast<T>(set == active);
    case Kind::kAny:
      return static_cast<T>(set != 0);
    case Kind::kActiveMask:
      return static_cast<T>(active);
    case Kind::kReduce:
    case Kind::kPrefixInclusive:
    case Kind::kPrefixExclusive: {
      const int end = op.kind == Kind::kReduce ? base + c : g + 1;
      std::optional<T> acc;
      for (int x = base; x < end; ++x) {
        if (!on(x)) continue;
        if (op.kind == Kind::kPrefixExclusive && x == g) break;
        acc = acc ? Combine(op.fold, *acc, in[x]) : in[x];
      }
      if (!acc) return static_cast<T>(op.fold == Fold::kProduct ? 1 : 0);
      return acc;
    }
  }
  return std::nullopt;
}

template <typename T>
uint64_t Bits(T v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}

template <typename T>
std::string Show(T v) {
  if constexpr (kIsFloat<T>) {
    return fmt::format("{} (0x{:x})", static_cast<double>(v), Bits(v));
  } else {
    return fmt::format("{} (0x{:x})", v, Bits(v));
  }
}

// --- the tests ---------------------------------------------------------------

class SimdFunctionTest
    : public ::testing::TestWithParam<std::tuple<SimdOp, Type>> {};

TEST_P(SimdFunctionTest, MatchesReferenceOverActiveLanes) {
  const auto& [op, type] = GetParam();
  WithType(type, [&]<typename T>() {
    using In = T;
    for (const Pattern& p : kPatterns) {
      SCOPED_TRACE(p.name);
      std::vector<In> in(p.threads);
      std::vector<uint32_t> active(p.threads), operand(p.threads);
      for (int g = 0; g < p.threads; ++g) {
        in[g] = Input<In>(op, g);
        active[g] = p.active(g) ? 1 : 0;
        operand[g] = LaneOperand(op, g);
      }
      KernelHarness h(Kernel(op, type));
      ASSERT_TRUE(h.status().ok()) << h.status().error().message;
      h.SetBuffer(0, in);
      h.SetBuffer(1, std::vector<In>(p.threads));
      h.SetBuffer(2, active);
      h.SetBuffer(3, operand);
      const MTLSize size{static_cast<uint64_t>(p.threads)};
      const Status s = h.DispatchThreads(size, size);
      ASSERT_TRUE(s.ok()) << s.error().message;
      ASSERT_EQ(h.error(), nullptr) << h.error()->message;
      const std::vector<In> out = h.Read<In>(1);
      auto on = [&](int x) { return x < p.threads && active[x] != 0; };
      for (int g = 0; g < p.threads; ++g) {
        if (!on(g)) {
          // Untouched: still the sentinel's low sizeof(T) bytes.
          const uint64_t sentinel =
              (uint64_t{kSentinel} << 32 | kSentinel) &
              (sizeof(In) == 8 ? ~uint64_t{0}
                               : (uint64_t{1} << (8 * sizeof(In))) - 1);
          EXPECT_EQ(Bits(out[g]), sentinel) << "inactive thread " << g;
          continue;
        }
        const std::optional<In> want = Reference<In>(op, in, g, on);
        if (!want) continue;  // undefined in Metal
        EXPECT_EQ(Bits(out[g]), Bits(*want))
            << "thread " << g << ": got " << Show(out[g]) << ", want "
            << Show(*want);
      }
    }
  });
}

std::vector<std::tuple<SimdOp, Type>> AllCases() {
  std::vector<std::tuple<SimdOp, Type>> cases;
  for (const SimdOp& op : AllOps()) {
    for (Type t : {Type::kNone, Type::kF32, Type::kI32, Type::kU32, Type::kF16,
                   Type::kI64}) {
      if (Accepts(op.types, t)) cases.emplace_back(op, t);
    }
  }
  return cases;
}

std::string CaseName(
    const ::testing::TestParamInfo<std::tuple<SimdOp, Type>>& info) {
  const auto& [op, type] = info.param;
  return type == Type::kNone ? op.name
                             : fmt::format("{}_{}", op.name, Suffix(type));
}

INSTANTIATE_TEST_SUITE_P(AllOpcodes, SimdFunctionTest,
                         ::testing::ValuesIn(AllCases()), CaseName);

// --- hand-computed cases -----------------------------------------------------

// Runs `body` (reading r2 = input, writing r4) on 32 threads of which those
// with active[i] != 0 execute it; returns r4 of every thread (0 when
// inactive).
std::vector<uint32_t> RunOnLanes(std::string_view body,
                                 const std::vector<uint32_t>& in,
                                 const std::vector<uint32_t>& active) {
  KernelHarness h(fmt::format(R"(
.kernel lanes
.buffer 0 u0 device uint in
.buffer 1 u2 device uint out
.buffer 2 u4 device uint active
    mov.u32 r0, %thread_position_in_grid.x
    ld.device.u32 r1, [u4 + r0*4]
    ld.device.u32 r2, [u0 + r0*4]
    mov.u32 r4, 0
    bz r1, join, join
    {}
join:
    st.device.u32 [u2 + r0*4], r4
    exit
.end
)",
                              body));
  EXPECT_TRUE(h.status().ok()) << h.status().error().message;
  h.SetBuffer(0, in);
  h.SetBuffer(1, std::vector<uint32_t>(32));
  h.SetBuffer(2, active);
  EXPECT_TRUE(h.DispatchThreads({32}, {32}).ok());
  EXPECT_EQ(h.error(), nullptr);
  return h.Read<uint32_t>(1);
}

TEST(SimdFunctionsTest, ShuffleUpAndDownKeepTheEdgeLanes) {
  std::vector<uint32_t> in(32);
  for (uint32_t l = 0; l < 32; ++l) in[l] = 100 + l;
  const std::vector<uint32_t> all(32, 1);
  const std::vector<uint32_t> up =
      RunOnLanes("simd_shuffle_up.u32 r4, r2, 4", in, all);
  const std::vector<uint32_t> down =
      RunOnLanes("simd_shuffle_down.u32 r4, r2, 4", in, all);
  for (uint32_t l = 0; l < 32; ++l) {
    EXPECT_EQ(up[l], l < 4 ? 100 + l : 100 + l - 4) << l;
    EXPECT_EQ(down[l], l >= 28 ? 100 + l : 100 + l + 4) << l;
  }
}

TEST(SimdFunctionsTest, ExclusivePrefixOfOnesIsTheRankAmongActiveLanes) {
  // Active lanes 3, 4, 10, 11, 12, 30: ranks 0..5; the inclusive product of
  // 2s doubles per active lane and the exclusive one starts at 1.
  std::vector<uint32_t> active(32, 0);
  for (int l : {3, 4, 10, 11, 12, 30}) active[l] = 1;
  const std::vector<uint32_t> ones(32, 1), twos(32, 2);
  const std::vector<uint32_t> rank =
      RunOnLanes("simd_prefix_exclusive_sum.u32 r4, r2", ones, active);
  const std::vector<uint32_t> exclusive_product =
      RunOnLanes("simd_prefix_exclusive_product.u32 r4, r2", twos, active);
  const std::vector<uint32_t> inclusive_product =
      RunOnLanes("simd_prefix_inclusive_product.u32 r4, r2", twos, active);
  const std::vector<uint32_t> ballot =
      RunOnLanes("simd_ballot r4, r2", ones, active);
  uint32_t n = 0;
  for (int l = 0; l < 32; ++l) {
    if (!active[l]) continue;
    EXPECT_EQ(rank[l], n) << l;
    EXPECT_EQ(exclusive_product[l], 1u << n) << l;
    EXPECT_EQ(inclusive_product[l], 2u << n) << l;
    EXPECT_EQ(ballot[l], (1u << 3) | (1u << 4) | (7u << 10) | (1u << 30)) << l;
    ++n;
  }
}

TEST(SimdFunctionsTest, DestinationMayBeTheSource) {
  // Every lane reads its source before any lane's destination is written.
  std::vector<uint32_t> in(32);
  for (uint32_t l = 0; l < 32; ++l) in[l] = 1000 + 3 * l;
  const std::vector<uint32_t> all(32, 1);
  const std::vector<uint32_t> down = RunOnLanes(
      "simd_shuffle_down.u32 r2, r2, 1\n    mov.u32 r4, r2", in, all);
  const std::vector<uint32_t> xor_shuffled = RunOnLanes(
      "simd_shuffle_xor.u32 r2, r2, 31\n    mov.u32 r4, r2", in, all);
  const std::vector<uint32_t> prefix = RunOnLanes(
      "simd_prefix_inclusive_sum.u32 r2, r2\n    mov.u32 r4, r2", in, all);
  uint32_t sum = 0;
  for (uint32_t l = 0; l < 32; ++l) {
    sum += in[l];
    EXPECT_EQ(down[l], in[l < 31 ? l + 1 : l]) << l;
    EXPECT_EQ(xor_shuffled[l], in[l ^ 31]) << l;
    EXPECT_EQ(prefix[l], sum) << l;
  }
}

TEST(SimdFunctionsTest, NarrowIntegerReductionsWrapToTheirWidth) {
  // u8 sums wrap modulo 256 and stay zero-extended; i16 sums wrap modulo
  // 2^16 and stay sign-extended.
  std::vector<uint32_t> bytes(32), shorts(32);
  for (uint32_t l = 0; l < 32; ++l) {
    bytes[l] = (l * 37 + 200) & 0xff;
    shorts[l] = static_cast<uint32_t>(static_cast<int16_t>(20000 - 900 * l));
  }
  const std::vector<uint32_t> all(32, 1);
  const std::vector<uint32_t> u8 =
      RunOnLanes("simd_prefix_inclusive_sum.u8 r4, r2", bytes, all);
  const std::vector<uint32_t> i16 =
      RunOnLanes("simd_prefix_inclusive_sum.i16 r4, r2", shorts, all);
  uint8_t byte_sum = 0;
  int16_t short_sum = 0;
  for (uint32_t l = 0; l < 32; ++l) {
    byte_sum = static_cast<uint8_t>(byte_sum + bytes[l]);
    short_sum =
        static_cast<int16_t>(short_sum + static_cast<int16_t>(shorts[l]));
    EXPECT_EQ(u8[l], byte_sum) << l;
    EXPECT_EQ(i16[l], static_cast<uint32_t>(static_cast<int32_t>(short_sum)))
        << l;
  }
}

}  // namespace
}  // namespace mtlemu
