// Node-API glue: exposes the C core to JavaScript. Buffers are read in place;
// nothing here knows about HTTP.
#include <napi.h>

#include <memory>
#include <string>
#include <vector>

#include "../core/bytes.h"
#include "../core/gh_core.h"
#include "interceptor.h"
#include "json_text.h"

namespace {

// A body's bytes, borrowed from the Buffer/Uint8Array without copying.
gh_bytes borrow_bytes(const Napi::Value& value, const char* what) {
  if (!value.IsTypedArray()) {
    throw Napi::TypeError::New(value.Env(), std::string(what) + " must be a Buffer or Uint8Array");
  }
  Napi::TypedArray array = value.As<Napi::TypedArray>();
  if (array.TypedArrayType() != napi_uint8_array) {
    throw Napi::TypeError::New(value.Env(), std::string(what) + " must be a Buffer or Uint8Array");
  }
  auto* base = static_cast<uint8_t*>(array.ArrayBuffer().Data());
  return gh_bytes{base == nullptr ? nullptr : base + array.ByteOffset(), array.ByteLength()};
}

// A string's UTF-8 bytes, or a Buffer's bytes, copied into owned storage.
std::string owned_bytes(const Napi::Value& value, const char* what) {
  if (value.IsString()) return value.As<Napi::String>().Utf8Value();
  if (value.IsTypedArray()) {
    gh_bytes b = borrow_bytes(value, what);
    return std::string(reinterpret_cast<const char*>(b.ptr), b.len);
  }
  throw Napi::TypeError::New(value.Env(), std::string(what) + " must be a string or Buffer");
}

std::vector<std::string> secret_list(const Napi::Value& value) {
  if (!value.IsArray()) {
    throw Napi::TypeError::New(value.Env(), "secrets must be an array of strings or Buffers");
  }
  Napi::Array array = value.As<Napi::Array>();
  std::vector<std::string> secrets;
  secrets.reserve(array.Length());
  for (uint32_t i = 0; i < array.Length(); ++i) secrets.push_back(owned_bytes(array.Get(i), "secret"));
  return secrets;
}

std::vector<gh_bytes> views(const std::vector<std::string>& strings) {
  std::vector<gh_bytes> out;
  out.reserve(strings.size());
  for (const std::string& s : strings) out.push_back(gh::bytes_of(s));
  return out;
}

// The signature header. Only a 71-byte value can match, so a fixed stack
// buffer suffices: a longer value is truncated to 127 bytes and still fails
// the length check. Absent (undefined/null) is an empty header.
struct HeaderBytes {
  char data[128];
  size_t len = 0;
  std::string owned;
  gh_bytes bytes() const {
    if (!owned.empty()) return gh::bytes_of(owned);
    return gh_bytes{reinterpret_cast<const uint8_t*>(data), len};
  }
};

void read_header(const Napi::Value& value, HeaderBytes& out) {
  if (value.IsUndefined() || value.IsNull()) return;
  if (value.IsString()) {
    napi_status status = napi_get_value_string_utf8(value.Env(), value, out.data, sizeof out.data, &out.len);
    NAPI_THROW_IF_FAILED_VOID(value.Env(), status);
    return;
  }
  out.owned = owned_bytes(value, "signature header");
  if (out.owned.empty()) out.len = 0;
}

void throw_status(Napi::Env env, gh_status status) {
  switch (status) {
    case GH_OK:
      return;
    case GH_ERR_INVALID_ARGUMENT:
      throw Napi::TypeError::New(env, "gatehouse core: invalid argument");
    case GH_ERR_OUT_OF_MEMORY:
      throw Napi::Error::New(env, "gatehouse core: out of memory");
    case GH_ERR_FORBIDDEN_CHARACTER: {
      Napi::Error error = Napi::Error::New(env, "Identity header value contains CR, LF or NUL.");
      error.Set("code", Napi::String::New(env, "ERR_GH_FORBIDDEN_CHARACTER"));
      throw error;
    }
    default:
      throw Napi::Error::New(env, "gatehouse core: OpenSSL HMAC failed");
  }
}

Napi::Value VerifySignature(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::vector<std::string> secrets = secret_list(info[0]);
  const std::vector<gh_bytes> secret_views = views(secrets);
  const gh_bytes body = borrow_bytes(info[1], "body");
  HeaderBytes header;
  read_header(info[2], header);
  int matches = 0;
  throw_status(env, gh_verify_signature(secret_views.data(), secret_views.size(), body, header.bytes(), &matches));
  return Napi::Boolean::New(env, matches != 0);
}

// Secrets keyed once, for a receiver that verifies many deliveries.
class Verifier : public Napi::ObjectWrap<Verifier> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Verifier", {InstanceMethod<&Verifier::Verify>("verify")});
  }

  explicit Verifier(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Verifier>(info) {
    const std::vector<std::string> secrets = secret_list(info[0]);
    const std::vector<gh_bytes> secret_views = views(secrets);
    throw_status(info.Env(), gh_verifier_new(secret_views.data(), secret_views.size(), &verifier_));
  }

  ~Verifier() override { gh_verifier_free(verifier_); }

 private:
  Napi::Value Verify(const Napi::CallbackInfo& info) {
    const gh_bytes body = borrow_bytes(info[0], "body");
    HeaderBytes header;
    read_header(info[1], header);
    int matches = 0;
    throw_status(info.Env(), gh_verifier_verify(verifier_, body, header.bytes(), &matches));
    return Napi::Boolean::New(info.Env(), matches != 0);
  }

  gh_verifier* verifier_ = nullptr;
};

