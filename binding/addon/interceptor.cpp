// The request-interception hook: JavaScript registers a policy; native host
// threads submit requests through the C ABI engine; the requests cross to the
// JavaScript thread in batches (below), and each decision (sync or a promise)
// goes back to the engine, which completes the request exactly once. A
// throwing or rejecting policy answers 500; close() or teardown answers 503.
// The hook never keeps the event loop alive.
//
// The batched crossing: a native thread queues its request (pending_queue.h);
// only the push that finds the queue empty calls the thread-safe function, so
// one wake of the Node thread takes every request queued until then and runs
// them all inside that one callback scope: with a batch policy (what
// createInterceptor passes) in one call into JavaScript, the requests as one
// JSON text; the promise jobs of the whole batch run once, at its end. While
// batches hold more than one request, the decisions are completed (and the
// waiting native threads woken) on a thread of their own (completer.h).
//
// The requests go to JavaScript as JSON text (request_json.cpp); the decisions
// come back copied out of JavaScript (decision_from_js.cpp).
//
// `attachHost` hands the engine to a web-server module in another binary
// (binding/iis) through its host link; the native test host
// (binding/host/module_host.cpp) attaches the same way.
#include "interceptor.h"

#include "../core/bytes.h"
#include "decision_from_js.h"
#include "js_bytes.h"
#include "request_json.h"

#include <atomic>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

using gh::bytes_from_js;
using gh::bytes_of;
using gh::completion_from_js;
using gh::request_to_js;
using gh::requests_to_js;

Napi::Function Interceptor::Define(Napi::Env env) {
  return DefineClass(
      env, "Interceptor",
      {InstanceMethod<&Interceptor::Close>("close"), InstanceMethod<&Interceptor::PendingCount>("pendingCount"),
       InstanceMethod<&Interceptor::AttachHost>("attachHost"),
       InstanceMethod<&Interceptor::CrossingStats>("crossingStats")});
}

// new Interceptor(policy[, batchPolicy]): batchPolicy(requests) returns one result per request, in order.
Interceptor::Interceptor(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Interceptor>(info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsFunction())
    throw Napi::TypeError::New(env, "new Interceptor(policy): policy must be a function");
  policy_ = Napi::Persistent(info[0].As<Napi::Function>());
  if (info.Length() > 1 && !info[1].IsUndefined()) {
    if (!info[1].IsFunction())
      throw Napi::TypeError::New(env, "new Interceptor(policy, batchPolicy): batchPolicy must be a function");
    batch_policy_ = Napi::Persistent(info[1].As<Napi::Function>());
  }
  settle_ = Napi::Persistent(Napi::Function::New(
      env, [](const Napi::CallbackInfo& i) { return OnSettled(i, false); }, "settle"));
  fail_ = Napi::Persistent(Napi::Function::New(
      env, [](const Napi::CallbackInfo& i) { return OnSettled(i, true); }, "fail"));
  bind_ = Napi::Persistent(settle_.Value().Get("bind").As<Napi::Function>());
  try {
    completer_ = std::make_unique<gh::Completer>();
  } catch (const std::exception&) {
    completer_.reset();  // no thread to spare: decisions complete on this thread
  }
  wake_ = Wake::New(env, "gatehouse-interceptor", 0, 1, this);
  wake_.Unref(env);  // pending requests never keep the process alive
  if (gh_engine_new(&Interceptor::OnPolicy, this, &engine_) != GH_OK)
    throw Napi::Error::New(env, "could not create the interception engine");
  napi_add_env_cleanup_hook(env, &Interceptor::OnTeardown, this);
  env_ = env;
}

Interceptor::~Interceptor() {
  napi_remove_env_cleanup_hook(env_, &Interceptor::OnTeardown, this);
  Shutdown();
  FailQueued();  // nothing submits any more (the host is detached); for certainty
  // Promises that never settled: their requests were answered 503 by the shutdown.
  for (auto& [id, p] : awaiting_) gh_pending_release(p);
  awaiting_.clear();
  gh_engine_free(engine_);
}

void Interceptor::OnTeardown(void* data) { static_cast<Interceptor*>(data)->Shutdown(); }

void Interceptor::Shutdown() {
  if (closed_.exchange(true)) return;
  DetachHost();  // first: the host stops submitting, then what is pending answers 503
  // What JavaScript decided before this is delivered, not overruled by the 503s below.
  if (completer_) completer_->stop();
  gh_engine_shutdown(engine_);  // every pending request answers 503; later submissions too
  // No wake reaches JavaScript after this (a wake already scheduled runs with no
  // environment and does nothing), so what is queued now is released here; a
  // request queued later finds its wake refused and is released by its own thread.
  wake_.Abort();
  FailQueued();
}

