// A native test host for the interception engine, without Node: many host
// threads submit requests at once; a policy answers some on the submitting
// thread and hands the rest to worker threads, which answer late, some twice;
// a final shutdown answers whatever is left. Every request must be completed
// exactly once. Prints one JSON line of counts; exits non-zero on any breach.
//
//   engine_stress <host threads> <requests per thread> <worker threads>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../core/gh_core.h"
#include "stress_host.h"

namespace {

struct Slot {
  std::atomic<int> completions{0};
  std::atomic<int> status{0};
};

struct Host {
  std::vector<Slot> slots;
  explicit Host(size_t n) : slots(n) {}
};

struct Ticket {
  Host* host;
  size_t index;
};

/** How the workers complete a request late: some denied, every third completed twice. */
struct LateCompletions {
  std::atomic<long> refused_second{0};
  std::atomic<long> late_after_shutdown{0};

  void complete(gh_pending* pending) {
    const gh_request_view* request = gh_pending_request(pending);
    // Decide from the copied request: the host's own view is long gone by now.
    const bool deny = request->path.len > 0 && request->path.ptr[request->path.len - 1] == '7';
    gh_status first =
        deny ? gh_pending_fail(pending, 401, "denied") : gh_pending_complete(pending, &continue_decision());
    if (first == GH_ERR_ALREADY_COMPLETED) late_after_shutdown++;
    // Every third request is completed a second time: it must be refused.
    if ((request->query.len % 3) == 0 && gh_pending_fail(pending, 500, "again") == GH_ERR_ALREADY_COMPLETED)
      refused_second++;
    gh_pending_release(pending);
  }

  static const gh_decision& continue_decision() {
    static const char name[] = "X-PLATFORM-CLIENT-PRINCIPAL-ID";
    static const char value[] = "user-1";
    static const gh_header set{{reinterpret_cast<const uint8_t*>(name), sizeof name - 1},
                               {reinterpret_cast<const uint8_t*>(value), sizeof value - 1}};
    static gh_decision decision = [] {
      gh_decision d{};
      d.kind = GH_DECISION_CONTINUE;
      d.set_headers = &set;
      d.set_count = 1;
      return d;
    }();
    return decision;
  }
};

void on_done(void* data, const gh_decision* decision) {
  auto* ticket = static_cast<Ticket*>(data);
  Slot& slot = ticket->host->slots[ticket->index];
  slot.status.store(decision->kind == GH_DECISION_CONTINUE ? 200 : decision->status);
  slot.completions.fetch_add(1);
}

struct PolicyState {
  PendingWorkers* workers;
  std::atomic<long> inline_answers{0};
  std::atomic<long> held{0};
};

/** Answers every fifth request at once; holds every 97th for the shutdown; queues the rest. */
void policy(void* data, gh_pending* pending) {
  auto* state = static_cast<PolicyState*>(data);
  const gh_request_view* request = gh_pending_request(pending);
  const size_t n = std::strtoul(
      std::string(reinterpret_cast<const char*>(request->query.ptr), request->query.len).c_str(), nullptr, 10);
  if (n % 97 == 0) {
    state->held++;
    gh_pending_release(pending);  // never answered by the policy: only shutdown completes it
    return;
  }
  if (n % 5 == 0) {
    state->inline_answers++;
    gh_pending_fail(pending, 403, "inline");
    gh_pending_release(pending);
    return;
  }
  state->workers->push(pending);
}

}  // namespace

int main(int argc, char** argv) {
  StressArgs args;
  if (!parse_stress_args(argc, argv, &args)) return 2;
  const auto [host_threads, per_thread, worker_count] = args;
  if (gh_abi_version() != GH_ABI_VERSION) return 3;

  const size_t total = static_cast<size_t>(host_threads) * static_cast<size_t>(per_thread);
  Host host(total);
  std::vector<Ticket> tickets(total);
  LateCompletions late_completions;
  PendingWorkers workers(worker_count, [&](gh_pending* pending) { late_completions.complete(pending); });
  PolicyState state{&workers};
  gh_engine* engine = nullptr;
  if (gh_engine_new(policy, &state, &engine) != GH_OK) return 3;

  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < host_threads; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < per_thread; ++i) {
        const size_t index = static_cast<size_t>(t) * static_cast<size_t>(per_thread) + static_cast<size_t>(i);
        tickets[index] = Ticket{&host, index};
        // The view lives on this thread's stack and dies right after submit: the engine copies it.
        const std::string path = "/orders/" + std::to_string(index);
        const std::string query = std::to_string(index);
        const std::string cookie = "PlatformAuthSession=" + std::string(64, 'a' + static_cast<char>(index % 26));
        const gh_header headers[] = {{{reinterpret_cast<const uint8_t*>("Cookie"), 6},
                                      {reinterpret_cast<const uint8_t*>(cookie.data()), cookie.size()}}};
        gh_request_view view{};
        auto bytes = [](const std::string& s) {
          return gh_bytes{reinterpret_cast<const uint8_t*>(s.data()), s.size()};
        };
        view.method = gh_bytes{reinterpret_cast<const uint8_t*>("GET"), 3};
        view.scheme = gh_bytes{reinterpret_cast<const uint8_t*>("https"), 5};
        view.host = gh_bytes{reinterpret_cast<const uint8_t*>("app.example"), 11};
        view.path = bytes(path);
        view.query = bytes(query);
        view.remote_address = gh_bytes{reinterpret_cast<const uint8_t*>("10.0.0.1"), 8};
        view.headers = headers;
        view.header_count = 1;
        gh_engine_submit(engine, &view, on_done, &tickets[index]);
      }
    });
  }
  go = true;
  for (auto& thread : threads) thread.join();
  // Let the workers drain what they were given, then shut down: only held requests remain.
  while (gh_engine_pending_count(engine) > static_cast<size_t>(state.held.load())) std::this_thread::yield();
  const size_t before_shutdown = gh_engine_pending_count(engine);
  gh_engine_shutdown(engine);
  const size_t after_shutdown = gh_engine_pending_count(engine);
  // A request submitted after shutdown is answered at once with 503.
  Host late_host(1);
  Ticket late{&late_host, 0};
  gh_request_view late_view{};
  const gh_status late_status = gh_engine_submit(engine, &late_view, on_done, &late);
  workers.stop();
  gh_engine_free(engine);

  long once = 0, never = 0, twice = 0, shutdown_503 = 0;
  for (const Slot& slot : host.slots) {
    const int n = slot.completions.load();
    if (n == 1) once++;
    if (n == 0) never++;
    if (n > 1) twice++;
    if (n == 1 && slot.status.load() == 503) shutdown_503++;
  }
  std::printf(
      "{\"submitted\":%zu,\"completedOnce\":%ld,\"neverCompleted\":%ld,\"completedTwice\":%ld,\"inline\":%ld,"
      "\"heldForShutdown\":%ld,"
      "\"answered503ByShutdown\":%ld,\"pendingBeforeShutdown\":%zu,\"pendingAfterShutdown\":%zu,"
      "\"secondCompletionsRefused\":%ld,"
      "\"lateSubmitStatus\":%d,\"lateSubmitAnswer\":%d}\n",
      total, once, never, twice, state.inline_answers.load(), state.held.load(), shutdown_503, before_shutdown,
      after_shutdown, late_completions.refused_second.load(), static_cast<int>(late_status),
      late_host.slots[0].status.load());
  return (never == 0 && twice == 0 && after_shutdown == 0) ? 0 : 1;
}
