#include "channels/sds_wire.h"

#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/error.h"
#include "base/utf8.h"
#include "sds_message.pb-c.h"

typedef Ld__Channels__SdsMessage pb_msg_t;
typedef Ld__Channels__SdsHistoryEntry pb_entry_t;

#define WIRE_VARINT 0u
#define WIRE_I64 1u
#define WIRE_LEN 2u
#define WIRE_I32 5u
#define MAX_FIELD_NUMBER ((1u << 29) - 1)

/* Field numbers (proto/sds_message.proto). */
enum {
  F_SENDER = 1,
  F_MESSAGE_ID = 2,
  F_CHANNEL = 3,
  F_LAMPORT = 10,
  F_HISTORY = 11,
  F_BLOOM = 12,
  F_REPAIR = 13,
  F_CONTENT = 20,
};
enum { E_MESSAGE_ID = 1, E_HINT = 2, E_SENDER = 3 };

static const char k_empty[1] = "";
#define EMPTY_BYTES ((const uint8_t *)k_empty)

/* ---- value ---------------------------------------------------------------------------------- */

void ld_sds_message_init(ld_sds_message_t *m) {
  memset(m, 0, sizeof *m);
  m->sender_id = m->message_id = m->channel_id = k_empty;
  m->bloom = m->content = EMPTY_BYTES;
}

void ld_sds_message_clear(ld_sds_message_t *m) {
  free(m->storage);
  ld_sds_message_init(m);
}

ld_sds_class_t ld_sds_message_class(const ld_sds_message_t *m) {
  bool content = m->has_content && m->content_len > 0;
  if (m->has_lamport)
    return content ? LD_SDS_CLASS_CONTENT : LD_SDS_CLASS_SYNC;
  return content ? LD_SDS_CLASS_EPHEMERAL : LD_SDS_CLASS_INVALID;
}

const char *ld_sds_class_name(ld_sds_class_t c) {
  switch (c) {
  case LD_SDS_CLASS_CONTENT:
    return "content";
  case LD_SDS_CLASS_SYNC:
    return "sync";
  case LD_SDS_CLASS_EPHEMERAL:
    return "ephemeral";
  default:
    return "invalid";
  }
}

/* ---- checks shared by encoder and decoder --------------------------------------------------- */

static int check_text(const char *what, const void *p, size_t n, size_t max, char *why,
                      size_t cap) {
  if (n > max)
    return ld_error_fmt(why, cap, LD_ERR_FIELD_TOO_LONG, "%s: %zu bytes, at most %zu", what, n,
                        max);
  const uint8_t *s = p;
  for (size_t i = 0; i < n;) {
    size_t l = s[i] == 0 ? 0 : ld_utf8_char_len(s + i, n - i);
    if (l == 0)
      return ld_error_fmt(why, cap, LD_ERR_BAD_ENCODING, "%s: not UTF-8 or holds NUL at byte %zu",
                          what, i);
    i += l;
  }
  return 0;
}

static int check_hint(size_t n, char *why, size_t cap) {
  if (n > LD_SDS_MAX_HINT_LEN)
    return ld_error_fmt(why, cap, LD_ERR_FIELD_TOO_LONG, "retrieval_hint: %zu bytes, at most %u", n,
                        LD_SDS_MAX_HINT_LEN);
  return 0;
}

static int check_count(const char *what, size_t n, size_t max, char *why, size_t cap) {
  if (n > max)
    return ld_error_fmt(why, cap, LD_ERR_LIMIT, "%s: %zu entries, at most %zu", what, n, max);
  return 0;
}

static bool view_ok(const void *p, size_t n) {
  return p != NULL || n == 0;
}

static int check_entry(const ld_sds_history_entry_t *e) {
  if (!view_ok(e->message_id, e->message_id_len) ||
      (e->has_retrieval_hint && !view_ok(e->retrieval_hint, e->retrieval_hint_len)) ||
      (e->has_sender_id && !view_ok(e->sender_id, e->sender_id_len)))
    return LD_ERR_INVALID_ARG;
  int rc = check_text("message_id", e->message_id, e->message_id_len, LD_SDS_MAX_ID_LEN, NULL, 0);
  if (rc == 0 && e->has_retrieval_hint)
    rc = check_hint(e->retrieval_hint_len, NULL, 0);
  if (rc == 0 && e->has_sender_id)
    rc = check_text("sender_id", e->sender_id, e->sender_id_len, LD_SDS_MAX_ID_LEN, NULL, 0);
  return rc;
}

