/* mplex (/mplex/6.7.0) session engine.
 *
 * Messages: uvarint(stream_id << 3 | flag) ‖ uvarint(len) ‖ data[len], both varints
 * multiformats uvarints of at most 9 bytes. Flags: 0 NewStream, 1 MessageReceiver,
 * 2 MessageInitiator, 3 CloseReceiver, 4 CloseInitiator, 5 ResetReceiver, 6 ResetInitiator.
 *
 * Each side numbers its own streams from 0, so a stream is named by (id, who opened it). The
 * engine's handle is `id << 1 | opened_by_remote`: streams we open have even handles
 * (id 0 → 0, id 1 → 2), streams the remote opens have odd ones (id 0 → 1). An inbound message
 * with an odd flag (1, 3, 5) addresses a stream we opened, an even flag (0, 2, 4, 6) one the
 * remote opened. We send the Initiator variants on streams we opened and the Receiver variants
 * on the others. NewStream carries the decimal ID as the stream name.
 *
 * Input: headers go through the cursor (at most 18 bytes wait across reads); message data is
 * never buffered but passed to on_stream_data straight from the caller's input, so a message may
 * be delivered in pieces. A message longer than cfg.max_frame is fatal (LD_ERR_FRAME_TOO_LARGE)
 * as soon as its header arrives; a bad varint is LD_ERR_MALFORMED; flag 7 or a NewStream for a
 * live stream is LD_ERR_PROTOCOL. Messages for unknown streams are skipped. A NewStream beyond
 * cfg.max_streams, or after go_away, is answered with ResetReceiver.
 *
 * Output: no flow control, write accepts everything and splits it into messages of at most
 * LD_MPLEX_MAX_MESSAGE bytes. go_away resets every stream and refuses new ones. mplex has no
 * timers. Fatal errors are sticky: later reads return the same code. */
#include "p2p/muxer.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/error.h"
#include "base/hashmap.h"
#include "base/varint.h"
#include "p2p/muxer_internal.h"

#define LD_MPLEX_MAX_HEADER (2 * LD_UVARINT_MAX_LEN)
#define LD_MPLEX_MAX_MESSAGE (1024u * 1024u) /* largest message we send (js and nim limit) */
#define LD_MPLEX_MAX_STREAM_ID ((UINT64_C(1) << 60) - 1)
#define LD_MPLEX_NAME_MAX 21 /* decimal uint64 and NUL */

enum {
  MPLEX_NEW_STREAM = 0,
  MPLEX_MESSAGE_RECEIVER = 1,
  MPLEX_MESSAGE_INITIATOR = 2,
  MPLEX_CLOSE_RECEIVER = 3,
  MPLEX_CLOSE_INITIATOR = 4,
  MPLEX_RESET_RECEIVER = 5,
  MPLEX_RESET_INITIATOR = 6,
};

typedef struct mstream {
  uint64_t handle;
  bool local_closed;
  bool remote_closed;
} mstream_t;

typedef struct mplex {
  ld_muxer_config_t cfg;
  const ld_muxer_callbacks_t *cb;
  void *user_data;
  bool in_read;
  bool going_away;
  int err;
  ld_hashmap_t *streams;
  mstream_t *last; /* lookup cache */
  ld_buf_t out;
  uint64_t next_id;
  uint8_t hdr[LD_MPLEX_MAX_HEADER]; /* a header split across reads */
  size_t hdr_len;
  uint64_t body_left; /* message bytes still to come */
  uint64_t body_handle;
  bool body_deliver;
} mplex_t;

static inline mplex_t *as_mplex(ld_muxer_t *m) {
  return (mplex_t *)(void *)m;
}

static inline const mplex_t *as_cmplex(const ld_muxer_t *m) {
  return (const mplex_t *)(const void *)m;
}

#define CALL(x, name, ...) LD_MUXER_CALL((x)->cb, (x)->user_data, name, __VA_ARGS__)

static inline uint64_t handle_of(uint64_t id, bool opened_by_remote) {
  return id << 1 | (opened_by_remote ? 1u : 0u);
}

/* The flag we send on stream `h`: the Receiver variant on streams the remote opened, else the
 * Initiator one (always Receiver + 1). */
static inline uint8_t our_flag(uint64_t h, uint8_t receiver_flag) {
  return (h & 1) ? receiver_flag : (uint8_t)(receiver_flag + 1);
}

/* ---- output -------------------------------------------------------------------------------- */