// On a native thread: queue the request for the Node thread; the push that
// makes the queue non-empty schedules the one wake that will take it (and every
// request queued behind it before the take). If JavaScript is gone, 503.
void Interceptor::OnPolicy(void* data, gh_pending* pending) {
  auto* self = static_cast<Interceptor*>(data);
  bool wake = false;
  try {
    wake = self->queue_.push(pending);
  } catch (const std::bad_alloc&) {
    gh_pending_fail(pending, 503, "The authentication layer is overloaded.");
    gh_pending_release(pending);
    return;
  }
  // Refused (closing): nothing will take the queue, so this thread does, with
  // what others queued behind this request meanwhile.
  if (wake && self->wake_.NonBlockingCall() != napi_ok) self->FailQueued();
}

// Takes what is queued and answers it 503 (shutting down, or no wake possible).
void Interceptor::FailQueued() {
  std::vector<gh_pending*> left;
  queue_.take(left);
  for (gh_pending* p : left) {
    gh_pending_fail(p, 503, "The authentication layer is shutting down.");  // already answered if registered: a no-op
    gh_pending_release(p);
  }
}

// On the Node thread, once per scheduled wake. env == nullptr: the wake was
// left over when the thread-safe function was torn down (after Abort); `self`
// may be gone, and Shutdown/~Interceptor release the queue instead.
void Interceptor::OnWake(Napi::Env env, Napi::Function, Interceptor* self, void*) {
  if (env == nullptr || self == nullptr) return;
  self->Drain(env);
}

// Every queued request, in arrival order, inside this one callback scope: the
// policies' promise jobs run once, after the whole batch (at the scope's end).
void Interceptor::Drain(Napi::Env env) {
  std::vector<gh_pending*> batch;
  queue_.take(batch);
  if (batch.empty()) return;  // an earlier wake took them
  batches_ += 1;
  last_batch_ = batch.size();
  crossed_ += static_cast<double>(batch.size());
  if (static_cast<double>(batch.size()) > largest_batch_) largest_batch_ = static_cast<double>(batch.size());
  if (!batch_policy_.IsEmpty() && !closed_) {
    DecideBatch(env, batch);
    return;
  }
  for (gh_pending* p : batch) {
    if (closed_) {
      // close() from a policy earlier in this batch: the engine answered the rest 503.
      gh_pending_fail(p, 503, "The authentication layer is shutting down.");
      gh_pending_release(p);
      continue;
    }
    Napi::HandleScope scope(env);
    DecideOne(env, p);
  }
}

// One request through the policy, one call.
void Interceptor::DecideOne(Napi::Env env, gh_pending* p) {
  Napi::Value result;
  try {
    result = policy_.Call({request_to_js(env, *gh_pending_request(p))});
  } catch (const Napi::Error&) {
    gh_pending_fail(p, 500, "The authentication layer failed.");
    gh_pending_release(p);
    return;
  }
  Decided(env, result, p);
}

// The whole batch through the batch policy: one JSON text, one parse, one call.
void Interceptor::DecideBatch(Napi::Env env, const std::vector<gh_pending*>& batch) {
  Napi::HandleScope scope(env);
  Napi::Value results;
  try {
    results = batch_policy_.Call({requests_to_js(env, batch)});
    if (!results.IsArray()) throw Napi::TypeError::New(env, "the batch policy must return an array");
  } catch (const Napi::Error&) {
    for (gh_pending* p : batch) {
      gh_pending_fail(p, 500, "The authentication layer failed.");
      gh_pending_release(p);
    }
    return;
  }
  Napi::Array array = results.As<Napi::Array>();
  for (size_t i = 0; i < batch.size(); ++i) {
    gh_pending* p = batch[i];
    if (closed_) {
      gh_pending_fail(p, 503, "The authentication layer is shutting down.");
      gh_pending_release(p);
      continue;
    }
    Napi::HandleScope item(env);
    Napi::Value result;
    try {
      result = array.Get(static_cast<uint32_t>(i));
    } catch (const Napi::Error&) {
      gh_pending_fail(p, 500, "The authentication layer failed.");
      gh_pending_release(p);
      continue;
    }
    Decided(env, result, p);
  }
}

// A policy's result: a decision now, or a promise of one.
void Interceptor::Decided(Napi::Env env, const Napi::Value& result, gh_pending* p) {
  if (result.IsPromise()) {
    AwaitDecision(env, result.As<Napi::Object>(), p);
    return;
  }
  Complete(completion_from_js(p, result));
}

// On the completer thread while requests cross in batches (the JavaScript
// thread is the busy one), else here: for a lone request the extra hop to the
// completer costs more latency than it saves (measured: p99 33 -> 75 µs at one
// native thread).
void Interceptor::Complete(gh::Completion c) {
  if (completer_ && last_batch_ > 1 && completer_->push(c)) return;
  c.finish();
}

