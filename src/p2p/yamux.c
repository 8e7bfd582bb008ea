/* yamux (/yamux/1.0.0) session engine.
 *
 * Frames: a 12-byte big-endian header (version 0, type, flags, stream ID, length) followed by
 * `length` payload bytes for DATA frames only. The dialer (client) opens odd stream IDs, the
 * listener even ones; a stream's handle is its 32-bit yamux ID.
 *
 * Input: headers go through the cursor; a header split across reads waits in a 12-byte buffer.
 * DATA payload is never buffered: it is passed to on_stream_data straight from the caller's input
 * as it arrives, so one frame may be delivered in several pieces.
 *
 * Streams: open_stream queues WINDOW_UPDATE|SYN at once and data may follow immediately. An
 * inbound SYN is answered at once with WINDOW_UPDATE|ACK, before on_stream_open, so our first
 * frame of every accepted stream carries ACK and a peer's un-ACKed backlog never fills. Both
 * carry as delta what our initial receive window exceeds the 256 KiB every peer assumes. A SYN
 * with our parity, on ID 0, or on a live ID is fatal (LD_ERR_PROTOCOL); a SYN beyond
 * max_streams, or after we sent GO_AWAY, is answered with RST. Frames without SYN for unknown
 * streams are ignored (DATA payload skipped). The length of an RST frame is never window credit.
 *
 * Flow control: a stream may send cfg.send_window bytes until the peer grants more; DATA frames
 * are at most 64 KiB. Our receive window starts at max(cfg.recv_window, 256 KiB) (windows are
 * capped at 1 GiB); a DATA frame longer than what remains of it is fatal
 * (LD_ERR_WINDOW_EXCEEDED). The window, not cfg.max_frame, bounds inbound frames (payload is
 * never buffered). Credit returns through `consumed`: once at least half the current window has
 * been consumed, one WINDOW_UPDATE returns it all. Growth rule: if that update comes less than
 * max(LD_YAMUX_GROW_MIN_MS, 4 x RTT) after the previous one (or after the stream opened), the
 * window doubles, up to cfg.max_recv_window, and the extra is added to the update. RTT is the
 * last keep-alive round trip; the clock is the latest now_ms given to read or handle_timeout.
 *
 * Keep-alive (cfg.keepalive_ms > 0): next_deadline is 0 until the first ping, so the session
 * measures RTT at once; then one PING|SYN every keepalive_ms. A ping still unanswered when the
 * next one is due makes handle_timeout fail with LD_ERR_TIMEOUT. PING|SYN is answered with
 * PING|ACK echoing the value; an ACK that matches no outstanding ping is ignored.
 *
 * Fatal errors are sticky: later reads return the same code. Protocol errors queue
 * GO_AWAY(protocol error), other errors (callbacks, memory) GO_AWAY(internal error), a ping
 * timeout none. */
#include "p2p/muxer.h"

#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/error.h"
#include "base/hashmap.h"
#include "p2p/muxer_internal.h"

#define LD_YAMUX_HEADER_LEN 12
#define LD_YAMUX_VERSION 0
#define LD_YAMUX_PROTOCOL_WINDOW 262144u /* the window every peer assumes for a new stream */
#define LD_YAMUX_MAX_DATA_FRAME 65536u   /* largest DATA payload we send */
#define LD_YAMUX_GROW_MIN_MS 10u
#define LD_YAMUX_GROW_RTTS 4u
#define LD_YAMUX_MAX_STREAM_ID 0xffffffffu
#define LD_YAMUX_MAX_WRITE ((uint64_t)INT64_MAX / 2)
#define LD_YAMUX_WINDOW_CAP (1u << 30) /* keeps window arithmetic within 32 bits */

enum { YAMUX_DATA = 0, YAMUX_WINDOW_UPDATE = 1, YAMUX_PING = 2, YAMUX_GO_AWAY = 3 };
enum { YAMUX_SYN = 0x1, YAMUX_ACK = 0x2, YAMUX_FIN = 0x4, YAMUX_RST = 0x8 };
enum { YAMUX_GOAWAY_PROTOCOL = 1, YAMUX_GOAWAY_INTERNAL = 2 };

typedef struct yamux_hdr {
  uint8_t version;
  uint8_t type;
  uint16_t flags;
  uint32_t id;
  uint32_t length;
} yamux_hdr_t;

