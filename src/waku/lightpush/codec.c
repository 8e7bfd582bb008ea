#include "waku/lightpush/codec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/error.h"
#include "lightpush.pb-c.h"
#include "p2p/reqresp.h"

typedef Ld__Waku__Lightpush__LightPushRequest pb_request_t;
typedef Ld__Waku__Lightpush__LightPushResponse pb_response_t;
typedef Ld__Waku__Lightpush__PushRPC pb_rpc_t;
typedef Ld__Waku__Lightpush__PushRequest pb_push_request_t;
typedef Ld__Waku__Lightpush__PushResponse pb_push_response_t;

#define WIRE_VARINT 0u
#define WIRE_I64 1u
#define WIRE_LEN 2u
#define WIRE_I32 5u

/* ---- status codes --------------------------------------------------------------------------- */

const uint32_t ld_lightpush_codes[LD_LIGHTPUSH_N_CODES] = {
    LD_LIGHTPUSH_SUCCESS,
    LD_LIGHTPUSH_BAD_REQUEST,
    LD_LIGHTPUSH_PAYLOAD_TOO_LARGE,
    LD_LIGHTPUSH_INVALID_MESSAGE,
    LD_LIGHTPUSH_UNSUPPORTED_PUBSUB_TOPIC,
    LD_LIGHTPUSH_TOO_MANY_REQUESTS,
    LD_LIGHTPUSH_INTERNAL_SERVER_ERROR,
    LD_LIGHTPUSH_SERVICE_NOT_AVAILABLE,
    LD_LIGHTPUSH_OUT_OF_RLN_PROOF,
    LD_LIGHTPUSH_NO_PEERS_TO_RELAY,
};

static const char *const k_code_names[LD_LIGHTPUSH_N_CODES] = {
    "SUCCESS",
    "BAD_REQUEST",
    "PAYLOAD_TOO_LARGE",
    "INVALID_MESSAGE",
    "UNSUPPORTED_PUBSUB_TOPIC",
    "TOO_MANY_REQUESTS",
    "INTERNAL_SERVER_ERROR",
    "SERVICE_NOT_AVAILABLE",
    "OUT_OF_RLN_PROOF",
    "NO_PEERS_TO_RELAY",
};

int ld_lightpush_code_index(uint32_t code) {
  for (int i = 0; i < LD_LIGHTPUSH_N_CODES; i++)
    if (ld_lightpush_codes[i] == code)
      return i;
  return -1;
}

const char *ld_lightpush_code_name(uint32_t code) {
  int i = ld_lightpush_code_index(code);
  return i < 0 ? "UNKNOWN" : k_code_names[i];
}

size_t ld_lightpush_max_frame(size_t max_msg_size) {
  return (max_msg_size != 0 ? max_msg_size : LD_WAKU_DEFAULT_MAX_MSG_SIZE) +
         LD_WAKU_PROTOCOL_OVERHEAD;
}

/* ---- errors --------------------------------------------------------------------------------- */

static int missing(char *why, size_t cap, const char *field) {
  return ld_error_fmt(why, cap, LD_ERR_MISSING_FIELD, "MissingRequiredField %s", field);
}

/* ---- the minprotobuf-style walk ------------------------------------------------------------- */

/* A wanted field: its number and wire type in, the last occurrence with that wire type out. */
typedef struct pb_field {
  uint64_t number;
  unsigned wire;
  bool present;
  const uint8_t *data;
  size_t len;
  uint64_t value;
} pb_field_t;

/* Reads one value of `wire`; NULL or nwaku's name of the failure. */
static const char *scan_value(ld_cursor_t *c, unsigned wire, pb_field_t *v) {
  uint64_t n;
  switch (wire) {
  case WIRE_VARINT:
    return ld_cursor_pbvarint(c, &v->value) == 0 ? NULL : "VarintDecode";
  case WIRE_I64:
    return ld_cursor_skip(c, 8) == 0 ? NULL : "VarintDecode";
  case WIRE_I32:
    return ld_cursor_skip(c, 4) == 0 ? NULL : "VarintDecode";
  case WIRE_LEN:
    if (ld_cursor_pbvarint(c, &n) != 0)
      return "VarintDecode";
    if (n > ld_cursor_remaining(c))
      return "MessageIncomplete";
    v->len = (size_t)n;
    ld_cursor_bytes(c, v->len, &v->data);
    return NULL;
  default: /* groups and the reserved wire types */
    return "BadWireType";
  }
}

