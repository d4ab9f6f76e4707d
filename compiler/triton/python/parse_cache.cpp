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

// The entry for `source` named `file`, moved to the front, or end(). With
// the cache's mutex held.
std::list<Entry>::iterator Find(std::list<Entry>& cache, std::string_view file,
                                std::string_view source) {
  for (auto it = cache.begin(); it != cache.end(); ++it) {
    if (it->file == file && it->source == source) {
      cache.splice(cache.begin(), cache, it);
      return cache.begin();
    }
  }
  return cache.end();
}

}  // namespace

Result<std::shared_ptr<const Module>> ParseModuleCached(std::string_view source,
                                                        std::string_view file) {
  {
    std::lock_guard<std::mutex> lock(CacheMutex());
    std::list<Entry>& cache = Cache();
    if (auto it = Find(cache, file, source); it != cache.end()) return it->tree;
  }
  // Parsed outside the lock: two threads may parse the same text at once.
  // Both trees are the same; the first one in is kept, and given to both.
  Result<Module> parsed = ParseModule(source, file);
  if (!parsed.ok()) return parsed.error();
  auto tree = std::make_shared<const Module>(std::move(parsed).value());
  std::lock_guard<std::mutex> lock(CacheMutex());
  std::list<Entry>& cache = Cache();
  if (auto it = Find(cache, file, source); it != cache.end()) return it->tree;
  cache.push_front(Entry{std::string(file), std::string(source), tree});
  if (cache.size() > kCapacity) cache.pop_back();
  return tree;
}

}  // namespace mtlemu::triton::py
