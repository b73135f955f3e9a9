// The queue of the batched crossing (interceptor.cpp): native host threads
// push pending requests; the Node thread takes all of them at once.
//
// A mutex-protected vector rather than a lock-free MPSC queue: the critical
// section is one push_back (or one swap on the Node side), so the lock is held
// for a few nanoseconds; the consumer takes the whole queue in one swap, which
// a linked MPSC queue would do node by node, with an allocation per node; and
// "did this push make the queue non-empty" is exact under the lock, which is
// what the coalescing rule below needs. On this 2-core machine the cost of the
// crossing is thread wake-ups, not this lock.
//
// The coalescing rule: the push that finds the queue empty is told so (and
// only that one); its caller schedules exactly one wake of the Node thread.
// Every push before the wake's take() is carried by that wake. A take() that
// empties the queue makes the next push schedule a new wake, so no request is
// ever left in a non-empty queue with no wake on the way (unless scheduling the
// wake failed: the caller then takes the queue back itself and answers it).
//
// Portable C++ (no Node-API): binding/host/pending_queue_stress.cpp runs it
// under ThreadSanitizer.
#ifndef GATEHOUSE_ADDON_PENDING_QUEUE_H
#define GATEHOUSE_ADDON_PENDING_QUEUE_H

#include <mutex>
#include <vector>

#include "../core/gh_core.h"

namespace gh {

class PendingQueue {
 public:
  /**
   * Appends `pending`. True when the queue was empty: the caller must then
   * schedule one wake of the consumer. Throws std::bad_alloc (nothing queued).
   */
  bool push(gh_pending* pending) {
    std::lock_guard<std::mutex> lock(mutex_);
    const bool was_empty = items_.empty();
    items_.push_back(pending);
    return was_empty;
  }

  /** Everything queued, in push order, into `out` (which must be empty); the queue is left empty. */
  void take(std::vector<gh_pending*>& out) {
    std::lock_guard<std::mutex> lock(mutex_);
    out.swap(items_);
  }

  bool empty() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return items_.empty();
  }

 private:
  mutable std::mutex mutex_;
  std::vector<gh_pending*> items_;
};

}  // namespace gh

#endif
