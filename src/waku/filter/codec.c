#include "waku/filter/codec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/error.h"
#include "filter.pb-c.h"
#include "p2p/reqresp.h"

typedef Ld__Waku__Filter__FilterSubscribeRequest pb_request_t;
typedef Ld__Waku__Filter__FilterSubscribeResponse pb_response_t;
typedef Ld__Waku__Filter__MessagePush pb_push_t;

#define PB_WIRE_VARINT 0u
#define PB_WIRE_I64 1u
#define PB_WIRE_LEN 2u
#define PB_WIRE_I32 5u
#define PB_MAX_FIELD_NUMBER ((1u << 29) - 1)

static const char k_empty[1] = "";

/* ---- names and statuses --------------------------------------------------------------------- */

const char *ld_filter_request_type_name(uint32_t type) {
  static const char *const names[LD_FILTER_REQUEST_TYPES] = {"SUBSCRIBER_PING", "SUBSCRIBE",
                                                             "UNSUBSCRIBE", "UNSUBSCRIBE_ALL"};
  return type < LD_FILTER_REQUEST_TYPES ? names[type] : "UNKNOWN";
}

const char *ld_filter_status_kind(uint32_t code) {
  switch (code) {
  case LD_FILTER_STATUS_OK:
    return "OK";
  case LD_FILTER_STATUS_BAD_RESPONSE:
    return "BAD_RESPONSE";
  case LD_FILTER_STATUS_BAD_REQUEST:
    return "BAD_REQUEST";
  case LD_FILTER_STATUS_NOT_FOUND:
    return "NOT_FOUND";
  case LD_FILTER_STATUS_TOO_MANY_REQUESTS:
    return "TOO_MANY_REQUESTS";
  case LD_FILTER_STATUS_SERVICE_UNAVAILABLE:
    return "SERVICE_UNAVAILABLE";
  case LD_FILTER_STATUS_PEER_DIAL_FAILURE:
    return "PEER_DIAL_FAILURE";
  default:
    return "UNKNOWN";
  }
}

void ld_filter_status_set(ld_filter_status_t *st, uint32_t code, const char *cause_fmt, ...) {
  st->code = code;
  const char *kind = ld_filter_status_kind(code);
  if (code == LD_FILTER_STATUS_OK || strcmp(kind, "UNKNOWN") == 0 || cause_fmt == NULL) {
    snprintf(st->desc, sizeof st->desc, "%s", kind);
    return;
  }
  int n = snprintf(st->desc, sizeof st->desc, "%s: ", kind);
  va_list ap;
  va_start(ap, cause_fmt);
  vsnprintf(st->desc + n, sizeof st->desc - (size_t)n, cause_fmt, ap);
  va_end(ap);
}

/* ---- encoding ------------------------------------------------------------------------------- */

static bool view_ok(const ld_filter_str_t *s) {
  return s == NULL || s->data != NULL || s->len == 0;
}

static ProtobufCBinaryData bin(const void *data, size_t len) {
  ProtobufCBinaryData b = {len, (uint8_t *)(data != NULL ? data : k_empty)};
  return b;
}

/* Packs a protobuf-c message of `body` bytes as one frame appended to `out`. */
static int append_framed(const ProtobufCMessage *msg, ld_buf_t *out) {
  size_t body = protobuf_c_message_get_packed_size(msg);
  uint8_t *p;
  int rc = ld_reqresp_append_frame(out, body, &p);
  if (rc == 0)
    protobuf_c_message_pack(msg, p);
  return rc;
}

int ld_filter_request_encode_topics(const ld_filter_str_t *request_id, uint32_t type,
                                    const ld_filter_str_t *pubsub_topic,
                                    const ld_filter_str_t *topics, size_t n, ld_buf_t *out) {
  if (request_id == NULL || out == NULL || (topics == NULL && n > 0) || !view_ok(request_id) ||
      !view_ok(pubsub_topic))
    return LD_ERR_INVALID_ARG;
  for (size_t i = 0; i < n; i++)
    if (!view_ok(&topics[i]))
      return LD_ERR_INVALID_ARG;
  ProtobufCBinaryData *bins = n > 0 ? malloc(n * sizeof *bins) : NULL;
  if (n > 0 && bins == NULL)
    return LD_ERR_NOMEM;
  for (size_t i = 0; i < n; i++)
    bins[i] = bin(topics[i].data, topics[i].len);
  pb_request_t pb = LD__WAKU__FILTER__FILTER_SUBSCRIBE_REQUEST__INIT;
  pb.has_request_id = pb.has_filter_subscribe_type = 1;
  pb.request_id = bin(request_id->data, request_id->len);
  pb.filter_subscribe_type = type;
  pb.has_pubsub_topic = pubsub_topic != NULL;
  if (pubsub_topic != NULL)
    pb.pubsub_topic = bin(pubsub_topic->data, pubsub_topic->len);
  pb.n_content_topics = n;
  pb.content_topics = bins;
  int rc = append_framed(&pb.base, out);
  free(bins);
  return rc;
}

