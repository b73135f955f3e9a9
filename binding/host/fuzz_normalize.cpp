// libFuzzer target: identity header normalization (gh_normalize) on any inbound headers, any
// identity and any configured prefix, under AddressSanitizer and UBSan (scripts/fuzz-core.sh).
// In the IIS module this code runs inside the web server's worker process on every request, on
// headers an attacker chooses: a memory error there is the server's. Besides memory safety it
// checks what docs/headers.md promises, against a reading of its own written here from that page:
//   - every inbound header whose name, upper-cased with `_` and `.` as `-`, begins with
//     <PREFIX>CLIENT-PRINCIPAL or <PREFIX>TOKEN-, or whose value holds CR, LF or NUL, is removed;
//     nothing else is, and each name once;
//   - a set header is named <PREFIX>…, upper case, and its value never holds CR, LF or NUL;
//   - the principal is base64 of JSON without a raw control character;
//   - the call fails only for a prefix that is not a header token (invalid argument) or an
//     identity value with CR, LF or NUL (forbidden character).
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../core/gh_core.h"

namespace {

void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_normalize: %s\n", what);
  std::abort();
}

std::string canonical(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    if (c == '_' || c == '.')
      c = '-';
    else if (c >= 'a' && c <= 'z')
      c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

bool splits_header(const std::string& value) {
  return value.find_first_of(std::string("\r\n\0", 3)) != std::string::npos;
}

bool is_token(const std::string& name) {
  if (name.empty()) return false;
  for (unsigned char c : name) {
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alnum && std::string("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) == std::string::npos) return false;
  }
  return true;
}

gh_bytes bytes(const std::string& s) { return gh_bytes{reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

std::string text(gh_bytes b) {
  return b.len == 0 ? std::string() : std::string(reinterpret_cast<const char*>(b.ptr), b.len);
}

/** Header names an attacker would try: the identity names in other spellings, mostly. */
std::string header_name(FuzzedDataProvider& in, const std::string& prefix) {
  static const char* const kStems[] = {"CLIENT-PRINCIPAL",       "client_principal", "Client.Principal-ID", "TOKEN-",
                                       "token_aad_access_token", "CLIENT-PRINCIPA",  "Forwarded",           ""};
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0:
      return in.ConsumeRandomLengthString(40);
    case 1:
      return prefix + kStems[in.ConsumeIntegralInRange<size_t>(0, 7)] + in.ConsumeRandomLengthString(8);
    case 2:
      return canonical(prefix) + in.ConsumeRandomLengthString(24);
    default: {
      std::string name = prefix + kStems[in.ConsumeIntegralInRange<size_t>(0, 7)];
      for (char& c : name) {  // another case, `_` or `.` for `-`
        const int change = in.ConsumeIntegralInRange<int>(0, 3);
        if (c == '-' && change == 1)
          c = '_';
        else if (c == '-' && change == 2)
          c = '.';
        else if (change == 3 && c >= 'A' && c <= 'Z')
          c = static_cast<char>(c - 'A' + 'a');
      }
      return name;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const std::string prefix = in.ConsumeBool() ? std::string("X-PLATFORM-") : in.ConsumeRandomLengthString(16);
  const std::string effective_prefix = prefix.empty() ? std::string("X-PLATFORM-") : prefix;
  const bool expose_tokens = in.ConsumeBool();

  std::vector<std::string> names, values;
  const size_t header_count = in.ConsumeIntegralInRange<size_t>(0, 12);
  for (size_t i = 0; i < header_count; ++i) {
    names.push_back(header_name(in, effective_prefix));
    values.push_back(in.ConsumeRandomLengthString(32));
  }
  std::vector<gh_header> inbound;
  for (size_t i = 0; i < header_count; ++i) inbound.push_back(gh_header{bytes(names[i]), bytes(values[i])});

  // The identity's texts: 6 fields, up to 6 claims of two texts, up to 5 tokens (absent or present).
  std::vector<std::string> texts;
  for (int i = 0; i < 6; ++i) texts.push_back(in.ConsumeRandomLengthString(24));
  const size_t claim_count = in.ConsumeIntegralInRange<size_t>(0, 6);
  for (size_t i = 0; i < 2 * claim_count; ++i) texts.push_back(in.ConsumeRandomLengthString(24));
  bool token_present[5];
  for (bool& present : token_present) present = in.ConsumeBool();
  for (int i = 0; i < 5; ++i) texts.push_back(in.ConsumeRandomLengthString(48));
  const bool anonymous = in.ConsumeBool();

  std::vector<gh_claim> claims;
  for (size_t i = 0; i < claim_count; ++i) claims.push_back(gh_claim{bytes(texts[6 + 2 * i]), bytes(texts[7 + 2 * i])});
  const size_t tokens_at = 6 + 2 * claim_count;
  // A present token, even an empty one, has a non-null pointer (std::string::data() never is null).
  auto token = [&](int i) { return token_present[i] ? bytes(texts[tokens_at + i]) : gh_bytes{nullptr, 0}; };
  gh_identity identity{bytes(texts[0]),
                       bytes(texts[1]),
                       bytes(texts[2]),
                       bytes(texts[3]),
                       bytes(texts[4]),
                       bytes(texts[5]),
                       claims.empty() ? nullptr : claims.data(),
                       claims.size(),
                       token(0),
                       token(1),
                       token(2),
                       token(3),
                       token(4)};
  gh_normalize_options options{bytes(prefix), expose_tokens ? 1 : 0};

  gh_normalized* out = nullptr;
  const gh_status status = gh_normalize(inbound.empty() ? nullptr : inbound.data(), inbound.size(),
                                        anonymous ? nullptr : &identity, &options, &out);

  if (!is_token(effective_prefix)) {
    check(status == GH_ERR_INVALID_ARGUMENT && out == nullptr, "a prefix that is not a header token must be refused");
    return 0;
  }
  // Values that would split a header: the three names and, once the identity is set, the rest.
  bool identity_splits = splits_header(texts[1]) || splits_header(texts[2]) || splits_header(texts[0]);
  if (expose_tokens)
    for (int i = 0; i < 5; ++i)
      identity_splits = identity_splits || (token_present[i] && splits_header(texts[tokens_at + i]));
  if (!anonymous && identity_splits) {
    check(status == GH_ERR_FORBIDDEN_CHARACTER && out == nullptr,
          "an identity value with CR, LF or NUL must be refused");
    return 0;
  }
  check(status == GH_OK && out != nullptr, "normalization failed on valid input");

  const std::string canonical_prefix = canonical(effective_prefix);
  std::vector<std::string> removed;
  for (size_t i = 0; i < gh_normalized_remove_count(out); ++i) removed.push_back(text(gh_normalized_remove_at(out, i)));
  for (size_t i = 0; i < removed.size(); ++i)
    for (size_t j = i + 1; j < removed.size(); ++j) check(removed[i] != removed[j], "a name removed twice");
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string c = canonical(names[i]);
    const bool alias =
        starts_with(c, canonical_prefix + "CLIENT-PRINCIPAL") || starts_with(c, canonical_prefix + "TOKEN-");
    bool is_removed = false;
    for (const std::string& r : removed) is_removed = is_removed || r == names[i];
    if (alias || splits_header(values[i])) check(is_removed, "an identity alias or a splitting value was left in");
  }
  for (const std::string& r : removed) {
    const std::string c = canonical(r);
    bool inbound_unsafe = false;
    for (size_t i = 0; i < names.size(); ++i)
      inbound_unsafe = inbound_unsafe || (names[i] == r && splits_header(values[i]));
    check(starts_with(c, canonical_prefix + "CLIENT-PRINCIPAL") || starts_with(c, canonical_prefix + "TOKEN-") ||
              inbound_unsafe,
          "a header removed for no reason");
  }

  const size_t set_count = gh_normalized_set_count(out);
  check(anonymous ? set_count == 0 : set_count >= 4, "identity headers missing, or set for an anonymous request");
  for (size_t i = 0; i < set_count; ++i) {
    const gh_header h = gh_normalized_set_at(out, i);
    const std::string name = text(h.name), value = text(h.value);
    check(starts_with(name, canonical_prefix) && canonical(name) == name,
          "a set header outside the prefix, or not upper case");
    check(!splits_header(value), "a set value with CR, LF or NUL");
  }
  if (!anonymous) {
    const gh_header principal = gh_normalized_set_at(out, 0);
    check(text(principal.name) == canonical_prefix + "CLIENT-PRINCIPAL", "the principal comes first");
    // base64 → JSON: no raw control character may survive escaping.
    const std::string encoded = text(principal.value);
    check(encoded.size() % 4 == 0, "principal is not padded base64");
    std::string json;
    unsigned bits = 0, count = 0;
    for (char ch : encoded) {
      if (ch == '=') break;
      const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
      const char* at = std::strchr(digits, ch);
      check(at != nullptr && ch != '\0', "principal has a non-base64 character");
      bits = (bits << 6) | static_cast<unsigned>(at - digits);
      count += 6;
      if (count >= 8) {
        count -= 8;
        json.push_back(static_cast<char>((bits >> count) & 0xff));
      }
    }
    check(starts_with(json, "{\"auth_typ\":\"") && json.back() == '}', "principal is not the JSON object");
    for (unsigned char c : json) check(c >= 0x20, "a raw control character in the principal's JSON");
  }
  gh_normalized_free(out);
  return 0;
}
