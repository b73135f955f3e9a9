// Checks of the IIS module's deadlines (binding/iis/deadline_timer.h) with real time and threads:
// deadlines run in the order of their times whatever the order they were set in, once each, on
// the timer's thread; a cancelled one never runs; cancel says whether it was in time; the
// destructor stops the thread without running what has not passed. Built and run by
// test/inserver/deadline-timer.test.ts. Prints "N checks passed" (native_checks.h).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "../iis/deadline_timer.h"
#include "native_checks.h"

using gh_checks::check;
using std::chrono::milliseconds;

namespace {

// What ran, in order, and a way to wait until a number of them has.
struct Record {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<int> order;
  std::vector<std::thread::id> threads;

  void add(int what) {
    std::lock_guard<std::mutex> lock(mutex);
    order.push_back(what);
    threads.push_back(std::this_thread::get_id());
    changed.notify_all();
  }
  bool until(size_t count) {
    std::unique_lock<std::mutex> lock(mutex);
    return changed.wait_for(lock, std::chrono::seconds(20), [&] { return order.size() >= count; });
  }
};

}  // namespace

int main() {
  {
    gh_iis::DeadlineTimer timer;
    Record record;
    // Set out of order: run in the order of their times.
    timer.schedule(milliseconds(300), [&] { record.add(3); });
    timer.schedule(milliseconds(100), [&] { record.add(1); });
    const std::uint64_t cancelled = timer.schedule(milliseconds(150), [&] { record.add(99); });
    timer.schedule(milliseconds(200), [&] { record.add(2); });
    check(timer.cancel(cancelled), "a deadline cancelled before its time: cancel says so");
    check(record.until(3), "every deadline not cancelled runs");
    std::this_thread::sleep_for(milliseconds(300));  // room for a wrong extra run to show
    std::lock_guard<std::mutex> lock(record.mutex);
    check(record.order == std::vector<int>({1, 2, 3}),
          "in the order of their times, once each, the cancelled one never");
    check(record.threads.size() == 3 && record.threads[0] != std::this_thread::get_id() &&
              record.threads[0] == record.threads[1] && record.threads[1] == record.threads[2],
          "on the timer's own thread");
  }
  {
    gh_iis::DeadlineTimer timer;
    Record record;
    const std::uint64_t ran = timer.schedule(milliseconds(0), [&] { record.add(1); });
    check(record.until(1), "a deadline of 0 runs");
    check(!timer.cancel(ran), "cancel after it ran: too late, and says so");
    check(!timer.cancel(12345), "cancel of an unknown id: nothing to cancel");
    // A deadline that throws does not stop the timer.
    timer.schedule(milliseconds(0), [] { throw 1; });
    timer.schedule(milliseconds(50), [&] { record.add(2); });
    check(record.until(2), "the timer goes on after a deadline threw");
  }
  {
    std::atomic<bool> ran{false};
    {
      gh_iis::DeadlineTimer timer;
      timer.schedule(std::chrono::hours(1), [&] { ran = true; });
    }  // the destructor returns at once, without running it
    check(!ran.load(), "destroyed with a deadline pending: it never runs");
  }
  return gh_checks::summary();
}
