// Encoding of the X-<prefix>CLIENT-PRINCIPAL value.
#ifndef GATEHOUSE_PRINCIPAL_H
#define GATEHOUSE_PRINCIPAL_H

#include <string>

#include "gh_core.h"

namespace gh {

// JSON {"auth_typ","claims":[{"typ","val"}],"name_typ","role_typ"}, serialized
// byte for byte as JavaScript's JSON.stringify would (so the addon, the
// TypeScript fallback and every host agree), then standard padded base64.
std::string encode_principal(const gh_identity& identity);

std::string base64_encode(const std::string& bytes);

}  // namespace gh

#endif
