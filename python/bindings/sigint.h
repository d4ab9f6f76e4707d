// Ctrl-C during launches from Python.
//
// By design, Ctrl-C (SIGINT) stops every launch in flight, on every thread,
// at its next look at its interrupt flag: a program whose threads all wait
// on the emulator stops when its user asks it to, as a program whose
// threads all wait on a GPU does. While at least one launch runs, SIGINT's
// handler is ours: it sets the flag of each launch in flight, then hands
// the signal on to the handler that was there before (Python's), so that
// Python's main thread raises KeyboardInterrupt (or runs your handler) as
// always. A launch that starts after the signal is not touched. Where
// SIGINT is ignored or left to the system's default when launches start,
// no handler is installed and launches run on.
#pragma once

#include <atomic>
#include <memory>

namespace mtlemu::python {

// One launch's hold on Ctrl-C, for as long as it runs. Thread-safe: any
// number of launches on any threads each hold one.
class SigintScope {
 public:
  SigintScope();
  ~SigintScope();
  SigintScope(const SigintScope&) = delete;
  SigintScope& operator=(const SigintScope&) = delete;

  // The launch's interrupt flag (EmulatorOptions::interrupt); null where
  // Ctrl-C cannot reach it (more launches in flight than there are flags,
  // kMaxLaunches).
  std::shared_ptr<std::atomic<bool>> flag() const;

  static constexpr int kMaxLaunches = 256;

 private:
  int slot_ = -1;
};

}  // namespace mtlemu::python