static int check_entries(const ld_sds_history_entry_t *e, size_t n) {
  if (n > 0 && e == NULL)
    return LD_ERR_INVALID_ARG;
  for (size_t i = 0; i < n; i++) {
    int rc = check_entry(&e[i]);
    if (rc != 0)
      return rc;
  }
  return 0;
}

static int check_for_encoding(const ld_sds_message_t *m) {
  if (!view_ok(m->sender_id, m->sender_id_len) || !view_ok(m->message_id, m->message_id_len) ||
      !view_ok(m->channel_id, m->channel_id_len) ||
      (m->has_bloom && !view_ok(m->bloom, m->bloom_len)) ||
      (m->has_content && !view_ok(m->content, m->content_len)))
    return LD_ERR_INVALID_ARG;
  int rc = check_text("sender_id", m->sender_id, m->sender_id_len, LD_SDS_MAX_ID_LEN, NULL, 0);
  if (rc == 0)
    rc = check_text("message_id", m->message_id, m->message_id_len, LD_SDS_MAX_ID_LEN, NULL, 0);
  if (rc == 0)
    rc = check_text("channel_id", m->channel_id, m->channel_id_len, LD_SDS_MAX_ID_LEN, NULL, 0);
  if (rc == 0)
    rc = check_count("causal_history", m->causal_history_len, LD_SDS_MAX_CAUSAL_HISTORY, NULL, 0);
  if (rc == 0)
    rc = check_count("repair_request", m->repair_request_len, LD_SDS_MAX_REPAIR_REQUESTS, NULL, 0);
  if (rc == 0)
    rc = check_entries(m->causal_history, m->causal_history_len);
  if (rc == 0)
    rc = check_entries(m->repair_request, m->repair_request_len);
  return rc;
}

/* ---- encoding ------------------------------------------------------------------------------- */

static ProtobufCBinaryData pb_view(const void *p, size_t n) {
  ProtobufCBinaryData b = {n, (uint8_t *)(n > 0 ? p : NULL)};
  return b;
}

/* A protobuf-c entry borrowing the views of `e`: implicit presence for the ID, explicit for
 * the optional fields. */
static void entry_to_pb(const ld_sds_history_entry_t *e, pb_entry_t *pb) {
  ld__channels__sds_history_entry__init(pb);
  pb->has_message_id = e->message_id_len > 0;
  pb->message_id = pb_view(e->message_id, e->message_id_len);
  pb->has_retrieval_hint = e->has_retrieval_hint;
  pb->retrieval_hint = pb_view(e->retrieval_hint, e->retrieval_hint_len);
  pb->has_sender_id = e->has_sender_id;
  pb->sender_id = pb_view(e->sender_id, e->sender_id_len);
}

/* The protobuf-c form of `m`; the entry structs and pointer arrays live in one block (*block). */
static int message_to_pb(const ld_sds_message_t *m, pb_msg_t *pb, void **block) {
  size_t n = m->causal_history_len + m->repair_request_len;
  pb_entry_t *entries = NULL;
  pb_entry_t **ptrs = NULL;
  *block = NULL;
  if (n > 0) {
    *block = malloc(n * (sizeof *entries + sizeof *ptrs));
    if (*block == NULL)
      return LD_ERR_NOMEM;
    entries = *block;
    ptrs = (pb_entry_t **)(entries + n);
  }
  for (size_t i = 0; i < m->causal_history_len; i++)
    entry_to_pb(&m->causal_history[i], &entries[i]);
  for (size_t i = 0; i < m->repair_request_len; i++)
    entry_to_pb(&m->repair_request[i], &entries[m->causal_history_len + i]);
  for (size_t i = 0; i < n; i++)
    ptrs[i] = &entries[i];
  ld__channels__sds_message__init(pb);
  pb->has_sender_id = m->sender_id_len > 0;
  pb->sender_id = pb_view(m->sender_id, m->sender_id_len);
  pb->has_message_id = m->message_id_len > 0;
  pb->message_id = pb_view(m->message_id, m->message_id_len);
  pb->has_channel_id = m->channel_id_len > 0;
  pb->channel_id = pb_view(m->channel_id, m->channel_id_len);
  pb->has_lamport_timestamp = m->has_lamport;
  pb->lamport_timestamp = m->lamport;
  pb->n_causal_history = m->causal_history_len;
  pb->causal_history = n > 0 ? ptrs : NULL;
  pb->has_bloom_filter = m->has_bloom;
  pb->bloom_filter = pb_view(m->bloom, m->bloom_len);
  pb->n_repair_request = m->repair_request_len;
  pb->repair_request = m->repair_request_len > 0 ? ptrs + m->causal_history_len : NULL;
  pb->has_content = m->has_content;
  pb->content = pb_view(m->content, m->content_len);
  return 0;
}

