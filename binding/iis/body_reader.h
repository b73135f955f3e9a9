// The body of an authentication-route POST (token exchange JSON, form_post
// callbacks), as the IIS module reads it: asynchronously, so a client that
// sends slowly holds no IIS thread; at most `limit` + 1 bytes (the core then
// sees "too large" and says so); and within a deadline for the whole body, as
// the sidecar has (http.sys's own entity-body timer restarts with every packet,
// so a client dripping a byte at a time would otherwise keep the request open
// for as long as it likes).
//
// The deadline is a thread-pool timer that cancels the pending read; the read
// then completes with an error and the outcome is kTimedOut. No read starts
// once the deadline has passed; one started just as it passed (the check
// before it came first, the cancel before the read) is cancelled by the
// timer's next tick, a second later: the timer goes on cancelling until it is
// stopped. No lock is held across a read, and nothing of the reader is touched
// once a read is under way: IIS may run the read's completion on another
// thread before the call that started it has returned.
//
// Windows SDK headers only, no IIS ones: the Windows leg builds it with
// mingw-w64 and tests it under wine against a scripted source
// (binding/host/body_reader_test.cpp); binding/iis/request_entity.h gives it IIS's
// ReadEntityBody and CancelIo.
#ifndef GATEHOUSE_IIS_BODY_READER_H
#define GATEHOUSE_IIS_BODY_READER_H

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <atomic>
#include <cstddef>
#include <string>

namespace gh_iis {

/** What the reader needs of the request: IHttpRequest's entity body and IHttpContext::CancelIo, in IIS. */
class EntitySource {
 public:
  virtual ~EntitySource() = default;
  /** Bytes the client has still to send (IHttpRequest::GetRemainingEntityBytes). */
  virtual DWORD remaining() = 0;
  /**
   * Starts an asynchronous read into buffer. *pending TRUE: it completes later, through
   * BodyReader::on_completion; FALSE: *received bytes are in buffer already.
   * HRESULT_FROM_WIN32(ERROR_HANDLE_EOF): nothing is left to read.
   */
  virtual HRESULT read(void* buffer, DWORD size, DWORD* received, BOOL* pending) = 0;
  /**
   * Cancels the pending read, which then completes with an error. Called on a thread-pool
   * thread, once the deadline has passed and every second after, whether or not a read is pending.
   */
  virtual void cancel() = 0;
};

class BodyReader {
 public:
  enum class Outcome {
    kPending,   // a read is under way: wait for its completion and pass it to on_completion
    kComplete,  // body() is the whole body, or limit + 1 bytes of it
    kTimedOut,  // the deadline passed first
    kBroken,    // the body could not be read (the client went away)
    kFailed,    // the deadline could not be set up (no memory): fail closed
  };

  BodyReader(EntitySource& source, size_t limit, DWORD deadline_ms)
      : source_(source), limit_(limit), deadline_ms_(deadline_ms) {}
  BodyReader(const BodyReader&) = delete;
  BodyReader& operator=(const BodyReader&) = delete;
  /** Stops the deadline (waiting for a cancel under way): the source must outlive the reader. */
  ~BodyReader() { disarm(); }

  /** Once, first: reads what is there already, and starts the deadline if more is to come. */
  Outcome start();

  /** A pending read completed (IHttpCompletionInfo's status and bytes). */
  Outcome on_completion(HRESULT status, DWORD bytes);

  /** What was read: valid once an outcome other than kPending was returned. */
  const std::string& body() const { return body_; }

 private:
  static VOID CALLBACK expire(PTP_CALLBACK_INSTANCE, PVOID self, PTP_TIMER);
  Outcome pump();
  Outcome finish(Outcome outcome);
  void disarm();

  EntitySource& source_;
  const size_t limit_;
  const DWORD deadline_ms_;
  std::string body_;
  char chunk_[16384];  // what a pending read fills: lives as long as the request's module
  PTP_TIMER timer_ = nullptr;
  std::atomic<bool> expired_{false};
};

}  // namespace gh_iis

#endif