static uint8_t *put_message(uint8_t *p, uint64_t id, uint8_t flag, const uint8_t *data,
                            size_t len) {
  p += ld_varint_encode(id << 3 | flag, p);
  p += ld_varint_encode(len, p);
  if (len > 0)
    memcpy(p, data, len);
  return p + len;
}

static int send_message(mplex_t *x, uint64_t id, uint8_t flag, const uint8_t *data, size_t len) {
  int rc = ld_buf_reserve(&x->out, LD_MPLEX_MAX_HEADER + len);
  if (rc != 0)
    return rc;
  uint8_t *end = put_message(x->out.data + x->out.len, id, flag, data, len);
  x->out.len = (size_t)(end - x->out.data);
  return 0;
}

/* ---- stream table -------------------------------------------------------------------------- */

static mstream_t *find(mplex_t *x, uint64_t h) {
  if (x->last != NULL && x->last->handle == h)
    return x->last;
  mstream_t *s = ld_hashmap_get_u64(x->streams, h);
  if (s != NULL)
    x->last = s;
  return s;
}

static mstream_t *stream_new(mplex_t *x, uint64_t h) {
  mstream_t *s = calloc(1, sizeof *s);
  if (s == NULL)
    return NULL;
  s->handle = h;
  if (ld_hashmap_put_u64(x->streams, h, s, NULL) != 0) {
    free(s);
    return NULL;
  }
  return s;
}

static void forget(mplex_t *x, mstream_t *s) {
  ld_hashmap_remove_u64(x->streams, s->handle);
  if (x->last == s)
    x->last = NULL;
  free(s);
}

static int reset_stream(mplex_t *x, mstream_t *s) {
  int rc = send_message(x, s->handle >> 1, our_flag(s->handle, MPLEX_RESET_RECEIVER), NULL, 0);
  if (rc == 0)
    forget(x, s);
  return rc;
}

/* ---- inbound messages ---------------------------------------------------------------------- */

static int accept_stream(mplex_t *x, uint64_t id) {
  uint64_t h = handle_of(id, true);
  if (find(x, h) != NULL)
    return LD_ERR_PROTOCOL;
  if (x->going_away || ld_hashmap_size(x->streams) >= x->cfg.max_streams)
    return send_message(x, id, MPLEX_RESET_RECEIVER, NULL, 0);
  if (stream_new(x, h) == NULL)
    return LD_ERR_NOMEM;
  return CALL(x, on_stream_open, h);
}

static int remote_close(mplex_t *x, mstream_t *s) {
  if (s->remote_closed)
    return 0;
  uint64_t h = s->handle;
  s->remote_closed = true;
  if (s->local_closed)
    forget(x, s);
  return CALL(x, on_stream_eof, h);
}

static int remote_reset(mplex_t *x, mstream_t *s) {
  uint64_t h = s->handle;
  forget(x, s);
  return CALL(x, on_stream_reset, h);
}

static int handle_message(mplex_t *x, uint64_t header, uint64_t len) {
  uint8_t flag = (uint8_t)(header & 7);
  uint64_t id = header >> 3;
  if (len > x->cfg.max_frame)
    return LD_ERR_FRAME_TOO_LARGE;
  if (flag > MPLEX_RESET_INITIATOR)
    return LD_ERR_PROTOCOL;
  x->body_left = len;
  x->body_deliver = false;
  if (flag == MPLEX_NEW_STREAM)
    return accept_stream(x, id);
  uint64_t h = handle_of(id, (flag & 1) == 0);
  mstream_t *s = find(x, h);
  if (s == NULL)
    return 0;
  switch (flag) {
  case MPLEX_MESSAGE_RECEIVER:
  case MPLEX_MESSAGE_INITIATOR:
    x->body_handle = h;
    x->body_deliver = !s->remote_closed;
    return 0;
  case MPLEX_CLOSE_RECEIVER:
  case MPLEX_CLOSE_INITIATOR:
    return remote_close(x, s);
  default:
    return remote_reset(x, s);
  }
}

static int parse_header(ld_cursor_t *c, uint64_t *header, uint64_t *len) {
  size_t start = c->pos;
  int rc = ld_cursor_uvarint(c, header);
  if (rc == 0)
    rc = ld_cursor_uvarint(c, len);
  if (rc != 0)
    c->pos = start;
  return rc;
}

