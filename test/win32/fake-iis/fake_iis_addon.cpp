// The fake IIS as a Node addon, built with binding/iis/module.cpp and the files it lists (the module's real code) into
// one DLL: a worker process of IIS with the gatehouse module loaded. Each copy of the DLL that
// is loaded is a worker process of its own (the module keeps its state per process).
//
//   registerModule([fault])   IIS loads the module: RegisterModule with a fake
//                             IHttpModuleRegistrationInfo and IHttpServer → { hr, notifications, postNotifications,
//                             violations }
//   request(script)           one request through the module's notifications, on IIS threads → Promise<outcome>
//   terminate()               the worker process ends: the factory's Terminate, on an IIS thread → Promise
//   setNodeHost(fn)           who starts and stops the module's Node: fn('start', bootScript, execArgs), fn('stop')
//   nodeStopped()             the host says the environment it was asked to stop has ended
//   nodeEnded()               the host says the environment ended by itself (process.exit, an uncaught exception)
//   recycles()                the module's IHttpServer::RecycleProcess calls → { reasons, violations }
//   failNodeStart(yes)        the next start of Node fails (NodeRuntime::Start returns null)
//   nodeStartRequests()       how often the module started Node
//   linkedBinding()           the `gatehouse_host` binding, for the environment the host starts
#include <napi.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../../../binding/addon/js_bytes.h"
#include "../../../binding/iis/linked_binding.h"
#include "embedded_node.h"
#include "fake_http_context.h"
#include "fake_http_server.h"
#include "fake_registration.h"
#include "iis_threads.h"
#include "request_script.h"

extern "C" HRESULT __stdcall RegisterModule(DWORD version, IHttpModuleRegistrationInfo* info, IHttpServer* server);

