// HMAC-SHA256 signature verification over OpenSSL's EVP digest interface.
//
// Built into the Node addon, OpenSSL is the copy inside the running node
// process (it exports its symbols); nothing is linked.
//
// HMAC is composed here from SHA-256 (RFC 2104) rather than through
// EVP_MAC, because EVP_MAC_init looks the digest up by name on every keying;
// with a digest fetched once, a one-shot verification of a small body costs
// a third less. A verifier keeps, per secret, the SHA-256 states that have
// absorbed the inner and outer padded keys, so each verification costs only
// the body's blocks plus two. The test vectors and property tests pin this
// to node:crypto's HMAC for keys shorter and longer than a block.
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <memory>
#include <new>
#include <vector>

#include "gh_core.h"
#include "signature_header.h"

namespace {

constexpr size_t kBlock = 64;   // SHA-256 block size
constexpr size_t kDigest = 32;  // SHA-256 output size

const EVP_MD* sha256() {
  // Fetched once per process; the fetch is thread-safe and the result immutable.
  static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return md;
}

struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxDeleter>;

// The SHA-256 states after absorbing (key ^ ipad) and (key ^ opad).
struct KeyedHmac {
  MdCtx inner;
  MdCtx outer;
};

bool absorb_padded_key(EVP_MD_CTX* ctx, const unsigned char block_key[kBlock], unsigned char pad) {
  unsigned char padded[kBlock];
  for (size_t i = 0; i < kBlock; ++i) padded[i] = block_key[i] ^ pad;
  const bool ok = EVP_DigestInit_ex(ctx, sha256(), nullptr) == 1 && EVP_DigestUpdate(ctx, padded, kBlock) == 1;
  OPENSSL_cleanse(padded, sizeof padded);
  return ok;
}

bool make_key(gh_bytes key, KeyedHmac& out) {
  if (sha256() == nullptr) return false;
  unsigned char block_key[kBlock] = {0};
  bool ok = true;
  if (key.len > kBlock) {
    // Keys longer than a block are replaced by their digest (RFC 2104).
    unsigned int n = 0;
    ok = EVP_Digest(key.ptr, key.len, block_key, &n, sha256(), nullptr) == 1;
  } else if (key.len > 0) {
    std::copy(key.ptr, key.ptr + key.len, block_key);
  }
  out.inner.reset(EVP_MD_CTX_new());
  out.outer.reset(EVP_MD_CTX_new());
  ok = ok && out.inner && out.outer && absorb_padded_key(out.inner.get(), block_key, 0x36) &&
       absorb_padded_key(out.outer.get(), block_key, 0x5c);
  OPENSSL_cleanse(block_key, sizeof block_key);
  return ok;
}

// HMAC(key, data) into out, using a scratch context; the keyed states are not modified.
bool compute(const KeyedHmac& key, EVP_MD_CTX* scratch, gh_bytes data, uint8_t out[kDigest]) {
  unsigned char inner_digest[kDigest];
  unsigned int n = 0;
  bool ok = EVP_MD_CTX_copy_ex(scratch, key.inner.get()) == 1 &&
            (data.len == 0 || EVP_DigestUpdate(scratch, data.ptr, data.len) == 1) &&
            EVP_DigestFinal_ex(scratch, inner_digest, &n) == 1 && n == kDigest &&
            EVP_MD_CTX_copy_ex(scratch, key.outer.get()) == 1 &&
            EVP_DigestUpdate(scratch, inner_digest, kDigest) == 1 && EVP_DigestFinal_ex(scratch, out, &n) == 1 &&
            n == kDigest;
  OPENSSL_cleanse(inner_digest, sizeof inner_digest);
  return ok;
}

}  // namespace

struct gh_verifier {
  std::vector<KeyedHmac> keys;
};

extern "C" {

gh_status gh_hmac_sha256(gh_bytes key, gh_bytes data, uint8_t out[32]) {
  if ((key.ptr == nullptr && key.len != 0) || (data.ptr == nullptr && data.len != 0) || out == nullptr) {
    return GH_ERR_INVALID_ARGUMENT;
  }
  KeyedHmac keyed;
  MdCtx scratch(EVP_MD_CTX_new());
  if (!scratch || !make_key(key, keyed) || !compute(keyed, scratch.get(), data, out)) {
    return GH_ERR_CRYPTO;
  }
  return GH_OK;
}

gh_status gh_verifier_new(const gh_bytes* secrets, size_t count, gh_verifier** out) {
  if (out == nullptr || (secrets == nullptr && count != 0)) return GH_ERR_INVALID_ARGUMENT;
  *out = nullptr;
  std::unique_ptr<gh_verifier> verifier(new (std::nothrow) gh_verifier());
  if (!verifier) return GH_ERR_OUT_OF_MEMORY;
  try {
    verifier->keys.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      if (secrets[i].ptr == nullptr && secrets[i].len != 0) return GH_ERR_INVALID_ARGUMENT;
      if (secrets[i].len == 0) continue;  // an empty secret never matches
      KeyedHmac keyed;
      if (!make_key(secrets[i], keyed)) return GH_ERR_CRYPTO;
      verifier->keys.push_back(std::move(keyed));
    }
  } catch (const std::bad_alloc&) {
    return GH_ERR_OUT_OF_MEMORY;
  }
  *out = verifier.release();
  return GH_OK;
}

void gh_verifier_free(gh_verifier* verifier) { delete verifier; }

gh_status gh_verifier_verify(const gh_verifier* verifier, gh_bytes body, gh_bytes header, int* matches) {
  if (verifier == nullptr || matches == nullptr || (body.ptr == nullptr && body.len != 0) ||
      (header.ptr == nullptr && header.len != 0)) {
    return GH_ERR_INVALID_ARGUMENT;
  }
  *matches = 0;
  uint8_t received[kDigest];
  // The header's shape is public information; only the digest comparison is secret.
  if (!gh::parse_signature_header(header, received)) return GH_OK;
  MdCtx scratch(EVP_MD_CTX_new());
  if (!scratch) return GH_ERR_OUT_OF_MEMORY;
  int any = 0;
  for (const KeyedHmac& key : verifier->keys) {
    uint8_t expected[kDigest];
    if (!compute(key, scratch.get(), body, expected)) return GH_ERR_CRYPTO;
    // No early exit: every secret costs the same whichever one matches.
    any |= CRYPTO_memcmp(expected, received, sizeof expected) == 0;
  }
  *matches = any;
  return GH_OK;
}

gh_status gh_verify_signature(const gh_bytes* secrets, size_t count, gh_bytes body, gh_bytes header, int* matches) {
  gh_verifier* verifier = nullptr;
  gh_status status = gh_verifier_new(secrets, count, &verifier);
  if (status != GH_OK) return status;
  status = gh_verifier_verify(verifier, body, header, matches);
  gh_verifier_free(verifier);
  return status;
}

}  // extern "C"
