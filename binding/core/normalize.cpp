// Identity header normalization (docs/headers.md), the one implementation every
// host applies so an app sees byte-identical identity headers however it is
// deployed.
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "gh_core.h"
#include "bytes.h"
#include "header_names.h"
#include "principal.h"

struct gh_normalized {
  std::vector<std::string> remove;
  std::vector<std::pair<std::string, std::string>> set;
};

namespace {

bool valid(gh_bytes b) { return b.ptr != nullptr || b.len == 0; }

bool contains(const std::vector<std::string>& names, const std::string& name) {
  for (const std::string& n : names) {
    if (n == name) return true;
  }
  return false;
}

// Appends one identity header; false when its value could split the header.
bool add(gh_normalized& out, std::string name, gh_bytes value) {
  if (gh::has_forbidden_value_character(value)) return false;
  out.set.emplace_back(std::move(name), gh::text_of(value));
  return true;
}

gh_status add_identity(gh_normalized& out, const gh_identity& identity, const std::string& prefix, bool expose_tokens) {
  if (!valid(identity.provider) || !valid(identity.user_id) || !valid(identity.user_name) ||
      !valid(identity.auth_typ) || !valid(identity.name_typ) || !valid(identity.role_typ) ||
      (identity.claims == nullptr && identity.claim_count != 0)) {
    return GH_ERR_INVALID_ARGUMENT;
  }
  for (size_t i = 0; i < identity.claim_count; ++i) {
    if (!valid(identity.claims[i].typ) || !valid(identity.claims[i].val)) {
      return GH_ERR_INVALID_ARGUMENT;
    }
  }
  const std::string principal_name = prefix + "CLIENT-PRINCIPAL";
  const std::string principal = gh::encode_principal(identity);
  bool ok = add(out, principal_name, gh::bytes_of(principal)) && add(out, principal_name + "-ID", identity.user_id) &&
            add(out, principal_name + "-NAME", identity.user_name) &&
            add(out, principal_name + "-IDP", identity.provider);
  if (ok && expose_tokens) {
    const std::string token_prefix = prefix + "TOKEN-" + gh::provider_header_part(identity.provider) + "-";
    const std::pair<const char*, gh_bytes> tokens[] = {
        {"ACCESS-TOKEN", identity.access_token},
        {"ID-TOKEN", identity.id_token},
        {"EXPIRES-ON", identity.expires_on},
        {"REFRESH-TOKEN", identity.refresh_token},
        {"ACCESS-TOKEN-SECRET", identity.access_token_secret},
    };
    for (const auto& token : tokens) {
      if (token.second.ptr == nullptr) continue;  // absent
      ok = ok && add(out, token_prefix + token.first, token.second);
    }
  }
  return ok ? GH_OK : GH_ERR_FORBIDDEN_CHARACTER;
}

gh_status normalize(const gh_header* inbound, size_t inbound_count, const gh_identity* identity,
                    const gh_normalize_options* options, gh_normalized& out) {
  gh_bytes prefix_bytes{reinterpret_cast<const uint8_t*>(gh::kDefaultPrefix), sizeof gh::kDefaultPrefix - 1};
  bool expose_tokens = true;
  if (options != nullptr) {
    if (!valid(options->prefix)) return GH_ERR_INVALID_ARGUMENT;
    if (options->prefix.len > 0) prefix_bytes = options->prefix;
    expose_tokens = options->expose_tokens != 0;
  }
  if (!gh::is_header_token(prefix_bytes)) return GH_ERR_INVALID_ARGUMENT;
  // Identity headers are emitted in canonical upper case; aliases are matched
  // on the canonical form, so the configured prefix's own case does not matter.
  const std::string prefix = gh::canonical_header_name(prefix_bytes);

  for (size_t i = 0; i < inbound_count; ++i) {
    const gh_header& header = inbound[i];
    if (!valid(header.name) || !valid(header.value)) return GH_ERR_INVALID_ARGUMENT;
    const bool strip = gh::is_identity_alias(header.name, prefix) || gh::has_forbidden_value_character(header.value);
    if (!strip) continue;
    std::string name = gh::text_of(header.name);
    if (!contains(out.remove, name)) out.remove.push_back(std::move(name));
  }
  if (identity == nullptr) return GH_OK;
  return add_identity(out, *identity, prefix, expose_tokens);
}

}  // namespace

extern "C" {

gh_status gh_normalize(const gh_header* inbound, size_t inbound_count, const gh_identity* identity,
                       const gh_normalize_options* options, gh_normalized** out) {
  if (out == nullptr || (inbound == nullptr && inbound_count != 0)) {
    return GH_ERR_INVALID_ARGUMENT;
  }
  *out = nullptr;
  gh_normalized* result = new (std::nothrow) gh_normalized();
  if (result == nullptr) return GH_ERR_OUT_OF_MEMORY;
  gh_status status;
  try {
    status = normalize(inbound, inbound_count, identity, options, *result);
  } catch (const std::bad_alloc&) {
    status = GH_ERR_OUT_OF_MEMORY;
  }
  if (status != GH_OK) {
    delete result;
    return status;
  }
  *out = result;
  return GH_OK;
}

size_t gh_normalized_remove_count(const gh_normalized* n) { return n ? n->remove.size() : 0; }

gh_bytes gh_normalized_remove_at(const gh_normalized* n, size_t index) {
  if (n == nullptr || index >= n->remove.size()) return gh_bytes{nullptr, 0};
  return gh::bytes_of(n->remove[index]);
}

size_t gh_normalized_set_count(const gh_normalized* n) { return n ? n->set.size() : 0; }

gh_header gh_normalized_set_at(const gh_normalized* n, size_t index) {
  if (n == nullptr || index >= n->set.size()) return gh_header{{nullptr, 0}, {nullptr, 0}};
  return gh_header{gh::bytes_of(n->set[index].first), gh::bytes_of(n->set[index].second)};
}

void gh_normalized_free(gh_normalized* n) { delete n; }

}  // extern "C"
