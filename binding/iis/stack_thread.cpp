#include "stack_thread.h"

#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#else
#include <pthread.h>
#endif

#include <new>

namespace gh_iis {

namespace {

struct Launch {
  StackThread::Entry entry;
  void* data;
};

#ifdef _WIN32
DWORD WINAPI thread_main(LPVOID raw) {
  const Launch launch = *static_cast<Launch*>(raw);
  delete static_cast<Launch*>(raw);
  launch.entry(launch.data);
  return 0;
}
#else
void* thread_main(void* raw) {
  const Launch launch = *static_cast<Launch*>(raw);
  delete static_cast<Launch*>(raw);
  launch.entry(launch.data);
  return nullptr;
}
#endif

}  // namespace

bool StackThread::start(std::size_t stack_bytes, Entry entry, void* data) {
  if (handle_ != nullptr || entry == nullptr) return false;
  auto* launch = new (std::nothrow) Launch{entry, data};
  if (launch == nullptr) return false;
#ifdef _WIN32
  // The size is the reservation (address space), not the commit: pages are committed as
  // the stack grows, as for any thread.
  HANDLE thread = CreateThread(nullptr, stack_bytes, &thread_main, launch, STACK_SIZE_PARAM_IS_A_RESERVATION, nullptr);
  if (thread == nullptr) {
    delete launch;
    return false;
  }
  handle_ = thread;
#else
  auto* thread = new (std::nothrow) pthread_t{};
  pthread_attr_t attributes;
  bool started = false;
  if (thread != nullptr && pthread_attr_init(&attributes) == 0) {
    started = pthread_attr_setstacksize(&attributes, stack_bytes) == 0 &&
              pthread_create(thread, &attributes, &thread_main, launch) == 0;
    pthread_attr_destroy(&attributes);
  }
  if (!started) {
    delete thread;
    delete launch;
    return false;
  }
  handle_ = thread;
#endif
  return true;
}

void StackThread::join() {
  if (handle_ == nullptr) return;
#ifdef _WIN32
  WaitForSingleObject(static_cast<HANDLE>(handle_), INFINITE);
  CloseHandle(static_cast<HANDLE>(handle_));
#else
  auto* thread = static_cast<pthread_t*>(handle_);
  pthread_join(*thread, nullptr);
  delete thread;
#endif
  handle_ = nullptr;
}

StackThread::~StackThread() {
  if (handle_ == nullptr) return;
    // Not joined: let the thread run on by itself (closing a handle or detaching never waits).
#ifdef _WIN32
  CloseHandle(static_cast<HANDLE>(handle_));
#else
  auto* thread = static_cast<pthread_t*>(handle_);
  pthread_detach(*thread);
  delete thread;
#endif
}

}  // namespace gh_iis