namespace fake_iis {

namespace {

using gh::bytes_from_js;
using gh::js_string;

// This worker process's IIS: one registration, one Node host.
FakeRegistration* g_registration = nullptr;
FakeHttpServer* g_server = nullptr;
bool g_terminated = false;  // the factory's Terminate was called: IIS sends nothing more

// Every request's context, kept for the life of the process: a call the module makes into a
// request after it has ended (a late completion, a timer) is then recorded as a violation
// instead of reaching freed memory.
std::mutex g_contexts_mutex;
std::vector<std::shared_ptr<FakeHttpContext>>* g_contexts = new std::vector<std::shared_ptr<FakeHttpContext>>();

struct NodeHost {
  std::mutex mutex;
  std::condition_variable stopped_signal;
  bool has_host = false;
  Napi::ThreadSafeFunction host;
  bool fail_next_start = false;
  int starts = 0;
  bool stopped = false;
  bool ended = false;
};
NodeHost& node_host() {
  static auto* instance = new NodeHost();  // never destroyed: IIS threads may use it to the end
  return *instance;
}

struct NodeEvent {
  std::string kind;
  std::string boot_script;
  std::vector<std::string> exec_args;
};

void call_host(NodeEvent* event) {
  NodeHost& h = node_host();
  h.host.NonBlockingCall(event, [](Napi::Env env, Napi::Function fn, NodeEvent* e) {
    std::unique_ptr<NodeEvent> owned(e);
    Napi::Array args = Napi::Array::New(env, e->exec_args.size());
    for (size_t i = 0; i < e->exec_args.size(); ++i)
      args.Set(static_cast<uint32_t>(i), Napi::String::New(env, e->exec_args[i]));
    fn.Call({Napi::String::New(env, e->kind), Napi::String::New(env, e->boot_script), args});
  });
}

Arrival arrival_named(const std::string& name) {
  if (name == "later") return Arrival::kLater;
  if (name == "before-return") return Arrival::kBeforeReturn;
  if (name == "buffered") return Arrival::kBuffered;
  throw std::invalid_argument("body piece arrival: buffered, later or before-return");
}

BodyEnd end_named(const std::string& name) {
  if (name == "complete") return BodyEnd::kComplete;
  if (name == "aborted") return BodyEnd::kAborted;
  if (name == "stalled") return BodyEnd::kStalled;
  throw std::invalid_argument("body end: complete, aborted or stalled");
}

std::string bytes_of_value(const Napi::Value& value) {
  if (value.IsBuffer()) {
    auto buffer = value.As<Napi::Buffer<char>>();
    return std::string(buffer.Data(), buffer.Length());
  }
  return bytes_from_js(value);
}

RequestScript script_from(const Napi::Object& o) {
  RequestScript s;
  auto text = [&](const char* key, std::string& out) {
    if (o.Has(key) && !o.Get(key).IsUndefined()) out = bytes_from_js(o.Get(key));
  };
  text("method", s.method);
  text("url", s.url);
  text("remoteAddress", s.remote_address);
  if (o.Has("http2") && o.Get("http2").ToBoolean().Value()) {
    s.major = 2;
    s.minor = 0;
  }
  if (o.Has("https") && !o.Get("https").IsUndefined()) s.https = o.Get("https").ToBoolean().Value();
  if (o.Has("headers")) {
    Napi::Array headers = o.Get("headers").As<Napi::Array>();
    for (uint32_t i = 0; i < headers.Length(); ++i) {
      Napi::Array pair = headers.Get(i).As<Napi::Array>();
      s.headers.emplace_back(bytes_from_js(pair.Get(0u)), bytes_from_js(pair.Get(1u)));
    }
  }
  if (o.Has("body")) {
    Napi::Array body = o.Get("body").As<Napi::Array>();
    for (uint32_t i = 0; i < body.Length(); ++i) {
      Napi::Object piece = body.Get(i).As<Napi::Object>();
      s.body.push_back(
          BodyPiece{bytes_of_value(piece.Get("data")),
                    arrival_named(piece.Has("arrival") ? bytes_from_js(piece.Get("arrival")) : "buffered")});
    }
  }
  if (o.Has("end") && !o.Get("end").IsUndefined()) s.end = end_named(bytes_from_js(o.Get("end")));
  if (o.Has("chunked")) s.chunked = o.Get("chunked").ToBoolean().Value();
  if (o.Has("postCompletionBeforeReturn"))
    s.post_completion_before_return = o.Get("postCompletionBeforeReturn").ToBoolean().Value();
  if (o.Has("faults")) {
    Napi::Object faults = o.Get("faults").As<Napi::Object>();
    Napi::Array names = faults.GetPropertyNames();
    for (uint32_t i = 0; i < names.Length(); ++i) {
      const std::string method = bytes_from_js(names.Get(i));
      const Fault fault = fault_named(bytes_from_js(faults.Get(method)));
      if (fault == Fault::kNone) throw std::invalid_argument("fault: fail, bad_alloc or ignore");
      s.faults.emplace_back(method, fault);
    }
  }
  return s;
}

Napi::Array header_list(Napi::Env env, const HeaderList& headers) {
  Napi::Array out = Napi::Array::New(env, headers.size());
  for (size_t i = 0; i < headers.size(); ++i) {
    Napi::Array pair = Napi::Array::New(env, 2);
    pair.Set(0u, js_string(env, headers[i].first));
    pair.Set(1u, js_string(env, headers[i].second));
    out.Set(static_cast<uint32_t>(i), pair);
  }
  return out;
}

Napi::Object outcome_to_js(Napi::Env env, const Outcome& o) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("result", o.result);
  out.Set("status", o.status);
  out.Set("reason", o.reason);
  out.Set("skipCustomErrors", o.skip_custom_errors);
  out.Set("headers", header_list(env, o.response_headers));
  out.Set("body", Napi::Buffer<char>::Copy(env, o.response_body.data(), o.response_body.size()));
  out.Set("needDisconnect", o.need_disconnect);
  out.Set("kernelCacheDisabled", static_cast<double>(o.kernel_cache_disabled));
  if (o.result == "continue") {
    out.Set("appHeaders", header_list(env, o.app_headers));
    out.Set("appBody", Napi::Buffer<char>::Copy(env, o.app_body.data(), o.app_body.size()));
  }
  Napi::Object calls = Napi::Object::New(env);
  for (const auto& [method, count] : o.calls) calls.Set(method, count);
  out.Set("calls", calls);
  out.Set("notifications", o.notifications);
  out.Set("pendingReads", o.pending_reads);
  out.Set("bufferedReads", o.buffered_reads);
  Napi::Array violations = Napi::Array::New(env, o.violations.size());
  for (size_t i = 0; i < o.violations.size(); ++i) violations.Set(static_cast<uint32_t>(i), o.violations[i]);
  out.Set("violations", violations);
  return out;
}

Napi::Value RegisterModuleJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (g_registration != nullptr) throw Napi::Error::New(env, "IIS registers a module once per worker process");
  const Fault fault = info.Length() > 0 && info[0].IsString() ? fault_named(info[0].As<Napi::String>()) : Fault::kNone;
  g_registration = new FakeRegistration(fault);  // lives as long as the process, as IIS's does
  g_server = new FakeHttpServer();
  const HRESULT hr = RegisterModule(0x0700, g_registration, g_server);
  Napi::Object out = Napi::Object::New(env);
  out.Set("hr", static_cast<double>(static_cast<uint32_t>(hr)));
  out.Set("notifications", static_cast<double>(g_registration->notifications()));
  out.Set("postNotifications", static_cast<double>(g_registration->post_notifications()));
  out.Set("factory", g_registration->factory() != nullptr);
  Napi::Array violations = Napi::Array::New(env);
  for (const std::string& v : g_registration->violations()) violations.Set(violations.Length(), v);
  out.Set("violations", violations);
  return out;
}