typedef struct ystream {
  uint32_t id;
  bool local_closed;
  bool remote_closed;
  uint64_t send_window; /* bytes we may still send */
  uint32_t recv_window; /* current size of our receive window */
  uint32_t recv_avail;  /* bytes the peer may still send */
  uint32_t unconsumed;  /* delivered, not yet reported through consumed */
  uint32_t credit;      /* consumed, not yet returned with WINDOW_UPDATE */
  uint64_t epoch_ms;    /* when the window was last reopened */
} ystream_t;

typedef struct yamux {
  ld_muxer_config_t cfg;
  const ld_muxer_callbacks_t *cb;
  void *user_data;
  bool client;
  bool in_read;
  bool local_goaway;
  bool remote_goaway;
  int err;
  ld_hashmap_t *streams;
  ystream_t *last; /* lookup cache */
  ld_buf_t out;
  uint64_t next_id;
  uint64_t now;
  uint8_t hdr[LD_YAMUX_HEADER_LEN]; /* a header split across reads */
  size_t hdr_len;
  uint32_t body_left; /* DATA payload bytes still to come */
  uint32_t body_id;
  bool body_deliver;
  bool body_fin;
  uint64_t next_ping_at;
  uint64_t ping_sent_at;
  uint32_t ping_value;
  bool ping_outstanding;
  uint64_t rtt_ms; /* UINT64_MAX until measured */
} yamux_t;

static inline yamux_t *as_yamux(ld_muxer_t *m) {
  return (yamux_t *)(void *)m;
}

static inline const yamux_t *as_cyamux(const ld_muxer_t *m) {
  return (const yamux_t *)(const void *)m;
}

#define CALL(y, name, ...) LD_MUXER_CALL((y)->cb, (y)->user_data, name, __VA_ARGS__)

/* ---- output -------------------------------------------------------------------------------- */

static void put_be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

static void put_header(uint8_t *p, uint8_t type, uint16_t flags, uint32_t id, uint32_t len) {
  p[0] = LD_YAMUX_VERSION;
  p[1] = type;
  p[2] = (uint8_t)(flags >> 8);
  p[3] = (uint8_t)flags;
  put_be32(p + 4, id);
  put_be32(p + 8, len);
}

static int send_frame(yamux_t *y, uint8_t type, uint16_t flags, uint32_t id, uint32_t len) {
  int rc = ld_buf_reserve(&y->out, LD_YAMUX_HEADER_LEN);
  if (rc != 0)
    return rc;
  put_header(y->out.data + y->out.len, type, flags, id, len);
  y->out.len += LD_YAMUX_HEADER_LEN;
  return 0;
}

/* ---- stream table -------------------------------------------------------------------------- */

static ystream_t *find(yamux_t *y, uint64_t sid) {
  if (y->last != NULL && y->last->id == sid)
    return y->last;
  if (sid == 0 || sid > LD_YAMUX_MAX_STREAM_ID)
    return NULL;
  ystream_t *s = ld_hashmap_get_u64(y->streams, sid);
  if (s != NULL)
    y->last = s;
  return s;
}

static ystream_t *stream_new(yamux_t *y, uint32_t id) {
  ystream_t *s = calloc(1, sizeof *s);
  if (s == NULL)
    return NULL;
  s->id = id;
  s->send_window = y->cfg.send_window;
  s->recv_window = y->cfg.recv_window;
  s->recv_avail = y->cfg.recv_window;
  s->epoch_ms = y->now;
  if (ld_hashmap_put_u64(y->streams, id, s, NULL) != 0) {
    free(s);
    return NULL;
  }
  return s;
}

static void forget(yamux_t *y, ystream_t *s) {
  ld_hashmap_remove_u64(y->streams, s->id);
  if (y->last == s)
    y->last = NULL;
  free(s);
}

static uint32_t initial_delta(const yamux_t *y) {
  return y->cfg.recv_window - LD_YAMUX_PROTOCOL_WINDOW;
}

/* ---- flow control -------------------------------------------------------------------------- */

