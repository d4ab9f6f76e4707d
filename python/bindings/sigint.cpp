#include "python/bindings/sigint.h"

#include <csignal>
#include <mutex>

namespace mtlemu::python {
namespace {

// A fixed table of flags, so that the signal handler never meets memory
// that is being freed: a launch takes a free slot and gives it back.
struct Slot {
  std::atomic<bool> used{false};
  std::atomic<bool> interrupt{false};
};
static_assert(std::atomic<bool>::is_always_lock_free,
              "the signal handler needs lock-free flags");
Slot slots[SigintScope::kMaxLaunches];

// Installing and removing the handler: by the first launch in flight and
// the last one.
std::mutex install_mutex;
int in_flight = 0;        // launches holding a scope
bool installed = false;   // our handler is SIGINT's
struct sigaction before;  // what it replaced; set before it is installed

bool IsFunction(const struct sigaction& a) {
  if ((a.sa_flags & SA_SIGINFO) != 0) return a.sa_sigaction != nullptr;
  return a.sa_handler != SIG_IGN && a.sa_handler != SIG_DFL;
}

void OnSigint(int signal, siginfo_t* info, void* context) {
  for (Slot& s : slots) {
    if (s.used.load(std::memory_order_acquire)) s.interrupt.store(true);
  }
  if ((before.sa_flags & SA_SIGINFO) != 0) {
    before.sa_sigaction(signal, info, context);
  } else {
    before.sa_handler(signal);
  }
}

bool IsOurs(const struct sigaction& a) {
  return (a.sa_flags & SA_SIGINFO) != 0 && a.sa_sigaction == &OnSigint;
}

void Install() {
  struct sigaction current = {};
  if (sigaction(SIGINT, nullptr, &current) != 0) return;
  // Ignored, the default (the process ends), or ours already: left as is.
  if (!IsFunction(current) || IsOurs(current)) return;
  before = current;
  struct sigaction ours = {};
  ours.sa_sigaction = &OnSigint;
  ours.sa_mask = current.sa_mask;
  ours.sa_flags = SA_SIGINFO | (current.sa_flags & SA_ONSTACK);
  installed = sigaction(SIGINT, &ours, nullptr) == 0;
}

void Remove() {
  if (!installed) return;
  installed = false;
  // Unless someone (Python's signal.signal) has put another one in place
  // meanwhile, the handler from before goes back.
  struct sigaction current = {};
  if (sigaction(SIGINT, nullptr, &current) == 0 && IsOurs(current)) {
    sigaction(SIGINT, &before, nullptr);
  }
}

}  // namespace

SigintScope::SigintScope() {
  for (int i = 0; i < kMaxLaunches; ++i) {
    bool expected = false;
    if (slots[i].used.compare_exchange_strong(expected, true,
                                              std::memory_order_acq_rel)) {
      slots[i].interrupt.store(false);
      slot_ = i;
      break;
    }
  }
  std::lock_guard<std::mutex> lock(install_mutex);
  if (in_flight++ == 0) Install();
}

SigintScope::~SigintScope() {
  if (slot_ >= 0) slots[slot_].used.store(false, std::memory_order_release);
  std::lock_guard<std::mutex> lock(install_mutex);
  if (--in_flight == 0) Remove();
}

std::shared_ptr<std::atomic<bool>> SigintScope::flag() const {
  if (slot_ < 0) return nullptr;
  // The slot lives as long as the process: nothing to own.
  return std::shared_ptr<std::atomic<bool>>(std::shared_ptr<void>(),
                                            &slots[slot_].interrupt);
}

}  // namespace mtlemu::python
