#include "emu/chips/chip_timing.h"

#include <string>

namespace mtlemu {
namespace {

enum class ChipId {
#define CHIP(e, name, marketing, family, cores, mhz) e,
#include "emu/chips/chips.def"
#undef CHIP
};

struct MemoryRow {
  ChipId id;
  uint32_t l2_kib;
  uint32_t slc_mib;
  double dram_gbps;
};

constexpr MemoryRow kMemory[] = {
#define CHIP_MEMORY(e, l2, slc, dram) {ChipId::e, l2, slc, dram},
#include "emu/chips/chip_memory.def"
#undef CHIP_MEMORY
};

constexpr size_t kNumChips = 0
#define CHIP(e, name, marketing, family, cores, mhz) +1
#include "emu/chips/chips.def"
#undef CHIP
    ;

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

static_assert(OneRowEachInOrder(kMemory, kNumChips, &MemoryRow::id),
              "chip_memory.def needs one row per chip of chips.def, in its "
              "order");

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
    for (const MemoryRow& m : kMemory) {
      if (static_cast<size_t>(m.id) != i) continue;
      t.l2_bytes = m.l2_kib * 1024;
      t.slc_bytes = uint64_t{m.slc_mib} << 20;
      t.dram_gbps = m.dram_gbps;
    }
  }
  if (spec->gpu_family == "Apple9") {
    t.dynamic_caching = true;
    t.fp32_dual_issue = true;
  }
  return t;
}

}  // namespace mtlemu
