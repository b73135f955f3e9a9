// Checks the IIS module's body reader (binding/iis/body_reader.cpp) against a
// scripted entity source, with real thread-pool timers for the deadline (built
// by mingw-w64, run under wine by scripts/win32/test.sh), reporting through
// native_checks.h.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>

#include "../iis/body_reader.h"
#include "native_checks.h"

namespace {

using Outcome = gh_iis::BodyReader::Outcome;

using gh_checks::check;

const char* name(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPending:
      return "pending";
    case Outcome::kComplete:
      return "complete";
    case Outcome::kTimedOut:
      return "timed out";
    case Outcome::kBroken:
      return "broken";
    case Outcome::kFailed:
      return "failed";
  }
  return "?";
}

void check_outcome(Outcome actual, Outcome expected, const char* what) {
  if (actual != expected) std::printf("  %s: got %s, expected %s\n", what, name(actual), name(expected));
  check(actual == expected, what);
}

// Deadlines: one that never comes during a check; one a check waits for; and one a check
// finishes well within (on a busy machine too) and then outlives, to see it was stopped.
constexpr DWORD kNever = 60000;
constexpr DWORD kSoon = 50;
constexpr DWORD kAhead = 500;
// How long a check waits for something that must happen (a generous bound on a busy machine).
constexpr DWORD kPatience = 20000;

std::string pattern(size_t length) {
  std::string out(length, '\0');
  for (size_t i = 0; i < length; ++i) out[i] = static_cast<char>('a' + (i * 7) % 26);
  return out;
}

// A client's body as IIS hands it out: the first `sync_reads` reads complete at once with at
// most `step` bytes; later ones go pending until the check delivers bytes into the buffer the
// reader gave, as the completion of an asynchronous read would.
class ScriptedSource final : public gh_iis::EntitySource {
 public:
  explicit ScriptedSource(std::string data, int sync_reads = -1, size_t step = 4096)
      : data_(std::move(data)),
        sync_reads_(sync_reads),
        step_(step),
        cancelled_(CreateEventW(nullptr, TRUE, FALSE, nullptr)) {}
  ~ScriptedSource() override {
    CloseHandle(cancelled_);
    CloseHandle(cancelled_pending_);
  }

  DWORD remaining() override { return static_cast<DWORD>(data_.size() - offset_ + unannounced_); }

  HRESULT read(void* buffer, DWORD size, DWORD* received, BOOL* pending) override {
    // The deadline's first cancel lands after the reader's check and before this read.
    if (read_after_first_cancel) wait_for_cancel();
    ++reads;
    largest_read = std::max(largest_read, size);
    if (FAILED(fail_with)) return fail_with;
    if (offset_ == data_.size()) return HRESULT_FROM_WIN32(ERROR_HANDLE_EOF);
    if (sync_reads_ != 0) {
      if (sync_reads_ > 0) --sync_reads_;
      *received = copy(buffer, std::min<size_t>(size, step_));
      *pending = FALSE;
      return S_OK;
    }
    pending_buffer_ = buffer;
    pending_size_ = size;
    read_pending_.store(true);
    *received = 0;
    *pending = TRUE;
    return S_OK;
  }

  void cancel() override {
    cancels.fetch_add(1);
    // Whether a read was pending, before the read waiting for this cancel may start.
    const bool found_a_read = read_pending_.load();
    SetEvent(cancelled_);
    if (found_a_read) SetEvent(cancelled_pending_);
    if (cancel_takes_ms > 0) Sleep(cancel_takes_ms);
    cancel_finished.store(true);
  }

  /** Completes the pending read with up to `most` bytes; returns how many. */
  DWORD deliver(size_t most) {
    const DWORD n = copy(pending_buffer_, std::min<size_t>(pending_size_, most));
    pending_buffer_ = nullptr;
    read_pending_.store(false);
    return n;
  }

  bool wait_for_cancel() { return WaitForSingleObject(cancelled_, kPatience) == WAIT_OBJECT_0; }
  /** Waits for a cancel that found a read pending. */
  bool wait_for_cancel_of_pending_read() { return WaitForSingleObject(cancelled_pending_, kPatience) == WAIT_OBJECT_0; }
  size_t delivered() const { return offset_; }

  /** The size the client claims beyond its data (a body whose end comes as ERROR_HANDLE_EOF). */
  size_t unannounced_ = 0;
  HRESULT fail_with = S_OK;
  bool read_after_first_cancel = false;
  DWORD cancel_takes_ms = 0;
  int reads = 0;
  DWORD largest_read = 0;
  std::atomic<int> cancels{0};
  std::atomic<bool> cancel_finished{false};