int ld_filter_request_encode(const ld_filter_request_t *req, ld_buf_t *out) {
  if (req == NULL)
    return LD_ERR_INVALID_ARG;
  size_t n = req->n_content_topics < LD_FILTER_MAX_CONTENT_TOPICS ? req->n_content_topics
                                                                  : LD_FILTER_MAX_CONTENT_TOPICS;
  return ld_filter_request_encode_topics(&req->request_id, req->type,
                                         req->has_pubsub_topic ? &req->pubsub_topic : NULL,
                                         req->content_topics, n, out);
}

int ld_filter_response_encode(const ld_filter_str_t *request_id, uint32_t status_code,
                              const char *status_desc, ld_buf_t *out) {
  if (request_id == NULL || out == NULL || !view_ok(request_id))
    return LD_ERR_INVALID_ARG;
  pb_response_t pb = LD__WAKU__FILTER__FILTER_SUBSCRIBE_RESPONSE__INIT;
  pb.has_request_id = pb.has_status_code = 1;
  pb.request_id = bin(request_id->data, request_id->len);
  pb.status_code = status_code;
  pb.has_status_desc = status_desc != NULL;
  if (status_desc != NULL)
    pb.status_desc = bin(status_desc, strlen(status_desc));
  return append_framed(&pb.base, out);
}

int ld_filter_push_encode(const char *pubsub_topic, size_t topic_len, const ld_waku_message_t *msg,
                          ld_buf_t *out) {
  if ((pubsub_topic == NULL && topic_len > 0) || msg == NULL || out == NULL)
    return LD_ERR_INVALID_ARG;
  ld_buf_t inner;
  ld_buf_init(&inner);
  int rc = ld_waku_message_encode(msg, SIZE_MAX, &inner);
  if (rc == 0) {
    pb_push_t pb = LD__WAKU__FILTER__MESSAGE_PUSH__INIT;
    pb.has_waku_message = pb.has_pubsub_topic = 1;
    pb.waku_message = bin(inner.data, inner.len);
    pb.pubsub_topic = bin(pubsub_topic, topic_len);
    rc = append_framed(&pb.base, out);
  }
  ld_buf_clear(&inner);
  return rc;
}

/* ---- decoding ------------------------------------------------------------------------------- */

/* One protobuf field as the cursor walk sees it. */
typedef struct pb_field {
  uint64_t number;
  unsigned wire;
  uint64_t value;      /* VARINT */
  const uint8_t *data; /* LEN */
  size_t len;
} pb_field_t;

static int read_value(ld_cursor_t *c, pb_field_t *f) {
  uint64_t n;
  switch (f->wire) {
  case PB_WIRE_VARINT:
    return ld_cursor_pbvarint(c, &f->value);
  case PB_WIRE_I64:
    return ld_cursor_skip(c, 8);
  case PB_WIRE_I32:
    return ld_cursor_skip(c, 4);
  case PB_WIRE_LEN:
    if (ld_cursor_pbvarint(c, &n) != 0 || n > ld_cursor_remaining(c))
      return LD_ERR_BAD_PROTOBUF;
    f->len = (size_t)n;
    return ld_cursor_bytes(c, f->len, &f->data);
  default: /* groups and reserved wire types */
    return LD_ERR_BAD_PROTOBUF;
  }
}

