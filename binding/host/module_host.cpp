// The native test host that plays the web-server module: a separate binary
// from the addon, as the IIS module is, running the module's own portable
// parts (binding/iis: the engine slot, the host link, the deferred decision).
// JavaScript attaches an interceptor to `link`; `replay(requests, threads)`
// then sends requests from native threads the way the module's notification
// handler does: submit, apply at once when decided inline, otherwise go
// pending and wait to be resumed; it resolves with what each request got.
#include <napi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../addon/js_bytes.h"
#include "../core/bytes.h"
#include "../iis/deferred_decision.h"
#include "../iis/engine_slot.h"
#include "../iis/host_link.h"

namespace {

using gh::bytes_from_js;
using gh::bytes_of;
using gh::js_string;

// Like the module's: one per process, alive as long as the process.
gh_iis::EngineSlot& slot() {
  static auto* instance = new gh_iis::EngineSlot();
  return *instance;
}

/** One replayed request: what the host sent and what it applied. */
struct Hosted {
  std::vector<std::string> text;  // method, scheme, host, path, query, remote, then header names/values
  std::string body;
  bool has_body = false;
  bool body_passed = false;

  std::mutex mutex;
  std::condition_variable resumed;
  int resumes = 0;  // how many times the completion resumed the handler (0 when inline, else 1)
  std::chrono::steady_clock::time_point submitted;
  double micros = 0;
  std::unique_ptr<gh_iis::DeferredDecision> decision;

  static void Resume(void* data) {
    auto* h = static_cast<Hosted*>(data);
    std::lock_guard<std::mutex> lock(h->mutex);
    h->resumes++;
    h->resumed.notify_all();
  }

  // What the module's notification handler does with one request.
  void handle() {
    std::vector<gh_header> headers;
    for (size_t i = 6; i + 1 < text.size(); i += 2)
      headers.push_back(gh_header{bytes_of(text[i]), bytes_of(text[i + 1])});
    gh_request_view view{bytes_of(text[0]), bytes_of(text[1]), bytes_of(text[2]),
                         bytes_of(text[3]), bytes_of(text[4]), bytes_of(text[5]),
                         headers.data(),    headers.size(),    gh_bytes{nullptr, 0}};
    body_passed = has_body && slot().needs_body(text[3].data(), text[3].size());
    if (body_passed) view.body = bytes_of(body);
    decision = std::make_unique<gh_iis::DeferredDecision>(&Hosted::Resume, this);
    submitted = std::chrono::steady_clock::now();
    slot().submit(view, &gh_iis::DeferredDecision::OnComplete, decision.get());
    if (!decision->settle_after_submit()) {
      // RQ_NOTIFICATION_PENDING; the module's OnAsyncCompletion is this wake-up.
      std::unique_lock<std::mutex> lock(mutex);
      resumed.wait(lock, [&] { return resumes > 0; });
    }
    micros = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - submitted).count();
  }

  /** `details`: also the applied headers and body (a benchmark needs only the counts and times). */
  Napi::Object to_js(Napi::Env env, bool details) {
    const gh::OwnedDecision& d = decision->decision();
    Napi::Object o = Napi::Object::New(env);
    {
      std::lock_guard<std::mutex> lock(mutex);
      o.Set("resumes", resumes);
    }
    o.Set("completions", decision->completions());
    o.Set("inline", decision->completed_inline());
    o.Set("bodyPassed", body_passed);
    o.Set("micros", micros);
    // When it was submitted, µs on a clock shared by every request of the process (not wall time).
    o.Set("submittedAt", std::chrono::duration<double, std::micro>(submitted.time_since_epoch()).count());
    const bool respond = d.kind() == GH_DECISION_RESPOND;
    o.Set("kind", respond ? "respond" : "continue");
    if (!details) return o;
    Napi::Array headers = Napi::Array::New(env, d.headers().size());
    for (size_t i = 0; i < d.headers().size(); ++i) {
      Napi::Array pair = Napi::Array::New(env, 2);
      pair.Set(0u, js_string(env, d.headers()[i].first));
      pair.Set(1u, js_string(env, d.headers()[i].second));
      headers.Set(static_cast<uint32_t>(i), pair);
    }
    if (respond) {
      o.Set("status", d.status());
      o.Set("headers", headers);
      o.Set("body",
            Napi::Buffer<uint8_t>::Copy(env, reinterpret_cast<const uint8_t*>(d.body().data()), d.body().size()));
    } else {
      Napi::Array removed = Napi::Array::New(env, d.remove().size());
      for (size_t i = 0; i < d.remove().size(); ++i)
        removed.Set(static_cast<uint32_t>(i), js_string(env, d.remove()[i]));
      o.Set("remove", removed);
      o.Set("set", headers);
    }
    return o;
  }
};

