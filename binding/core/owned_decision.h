// A host's own copy of a decision: a gh_decision is borrowed only for the
// duration of the completion call, and a web-server module applies it later,
// on another thread (binding/iis).
#ifndef GATEHOUSE_OWNED_DECISION_H
#define GATEHOUSE_OWNED_DECISION_H

#include <string>
#include <utility>
#include <vector>

#include "bytes.h"
#include "gh_core.h"

namespace gh {

class OwnedDecision {
 public:
  using Header = std::pair<std::string, std::string>;

  OwnedDecision() = default;
  explicit OwnedDecision(const gh_decision& decision) : kind_(decision.kind) {
    if (decision.kind == GH_DECISION_RESPOND) {
      status_ = decision.status;
      copy_headers(decision.response_headers, decision.response_header_count);
      body_ = text_of(decision.body);
      return;
    }
    for (size_t i = 0; i < decision.remove_count; ++i) remove_.push_back(text_of(decision.remove_headers[i]));
    copy_headers(decision.set_headers, decision.set_count);
  }

  gh_decision_kind kind() const { return kind_; }
  /** RESPOND only. */
  int status() const { return status_; }
  /** CONTINUE: the inbound headers to remove (before setting). */
  const std::vector<std::string>& remove() const { return remove_; }
  /** CONTINUE: the headers to set; RESPOND: the response headers. */
  const std::vector<Header>& headers() const { return headers_; }
  /** RESPOND only. */
  const std::string& body() const { return body_; }

 private:
  void copy_headers(const gh_header* headers, size_t count) {
    headers_.reserve(count);
    for (size_t i = 0; i < count; ++i) headers_.emplace_back(text_of(headers[i].name), text_of(headers[i].value));
  }

  gh_decision_kind kind_ = GH_DECISION_RESPOND;
  int status_ = 500;
  std::vector<std::string> remove_;
  std::vector<Header> headers_;
  std::string body_;
};

}  // namespace gh

#endif