/* Reads the next field; LD_ERR_BAD_PROTOBUF for anything malformed. */
static int next_field(ld_cursor_t *c, pb_field_t *f) {
  uint64_t tag;
  memset(f, 0, sizeof *f);
  if (ld_cursor_pbvarint(c, &tag) != 0)
    return LD_ERR_BAD_PROTOBUF;
  f->number = tag >> 3;
  f->wire = (unsigned)(tag & 7);
  if (f->number == 0 || f->number > PB_MAX_FIELD_NUMBER)
    return LD_ERR_BAD_PROTOBUF;
  return read_value(c, f) == 0 ? 0 : LD_ERR_BAD_PROTOBUF;
}

static ld_filter_str_t str_of(const pb_field_t *f) {
  ld_filter_str_t s = {f->len > 0 ? (const char *)f->data : k_empty, f->len};
  return s;
}

static bool is(const pb_field_t *f, uint64_t number, unsigned wire) {
  return f->number == number && f->wire == wire;
}

static void request_field(const pb_field_t *f, ld_filter_request_t *out, bool *has_id,
                          uint64_t *type) {
  if (is(f, 1, PB_WIRE_LEN)) {
    out->request_id = str_of(f);
    *has_id = true;
  } else if (is(f, 2, PB_WIRE_VARINT)) {
    *type = f->value;
  } else if (is(f, 10, PB_WIRE_LEN)) {
    out->pubsub_topic = str_of(f);
    out->has_pubsub_topic = true;
  } else if (is(f, 11, PB_WIRE_LEN)) {
    if (out->n_content_topics < LD_FILTER_MAX_CONTENT_TOPICS)
      out->content_topics[out->n_content_topics] = str_of(f);
    out->n_content_topics++;
  }
}

int ld_filter_request_decode(const uint8_t *body, size_t len, ld_filter_request_t *out) {
  memset(out, 0, sizeof *out);
  out->request_id.data = out->pubsub_topic.data = k_empty;
  ld_cursor_t c;
  ld_cursor_init(&c, body, len);
  bool has_id = false;
  uint64_t type = LD_FILTER_SUBSCRIBER_PING;
  pb_field_t f;
  while (!ld_cursor_empty(&c)) {
    if (next_field(&c, &f) != 0)
      return LD_ERR_BAD_PROTOBUF;
    request_field(&f, out, &has_id, &type);
  }
  if (!has_id)
    return LD_ERR_MISSING_FIELD;
  if (type >= LD_FILTER_REQUEST_TYPES)
    return LD_ERR_MALFORMED;
  out->type = (uint32_t)type;
  return 0;
}

int ld_filter_response_decode(const uint8_t *body, size_t len, ld_filter_response_t *out) {
  memset(out, 0, sizeof *out);
  out->request_id.data = out->status_desc.data = k_empty;
  ld_cursor_t c;
  ld_cursor_init(&c, body, len);
  bool has_code = false;
  pb_field_t f;
  while (!ld_cursor_empty(&c)) {
    if (next_field(&c, &f) != 0)
      return LD_ERR_BAD_PROTOBUF;
    if (is(&f, 1, PB_WIRE_LEN)) {
      out->request_id = str_of(&f);
    } else if (is(&f, 10, PB_WIRE_VARINT)) {
      if (f.value > UINT32_MAX)
        return LD_ERR_BAD_PROTOBUF;
      out->status_code = (uint32_t)f.value;
      has_code = true;
    } else if (is(&f, 11, PB_WIRE_LEN)) {
      out->status_desc = str_of(&f);
      out->has_status_desc = true;
    }
  }
  return has_code ? 0 : LD_ERR_MISSING_FIELD;
}

int ld_filter_push_decode(const uint8_t *body, size_t len, ld_filter_push_frame_t *out) {
  memset(out, 0, sizeof *out);
  out->pubsub_topic.data = k_empty;
  out->message = (const uint8_t *)k_empty;
  ld_cursor_t c;
  ld_cursor_init(&c, body, len);
  bool has_msg = false, has_topic = false;
  pb_field_t f;
  while (!ld_cursor_empty(&c)) {
    if (next_field(&c, &f) != 0)
      return LD_ERR_BAD_PROTOBUF;
    if (is(&f, 1, PB_WIRE_LEN)) {
      out->message = f.len > 0 ? f.data : (const uint8_t *)k_empty;
      out->message_len = f.len;
      has_msg = true;
    } else if (is(&f, 2, PB_WIRE_LEN)) {
      out->pubsub_topic = str_of(&f);
      has_topic = true;
    }
  }
  return has_msg && has_topic ? 0 : LD_ERR_MISSING_FIELD;
}
