// What became of one request in the fake IIS: the response the module wrote (or, when it let
// the request continue, what the application would get: its headers and its body), how the
// module used IIS, and every rule of IIS it broke.
#ifndef GATEHOUSE_FAKE_IIS_OUTCOME_H
#define GATEHOUSE_FAKE_IIS_OUTCOME_H

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace fake_iis {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct Outcome {
  /** "continue" or "finish": the notification status that ended the module's part. */
  std::string result;

  // The response, as the module left it.
  unsigned short status = 200;
  std::string reason;
  bool skip_custom_errors = false;
  HeaderList response_headers;
  std::string response_body;
  bool need_disconnect = false;
  /** The reason the module gave IHttpResponse::DisableKernelCache, -1 if it never called it. */
  long kernel_cache_disabled = -1;

  // When the request continues: what the application reads.
  HeaderList app_headers;
  std::string app_body;

  /** How often the module called each IIS method ("IHttpRequest::DeleteHeader": 3). */
  std::map<std::string, int> calls;
  /** Notifications IIS made: OnBeginRequest, then each OnAsyncCompletion. */
  int notifications = 0;
  /** Reads that went pending (completed later through OnAsyncCompletion) and reads answered at once. */
  int pending_reads = 0;
  int buffered_reads = 0;
  /** Everything the module did that IIS forbids or the fake does not model. */
  std::vector<std::string> violations;
};

}  // namespace fake_iis

#endif
