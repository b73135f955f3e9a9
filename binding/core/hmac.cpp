// HMAC-SHA256 signature verification over OpenSSL's EVP_MAC interface.
//
// Built into the Node addon, OpenSSL is the copy inside the running node
// process (it exports its symbols); nothing is linked. Keys are set once per
// verifier: each verification duplicates a keyed context instead of
// re-deriving the HMAC pads, which is what makes small bodies cheap.
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <memory>
#include <new>
#include <vector>

#include "gh_core.h"
#include "signature_header.h"

namespace {

EVP_MAC* hmac_algorithm() {
  // Fetched once per process; the fetch is thread-safe and the result immutable.
  static EVP_MAC* const mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  return mac;
}

struct MacCtxDeleter {
  void operator()(EVP_MAC_CTX* ctx) const { EVP_MAC_CTX_free(ctx); }
};
using MacCtx = std::unique_ptr<EVP_MAC_CTX, MacCtxDeleter>;

// An HMAC context keyed with `key`, ready for update/final (or to be duplicated).
MacCtx keyed_context(gh_bytes key) {
  EVP_MAC* mac = hmac_algorithm();
  if (mac == nullptr) return nullptr;
  MacCtx ctx(EVP_MAC_CTX_new(mac));
  if (!ctx) return nullptr;
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_end(),
  };
  // A zero-length key still needs a non-NULL pointer, or OpenSSL keeps the old key.
  static const unsigned char empty = 0;
  const unsigned char* key_ptr = key.len == 0 ? &empty : key.ptr;
  if (EVP_MAC_init(ctx.get(), key_ptr, key.len, params) != 1) return nullptr;
  return ctx;
}

bool finish(EVP_MAC_CTX* ctx, gh_bytes data, uint8_t out[32]) {
  if (data.len > 0 && EVP_MAC_update(ctx, data.ptr, data.len) != 1) return false;
  size_t written = 0;
  return EVP_MAC_final(ctx, out, &written, 32) == 1 && written == 32;
}

}  // namespace

struct gh_verifier {
  std::vector<MacCtx> keys;
};

extern "C" {

uint32_t gh_abi_version(void) { return GH_ABI_VERSION; }

gh_status gh_hmac_sha256(gh_bytes key, gh_bytes data, uint8_t out[32]) {
  if ((key.ptr == nullptr && key.len != 0) || (data.ptr == nullptr && data.len != 0) ||
      out == nullptr) {
    return GH_ERR_INVALID_ARGUMENT;
  }
  MacCtx ctx = keyed_context(key);
  if (!ctx || !finish(ctx.get(), data, out)) return GH_ERR_CRYPTO;
  return GH_OK;
}

gh_status gh_verifier_new(const gh_bytes* secrets, size_t count, gh_verifier** out) {
  if (out == nullptr || (secrets == nullptr && count != 0)) return GH_ERR_INVALID_ARGUMENT;
  *out = nullptr;
  std::unique_ptr<gh_verifier> verifier(new (std::nothrow) gh_verifier());
  if (!verifier) return GH_ERR_OUT_OF_MEMORY;
  try {
    verifier->keys.reserve(count);
  } catch (const std::bad_alloc&) {
    return GH_ERR_OUT_OF_MEMORY;
  }
  for (size_t i = 0; i < count; ++i) {
    if (secrets[i].ptr == nullptr && secrets[i].len != 0) return GH_ERR_INVALID_ARGUMENT;
    if (secrets[i].len == 0) continue;  // an empty secret never matches
    MacCtx ctx = keyed_context(secrets[i]);
    if (!ctx) return GH_ERR_CRYPTO;
    verifier->keys.push_back(std::move(ctx));
  }
  *out = verifier.release();
  return GH_OK;
}

void gh_verifier_free(gh_verifier* verifier) { delete verifier; }

gh_status gh_verifier_verify(const gh_verifier* verifier, gh_bytes body, gh_bytes header,
                             int* matches) {
  if (verifier == nullptr || matches == nullptr || (body.ptr == nullptr && body.len != 0) ||
      (header.ptr == nullptr && header.len != 0)) {
    return GH_ERR_INVALID_ARGUMENT;
  }
  *matches = 0;
  uint8_t received[32];
  // The header's shape is public information; only the digest comparison is secret.
  if (!gh::parse_signature_header(header, received)) return GH_OK;
  int any = 0;
  for (const MacCtx& key : verifier->keys) {
    MacCtx ctx(EVP_MAC_CTX_dup(key.get()));
    uint8_t expected[32];
    if (!ctx || !finish(ctx.get(), body, expected)) return GH_ERR_CRYPTO;
    // No early exit: every secret costs the same whichever one matches.
    any |= CRYPTO_memcmp(expected, received, sizeof expected) == 0;
  }
  *matches = any;
  return GH_OK;
}

gh_status gh_verify_signature(const gh_bytes* secrets, size_t count, gh_bytes body,
                              gh_bytes header, int* matches) {
  gh_verifier* verifier = nullptr;
  gh_status status = gh_verifier_new(secrets, count, &verifier);
  if (status != GH_OK) return status;
  status = gh_verifier_verify(verifier, body, header, matches);
  gh_verifier_free(verifier);
  return status;
}

}  // extern "C"
