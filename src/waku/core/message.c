#include "waku/core/message.h"

#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/error.h"
#include "base/hex.h"
#include "base/varint.h"
#include "crypto/crypto.h"
#include "waku_message.pb-c.h"

typedef Ld__Waku__WakuMessage pb_msg_t;

#define PB_WIRE_VARINT 0u
#define PB_WIRE_I64 1u
#define PB_WIRE_LEN 2u
#define PB_WIRE_I32 5u
#define PB_MAX_FIELD_NUMBER ((1u << 29) - 1)

/* Field indices; bit i of a presence mask is LD_WAKU_FIELD_* of field i. */
enum { F_PAYLOAD, F_TOPIC, F_VERSION, F_TIMESTAMP, F_META, F_PROOF, F_EPHEMERAL, F_COUNT };

static const struct {
  uint32_t number;
  unsigned wire;
} k_fields[F_COUNT] = {
    {1, PB_WIRE_LEN},  {2, PB_WIRE_LEN},  {3, PB_WIRE_VARINT},  {10, PB_WIRE_VARINT},
    {11, PB_WIRE_LEN}, {21, PB_WIRE_LEN}, {31, PB_WIRE_VARINT},
};

static const char k_empty[1] = "";
#define EMPTY_BYTES ((const uint8_t *)k_empty)

static size_t effective_cap(size_t max_size) {
  return max_size == 0 ? LD_WAKU_DEFAULT_MAX_MSG_SIZE : max_size;
}

static bool view_ok(const void *p, size_t n) {
  return p != NULL || n == 0;
}

static bool views_ok(const ld_waku_message_t *m) {
  return view_ok(m->payload, m->payload_len) && view_ok(m->content_topic, m->content_topic_len) &&
         view_ok(m->meta, m->meta_len) && view_ok(m->proof, m->proof_len);
}

/* ---- value ---------------------------------------------------------------------------------- */

void ld_waku_message_init(ld_waku_message_t *msg) {
  memset(msg, 0, sizeof *msg);
  msg->payload = EMPTY_BYTES;
  msg->content_topic = k_empty;
  msg->meta = EMPTY_BYTES;
  msg->proof = EMPTY_BYTES;
}

void ld_waku_message_clear(ld_waku_message_t *msg) {
  if (msg->storage != NULL)
    ld__waku__waku_message__free_unpacked(msg->storage, NULL);
  ld_waku_message_init(msg);
}

static const uint8_t *pb_bytes(const ProtobufCBinaryData *b) {
  return b->data != NULL ? b->data : EMPTY_BYTES;
}

/* Points `out` at the values held by `pb`, which it takes over. */
static void take_pb(pb_msg_t *pb, unsigned present, ld_waku_message_t *out) {
  out->payload = pb_bytes(&pb->payload);
  out->payload_len = pb->payload.len;
  out->content_topic = (const char *)pb_bytes(&pb->content_topic);
  out->content_topic_len = pb->content_topic.len;
  out->version = pb->version;
  out->timestamp = pb->timestamp;
  out->meta = pb_bytes(&pb->meta);
  out->meta_len = pb->meta.len;
  out->proof = pb_bytes(&pb->rate_limit_proof);
  out->proof_len = pb->rate_limit_proof.len;
  out->ephemeral = pb->ephemeral != 0;
  out->fields = present;
  out->storage = pb;
}

/* Heap copy of n bytes into *dst (NULL data for n == 0), as protobuf-c's free expects. */
static int dup_bytes(ProtobufCBinaryData *dst, const void *src, size_t n) {
  dst->len = n;
  dst->data = NULL;
  if (n == 0)
    return 0;
  if ((dst->data = malloc(n)) == NULL)
    return LD_ERR_NOMEM;
  memcpy(dst->data, src, n);
  return 0;
}

