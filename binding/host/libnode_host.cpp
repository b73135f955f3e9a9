// A Linux test host for the IIS module's Node embedding: binding/iis/node_runtime.cpp (the
// boot, the process-exit handler, the 8 MB stack thread, GATEHOUSE_NODE_OPTIONS as
// InitializeOncePerProcess arguments) linked against libnode (Debian's libnode-dev) and run for
// real, with the module's engine slot in front of it as the module has it: requests go to the
// core once it has attached, and are answered 503 before and after. IIS and its threads are not
// here (the fake IIS runs the module's own code under wine); the embedding is the very code IIS loads.
//
//   gatehouse_libnode_host <boot script> [start wait ms]   (GATEHOUSE_NODE_OPTIONS as the pool would set it)
// With a start wait, requests wait for the core while Node boots, as the module's do
// (EngineSlot::expect_core; Node ending wakes them at once, as the module's hook does).
// Reads commands from stdin, one a line, and answers on stdout, one a line:
//   request <path>   → answer <status> <body>     (a GET through the engine slot, waited for)
//   ended            → ended yes|no                (NodeRuntime::ended)
//   stop             → stopped                     (NodeRuntime::Stop, then the host exits 0)
// Whatever the runtime reports for the module's log is printed as "report <message>" (new
// lines as " | "). test/inserver/embedding.test.ts builds and drives it.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>

#include "../core/owned_decision.h"
#include "../iis/engine_slot.h"
#include "../iis/node_runtime.h"

namespace {

std::mutex g_output;
gh_iis::EngineSlot* g_slot = nullptr;

void say(const std::string& line) {
  std::lock_guard<std::mutex> lock(g_output);
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

void report(const std::string& message) {
  std::string flat;
  for (const char c : message) {
    if (c == '\n')
      flat += " | ";
    else if (c != '\r')
      flat += c;
  }
  say("report " + flat);
}

// One request's wait for its decision (on whichever thread the engine completes it).
struct Waiter {
  std::mutex mutex;
  std::condition_variable signal;
  bool done = false;
  gh::OwnedDecision decision;

  static void OnComplete(void* self, const gh_decision* decision) {
    auto* w = static_cast<Waiter*>(self);
    std::lock_guard<std::mutex> lock(w->mutex);
    w->decision = gh::OwnedDecision(*decision);
    w->done = true;
    w->signal.notify_all();
  }
};

// A request's wait for the core while Node boots (EngineSlot::wait_for_core), as the module's.
struct CoreWait {
  std::mutex mutex;
  std::condition_variable signal;
  bool woken = false;

  static void Wake(void* self) {
    auto* w = static_cast<CoreWait*>(self);
    std::lock_guard<std::mutex> lock(w->mutex);
    w->woken = true;
    w->signal.notify_all();
  }
};

gh_bytes bytes(const std::string& text) { return gh_bytes{reinterpret_cast<const uint8_t*>(text.data()), text.size()}; }

std::string request(gh_iis::EngineSlot& slot, const std::string& path) {
  const std::string method = "GET", scheme = "https", host = "app.example", query, remote = "127.0.0.1";
  gh_request_view view{};
  view.method = bytes(method);
  view.scheme = bytes(scheme);
  view.host = bytes(host);
  view.path = bytes(path);
  view.query = bytes(query);
  view.remote_address = bytes(remote);
  CoreWait core;
  if (slot.wait_for_core(&CoreWait::Wake, &core)) {
    std::unique_lock<std::mutex> lock(core.mutex);
    core.signal.wait(lock, [&] { return core.woken; });
  }
  Waiter waiter;
  slot.submit(view, &Waiter::OnComplete, &waiter);
  std::unique_lock<std::mutex> lock(waiter.mutex);
  waiter.signal.wait(lock, [&] { return waiter.done; });
  if (waiter.decision.kind() == GH_DECISION_CONTINUE) return "answer continue";
  return "answer " + std::to_string(waiter.decision.status()) + " " + waiter.decision.body();
}

// Node has ended by itself: said as the module would hear it, and its waiting requests woken.
void ended() {
  say("report (Node has ended)");
  g_slot->core_not_coming();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: %s <boot script> [start wait ms]\n", argv[0]);
    return 2;
  }
  gh_iis::EngineSlot slot;
  g_slot = &slot;
  const char* options = std::getenv("GATEHOUSE_NODE_OPTIONS");
  std::unique_ptr<gh_iis::NodeRuntime> runtime =
      gh_iis::NodeRuntime::Start(argv[1], options == nullptr ? "" : options, slot.link(), &report, &ended);
  if (runtime == nullptr) {
    say("start-failed");
    return 3;
  }
  if (argc == 3) slot.expect_core(std::chrono::milliseconds(std::strtoul(argv[2], nullptr, 10)));
  say("started");
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.rfind("request ", 0) == 0) {
      say(request(slot, line.substr(8)));
    } else if (line == "ended") {
      say(runtime->ended() ? "ended yes" : "ended no");
    } else if (line == "stop") {
      break;
    } else {
      say("unknown " + line);
    }
  }
  runtime->Stop();
  say("stopped");
  return 0;
}
