// The way back of the batched crossing (interceptor.cpp): decisions made on
// the JavaScript thread, already copied out of JavaScript, are completed on a
// native thread of their own. Completing a request runs the host's completion,
// which wakes the host thread that waits for it (a futex wake per request, a
// third of the JavaScript thread's time before this); here the JavaScript
// thread only appends to a queue, and wakes the completer only when its push
// found the queue empty (the completer, once awake, takes everything queued).
//
// Portable C++ (no Node-API). Only the JavaScript thread pushes and stops;
// the completer thread only takes.
#ifndef GATEHOUSE_ADDON_COMPLETER_H
#define GATEHOUSE_ADDON_COMPLETER_H

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "../core/gh_core.h"

namespace gh {

/** Owns the bytes a decision points into (decision_from_js.cpp's JsDecision). */
struct DecisionOwner {
  virtual ~DecisionOwner() = default;
};

/** One request to complete: with `decision` (kept alive by `owner`), else failed 500 with `failure`. */
struct Completion {
  gh_pending* pending = nullptr;
  const gh_decision* decision = nullptr;
  std::unique_ptr<DecisionOwner> owner;
  const char* failure = "The authentication layer failed.";

  /** Completes the request and releases the reference it held. */
  void finish() {
    if (decision != nullptr) {
      gh_pending_complete(pending, decision);
    } else {
      gh_pending_fail(pending, 500, failure);
    }
    gh_pending_release(pending);
    pending = nullptr;
    owner.reset();
  }
};

class Completer {
 public:
  /** Starts the thread (throws std::system_error if it cannot). */
  Completer() : thread_([this] { run(); }) {}
  Completer(const Completer&) = delete;
  Completer& operator=(const Completer&) = delete;
  ~Completer() { stop(); }

  /**
   * Queues `c` for the completer thread. False (and `c` untouched) once stopped
   * or out of memory: the caller finishes it on its own thread.
   */
  bool push(Completion& c) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return false;
      try {
        items_.push_back(std::move(c));
      } catch (const std::bad_alloc&) {
        return false;
      }
      if (items_.size() > 1) return true;  // not empty before: the completer is awake or already woken
    }
    ready_.notify_one();
    return true;
  }

  /** Completes everything queued, then ends the thread. Idempotent. */
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run() {
    std::vector<Completion> batch;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [this] { return stopping_ || !items_.empty(); });
        if (items_.empty()) return;  // stopping, and nothing left
        batch.swap(items_);
      }
      for (Completion& c : batch) c.finish();
      batch.clear();
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::vector<Completion> items_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the rest is built
};

}  // namespace gh

#endif
