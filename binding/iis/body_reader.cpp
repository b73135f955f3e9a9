#include "body_reader.h"

#include <algorithm>

namespace gh_iis {

namespace {

const HRESULT kEndOfBody = HRESULT_FROM_WIN32(ERROR_HANDLE_EOF);

// After the deadline, how often the timer cancels again (a read started just as it passed).
constexpr DWORD kCancelAgainMs = 1000;

}  // namespace

BodyReader::Outcome BodyReader::start() {
  if (source_.remaining() == 0) return Outcome::kComplete;
  // Armed before the first read, so a read that completes at once on another thread never
  // meets a timer still being set up.
  timer_ = CreateThreadpoolTimer(&BodyReader::expire, this, nullptr);
  if (timer_ == nullptr) return Outcome::kFailed;
  // Relative due time: negative, in 100-nanosecond units.
  ULARGE_INTEGER due;
  due.QuadPart = static_cast<ULONGLONG>(-static_cast<LONGLONG>(deadline_ms_) * 10000);
  FILETIME when;
  when.dwLowDateTime = due.LowPart;
  when.dwHighDateTime = due.HighPart;
  SetThreadpoolTimer(timer_, &when, kCancelAgainMs, 0);
  return pump();
}

BodyReader::Outcome BodyReader::on_completion(HRESULT status, DWORD bytes) {
  if (status == kEndOfBody) return finish(Outcome::kComplete);
  if (FAILED(status)) return finish(Outcome::kBroken);  // kTimedOut when it was the deadline's cancel
  if (bytes == 0) return finish(Outcome::kComplete);
  body_.append(chunk_, std::min<size_t>(bytes, sizeof chunk_));
  return pump();
}

// Reads until a read goes pending or the body is done.
BodyReader::Outcome BodyReader::pump() {
  for (;;) {
    if (body_.size() > limit_ || source_.remaining() == 0) return finish(Outcome::kComplete);
    // Never more than one byte past the limit.
    const DWORD size = static_cast<DWORD>(std::min(sizeof chunk_, limit_ + 1 - body_.size()));
    if (expired_.load()) return finish(Outcome::kTimedOut);
    DWORD received = 0;
    BOOL pending = FALSE;
    const HRESULT hr = source_.read(chunk_, size, &received, &pending);
    if (hr == kEndOfBody) return finish(Outcome::kComplete);
    if (FAILED(hr)) return finish(Outcome::kBroken);
    // Under way: its completion may be running already, on another thread. Touch nothing.
    if (pending) return Outcome::kPending;
    if (received == 0) return finish(Outcome::kComplete);
    body_.append(chunk_, std::min<size_t>(received, size));
  }
}

BodyReader::Outcome BodyReader::finish(Outcome outcome) {
  disarm();
  // A read that failed after the deadline passed was the deadline's doing.
  if (outcome == Outcome::kBroken && expired_.load()) return Outcome::kTimedOut;
  return outcome;
}

VOID CALLBACK BodyReader::expire(PTP_CALLBACK_INSTANCE, PVOID self, PTP_TIMER) {
  auto* reader = static_cast<BodyReader*>(self);
  reader->expired_.store(true);
  reader->source_.cancel();
}

void BodyReader::disarm() {
  if (timer_ == nullptr) return;
  // Stop it, wait for a callback under way (it uses this reader and the source), then free it.
  SetThreadpoolTimer(timer_, nullptr, 0, 0);
  WaitForThreadpoolTimerCallbacks(timer_, TRUE);
  CloseThreadpoolTimer(timer_);
  timer_ = nullptr;
}

}  // namespace gh_iis
