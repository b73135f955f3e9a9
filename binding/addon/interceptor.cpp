// The request-interception hook: JavaScript registers a policy; native host
// threads submit requests through the C ABI engine; each reaches the policy on
// the JavaScript thread through a thread-safe function, and its decision (sync
// or a promise) goes back to the engine, which completes the request exactly
// once. A throwing or rejecting policy answers 500; close() or teardown
// answers 503. The hook never keeps the event loop alive.
//
// `attachHost` hands the engine to a web-server module in another binary
// (binding/iis) through its host link; the native test host
// (binding/host/module_host.cpp) attaches the same way.
#include "interceptor.h"

#include "../core/bytes.h"
#include "../core/json_string.h"
#include "js_bytes.h"
#include "json_text.h"

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

using gh::bytes_from_js;
using gh::append_json_bytes;
using gh::bytes_of;
using gh::js_string;

/** A decision read from JavaScript, owning its bytes (the other way round from gh::OwnedDecision, a host's copy of a decision). */
struct JsDecision {
  gh_decision decision{};
  std::vector<std::string> text;
  std::vector<gh_bytes> remove;
  std::vector<gh_header> headers;
  std::string body;
};

std::unique_ptr<JsDecision> decision_from(const Napi::Value& value) {
  Napi::Env env = value.Env();
  if (!value.IsObject()) throw Napi::TypeError::New(env, "the interceptor must return a decision object");
  Napi::Object object = value.As<Napi::Object>();
  auto owned = std::make_unique<JsDecision>();
  const std::string kind = object.Get("kind").ToString().Utf8Value();
  auto pairs = [&](const char* key) {
    std::vector<std::pair<size_t, size_t>> at;
    Napi::Value list = object.Get(key);
    if (list.IsUndefined()) return at;
    if (!list.IsArray()) throw Napi::TypeError::New(env, std::string(key) + " must be an array of [name, value]");
    Napi::Array array = list.As<Napi::Array>();
    for (uint32_t i = 0; i < array.Length(); ++i) {
      Napi::Value pair = array.Get(i);
      if (!pair.IsArray() || pair.As<Napi::Array>().Length() != 2) throw Napi::TypeError::New(env, std::string(key) + " must be an array of [name, value]");
      owned->text.push_back(bytes_from_js(pair.As<Napi::Array>().Get(0u)));
      owned->text.push_back(bytes_from_js(pair.As<Napi::Array>().Get(1u)));
      at.emplace_back(owned->text.size() - 2, owned->text.size() - 1);
    }
    return at;
  };
  if (kind == "continue") {
    std::vector<size_t> removed;
    Napi::Value remove = object.Get("remove");
    if (!remove.IsUndefined()) {
      if (!remove.IsArray()) throw Napi::TypeError::New(env, "remove must be an array of names");
      Napi::Array array = remove.As<Napi::Array>();
      for (uint32_t i = 0; i < array.Length(); ++i) {
        owned->text.push_back(bytes_from_js(array.Get(i)));
        removed.push_back(owned->text.size() - 1);
      }
    }
    auto set = pairs("set");
    owned->text.shrink_to_fit();  // no more growth: views can be taken now
    for (size_t i : removed) owned->remove.push_back(bytes_of(owned->text[i]));
    for (auto [n, v] : set) owned->headers.push_back(gh_header{bytes_of(owned->text[n]), bytes_of(owned->text[v])});
    owned->decision.kind = GH_DECISION_CONTINUE;
    owned->decision.remove_headers = owned->remove.data();
    owned->decision.remove_count = owned->remove.size();
    owned->decision.set_headers = owned->headers.data();
    owned->decision.set_count = owned->headers.size();
    return owned;
  }
  if (kind == "respond") {
    const int status = object.Get("status").ToNumber().Int32Value();
    if (status < 100 || status > 599) throw Napi::RangeError::New(env, "status must be 100-599");
    auto headers = pairs("headers");
    Napi::Value body = object.Get("body");
    if (body.IsTypedArray()) {
      Napi::Uint8Array array = body.As<Napi::Uint8Array>();
      owned->body.assign(reinterpret_cast<const char*>(array.Data()), array.ByteLength());
    } else if (body.IsString()) {
      owned->body = body.As<Napi::String>().Utf8Value();
    }
    for (auto [n, v] : headers) owned->headers.push_back(gh_header{bytes_of(owned->text[n]), bytes_of(owned->text[v])});
    owned->decision.kind = GH_DECISION_RESPOND;
    owned->decision.status = status;
    owned->decision.response_headers = owned->headers.data();
    owned->decision.response_header_count = owned->headers.size();
    owned->decision.body = bytes_of(owned->body);
    return owned;
  }
  throw Napi::TypeError::New(env, "decision.kind must be \"continue\" or \"respond\"");
}