static int read_split_header(mplex_t *x, ld_cursor_t *c) {
  size_t n = sizeof x->hdr - x->hdr_len;
  if (n > ld_cursor_remaining(c))
    n = ld_cursor_remaining(c);
  ld_cursor_t peek = *c;
  ld_cursor_copy(&peek, x->hdr + x->hdr_len, n);
  ld_cursor_t hc;
  ld_cursor_init(&hc, x->hdr, x->hdr_len + n);
  uint64_t header, len;
  int rc = parse_header(&hc, &header, &len);
  if (rc == LD_ERR_TRUNCATED && x->hdr_len + n < sizeof x->hdr) {
    ld_cursor_skip(c, n);
    x->hdr_len += n;
    return 0;
  }
  if (rc != 0)
    return LD_ERR_MALFORMED;
  ld_cursor_skip(c, hc.pos - x->hdr_len);
  x->hdr_len = 0;
  return handle_message(x, header, len);
}

static int read_header(mplex_t *x, ld_cursor_t *c) {
  if (x->hdr_len > 0)
    return read_split_header(x, c);
  uint64_t header, len;
  int rc = parse_header(c, &header, &len);
  if (rc == 0)
    return handle_message(x, header, len);
  size_t n = ld_cursor_remaining(c);
  if (rc != LD_ERR_TRUNCATED || n >= sizeof x->hdr)
    return LD_ERR_MALFORMED;
  ld_cursor_copy(c, x->hdr, n);
  x->hdr_len = n;
  return 0;
}

static int read_body(mplex_t *x, ld_cursor_t *c) {
  size_t n = ld_cursor_remaining(c);
  if (n > x->body_left)
    n = (size_t)x->body_left;
  const uint8_t *p;
  ld_cursor_bytes(c, n, &p);
  x->body_left -= n;
  if (!x->body_deliver)
    return 0;
  if (find(x, x->body_handle) == NULL) {
    x->body_deliver = false;
    return 0;
  }
  return CALL(x, on_stream_data, x->body_handle, p, n);
}

/* ---- operations ---------------------------------------------------------------------------- */

static ld_muxer_t *mplex_create(bool initiator, const ld_muxer_config_t *cfg,
                                const ld_muxer_callbacks_t *cb, void *user_data) {
  (void)initiator;
  mplex_t *x = calloc(1, sizeof *x);
  if (x == NULL)
    return NULL;
  x->streams = ld_hashmap_new(16);
  if (x->streams == NULL) {
    free(x);
    return NULL;
  }
  if (cfg != NULL)
    x->cfg = *cfg;
  else
    ld_muxer_config_default(&x->cfg);
  x->cb = cb != NULL ? cb : &ld_muxer_no_callbacks;
  x->user_data = user_data;
  ld_buf_init(&x->out);
  return (ld_muxer_t *)(void *)x;
}

static void mplex_destroy(ld_muxer_t *m) {
  if (m == NULL)
    return;
  mplex_t *x = as_mplex(m);
  ld_hashmap_free(x->streams, free);
  ld_buf_clear(&x->out);
  free(x);
}

static int mplex_read(ld_muxer_t *m, const uint8_t *data, size_t len, uint64_t now_ms) {
  (void)now_ms;
  mplex_t *x = as_mplex(m);
  if (x->err != 0)
    return x->err;
  if (x->in_read)
    return LD_ERR_STATE;
  ld_cursor_t c;
  ld_cursor_init(&c, data, len);
  x->in_read = true;
  int rc = 0;
  while (rc == 0 && !ld_cursor_empty(&c))
    rc = x->body_left > 0 ? read_body(x, &c) : read_header(x, &c);
  x->in_read = false;
  if (rc != 0)
    x->err = rc;
  return rc;
}

static int mplex_open_stream(ld_muxer_t *m, uint64_t *sid) {
  mplex_t *x = as_mplex(m);
  if (x->err != 0)
    return x->err;
  if (x->going_away)
    return LD_ERR_GOAWAY;
  if (ld_hashmap_size(x->streams) >= x->cfg.max_streams || x->next_id > LD_MPLEX_MAX_STREAM_ID)
    return LD_ERR_TOO_MANY_STREAMS;
  char name[LD_MPLEX_NAME_MAX];
  int n = snprintf(name, sizeof name, "%" PRIu64, x->next_id);
  int rc = ld_buf_reserve(&x->out, LD_MPLEX_MAX_HEADER + (size_t)n);
  if (rc != 0)
    return rc;
  mstream_t *s = stream_new(x, handle_of(x->next_id, false));
  if (s == NULL)
    return LD_ERR_NOMEM;
  send_message(x, x->next_id, MPLEX_NEW_STREAM, (const uint8_t *)name, (size_t)n);
  x->next_id++;
  *sid = s->handle;
  return 0;
}