Napi::Value Request(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (g_registration == nullptr || g_registration->factory() == nullptr)
    throw Napi::Error::New(env, "the module is not registered");
  if (g_terminated) throw Napi::Error::New(env, "the worker process has ended (Terminate): IIS sends no more requests");
  if (info.Length() < 1 || !info[0].IsObject()) throw Napi::TypeError::New(env, "request(script)");
  RequestScript script;
  try {
    script = script_from(info[0].As<Napi::Object>());
  } catch (const std::invalid_argument& e) {
    throw Napi::TypeError::New(env, e.what());
  }
  CHttpModule* module = nullptr;
  const HRESULT hr = g_registration->factory()->GetHttpModule(&module, nullptr);
  if (FAILED(hr) || module == nullptr) throw Napi::Error::New(env, "the module's factory made no module");
  auto deferred = std::make_shared<Napi::Promise::Deferred>(Napi::Promise::Deferred::New(env));
  auto finished = Napi::ThreadSafeFunction::New(env, Napi::Function::New(env, [](const Napi::CallbackInfo&) {}),
                                                "gatehouse-fake-iis", 0, 1);
  auto context =
      std::make_shared<FakeHttpContext>(script, module, [deferred, finished](const Outcome& outcome) mutable {
        auto* copy = new Outcome(outcome);
        finished.BlockingCall(copy, [deferred](Napi::Env env, Napi::Function, Outcome* o) {
          std::unique_ptr<Outcome> owned(o);
          deferred->Resolve(outcome_to_js(env, *o));
        });
        finished.Release();
      });
  {
    std::lock_guard<std::mutex> lock(g_contexts_mutex);
    g_contexts->push_back(context);
  }
  context->begin();
  return deferred->Promise();
}

Napi::Value Terminate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (g_registration == nullptr || g_registration->factory() == nullptr || g_terminated)
    throw Napi::Error::New(env, "no module to terminate");
  g_terminated = true;
  auto deferred = std::make_shared<Napi::Promise::Deferred>(Napi::Promise::Deferred::New(env));
  auto finished = Napi::ThreadSafeFunction::New(env, Napi::Function::New(env, [](const Napi::CallbackInfo&) {}),
                                                "gatehouse-fake-iis-terminate", 0, 1);
  IHttpModuleFactory* factory = g_registration->factory();
  const bool queued = run_on_iis_thread([factory, deferred, finished]() mutable {
    factory->Terminate();
    finished.BlockingCall([deferred](Napi::Env env, Napi::Function) { deferred->Resolve(env.Undefined()); });
    finished.Release();
  });
  if (!queued) throw Napi::Error::New(env, "the fake IIS could not queue Terminate on its thread pool");
  return deferred->Promise();
}

Napi::Value SetNodeHost(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsFunction()) throw Napi::TypeError::New(env, "setNodeHost(fn)");
  NodeHost& h = node_host();
  std::lock_guard<std::mutex> lock(h.mutex);
  if (h.has_host) throw Napi::Error::New(env, "the Node host is set once");
  h.host = Napi::ThreadSafeFunction::New(env, info[0].As<Napi::Function>(), "gatehouse-fake-iis-node-host", 0, 1);
  h.host.Unref(env);  // the test's Node may end while the module still holds Node "running"
  h.has_host = true;
  return env.Undefined();
}

