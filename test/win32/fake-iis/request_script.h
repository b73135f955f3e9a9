// One request as a test writes it for the fake IIS: what the client sends (method, URL, HTTP
// version, headers in order, the entity body and how each piece of it arrives) and which IIS
// calls misbehave. Plain data; test/win32/fake-iis/fake_iis_addon.cpp fills it from JavaScript.
#ifndef GATEHOUSE_FAKE_IIS_REQUEST_SCRIPT_H
#define GATEHOUSE_FAKE_IIS_REQUEST_SCRIPT_H

#include <string>
#include <utility>
#include <vector>

#include "faults.h"

namespace fake_iis {

/** How a read of one piece of the body completes. */
enum class Arrival {
  kBuffered,      // already there: the asynchronous read completes at once (pending FALSE)
  kLater,         // pending: its completion comes on another IIS thread, whenever that runs
  kBeforeReturn,  // pending, and its completion has run on another thread before ReadEntityBody returns
};

/** What follows the last piece. */
enum class BodyEnd {
  kComplete,  // the body is whole: the next read says end of body
  kAborted,   // the client goes away: the next read completes with ERROR_CONNECTION_ABORTED
  kStalled,   // the client sends nothing more: the next read stays pending until CancelIo
};

struct BodyPiece {
  std::string data;
  Arrival arrival = Arrival::kBuffered;
};

struct RequestScript {
  std::string method = "GET";
  std::string url = "/";  // raw, as sent: path and query
  unsigned short major = 1;
  unsigned short minor = 1;
  bool https = true;
  std::string remote_address = "10.0.0.1";
  std::vector<std::pair<std::string, std::string>> headers;  // in the order the client sent them
  std::vector<BodyPiece> body;
  BodyEnd end = BodyEnd::kComplete;
  /** Transfer-Encoding: chunked: IIS does not know how much remains (GetRemainingEntityBytes is INFINITE). */
  bool chunked = false;
  /** PostCompletion runs the completion on another thread and returns only once it has returned. */
  bool post_completion_before_return = false;
  std::vector<std::pair<std::string, Fault>> faults;
};

}  // namespace fake_iis

#endif
