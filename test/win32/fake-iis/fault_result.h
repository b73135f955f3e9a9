// How a planned fault turns into what an IIS method returns.
#ifndef GATEHOUSE_FAKE_IIS_FAULT_RESULT_H
#define GATEHOUSE_FAKE_IIS_FAULT_RESULT_H

#include <windows.h>

#include <new>

#include "faults.h"

namespace fake_iis {

/**
 * For a method returning HRESULT: true, with *hr set, when the fault decides the call
 * (kFail: E_FAIL; kIgnore: S_OK without doing anything); throws for kBadAlloc; false for none.
 */
inline bool fault_decides(Fault fault, HRESULT* hr) {
  switch (fault) {
    case Fault::kFail:
      *hr = E_FAIL;
      return true;
    case Fault::kIgnore:
      *hr = S_OK;
      return true;
    case Fault::kBadAlloc:
      throw std::bad_alloc();
    case Fault::kNone:
      break;
  }
  return false;
}

/** For a method with nothing to return: throws for kBadAlloc; true when the call is to do nothing. */
inline bool fault_skips(Fault fault) {
  if (fault == Fault::kBadAlloc) throw std::bad_alloc();
  return fault == Fault::kFail || fault == Fault::kIgnore;
}

}  // namespace fake_iis

#endif
