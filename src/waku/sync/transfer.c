/* The store-sync transfer message (see transfer.h). */
#include "waku/sync/transfer.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/error.h"
#include "base/varint.h"

#define TAG_TOPIC 0x0a   /* field 1, length-delimited */
#define TAG_MESSAGE 0x12 /* field 2, length-delimited */

void ld_sync_transfer_init(ld_sync_transfer_t *t) {
  t->pubsub_topic = NULL;
  t->pubsub_topic_len = 0;
  ld_waku_message_init(&t->message);
}

void ld_sync_transfer_clear(ld_sync_transfer_t *t) {
  free(t->pubsub_topic);
  ld_waku_message_clear(&t->message);
  ld_sync_transfer_init(t);
}

int ld_sync_transfer_encode(const char *topic, size_t len, const ld_waku_message_t *msg,
                            size_t max_frame, ld_buf_t *out) {
  if (topic == NULL || len == 0 || msg == NULL || out == NULL)
    return LD_ERR_INVALID_ARG;
  if (max_frame == 0)
    max_frame = LD_SYNC_TRANSFER_MAX_FRAME;
  size_t msg_len = ld_waku_message_encoded_len(msg);
  size_t body = 1 + ld_varint_len(len) + len + 1 + ld_varint_len(msg_len) + msg_len;
  if (body > max_frame)
    return LD_ERR_TOO_LARGE;
  size_t mark = out->len;
  int rc = ld_buf_reserve(out, body);
  if (rc == 0)
    rc = ld_buf_u8(out, TAG_TOPIC);
  if (rc == 0)
    rc = ld_buf_lp(out, topic, len);
  if (rc == 0)
    rc = ld_buf_u8(out, TAG_MESSAGE);
  if (rc == 0)
    rc = ld_buf_varint(out, msg_len);
  if (rc == 0)
    rc = ld_waku_message_encode(msg, SIZE_MAX, out);
  if (rc != 0)
    out->len = mark;
  return rc;
}

/* The last occurrence of each of the two fields (nwaku's minprotobuf reading). */
typedef struct fields {
  const uint8_t *topic, *message;
  size_t topic_len, message_len;
  bool has_topic, has_message;
} fields_t;

static int skip_value(ld_cursor_t *c, unsigned wire) {
  uint64_t v;
  switch (wire) {
  case 0:
    return ld_cursor_pbvarint(c, &v);
  case 1:
    return ld_cursor_skip(c, 8);
  case 5:
    return ld_cursor_skip(c, 4);
  default:
    return LD_ERR_BAD_PROTOBUF;
  }
}

static int scan(const uint8_t *data, size_t len, fields_t *f) {
  ld_cursor_t c;
  ld_cursor_init(&c, data, len);
  while (!ld_cursor_empty(&c)) {
    uint64_t tag, n;
    const uint8_t *v;
    if (ld_cursor_pbvarint(&c, &tag) != 0 || (tag >> 3) == 0)
      return LD_ERR_BAD_PROTOBUF;
    if ((tag & 7) != 2) {
      if (skip_value(&c, (unsigned)(tag & 7)) != 0)
        return LD_ERR_BAD_PROTOBUF;
      continue;
    }
    if (ld_cursor_pbvarint(&c, &n) != 0 || n > ld_cursor_remaining(&c))
      return LD_ERR_BAD_PROTOBUF;
    ld_cursor_bytes(&c, (size_t)n, &v);
    if (tag == TAG_TOPIC) {
      f->topic = v;
      f->topic_len = (size_t)n;
      f->has_topic = true;
    } else if (tag == TAG_MESSAGE) {
      f->message = v;
      f->message_len = (size_t)n;
      f->has_message = true;
    }
  }
  return 0;
}

static int check_topic(const fields_t *f, char *why, size_t cap) {
  if (!f->has_topic)
    return ld_error_fmt(why, cap, LD_ERR_MISSING_FIELD, "missing pubsub topic");
  if (!f->has_message)
    return ld_error_fmt(why, cap, LD_ERR_MISSING_FIELD, "missing message");
  if (f->topic_len > LD_SYNC_TRANSFER_MAX_TOPIC_LEN)
    return ld_error_fmt(why, cap, LD_ERR_FIELD_TOO_LONG, "pubsub topic of %zu bytes", f->topic_len);
  if (f->topic_len == 0 || memchr(f->topic, 0, f->topic_len) != NULL)
    return ld_error_fmt(why, cap, LD_ERR_BAD_ENCODING, "empty pubsub topic or NUL byte in it");
  return 0;
}

int ld_sync_transfer_decode(const uint8_t *data, size_t len, size_t max_msg_size,
                            ld_sync_transfer_t *out, char *why, size_t cap) {
  ld_sync_transfer_clear(out);
  fields_t f = {0};
  if (scan(data, len, &f) != 0)
    return ld_error_fmt(why, cap, LD_ERR_BAD_PROTOBUF, "malformed protobuf");
  int rc = check_topic(&f, why, cap);
  if (rc != 0)
    return rc;
  rc = ld_waku_message_decode(f.message, f.message_len, max_msg_size, LD_WAKU_DECODE_REQUIRE_FIELDS,
                              &out->message);
  if (rc != 0)
    return ld_error_fmt(why, cap, rc, "message: %s", ld_strerror(rc));
  out->pubsub_topic = malloc(f.topic_len + 1);
  if (out->pubsub_topic == NULL) {
    ld_sync_transfer_clear(out);
    return ld_error_fmt(why, cap, LD_ERR_NOMEM, "out of memory");
  }
  memcpy(out->pubsub_topic, f.topic, f.topic_len);
  out->pubsub_topic[f.topic_len] = '\0';
  out->pubsub_topic_len = f.topic_len;
  return 0;
}

int ld_sync_transfer_id(const ld_sync_transfer_t *t, ld_sync_id_t *out) {
  out->time = t->message.timestamp;
  return ld_waku_message_hash_ex(t->pubsub_topic, t->pubsub_topic_len, &t->message, 0, out->hash);
}