Napi::Value NodeStopped(const Napi::CallbackInfo& info) {
  NodeHost& h = node_host();
  {
    std::lock_guard<std::mutex> lock(h.mutex);
    h.stopped = true;
  }
  h.stopped_signal.notify_all();
  return info.Env().Undefined();
}

Napi::Value NodeEnded(const Napi::CallbackInfo& info) {
  NodeHost& h = node_host();
  {
    std::lock_guard<std::mutex> lock(h.mutex);
    h.ended = true;
  }
  embedded_node_has_ended();  // the module's hook, as the embedding calls it when Node ends
  return info.Env().Undefined();
}

Napi::Value Recycles(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (g_server == nullptr) throw Napi::Error::New(env, "the module is not registered");
  Napi::Object out = Napi::Object::New(env);
  Napi::Array reasons = Napi::Array::New(env);
  for (const std::string& reason : g_server->recycles()) reasons.Set(reasons.Length(), reason);
  Napi::Array violations = Napi::Array::New(env);
  for (const std::string& v : g_server->violations()) violations.Set(violations.Length(), v);
  out.Set("reasons", reasons);
  out.Set("violations", violations);
  return out;
}

Napi::Value FailNodeStart(const Napi::CallbackInfo& info) {
  NodeHost& h = node_host();
  std::lock_guard<std::mutex> lock(h.mutex);
  h.fail_next_start = info.Length() > 0 && info[0].ToBoolean().Value();
  return info.Env().Undefined();
}

Napi::Value NodeStartRequests(const Napi::CallbackInfo& info) {
  NodeHost& h = node_host();
  std::lock_guard<std::mutex> lock(h.mutex);
  return Napi::Number::New(info.Env(), h.starts);
}

Napi::Value LinkedBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  napi_value exports = Napi::Object::New(env);
  napi_value filled = gh_iis::init_linked_binding(env, exports);
  if (filled == nullptr) throw Napi::Error::New(env, "the gatehouse_host binding could not be made");
  return Napi::Value(env, filled);
}

}  // namespace

Napi::Object addon_exports(Napi::Env env, Napi::Object exports) {
  exports.Set("registerModule", Napi::Function::New(env, RegisterModuleJs));
  exports.Set("request", Napi::Function::New(env, Request));
  exports.Set("terminate", Napi::Function::New(env, Terminate));
  exports.Set("setNodeHost", Napi::Function::New(env, SetNodeHost));
  exports.Set("nodeStopped", Napi::Function::New(env, NodeStopped));
  exports.Set("nodeEnded", Napi::Function::New(env, NodeEnded));
  exports.Set("recycles", Napi::Function::New(env, Recycles));
  exports.Set("failNodeStart", Napi::Function::New(env, FailNodeStart));
  exports.Set("nodeStartRequests", Napi::Function::New(env, NodeStartRequests));
  exports.Set("linkedBinding", Napi::Function::New(env, LinkedBinding));
  return exports;
}

bool start_embedded_node(const std::string& boot_script, const std::vector<std::string>& exec_args) {
  NodeHost& h = node_host();
  {
    std::lock_guard<std::mutex> lock(h.mutex);
    ++h.starts;
    if (!h.has_host || h.fail_next_start) return false;
    h.stopped = false;
  }
  call_host(new NodeEvent{"start", boot_script, exec_args});
  return true;
}

bool embedded_node_ended() {
  NodeHost& h = node_host();
  std::lock_guard<std::mutex> lock(h.mutex);
  return h.ended;
}

void stop_embedded_node() {
  NodeHost& h = node_host();
  {
    std::lock_guard<std::mutex> lock(h.mutex);
    if (!h.has_host) return;
  }
  call_host(new NodeEvent{"stop", "", {}});
  std::unique_lock<std::mutex> lock(h.mutex);
  h.stopped_signal.wait(lock, [&] { return h.stopped; });
}

}  // namespace fake_iis

namespace {
Napi::Object InitFakeIis(Napi::Env env, Napi::Object exports) { return fake_iis::addon_exports(env, exports); }
}  // namespace

NODE_API_MODULE(gatehouse_fake_iis, InitFakeIis)
