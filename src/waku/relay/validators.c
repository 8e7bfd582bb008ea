#include "waku/relay/validators.h"

#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/hex.h"
#include "waku/core/topics.h"

/* secp256k1 group order n and n/2, big-endian. */
static const uint8_t g_order[32] = {
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
    0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48, 0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c, 0xd0, 0x36, 0x41, 0x41};
static const uint8_t g_half_order[32] = {
    0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0x5d, 0x57, 0x6e, 0x73, 0x57, 0xa4, 0x50, 0x1d, 0xdf, 0xe9, 0x2f, 0x46, 0x68, 0x1b, 0x20, 0xa0};

const char *ld_relay_reason_name(ld_relay_reason_t reason) {
  static const char *const names[] = {
      "ok",           "too_large",     "undecodable",   "empty_content_topic", "empty_payload",
      "no_timestamp", "out_of_window", "bad_signature", "validator",
  };
  return (unsigned)reason < LD_RELAY_REASON_COUNT ? names[reason] : "unknown";
}

/* ---- size and decodability ------------------------------------------------------------------ */

ld_relay_reason_t ld_relay_check_message(const uint8_t *data, size_t len, size_t max_size,
                                         bool js_rules, ld_waku_message_t *out) {
  if (max_size == 0)
    max_size = LD_WAKU_DEFAULT_MAX_MSG_SIZE;
  if (len > max_size)
    return LD_RELAY_TOO_LARGE;
  int rc = ld_waku_message_decode(data, len, max_size, LD_WAKU_DECODE_REQUIRE_FIELDS, out);
  if (rc != 0)
    return rc == LD_ERR_TOO_LARGE ? LD_RELAY_TOO_LARGE : LD_RELAY_UNDECODABLE;
  ld_relay_reason_t reason = LD_RELAY_OK;
  if (js_rules && out->content_topic_len == 0)
    reason = LD_RELAY_EMPTY_CONTENT_TOPIC;
  else if (js_rules && out->payload_len == 0)
    reason = LD_RELAY_EMPTY_PAYLOAD;
  if (reason != LD_RELAY_OK)
    ld_waku_message_clear(out);
  return reason;
}

/* ---- protected shards ----------------------------------------------------------------------- */

static int parse_shard(const char *text, size_t len, uint16_t *shard) {
  if (len > 0 && text[0] == '/') {
    ld_relay_shard_t rs;
    int rc = ld_pubsub_topic_parse(text, len, &rs, NULL);
    if (rc == 0)
      *shard = rs.shard_id;
    return rc;
  }
  if (len == 0 || len > 5)
    return LD_ERR_OVERFLOW;
  uint32_t v = 0;
  for (size_t i = 0; i < len; i++) {
    if (text[i] < '0' || text[i] > '9')
      return LD_ERR_OVERFLOW;
    v = v * 10 + (uint32_t)(text[i] - '0');
  }
  if (v > UINT16_MAX)
    return LD_ERR_OVERFLOW;
  *shard = (uint16_t)v;
  return 0;
}

static int parse_pubkey(const char *hex, uint8_t out[LD_SECP256K1_PUBLIC_LEN]) {
  uint8_t raw[LD_SECP256K1_UNCOMPRESSED_LEN + 1]; /* room for a prefix before 64 raw bytes */
  size_t n = 0;
  int rc = ld_hex_decode(hex, strlen(hex), raw + 1, sizeof raw - 1, &n);
  if (rc == LD_ERR_LIMIT)
    return LD_ERR_BAD_KEY;
  if (rc != 0)
    return rc;
  if (n == 64) { /* uncompressed point without its prefix */
    raw[0] = 0x04;
    return ld_secp256k1_compress(raw, 65, out);
  }
  return ld_secp256k1_compress(raw + 1, n, out);
}

