// The IIS module's Node thread (binding/iis/stack_thread.cpp): the stack it asks for is the
// stack the thread gets. Under wine (the Windows leg): the reservation Windows reports for the
// thread (GetCurrentThreadStackLimits) is at least the 8 MB the module asks for, a thread made
// the default way has less (so the check can tell), and a recursion that uses 6 MB of it runs
// to the end. Prints "N checks passed" or the failures, and exits non-zero on any.
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <cstdio>
#include <cstring>
#include <thread>

#include "../iis/stack_thread.h"

namespace {

int failures = 0;
int passed = 0;

void check(bool ok, const char* what) {
  if (ok) {
    ++passed;
  } else {
    ++failures;
    std::printf("FAIL %s\n", what);
  }
}

constexpr std::size_t kModuleStack = 8u * 1024 * 1024;  // what node_runtime.cpp asks for

size_t reserved_stack() {
  ULONG_PTR low = 0;
  ULONG_PTR high = 0;
  GetCurrentThreadStackLimits(&low, &high);
  return static_cast<size_t>(high - low);
}

// Uses `depth` frames of 64 KB each; each frame writes its whole buffer so that every page is touched.
__attribute__((noinline)) unsigned recurse(int depth) {
  volatile unsigned char frame[64 * 1024];
  std::memset(const_cast<unsigned char*>(frame), depth & 0xFF, sizeof frame);
  unsigned sum = frame[depth % sizeof frame];
  if (depth > 0) sum += recurse(depth - 1);
  return sum + frame[0];
}

struct Probe {
  size_t reserved = 0;
  unsigned deep = 0;
  bool ran = false;
  int depth = 0;
};

void probe(void* raw) {
  auto* p = static_cast<Probe*>(raw);
  p->reserved = reserved_stack();
  if (p->depth > 0) p->deep = recurse(p->depth);
  p->ran = true;
}

}  // namespace

int main() {
  {
    Probe p;
    p.depth = 96;  // 6 MB of 64 KB frames
    gh_iis::StackThread thread;
    check(thread.start(kModuleStack, &probe, &p), "an 8 MB thread starts");
    check(thread.joinable(), "a started thread is joinable");
    thread.join();
    check(!thread.joinable(), "a joined thread is not joinable");
    check(p.ran, "the thread ran its entry");
    check(p.reserved >= kModuleStack, "the thread's stack reservation is at least 8 MB");
    check(p.deep != 0, "a 6 MB recursion ran to its end on it");
    if (p.reserved < kModuleStack) std::printf("  reserved: %zu bytes\n", p.reserved);
  }
  {
    // What std::thread gets: the image's default reservation, well below 8 MB (so the check above means something).
    size_t reserved = 0;
    std::thread plain([&reserved] { reserved = reserved_stack(); });
    plain.join();
    check(reserved > 0 && reserved < kModuleStack, "std::thread's default stack is smaller than 8 MB");
    std::printf("std::thread default stack: %zu KB; StackThread: 8192 KB asked\n", reserved / 1024);
  }
  {
    gh_iis::StackThread never;
    never.join();  // nothing started: a no-op
    check(!never.joinable(), "a thread never started is not joinable");
    check(!never.start(kModuleStack, nullptr, nullptr), "no entry, no thread");
  }
  if (failures != 0) {
    std::printf("%d checks failed\n", failures);
    return 1;
  }
  std::printf("%d checks passed\n", passed);
  return 0;
}
