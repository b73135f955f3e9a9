// A thread with a stack of a size the caller chooses. The embedded Node runs on one:
// std::thread takes the process's default (the image's SizeOfStackReserve: 256 KB or
// 512 KB in w3wp.exe on x64), smaller than the ~984 KB V8 assumes it may use, so a deep
// JavaScript recursion would overflow the real stack (STATUS_STACK_OVERFLOW, the end of
// the worker process) before V8 throws its RangeError. On Windows the stack is reserved
// with CreateThread(STACK_SIZE_PARAM_IS_A_RESERVATION); elsewhere with pthread attributes.
// Portable C++ (no IIS headers, no Node): the Windows leg runs it under wine.
#ifndef GATEHOUSE_IIS_STACK_THREAD_H
#define GATEHOUSE_IIS_STACK_THREAD_H

#include <cstddef>

namespace gh_iis {

class StackThread {
 public:
  using Entry = void (*)(void* data);

  StackThread() = default;
  StackThread(const StackThread&) = delete;
  StackThread& operator=(const StackThread&) = delete;
  /** A started thread must have been joined: the destructor does not wait (it may run where waiting is not allowed). */
  ~StackThread();

  /** Runs entry(data) on a new thread with stack_bytes of stack reserved. false if the thread could not be created. */
  bool start(std::size_t stack_bytes, Entry entry, void* data);

  /** Waits for the thread to end (once; nothing if it never started). Never call it from the thread itself. */
  void join();

  bool joinable() const { return handle_ != nullptr; }

 private:
  void* handle_ = nullptr;  // HANDLE on Windows, a heap-held pthread_t elsewhere
};

}  // namespace gh_iis

#endif
