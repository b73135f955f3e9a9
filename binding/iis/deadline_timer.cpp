#include "deadline_timer.h"

#include <utility>

namespace gh_iis {

DeadlineTimer::~DeadlineTimer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::uint64_t DeadlineTimer::schedule(std::chrono::milliseconds after, std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  const std::uint64_t id = next_id_++;
  const Clock::time_point when = Clock::now() + after;
  const bool earliest = entries_.empty() || Key{when, id} < entries_.begin()->first;
  entries_.emplace(Key{when, id}, std::move(fn));
  when_.emplace(id, when);
  if (earliest) changed_.notify_all();  // the timer sleeps until the earliest: it must look again
  return id;
}

bool DeadlineTimer::cancel(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = when_.find(id);
  if (found == when_.end()) return false;
  entries_.erase(Key{found->second, id});
  when_.erase(found);
  return true;
}

void DeadlineTimer::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (entries_.empty()) {
      changed_.wait(lock);
      continue;
    }
    const auto due = entries_.begin();
    if (Clock::now() < due->first.first) {
      changed_.wait_until(lock, due->first.first);
      continue;  // something may have changed: look again
    }
    std::function<void()> fn = std::move(due->second);
    when_.erase(due->first.second);
    entries_.erase(due);
    lock.unlock();
    try {
      fn();
    } catch (...) {
      // A deadline's function reports its own failures; the timer goes on.
    }
    fn = nullptr;  // what it held is let go outside the lock
    lock.lock();
  }
}

}  // namespace gh_iis
