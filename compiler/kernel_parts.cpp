#include "compiler/kernel_parts.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace mtlemu::compiler {
namespace {

// A part repeats the parse of the whole source and of the kernels that
// are not instantiations: below this many instantiations a part of its
// own costs more than it saves. Each part holds a translation unit and a
// module (a few hundred MB for llama.cpp's file): at most kMaxParts.
constexpr size_t kInstantiationsPerPart = 48;
constexpr size_t kMaxParts = 16;

}  // namespace

bool ManyInstantiations(size_t count) {
  return count >= 2 * kInstantiationsPerPart;
}

std::vector<std::vector<std::string>> PartitionInstantiations(
    const std::vector<std::string>& instantiations,
    const std::vector<std::string>& kernels, size_t max_parts) {
  std::vector<std::string> chosen;
  if (kernels.empty()) {
    chosen = instantiations;
  } else {
    const std::unordered_set<std::string> asked(kernels.begin(), kernels.end());
    for (const std::string& name : instantiations) {
      if (asked.count(name) != 0) chosen.push_back(name);
    }
  }
  const size_t parts =
      std::clamp<size_t>(chosen.size() / kInstantiationsPerPart, size_t{1},
                         std::clamp<size_t>(max_parts, 1, kMaxParts));
  std::vector<std::vector<std::string>> out(parts);
  for (size_t i = 0; i < chosen.size(); ++i) {
    out[i % parts].push_back(std::move(chosen[i]));
  }
  return out;
}

std::vector<std::string> KernelsToLower(
    const std::vector<std::string>& declared,
    const std::vector<std::string>& instantiations,
    const std::vector<std::string>& own_instantiations,
    const std::vector<std::string>& kernels, size_t part, size_t parts) {
  const std::unordered_set<std::string> all(instantiations.begin(),
                                            instantiations.end());
  const std::unordered_set<std::string> asked(kernels.begin(), kernels.end());
  const std::unordered_set<std::string> known(declared.begin(), declared.end());
  // An instantiation the scan found that makes no kernel (of a function
  // that is not one) is no error, unless it was asked for.
  std::vector<std::string> out;
  for (const std::string& name : own_instantiations) {
    if (known.count(name) != 0 || asked.count(name) != 0) {
      out.push_back(name);
    }
  }
  size_t others = 0;
  for (const std::string& name : declared) {
    if (all.count(name) != 0) continue;
    if (!kernels.empty() && asked.count(name) == 0) continue;
    if (others++ % parts == part) out.push_back(name);
  }
  if (part == 0) {
    for (const std::string& name : kernels) {
      if (known.count(name) == 0 && all.count(name) == 0) out.push_back(name);
    }
  }
  return out;
}

std::vector<std::string> SourceOrder(
    const std::vector<std::vector<std::string>>& declared,
    const std::vector<std::string>& instantiations) {
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < instantiations.size(); ++i) {
    index.emplace(instantiations[i], i);
  }
  // The other kernels cut the source into segments; segment s holds the
  // instantiations between the s-th of them and the next.
  std::vector<std::string> others;
  std::vector<std::vector<std::pair<size_t, std::string>>> segments(1);
  for (size_t p = 0; p < declared.size(); ++p) {
    size_t segment = 0;
    for (const std::string& name : declared[p]) {
      auto it = index.find(name);
      if (it == index.end()) {
        if (p == 0) others.push_back(name);
        if (++segment == segments.size()) segments.emplace_back();
        continue;
      }
      segments[segment].emplace_back(it->second, name);
    }
  }
  std::vector<std::string> out;
  for (size_t s = 0; s < segments.size(); ++s) {
    std::sort(segments[s].begin(), segments[s].end());
    for (auto& [i, name] : segments[s]) out.push_back(std::move(name));
    if (s < others.size()) out.push_back(others[s]);
  }
  return out;
}

Result<isa::Module> MergeParts(std::vector<isa::Module> parts,
                               const std::vector<std::string>& order) {
  isa::Module all;
  for (isa::Module& part : parts) isa::AppendKernels(all, std::move(part));
  std::map<std::string, isa::Kernel> kernels;
  for (isa::Kernel& k : all.kernels) {
    if (kernels.count(k.name) != 0) {
      return Error{"internal compiler error: kernel '" + k.name +
                   "' was compiled by two parts"};
    }
    std::string name = k.name;
    kernels.emplace(std::move(name), std::move(k));
  }
  all.kernels.clear();
  for (const std::string& name : order) {
    auto it = kernels.find(name);
    if (it == kernels.end()) continue;
    all.kernels.push_back(std::move(it->second));
    kernels.erase(it);
  }
  if (!kernels.empty()) {
    return Error{"internal compiler error: kernel '" + kernels.begin()->first +
                 "' has no place in the source's order"};
  }
  return all;
}

}  // namespace mtlemu::compiler