static uint32_t window_growth(const yamux_t *y, const ystream_t *s) {
  uint64_t limit = LD_YAMUX_GROW_MIN_MS;
  if (y->rtt_ms < UINT64_MAX / LD_YAMUX_GROW_RTTS && y->rtt_ms * LD_YAMUX_GROW_RTTS > limit)
    limit = y->rtt_ms * LD_YAMUX_GROW_RTTS;
  if (y->now - s->epoch_ms >= limit)
    return 0;
  uint64_t target = (uint64_t)s->recv_window * 2;
  if (target > y->cfg.max_recv_window)
    target = y->cfg.max_recv_window;
  return target > s->recv_window ? (uint32_t)(target - s->recv_window) : 0;
}

static int send_window_update(yamux_t *y, ystream_t *s) {
  uint32_t grow = window_growth(y, s);
  uint32_t delta = s->credit + grow;
  int rc = send_frame(y, YAMUX_WINDOW_UPDATE, 0, s->id, delta);
  if (rc != 0)
    return rc;
  s->recv_window += grow;
  s->recv_avail += delta;
  s->credit = 0;
  s->epoch_ms = y->now;
  return 0;
}

static int grant_window(yamux_t *y, ystream_t *s, uint32_t delta) {
  bool was_exhausted = s->send_window == 0;
  s->send_window += delta;
  if (!was_exhausted || delta == 0 || s->local_closed)
    return 0;
  return CALL(y, on_stream_writable, s->id);
}

/* ---- inbound frames ------------------------------------------------------------------------ */

static int remote_fin(yamux_t *y, ystream_t *s) {
  if (s->remote_closed)
    return 0;
  uint32_t id = s->id;
  s->remote_closed = true;
  if (s->local_closed)
    forget(y, s);
  return CALL(y, on_stream_eof, id);
}

static int remote_reset(yamux_t *y, ystream_t *s) {
  uint32_t id = s->id;
  forget(y, s);
  return CALL(y, on_stream_reset, id);
}

static int accept_stream(yamux_t *y, uint32_t id) {
  bool remote_parity = (id & 1u) == (y->client ? 0u : 1u);
  if (!remote_parity || find(y, id) != NULL)
    return LD_ERR_PROTOCOL;
  if (y->local_goaway || ld_hashmap_size(y->streams) >= y->cfg.max_streams)
    return send_frame(y, YAMUX_WINDOW_UPDATE, YAMUX_RST, id, 0);
  int rc = ld_buf_reserve(&y->out, LD_YAMUX_HEADER_LEN);
  if (rc != 0)
    return rc;
  if (stream_new(y, id) == NULL)
    return LD_ERR_NOMEM;
  send_frame(y, YAMUX_WINDOW_UPDATE, YAMUX_ACK, id, initial_delta(y));
  return CALL(y, on_stream_open, id);
}

static int finish_body(yamux_t *y) {
  if (!y->body_deliver || !y->body_fin)
    return 0;
  ystream_t *s = find(y, y->body_id);
  return s != NULL ? remote_fin(y, s) : 0;
}

static int start_body(yamux_t *y, ystream_t *s, const yamux_hdr_t *h) {
  y->body_id = h->id;
  y->body_left = h->length;
  y->body_deliver = false;
  y->body_fin = false;
  if (s == NULL)
    return 0;
  if (h->flags & YAMUX_RST)
    return remote_reset(y, s);
  if (!s->remote_closed) {
    if (h->length > s->recv_avail)
      return LD_ERR_WINDOW_EXCEEDED;
    s->recv_avail -= h->length;
    y->body_deliver = true;
    y->body_fin = (h->flags & YAMUX_FIN) != 0;
  }
  return h->length == 0 ? finish_body(y) : 0;
}

static int on_stream_frame(yamux_t *y, const yamux_hdr_t *h) {
  if (h->id == 0)
    return LD_ERR_PROTOCOL;
  if (h->flags & YAMUX_SYN) {
    int rc = accept_stream(y, h->id);
    if (rc != 0)
      return rc;
  }
  ystream_t *s = find(y, h->id);
  if (h->type == YAMUX_DATA)
    return start_body(y, s, h);
  if (s == NULL)
    return 0;
  if (h->flags & YAMUX_RST)
    return remote_reset(y, s);
  int rc = grant_window(y, s, h->length);
  if (rc != 0 || !(h->flags & YAMUX_FIN))
    return rc;
  s = find(y, h->id);
  return s != NULL ? remote_fin(y, s) : 0;
}

