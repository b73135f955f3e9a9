// What the two native stress hosts (engine_stress, module_stress) share: their
// command line, and the worker threads that complete pending requests late,
// in arrival order, each the way its host's policy wants.
//   <host threads> <requests per thread> <worker threads>
#ifndef GATEHOUSE_STRESS_HOST_H
#define GATEHOUSE_STRESS_HOST_H

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "../core/gh_core.h"

struct StressArgs {
  int host_threads = 0;
  int per_thread = 0;
  int worker_count = 0;
};

/** False (after printing the usage) when the arguments are missing or not positive. */
inline bool parse_stress_args(int argc, char** argv, StressArgs* out) {
  if (argc == 4) {
    out->host_threads = std::atoi(argv[1]);
    out->per_thread = std::atoi(argv[2]);
    out->worker_count = std::atoi(argv[3]);
    if (out->host_threads > 0 && out->per_thread > 0 && out->worker_count > 0) return true;
  }
  std::fprintf(stderr, "usage: %s <host threads> <requests per thread> <worker threads>\n", argv[0]);
  return false;
}

/** Worker threads that hand each pushed pending request to `complete`, in arrival order. */
class PendingWorkers {
 public:
  PendingWorkers(int count, std::function<void(gh_pending*)> complete) : complete_(std::move(complete)) {
    for (int i = 0; i < count; ++i) threads_.emplace_back([this] { run(); });
  }
  ~PendingWorkers() { stop(); }

  void push(gh_pending* pending) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(pending);
    }
    ready_.notify_one();
  }

  /** Completes what was queued, then joins the threads. */
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_all();
    for (auto& thread : threads_)
      if (thread.joinable()) thread.join();
  }

 private:
  void run() {
    for (;;) {
      gh_pending* pending = nullptr;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        pending = queue_.front();
        queue_.pop_front();
      }
      complete_(pending);
    }
  }

  std::function<void(gh_pending*)> complete_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<gh_pending*> queue_;
  bool stopping_ = false;
};

#endif
