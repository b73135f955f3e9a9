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

#define GH_ABI_VERSION 4

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
  GH_ERR_FORBIDDEN_CHARACTER = 4,
  GH_ERR_ALREADY_COMPLETED = 5, /* ABI 3: a request completed before; this call changed nothing */
  GH_ERR_SHUT_DOWN = 6          /* ABI 3: the engine no longer takes requests */
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
gh_status gh_verifier_verify(const gh_verifier* verifier, gh_bytes body, gh_bytes header, int* matches);

/* One-shot form of gh_verifier_new + gh_verifier_verify + gh_verifier_free. */
gh_status gh_verify_signature(const gh_bytes* secrets, size_t count, gh_bytes body, gh_bytes header, int* matches);

/* ---- identity header normalization ------------------------------------- */

typedef struct gh_claim {
  gh_bytes typ;
  gh_bytes val;
} gh_claim;

typedef struct gh_identity {
  gh_bytes provider;  /* -IDP, and the <PROVIDER> of token headers */
  gh_bytes user_id;   /* -ID */
  gh_bytes user_name; /* -NAME */
  gh_bytes auth_typ;  /* principal.auth_typ */
  gh_bytes name_typ;  /* principal.name_typ */
  gh_bytes role_typ;  /* principal.role_typ */
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
  gh_bytes prefix;   /* e.g. "X-PLATFORM-"; empty means the default */
  int expose_tokens; /* non-zero: emit X-<prefix>TOKEN-* headers */
} gh_normalize_options;

typedef struct gh_normalized gh_normalized;

/*
 * Computes which inbound headers a host must remove and which identity
 * headers it must set. identity may be NULL (anonymous request: strip only).
 * Fails with GH_ERR_FORBIDDEN_CHARACTER when an identity value holds CR, LF
 * or NUL; *out is then NULL.
 */
gh_status gh_normalize(const gh_header* inbound, size_t inbound_count, const gh_identity* identity,
                       const gh_normalize_options* options, gh_normalized** out);
size_t gh_normalized_remove_count(const gh_normalized* n);
gh_bytes gh_normalized_remove_at(const gh_normalized* n, size_t index);
size_t gh_normalized_set_count(const gh_normalized* n);
gh_header gh_normalized_set_at(const gh_normalized* n, size_t index);
void gh_normalized_free(gh_normalized* n);

/* ---- request interception (ABI 3) ---------------------------------------
 *
 * A host (a web-server module, a test host) hands every request to an engine;
 * the engine's policy decides, now or later, on any thread; the host's
 * completion callback receives the decision exactly once.
 */

/* What a host tells the policy about one request. All borrowed. */
typedef struct gh_request_view {
  gh_bytes method;
  gh_bytes scheme; /* "http" or "https" */
  gh_bytes host;
  gh_bytes path;  /* raw, without the query */
  gh_bytes query; /* raw, without "?" */
  gh_bytes remote_address;
  const gh_header* headers; /* as received, in order */
  size_t header_count;
  gh_bytes body; /* ptr == NULL: no body given */
} gh_request_view;

typedef enum gh_decision_kind {
  GH_DECISION_CONTINUE = 0, /* let the request through, with these header changes */
  GH_DECISION_RESPOND = 1   /* answer it here */
} gh_decision_kind;

/* A decision; borrowed by whoever receives it, valid for the duration of the call. */
typedef struct gh_decision {
  gh_decision_kind kind;
  /* CONTINUE: remove these inbound headers, then set these. */
  const gh_bytes* remove_headers;
  size_t remove_count;
  const gh_header* set_headers;
  size_t set_count;
  /* RESPOND: */
  int status;
  const gh_header* response_headers;
  size_t response_header_count;
  gh_bytes body;
} gh_decision;

typedef struct gh_engine gh_engine;
/* One request in flight: owns a deep copy of its view until the last reference goes. */
typedef struct gh_pending gh_pending;

/*
 * The policy. Called on the submitting thread with a reference to the pending
 * request that it owns: it must complete the request (now or later, from any
 * thread) and release that reference with gh_pending_release.
 */
typedef void (*gh_policy_fn)(void* policy_data, gh_pending* pending);

/* The host's completion: called exactly once per submitted request; decision is borrowed. */
typedef void (*gh_completion_fn)(void* host_data, const gh_decision* decision);

gh_status gh_engine_new(gh_policy_fn policy, void* policy_data, gh_engine** out);

/*
 * Submits one request: it is deep-copied, so the host's view may go away as
 * soon as this returns. After shutdown, completes at once with 503.
 */
gh_status gh_engine_submit(gh_engine* engine, const gh_request_view* request, gh_completion_fn done, void* host_data);

/* The pending request's own copy of the view (valid while a reference is held). */
const gh_request_view* gh_pending_request(const gh_pending* pending);

/*
 * Completes the request with decision (copied out before this returns).
 * The first completion wins; every later one returns GH_ERR_ALREADY_COMPLETED.
 */
gh_status gh_pending_complete(gh_pending* pending, const gh_decision* decision);

/* Shorthand: RESPOND with this status and a JSON {"error": message} body (a 503 also says Retry-After: 5). */
gh_status gh_pending_fail(gh_pending* pending, int status, const char* message);

void gh_pending_retain(gh_pending* pending);
void gh_pending_release(gh_pending* pending);

/* Requests submitted and not yet completed. */
size_t gh_engine_pending_count(const gh_engine* engine);

/*
 * Stops taking requests and completes every pending one with 503. The policy
 * may still complete them afterwards: those calls return GH_ERR_ALREADY_COMPLETED.
 */
void gh_engine_shutdown(gh_engine* engine);

/* Shuts down if needed, then frees the engine (pending requests keep their own memory). */
void gh_engine_free(gh_engine* engine);

/* ---- an engine handed to a host in another binary (ABI 4) ---------------
 *
 * A web-server module that embeds Node (binding/iis) does not call its own
 * copy of the engine: the engine lives in the addon, inside the Node the
 * module started. JavaScript attaches the interceptor to the host; the host
 * receives this table and submits through it.
 */
typedef struct gh_engine_ref {
  uint32_t abi_version; /* GH_ABI_VERSION of the binary that filled it */
  gh_engine* engine;
  gh_status (*submit)(gh_engine* engine, const gh_request_view* request, gh_completion_fn done, void* host_data);
  /* Requests whose path starts with this need their body in the view (the
     authentication routes' POSTs, e.g. "/.auth/"); every other body stays with the app. */
  gh_bytes body_path_prefix;
} gh_engine_ref;

/*
 * What a host offers JavaScript, as a Node-API external type-tagged with
 * GH_HOST_LINK_TAG. attach hands the host an engine (the host copies the
 * table), replacing any other; detach takes that engine away if it is still
 * the attached one, and once detach returns the host submits nothing more to it.
 */
typedef struct gh_host_link {
  uint32_t abi_version;
  void* host_data;
  void (*attach)(void* host_data, const gh_engine_ref* ref);
  void (*detach)(void* host_data, const gh_engine* engine);
} gh_host_link;

/* The Node-API type tag (napi_type_tag) of a gh_host_link external. */
#define GH_HOST_LINK_TAG_LOWER 0x67617465686f7573ULL /* "gatehous" */
#define GH_HOST_LINK_TAG_UPPER 0x65686f73746c6e6bULL /* "ehostlnk" */

#ifdef __cplusplus
}
#endif

#endif