std::string string_field(const Napi::Object& object, const char* key) {
  Napi::Value value = object.Get(key);
  if (!value.IsString()) {
    throw Napi::TypeError::New(object.Env(), std::string("identity.") + key + " must be a string");
  }
  return value.As<Napi::String>().Utf8Value();
}

struct OptionalToken {
  bool present = false;
  std::string value;
  gh_bytes bytes() const { return present ? gh::bytes_of(value) : gh_bytes{nullptr, 0}; }
};

OptionalToken token_field(const Napi::Object& tokens, const char* key) {
  OptionalToken token;
  Napi::Value value = tokens.Get(key);
  if (value.IsUndefined() || value.IsNull()) return token;
  if (!value.IsString()) {
    throw Napi::TypeError::New(tokens.Env(), std::string("identity.tokens.") + key + " must be a string");
  }
  token.present = true;
  token.value = value.As<Napi::String>().Utf8Value();
  return token;
}

Napi::Value NormalizeHeaders(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsArray()) throw Napi::TypeError::New(env, "inbound must be an array of [name, value]");
  Napi::Array inbound_array = info[0].As<Napi::Array>();
  std::vector<std::string> storage;
  storage.reserve(inbound_array.Length() * 2);
  for (uint32_t i = 0; i < inbound_array.Length(); ++i) {
    Napi::Value pair = inbound_array.Get(i);
    if (!pair.IsArray()) throw Napi::TypeError::New(env, "inbound must be an array of [name, value]");
    Napi::Array entry = pair.As<Napi::Array>();
    Napi::Value name = entry.Get(0u), value = entry.Get(1u);
    if (!name.IsString() || !value.IsString()) {
      throw Napi::TypeError::New(env, "inbound header names and values must be strings");
    }
    storage.push_back(name.As<Napi::String>().Utf8Value());
    storage.push_back(value.As<Napi::String>().Utf8Value());
  }
  std::vector<gh_header> inbound;
  inbound.reserve(storage.size() / 2);
  for (size_t i = 0; i + 1 < storage.size(); i += 2) {
    inbound.push_back(gh_header{gh::bytes_of(storage[i]), gh::bytes_of(storage[i + 1])});
  }

  gh_identity identity{};
  std::string provider, user_id, user_name, auth_typ, name_typ, role_typ;
  std::vector<std::string> claim_storage;
  std::vector<gh_claim> claims;
  OptionalToken access, id, expires, refresh, secret;
  const bool has_identity = !info[1].IsUndefined() && !info[1].IsNull();
  if (has_identity) {
    if (!info[1].IsObject()) throw Napi::TypeError::New(env, "identity must be an object or null");
    Napi::Object object = info[1].As<Napi::Object>();
    provider = string_field(object, "provider");
    user_id = string_field(object, "userId");
    user_name = string_field(object, "userName");
    auth_typ = string_field(object, "authType");
    name_typ = string_field(object, "nameType");
    role_typ = string_field(object, "roleType");
    Napi::Value claims_value = object.Get("claims");
    if (!claims_value.IsArray()) throw Napi::TypeError::New(env, "identity.claims must be an array");
    Napi::Array claim_array = claims_value.As<Napi::Array>();
    claim_storage.reserve(claim_array.Length() * 2);
    for (uint32_t i = 0; i < claim_array.Length(); ++i) {
      Napi::Value claim = claim_array.Get(i);
      if (!claim.IsObject()) throw Napi::TypeError::New(env, "identity.claims[] must be {typ, val}");
      Napi::Object c = claim.As<Napi::Object>();
      Napi::Value typ = c.Get("typ"), val = c.Get("val");
      if (!typ.IsString() || !val.IsString()) {
        throw Napi::TypeError::New(env, "identity.claims[] typ and val must be strings");
      }
      claim_storage.push_back(typ.As<Napi::String>().Utf8Value());
      claim_storage.push_back(val.As<Napi::String>().Utf8Value());
    }
    for (size_t i = 0; i + 1 < claim_storage.size(); i += 2) {
      claims.push_back(gh_claim{gh::bytes_of(claim_storage[i]), gh::bytes_of(claim_storage[i + 1])});
    }
    Napi::Value tokens_value = object.Get("tokens");
    if (!tokens_value.IsUndefined() && !tokens_value.IsNull()) {
      if (!tokens_value.IsObject()) throw Napi::TypeError::New(env, "identity.tokens must be an object");
      Napi::Object tokens = tokens_value.As<Napi::Object>();
      access = token_field(tokens, "accessToken");
      id = token_field(tokens, "idToken");
      expires = token_field(tokens, "expiresOn");
      refresh = token_field(tokens, "refreshToken");
      secret = token_field(tokens, "accessTokenSecret");
    }
    identity.provider = gh::bytes_of(provider);
    identity.user_id = gh::bytes_of(user_id);
    identity.user_name = gh::bytes_of(user_name);
    identity.auth_typ = gh::bytes_of(auth_typ);
    identity.name_typ = gh::bytes_of(name_typ);
    identity.role_typ = gh::bytes_of(role_typ);
    identity.claims = claims.data();
    identity.claim_count = claims.size();
    identity.access_token = access.bytes();
    identity.id_token = id.bytes();
    identity.expires_on = expires.bytes();
    identity.refresh_token = refresh.bytes();
    identity.access_token_secret = secret.bytes();
  }

  gh_normalize_options options{{nullptr, 0}, 1};
  std::string prefix;
  if (info[2].IsObject()) {
    Napi::Object opts = info[2].As<Napi::Object>();
    Napi::Value prefix_value = opts.Get("prefix");
    if (!prefix_value.IsUndefined()) {
      if (!prefix_value.IsString()) throw Napi::TypeError::New(env, "options.prefix must be a string");
      prefix = prefix_value.As<Napi::String>().Utf8Value();
      options.prefix = gh::bytes_of(prefix);
    }
    Napi::Value expose = opts.Get("exposeTokens");
    if (!expose.IsUndefined()) options.expose_tokens = expose.ToBoolean().Value() ? 1 : 0;
  }

  gh_normalized* raw = nullptr;
  gh_status status = gh_normalize(inbound.data(), inbound.size(), has_identity ? &identity : nullptr, &options, &raw);
  if (status == GH_ERR_INVALID_ARGUMENT) {
    throw Napi::TypeError::New(env, "header prefix must be a non-empty header token");
  }
  throw_status(env, status);
  std::unique_ptr<gh_normalized, void (*)(gh_normalized*)> owner(raw, gh_normalized_free);
  const gh_normalized* normalized = owner.get();

  // Set one by one. Built from JSON text instead (json_text.h), a normalization with an
  // identity measured the same within noise: few strings, long ones (tokens), which
  // JSON.parse scans character by character.
  Napi::Object result = Napi::Object::New(env);
  Napi::Array remove = Napi::Array::New(env, gh_normalized_remove_count(normalized));
  for (size_t i = 0; i < gh_normalized_remove_count(normalized); ++i) {
    remove.Set(static_cast<uint32_t>(i), gh::js_string(env, gh_normalized_remove_at(normalized, i)));
  }
  Napi::Array set = Napi::Array::New(env, gh_normalized_set_count(normalized));
  for (size_t i = 0; i < gh_normalized_set_count(normalized); ++i) {
    const gh_header h = gh_normalized_set_at(normalized, i);
    Napi::Array pair = Napi::Array::New(env, 2);
    pair.Set(0u, gh::js_string(env, h.name));
    pair.Set(1u, gh::js_string(env, h.value));
    set.Set(static_cast<uint32_t>(i), pair);
  }
  result.Set("remove", remove);
  result.Set("set", set);
  return result;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  gh::init_json_text(env);
  exports.Set("abiVersion", Napi::Number::New(env, gh_abi_version()));
  exports.Set("verifySignature", Napi::Function::New<VerifySignature>(env, "verifySignature"));
  exports.Set("Verifier", Verifier::Define(env));
  exports.Set("normalizeHeaders", Napi::Function::New<NormalizeHeaders>(env, "normalizeHeaders"));
  exports.Set("Interceptor", Interceptor::Define(env));
  return exports;
}

}  // namespace

NODE_API_MODULE(gatehouse_native, Init)
