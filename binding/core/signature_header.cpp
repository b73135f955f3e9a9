#include "signature_header.h"

#include <cstring>

namespace gh {
namespace {

constexpr char kPrefix[] = "sha256=";
constexpr size_t kPrefixLength = sizeof kPrefix - 1;
constexpr size_t kHeaderLength = kPrefixLength + 64;

// Value of a lower-case hex digit, or -1. Upper case is deliberately refused:
// the signature format is defined as lower-case hex.
int hex_value(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

bool parse_signature_header(gh_bytes header, uint8_t digest[32]) {
  if (header.len != kHeaderLength) return false;
  if (std::memcmp(header.ptr, kPrefix, kPrefixLength) != 0) return false;
  const uint8_t* hex = header.ptr + kPrefixLength;
  for (size_t i = 0; i < 32; ++i) {
    int high = hex_value(hex[2 * i]);
    int low = hex_value(hex[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    digest[i] = static_cast<uint8_t>((high << 4) | low);
  }
  return true;
}

}  // namespace gh