static int on_ping(yamux_t *y, const yamux_hdr_t *h) {
  if (h->flags & YAMUX_SYN)
    return send_frame(y, YAMUX_PING, YAMUX_ACK, 0, h->length);
  if ((h->flags & YAMUX_ACK) && y->ping_outstanding && h->length == y->ping_value) {
    y->ping_outstanding = false;
    y->rtt_ms = y->now - y->ping_sent_at;
  }
  return 0;
}

static int on_go_away(yamux_t *y, const yamux_hdr_t *h) {
  y->remote_goaway = true;
  return CALL(y, on_go_away, h->length);
}

static int parse_header(const uint8_t *p, yamux_hdr_t *h) {
  ld_cursor_t c;
  ld_cursor_init(&c, p, LD_YAMUX_HEADER_LEN);
  if (ld_cursor_u8(&c, &h->version) != 0 || ld_cursor_u8(&c, &h->type) != 0 ||
      ld_cursor_be16(&c, &h->flags) != 0 || ld_cursor_be32(&c, &h->id) != 0 ||
      ld_cursor_be32(&c, &h->length) != 0)
    return LD_ERR_TRUNCATED;
  return 0;
}

static int handle_header(yamux_t *y, const uint8_t *p) {
  yamux_hdr_t h;
  int rc = parse_header(p, &h);
  if (rc != 0)
    return rc;
  if (h.version != LD_YAMUX_VERSION)
    return LD_ERR_PROTOCOL;
  switch (h.type) {
  case YAMUX_DATA:
  case YAMUX_WINDOW_UPDATE:
    return on_stream_frame(y, &h);
  case YAMUX_PING:
    return on_ping(y, &h);
  case YAMUX_GO_AWAY:
    return on_go_away(y, &h);
  default:
    return LD_ERR_PROTOCOL;
  }
}

static int read_header(yamux_t *y, ld_cursor_t *c) {
  const uint8_t *p;
  if (y->hdr_len == 0 && ld_cursor_bytes(c, LD_YAMUX_HEADER_LEN, &p) == 0)
    return handle_header(y, p);
  size_t n = LD_YAMUX_HEADER_LEN - y->hdr_len;
  if (n > ld_cursor_remaining(c))
    n = ld_cursor_remaining(c);
  ld_cursor_copy(c, y->hdr + y->hdr_len, n);
  y->hdr_len += n;
  if (y->hdr_len < LD_YAMUX_HEADER_LEN)
    return 0;
  y->hdr_len = 0;
  return handle_header(y, y->hdr);
}

static int read_body(yamux_t *y, ld_cursor_t *c) {
  size_t n = ld_cursor_remaining(c);
  if (n > y->body_left)
    n = y->body_left;
  const uint8_t *p;
  ld_cursor_bytes(c, n, &p);
  y->body_left -= (uint32_t)n;
  if (y->body_deliver) {
    ystream_t *s = find(y, y->body_id);
    if (s == NULL) {
      y->body_deliver = false;
    } else {
      s->unconsumed += (uint32_t)n;
      int rc = CALL(y, on_stream_data, s->id, p, n);
      if (rc != 0)
        return rc;
    }
  }
  return y->body_left == 0 ? finish_body(y) : 0;
}

static bool is_protocol_error(int err) {
  return err == LD_ERR_PROTOCOL || err == LD_ERR_WINDOW_EXCEEDED || err == LD_ERR_MALFORMED ||
         err == LD_ERR_FRAME_TOO_LARGE;
}

static int fail(yamux_t *y, int err) {
  y->err = err;
  if (!y->local_goaway && err != LD_ERR_TIMEOUT) {
    uint32_t code = is_protocol_error(err) ? YAMUX_GOAWAY_PROTOCOL : YAMUX_GOAWAY_INTERNAL;
    if (send_frame(y, YAMUX_GO_AWAY, 0, 0, code) == 0)
      y->local_goaway = true;
  }
  return err;
}

static void advance_clock(yamux_t *y, uint64_t now_ms) {
  if (now_ms > y->now)
    y->now = now_ms;
}

/* ---- operations ---------------------------------------------------------------------------- */

static void configure(ld_muxer_config_t *dst, const ld_muxer_config_t *src) {
  if (src != NULL)
    *dst = *src;
  else
    ld_muxer_config_default(dst);
  if (dst->recv_window < LD_YAMUX_PROTOCOL_WINDOW)
    dst->recv_window = LD_YAMUX_PROTOCOL_WINDOW;
  if (dst->recv_window > LD_YAMUX_WINDOW_CAP)
    dst->recv_window = LD_YAMUX_WINDOW_CAP;
  if (dst->max_recv_window < dst->recv_window)
    dst->max_recv_window = dst->recv_window;
  if (dst->max_recv_window > LD_YAMUX_WINDOW_CAP)
    dst->max_recv_window = LD_YAMUX_WINDOW_CAP;
}

