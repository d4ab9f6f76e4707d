#include "compiler/triton/python/parse_cache.h"

#include <list>
#include <mutex>
#include <string>
#include <utility>

#include "compiler/triton/python/parser.h"

namespace mtlemu::triton::py {
namespace {

// Enough for a kernel file, its imports and the prelude of a few programs.
constexpr size_t kCapacity = 32;

struct Entry {
  std::string file;
  std::string source;
  std::shared_ptr<const Module> tree;
};

std::mutex& CacheMutex() {
  static std::mutex m;
  return m;
}

// Most recently used first.
std::list<Entry>& Cache() {
  static std::list<Entry> entries;
  return entries;
}

}  // namespace

Result<std::shared_ptr<const Module>> ParseModuleCached(std::string_view source,
                                                        std::string_view file) {
  {
    std::lock_guard<std::mutex> lock(CacheMutex());
    std::list<Entry>& cache = Cache();
    for (auto it = cache.begin(); it != cache.end(); ++it) {
      if (it->file == file && it->source == source) {
        cache.splice(cache.begin(), cache, it);
        return cache.front().tree;
      }
    }
  }
  // Parsed outside the lock: two threads may parse the same text at once;
  // both trees are correct and the second insert is harmless.
  Result<Module> parsed = ParseModule(source, file);
  if (!parsed.ok()) return parsed.error();
  auto tree = std::make_shared<const Module>(std::move(parsed).value());
  std::lock_guard<std::mutex> lock(CacheMutex());
  std::list<Entry>& cache = Cache();
  cache.push_front(Entry{std::string(file), std::string(source), tree});
  if (cache.size() > kCapacity) cache.pop_back();
  return tree;
}

}  // namespace mtlemu::triton::py
