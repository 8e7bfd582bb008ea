#include "waku/store/codec.h"

#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/error.h"
#include "base/varint.h"
#include "p2p/reqresp.h"
#include "store.pb-c.h"

typedef Ld__Waku__Store__StoreQueryRequest pb_request_t;
typedef Ld__Waku__Store__StoreQueryResponse pb_response_t;
typedef Ld__Waku__Store__WakuMessageKeyValue pb_entry_t;

#define PB_VARINT 0u
#define PB_I64 1u
#define PB_LEN 2u
#define PB_I32 5u
#define PB_MAX_FIELD_NUMBER ((1u << 29) - 1)

static const char k_empty[1] = "";

/* ---- field walker ---------------------------------------------------------------------------- */

typedef struct pb_field {
  uint32_t number;
  unsigned wire;
  uint64_t value;      /* VARINT */
  const uint8_t *data; /* LEN */
  size_t len;
} pb_field_t;

/* Called for every field; returns 0 to go on or an error (with *why set) to stop. */
typedef int (*pb_visit_fn)(const pb_field_t *f, void *ctx, const char **why);

static int fail(const char **why, const char *text, int err) {
  if (why != NULL)
    *why = text;
  return err;
}

static int read_value(ld_cursor_t *c, pb_field_t *f, const char **why) {
  uint64_t n;
  switch (f->wire) {
  case PB_VARINT:
    if (ld_cursor_pbvarint(c, &f->value) != 0)
      return fail(why, "VarintDecode", LD_ERR_BAD_PROTOBUF);
    return 0;
  case PB_I64:
  case PB_I32:
    if (ld_cursor_skip(c, f->wire == PB_I64 ? 8 : 4) != 0)
      return fail(why, "MessageIncomplete", LD_ERR_BAD_PROTOBUF);
    return 0;
  case PB_LEN:
    if (ld_cursor_pbvarint(c, &n) != 0)
      return fail(why, "VarintDecode", LD_ERR_BAD_PROTOBUF);
    if (n > ld_cursor_remaining(c))
      return fail(why, "MessageIncomplete", LD_ERR_BAD_PROTOBUF);
    f->len = (size_t)n;
    return ld_cursor_bytes(c, f->len, &f->data);
  default: /* groups and the reserved wire types */
    return fail(why, "BadWireType", LD_ERR_BAD_PROTOBUF);
  }
}

static int pb_next(ld_cursor_t *c, pb_field_t *f, const char **why) {
  uint64_t tag;
  memset(f, 0, sizeof *f);
  if (ld_cursor_pbvarint(c, &tag) != 0)
    return fail(why, "VarintDecode", LD_ERR_BAD_PROTOBUF);
  if ((tag >> 3) == 0 || (tag >> 3) > PB_MAX_FIELD_NUMBER)
    return fail(why, "BadWireType", LD_ERR_BAD_PROTOBUF);
  f->number = (uint32_t)(tag >> 3);
  f->wire = (unsigned)(tag & 7);
  return read_value(c, f, why);
}

static int pb_walk(const uint8_t *data, size_t len, pb_visit_fn visit, void *ctx,
                   const char **why) {
  ld_cursor_t c;
  ld_cursor_init(&c, data, len);
  while (!ld_cursor_empty(&c)) {
    pb_field_t f;
    int rc = pb_next(&c, &f, why);
    if (rc == 0)
      rc = visit(&f, ctx, why);
    if (rc != 0)
      return rc;
  }
  return 0;
}

static bool is(const pb_field_t *f, uint32_t number, unsigned wire) {
  return f->number == number && f->wire == wire;
}

static bool has_nul(const pb_field_t *f) {
  return f->len > 0 && memchr(f->data, 0, f->len) != NULL;
}