size_t ld_sds_message_encoded_len(const ld_sds_message_t *m) {
  pb_msg_t pb;
  void *block;
  if (message_to_pb(m, &pb, &block) != 0)
    return 0;
  size_t n = ld__channels__sds_message__get_packed_size(&pb);
  free(block);
  return n;
}

int ld_sds_message_encode(const ld_sds_message_t *m, ld_buf_t *out) {
  if (m == NULL || out == NULL)
    return LD_ERR_INVALID_ARG;
  int rc = check_for_encoding(m);
  if (rc != 0)
    return rc;
  pb_msg_t pb;
  void *block;
  if ((rc = message_to_pb(m, &pb, &block)) != 0)
    return rc;
  size_t n = ld__channels__sds_message__get_packed_size(&pb);
  rc = ld_buf_reserve(out, n);
  if (rc == 0 && n > 0) { /* an empty message appends nothing (out->data may be NULL) */
    ld__channels__sds_message__pack(&pb, out->data + out->len);
    out->len += n;
  }
  free(block);
  return rc;
}

/* ---- decoding: the field walk --------------------------------------------------------------- */

typedef struct field {
  uint64_t number;
  unsigned wire;
  const uint8_t *data; /* WIRE_LEN */
  size_t len;
  uint64_t value; /* WIRE_VARINT */
} field_t;

static int bad(char *why, size_t cap, const char *what) {
  return ld_error_fmt(why, cap, LD_ERR_BAD_PROTOBUF, "%s", what);
}

/* Reads the next field; skips the value of fixed-size wire types. */
static int next_field(ld_cursor_t *c, field_t *f, char *why, size_t cap) {
  uint64_t tag, n;
  if (ld_cursor_pbvarint(c, &tag) != 0)
    return bad(why, cap, "bad field tag");
  memset(f, 0, sizeof *f);
  f->number = tag >> 3;
  f->wire = (unsigned)(tag & 7);
  if (f->number == 0 || f->number > MAX_FIELD_NUMBER)
    return bad(why, cap, "field number out of range");
  switch (f->wire) {
  case WIRE_VARINT:
    return ld_cursor_pbvarint(c, &f->value) == 0 ? 0 : bad(why, cap, "bad varint");
  case WIRE_I64:
    return ld_cursor_skip(c, 8) == 0 ? 0 : bad(why, cap, "truncated field");
  case WIRE_I32:
    return ld_cursor_skip(c, 4) == 0 ? 0 : bad(why, cap, "truncated field");
  case WIRE_LEN:
    if (ld_cursor_pbvarint(c, &n) != 0 || n > ld_cursor_remaining(c))
      return bad(why, cap, "truncated field");
    f->len = (size_t)n;
    return ld_cursor_bytes(c, f->len, &f->data) == 0 ? 0 : bad(why, cap, "truncated field");
  default:
    return bad(why, cap, "group or reserved wire type");
  }
}

/* Every known field has one wire type; a known field sent with another is malformed. */
static int expect_wire(const field_t *f, unsigned wire, const char *name, char *why, size_t cap) {
  if (f->wire == wire)
    return 0;
  return ld_error_fmt(why, cap, LD_ERR_BAD_PROTOBUF, "%s: wire type %u, expected %u", name, f->wire,
                      wire);
}

/* ---- decoding: history entries -------------------------------------------------------------- */

/* Walks one entry's bytes into views of the input (last occurrence wins). */
static int scan_entry(const uint8_t *data, size_t len, ld_sds_history_entry_t *e, char *why,
                      size_t cap) {
  memset(e, 0, sizeof *e);
  e->message_id = k_empty;
  ld_cursor_t c;
  ld_cursor_init(&c, data, len);
  while (!ld_cursor_empty(&c)) {
    field_t f;
    int rc = next_field(&c, &f, why, cap);
    if (rc != 0)
      return rc;
    if (f.number < E_MESSAGE_ID || f.number > E_SENDER)
      continue;
    if ((rc = expect_wire(&f, WIRE_LEN, "history entry field", why, cap)) != 0)
      return rc;
    if (f.number == E_MESSAGE_ID) {
      e->message_id = (const char *)f.data;
      e->message_id_len = f.len;
    } else if (f.number == E_HINT) {
      e->has_retrieval_hint = true;
      e->retrieval_hint = f.data;
      e->retrieval_hint_len = f.len;
    } else {
      e->has_sender_id = true;
      e->sender_id = (const char *)f.data;
      e->sender_id_len = f.len;
    }
  }
  int rc = check_text("history entry message_id", e->message_id, e->message_id_len,
                      LD_SDS_MAX_ID_LEN, why, cap);
  if (rc == 0 && e->has_retrieval_hint)
    rc = check_hint(e->retrieval_hint_len, why, cap);
  if (rc == 0 && e->has_sender_id)
    rc = check_text("history entry sender_id", e->sender_id, e->sender_id_len, LD_SDS_MAX_ID_LEN,
                    why, cap);
  return rc;
}