static ld_muxer_t *yamux_create(bool initiator, const ld_muxer_config_t *cfg,
                                const ld_muxer_callbacks_t *cb, void *user_data) {
  yamux_t *y = calloc(1, sizeof *y);
  if (y == NULL)
    return NULL;
  y->streams = ld_hashmap_new(16);
  if (y->streams == NULL) {
    free(y);
    return NULL;
  }
  configure(&y->cfg, cfg);
  y->cb = cb != NULL ? cb : &ld_muxer_no_callbacks;
  y->user_data = user_data;
  y->client = initiator;
  y->next_id = initiator ? 1 : 2;
  y->rtt_ms = UINT64_MAX;
  ld_buf_init(&y->out);
  return (ld_muxer_t *)(void *)y;
}

static void yamux_destroy(ld_muxer_t *m) {
  if (m == NULL)
    return;
  yamux_t *y = as_yamux(m);
  ld_hashmap_free(y->streams, free);
  ld_buf_clear(&y->out);
  free(y);
}

static int yamux_read(ld_muxer_t *m, const uint8_t *data, size_t len, uint64_t now_ms) {
  yamux_t *y = as_yamux(m);
  if (y->err != 0)
    return y->err;
  if (y->in_read)
    return LD_ERR_STATE;
  advance_clock(y, now_ms);
  ld_cursor_t c;
  ld_cursor_init(&c, data, len);
  y->in_read = true;
  int rc = 0;
  while (rc == 0 && !ld_cursor_empty(&c))
    rc = y->body_left > 0 ? read_body(y, &c) : read_header(y, &c);
  y->in_read = false;
  return rc != 0 ? fail(y, rc) : 0;
}

static int yamux_open_stream(ld_muxer_t *m, uint64_t *sid) {
  yamux_t *y = as_yamux(m);
  if (y->err != 0)
    return y->err;
  if (y->local_goaway || y->remote_goaway)
    return LD_ERR_GOAWAY;
  if (ld_hashmap_size(y->streams) >= y->cfg.max_streams || y->next_id > LD_YAMUX_MAX_STREAM_ID)
    return LD_ERR_TOO_MANY_STREAMS;
  int rc = ld_buf_reserve(&y->out, LD_YAMUX_HEADER_LEN);
  if (rc != 0)
    return rc;
  ystream_t *s = stream_new(y, (uint32_t)y->next_id);
  if (s == NULL)
    return LD_ERR_NOMEM;
  send_frame(y, YAMUX_WINDOW_UPDATE, YAMUX_SYN, s->id, initial_delta(y));
  y->next_id += 2;
  *sid = s->id;
  return 0;
}

static int64_t yamux_write(ld_muxer_t *m, uint64_t sid, const uint8_t *data, size_t len) {
  yamux_t *y = as_yamux(m);
  if (y->err != 0)
    return y->err;
  ystream_t *s = find(y, sid);
  if (s == NULL)
    return LD_ERR_NOT_FOUND;
  if (s->local_closed)
    return LD_ERR_CLOSED;
  uint64_t n = len < s->send_window ? len : s->send_window;
  if (n > LD_YAMUX_MAX_WRITE)
    n = LD_YAMUX_MAX_WRITE;
  if (n == 0)
    return 0;
  uint64_t frames = (n + LD_YAMUX_MAX_DATA_FRAME - 1) / LD_YAMUX_MAX_DATA_FRAME;
  if (n + frames * LD_YAMUX_HEADER_LEN > SIZE_MAX)
    return LD_ERR_NOMEM;
  int rc = ld_buf_reserve(&y->out, (size_t)(n + frames * LD_YAMUX_HEADER_LEN));
  if (rc != 0)
    return rc;
  uint8_t *p = y->out.data + y->out.len;
  for (uint64_t off = 0; off < n;) {
    uint32_t chunk =
        n - off < LD_YAMUX_MAX_DATA_FRAME ? (uint32_t)(n - off) : LD_YAMUX_MAX_DATA_FRAME;
    put_header(p, YAMUX_DATA, 0, s->id, chunk);
    memcpy(p + LD_YAMUX_HEADER_LEN, data + off, chunk);
    p += LD_YAMUX_HEADER_LEN + chunk;
    off += chunk;
  }
  y->out.len = (size_t)(p - y->out.data);
  s->send_window -= n;
  return (int64_t)n;
}