static void keep_field(pb_field_t *f, size_t n, uint64_t number, unsigned wire,
                       const pb_field_t *v) {
  for (size_t i = 0; i < n; i++) {
    if (f[i].number == number && f[i].wire == wire) {
      f[i].present = true;
      f[i].data = v->data;
      f[i].len = v->len;
      f[i].value = v->value;
    }
  }
}

/* Walks data[0..len) and fills the wanted fields; NULL or nwaku's name of the failure. */
static const char *pb_scan(const uint8_t *data, size_t len, pb_field_t *f, size_t n) {
  ld_cursor_t c;
  ld_cursor_init(&c, data, len);
  while (!ld_cursor_empty(&c)) {
    uint64_t tag;
    if (ld_cursor_pbvarint(&c, &tag) != 0)
      return "VarintDecode";
    unsigned wire = (unsigned)(tag & 7);
    pb_field_t v = {0, 0, false, NULL, 0, 0};
    const char *err = scan_value(&c, wire, &v);
    if (err != NULL)
      return err;
    keep_field(f, n, tag >> 3, wire, &v);
  }
  return NULL;
}

static int scan(const uint8_t *data, size_t len, pb_field_t *f, size_t n, char *why, size_t cap) {
  const char *err = pb_scan(data, len, f, n);
  return err == NULL ? 0 : ld_error_fmt(why, cap, LD_ERR_BAD_PROTOBUF, "%s", err);
}

/* ---- owned texts ---------------------------------------------------------------------------- */

/* A decoded text field and where its owned copy goes. */
typedef struct text_field {
  const pb_field_t *src; /* NULL or absent: the output stays NULL / 0 */
  const char **out;
  size_t *out_len;
} text_field_t;

/* Copies the present fields, each NUL-terminated, into one block stored in *storage. */
static int own_texts(const text_field_t *t, size_t n, void **storage) {
  size_t total = 1;
  for (size_t i = 0; i < n; i++)
    if (t[i].src != NULL && t[i].src->present)
      total += t[i].src->len + 1;
  char *block = malloc(total);
  if (block == NULL)
    return LD_ERR_NOMEM;
  char *p = block;
  for (size_t i = 0; i < n; i++) {
    if (t[i].src == NULL || !t[i].src->present)
      continue;
    if (t[i].src->len > 0)
      memcpy(p, t[i].src->data, t[i].src->len);
    p[t[i].src->len] = '\0';
    *t[i].out = p;
    *t[i].out_len = t[i].src->len;
    p += t[i].src->len + 1;
  }
  *storage = block;
  return 0;
}

/* ---- field checks --------------------------------------------------------------------------- */

static int check_request_id(const pb_field_t *f, char *why, size_t cap) {
  if (!f->present)
    return missing(why, cap, "request_id");
  if (f->len > LD_LIGHTPUSH_MAX_REQUEST_ID_LEN)
    return ld_error_fmt(why, cap, LD_ERR_FIELD_TOO_LONG, "InvalidLengthField request_id");
  return 0;
}

/* A present pubsub topic must fit the cap and hold no NUL (it is handed on as a C string). */
static int check_topic(const pb_field_t *f, char *why, size_t cap) {
  if (!f->present)
    return 0;
  if (f->len > LD_LIGHTPUSH_MAX_TOPIC_LEN)
    return ld_error_fmt(why, cap, LD_ERR_FIELD_TOO_LONG, "InvalidLengthField pubsub_topic");
  if (f->len > 0 && memchr(f->data, 0, f->len) != NULL)
    return ld_error_fmt(why, cap, LD_ERR_BAD_ENCODING, "IncorrectBlob pubsub_topic");
  return 0;
}