/* Bytes an entry's owned copy needs beside its struct. */
static size_t entry_storage(const ld_sds_history_entry_t *e) {
  return e->message_id_len + 1 + e->retrieval_hint_len + e->sender_id_len + 1;
}

/* ---- decoding: the message ------------------------------------------------------------------ */

/* What the walk found: views of the last singular fields, entry counts and storage size. */
typedef struct scan {
  ld_sds_message_t view; /* views into the input; entry arrays unset */
  size_t n_history;
  size_t n_repair;
  size_t storage; /* bytes of text and byte fields, NULs included */
} scan_t;

static void keep_text(const field_t *f, const char **p, size_t *n) {
  *p = (const char *)f->data;
  *n = f->len;
}

static int scan_singular(const field_t *f, ld_sds_message_t *v, char *why, size_t cap) {
  int rc =
      expect_wire(f, f->number == F_LAMPORT ? WIRE_VARINT : WIRE_LEN, "message field", why, cap);
  if (rc != 0)
    return rc;
  switch (f->number) {
  case F_SENDER:
    keep_text(f, &v->sender_id, &v->sender_id_len);
    break;
  case F_MESSAGE_ID:
    keep_text(f, &v->message_id, &v->message_id_len);
    break;
  case F_CHANNEL:
    keep_text(f, &v->channel_id, &v->channel_id_len);
    break;
  case F_LAMPORT:
    v->has_lamport = true;
    v->lamport = f->value;
    break;
  case F_BLOOM:
    v->has_bloom = true;
    v->bloom = f->data;
    v->bloom_len = f->len;
    break;
  default: /* F_CONTENT */
    v->has_content = true;
    v->content = f->data;
    v->content_len = f->len;
    break;
  }
  return 0;
}

static int scan_repeated(const field_t *f, scan_t *s, char *why, size_t cap) {
  bool history = f->number == F_HISTORY;
  int rc = expect_wire(f, WIRE_LEN, history ? "causal_history" : "repair_request", why, cap);
  if (rc != 0)
    return rc;
  size_t *count = history ? &s->n_history : &s->n_repair;
  size_t max = history ? LD_SDS_MAX_CAUSAL_HISTORY : LD_SDS_MAX_REPAIR_REQUESTS;
  if ((rc = check_count(history ? "causal_history" : "repair_request", *count + 1, max, why,
                        cap)) != 0)
    return rc;
  ld_sds_history_entry_t e;
  if ((rc = scan_entry(f->data, f->len, &e, why, cap)) != 0)
    return rc;
  (*count)++;
  s->storage += entry_storage(&e);
  return 0;
}

static int scan_field(const field_t *f, scan_t *s, char *why, size_t cap) {
  switch (f->number) {
  case F_SENDER:
  case F_MESSAGE_ID:
  case F_CHANNEL:
  case F_LAMPORT:
  case F_BLOOM:
  case F_CONTENT:
    return scan_singular(f, &s->view, why, cap);
  case F_HISTORY:
  case F_REPAIR:
    return scan_repeated(f, s, why, cap);
  default:
    return 0; /* unknown: skipped */
  }
}

static int check_texts(const ld_sds_message_t *v, char *why, size_t cap) {
  int rc = check_text("sender_id", v->sender_id, v->sender_id_len, LD_SDS_MAX_ID_LEN, why, cap);
  if (rc == 0)
    rc = check_text("message_id", v->message_id, v->message_id_len, LD_SDS_MAX_ID_LEN, why, cap);
  if (rc == 0)
    rc = check_text("channel_id", v->channel_id, v->channel_id_len, LD_SDS_MAX_ID_LEN, why, cap);
  return rc;
}

