/*
 * gatehouse core: the plain C ABI shared by every host (the Node addon, the
 * Windows web-server module, native test hosts). No C++ types, no exceptions,
 * no Node or web-server headers cross this boundary.
 */
#ifndef GATEHOUSE_GH_CORE_H
#define GATEHOUSE_GH_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GH_ABI_VERSION 2

/* A borrowed byte range; never owned by the callee. */
typedef struct gh_bytes {
  const uint8_t* ptr;
  size_t len;
} gh_bytes;

typedef struct gh_header {
  gh_bytes name;
  gh_bytes value;
} gh_header;

typedef enum gh_status {
  GH_OK = 0,
  GH_ERR_INVALID_ARGUMENT = 1,
  GH_ERR_CRYPTO = 2,
  GH_ERR_OUT_OF_MEMORY = 3,
  GH_ERR_FORBIDDEN_CHARACTER = 4
} gh_status;

uint32_t gh_abi_version(void);

/* ---- HMAC-SHA256 webhook signatures ------------------------------------ */

/* HMAC-SHA256 of data keyed with key; out receives 32 bytes. */
gh_status gh_hmac_sha256(gh_bytes key, gh_bytes data, uint8_t out[32]);

/* A set of accepted secrets, keyed once and reused for every verification. */
typedef struct gh_verifier gh_verifier;

/* Empty secrets are ignored: they never match. */
gh_status gh_verifier_new(const gh_bytes* secrets, size_t count, gh_verifier** out);
void gh_verifier_free(gh_verifier* verifier);

/*
 * Sets *matches to 1 when header is exactly "sha256=" followed by the 64
 * lower-case hex digits of HMAC-SHA256(secret, body) for at least one secret,
 * else 0. Every secret is tried, each compared in constant time.
 */
gh_status gh_verifier_verify(const gh_verifier* verifier, gh_bytes body, gh_bytes header,
                             int* matches);

/* One-shot form of gh_verifier_new + gh_verifier_verify + gh_verifier_free. */
gh_status gh_verify_signature(const gh_bytes* secrets, size_t count, gh_bytes body,
                              gh_bytes header, int* matches);

/* ---- identity header normalization ------------------------------------- */

typedef struct gh_claim {
  gh_bytes typ;
  gh_bytes val;
} gh_claim;

typedef struct gh_identity {
  gh_bytes provider;        /* -IDP, and the <PROVIDER> of token headers */
  gh_bytes user_id;         /* -ID */
  gh_bytes user_name;       /* -NAME */
  gh_bytes auth_typ;        /* principal.auth_typ */
  gh_bytes name_typ;        /* principal.name_typ */
  gh_bytes role_typ;        /* principal.role_typ */
  const gh_claim* claims;
  size_t claim_count;
  /* Token headers; a field with ptr == NULL is absent. */
  gh_bytes access_token;
  gh_bytes id_token;
  gh_bytes expires_on;
  gh_bytes refresh_token;
  gh_bytes access_token_secret; /* OAuth 1.0a providers (ABI 2) */
} gh_identity;

typedef struct gh_normalize_options {
  gh_bytes prefix;       /* e.g. "X-PLATFORM-"; empty means the default */
  int expose_tokens;     /* non-zero: emit X-<prefix>TOKEN-* headers */
} gh_normalize_options;

typedef struct gh_normalized gh_normalized;

/*
 * Computes which inbound headers a host must remove and which identity
 * headers it must set. identity may be NULL (anonymous request: strip only).
 * Fails with GH_ERR_FORBIDDEN_CHARACTER when an identity value holds CR, LF
 * or NUL; *out is then NULL.
 */
gh_status gh_normalize(const gh_header* inbound, size_t inbound_count,
                       const gh_identity* identity, const gh_normalize_options* options,
                       gh_normalized** out);
size_t gh_normalized_remove_count(const gh_normalized* n);
gh_bytes gh_normalized_remove_at(const gh_normalized* n, size_t index);
size_t gh_normalized_set_count(const gh_normalized* n);
gh_header gh_normalized_set_at(const gh_normalized* n, size_t index);
void gh_normalized_free(gh_normalized* n);

#ifdef __cplusplus
}
#endif

#endif