int ld_relay_protected_shard_parse(const char *text, ld_relay_protected_shard_t *out) {
  if (text == NULL || out == NULL)
    return LD_ERR_INVALID_ARG;
  const char *colon = strchr(text, ':');
  if (colon == NULL || strchr(colon + 1, ':') != NULL)
    return LD_ERR_INVALID_ARG;
  ld_relay_protected_shard_t ps;
  int rc = parse_pubkey(colon + 1, ps.pubkey);
  if (rc == 0)
    rc = parse_shard(text, (size_t)(colon - text), &ps.shard);
  if (rc == 0)
    *out = ps;
  return rc;
}

static int build_preimage(const char *pubsub_topic, const ld_waku_message_t *msg, ld_buf_t *b) {
  if (pubsub_topic == NULL || msg == NULL || (msg->payload == NULL && msg->payload_len > 0) ||
      (msg->content_topic == NULL && msg->content_topic_len > 0))
    return LD_ERR_INVALID_ARG;
  uint8_t tail[9];
  uint64_t ts = (uint64_t)msg->timestamp;
  for (int i = 0; i < 8; i++)
    tail[i] = (uint8_t)(ts >> (8 * i));
  tail[8] = msg->ephemeral ? 1 : 0;
  size_t topic_len = strlen(pubsub_topic);
  int rc = ld_buf_reserve(b, topic_len + msg->payload_len + msg->content_topic_len + sizeof tail);
  if (rc != 0)
    return rc;
  ld_buf_append(b, pubsub_topic, topic_len);
  ld_buf_append(b, msg->payload, msg->payload_len);
  ld_buf_append(b, msg->content_topic, msg->content_topic_len);
  ld_buf_append(b, tail, sizeof tail);
  return 0;
}

int ld_relay_signed_digest(const char *pubsub_topic, const ld_waku_message_t *msg,
                           uint8_t out[LD_SHA256_LEN]) {
  ld_buf_t b;
  ld_buf_init(&b);
  int rc = build_preimage(pubsub_topic, msg, &b);
  if (rc == 0)
    ld_sha256(b.data, b.len, out);
  ld_buf_clear(&b);
  return rc;
}

/* Reads one DER INTEGER into a 32-byte big-endian field. */
static int der_integer(const uint8_t *der, size_t len, size_t *pos, uint8_t out[32]) {
  if (*pos + 2 > len || der[*pos] != 0x02)
    return LD_ERR_CRYPTO;
  size_t n = der[*pos + 1];
  const uint8_t *p = der + *pos + 2;
  if (n == 0 || *pos + 2 + n > len)
    return LD_ERR_CRYPTO;
  *pos += 2 + n;
  while (n > 32 && *p == 0) {
    p++;
    n--;
  }
  if (n > 32)
    return LD_ERR_CRYPTO;
  memset(out, 0, 32);
  memcpy(out + 32 - n, p, n);
  return 0;
}

int ld_relay_sign(const uint8_t secret[LD_SECP256K1_SECRET_LEN], const char *pubsub_topic,
                  const ld_waku_message_t *msg, uint8_t sig[LD_RELAY_SIGNATURE_LEN]) {
  ld_buf_t b;
  ld_buf_init(&b);
  uint8_t der[LD_SECP256K1_DER_MAX];
  size_t der_len = 0;
  int rc = build_preimage(pubsub_topic, msg, &b);
  if (rc == 0)
    rc = ld_secp256k1_sign(secret, b.data, b.len, der, &der_len);
  ld_buf_clear(&b);
  if (rc != 0)
    return rc;
  size_t pos = 2; /* SEQUENCE header: the signature is shorter than 128 bytes */
  if (der_len < 2 || der[0] != 0x30)
    return LD_ERR_CRYPTO;
  rc = der_integer(der, der_len, &pos, sig);
  if (rc == 0)
    rc = der_integer(der, der_len, &pos, sig + 32);
  return rc;
}

/* Appends a 32-byte big-endian unsigned integer as a minimal DER INTEGER. */
static size_t put_der_integer(const uint8_t v[32], uint8_t *out) {
  size_t skip = 0;
  while (skip < 31 && v[skip] == 0)
    skip++;
  size_t n = 32 - skip;
  bool pad = (v[skip] & 0x80) != 0;
  out[0] = 0x02;
  out[1] = (uint8_t)(n + pad);
  out[2] = 0;
  memcpy(out + 2 + pad, v + skip, n);
  return 2 + pad + n;
}