Napi::Value Replay(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsArray() || !info[1].IsNumber())
    throw Napi::TypeError::New(env, "replay(requests, threads[, details])");
  const bool details = info.Length() < 3 || info[2].ToBoolean().Value();
  Napi::Array list = info[0].As<Napi::Array>();
  const uint32_t threads = std::max<uint32_t>(1, info[1].ToNumber().Uint32Value());
  auto hosted = std::make_shared<std::vector<std::unique_ptr<Hosted>>>();
  for (uint32_t i = 0; i < list.Length(); ++i) {
    Napi::Object request = list.Get(i).As<Napi::Object>();
    auto h = std::make_unique<Hosted>();
    for (const char* key : {"method", "scheme", "host", "path", "query", "remoteAddress"})
      h->text.push_back(bytes_from_js(request.Get(key)));
    Napi::Array headers = request.Get("headers").As<Napi::Array>();
    for (uint32_t n = 0; n < headers.Length(); ++n) {
      Napi::Array pair = headers.Get(n).As<Napi::Array>();
      h->text.push_back(bytes_from_js(pair.Get(0u)));
      h->text.push_back(bytes_from_js(pair.Get(1u)));
    }
    Napi::Value body = request.Get("body");
    if (body.IsBuffer()) {
      Napi::Buffer<uint8_t> buffer = body.As<Napi::Buffer<uint8_t>>();
      h->body.assign(reinterpret_cast<const char*>(buffer.Data()), buffer.Length());
      h->has_body = true;
    }
    hosted->push_back(std::move(h));
  }
  auto deferred = std::make_shared<Napi::Promise::Deferred>(Napi::Promise::Deferred::New(env));
  auto finished = Napi::ThreadSafeFunction::New(env, Napi::Function::New(env, [](const Napi::CallbackInfo&) {}),
                                                "gatehouse-module-host", 0, 1);
  std::thread([hosted, threads, details, deferred, finished]() mutable {
    std::vector<std::thread> workers;
    std::atomic<size_t> next{0};
    for (uint32_t t = 0; t < threads; ++t) {
      workers.emplace_back([&] {
        for (size_t i = next++; i < hosted->size(); i = next++) (*hosted)[i]->handle();
      });
    }
    for (auto& worker : workers) worker.join();
    finished.BlockingCall([hosted, details, deferred](Napi::Env env, Napi::Function) {
      Napi::Array out = Napi::Array::New(env, hosted->size());
      for (size_t i = 0; i < hosted->size(); ++i) out.Set(static_cast<uint32_t>(i), (*hosted)[i]->to_js(env, details));
      deferred->Resolve(out);
    });
    finished.Release();
  }).detach();
  return deferred->Promise();
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("link", Napi::Value(env, gh_iis::host_link_external(env, slot().link())));
  exports.Set("attached", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
                return Napi::Boolean::New(info.Env(), slot().attached());
              }));
  exports.Set("replay", Napi::Function::New(env, Replay));
  return exports;
}

}  // namespace

NODE_API_MODULE(gatehouse_module_host, Init)