static int scan_message(const uint8_t *data, size_t len, scan_t *s, char *why, size_t cap) {
  memset(s, 0, sizeof *s);
  ld_sds_message_init(&s->view);
  ld_cursor_t c;
  ld_cursor_init(&c, data, len);
  while (!ld_cursor_empty(&c)) {
    field_t f;
    int rc = next_field(&c, &f, why, cap);
    if (rc == 0)
      rc = scan_field(&f, s, why, cap);
    if (rc != 0)
      return rc;
  }
  const ld_sds_message_t *v = &s->view;
  s->storage +=
      v->sender_id_len + v->message_id_len + v->channel_id_len + 3 + v->bloom_len + v->content_len;
  return check_texts(v, why, cap);
}

/* ---- decoding: the owned copy --------------------------------------------------------------- */

/* A bump allocator over the message's storage block. */
typedef struct arena {
  uint8_t *p;
} arena_t;

static const char *own_text(arena_t *a, const char *src, size_t n) {
  char *dst = (char *)a->p;
  if (n > 0)
    memcpy(dst, src, n);
  dst[n] = '\0';
  a->p += n + 1;
  return dst;
}

static const uint8_t *own_bytes(arena_t *a, bool present, const uint8_t *src, size_t n) {
  if (!present || n == 0)
    return EMPTY_BYTES;
  uint8_t *dst = a->p;
  memcpy(dst, src, n);
  a->p += n;
  return dst;
}

static void own_entry(arena_t *a, const ld_sds_history_entry_t *src, ld_sds_history_entry_t *dst) {
  *dst = *src;
  dst->message_id = own_text(a, src->message_id, src->message_id_len);
  dst->retrieval_hint =
      own_bytes(a, src->has_retrieval_hint, src->retrieval_hint, src->retrieval_hint_len);
  dst->sender_id = own_text(a, src->has_sender_id ? src->sender_id : k_empty, src->sender_id_len);
}

/* Second walk: copies the entries (already validated by the scan) into the arena. */
static void own_entries(const uint8_t *data, size_t len, arena_t *a, ld_sds_history_entry_t *hist,
                        ld_sds_history_entry_t *repair) {
  size_t nh = 0, nr = 0;
  ld_cursor_t c;
  ld_cursor_init(&c, data, len);
  while (!ld_cursor_empty(&c)) {
    field_t f;
    ld_sds_history_entry_t e;
    next_field(&c, &f, NULL, 0);
    if (f.number != F_HISTORY && f.number != F_REPAIR)
      continue;
    scan_entry(f.data, f.len, &e, NULL, 0);
    own_entry(a, &e, f.number == F_HISTORY ? &hist[nh++] : &repair[nr++]);
  }
}

static int own_message(const uint8_t *data, size_t len, const scan_t *s, ld_sds_message_t *out) {
  size_t n_entries = s->n_history + s->n_repair;
  size_t head = n_entries * sizeof(ld_sds_history_entry_t);
  uint8_t *block = malloc(head + s->storage);
  if (block == NULL)
    return LD_ERR_NOMEM;
  ld_sds_history_entry_t *entries = (ld_sds_history_entry_t *)block;
  arena_t a = {block + head};
  const ld_sds_message_t *v = &s->view;
  *out = *v;
  out->sender_id = own_text(&a, v->sender_id, v->sender_id_len);
  out->message_id = own_text(&a, v->message_id, v->message_id_len);
  out->channel_id = own_text(&a, v->channel_id, v->channel_id_len);
  out->bloom = own_bytes(&a, v->has_bloom, v->bloom, v->bloom_len);
  out->content = own_bytes(&a, v->has_content, v->content, v->content_len);
  own_entries(data, len, &a, entries, entries + s->n_history);
  out->causal_history = s->n_history > 0 ? entries : NULL;
  out->causal_history_len = s->n_history;
  out->repair_request = s->n_repair > 0 ? entries + s->n_history : NULL;
  out->repair_request_len = s->n_repair;
  out->storage = block;
  return 0;
}

int ld_sds_message_decode(const uint8_t *data, size_t len, ld_sds_message_t *out, char *why,
                          size_t why_cap) {
  if (out == NULL || (data == NULL && len > 0))
    return ld_error_fmt(why, why_cap, LD_ERR_INVALID_ARG, "invalid argument");
  ld_sds_message_clear(out);
  if (len > LD_SDS_MAX_WIRE_SIZE)
    return ld_error_fmt(why, why_cap, LD_ERR_TOO_LARGE, "%zu bytes, at most %u", len,
                        LD_SDS_MAX_WIRE_SIZE);
  scan_t s;
  int rc = scan_message(data, len, &s, why, why_cap);
  if (rc == 0 && (rc = own_message(data, len, &s, out)) != 0)
    ld_error_fmt(why, why_cap, rc, "out of memory");
  return rc;
}
