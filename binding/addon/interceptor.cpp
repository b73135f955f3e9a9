// The request-interception hook: JavaScript registers a policy; native host
// threads submit requests through the C ABI engine; each reaches the policy on
// the JavaScript thread through a thread-safe function, and its decision (sync
// or a promise) goes back to the engine, which completes the request exactly
// once. A throwing or rejecting policy answers 500; close() or teardown
// answers 503. The hook never keeps the event loop alive.
//
// `replay` is the native test host: it submits requests from native threads
// and resolves with the decisions they received.
#include "interceptor.h"

#include "../core/bytes.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using gh::bytes_of;
using gh::text_of;

// Request and header bytes travel as latin1 strings (one character per byte), as Node's HTTP
// layer has them and as normalizeHeaders returns them: no re-encoding on either side.
Napi::String js_string(Napi::Env env, gh_bytes b) {
  napi_value out;
  NAPI_THROW_IF_FAILED(env, napi_create_string_latin1(env, reinterpret_cast<const char*>(b.ptr == nullptr ? reinterpret_cast<const uint8_t*>("") : b.ptr), b.len, &out), Napi::String());
  return Napi::String(env, out);
}

std::string bytes_from_js(const Napi::Value& value) {
  Napi::Env env = value.Env();
  napi_value text = value.ToString();
  size_t length = 0;
  NAPI_THROW_IF_FAILED(env, napi_get_value_string_latin1(env, text, nullptr, 0, &length), std::string());
  std::string out(length, '\0');
  NAPI_THROW_IF_FAILED(env, napi_get_value_string_latin1(env, text, out.data(), length + 1, &length), std::string());
  return out;
}

/** A decision read from JavaScript, owning its bytes. */
struct OwnedDecision {
  gh_decision decision{};
  std::vector<std::string> text;
  std::vector<gh_bytes> remove;
  std::vector<gh_header> headers;
  std::string body;
};

std::unique_ptr<OwnedDecision> decision_from(const Napi::Value& value) {
  Napi::Env env = value.Env();
  if (!value.IsObject()) throw Napi::TypeError::New(env, "the interceptor must return a decision object");
  Napi::Object object = value.As<Napi::Object>();
  auto owned = std::make_unique<OwnedDecision>();
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

Napi::Object request_to_js(Napi::Env env, const gh_request_view& r) {
  Napi::Object object = Napi::Object::New(env);
  object.Set("method", js_string(env, r.method));
  object.Set("scheme", js_string(env, r.scheme));
  object.Set("host", js_string(env, r.host));
  object.Set("path", js_string(env, r.path));
  object.Set("query", js_string(env, r.query));
  object.Set("remoteAddress", js_string(env, r.remote_address));
  Napi::Array headers = Napi::Array::New(env, r.header_count);
  for (size_t i = 0; i < r.header_count; ++i) {
    Napi::Array pair = Napi::Array::New(env, 2);
    pair.Set(0u, js_string(env, r.headers[i].name));
    pair.Set(1u, js_string(env, r.headers[i].value));
    headers.Set(static_cast<uint32_t>(i), pair);
  }
  object.Set("headers", headers);
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
                      InstanceMethod<&Interceptor::Replay>("replay")});
}

Interceptor::Interceptor(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Interceptor>(info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsFunction()) throw Napi::TypeError::New(env, "new Interceptor(policy): policy must be a function");
  policy_ = Napi::Persistent(info[0].As<Napi::Function>());
  tsfn_ = Napi::ThreadSafeFunction::New(env, info[0].As<Napi::Function>(), "gatehouse-interceptor", 0, 1);
  tsfn_.Unref(env);  // pending requests never keep the process alive
  if (gh_engine_new(&Interceptor::OnPolicy, this, &engine_) != GH_OK) throw Napi::Error::New(env, "could not create the interception engine");
  napi_add_env_cleanup_hook(env, &Interceptor::OnTeardown, this);
  env_ = env;
}

