// What the fake IIS does wrong on purpose: a test names an IIS method ("IHttpRequest::SetHeader")
// and how it misbehaves in that request. A failure or an exception fires on the first call of
// the method only, then the method works again, so the module's own answer to the failure (500,
// a log line) can still be written; an ignored call is ignored every time (an IIS that loses
// every edit of that kind).
#ifndef GATEHOUSE_FAKE_IIS_FAULTS_H
#define GATEHOUSE_FAKE_IIS_FAULTS_H

#include <map>
#include <mutex>
#include <set>
#include <string>

namespace fake_iis {

enum class Fault {
  kNone,
  kFail,      // the call fails: E_FAIL (a null pointer where the method returns one)
  kBadAlloc,  // the call throws std::bad_alloc, as an allocation inside the module would
  kIgnore,    // every call reports success and does nothing
};

/** "fail", "bad_alloc", "ignore": the fault; anything else kNone. */
Fault fault_named(const std::string& name);

class Faults {
 public:
  void plan(const std::string& method, Fault fault);
  /** The fault planned for this call of method. */
  Fault take(const char* method);
  /** Methods with a planned fault that never fired: a test that planned one expected the module to make that call. */
  std::set<std::string> unfired() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, Fault> planned_;
  std::set<std::string> fired_;
};

}  // namespace fake_iis

#endif
