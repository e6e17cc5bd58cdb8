// Cancelling runs from another thread (RunOptions::cancel in tfjit/session.h). Its own header
// so that core/'s run control reads it without the Session API.
#ifndef TFJIT_INCLUDE_TFJIT_CANCELLATION_H_
#define TFJIT_INCLUDE_TFJIT_CANCELLATION_H_

#include <atomic>

namespace tfjit {

// Cancels runs from another thread: pass it in RunOptions, call Cancel(); the runs using it
// stop at their next node or loop iteration with CANCELLED. Thread-safe. A token stays
// cancelled: use a fresh one for later runs.
class CancellationToken {
 public:
  void Cancel() { cancelled_.store(true, std::memory_order_release); }
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }

 private:
  std::atomic<bool> cancelled_{false};
};

}  // namespace tfjit

#endif  // TFJIT_INCLUDE_TFJIT_CANCELLATION_H_
