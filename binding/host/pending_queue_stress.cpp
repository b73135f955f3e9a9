// The batched crossing's queue and coalescing rule (binding/addon/pending_queue.h)
// under stress, without Node: producer threads push numbered items as native
// host threads push pending requests, and schedule a wake only when their push
// found the queue empty; one consumer thread plays the Node thread: each wake
// takes the whole queue. Checked: every item taken exactly once, each
// producer's items in the order it pushed them, none left behind once the last
// wake ran, and at most one wake per item. Built and run by
// test/native/crossing.test.ts, under ThreadSanitizer where the compiler has it.
// Prints one JSON line of counts; exits non-zero on a breach.
//
//   pending_queue_stress <producers> <items per producer>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "../addon/pending_queue.h"

namespace {

// An item is (producer, sequence) packed into the pointer's bits: the queue never dereferences it.
gh_pending* item(uint32_t producer, uint32_t sequence) {
  return reinterpret_cast<gh_pending*>((static_cast<uintptr_t>(producer) << 32 | sequence) + 1);
}
uint32_t producer_of(gh_pending* p) { return static_cast<uint32_t>((reinterpret_cast<uintptr_t>(p) - 1) >> 32); }
uint32_t sequence_of(gh_pending* p) { return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p) - 1); }

/** The thread-safe function's part: a counted wake-up of the one consumer. */
class Wakes {
 public:
  void post() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++posted_;
    }
    ready_.notify_one();
  }
  /** False once stopped and every posted wake was handed out. */
  bool next() {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [&] { return handed_ < posted_ || stopped_; });
    if (handed_ == posted_) return false;
    ++handed_;
    return true;
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopped_ = true;
    }
    ready_.notify_one();
  }
  uint64_t posted() {
    std::lock_guard<std::mutex> lock(mutex_);
    return posted_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  uint64_t posted_ = 0;
  uint64_t handed_ = 0;
  bool stopped_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  const int producers = argc == 3 ? std::atoi(argv[1]) : 0;
  const int per_producer = argc == 3 ? std::atoi(argv[2]) : 0;
  if (producers <= 0 || per_producer <= 0) {
    std::fprintf(stderr, "usage: %s <producers> <items per producer>\n", argv[0]);
    return 2;
  }
  gh::PendingQueue queue;
  Wakes wakes;
  std::vector<std::vector<uint32_t>> seen(producers);  // consumer thread only
  uint64_t batches = 0, largest = 0, empty_wakes = 0, out_of_order = 0;

  std::thread consumer([&] {
    std::vector<gh_pending*> batch;
    while (wakes.next()) {
      batch.clear();
      queue.take(batch);
      if (batch.empty()) {
        ++empty_wakes;  // an earlier wake took them: allowed, harmless
        continue;
      }
      ++batches;
      if (batch.size() > largest) largest = batch.size();
      for (gh_pending* p : batch) {
        std::vector<uint32_t>& mine = seen[producer_of(p)];
        if (!mine.empty() && sequence_of(p) != mine.back() + 1) ++out_of_order;
        mine.push_back(sequence_of(p));
      }
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < producers; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < per_producer; ++i) {
        if (queue.push(item(static_cast<uint32_t>(t), static_cast<uint32_t>(i)))) wakes.post();
        if (i % 64 == 63) std::this_thread::yield();  // let batches of every size happen
      }
    });
  }
  for (auto& thread : threads) thread.join();
  wakes.stop();  // the consumer runs every wake posted, then stops
  consumer.join();

  uint64_t taken = 0, missing = 0;
  for (int t = 0; t < producers; ++t) {
    taken += seen[t].size();
    if (seen[t].size() != static_cast<size_t>(per_producer)) ++missing;
  }
  const uint64_t items = static_cast<uint64_t>(producers) * static_cast<uint64_t>(per_producer);
  const bool left_behind = !queue.empty();
  const bool ok = taken == items && missing == 0 && out_of_order == 0 && !left_behind && wakes.posted() <= items;
  std::printf(
      "{\"items\":%llu,\"taken\":%llu,\"wakes\":%llu,\"batches\":%llu,\"emptyWakes\":%llu,\"largestBatch\":%llu,"
      "\"outOfOrder\":%llu,\"producersShort\":%llu,\"leftBehind\":%s}\n",
      static_cast<unsigned long long>(items), static_cast<unsigned long long>(taken),
      static_cast<unsigned long long>(wakes.posted()), static_cast<unsigned long long>(batches),
      static_cast<unsigned long long>(empty_wakes), static_cast<unsigned long long>(largest),
      static_cast<unsigned long long>(out_of_order), static_cast<unsigned long long>(missing),
      left_behind ? "true" : "false");
  return ok ? 0 : 1;
}
