// Metal kernel input attributes to the special registers they read, from
// the table (special_registers.def): vectors by component, scalars, and
// the aliases Metal has. Checked against the registers written out by
// hand.
#include "isa/special_register.h"

#include <gtest/gtest.h>

#include <set>

namespace mtlemu::isa {
namespace {

using S = SpecialRegister;
using Three = std::array<S, 3>;

std::optional<Three> Of(std::string_view attribute) {
  return SpecialRegistersOfAttribute(attribute);
}

TEST(SpecialRegistersOfAttribute, VectorsByComponent) {
  EXPECT_EQ(Of("thread_position_in_grid"),
            (Three{S::kThreadPositionInGridX, S::kThreadPositionInGridY,
                   S::kThreadPositionInGridZ}));
  EXPECT_EQ(
      Of("thread_position_in_threadgroup"),
      (Three{S::kThreadPositionInThreadgroupX, S::kThreadPositionInThreadgroupY,
             S::kThreadPositionInThreadgroupZ}));
  EXPECT_EQ(Of("threadgroups_per_grid"),
            (Three{S::kThreadgroupsPerGridX, S::kThreadgroupsPerGridY,
                   S::kThreadgroupsPerGridZ}));
  EXPECT_EQ(Of("dispatch_threads_per_threadgroup"),
            (Three{S::kDispatchThreadsPerThreadgroupX,
                   S::kDispatchThreadsPerThreadgroupY,
                   S::kDispatchThreadsPerThreadgroupZ}));
}

TEST(SpecialRegistersOfAttribute, ScalarsThreeTimes) {
  EXPECT_EQ(Of("thread_index_in_simdgroup"),
            (Three{S::kThreadIndexInSimdgroup, S::kThreadIndexInSimdgroup,
                   S::kThreadIndexInSimdgroup}));
  EXPECT_EQ(
      Of("quadgroup_index_in_threadgroup"),
      (Three{S::kQuadgroupIndexInThreadgroup, S::kQuadgroupIndexInThreadgroup,
             S::kQuadgroupIndexInThreadgroup}));
}

TEST(SpecialRegistersOfAttribute, Aliases) {
  EXPECT_EQ(Of("grid_size"), Of("threads_per_grid"));
  EXPECT_EQ(Of("grid_size")->at(1), S::kThreadsPerGridY);
  EXPECT_EQ(Of("thread_execution_width"),
            (Three{S::kThreadsPerSimdgroup, S::kThreadsPerSimdgroup,
                   S::kThreadsPerSimdgroup}));
  // Not aliases: in a threadgroup cut at the grid's edge they count the
  // dispatch's threadgroup size, not this one's.
  EXPECT_EQ(Of("dispatch_simdgroups_per_threadgroup"),
            (Three{S::kDispatchSimdgroupsPerThreadgroup,
                   S::kDispatchSimdgroupsPerThreadgroup,
                   S::kDispatchSimdgroupsPerThreadgroup}));
  EXPECT_EQ(Of("dispatch_quadgroups_per_threadgroup"),
            (Three{S::kDispatchQuadgroupsPerThreadgroup,
                   S::kDispatchQuadgroupsPerThreadgroup,
                   S::kDispatchQuadgroupsPerThreadgroup}));
}

TEST(SpecialRegistersOfAttribute, UnknownIsNone) {
  EXPECT_EQ(Of("thread_position"), std::nullopt);
  EXPECT_EQ(Of("threads_per"), std::nullopt);
  EXPECT_EQ(Of(""), std::nullopt);
  EXPECT_EQ(Of("sample_id"), std::nullopt);
}

// Which registers differ between the SIMD groups of one threadgroup, from
// Metal's definitions: positions and indices within the threadgroup or the
// grid that count threads, quadgroups or SIMD groups. Lane indices within
// a SIMD group or quadgroup repeat in every SIMD group.
TEST(SpecialRegister, VariesPerSimdgroup) {
  const std::set<S> varies = {
      S::kThreadPositionInGridX,        S::kThreadPositionInGridY,
      S::kThreadPositionInGridZ,        S::kThreadPositionInThreadgroupX,
      S::kThreadPositionInThreadgroupY, S::kThreadPositionInThreadgroupZ,
      S::kThreadIndexInThreadgroup,     S::kQuadgroupIndexInThreadgroup,
      S::kSimdgroupIndexInThreadgroup};
  for (int i = 0; i < kNumSpecialRegisters; ++i) {
    const auto sr = static_cast<S>(i);
    EXPECT_EQ(VariesPerSimdgroup(sr), varies.count(sr) == 1)
        << SpecialRegisterName(sr);
    // What differs between SIMD groups differs between lanes too, except
    // the SIMD group's own index.
    if (VariesPerSimdgroup(sr) && sr != S::kSimdgroupIndexInThreadgroup) {
      EXPECT_TRUE(VariesPerLane(sr)) << SpecialRegisterName(sr);
    }
  }
}

}  // namespace
}  // namespace mtlemu::isa