 private:
  DWORD copy(void* buffer, size_t most) {
    const size_t n = std::min(most, data_.size() - offset_);
    std::memcpy(buffer, data_.data() + offset_, n);
    offset_ += n;
    return static_cast<DWORD>(n);
  }

  std::string data_;
  size_t offset_ = 0;
  int sync_reads_;
  size_t step_;
  void* pending_buffer_ = nullptr;
  DWORD pending_size_ = 0;
  std::atomic<bool> read_pending_{false};
  HANDLE cancelled_;
  HANDLE cancelled_pending_ = CreateEventW(nullptr, TRUE, FALSE, nullptr);
};

// Feeds every pending read `step` bytes until the reader is done.
Outcome drive(gh_iis::BodyReader& reader, ScriptedSource& source, Outcome outcome, size_t step) {
  while (outcome == Outcome::kPending) outcome = reader.on_completion(S_OK, source.deliver(step));
  return outcome;
}

void no_body_reads_nothing() {
  ScriptedSource source("");
  gh_iis::BodyReader reader(source, 1 << 20, kSoon);
  check_outcome(reader.start(), Outcome::kComplete, "no body: complete");
  check(reader.body().empty() && source.reads == 0, "no body: nothing read");
  Sleep(kSoon * 6);
  check(source.cancels.load() == 0, "no body: no deadline started");
}

void body_already_there() {
  const std::string data = pattern(40000);
  ScriptedSource source(data, -1, 7000);
  gh_iis::BodyReader reader(source, 1 << 20, kAhead);
  check_outcome(reader.start(), Outcome::kComplete, "preloaded: complete without a completion");
  check(reader.body() == data, "preloaded: the body, in order, from several reads");
  Sleep(kAhead * 3);
  check(source.cancels.load() == 0, "preloaded: the deadline was stopped");
}

void body_arriving_later() {
  const std::string data = pattern(50000);
  ScriptedSource source(data, 1, 3000);
  gh_iis::BodyReader reader(source, 1 << 20, kAhead);
  const Outcome first = reader.start();
  check_outcome(first, Outcome::kPending, "slow body: pending after what was there");
  check_outcome(drive(reader, source, first, 5000), Outcome::kComplete, "slow body: complete");
  check(reader.body() == data, "slow body: the body, in order, from the completions");
  Sleep(kAhead * 3);
  check(source.cancels.load() == 0, "slow body: finished before the deadline, never cancelled");
}

void end_of_body_reported_by_the_read() {
  const std::string data = pattern(1000);
  ScriptedSource source(data, -1);
  source.unannounced_ = 500;  // the request said more would come
  gh_iis::BodyReader reader(source, 1 << 20, kNever);
  check_outcome(reader.start(), Outcome::kComplete, "end of body from a read: complete");
  check(reader.body() == data, "end of body from a read: what came");

  ScriptedSource later(data, 0);
  gh_iis::BodyReader reader2(later, 1 << 20, kNever);
  check_outcome(reader2.start(), Outcome::kPending, "end of body from a completion: pending first");
  check_outcome(reader2.on_completion(HRESULT_FROM_WIN32(ERROR_HANDLE_EOF), 0), Outcome::kComplete,
                "end of body from a completion: complete");

  ScriptedSource empty(data, 0);
  gh_iis::BodyReader reader3(empty, 1 << 20, kNever);
  reader3.start();
  check_outcome(reader3.on_completion(S_OK, 0), Outcome::kComplete, "a completion with no bytes ends the body");
}

void over_the_limit() {
  const size_t limit = 50000;
  const std::string data = pattern(80000);
  ScriptedSource source(data, -1, 16384);
  gh_iis::BodyReader reader(source, limit, kNever);
  check_outcome(reader.start(), Outcome::kComplete, "over the limit: complete (the core answers 413)");
  check(reader.body() == data.substr(0, limit + 1), "over the limit: exactly one byte past the limit kept");
  check(source.delivered() == limit + 1, "over the limit: nothing more taken from the client");
  check(source.largest_read <= 16384, "over the limit: reads no larger than the reader's buffer");

  ScriptedSource slow(data, 0);
  gh_iis::BodyReader reader2(slow, limit, kNever);
  check_outcome(drive(reader2, slow, reader2.start(), 16384), Outcome::kComplete, "over the limit, slowly: complete");
  check(reader2.body().size() == limit + 1 && slow.delivered() == limit + 1,
        "over the limit, slowly: one byte past the limit, no more read");
}