static bool in_range(const uint8_t v[32], const uint8_t limit[32]) {
  return memcmp(v, limit, 32) <= 0;
}

static bool is_zero(const uint8_t v[32]) {
  for (int i = 0; i < 32; i++)
    if (v[i] != 0)
      return false;
  return true;
}

/* nim-secp256k1's SkSignature.fromRaw + verify: r, s in [1, n), s ≤ n/2 (libsecp256k1's verify
 * refuses high S). */
static bool compact_to_der(const uint8_t sig[64], uint8_t der[72], size_t *der_len) {
  const uint8_t *r = sig, *s = sig + 32;
  if (is_zero(r) || is_zero(s) || memcmp(r, g_order, 32) >= 0 || !in_range(s, g_half_order))
    return false;
  size_t n = 2;
  n += put_der_integer(r, der + n);
  n += put_der_integer(s, der + n);
  der[0] = 0x30;
  der[1] = (uint8_t)(n - 2);
  *der_len = n;
  return true;
}

static bool within_window(int64_t ts, int64_t now_ns) {
  uint64_t diff = now_ns >= ts ? (uint64_t)now_ns - (uint64_t)ts : (uint64_t)ts - (uint64_t)now_ns;
  return diff < (uint64_t)LD_RELAY_PROTECTED_WINDOW_NS;
}

ld_relay_reason_t ld_relay_verify_signed(const uint8_t pubkey[LD_SECP256K1_PUBLIC_LEN],
                                         const char *pubsub_topic, const ld_waku_message_t *msg,
                                         int64_t now_ns) {
  if (msg->timestamp == 0)
    return LD_RELAY_NO_TIMESTAMP;
  if (!within_window(msg->timestamp, now_ns))
    return LD_RELAY_OUT_OF_WINDOW;
  uint8_t der[72];
  size_t der_len;
  if (msg->meta_len != LD_RELAY_SIGNATURE_LEN || !compact_to_der(msg->meta, der, &der_len))
    return LD_RELAY_BAD_SIGNATURE;
  ld_buf_t b;
  ld_buf_init(&b);
  int rc = build_preimage(pubsub_topic, msg, &b);
  if (rc == 0)
    rc = ld_secp256k1_verify(pubkey, LD_SECP256K1_PUBLIC_LEN, b.data, b.len, der, der_len);
  ld_buf_clear(&b);
  return rc == 0 ? LD_RELAY_OK : LD_RELAY_BAD_SIGNATURE;
}

const ld_relay_protected_shard_t *ld_relay_protected_find(const ld_relay_protected_shard_t *list,
                                                          size_t n, uint16_t cluster_id,
                                                          const char *pubsub_topic) {
  ld_relay_shard_t rs;
  if (n == 0 || pubsub_topic == NULL ||
      ld_pubsub_topic_parse(pubsub_topic, strlen(pubsub_topic), &rs, NULL) != 0 ||
      rs.cluster_id != cluster_id)
    return NULL;
  for (size_t i = 0; i < n; i++)
    if (list[i].shard == rs.shard_id)
      return &list[i];
  return NULL;
}

/* ---- topic health --------------------------------------------------------------------------- */

ld_relay_health_t ld_relay_health_from_mesh(size_t mesh_size, uint32_t d_low) {
  if (mesh_size < 1)
    return LD_RELAY_UNHEALTHY;
  if (mesh_size < d_low)
    return LD_RELAY_MINIMALLY_HEALTHY;
  return LD_RELAY_SUFFICIENTLY_HEALTHY;
}

const char *ld_relay_health_name(ld_relay_health_t health) {
  switch (health) {
  case LD_RELAY_NOT_SUBSCRIBED:
    return "NotSubscribed";
  case LD_RELAY_UNHEALTHY:
    return "UnHealthy";
  case LD_RELAY_MINIMALLY_HEALTHY:
    return "MinimallyHealthy";
  case LD_RELAY_SUFFICIENTLY_HEALTHY:
    return "SufficientlyHealthy";
  }
  return "Unknown";
}
