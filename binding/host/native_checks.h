// The checks of the native test programs the Windows leg runs under wine
// (test/win32/addon.test.cjs): every failed check is printed as it happens,
// then "N checks failed" (if any) and "N checks passed"; the exit status is 1
// on any failure.
#ifndef GATEHOUSE_HOST_NATIVE_CHECKS_H
#define GATEHOUSE_HOST_NATIVE_CHECKS_H

#include <cstdio>

namespace gh_checks {

inline int passed = 0;
inline int failed = 0;

inline void check(bool ok, const char* what) {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    std::printf("FAIL %s\n", what);
  }
}

/** main's return value, after the summary lines. */
inline int summary() {
  if (failed > 0) std::printf("%d checks failed\n", failed);
  std::printf("%d checks passed\n", passed);
  return failed == 0 ? 0 : 1;
}

}  // namespace gh_checks

#endif