Interceptor::~Interceptor() {
  napi_remove_env_cleanup_hook(env_, &Interceptor::OnTeardown, this);
  Shutdown();
  gh_engine_free(engine_);
}

void Interceptor::OnTeardown(void* data) { static_cast<Interceptor*>(data)->Shutdown(); }

void Interceptor::Shutdown() {
  if (closed_.exchange(true)) return;
  gh_engine_shutdown(engine_);  // every pending request answers 503; later submissions too
  tsfn_.Abort();
}

// On a native thread: hand the request to JavaScript; if JavaScript is gone, 503.
void Interceptor::OnPolicy(void* data, gh_pending* pending) {
  auto* self = static_cast<Interceptor*>(data);
  napi_status status = self->tsfn_.NonBlockingCall(pending, [](Napi::Env env, Napi::Function policy, gh_pending* p) {
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
      Napi::Object promise = result.As<Napi::Object>();
      auto resolve = Napi::Function::New(env, [p](const Napi::CallbackInfo& info) {
        complete_from_js(p, info[0]);
        gh_pending_release(p);
      });
      auto reject = Napi::Function::New(env, [p](const Napi::CallbackInfo&) {
        gh_pending_fail(p, 500, "The authentication layer failed.");
        gh_pending_release(p);
      });
      promise.Get("then").As<Napi::Function>().Call(promise, {resolve, reject});
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

Napi::Value Interceptor::Close(const Napi::CallbackInfo& info) {
  Shutdown();
  return info.Env().Undefined();
}

Napi::Value Interceptor::PendingCount(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(gh_engine_pending_count(engine_)));
}

namespace {

/** One replayed request: the host's copy of what it sent and what came back. */
struct Replayed {
  std::vector<std::string> text;  // method, scheme, host, path, query, remote, then header names/values
  std::mutex mutex;
  std::condition_variable done;
  int completions = 0;
  int kind = -1;
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<std::string> removed;
  std::string body;
  std::chrono::steady_clock::time_point submitted;
  double micros = 0;  // submit → completion, as the host thread sees it
};

void on_replayed(void* data, const gh_decision* decision) {
  auto* r = static_cast<Replayed*>(data);
  std::lock_guard<std::mutex> lock(r->mutex);
  r->completions++;
  r->kind = decision->kind;
  r->status = decision->kind == GH_DECISION_RESPOND ? decision->status : 0;
  const gh_header* headers = decision->kind == GH_DECISION_RESPOND ? decision->response_headers : decision->set_headers;
  const size_t count = decision->kind == GH_DECISION_RESPOND ? decision->response_header_count : decision->set_count;
  r->headers.clear();
  for (size_t i = 0; i < count; ++i) r->headers.emplace_back(text_of(headers[i].name), text_of(headers[i].value));
  r->removed.clear();
  for (size_t i = 0; i < decision->remove_count; ++i) r->removed.push_back(text_of(decision->remove_headers[i]));
  r->body = text_of(decision->body);
  r->micros = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - r->submitted).count();
  r->done.notify_all();
}

}  // namespace

// replay(requests, threads): the native test host. Native threads submit the requests (each thread
// a share, all at once) and wait for their decisions; the promise resolves with them, in order.
Napi::Value Interceptor::Replay(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsArray() || !info[1].IsNumber()) throw Napi::TypeError::New(env, "replay(requests, threads)");
  Napi::Array list = info[0].As<Napi::Array>();
  const uint32_t threads = std::max<uint32_t>(1, info[1].ToNumber().Uint32Value());
  auto replayed = std::make_shared<std::vector<std::unique_ptr<Replayed>>>();
  for (uint32_t i = 0; i < list.Length(); ++i) {
    Napi::Object request = list.Get(i).As<Napi::Object>();
    auto r = std::make_unique<Replayed>();
    for (const char* key : {"method", "scheme", "host", "path", "query", "remoteAddress"}) r->text.push_back(bytes_from_js(request.Get(key)));
    Napi::Array headers = request.Get("headers").As<Napi::Array>();
    for (uint32_t h = 0; h < headers.Length(); ++h) {
      Napi::Array pair = headers.Get(h).As<Napi::Array>();
      r->text.push_back(bytes_from_js(pair.Get(0u)));
      r->text.push_back(bytes_from_js(pair.Get(1u)));
    }
    replayed->push_back(std::move(r));
  }
  auto deferred = std::make_shared<Napi::Promise::Deferred>(Napi::Promise::Deferred::New(env));
  auto finished = Napi::ThreadSafeFunction::New(env, Napi::Function::New(env, [](const Napi::CallbackInfo&) {}), "gatehouse-replay", 0, 1);
  gh_engine* engine = engine_;
  Ref();  // the engine must outlive the host threads: released once they are done
  Interceptor* self = this;
  std::thread([engine, replayed, threads, deferred, finished, self]() mutable {
    std::vector<std::thread> hosts;
    std::atomic<size_t> next{0};
    for (uint32_t t = 0; t < threads; ++t) {
      hosts.emplace_back([&] {
        for (size_t i = next++; i < replayed->size(); i = next++) {
          Replayed& r = *(*replayed)[i];
          std::vector<gh_header> headers;
          for (size_t h = 6; h + 1 < r.text.size(); h += 2) headers.push_back(gh_header{bytes_of(r.text[h]), bytes_of(r.text[h + 1])});
          gh_request_view view{bytes_of(r.text[0]), bytes_of(r.text[1]), bytes_of(r.text[2]), bytes_of(r.text[3]), bytes_of(r.text[4]), bytes_of(r.text[5]), headers.data(), headers.size(), gh_bytes{nullptr, 0}};
          r.submitted = std::chrono::steady_clock::now();
          gh_engine_submit(engine, &view, on_replayed, &r);
          std::unique_lock<std::mutex> lock(r.mutex);
          r.done.wait(lock, [&] { return r.completions > 0; });
        }
      });
    }
    for (auto& host : hosts) host.join();
    finished.BlockingCall([replayed, deferred, self](Napi::Env env, Napi::Function) {
      self->Unref();
      Napi::Array out = Napi::Array::New(env, replayed->size());
      for (size_t i = 0; i < replayed->size(); ++i) {
        Replayed& r = *(*replayed)[i];
        Napi::Object o = Napi::Object::New(env);
        o.Set("completions", r.completions);
        o.Set("micros", r.micros);
        o.Set("kind", r.kind == GH_DECISION_CONTINUE ? "continue" : "respond");
        if (r.kind == GH_DECISION_RESPOND) o.Set("status", r.status);
        Napi::Array headers = Napi::Array::New(env, r.headers.size());
        for (size_t h = 0; h < r.headers.size(); ++h) {
          Napi::Array pair = Napi::Array::New(env, 2);
          pair.Set(0u, js_string(env, bytes_of(r.headers[h].first)));
          pair.Set(1u, js_string(env, bytes_of(r.headers[h].second)));
          headers.Set(static_cast<uint32_t>(h), pair);
        }
        o.Set(r.kind == GH_DECISION_CONTINUE ? "set" : "headers", headers);
        Napi::Array removed = Napi::Array::New(env, r.removed.size());
        for (size_t h = 0; h < r.removed.size(); ++h) removed.Set(static_cast<uint32_t>(h), js_string(env, bytes_of(r.removed[h])));
        if (r.kind == GH_DECISION_CONTINUE) o.Set("remove", removed);
        if (r.kind == GH_DECISION_RESPOND) o.Set("body", Napi::Buffer<uint8_t>::Copy(env, reinterpret_cast<const uint8_t*>(r.body.data()), r.body.size()));
        out.Set(static_cast<uint32_t>(i), o);
      }
      deferred->Resolve(out);
    });
    finished.Release();
  }).detach();
  return deferred->Promise();
}
