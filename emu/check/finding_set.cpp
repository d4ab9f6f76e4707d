#include "emu/check/finding_set.h"

#include <algorithm>

namespace mtlemu::emu {
namespace {

// Examples are ordered by threadgroup; ties keep the one found first.
uint64_t Threadgroup(const RawFinding& f) {
  return f.has_second ? std::min(f.first.threadgroup, f.second.threadgroup)
                      : f.first.threadgroup;
}

bool Earlier(const RawFinding& a, const RawFinding& b) {
  return Threadgroup(a) < Threadgroup(b);
}

}  // namespace

void FindingSet::Add(const RawFinding& finding) {
  const uint32_t a = finding.first.pc;
  const uint32_t b = finding.has_second ? finding.second.pc : a;
  const Key key{finding.kind, std::min(a, b), std::max(a, b)};
  auto [it, added] = findings_.try_emplace(key, finding);
  if (added) return;
  const uint64_t count = it->second.count + finding.count;
  const bool same_value = it->second.same_value && finding.same_value;
  if (Earlier(finding, it->second)) it->second = finding;
  it->second.count = count;
  it->second.same_value = same_value;
}

void FindingSet::Merge(const FindingSet& other) {
  for (const auto& [key, finding] : other.findings_) Add(finding);
}

}  // namespace mtlemu::emu
