// Parsing of the "sha256=<64 lower-case hex digits>" signature header.
#ifndef GATEHOUSE_SIGNATURE_HEADER_H
#define GATEHOUSE_SIGNATURE_HEADER_H

#include <cstdint>

#include "gh_core.h"

namespace gh {

// Decodes the header into 32 digest bytes. False for any other shape: a
// different length in bytes, another prefix, upper-case or non-hex digits.
bool parse_signature_header(gh_bytes header, uint8_t digest[32]);

}  // namespace gh

#endif
