#include "emu/chips/chip_timing.h"

#include <string>

namespace mtlemu {
namespace {

// The timing columns of chips.def, in its order (AllChips()'s).
struct ChipRow {
  uint32_t l2_kib;
  uint32_t slc_mib;
  double dram_gbps;
  bool dynamic_caching;
  bool fp32_dual_issue;
};

constexpr ChipRow kChipRows[] = {
#define CHIP(e, name, marketing, family, cores, mhz, l2, slc, dram, dynamic, \
             dual)                                                           \
  {l2, slc, dram, dynamic, dual},
#include "emu/chips/chips.def"
#undef CHIP
};

// Whether a table has one row per enumerator (`count` of them), in the
// enum's order: `key` gives a row's enumerator.
template <class Row, size_t kRows, class Key>
constexpr bool OneRowEachInOrder(const Row (&rows)[kRows], size_t count,
                                 Key Row::*key) {
  if (kRows != count) return false;
  for (size_t i = 0; i < kRows; ++i) {
    if (static_cast<size_t>(rows[i].*key) != i) return false;
  }
  return true;
}

struct UnitCostRow {
  isa::ExecUnit unit;
  UnitCost cost;
};

constexpr UnitCostRow kUnitCosts[] = {
#define UNIT_COST(unit, cpi, latency) {isa::ExecUnit::unit, {cpi, latency}},
#include "emu/chips/unit_costs.def"
#undef UNIT_COST
};

static_assert(OneRowEachInOrder(kUnitCosts, kNumExecUnits, &UnitCostRow::unit),
              "unit_costs.def needs one row per execution unit of "
              "isa/exec_units.def, in its order");

constexpr std::array<UnitCost, kNumExecUnits> UnitCosts() {
  std::array<UnitCost, kNumExecUnits> costs{};
  for (size_t i = 0; i < std::size(kUnitCosts); ++i) {
    costs[i] = kUnitCosts[i].cost;
  }
  return costs;
}

}  // namespace

std::optional<ChipTiming> FindChipTiming(std::string_view name) {
  const std::optional<ChipSpec> spec = FindChip(name);
  if (!spec) return std::nullopt;
  ChipTiming t;
  t.spec = *spec;
  t.unit_costs = UnitCosts();
  const std::span<const ChipSpec> all = AllChips();
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].name != spec->name) continue;
    const ChipRow& row = kChipRows[i];
    t.l2_bytes = row.l2_kib * 1024;
    t.slc_bytes = uint64_t{row.slc_mib} << 20;
    t.dram_gbps = row.dram_gbps;
    t.dynamic_caching = row.dynamic_caching;
    t.fp32_dual_issue = row.fp32_dual_issue;
  }
  return t;
}

}  // namespace mtlemu
