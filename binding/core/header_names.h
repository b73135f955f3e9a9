// Header-name rules of the identity headers: canonical spelling and aliases.
#ifndef GATEHOUSE_HEADER_NAMES_H
#define GATEHOUSE_HEADER_NAMES_H

#include <string>

#include "gh_core.h"

namespace gh {

constexpr char kDefaultPrefix[] = "X-PLATFORM-";

// Upper-cases ASCII letters and folds '_' and '.' to '-', the spellings under
// which proxies and servers may present the same header (CGI turns '-' into
// '_'; some stacks accept '.').
std::string canonical_header_name(gh_bytes name);

// True when the name is a header token (RFC 9110 tchar) and non-empty.
bool is_header_token(gh_bytes name);

// True when a header, under any alias, could impersonate identity: it equals
// or begins with <prefix>CLIENT-PRINCIPAL or <prefix>TOKEN-.
bool is_identity_alias(gh_bytes name, const std::string& canonical_prefix);

// "Upper-cased, non-alphanumerics to '-'": the <PROVIDER> part of token headers.
std::string provider_header_part(gh_bytes provider);

// CR, LF and NUL can split or truncate a header; they never travel.
bool has_forbidden_value_character(gh_bytes value);

}  // namespace gh

#endif
