#include "waku/enr/enr.h"

#include <string.h>

#include "base/base64.h"
#include "base/cursor.h"
#include "base/error.h"
#include "waku/enr/rlp.h"

/* ---- decoding ------------------------------------------------------------------------------- */

static int key_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
  int c = memcmp(a, b, alen < blen ? alen : blen);
  if (c != 0)
    return c;
  return alen < blen ? -1 : alen > blen;
}

static uint16_t off_in(const ld_enr_t *enr, const uint8_t *p) {
  return (uint16_t)(p - enr->raw);
}

/* Reads one key/value pair into the next index slot; keys must ascend strictly. */
static int read_pair(ld_enr_t *enr, ld_cursor_t *body) {
  const uint8_t *key;
  size_t key_len;
  ld_rlp_item_t val;
  int rc = ld_rlp_read_string(body, &key, &key_len);
  if (rc == 0)
    rc = ld_rlp_read(body, &val);
  if (rc != 0)
    return LD_ERR_MALFORMED;
  if (enr->n_pairs == LD_ENR_MAX_PAIRS)
    return LD_ERR_LIMIT;
  if (enr->n_pairs > 0) {
    const ld_enr_pair_t *prev = &enr->pairs[enr->n_pairs - 1];
    if (key_cmp(enr->raw + prev->key_off, prev->key_len, key, key_len) >= 0)
      return LD_ERR_MALFORMED;
  }
  ld_enr_pair_t *p = &enr->pairs[enr->n_pairs++];
  p->key_off = off_in(enr, key);
  p->key_len = (uint16_t)key_len;
  p->item_off = off_in(enr, val.raw);
  p->item_len = (uint16_t)val.raw_len;
  p->val_off = off_in(enr, val.payload);
  p->val_len = (uint16_t)val.payload_len;
  p->is_list = val.is_list;
  return 0;
}

/* Writes the header of a list of `len` ≤ 0xffff bytes; returns its size. */
static size_t list_header(uint8_t *out, size_t len) {
  if (len <= 55) {
    out[0] = (uint8_t)(0xc0 + len);
    return 1;
  }
  if (len <= 0xff) {
    out[0] = 0xf8;
    out[1] = (uint8_t)len;
    return 2;
  }
  out[0] = 0xf9;
  out[1] = (uint8_t)(len >> 8);
  out[2] = (uint8_t)len;
  return 3;
}

/* Checks the signature of the "v4" scheme over RLP [seq, k, v, …] (`content` is its payload). */
static int verify_v4(ld_enr_t *enr, const uint8_t *content, size_t content_len) {
  size_t n;
  const uint8_t *pub = ld_enr_get(enr, "secp256k1", &n);
  if (pub == NULL || n != LD_SECP256K1_PUBLIC_LEN)
    return LD_ERR_BAD_KEY;
  memcpy(enr->pubkey, pub, n);
  uint8_t msg[3 + LD_ENR_MAX_SIZE];
  size_t h = list_header(msg, content_len);
  memcpy(msg + h, content, content_len);
  return ld_secp256k1_verify_keccak(enr->pubkey, n, msg, h + content_len, enr->signature);
}

static bool is_v4(const ld_enr_t *enr) {
  size_t n;
  const uint8_t *id = ld_enr_get(enr, "id", &n);
  return id != NULL && n == 2 && memcmp(id, "v4", 2) == 0;
}

/* The key of a record whose signature was checked before: only copied. */
static int take_v4_key(ld_enr_t *enr) {
  size_t n;
  const uint8_t *pub = ld_enr_get(enr, "secp256k1", &n);
  if (pub == NULL || n != LD_SECP256K1_PUBLIC_LEN)
    return LD_ERR_BAD_KEY;
  memcpy(enr->pubkey, pub, n);
  return 0;
}

static int decode_body(ld_enr_t *enr, ld_cursor_t *body, bool verify) {
  const uint8_t *sig;
  size_t sig_len;
  int rc = ld_rlp_read_string(body, &sig, &sig_len);
  if (rc != 0)
    return LD_ERR_MALFORMED; /* inside the list every RLP error is a structural one */
  const uint8_t *content = ld_cursor_ptr(body);
  size_t content_len = ld_cursor_remaining(body);
  if ((rc = ld_rlp_read_uint(body, &enr->seq)) != 0)
    return LD_ERR_MALFORMED;
  while (!ld_cursor_empty(body))
    if ((rc = read_pair(enr, body)) != 0)
      return rc;
  if (!is_v4(enr))
    return LD_ERR_UNSUPPORTED;
  if (sig_len != LD_ENR_SIG_LEN)
    return LD_ERR_BAD_SIGNATURE;
  memcpy(enr->signature, sig, LD_ENR_SIG_LEN);
  return verify ? verify_v4(enr, content, content_len) : take_v4_key(enr);
}