void client_gone() {
  ScriptedSource refused(pattern(100), -1);
  refused.fail_with = HRESULT_FROM_WIN32(ERROR_CONNECTION_INVALID);
  gh_iis::BodyReader reader(refused, 1 << 20, kNever);
  check_outcome(reader.start(), Outcome::kBroken, "a read refused: broken");

  ScriptedSource dropped(pattern(100), 0);
  gh_iis::BodyReader reader2(dropped, 1 << 20, kNever);
  reader2.start();
  check_outcome(reader2.on_completion(HRESULT_FROM_WIN32(ERROR_NETNAME_DELETED), 0), Outcome::kBroken,
                "a read that fails, no deadline: broken");
  check(dropped.cancels.load() == 0, "a read that fails, no deadline: nothing cancelled");
}

void deadline_cancels_the_read() {
  ScriptedSource source(pattern(1000), 0);
  gh_iis::BodyReader reader(source, 1 << 20, kSoon);
  check_outcome(reader.start(), Outcome::kPending, "deadline: pending");
  check(source.wait_for_cancel(), "deadline: the pending read is cancelled");
  check_outcome(reader.on_completion(HRESULT_FROM_WIN32(ERROR_OPERATION_ABORTED), 0), Outcome::kTimedOut,
                "deadline: the cancelled read is a time-out");
  check(source.reads == 1, "deadline: no read after it");
}

void deadline_just_before_a_read() {
  // The deadline passed after the reader's check and before the read started, so its first
  // cancel found nothing to cancel: the next one, a second later, cancels the read.
  ScriptedSource source(pattern(1000), 0);
  source.read_after_first_cancel = true;
  gh_iis::BodyReader reader(source, 1 << 20, kSoon);
  check_outcome(reader.start(), Outcome::kPending, "deadline just before a read: the read went pending");
  check(source.wait_for_cancel_of_pending_read(), "deadline just before a read: cancelled all the same");
  check_outcome(reader.on_completion(HRESULT_FROM_WIN32(ERROR_OPERATION_ABORTED), 0), Outcome::kTimedOut,
                "deadline just before a read: a time-out");
}

void deadline_between_reads() {
  // The read completed with data just as the deadline passed: no further read starts.
  ScriptedSource source(pattern(1000), 0);
  gh_iis::BodyReader reader(source, 1 << 20, kSoon);
  reader.start();
  check(source.wait_for_cancel(), "deadline between reads: passed");
  check_outcome(reader.on_completion(S_OK, source.deliver(100)), Outcome::kTimedOut,
                "deadline between reads: a time-out");
  check(source.reads == 1, "deadline between reads: no read started after it");
}

void deadline_waits_for_its_cancel() {
  ScriptedSource source(pattern(1000), 0);
  source.cancel_takes_ms = 300;
  gh_iis::BodyReader reader(source, 1 << 20, kSoon);
  reader.start();
  check(source.wait_for_cancel(), "a slow cancel: started");
  // IIS completes the cancelled read while the cancel call has not yet returned.
  check_outcome(reader.on_completion(HRESULT_FROM_WIN32(ERROR_OPERATION_ABORTED), 0), Outcome::kTimedOut,
                "a slow cancel: a time-out");
  check(source.cancel_finished.load(), "a slow cancel: finished before the reader let go");
}

void reader_gone_before_the_deadline() {
  ScriptedSource source(pattern(1000), 0);
  {
    gh_iis::BodyReader reader(source, 1 << 20, kAhead);
    reader.start();
  }
  Sleep(kAhead * 3);
  check(source.cancels.load() == 0, "reader gone while pending: its deadline never fires");

  ScriptedSource slow(pattern(1000), 0);
  slow.cancel_takes_ms = 300;
  {
    gh_iis::BodyReader reader(slow, 1 << 20, kSoon);
    reader.start();
    check(slow.wait_for_cancel(), "reader gone during a cancel: started");
  }
  check(slow.cancel_finished.load(), "reader gone during a cancel: waited for it");
}

}  // namespace

int main() {
  no_body_reads_nothing();
  body_already_there();
  body_arriving_later();
  end_of_body_reported_by_the_read();
  over_the_limit();
  client_gone();
  deadline_cancels_the_read();
  deadline_between_reads();
  deadline_just_before_a_read();
  deadline_waits_for_its_cancel();
  reader_gone_before_the_deadline();
  return gh_checks::summary();
}