static int64_t mplex_write(ld_muxer_t *m, uint64_t sid, const uint8_t *data, size_t len) {
  mplex_t *x = as_mplex(m);
  if (x->err != 0)
    return x->err;
  mstream_t *s = find(x, sid);
  if (s == NULL)
    return LD_ERR_NOT_FOUND;
  if (s->local_closed)
    return LD_ERR_CLOSED;
  if (len == 0)
    return 0;
  if (len > (size_t)INT64_MAX / 2)
    return LD_ERR_INVALID_ARG;
  size_t messages = (len + LD_MPLEX_MAX_MESSAGE - 1) / LD_MPLEX_MAX_MESSAGE;
  int rc = ld_buf_reserve(&x->out, len + messages * LD_MPLEX_MAX_HEADER);
  if (rc != 0)
    return rc;
  uint8_t flag = our_flag(s->handle, MPLEX_MESSAGE_RECEIVER);
  uint8_t *p = x->out.data + x->out.len;
  for (size_t off = 0; off < len;) {
    size_t chunk = len - off < LD_MPLEX_MAX_MESSAGE ? len - off : LD_MPLEX_MAX_MESSAGE;
    p = put_message(p, s->handle >> 1, flag, data + off, chunk);
    off += chunk;
  }
  x->out.len = (size_t)(p - x->out.data);
  return (int64_t)len;
}

static int mplex_close_write(ld_muxer_t *m, uint64_t sid) {
  mplex_t *x = as_mplex(m);
  mstream_t *s = find(x, sid);
  if (s == NULL)
    return LD_ERR_NOT_FOUND;
  if (s->local_closed)
    return LD_ERR_CLOSED;
  int rc = send_message(x, sid >> 1, our_flag(sid, MPLEX_CLOSE_RECEIVER), NULL, 0);
  if (rc != 0)
    return rc;
  s->local_closed = true;
  if (s->remote_closed)
    forget(x, s);
  return 0;
}

static int mplex_reset(ld_muxer_t *m, uint64_t sid) {
  mplex_t *x = as_mplex(m);
  mstream_t *s = find(x, sid);
  return s != NULL ? reset_stream(x, s) : LD_ERR_NOT_FOUND;
}

static int mplex_consumed(ld_muxer_t *m, uint64_t sid, size_t n) {
  (void)n;
  return find(as_mplex(m), sid) != NULL ? 0 : LD_ERR_NOT_FOUND;
}

static int mplex_go_away(ld_muxer_t *m, uint32_t code) {
  (void)code;
  mplex_t *x = as_mplex(m);
  x->going_away = true;
  ld_hashmap_iter_t it;
  ld_hashmap_iter_init(&it);
  void *value;
  while (ld_hashmap_next(x->streams, &it, NULL, NULL, &value)) {
    int rc = reset_stream(x, value);
    if (rc != 0)
      return rc;
  }
  return 0;
}

static int mplex_take_output(ld_muxer_t *m, ld_buf_t *out) {
  return ld_muxer_move_output(&as_mplex(m)->out, out);
}

static size_t mplex_pending_output(const ld_muxer_t *m) {
  return as_cmplex(m)->out.len;
}

static uint64_t mplex_next_deadline(const ld_muxer_t *m) {
  (void)m;
  return UINT64_MAX;
}

static int mplex_handle_timeout(ld_muxer_t *m, uint64_t now_ms) {
  (void)now_ms;
  return as_mplex(m)->err;
}

static size_t mplex_stream_count(const ld_muxer_t *m) {
  return ld_hashmap_size(as_cmplex(m)->streams);
}

const ld_muxer_ops_t ld_mplex_ops = {
    .protocol_id = "/mplex/6.7.0",
    .create = mplex_create,
    .destroy = mplex_destroy,
    .read = mplex_read,
    .open_stream = mplex_open_stream,
    .write = mplex_write,
    .close_write = mplex_close_write,
    .reset = mplex_reset,
    .consumed = mplex_consumed,
    .go_away = mplex_go_away,
    .take_output = mplex_take_output,
    .pending_output = mplex_pending_output,
    .next_deadline = mplex_next_deadline,
    .handle_timeout = mplex_handle_timeout,
    .stream_count = mplex_stream_count,
};