static int decode(ld_enr_t *enr, const uint8_t *data, size_t len, bool verify) {
  if (enr == NULL || (data == NULL && len > 0))
    return LD_ERR_INVALID_ARG;
  if (len > LD_ENR_MAX_SIZE)
    return LD_ERR_TOO_LARGE;
  enr->len = len;
  enr->seq = 0;
  enr->n_pairs = 0;
  if (len > 0)
    memmove(enr->raw, data, len); /* data may be enr->raw itself */
  ld_cursor_t c, body;
  ld_cursor_init(&c, enr->raw, len);
  int rc = ld_rlp_read_list(&c, &body);
  if (rc != 0)
    return rc == LD_ERR_TRUNCATED ? rc : LD_ERR_MALFORMED;
  if (!ld_cursor_empty(&c))
    return LD_ERR_MALFORMED;
  return decode_body(enr, &body, verify);
}

int ld_enr_decode(ld_enr_t *enr, const uint8_t *data, size_t len) {
  return decode(enr, data, len, true);
}

int ld_enr_decode_verified(ld_enr_t *enr, const uint8_t *data, size_t len) {
  return decode(enr, data, len, false);
}

int ld_enr_parse_text(ld_enr_t *enr, const char *text) {
  if (enr == NULL || text == NULL)
    return LD_ERR_INVALID_ARG;
  size_t n = strnlen(text, LD_ENR_TEXT_PARSE_MAX + 1);
  if (n > LD_ENR_TEXT_PARSE_MAX || n < 4 || memcmp(text, "enr:", 4) != 0)
    return LD_ERR_BAD_ENCODING;
  uint8_t raw[LD_ENR_MAX_SIZE + 2];
  size_t len;
  int rc = ld_base64url_decode(text + 4, n - 4, raw, sizeof raw, &len);
  if (rc != 0)
    return rc;
  return ld_enr_decode(enr, raw, len);
}

int ld_enr_to_text(const ld_enr_t *enr, char *out, size_t cap) {
  if (cap < 5)
    return LD_ERR_LIMIT;
  memcpy(out, "enr:", 4);
  int rc = ld_base64url_encode(enr->raw, enr->len, out + 4, cap - 4);
  if (rc < 0) {
    out[0] = '\0';
    return rc;
  }
  return rc + 4;
}

/* ---- access --------------------------------------------------------------------------------- */

static const ld_enr_pair_t *find(const ld_enr_t *enr, const char *key) {
  size_t klen = strlen(key);
  for (size_t i = 0; i < enr->n_pairs; i++) {
    const ld_enr_pair_t *p = &enr->pairs[i];
    if (p->key_len == klen && memcmp(enr->raw + p->key_off, key, klen) == 0)
      return p;
  }
  return NULL;
}

const uint8_t *ld_enr_get(const ld_enr_t *enr, const char *key, size_t *len) {
  const ld_enr_pair_t *p = find(enr, key);
  if (p == NULL || p->is_list)
    return NULL;
  *len = p->val_len;
  return enr->raw + p->val_off;
}

const uint8_t *ld_enr_get_item(const ld_enr_t *enr, const char *key, size_t *len) {
  const ld_enr_pair_t *p = find(enr, key);
  if (p == NULL)
    return NULL;
  *len = p->item_len;
  return enr->raw + p->item_off;
}

int ld_enr_node_id(const ld_enr_t *enr, uint8_t out[LD_ENR_NODE_ID_LEN]) {
  return ld_secp256k1_keccak_id(enr->pubkey, sizeof enr->pubkey, out);
}

int ld_enr_peer_id(const ld_enr_t *enr, ld_peerid_t *id) {
  uint8_t proto[4 + LD_SECP256K1_PUBLIC_LEN] = {0x08, LD_KEY_SECP256K1, 0x12,
                                                LD_SECP256K1_PUBLIC_LEN};
  memcpy(proto + 4, enr->pubkey, LD_SECP256K1_PUBLIC_LEN);
  ld_pubkey_t pub;
  int rc = ld_pubkey_decode(&pub, proto, sizeof proto);
  return rc == 0 ? ld_peerid_from_pubkey(id, &pub) : rc;
}

static int get_fixed(const ld_enr_t *enr, const char *key, uint8_t *out, size_t want) {
  size_t n;
  const uint8_t *v = ld_enr_get(enr, key, &n);
  if (v == NULL || n != want)
    return LD_ERR_NOT_FOUND;
  memcpy(out, v, want);
  return 0;
}

int ld_enr_ip4(const ld_enr_t *enr, uint8_t out[4]) {
  return get_fixed(enr, "ip", out, 4);
}

int ld_enr_ip6(const ld_enr_t *enr, uint8_t out[16]) {
  return get_fixed(enr, "ip6", out, 16);
}

int ld_enr_port(const ld_enr_t *enr, const char *key, uint16_t *port) {
  size_t n;
  const uint8_t *v = ld_enr_get(enr, key, &n);
  if (v == NULL || n == 0 || n > 2)
    return LD_ERR_NOT_FOUND;
  uint16_t p = n == 1 ? v[0] : (uint16_t)(v[0] << 8 | v[1]);
  if (p == 0)
    return LD_ERR_NOT_FOUND;
  *port = p;
  return 0;
}