static int yamux_close_write(ld_muxer_t *m, uint64_t sid) {
  yamux_t *y = as_yamux(m);
  ystream_t *s = find(y, sid);
  if (s == NULL)
    return LD_ERR_NOT_FOUND;
  if (s->local_closed)
    return LD_ERR_CLOSED;
  int rc = send_frame(y, YAMUX_DATA, YAMUX_FIN, s->id, 0);
  if (rc != 0)
    return rc;
  s->local_closed = true;
  if (s->remote_closed)
    forget(y, s);
  return 0;
}

static int yamux_reset(ld_muxer_t *m, uint64_t sid) {
  yamux_t *y = as_yamux(m);
  ystream_t *s = find(y, sid);
  if (s == NULL)
    return LD_ERR_NOT_FOUND;
  int rc = send_frame(y, YAMUX_WINDOW_UPDATE, YAMUX_RST, s->id, 0);
  if (rc != 0)
    return rc;
  forget(y, s);
  return 0;
}

static int yamux_consumed(ld_muxer_t *m, uint64_t sid, size_t n) {
  yamux_t *y = as_yamux(m);
  ystream_t *s = find(y, sid);
  if (s == NULL)
    return LD_ERR_NOT_FOUND;
  if (n > s->unconsumed)
    return LD_ERR_INVALID_ARG;
  s->unconsumed -= (uint32_t)n;
  s->credit += (uint32_t)n;
  if (s->remote_closed || s->credit < s->recv_window / 2)
    return 0;
  return send_window_update(y, s);
}

static int yamux_go_away(ld_muxer_t *m, uint32_t code) {
  yamux_t *y = as_yamux(m);
  if (y->local_goaway)
    return 0;
  int rc = send_frame(y, YAMUX_GO_AWAY, 0, 0, code);
  if (rc == 0)
    y->local_goaway = true;
  return rc;
}

static int yamux_take_output(ld_muxer_t *m, ld_buf_t *out) {
  return ld_muxer_move_output(&as_yamux(m)->out, out);
}

static size_t yamux_pending_output(const ld_muxer_t *m) {
  return as_cyamux(m)->out.len;
}

static uint64_t yamux_next_deadline(const ld_muxer_t *m) {
  const yamux_t *y = as_cyamux(m);
  if (y->err != 0 || y->cfg.keepalive_ms == 0)
    return UINT64_MAX;
  return y->next_ping_at;
}

static int yamux_handle_timeout(ld_muxer_t *m, uint64_t now_ms) {
  yamux_t *y = as_yamux(m);
  if (y->err != 0)
    return y->err;
  advance_clock(y, now_ms);
  if (y->cfg.keepalive_ms == 0 || y->now < y->next_ping_at)
    return 0;
  if (y->ping_outstanding)
    return fail(y, LD_ERR_TIMEOUT);
  int rc = send_frame(y, YAMUX_PING, YAMUX_SYN, 0, y->ping_value + 1);
  if (rc != 0)
    return rc;
  y->ping_value++;
  y->ping_outstanding = true;
  y->ping_sent_at = y->now;
  y->next_ping_at = y->now + y->cfg.keepalive_ms;
  return 0;
}

static size_t yamux_stream_count(const ld_muxer_t *m) {
  return ld_hashmap_size(as_cyamux(m)->streams);
}

const ld_muxer_ops_t ld_yamux_ops = {
    .protocol_id = "/yamux/1.0.0",
    .create = yamux_create,
    .destroy = yamux_destroy,
    .read = yamux_read,
    .open_stream = yamux_open_stream,
    .write = yamux_write,
    .close_write = yamux_close_write,
    .reset = yamux_reset,
    .consumed = yamux_consumed,
    .go_away = yamux_go_away,
    .take_output = yamux_take_output,
    .pending_output = yamux_pending_output,
    .next_deadline = yamux_next_deadline,
    .handle_timeout = yamux_handle_timeout,
    .stream_count = yamux_stream_count,
};
