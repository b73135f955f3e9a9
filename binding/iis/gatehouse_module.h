// The IIS module's request handler: one per request, made by the module's factory (module.cpp).
//
//   OnBeginRequest: Node started if this is the worker process's first request for a site
//     that enables gatehouse (embedded_node.h) → while Node boots, wait for the core to attach
//     (pending, at most GATEHOUSE_IIS_START_WAIT) → HTTP_REQUEST → request view → for the auth
//     routes' POSTs, the body, read asynchronously (each pending read returns
//     RQ_NOTIFICATION_PENDING and resumes in OnAsyncCompletion) → engine slot →
//     decided inline (core not running: 503) → apply now, else return
//     RQ_NOTIFICATION_PENDING (a decision that has not come within GATEHOUSE_IIS_DECISION_TIMEOUT
//     is answered 503 and logged);
//   the decision arrives on Node's thread → PostCompletion → OnAsyncCompletion
//     (an IIS thread) → apply: remove/set request headers and continue, or
//     write the response and finish the request. A body the module read is given back
//     to IIS (InsertEntityBody) when the request continues, so the app reads it whole.
//
// IIS may run a completion on another of its threads before the call that started the
// operation has returned: once a body read or a submission has gone pending, the handler
// touches nothing of the module and returns RQ_NOTIFICATION_PENDING.
//
// No C++ exception reaches IIS: both notifications catch everything and answer 500. Nothing
// that can throw runs after an operation has gone pending, so the handler that catches owns
// the request.
#ifndef GATEHOUSE_IIS_GATEHOUSE_MODULE_H
#define GATEHOUSE_IIS_GATEHOUSE_MODULE_H

#include "iis_sdk.h"

#include <cstdint>
#include <memory>

#include "body_reader.h"
#include "deadline_timer.h"
#include "deferred_decision.h"
#include "engine_slot.h"
#include "http_request_view.h"
#include "request_entity.h"

namespace gh_iis {

class GatehouseModule final : public CHttpModule {
  using BodyOutcome = BodyReader::Outcome;

 public:
  /** The slot submits to the core, the timer holds the decisions' deadlines: both live as long as the process. */
  GatehouseModule(EngineSlot& slot, DeadlineTimer& deadlines) : slot_(slot), deadlines_(deadlines) {}

  REQUEST_NOTIFICATION_STATUS OnBeginRequest(IHttpContext* context, IHttpEventProvider*) override;

  // On an IIS thread: a body read completed, or (after PostCompletion) the decision is here.
  REQUEST_NOTIFICATION_STATUS OnAsyncCompletion(IHttpContext* context, DWORD, BOOL, IHttpEventProvider*,
                                                IHttpCompletionInfo* completion) override;

  void Dispose() override { delete this; }

 private:
  // The engine holds its own reference to the decision until it completes it (exactly once, even
  // after the deadline has answered), and so does the deadline: either may come last.
  using SharedDecision = std::shared_ptr<DeferredDecision>;

  REQUEST_NOTIFICATION_STATUS begin(IHttpContext* context);
  REQUEST_NOTIFICATION_STATUS after_core(IHttpContext* context);
  REQUEST_NOTIFICATION_STATUS resume(IHttpContext* context, IHttpCompletionInfo* completion);
  REQUEST_NOTIFICATION_STATUS failed(IHttpContext* context, const char* where) noexcept;
  REQUEST_NOTIFICATION_STATUS after_read(IHttpContext* context, BodyOutcome outcome);
  REQUEST_NOTIFICATION_STATUS decide(IHttpContext* context);
  REQUEST_NOTIFICATION_STATUS apply(IHttpContext* context);
  void stop_deadline() noexcept;
  static void Resume(void* context);
  static void CompleteShared(void* holder, const gh_decision* decision);
  static void DecisionTimedOut(const SharedDecision& decision, unsigned long timeout_ms);

  EngineSlot& slot_;
  DeadlineTimer& deadlines_;
  std::unique_ptr<HttpRequestView> view_;
  // Declared before the reader, which uses it until its own end.
  std::unique_ptr<RequestEntity> entity_;
  std::unique_ptr<BodyReader> body_;
  bool reading_body_ = false;
  bool waiting_for_core_ = false;
  SharedDecision decision_;
  std::uint64_t deadline_ = 0;
};

}  // namespace gh_iis

#endif
