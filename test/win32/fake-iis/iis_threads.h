// The threads the fake IIS calls the module on: the Windows thread pool, as IIS runs its
// notifications and completions on pool threads. (Not a thread each from std::thread: under
// wine, winpthreads' detached threads, made by the hundred, can run one thread's start twice.)
#ifndef GATEHOUSE_FAKE_IIS_IIS_THREADS_H
#define GATEHOUSE_FAKE_IIS_IIS_THREADS_H

#include <functional>

namespace fake_iis {

/** Runs work on a thread-pool thread. false if the pool would not take it. */
bool run_on_iis_thread(std::function<void()> work);

}  // namespace fake_iis

#endif