/* A protobuf-c message holding heap copies of the values of `src`. */
static int copy_to_pb(const ld_waku_message_t *src, pb_msg_t **out) {
  pb_msg_t *pb = malloc(sizeof *pb);
  if (pb == NULL)
    return LD_ERR_NOMEM;
  ld__waku__waku_message__init(pb);
  pb->has_payload = pb->has_content_topic = pb->has_meta = pb->has_rate_limit_proof = 1;
  int rc = dup_bytes(&pb->payload, src->payload, src->payload_len);
  if (rc == 0)
    rc = dup_bytes(&pb->content_topic, src->content_topic, src->content_topic_len);
  if (rc == 0)
    rc = dup_bytes(&pb->meta, src->meta, src->meta_len);
  if (rc == 0)
    rc = dup_bytes(&pb->rate_limit_proof, src->proof, src->proof_len);
  if (rc != 0) {
    ld__waku__waku_message__free_unpacked(pb, NULL);
    return rc;
  }
  pb->version = src->version;
  pb->timestamp = src->timestamp;
  pb->ephemeral = src->ephemeral;
  *out = pb;
  return 0;
}

int ld_waku_message_copy(ld_waku_message_t *dst, const ld_waku_message_t *src) {
  if (dst == NULL || src == NULL || !views_ok(src))
    return LD_ERR_INVALID_ARG;
  pb_msg_t *pb = NULL;
  int rc = copy_to_pb(src, &pb);
  unsigned fields = src->fields;
  ld_waku_message_clear(dst); /* after the copy: `src` may be `dst` */
  if (rc == 0)
    take_pb(pb, fields, dst);
  return rc;
}

