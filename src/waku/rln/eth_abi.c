/* Ethereum ABI words and JSON-RPC envelopes (eth_abi.h). */
#include <inttypes.h>
#include <string.h>

#include "base/error.h"
#include "base/hex.h"
#include "crypto/keccak.h"
#include "waku/rln/eth_abi.h"

void ld_eth_selector(const char *signature, uint8_t out[LD_ETH_SELECTOR]) {
  uint8_t h[LD_KECCAK256_LEN];
  ld_keccak256(signature, strlen(signature), h);
  memcpy(out, h, LD_ETH_SELECTOR);
}

int ld_eth_call_data(const char *signature, const uint8_t (*words)[LD_ETH_WORD], size_t n,
                     char out[LD_ETH_CALL_HEX_MAX]) {
  if (n > LD_ETH_CALL_MAX_WORDS)
    return LD_ERR_INVALID_ARG;
  uint8_t sel[LD_ETH_SELECTOR];
  ld_eth_selector(signature, sel);
  out[0] = '0';
  out[1] = 'x';
  char *p = out + 2;
  p += ld_hex_encode(sel, sizeof sel, p);
  for (size_t i = 0; i < n; i++)
    p += ld_hex_encode(words[i], LD_ETH_WORD, p);
  return 0;
}

void ld_eth_word_from_u64(uint8_t word[LD_ETH_WORD], uint64_t v) {
  memset(word, 0, LD_ETH_WORD);
  for (int i = 0; i < 8; i++)
    word[31 - i] = (uint8_t)(v >> (8 * i));
}

void ld_eth_word_from_field(uint8_t word[LD_ETH_WORD], const ld_fr_t *x) {
  uint8_t le[32];
  ld_fr_to_bytes(le, x);
  for (int i = 0; i < 32; i++)
    word[i] = le[31 - i];
}

int ld_eth_hex_data(const char *text, uint8_t *out, size_t cap, size_t *len) {
  if (text == NULL || text[0] != '0' || (text[1] != 'x' && text[1] != 'X'))
    return LD_ERR_BAD_ENCODING;
  size_t n = strlen(text + 2);
  if (n % 2 != 0)
    return LD_ERR_BAD_ENCODING;
  if (n / 2 > cap)
    return LD_ERR_TOO_LARGE;
  if (n == 0) {
    *len = 0;
    return 0;
  }
  return ld_hex_decode(text + 2, n, out, cap, len) == 0 ? 0 : LD_ERR_BAD_ENCODING;
}

int ld_eth_quantity(const char *text, uint64_t *out) {
  if (text == NULL || text[0] != '0' || (text[1] != 'x' && text[1] != 'X') || text[2] == '\0')
    return LD_ERR_BAD_ENCODING;
  uint64_t v = 0;
  size_t digits = 0;
  for (const char *c = text + 2; *c != '\0'; c++) {
    int d = ld_hex_digit_value(*c);
    if (d < 0)
      return LD_ERR_BAD_ENCODING;
    if (v == 0 && d == 0)
      continue; /* leading zeros carry no value (some endpoints send them) */
    if (++digits > 16)
      return LD_ERR_OVERFLOW;
    v = v << 4 | (uint64_t)d;
  }
  *out = v;
  return 0;
}

static const uint8_t *word_at(const uint8_t *data, size_t len, size_t i) {
  if (i >= len / LD_ETH_WORD)
    return NULL;
  return data + i * LD_ETH_WORD;
}

int ld_eth_abi_field(const uint8_t *data, size_t len, size_t i, ld_fr_t *out) {
  const uint8_t *w = word_at(data, len, i);
  if (w == NULL)
    return LD_ERR_TRUNCATED;
  uint8_t le[32];
  for (int k = 0; k < 32; k++)
    le[k] = w[31 - k];
  return ld_fr_from_bytes(out, le) == 0 ? 0 : LD_ERR_OVERFLOW;
}

int ld_eth_abi_u64(const uint8_t *data, size_t len, size_t i, uint64_t *out) {
  const uint8_t *w = word_at(data, len, i);
  if (w == NULL)
    return LD_ERR_TRUNCATED;
  for (int k = 0; k < 24; k++)
    if (w[k] != 0)
      return LD_ERR_OVERFLOW;
  uint64_t v = 0;
  for (int k = 24; k < 32; k++)
    v = v << 8 | w[k];
  *out = v;
  return 0;
}

int ld_eth_abi_bool(const uint8_t *data, size_t len, size_t i, int *out) {
  uint64_t v = 0;
  int rc = ld_eth_abi_u64(data, len, i, &v);
  if (rc != 0)
    return rc;
  if (v > 1)
    return LD_ERR_OVERFLOW;
  *out = (int)v;
  return 0;
}

json_t *ld_eth_rpc_request(uint64_t id, const char *method, json_t *params) {
  return json_pack("{s:s,s:I,s:s,s:o}", "jsonrpc", "2.0", "id", (json_int_t)id, "method", method,
                   "params", params);
}

static int rpc_error(const json_t *error, char *err, size_t errlen) {
  const char *msg = json_string_value(json_object_get(error, "message"));
  json_int_t code = json_integer_value(json_object_get(error, "code"));
  return ld_error_fmt(err, errlen, LD_ERR_PROTOCOL,
                      "JSON-RPC error %" JSON_INTEGER_FORMAT ": %.200s", code,
                      msg != NULL ? msg : "(no message)");
}

int ld_eth_rpc_response(const char *body, size_t len, uint64_t id, json_t **root,
                        const json_t **result, char *err, size_t errlen) {
  *root = NULL;
  json_t *r = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
  int rc = 0;
  const json_t *jid = json_object_get(r, "id");
  const json_t *error = json_object_get(r, "error");
  if (!json_is_object(r))
    rc = ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "the answer is not a JSON object");
  else if (!json_is_integer(jid) || (uint64_t)json_integer_value(jid) != id)
    rc = ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "the answer has not the request's id");
  else if (error != NULL)
    rc = rpc_error(error, err, errlen);
  else if ((*result = json_object_get(r, "result")) == NULL)
    rc = ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "the answer has no \"result\"");
  if (rc != 0) {
    json_decref(r);
    return rc;
  }
  *root = r;
  return 0;
}