static int64_t unzigzag(uint64_t v) {
  return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Copies a LEN field's bytes as a NUL-terminated string at *pos and advances it. */
static const char *put_string(char **pos, const pb_field_t *f) {
  char *s = *pos;
  if (f->len > 0)
    memcpy(s, f->data, f->len);
  s[f->len] = '\0';
  *pos += f->len + 1;
  return s;
}

/* ---- request: values ------------------------------------------------------------------------- */

void ld_store_query_init(ld_store_query_t *q) {
  memset(q, 0, sizeof *q);
  q->forward = true;
}

void ld_store_query_clear(ld_store_query_t *q) {
  free(q->storage);
  ld_store_query_init(q);
}

uint32_t ld_store_page_size(bool has_limit, uint64_t limit) {
  if (!has_limit || limit == 0)
    return LD_STORE_DEFAULT_PAGE_SIZE;
  return limit > LD_STORE_MAX_PAGE_SIZE ? LD_STORE_MAX_PAGE_SIZE : (uint32_t)limit;
}

/* ---- request: encoding ----------------------------------------------------------------------- */

static int check_query(const ld_store_query_t *q) {
  if ((q->content_topics == NULL && q->n_content_topics > 0) ||
      (q->hashes == NULL && q->n_hashes > 0))
    return LD_ERR_INVALID_ARG;
  if (q->n_content_topics > LD_STORE_MAX_CONTENT_TOPICS || q->n_hashes > LD_STORE_MAX_HASHES)
    return LD_ERR_LIMIT;
  if (q->request_id != NULL && strlen(q->request_id) > LD_STORE_MAX_REQUEST_ID_LEN)
    return LD_ERR_LIMIT;
  for (size_t i = 0; i < q->n_content_topics; i++)
    if (q->content_topics[i] == NULL)
      return LD_ERR_INVALID_ARG;
  return 0;
}

static void to_pb_request(const ld_store_query_t *q, ProtobufCBinaryData *hashes,
                          pb_request_t *pb) {
  ld__waku__store__store_query_request__init(pb);
  pb->request_id = (char *)(q->request_id != NULL ? q->request_id : k_empty);
  pb->has_include_data = 1;
  pb->include_data = q->include_data ? 1 : 0;
  pb->pubsub_topic = (char *)q->pubsub_topic;
  pb->n_content_topics = q->n_content_topics;
  pb->content_topics = (char **)q->content_topics;
  pb->has_time_start = q->has_time_start;
  pb->time_start = q->time_start;
  pb->has_time_end = q->has_time_end;
  pb->time_end = q->time_end;
  for (size_t i = 0; i < q->n_hashes; i++) {
    hashes[i].len = LD_WAKU_HASH_LEN;
    hashes[i].data = (uint8_t *)q->hashes[i];
  }
  pb->n_message_hashes = q->n_hashes;
  pb->message_hashes = hashes;
  pb->has_pagination_cursor = q->has_cursor;
  pb->pagination_cursor.len = LD_WAKU_HASH_LEN;
  pb->pagination_cursor.data = (uint8_t *)q->cursor;
  pb->has_pagination_forward = 1;
  pb->pagination_forward = q->forward ? 1 : 0;
  pb->has_pagination_limit = q->has_limit;
  pb->pagination_limit = q->limit;
}

int ld_store_encode_request(const ld_store_query_t *q, ld_buf_t *out) {
  if (q == NULL || out == NULL)
    return LD_ERR_INVALID_ARG;
  int rc = check_query(q);
  if (rc != 0)
    return rc;
  ProtobufCBinaryData hashes[LD_STORE_MAX_HASHES];
  pb_request_t pb;
  to_pb_request(q, hashes, &pb);
  size_t body = ld__waku__store__store_query_request__get_packed_size(&pb);
  if (body > LD_STORE_MAX_REQUEST_BYTES)
    return LD_ERR_TOO_LARGE;
  uint8_t *p;
  rc = ld_reqresp_append_frame(out, body, &p);
  if (rc == 0)
    ld__waku__store__store_query_request__pack(&pb, p);
  return rc;
}

/* ---- request: decoding ----------------------------------------------------------------------- */

typedef struct req_scan {
  ld_store_query_t *q; /* scalars are written straight into it */
  pb_field_t id, pubsub, cursor;
  bool has_id, has_pubsub;
  size_t n_topics, topic_bytes, n_hashes;
  /* second pass: where the repeated fields go */
  const char **topics;
  uint8_t (*hashes)[LD_WAKU_HASH_LEN];
  char *strings;
} req_scan_t;

static int scan_request_len(const pb_field_t *f, req_scan_t *s, const char **why) {
  switch (f->number) {
  case 1:
    if (f->len > LD_STORE_MAX_REQUEST_ID_LEN)
      return fail(why, "InvalidLengthField request_id", LD_ERR_FIELD_TOO_LONG);
    if (has_nul(f))
      return fail(why, "IncorrectBlob request_id", LD_ERR_BAD_PROTOBUF);
    s->id = *f;
    s->has_id = true;
    return 0;
  case 10:
    if (has_nul(f))
      return fail(why, "IncorrectBlob pubsub_topic", LD_ERR_BAD_PROTOBUF);
    s->pubsub = *f;
    s->has_pubsub = true;
    return 0;
  case 11:
    if (has_nul(f))
      return fail(why, "IncorrectBlob content_topics", LD_ERR_BAD_PROTOBUF);
    if (++s->n_topics > LD_STORE_MAX_CONTENT_TOPICS)
      return fail(why, "InvalidLengthField content_topics", LD_ERR_LIMIT);
    s->topic_bytes += f->len + 1;
    return 0;
  case 20:
    if (f->len != LD_WAKU_HASH_LEN)
      return fail(why, "InvalidLengthField message_hashes", LD_ERR_FIELD_TOO_LONG);
    if (++s->n_hashes > LD_STORE_MAX_HASHES)
      return fail(why, "InvalidLengthField message_hashes", LD_ERR_LIMIT);
    return 0;
  case 51:
    s->cursor = *f;
    s->q->has_cursor = true;
    return 0;
  default:
    return 0;
  }
}

static void scan_request_varint(const pb_field_t *f, ld_store_query_t *q) {
  switch (f->number) {
  case 2:
    q->include_data = (uint32_t)f->value != 0; /* nwaku reads a uint32 */
    break;
  case 12:
    q->has_time_start = true;
    q->time_start = unzigzag(f->value);
    break;
  case 13:
    q->has_time_end = true;
    q->time_end = unzigzag(f->value);
    break;
  case 52:
    q->has_forward = true;
    q->forward = (uint32_t)f->value != 0;
    break;
  case 53:
    q->has_limit = true;
    q->limit = f->value;
    break;
  default:
    break;
  }
}

static int visit_request(const pb_field_t *f, void *ctx, const char **why) {
  req_scan_t *s = ctx;
  if (f->wire == PB_LEN)
    return scan_request_len(f, s, why);
  if (f->wire == PB_VARINT)
    scan_request_varint(f, s->q);
  return 0;
}

static int fill_request(const pb_field_t *f, void *ctx, const char **why) {
  (void)why;
  req_scan_t *s = ctx;
  if (is(f, 11, PB_LEN))
    s->topics[s->n_topics++] = put_string(&s->strings, f);
  else if (is(f, 20, PB_LEN))
    memcpy(s->hashes[s->n_hashes++], f->data, LD_WAKU_HASH_LEN);
  return 0;
}

/* One block: the topic pointers, the hashes, then the strings. */
static int build_request(const uint8_t *data, size_t len, req_scan_t *s) {
  ld_store_query_t *q = s->q;
  size_t ptrs = s->n_topics * sizeof(char *);
  size_t hashes = s->n_hashes * LD_WAKU_HASH_LEN;
  size_t strings = s->id.len + 1 + (s->has_pubsub ? s->pubsub.len + 1 : 0) + s->topic_bytes;
  uint8_t *block = malloc(ptrs + hashes + strings);
  if (block == NULL)
    return LD_ERR_NOMEM;
  q->storage = block;
  s->topics = (const char **)block;
  s->hashes = (uint8_t(*)[LD_WAKU_HASH_LEN])(block + ptrs);
  s->strings = (char *)(block + ptrs + hashes);
  q->request_id = put_string(&s->strings, &s->id);
  if (s->has_pubsub)
    q->pubsub_topic = put_string(&s->strings, &s->pubsub);
  size_t n_topics = s->n_topics, n_hashes = s->n_hashes;
  s->n_topics = s->n_hashes = 0;
  pb_walk(data, len, fill_request, s, NULL); /* cannot fail: the first pass accepted it */
  q->content_topics = n_topics > 0 ? s->topics : NULL;
  q->n_content_topics = n_topics;
  q->hashes = n_hashes > 0 ? (const uint8_t(*)[LD_WAKU_HASH_LEN])s->hashes : NULL;
  q->n_hashes = n_hashes;
  return 0;
}

int ld_store_decode_request(const uint8_t *data, size_t len, ld_store_query_t *out,
                            const char **why) {
  if (out == NULL || (data == NULL && len > 0))
    return fail(why, "IncorrectBlob", LD_ERR_INVALID_ARG);
  ld_store_query_clear(out);
  if (len > LD_STORE_MAX_REQUEST_BYTES)
    return fail(why, "MessageTooBig", LD_ERR_TOO_LARGE);
  req_scan_t s = {.q = out};
  int rc = pb_walk(data, len, visit_request, &s, why);
  if (rc == 0 && !s.has_id)
    rc = fail(why, "MissingRequiredField request_id", LD_ERR_MISSING_FIELD);
  if (rc == 0) {
    out->cursor_len = s.cursor.len;
    if (out->has_cursor && s.cursor.len > 0)
      memcpy(out->cursor, s.cursor.data,
             s.cursor.len < LD_WAKU_HASH_LEN ? s.cursor.len : LD_WAKU_HASH_LEN);
    rc = build_request(data, len, &s);
    if (rc != 0)
      fail(why, "out of memory", rc);
  }
  if (rc != 0)
    ld_store_query_clear(out);
  return rc;
}

/* ---- response: values ------------------------------------------------------------------------ */

void ld_store_response_init(ld_store_response_t *res) {
  memset(res, 0, sizeof *res);
}

void ld_store_response_clear(ld_store_response_t *res) {
  if (res->storage != NULL) {
    for (size_t i = 0; i < res->n_entries; i++)
      ld_waku_message_clear(&res->entries[i].message);
    free(res->storage);
  }
  ld_store_response_init(res);
}

const char *ld_store_status_name(uint32_t status) {
  switch (status) {
  case LD_STORE_STATUS_OK:
    return "OK";
  case LD_STORE_STATUS_BAD_RESPONSE:
    return "BAD_RESPONSE";
  case LD_STORE_STATUS_BAD_REQUEST:
    return "BAD_REQUEST";
  case LD_STORE_STATUS_TOO_MANY_REQUESTS:
    return "TOO_MANY_REQUESTS";
  case LD_STORE_STATUS_SERVICE_UNAVAILABLE:
    return "SERVICE_UNAVAILABLE";
  case LD_STORE_STATUS_PEER_DIAL_FAILURE:
    return "PEER_DIAL_FAILURE";
  default:
    return "UNKNOWN";
  }
}

/* ---- response: encoding ---------------------------------------------------------------------- */

static size_t len_field(size_t n) {
  return 1 + ld_varint_len(n) + n; /* fields 1..15: one tag byte */
}

size_t ld_store_entry_wire_len(const ld_store_entry_t *e) {
  size_t body = len_field(LD_WAKU_HASH_LEN);
  if (e->pubsub_topic != NULL)
    body +=
        len_field(ld_waku_message_encoded_len(&e->message)) + len_field(strlen(e->pubsub_topic));
  return 2 + ld_varint_len(body) + body; /* field 20: two tag bytes */
}

typedef struct resp_pb {
  pb_response_t msg;
  pb_entry_t *entries;
  pb_entry_t **ptrs;
  size_t *offsets; /* where each entry's message starts in `msgs` */
  ld_buf_t msgs;
} resp_pb_t;

static void resp_pb_clear(resp_pb_t *r) {
  free(r->entries);
  free(r->ptrs);
  free(r->offsets);
  ld_buf_clear(&r->msgs);
}

static int encode_messages(const ld_store_response_t *res, resp_pb_t *r) {
  for (size_t i = 0; i < res->n_entries; i++) {
    const ld_store_entry_t *e = &res->entries[i];
    r->offsets[i] = r->msgs.len;
    if (e->pubsub_topic == NULL)
      continue;
    int rc = ld_waku_message_encode(&e->message, SIZE_MAX, &r->msgs);
    if (rc != 0)
      return rc;
  }
  return 0;
}

static void fill_entries(const ld_store_response_t *res, resp_pb_t *r) {
  for (size_t i = 0; i < res->n_entries; i++) {
    const ld_store_entry_t *e = &res->entries[i];
    pb_entry_t *pe = &r->entries[i];
    ld__waku__store__waku_message_key_value__init(pe);
    pe->has_message_hash = 1;
    pe->message_hash.len = LD_WAKU_HASH_LEN;
    pe->message_hash.data = (uint8_t *)e->hash;
    if (e->pubsub_topic != NULL) {
      size_t end = i + 1 < res->n_entries ? r->offsets[i + 1] : r->msgs.len;
      pe->has_message = 1;
      pe->message.len = end - r->offsets[i];
      pe->message.data = r->msgs.data != NULL ? r->msgs.data + r->offsets[i] : (uint8_t *)k_empty;
      pe->pubsub_topic = (char *)e->pubsub_topic;
    }
    r->ptrs[i] = pe;
  }
}

static int build_response_pb(const ld_store_response_t *res, resp_pb_t *r) {
  size_t n = res->n_entries;
  if (n > 0) {
    r->entries = calloc(n, sizeof *r->entries);
    r->ptrs = calloc(n, sizeof *r->ptrs);
    r->offsets = calloc(n, sizeof *r->offsets);
    if (r->entries == NULL || r->ptrs == NULL || r->offsets == NULL)
      return LD_ERR_NOMEM;
  }
  int rc = encode_messages(res, r);
  if (rc != 0)
    return rc;
  fill_entries(res, r);
  pb_response_t *pb = &r->msg;
  ld__waku__store__store_query_response__init(pb);
  pb->request_id = (char *)(res->request_id != NULL ? res->request_id : k_empty);
  pb->has_status_code = 1;
  pb->status_code = res->status_code;
  pb->status_desc = (char *)(res->status_desc != NULL ? res->status_desc : k_empty);
  pb->n_messages = n;
  pb->messages = r->ptrs;
  pb->has_pagination_cursor = res->has_cursor;
  pb->pagination_cursor.len = LD_WAKU_HASH_LEN;
  pb->pagination_cursor.data = (uint8_t *)res->cursor;
  return 0;
}

int ld_store_encode_response(const ld_store_response_t *res, ld_buf_t *out) {
  if (res == NULL || out == NULL || (res->entries == NULL && res->n_entries > 0))
    return LD_ERR_INVALID_ARG;
  resp_pb_t r;
  memset(&r, 0, sizeof r);
  ld_buf_init(&r.msgs);
  int rc = build_response_pb(res, &r);
  if (rc == 0) {
    size_t body = ld__waku__store__store_query_response__get_packed_size(&r.msg);
    uint8_t *p;
    rc = ld_reqresp_append_frame(out, body, &p);
    if (rc == 0)
      ld__waku__store__store_query_response__pack(&r.msg, p);
  }
  resp_pb_clear(&r);
  return rc;
}

/* ---- response: decoding ---------------------------------------------------------------------- */

typedef struct entry_scan {
  pb_field_t hash, message, pubsub;
  bool has_hash, has_message, has_pubsub;
} entry_scan_t;

static int visit_entry(const pb_field_t *f, void *ctx, const char **why) {
  entry_scan_t *s = ctx;
  if (is(f, 1, PB_LEN)) {
    s->hash = *f;
    s->has_hash = true;
  } else if (is(f, 2, PB_LEN)) {
    s->message = *f;
    s->has_message = true;
  } else if (is(f, 3, PB_LEN)) {
    if (has_nul(f))
      return fail(why, "IncorrectBlob pubsub_topic", LD_ERR_BAD_PROTOBUF);
    s->pubsub = *f;
    s->has_pubsub = true;
  }
  return 0;
}

static int scan_entry(const pb_field_t *f, entry_scan_t *s) {
  memset(s, 0, sizeof *s);
  int rc = pb_walk(f->data, f->len, visit_entry, s, NULL);
  if (rc != 0)
    return rc;
  if (!s->has_hash)
    return LD_ERR_MISSING_FIELD;
  if (s->hash.len != LD_WAKU_HASH_LEN)
    return LD_ERR_FIELD_TOO_LONG;
  return 0;
}

static bool entry_has_data(const entry_scan_t *s) {
  return s->has_message && s->has_pubsub;
}

typedef struct resp_scan {
  ld_store_response_t *res;
  pb_field_t id, desc;
  size_t n_entries, string_bytes;
  size_t max_msg_size;
  char *strings; /* second pass */
} resp_scan_t;

static int visit_response(const pb_field_t *f, void *ctx, const char **why) {
  resp_scan_t *s = ctx;
  entry_scan_t es;
  int rc;
  if (is(f, 1, PB_LEN) || is(f, 11, PB_LEN)) {
    if (has_nul(f))
      return fail(why, "IncorrectBlob", LD_ERR_BAD_PROTOBUF);
    *(f->number == 1 ? &s->id : &s->desc) = *f;
  } else if (is(f, 10, PB_VARINT)) {
    s->res->status_code = (uint32_t)f->value;
  } else if (is(f, 20, PB_LEN)) {
    if (++s->n_entries > LD_STORE_MAX_RESPONSE_ENTRIES)
      return LD_ERR_LIMIT;
    if ((rc = scan_entry(f, &es)) != 0)
      return rc;
    if (entry_has_data(&es))
      s->string_bytes += es.pubsub.len + 1;
  } else if (is(f, 51, PB_LEN)) {
    if (f->len != LD_WAKU_HASH_LEN)
      return LD_ERR_FIELD_TOO_LONG;
    s->res->has_cursor = true;
    memcpy(s->res->cursor, f->data, LD_WAKU_HASH_LEN);
  }
  return 0;
}

static int fill_entry(const pb_field_t *f, void *ctx, const char **why) {
  (void)why;
  resp_scan_t *s = ctx;
  if (!is(f, 20, PB_LEN))
    return 0;
  entry_scan_t es;
  scan_entry(f, &es); /* cannot fail: the first pass accepted it */
  ld_store_entry_t *e = &s->res->entries[s->res->n_entries++];
  memcpy(e->hash, es.hash.data, LD_WAKU_HASH_LEN);
  ld_waku_message_init(&e->message);
  if (!entry_has_data(&es))
    return 0;
  e->pubsub_topic = put_string(&s->strings, &es.pubsub);
  return ld_waku_message_decode(es.message.data, es.message.len, s->max_msg_size, 0, &e->message);
}

/* One block: the entries, then the strings. Messages own their own storage. */
static int build_response(const uint8_t *data, size_t len, resp_scan_t *s) {
  ld_store_response_t *res = s->res;
  size_t entries = s->n_entries * sizeof(ld_store_entry_t);
  uint8_t *block = calloc(1, entries + s->id.len + 1 + s->desc.len + 1 + s->string_bytes);
  if (block == NULL)
    return LD_ERR_NOMEM;
  res->storage = block;
  res->entries = s->n_entries > 0 ? (ld_store_entry_t *)block : NULL;
  s->strings = (char *)(block + entries);
  res->request_id = put_string(&s->strings, &s->id);
  res->status_desc = put_string(&s->strings, &s->desc);
  return pb_walk(data, len, fill_entry, s, NULL);
}

int ld_store_decode_response(const uint8_t *data, size_t len, size_t max_msg_size,
                             ld_store_response_t *out) {
  if (out == NULL || (data == NULL && len > 0))
    return LD_ERR_INVALID_ARG;
  ld_store_response_clear(out);
  resp_scan_t s = {.res = out, .max_msg_size = max_msg_size};
  int rc = pb_walk(data, len, visit_response, &s, NULL);
  if (rc == 0)
    rc = build_response(data, len, &s);
  if (rc != 0)
    ld_store_response_clear(out);
  return rc;
}