// A promised decision: the request waits under a number, and the promise settles it
// through the interceptor's two settle functions bound to that number (a bound
// function per request is cheap; a native function per request is not). The bound
// `this` is the interceptor's own object, which it keeps alive until then.
void Interceptor::AwaitDecision(Napi::Env env, Napi::Object promise, gh_pending* p) {
  uint32_t id;
  do {
    id = ++last_id_;
  } while (id == 0 || awaiting_.count(id) > 0);  // after a wrap, skip numbers still waiting
  awaiting_.emplace(id, p);
  try {
    const Napi::Value self = Value();
    // Collected but not yet finalized: nothing could settle the request any more.
    if (self.IsEmpty()) throw Napi::Error::New(env, "the interceptor is gone");
    const Napi::Number key = Napi::Number::New(env, id);
    const Napi::Value on_decision = bind_.Call(settle_.Value(), {self, key});
    const Napi::Value on_failure = bind_.Call(fail_.Value(), {self, key});
    promise.Get("then").As<Napi::Function>().Call(promise, {on_decision, on_failure});
  } catch (const Napi::Error&) {
    if (gh_pending* waiting = TakeAwaiting(id)) {
      gh_pending_fail(waiting, 500, "The authentication layer failed.");
      gh_pending_release(waiting);
    }
  }
}

gh_pending* Interceptor::TakeAwaiting(uint32_t id) {
  auto found = awaiting_.find(id);
  if (found == awaiting_.end()) return nullptr;
  gh_pending* p = found->second;
  awaiting_.erase(found);
  return p;
}

// settle(id, decision) and fail(id), called with the interceptor's object as `this`.
// A number not waiting (already settled, or made up) changes nothing.
Napi::Value Interceptor::OnSettled(const Napi::CallbackInfo& info, bool failed) {
  Napi::Env env = info.Env();
  if (!info.This().IsObject() || info.Length() < 1 || !info[0].IsNumber()) return env.Undefined();
  Interceptor* self = Napi::ObjectWrap<Interceptor>::Unwrap(info.This().As<Napi::Object>());
  gh_pending* p = self == nullptr ? nullptr : self->TakeAwaiting(info[0].As<Napi::Number>().Uint32Value());
  if (p == nullptr) return env.Undefined();
  if (failed) {
    gh_pending_fail(p, 500, "The authentication layer failed.");
    gh_pending_release(p);
  } else {
    self->Complete(completion_from_js(p, info.Length() > 1 ? info[1] : env.Undefined()));
  }
  return env.Undefined();
}

Napi::Value Interceptor::Close(const Napi::CallbackInfo& info) {
  Shutdown();
  return info.Env().Undefined();
}

// attachHost(link, bodyPathPrefix): link is a host's tagged gh_host_link external.
Napi::Value Interceptor::AttachHost(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  static const napi_type_tag kTag = {GH_HOST_LINK_TAG_LOWER, GH_HOST_LINK_TAG_UPPER};
  bool tagged = false;
  if (info.Length() < 2 || !info[0].IsExternal() || !info[1].IsString() ||
      napi_check_object_type_tag(env, info[0], &kTag, &tagged) != napi_ok || !tagged) {
    throw Napi::TypeError::New(env, "attachHost(link, bodyPathPrefix): link must be a gatehouse host link");
  }
  const auto* link = static_cast<const gh_host_link*>(info[0].As<Napi::External<void>>().Data());
  if (link == nullptr || link->abi_version < 4 || link->attach == nullptr || link->detach == nullptr)
    throw Napi::Error::New(env, "the host link speaks an older gatehouse ABI");
  if (closed_) throw Napi::Error::New(env, "the interceptor is closed");
  DetachHost();
  body_path_prefix_ = bytes_from_js(info[1]);
  const gh_engine_ref ref{GH_ABI_VERSION, engine_, &gh_engine_submit, bytes_of(body_path_prefix_)};
  host_ = link;
  link->attach(link->host_data, &ref);
  return env.Undefined();
}

void Interceptor::DetachHost() {
  if (host_ == nullptr) return;
  host_->detach(host_->host_data, engine_);  // returns once no submission uses the engine
  host_ = nullptr;
}

// { batches, requests, largestBatch }: wakes of the Node thread that found requests, and what they carried.
Napi::Value Interceptor::CrossingStats(const Napi::CallbackInfo& info) {
  Napi::Object stats = Napi::Object::New(info.Env());
  stats.Set("batches", batches_);
  stats.Set("requests", crossed_);
  stats.Set("largestBatch", largest_batch_);
  return stats;
}

Napi::Value Interceptor::PendingCount(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(gh_engine_pending_count(engine_)));
}
