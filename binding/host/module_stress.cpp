// The IIS module's request path under stress, without Node or IIS: host
// threads handle requests as the module's notification does (engine slot →
// engine → deferred decision: applied inline, or pending and resumed), while
// a policy completes some on the submitting thread and hands the rest to
// worker threads, and another thread keeps detaching and re-attaching the
// engine. Every request must be applied exactly once, with its own decision
// or the slot's 503. Prints one JSON line of counts; exits non-zero on a breach.
//
// Each host thread sends at least <requests per thread>, and goes on until all
// four paths were taken (own decision, the slot's 503, inline, resumed), at most
// kMaxRounds times as many: on a loaded machine the toggler may be descheduled
// for a whole run, and a run that never saw one engine state proves nothing.
//
//   module_stress <host threads> <requests per thread> <worker threads>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../core/bytes.h"
#include "../iis/deferred_decision.h"
#include "../iis/engine_slot.h"
#include "stress_host.h"

namespace {

// The decision names the request it answers: X-Path = its path.
void complete_with_path(gh_pending* pending) {
  const gh_request_view* request = gh_pending_request(pending);
  static const std::string name = "X-Path";
  const gh_header header{gh::bytes_of(name), request->path};
  gh_decision decision{};
  decision.kind = GH_DECISION_CONTINUE;
  decision.set_headers = &header;
  decision.set_count = 1;
  gh_pending_complete(pending, &decision);
  gh_pending_release(pending);
}

void policy(void* data, gh_pending* pending) {
  static std::atomic<unsigned> turn{0};
  if (turn++ % 3 == 0) {
    complete_with_path(pending);  // inline, on the submitting thread
  } else {
    static_cast<PendingWorkers*>(data)->push(pending);
  }
}

constexpr int kMaxRounds = 50;

struct Handled {
  std::mutex mutex;
  std::condition_variable resumed;
  int resumes = 0;
  static void Resume(void* data) {
    auto* h = static_cast<Handled*>(data);
    std::lock_guard<std::mutex> lock(h->mutex);
    h->resumes++;
    h->resumed.notify_all();
  }
};

}  // namespace

int main(int argc, char** argv) {
  StressArgs args;
  if (!parse_stress_args(argc, argv, &args)) return 2;
  const auto [host_threads, per_thread, worker_count] = args;

  PendingWorkers workers(worker_count, complete_with_path);
  gh_engine* engine = nullptr;
  if (gh_engine_new(policy, &workers, &engine) != GH_OK) return 3;
  gh_iis::EngineSlot slot;
  const gh_host_link* link = slot.link();
  const gh_engine_ref ref{GH_ABI_VERSION, engine, &gh_engine_submit, gh_bytes{nullptr, 0}};
  link->attach(link->host_data, &ref);

  std::atomic<long> handled_total{0}, own{0}, unavailable{0}, wrong{0}, inline_applied{0}, resumed{0}, bad_resumes{0};
  const auto every_path_taken = [&] { return own > 0 && unavailable > 0 && inline_applied > 0 && resumed > 0; };
  std::atomic<bool> hosts_done{false};
  std::thread toggler([&] {
    while (!hosts_done.load()) {
      link->detach(link->host_data, engine);
      std::this_thread::yield();
      link->attach(link->host_data, &ref);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });

  std::vector<std::thread> hosts;
  for (int t = 0; t < host_threads; ++t) {
    hosts.emplace_back([&, t] {
      for (int i = 0; i < per_thread || (i < per_thread * kMaxRounds && !every_path_taken()); ++i) {
        handled_total++;
        const std::string path = "/r/" + std::to_string(t) + "/" + std::to_string(i);
        gh_request_view view{};
        view.method = gh_bytes{reinterpret_cast<const uint8_t*>("GET"), 3};
        view.path = gh::bytes_of(path);
        Handled handled;
        gh_iis::DeferredDecision decision(&Handled::Resume, &handled);
        slot.submit(view, &gh_iis::DeferredDecision::OnComplete, &decision);
        if (decision.settle_after_submit()) {
          inline_applied++;
        } else {
          std::unique_lock<std::mutex> lock(handled.mutex);
          handled.resumed.wait(lock, [&] { return handled.resumes > 0; });
          resumed++;
        }
        {
          std::lock_guard<std::mutex> lock(handled.mutex);
          if (handled.resumes != (decision.completed_inline() ? 0 : 1)) bad_resumes++;
        }
        if (decision.completions() != 1) wrong++;
        const gh::OwnedDecision& d = decision.decision();
        if (d.kind() == GH_DECISION_CONTINUE && d.headers().size() == 1 && d.headers()[0].second == path) {
          own++;
        } else if (d.kind() == GH_DECISION_RESPOND && d.status() == 503) {
          unavailable++;
        } else {
          wrong++;
        }
      }
    });
  }
  for (auto& h : hosts) h.join();
  hosts_done = true;
  toggler.join();
  link->detach(link->host_data, engine);
  gh_engine_free(engine);

  const long total = handled_total.load();
  std::printf(
      "{\"handled\":%ld,\"ownDecision\":%ld,\"unavailable\":%ld,\"inline\":%ld,\"resumed\":%ld,\"wrong\":%ld,"
      "\"badResumes\":%ld}\n",
      total, own.load(), unavailable.load(), inline_applied.load(), resumed.load(), wrong.load(), bad_resumes.load());
  const bool ok = own + unavailable == total && inline_applied + resumed == total && wrong == 0 && bad_resumes == 0;
  return ok ? 0 : 1;
}
