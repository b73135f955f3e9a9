// Deadlines for the IIS module: a function run once a given time has passed, unless cancelled
// first. One thread of its own, started with the first deadline, sleeping until the earliest;
// the functions run on it, one at a time, and must not block (the module's post a completion to
// IIS). Used for the cold start's wait for the core (binding/iis/engine_slot.h) and a decision's
// deadline (binding/iis/gatehouse_module.cpp). Portable C++ (no IIS headers): the native test hosts run it.
#ifndef GATEHOUSE_IIS_DEADLINE_TIMER_H
#define GATEHOUSE_IIS_DEADLINE_TIMER_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

namespace gh_iis {

class DeadlineTimer {
 public:
  DeadlineTimer() = default;
  DeadlineTimer(const DeadlineTimer&) = delete;
  DeadlineTimer& operator=(const DeadlineTimer&) = delete;
  /** Stops the thread (waiting for a function that runs); deadlines not yet passed never run. Never from a deadline's
   * own function. */
  ~DeadlineTimer();

  /** Runs fn once `after` has passed. Returns its id for cancel (never 0). May throw (allocation, thread). */
  std::uint64_t schedule(std::chrono::milliseconds after, std::function<void()> fn);

  /**
   * Cancels a deadline, without waiting. true: it will never run. false: it has run or is running
   * (a function must therefore own what it uses: the module's hold a shared_ptr).
   */
  bool cancel(std::uint64_t id);

 private:
  using Clock = std::chrono::steady_clock;
  using Key = std::pair<Clock::time_point, std::uint64_t>;  // the earliest first; ids break ties
  void run();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<Key, std::function<void()>> entries_;
  std::unordered_map<std::uint64_t, Clock::time_point> when_;  // id → its key's time, for cancel
  std::uint64_t next_id_ = 1;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gh_iis

#endif
