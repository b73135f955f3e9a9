// The command line both native stress hosts take:
//   <host threads> <requests per thread> <worker threads>
#ifndef GATEHOUSE_STRESS_ARGS_H
#define GATEHOUSE_STRESS_ARGS_H

#include <cstdio>
#include <cstdlib>

struct StressArgs {
  int host_threads = 0;
  int per_thread = 0;
  int worker_count = 0;
};

/** False (after printing the usage) when the arguments are missing or not positive. */
inline bool parse_stress_args(int argc, char** argv, StressArgs* out) {
  if (argc == 4) {
    out->host_threads = std::atoi(argv[1]);
    out->per_thread = std::atoi(argv[2]);
    out->worker_count = std::atoi(argv[3]);
    if (out->host_threads > 0 && out->per_thread > 0 && out->worker_count > 0) return true;
  }
  std::fprintf(stderr, "usage: %s <host threads> <requests per thread> <worker threads>\n", argv[0]);
  return false;
}

#endif
