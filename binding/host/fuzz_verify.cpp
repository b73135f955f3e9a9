// libFuzzer target: webhook signature verification (gh_verifier_verify, gh_verify_signature) on
// any secrets, body and header, under AddressSanitizer and UBSan (scripts/fuzz-core.sh). The
// answer must be OpenSSL's own: a match exactly when the header is "sha256=" and the lower-case
// hex of HMAC-SHA256(secret, body) for one of the non-empty secrets, computed here with OpenSSL's
// one-shot HMAC(), which the core does not use (it composes HMAC from SHA-256 states kept per
// secret). Half the inputs carry the right signature of one secret, so matches are explored too.
#include <fuzzer/FuzzedDataProvider.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../core/gh_core.h"

namespace {

void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_verify: %s\n", what);
  std::abort();
}

gh_bytes bytes(const std::string& s) { return gh_bytes{reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

std::string signature(const std::string& secret, const std::string& body) {
  unsigned char digest[32];
  unsigned int length = 0;
  static const unsigned char kNothing = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       body.empty() ? &kNothing : reinterpret_cast<const unsigned char*>(body.data()), body.size(), digest, &length);
  check(length == 32, "OpenSSL's HMAC failed");
  static const char kHex[] = "0123456789abcdef";
  std::string out = "sha256=";
  for (unsigned char byte : digest) {
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 15]);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  std::vector<std::string> secrets;
  const size_t secret_count = in.ConsumeIntegralInRange<size_t>(0, 4);
  // Up to 150 bytes: shorter and longer than SHA-256's 64-byte block.
  for (size_t i = 0; i < secret_count; ++i) secrets.push_back(in.ConsumeRandomLengthString(150));
  const int shape = in.ConsumeIntegralInRange<int>(0, 3);
  const std::string body = in.ConsumeRandomLengthString(300);
  std::string header;
  if (shape <= 1 && !secrets.empty()) {
    header = signature(secrets[in.ConsumeIntegralInRange<size_t>(0, secrets.size() - 1)], body);
    if (shape == 1 && !header.empty()) {  // one byte changed, or the header cut or extended
      const size_t at = in.ConsumeIntegralInRange<size_t>(0, header.size());
      if (at == header.size())
        header += in.ConsumeRandomLengthString(4);
      else
        header[at] = static_cast<char>(in.ConsumeIntegral<uint8_t>());
    }
  } else {
    header = in.ConsumeRandomLengthString(80);
  }

  bool expected = false;
  for (const std::string& secret : secrets)
    expected = expected || (!secret.empty() && signature(secret, body) == header);

  std::vector<gh_bytes> keys;
  for (const std::string& secret : secrets) keys.push_back(bytes(secret));
  gh_verifier* verifier = nullptr;
  check(gh_verifier_new(keys.empty() ? nullptr : keys.data(), keys.size(), &verifier) == GH_OK && verifier != nullptr,
        "gh_verifier_new failed");
  int matches = -1;
  check(gh_verifier_verify(verifier, bytes(body), bytes(header), &matches) == GH_OK, "gh_verifier_verify failed");
  check(matches == (expected ? 1 : 0), "the keyed verifier disagrees with OpenSSL's HMAC");
  gh_verifier_free(verifier);

  int one_shot = -1;
  check(gh_verify_signature(keys.empty() ? nullptr : keys.data(), keys.size(), bytes(body), bytes(header), &one_shot) ==
            GH_OK,
        "gh_verify_signature failed");
  check(one_shot == matches, "the one-shot verification disagrees with the keyed one");
  return 0;
}
