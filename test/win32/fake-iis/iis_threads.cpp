#include "iis_threads.h"

#include <windows.h>

#include <memory>

namespace fake_iis {

namespace {

VOID CALLBACK run(PTP_CALLBACK_INSTANCE instance, PVOID data) {
  std::unique_ptr<std::function<void()>> work(static_cast<std::function<void()>*>(data));
  // A notification may wait for another (a completion before the call that started it returns):
  // the pool must not wait for this one to end before it starts more threads.
  CallbackMayRunLong(instance);
  (*work)();
}

}  // namespace

bool run_on_iis_thread(std::function<void()> work) {
  auto* task = new std::function<void()>(std::move(work));
  if (TrySubmitThreadpoolCallback(&run, task, nullptr)) return true;
  delete task;
  return false;
}

}  // namespace fake_iis