/* The carried WakuMessage, with nwaku's required fields and its error names. */
static int decode_message(const pb_field_t *src, ld_waku_message_t *out, char *why, size_t cap) {
  if (!src->present)
    return missing(why, cap, "message");
  pb_field_t f[3] = {{1, WIRE_LEN, false, NULL, 0, 0},
                     {2, WIRE_LEN, false, NULL, 0, 0},
                     {11, WIRE_LEN, false, NULL, 0, 0}};
  int rc = scan(src->data, src->len, f, 3, why, cap);
  if (rc != 0)
    return rc;
  if (!f[0].present)
    return missing(why, cap, "payload");
  if (!f[1].present)
    return missing(why, cap, "content_topic");
  if (f[2].present && f[2].len > LD_WAKU_MAX_META_LEN)
    return ld_error_fmt(why, cap, LD_ERR_FIELD_TOO_LONG, "InvalidLengthField meta");
  rc = ld_waku_message_decode(src->data, src->len, SIZE_MAX, 0, out);
  if (rc == LD_ERR_BAD_PROTOBUF)
    return ld_error_fmt(why, cap, rc, "IncorrectBlob message");
  return rc == 0 ? 0 : ld_error_fmt(why, cap, rc, "%s", ld_strerror(rc));
}

/* ---- encoding ------------------------------------------------------------------------------- */

static ProtobufCBinaryData bin(const void *data, size_t len) {
  ProtobufCBinaryData b = {len, (uint8_t *)(data != NULL ? data : "")};
  return b;
}

static bool text_ok(const char *p, size_t n) {
  return p != NULL || n == 0;
}

static int append_message(const ProtobufCMessage *m, ld_buf_t *out) {
  size_t n = protobuf_c_message_get_packed_size(m);
  uint8_t *p;
  int rc = ld_reqresp_append_frame(out, n, &p);
  if (rc == 0)
    protobuf_c_message_pack(m, p);
  return rc;
}

int ld_lightpush_request_encode(const ld_lightpush_request_t *req, size_t max_msg_size,
                                ld_buf_t *out) {
  if (req == NULL || out == NULL || !text_ok(req->request_id, req->request_id_len))
    return LD_ERR_INVALID_ARG;
  ld_buf_t msg;
  ld_buf_init(&msg);
  int rc = ld_waku_message_encode(&req->message, max_msg_size, &msg);
  if (rc == 0) {
    pb_request_t pb = LD__WAKU__LIGHTPUSH__LIGHT_PUSH_REQUEST__INIT;
    pb.has_request_id = pb.has_message = 1;
    pb.request_id = bin(req->request_id, req->request_id_len);
    pb.has_pubsub_topic = req->pubsub_topic != NULL;
    pb.pubsub_topic = bin(req->pubsub_topic, req->pubsub_topic_len);
    pb.message = bin(msg.data, msg.len);
    rc = append_message(&pb.base, out);
  }
  ld_buf_clear(&msg);
  return rc;
}

int ld_lightpush_response_encode(const ld_lightpush_response_t *resp, ld_buf_t *out) {
  if (resp == NULL || out == NULL || !text_ok(resp->request_id, resp->request_id_len))
    return LD_ERR_INVALID_ARG;
  pb_response_t pb = LD__WAKU__LIGHTPUSH__LIGHT_PUSH_RESPONSE__INIT;
  pb.has_request_id = pb.has_status_code = 1;
  pb.request_id = bin(resp->request_id, resp->request_id_len);
  pb.status_code = resp->status_code;
  pb.has_status_desc = resp->status_desc != NULL;
  pb.status_desc = bin(resp->status_desc, resp->status_desc_len);
  pb.has_relay_peer_count = resp->has_relay_peer_count;
  pb.relay_peer_count = resp->relay_peer_count;
  return append_message(&pb.base, out);
}