static bool same_bytes(const void *a, size_t alen, const void *b, size_t blen) {
  return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

bool ld_waku_message_equal(const ld_waku_message_t *a, const ld_waku_message_t *b) {
  return same_bytes(a->payload, a->payload_len, b->payload, b->payload_len) &&
         same_bytes(a->content_topic, a->content_topic_len, b->content_topic,
                    b->content_topic_len) &&
         same_bytes(a->meta, a->meta_len, b->meta, b->meta_len) &&
         same_bytes(a->proof, a->proof_len, b->proof, b->proof_len) && a->version == b->version &&
         a->timestamp == b->timestamp && a->ephemeral == b->ephemeral;
}

/* ---- encoding ------------------------------------------------------------------------------- */

static ProtobufCBinaryData pb_view(const void *data, size_t len) {
  ProtobufCBinaryData b = {len, (uint8_t *)(data != NULL ? data : k_empty)};
  return b;
}

/* A protobuf-c message borrowing the views of `m`, every field marked present. */
static void to_pb(const ld_waku_message_t *m, pb_msg_t *pb) {
  ld__waku__waku_message__init(pb);
  pb->has_payload = pb->has_content_topic = pb->has_version = pb->has_timestamp = 1;
  pb->has_meta = pb->has_rate_limit_proof = pb->has_ephemeral = 1;
  pb->payload = pb_view(m->payload, m->payload_len);
  pb->content_topic = pb_view(m->content_topic, m->content_topic_len);
  pb->version = m->version;
  pb->timestamp = m->timestamp;
  pb->meta = pb_view(m->meta, m->meta_len);
  pb->rate_limit_proof = pb_view(m->proof, m->proof_len);
  pb->ephemeral = m->ephemeral;
}

size_t ld_waku_message_encoded_len(const ld_waku_message_t *msg) {
  pb_msg_t pb;
  to_pb(msg, &pb);
  return ld__waku__waku_message__get_packed_size(&pb);
}

int ld_waku_message_encode(const ld_waku_message_t *msg, size_t max_size, ld_buf_t *out) {
  if (msg == NULL || out == NULL || !views_ok(msg))
    return LD_ERR_INVALID_ARG;
  if (msg->meta_len > LD_WAKU_MAX_META_LEN)
    return LD_ERR_FIELD_TOO_LONG;
  pb_msg_t pb;
  to_pb(msg, &pb);
  size_t n = ld__waku__waku_message__get_packed_size(&pb);
  if (n > effective_cap(max_size))
    return LD_ERR_TOO_LARGE;
  int rc = ld_buf_reserve(out, n);
  if (rc != 0)
    return rc;
  out->len += ld__waku__waku_message__pack(&pb, out->data + out->len);
  return 0;
}

/* ---- decoding ------------------------------------------------------------------------------- */

/* One field's value: the bytes of a LEN field, the number of a VARINT field. */
typedef struct field_val {
  const uint8_t *data;
  size_t len;
  uint64_t value;
} field_val_t;

/* What the cursor walk found: the last occurrence of every known field. `clean` says protobuf-c
 * reads the input exactly as the nwaku dialect does (known fields only, each once, with the
 * declared wire type, minimal varints); otherwise the winning fields are re-encoded first. */
typedef struct scan {
  field_val_t val[F_COUNT];
  unsigned present;
  bool clean;
} scan_t;

static int read_varint(ld_cursor_t *c, uint64_t *v, bool *minimal) {
  size_t start = c->pos;
  if (ld_cursor_pbvarint(c, v) != 0)
    return LD_ERR_BAD_PROTOBUF;
  if (c->pos - start != ld_varint_len(*v))
    *minimal = false;
  return 0;
}

static int read_value(ld_cursor_t *c, unsigned wire, field_val_t *v, bool *minimal) {
  uint64_t n;
  switch (wire) {
  case PB_WIRE_VARINT:
    return read_varint(c, &v->value, minimal);
  case PB_WIRE_I64:
    return ld_cursor_skip(c, 8) == 0 ? 0 : LD_ERR_BAD_PROTOBUF;
  case PB_WIRE_I32:
    return ld_cursor_skip(c, 4) == 0 ? 0 : LD_ERR_BAD_PROTOBUF;
  case PB_WIRE_LEN:
    if (read_varint(c, &n, minimal) != 0 || n > ld_cursor_remaining(c))
      return LD_ERR_BAD_PROTOBUF;
    v->len = (size_t)n;
    return ld_cursor_bytes(c, v->len, &v->data) == 0 ? 0 : LD_ERR_BAD_PROTOBUF;
  default: /* groups (3, 4) and the reserved wire types */
    return LD_ERR_BAD_PROTOBUF;
  }
}

/* Index of the known field `number` sent with its declared wire type, else -1 (skipped). */
static int known_field(uint64_t number, unsigned wire) {
  for (int k = 0; k < F_COUNT; k++)
    if (k_fields[k].number == number)
      return k_fields[k].wire == wire ? k : -1;
  return -1;
}

static int scan_field(ld_cursor_t *c, scan_t *s) {
  uint64_t tag;
  bool minimal = true;
  if (read_varint(c, &tag, &minimal) != 0)
    return LD_ERR_BAD_PROTOBUF;
  uint64_t number = tag >> 3;
  unsigned wire = (unsigned)(tag & 7);
  if (number == 0 || number > PB_MAX_FIELD_NUMBER)
    return LD_ERR_BAD_PROTOBUF;
  field_val_t v = {NULL, 0, 0};
  int rc = read_value(c, wire, &v, &minimal);
  if (rc != 0)
    return rc;
  int k = known_field(number, wire);
  if (k < 0 || !minimal || (s->present & (1u << k)) != 0)
    s->clean = false;
  if (k >= 0) {
    s->val[k] = v;
    s->present |= 1u << k;
  }
  return 0;
}

static int scan_message(const uint8_t *data, size_t len, unsigned flags, scan_t *s) {
  memset(s, 0, sizeof *s);
  s->clean = true;
  ld_cursor_t c;
  ld_cursor_init(&c, data, len);
  while (!ld_cursor_empty(&c)) {
    int rc = scan_field(&c, s);
    if (rc != 0)
      return rc;
  }
  const unsigned required = (1u << F_PAYLOAD) | (1u << F_TOPIC);
  if ((flags & LD_WAKU_DECODE_REQUIRE_FIELDS) && (s->present & required) != required)
    return LD_ERR_MISSING_FIELD;
  if ((s->present & (1u << F_META)) && s->val[F_META].len > LD_WAKU_MAX_META_LEN)
    return LD_ERR_FIELD_TOO_LONG;
  return 0;
}

/* Canonical encoding of the winning fields (never longer than the scanned input). */
static int compact(const scan_t *s, size_t len, ld_buf_t *out) {
  int rc = ld_buf_reserve(out, len);
  for (int k = 0; k < F_COUNT && rc == 0; k++) {
    if ((s->present & (1u << k)) == 0)
      continue;
    rc = ld_buf_varint(out, ((uint64_t)k_fields[k].number << 3) | k_fields[k].wire);
    if (rc == 0 && k_fields[k].wire == PB_WIRE_LEN)
      rc = ld_buf_lp(out, s->val[k].data, s->val[k].len);
    else if (rc == 0)
      rc = ld_buf_varint(out, s->val[k].value);
  }
  return rc;
}

static int unpack(const uint8_t *data, size_t len, const scan_t *s, ld_waku_message_t *out) {
  ld_buf_t tmp;
  ld_buf_init(&tmp);
  if (!s->clean) {
    int rc = compact(s, len, &tmp);
    if (rc != 0) {
      ld_buf_clear(&tmp);
      return rc;
    }
    data = tmp.data;
    len = tmp.len;
  }
  pb_msg_t *pb = ld__waku__waku_message__unpack(NULL, len, data != NULL ? data : EMPTY_BYTES);
  ld_buf_clear(&tmp);
  /* The walk accepted exactly what protobuf-c reads, so only allocation can fail here. */
  if (pb == NULL)
    return LD_ERR_NOMEM;
  take_pb(pb, s->present, out);
  return 0;
}

int ld_waku_message_decode(const uint8_t *data, size_t len, size_t max_size, unsigned flags,
                           ld_waku_message_t *out) {
  if (out == NULL || (data == NULL && len > 0))
    return LD_ERR_INVALID_ARG;
  ld_waku_message_clear(out);
  if (len > effective_cap(max_size))
    return LD_ERR_TOO_LARGE;
  scan_t s;
  int rc = scan_message(data, len, flags, &s);
  if (rc == 0)
    rc = unpack(data, len, &s, out);
  return rc;
}

/* ---- hashes --------------------------------------------------------------------------------- */

int ld_waku_message_hash_ex(const char *pubsub_topic, size_t pubsub_topic_len,
                            const ld_waku_message_t *msg, unsigned flags,
                            uint8_t out[LD_WAKU_HASH_LEN]) {
  if (msg == NULL || out == NULL || !view_ok(pubsub_topic, pubsub_topic_len) || !views_ok(msg))
    return LD_ERR_INVALID_ARG;
  uint8_t ts[8];
  uint64_t t = (uint64_t)msg->timestamp;
  for (int i = 7; i >= 0; i--, t >>= 8)
    ts[i] = (uint8_t)t;
  bool omit_ts = (flags & LD_WAKU_HASH_JS_OMIT_ZERO_TIMESTAMP) && msg->timestamp == 0;
  const struct {
    const void *data;
    size_t len;
  } parts[] = {
      {pubsub_topic, pubsub_topic_len},
      {msg->payload, msg->payload_len},
      {msg->content_topic, msg->content_topic_len},
      {msg->meta, msg->meta_len},
      {ts, omit_ts ? 0 : sizeof ts},
  };
  ld_sha256_ctx_t ctx = {NULL};
  int rc = ld_sha256_begin(&ctx);
  for (size_t i = 0; i < sizeof parts / sizeof parts[0] && rc == 0; i++)
    if (parts[i].len > 0)
      rc = ld_sha256_update(&ctx, parts[i].data, parts[i].len);
  if (rc == 0)
    rc = ld_sha256_final(&ctx, out);
  ld_sha256_clear(&ctx);
  return rc;
}

int ld_waku_message_hash(const char *pubsub_topic, const ld_waku_message_t *msg,
                         uint8_t out[LD_WAKU_HASH_LEN]) {
  if (pubsub_topic == NULL)
    return LD_ERR_INVALID_ARG;
  return ld_waku_message_hash_ex(pubsub_topic, strlen(pubsub_topic), msg, 0, out);
}

void ld_waku_relay_message_id(const uint8_t *data, size_t len, uint8_t out[LD_WAKU_HASH_LEN]) {
  ld_sha256(data != NULL ? (const void *)data : k_empty, data != NULL ? len : 0, out);
}

size_t ld_waku_hash_to_hex(const uint8_t hash[LD_WAKU_HASH_LEN],
                           char out[LD_WAKU_HASH_HEX_LEN + 1]) {
  out[0] = '0';
  out[1] = 'x';
  return 2 + ld_hex_encode(hash, LD_WAKU_HASH_LEN, out + 2);
}

int ld_waku_hash_from_hex(const char *text, size_t len, uint8_t out[LD_WAKU_HASH_LEN]) {
  uint8_t tmp[LD_WAKU_HASH_LEN];
  size_t n = 0;
  if (text == NULL || ld_hex_decode(text, len, tmp, sizeof tmp, &n) != 0 || n != sizeof tmp)
    return LD_ERR_BAD_ENCODING;
  memcpy(out, tmp, sizeof tmp);
  return 0;
}