// The request as the JavaScript object the policy receives, built from JSON
// text in one call (json_text.h): property by property, each header cost about
// six Node-API calls.
Napi::Object request_to_js(Napi::Env env, const gh_request_view& r) {
  const std::pair<const char*, gh_bytes> fields[] = {
      {"{\"method\":", r.method}, {",\"scheme\":", r.scheme}, {",\"host\":", r.host},
      {",\"path\":", r.path},     {",\"query\":", r.query},   {",\"remoteAddress\":", r.remote_address},
  };
  size_t size = 32;  // ",\"headers\":[" and the closing "]}"
  for (const auto& [key, value] : fields) size += std::strlen(key) + value.len + 2;
  for (size_t i = 0; i < r.header_count; ++i) size += r.headers[i].name.len + r.headers[i].value.len + 8;
  std::string json;
  json.reserve(size + size / 8);  // room for some escapes
  for (const auto& [key, value] : fields) {
    json += key;
    append_json_bytes(json, value);
  }
  json += ",\"headers\":[";
  for (size_t i = 0; i < r.header_count; ++i) {
    if (i > 0) json.push_back(',');
    json.push_back('[');
    append_json_bytes(json, r.headers[i].name);
    json.push_back(',');
    append_json_bytes(json, r.headers[i].value);
    json.push_back(']');
  }
  json += "]}";
  Napi::Object object = gh::from_json_text(env, json).As<Napi::Object>();
  if (r.body.ptr != nullptr) object.Set("body", Napi::Buffer<uint8_t>::Copy(env, r.body.ptr, r.body.len));
  return object;
}

void complete_from_js(gh_pending* pending, const Napi::Value& result) {
  try {
    auto decision = decision_from(result);
    gh_pending_complete(pending, &decision->decision);
  } catch (const Napi::Error&) {
    gh_pending_fail(pending, 500, "The authentication layer returned an invalid decision.");
  }
}

}  // namespace

Napi::Function Interceptor::Define(Napi::Env env) {
  return DefineClass(env, "Interceptor",
                     {InstanceMethod<&Interceptor::Close>("close"), InstanceMethod<&Interceptor::PendingCount>("pendingCount"),
                      InstanceMethod<&Interceptor::AttachHost>("attachHost")});
}

Interceptor::Interceptor(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Interceptor>(info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsFunction()) throw Napi::TypeError::New(env, "new Interceptor(policy): policy must be a function");
  policy_ = Napi::Persistent(info[0].As<Napi::Function>());
  settle_ = Napi::Persistent(Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return OnSettled(i, false); }, "settle"));
  fail_ = Napi::Persistent(Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return OnSettled(i, true); }, "fail"));
  bind_ = Napi::Persistent(settle_.Value().Get("bind").As<Napi::Function>());
  tsfn_ = Napi::ThreadSafeFunction::New(env, info[0].As<Napi::Function>(), "gatehouse-interceptor", 0, 1);
  tsfn_.Unref(env);  // pending requests never keep the process alive
  if (gh_engine_new(&Interceptor::OnPolicy, this, &engine_) != GH_OK) throw Napi::Error::New(env, "could not create the interception engine");
  napi_add_env_cleanup_hook(env, &Interceptor::OnTeardown, this);
  env_ = env;
}

Interceptor::~Interceptor() {
  napi_remove_env_cleanup_hook(env_, &Interceptor::OnTeardown, this);
  Shutdown();
  // Promises that never settled: their requests were answered 503 by the shutdown.
  for (auto& [id, p] : awaiting_) gh_pending_release(p);
  awaiting_.clear();
  gh_engine_free(engine_);
}

void Interceptor::OnTeardown(void* data) { static_cast<Interceptor*>(data)->Shutdown(); }

void Interceptor::Shutdown() {
  if (closed_.exchange(true)) return;
  DetachHost();  // first: the host stops submitting, then what is pending answers 503
  gh_engine_shutdown(engine_);  // every pending request answers 503; later submissions too
  tsfn_.Abort();
}

// On a native thread: hand the request to JavaScript; if JavaScript is gone, 503.
void Interceptor::OnPolicy(void* data, gh_pending* pending) {
  auto* self = static_cast<Interceptor*>(data);
  napi_status status = self->tsfn_.NonBlockingCall(pending, [self](Napi::Env env, Napi::Function policy, gh_pending* p) {
    if (env == nullptr) {
      gh_pending_fail(p, 503, "The authentication layer is shutting down.");
      gh_pending_release(p);
      return;
    }
    Napi::Value result;
    try {
      result = policy.Call({request_to_js(env, *gh_pending_request(p))});
    } catch (const Napi::Error&) {
      gh_pending_fail(p, 500, "The authentication layer failed.");
      gh_pending_release(p);
      return;
    }
    if (result.IsPromise()) {
      self->AwaitDecision(env, result.As<Napi::Object>(), p);
      return;
    }
    complete_from_js(p, result);
    gh_pending_release(p);
  });
  if (status != napi_ok) {
    gh_pending_fail(pending, 503, "The authentication layer is shutting down.");
    gh_pending_release(pending);
  }
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
  } else {
    complete_from_js(p, info.Length() > 1 ? info[1] : env.Undefined());
  }
  gh_pending_release(p);
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
  if (link == nullptr || link->abi_version < 4 || link->attach == nullptr || link->detach == nullptr) throw Napi::Error::New(env, "the host link speaks an older gatehouse ABI");
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

Napi::Value Interceptor::PendingCount(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(gh_engine_pending_count(engine_)));
}