int ld_lightpush_rpc_encode(const ld_lightpush_rpc_t *rpc, size_t max_msg_size, ld_buf_t *out) {
  if (rpc == NULL || out == NULL || !text_ok(rpc->request_id, rpc->request_id_len) ||
      (rpc->has_request && !text_ok(rpc->pubsub_topic, rpc->pubsub_topic_len)))
    return LD_ERR_INVALID_ARG;
  ld_buf_t msg;
  ld_buf_init(&msg);
  int rc = rpc->has_request ? ld_waku_message_encode(&rpc->message, max_msg_size, &msg) : 0;
  if (rc != 0) {
    ld_buf_clear(&msg);
    return rc;
  }
  pb_push_request_t req = LD__WAKU__LIGHTPUSH__PUSH_REQUEST__INIT;
  req.has_pubsub_topic = req.has_message = 1;
  req.pubsub_topic = bin(rpc->pubsub_topic, rpc->pubsub_topic_len);
  req.message = bin(msg.data, msg.len);
  pb_push_response_t resp = LD__WAKU__LIGHTPUSH__PUSH_RESPONSE__INIT;
  resp.has_is_success = 1;
  resp.is_success = rpc->is_success;
  resp.has_info = rpc->info != NULL;
  resp.info = bin(rpc->info, rpc->info_len);
  pb_rpc_t pb = LD__WAKU__LIGHTPUSH__PUSH_RPC__INIT;
  pb.has_request_id = 1;
  pb.request_id = bin(rpc->request_id, rpc->request_id_len);
  pb.request = rpc->has_request ? &req : NULL;
  pb.response = rpc->has_response ? &resp : NULL;
  rc = append_message(&pb.base, out);
  ld_buf_clear(&msg);
  return rc;
}

/* ---- v3 decoding ---------------------------------------------------------------------------- */

void ld_lightpush_request_init(ld_lightpush_request_t *req) {
  memset(req, 0, sizeof *req);
  ld_waku_message_init(&req->message);
}

void ld_lightpush_request_clear(ld_lightpush_request_t *req) {
  ld_waku_message_clear(&req->message);
  free(req->storage);
  ld_lightpush_request_init(req);
}

static int request_fields(const pb_field_t *f, ld_lightpush_request_t *out, char *why, size_t cap) {
  int rc = check_request_id(&f[0], why, cap);
  if (rc == 0)
    rc = check_topic(&f[1], why, cap);
  if (rc == 0)
    rc = decode_message(&f[2], &out->message, why, cap);
  if (rc != 0)
    return rc;
  const text_field_t t[2] = {{&f[0], &out->request_id, &out->request_id_len},
                             {&f[1], &out->pubsub_topic, &out->pubsub_topic_len}};
  return own_texts(t, 2, &out->storage);
}

int ld_lightpush_request_decode(const uint8_t *body, size_t len, ld_lightpush_request_t *out,
                                char *why, size_t why_len) {
  if (out == NULL || (body == NULL && len > 0))
    return ld_error_fmt(why, why_len, LD_ERR_INVALID_ARG, "invalid argument");
  ld_lightpush_request_clear(out);
  pb_field_t f[3] = {{1, WIRE_LEN, false, NULL, 0, 0},
                     {20, WIRE_LEN, false, NULL, 0, 0},
                     {21, WIRE_LEN, false, NULL, 0, 0}};
  int rc = scan(body, len, f, 3, why, why_len);
  if (rc == 0)
    rc = request_fields(f, out, why, why_len);
  if (rc == LD_ERR_NOMEM)
    ld_error_fmt(why, why_len, rc, "out of memory");
  if (rc != 0)
    ld_lightpush_request_clear(out);
  return rc;
}

void ld_lightpush_response_init(ld_lightpush_response_t *resp) {
  memset(resp, 0, sizeof *resp);
}

void ld_lightpush_response_clear(ld_lightpush_response_t *resp) {
  free(resp->storage);
  ld_lightpush_response_init(resp);
}

int ld_lightpush_response_decode(const uint8_t *body, size_t len, ld_lightpush_response_t *out,
                                 char *why, size_t why_len) {
  if (out == NULL || (body == NULL && len > 0))
    return ld_error_fmt(why, why_len, LD_ERR_INVALID_ARG, "invalid argument");
  ld_lightpush_response_clear(out);
  pb_field_t f[4] = {{1, WIRE_LEN, false, NULL, 0, 0},
                     {10, WIRE_VARINT, false, NULL, 0, 0},
                     {11, WIRE_LEN, false, NULL, 0, 0},
                     {12, WIRE_VARINT, false, NULL, 0, 0}};
  int rc = scan(body, len, f, 4, why, why_len);
  if (rc == 0 && !f[0].present)
    rc = missing(why, why_len, "request_id");
  if (rc == 0 && !f[1].present)
    rc = missing(why, why_len, "status_code");
  if (rc == 0 && (f[1].value > UINT32_MAX || (f[3].present && f[3].value > UINT32_MAX)))
    rc = ld_error_fmt(why, why_len, LD_ERR_BAD_PROTOBUF, "VarintDecode");
  const text_field_t t[2] = {{&f[0], &out->request_id, &out->request_id_len},
                             {&f[2], &out->status_desc, &out->status_desc_len}};
  if (rc == 0 && (rc = own_texts(t, 2, &out->storage)) != 0)
    ld_error_fmt(why, why_len, rc, "out of memory");
  if (rc != 0)
    return rc;
  out->status_code = (uint32_t)f[1].value;
  out->has_relay_peer_count = f[3].present;
  out->relay_peer_count = (uint32_t)f[3].value;
  return 0;
}

