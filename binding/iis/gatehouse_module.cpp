#include "gatehouse_module.h"

#include <chrono>
#include <cstdio>
#include <string>

#include "../core/error_response.h"
#include "embedded_node.h"
#include "event_log.h"
#include "request_edits.h"
#include "response_writer.h"

namespace gh_iis {
namespace {

// The largest auth-route body the core takes (MAX_AUTH_BODY_BYTES: token exchange JSON,
// form_post callbacks, back-channel logouts). One byte more is read so that the core sees
// "too large" and says so (413); nothing beyond, so a slow upload holds at most this much.
constexpr size_t kMaxAuthBody = 64 * 1024;

// How long an auth-route body may take to arrive in full: the sidecar's deadline
// (DEFAULT_AUTH_BODY_DEADLINE_MS). Later, the module answers 408 and closes the connection.
constexpr DWORD kAuthBodyDeadlineMs = 30000;

// Every request the module judges, whether it lets it through or answers it, is kept out of
// http.sys's kernel cache. IIS puts a response there (a static file hit twice within the
// activity period, by default) unless a module of the request disables it, and http.sys then
// answers later requests for that URL itself, before OnBeginRequest runs: a file served once
// to a signed-in user would be served to anyone. IIS's own authentication modules disable it
// for the requests they authenticate, with this reason (IISCacheEvents::HTTPSYS_CACHEABLE
// NON_ANONYMOUS_ACCESS, as failed request tracing names it). See docs/in-server-module.md.
constexpr ULONG kKernelCacheReasonNonAnonymousAccess = 11;

}  // namespace

REQUEST_NOTIFICATION_STATUS GatehouseModule::OnBeginRequest(IHttpContext* context, IHttpEventProvider*) {
  try {
    return begin(context);
  } catch (...) {
    return failed(context, "OnBeginRequest");
  }
}

REQUEST_NOTIFICATION_STATUS GatehouseModule::OnAsyncCompletion(IHttpContext* context, DWORD, BOOL, IHttpEventProvider*,
                                                               IHttpCompletionInfo* completion) {
  try {
    return resume(context, completion);
  } catch (...) {
    return failed(context, "OnAsyncCompletion");
  }
}

REQUEST_NOTIFICATION_STATUS GatehouseModule::begin(IHttpContext* context) {
  // First, before anything can answer or fail: no path leaves a judged response cacheable.
  context->GetResponse()->DisableKernelCache(kKernelCacheReasonNonAnonymousAccess);
  start_node_once();
  if (node_has_ended()) {
    slot_.core_not_coming();     // whoever waits for the core hears it now
    recycle_after_node_ended();  // and the engine slot answers 503 below
  }
  // Node boots: wait for the core (resumed when it attaches, or when the wait runs out).
  waiting_for_core_ = true;
  if (slot_.wait_for_core(&GatehouseModule::Resume, context)) return RQ_NOTIFICATION_PENDING;  // touch nothing more
  waiting_for_core_ = false;
  return after_core(context);
}

// The core is attached, or will not be waited for any longer.
REQUEST_NOTIFICATION_STATUS GatehouseModule::after_core(IHttpContext* context) {
  IHttpRequest* request = context->GetRequest();
  const HTTP_REQUEST* raw = request->GetRawHttpRequest();
  if (raw == nullptr) return refuse(context, 500, "The authentication layer could not read this request.");
  view_ = std::make_unique<HttpRequestView>(*raw, request->GetHttpMethod());
  const gh_request_view& v = view_->view();
  if (!slot_.needs_body(reinterpret_cast<const char*>(v.path.ptr), v.path.len)) return decide(context);
  entity_ = std::make_unique<RequestEntity>(context);
  body_ = std::make_unique<BodyReader>(*entity_, kMaxAuthBody, kAuthBodyDeadlineMs);
  reading_body_ = true;
  const BodyOutcome outcome = body_->start();
  if (outcome == BodyOutcome::kPending) return RQ_NOTIFICATION_PENDING;  // and touch nothing more
  return after_read(context, outcome);
}

REQUEST_NOTIFICATION_STATUS GatehouseModule::resume(IHttpContext* context, IHttpCompletionInfo* completion) {
  if (waiting_for_core_) {
    waiting_for_core_ = false;
    return after_core(context);
  }
  if (reading_body_) {
    if (completion == nullptr) return refuse(context, 500, "The authentication layer could not read this request.");
    const BodyOutcome outcome =
        body_->on_completion(completion->GetCompletionStatus(), completion->GetCompletionBytes());
    if (outcome == BodyOutcome::kPending) return RQ_NOTIFICATION_PENDING;  // and touch nothing more
    return after_read(context, outcome);
  }
  if (decision_ == nullptr) return RQ_NOTIFICATION_CONTINUE;
  return apply(context);
}

// An exception reached a notification boundary. Nothing is pending (see gatehouse_module.h),
// so this handler owns the request: stop the body's deadline, log, answer 500.
REQUEST_NOTIFICATION_STATUS GatehouseModule::failed(IHttpContext* context, const char* where) noexcept {
  stop_deadline();
  reading_body_ = false;
  body_.reset();  // its destructor stops and waits for the deadline's timer
  try {
    report(std::string("gatehouse: an exception ended ") + where + "; the request is answered 500");
    return refuse(context, 500, "The authentication layer failed on this request.");
  } catch (...) {
    return fail(context, 500);
  }
}

// On Node's thread (or the engine's shutdown): resume the pending notification.
// A failed PostCompletion leaves the request to IIS's own timeouts (no other thread may finish
// it from here): said in the event log, so that such a hang is never silent.
void GatehouseModule::Resume(void* context) {
  const HRESULT hr = static_cast<IHttpContext*>(context)->PostCompletion(0);
  if (FAILED(hr)) report_request_failure("PostCompletion", hr);
}

// The body is read, or will not be.
REQUEST_NOTIFICATION_STATUS GatehouseModule::after_read(IHttpContext* context, BodyOutcome outcome) {
  reading_body_ = false;
  switch (outcome) {
    case BodyOutcome::kComplete:
      view_->set_body(body_->body().data(), body_->body().size());
      return decide(context);
    case BodyOutcome::kTimedOut: {
      // The sidecar's answer; the unread rest of the body would hold the connection, so it
      // is closed after the response.
      const REQUEST_NOTIFICATION_STATUS status = refuse(context, 408, "The body did not arrive in time.");
      disconnect_after_response(context);  // after respond's Clear()
      return status;
    }
    case BodyOutcome::kBroken:  // the client went away
      return refuse(context, 400, "The body could not be read.");
    case BodyOutcome::kFailed:
    case BodyOutcome::kPending:  // never passed here
      break;
  }
  return refuse(context, 500, "The authentication layer could not read this request.");
}

void GatehouseModule::CompleteShared(void* holder, const gh_decision* decision) {
  const std::unique_ptr<SharedDecision> owned(static_cast<SharedDecision*>(holder));
  DeferredDecision::OnComplete(owned->get(), decision);
}

// On the deadline's thread: no decision in time. The first completion wins (DeferredDecision):
// if the core's comes later, it is dropped; if it came first, this does nothing.
void GatehouseModule::DecisionTimedOut(const SharedDecision& decision, unsigned long timeout_ms) {
  if (decision->completions() > 0) return;
  const gh::ErrorResponse answer(503, "The authentication layer did not decide in time.");
  DeferredDecision::OnComplete(decision.get(), answer.decision());
  char line[160];
  std::snprintf(line, sizeof line,
                "a decision did not come within %lu s (GATEHOUSE_IIS_DECISION_TIMEOUT): answered 503",
                timeout_ms / 1000);
  report_request_trouble(line);
}

REQUEST_NOTIFICATION_STATUS GatehouseModule::decide(IHttpContext* context) {
  decision_ = std::make_shared<DeferredDecision>(&GatehouseModule::Resume, context);
  auto engine_holder = std::make_unique<SharedDecision>(decision_);
  const unsigned long timeout_ms = decision_timeout_ms();
  if (timeout_ms > 0) {
    deadline_ = deadlines_.schedule(std::chrono::milliseconds(timeout_ms),
                                    [decision = decision_, timeout_ms] { DecisionTimedOut(decision, timeout_ms); });
  }
  // The engine completes every submission exactly once, and frees the holder then.
  slot_.submit(view_->view(), &GatehouseModule::CompleteShared, engine_holder.release());
  if (!decision_->settle_after_submit()) return RQ_NOTIFICATION_PENDING;
  return apply(context);
}

void GatehouseModule::stop_deadline() noexcept {
  if (deadline_ != 0) deadlines_.cancel(deadline_);
  deadline_ = 0;
}

REQUEST_NOTIFICATION_STATUS GatehouseModule::apply(IHttpContext* context) {
  stop_deadline();
  const gh::OwnedDecision& d = decision_->decision();
  if (d.kind() != GH_DECISION_CONTINUE) return respond(context, d);
  const char* call = "";
  const HRESULT edited = edit_headers(context->GetRequest(), d, &call);
  if (FAILED(edited)) {
    report_request_failure(call, edited);
    return refuse(context, 500, "The identity headers could not be set.");
  }
  if (body_ != nullptr && !body_->body().empty()) {
    const HRESULT hr = give_body_back(context, body_->body());
    if (FAILED(hr)) {
      report_request_failure("IHttpRequest::InsertEntityBody", hr);
      return refuse(context, 500, "The request's body could not be passed on.");
    }
  }
  return RQ_NOTIFICATION_CONTINUE;
}

}  // namespace gh_iis