/* ---- legacy decoding ------------------------------------------------------------------------ */

void ld_lightpush_rpc_init(ld_lightpush_rpc_t *rpc) {
  memset(rpc, 0, sizeof *rpc);
  ld_waku_message_init(&rpc->message);
}

void ld_lightpush_rpc_clear(ld_lightpush_rpc_t *rpc) {
  ld_waku_message_clear(&rpc->message);
  free(rpc->storage);
  ld_lightpush_rpc_init(rpc);
}

/* PushRequest: fills f[0] (pubsub_topic) and the message. */
static int decode_push_request(const pb_field_t *src, pb_field_t *topic, ld_lightpush_rpc_t *out,
                               char *why, size_t cap) {
  pb_field_t f[2] = {{1, WIRE_LEN, false, NULL, 0, 0}, {2, WIRE_LEN, false, NULL, 0, 0}};
  int rc = scan(src->data, src->len, f, 2, why, cap);
  if (rc == 0 && !f[0].present)
    rc = missing(why, cap, "pubsub_topic");
  if (rc == 0)
    rc = check_topic(&f[0], why, cap);
  if (rc == 0)
    rc = decode_message(&f[1], &out->message, why, cap);
  *topic = f[0];
  out->has_request = rc == 0;
  return rc;
}

/* PushResponse: fills *info and is_success. */
static int decode_push_response(const pb_field_t *src, pb_field_t *info, ld_lightpush_rpc_t *out,
                                char *why, size_t cap) {
  pb_field_t f[2] = {{1, WIRE_VARINT, false, NULL, 0, 0}, {2, WIRE_LEN, false, NULL, 0, 0}};
  int rc = scan(src->data, src->len, f, 2, why, cap);
  if (rc == 0 && !f[0].present)
    rc = missing(why, cap, "is_success");
  *info = f[1];
  out->has_response = rc == 0;
  out->is_success = f[0].value != 0;
  return rc;
}

static int rpc_fields(const pb_field_t *f, ld_lightpush_rpc_t *out, char *why, size_t cap) {
  pb_field_t topic = {0, 0, false, NULL, 0, 0}, info = topic;
  int rc = check_request_id(&f[0], why, cap);
  if (rc == 0 && f[1].present)
    rc = decode_push_request(&f[1], &topic, out, why, cap);
  if (rc == 0 && f[2].present)
    rc = decode_push_response(&f[2], &info, out, why, cap);
  if (rc != 0)
    return rc;
  const text_field_t t[3] = {{&f[0], &out->request_id, &out->request_id_len},
                             {&topic, &out->pubsub_topic, &out->pubsub_topic_len},
                             {&info, &out->info, &out->info_len}};
  return own_texts(t, 3, &out->storage);
}

int ld_lightpush_rpc_decode(const uint8_t *body, size_t len, ld_lightpush_rpc_t *out, char *why,
                            size_t why_len) {
  if (out == NULL || (body == NULL && len > 0))
    return ld_error_fmt(why, why_len, LD_ERR_INVALID_ARG, "invalid argument");
  ld_lightpush_rpc_clear(out);
  pb_field_t f[3] = {{1, WIRE_LEN, false, NULL, 0, 0},
                     {2, WIRE_LEN, false, NULL, 0, 0},
                     {3, WIRE_LEN, false, NULL, 0, 0}};
  int rc = scan(body, len, f, 3, why, why_len);
  if (rc == 0)
    rc = rpc_fields(f, out, why, why_len);
  if (rc == LD_ERR_NOMEM)
    ld_error_fmt(why, why_len, rc, "out of memory");
  if (rc != 0)
    ld_lightpush_rpc_clear(out);
  return rc;
}
