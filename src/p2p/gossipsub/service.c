#include "p2p/gossipsub/service.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/hashmap.h"
#include "base/log.h"
#include "base/varint.h"
#include "crypto/crypto.h"
#include "p2p/gossipsub/rpc.h"

#define LOG_TOPIC "gossipsub"
#define IP_TEXT_MAX 64

typedef struct gs_peer gs_peer_t;

typedef struct gs_inbound {
  gs_peer_t *peer; /* NULL once detached (replaced, failed, peer gone) */
  ld_stream_t *s;
  ld_buf_t buf; /* an incomplete frame */
} gs_inbound_t;

typedef struct gs_open {
  gs_peer_t *peer; /* NULL once the peer is gone */
} gs_open_t;

struct gs_peer {
  ld_gs_service_t *svc;
  ld_gs_peer_t handle;
  ld_peerid_t id;
  char text[LD_PEERID_TEXT_MAX];
  ld_conn_t *conns[LD_GS_SERVICE_MAX_CONNS_PER_PEER];
  size_t n_conns;
  bool outbound;   /* direction of the first tracked connection */
  bool added;      /* known to the router */
  bool had_stream; /* an outbound stream was open since the peer was added */
  bool gave_up;    /* outbound stream failures: wait for the peer to come back */
  ld_gs_proto_t proto;
  ld_stream_t *out;
  gs_open_t *opening;
  uint64_t out_since;
  unsigned failures;
  uint64_t retry_at; /* 0: no retry scheduled */
  gs_inbound_t *in;
  ld_buf_t pending; /* frames waiting for the outbound stream */
  uint64_t dropped;
};

typedef struct gs_sub {
  ld_gs_message_fn fn;
  void *ud;
  size_t mesh_reported;
} gs_sub_t;

typedef struct gs_validator {
  int id;
  char *topic; /* NULL: every topic */
  ld_gs_validator_fn fn;
  void *ud;
} gs_validator_t;

typedef struct gs_val {
  struct gs_val *prev, *next; /* deadline list */
  struct gs_val *run_next;    /* runnable list */
  bool linked;                /* in the deadline list */
  bool queued;                /* in the runnable list */
  bool waiting;               /* a validator was called and has not answered */
  bool expired;
  uint64_t vid;
  uint64_t deadline;
  int step; /* id of the last validator called, 0 before the first */
  bool has_from;
  ld_peerid_t from;
  char *topic;
  uint8_t *data;
  size_t len;
} gs_val_t;

typedef struct gs_delivery {
  struct gs_delivery *next;
  bool has_from;
  ld_peerid_t from;
  uint8_t id[LD_GS_MSG_ID_LEN];
  char *topic;
  uint8_t *data;
  size_t len;
} gs_delivery_t;

typedef struct gs_timers {
  uv_timer_t hb;   /* heartbeat, validation timeouts, reopen retries */
  uv_timer_t soon; /* application callbacks on the next loop turn */
  int open;
} gs_timers_t;

struct ld_gs_service {
  ld_switch_t *sw;
  ld_identify_t *identify;
  ld_gs_router_t *router;
  ld_gs_service_config_t cfg;
  char *proto_ids[LD_GS_SERVICE_MAX_PROTOCOLS];
  size_t max_queued;
  uint32_t validation_timeout;
  bool dead;           /* creation failed after registration: ignore everything */
  ld_hashmap_t *peers; /* handle → gs_peer_t */
  ld_hashmap_t *by_id; /* peer ID bytes → gs_peer_t */
  uint64_t next_handle;
  ld_hashmap_t *subs; /* topic → gs_sub_t */
  gs_validator_t validators[LD_GS_SERVICE_MAX_VALIDATORS];
  size_t n_validators;
  int next_validator_id;
  ld_hashmap_t *vals; /* vid → gs_val_t */
  gs_val_t *vals_head, *vals_tail;
  gs_val_t *run_head, *run_tail;
  gs_delivery_t *dl_head, *dl_tail;
  const gs_val_t *completing;
  bool mesh_dirty;
  gs_timers_t *timers;
  bool soon_armed;
  uint64_t timer_at;
  uint64_t next_retry;
  ld_gs_service_events_t ev;
  void *ev_ud;
  ld_buf_t frame;
  ld_gs_service_stats_t stats;
};

static void noop_close(ld_stream_t *s, int err) {
  (void)s;
  (void)err;
}

static const ld_stream_handler_t k_detached = {.on_close = noop_close};

/* ---- small helpers -------------------------------------------------------------------------- */

static gs_peer_t *peer_by_handle(const ld_gs_service_t *svc, ld_gs_peer_t h) {
  return ld_hashmap_get_u64(svc->peers, h);
}

static gs_peer_t *peer_by_id(const ld_gs_service_t *svc, const ld_peerid_t *id) {
  return ld_hashmap_get(svc->by_id, id->bytes, id->len);
}

/* Subscriptions are keyed by the topic with its NUL, so that map keys are C strings. */
static gs_sub_t *sub_get(const ld_gs_service_t *svc, const char *topic) {
  return ld_hashmap_get(svc->subs, topic, strlen(topic) + 1);
}

static bool topic_ok(const char *topic) {
  if (topic == NULL)
    return false;
  size_t n = strlen(topic);
  return n > 0 && n <= LD_GS_MAX_TOPIC_LEN;
}

static void conn_ip(ld_conn_t *c, char *out, size_t cap) {
  out[0] = '\0';
  const ld_multiaddr_t *ma = ld_conn_remote_addr(c);
  if (ma == NULL)
    return;
  size_t off = 0;
  ld_multiaddr_component_t comp;
  while (ld_multiaddr_next(ma, &off, &comp) > 0) {
    if (comp.code == LD_MA_IP4 && comp.value_len == 4) {
      inet_ntop(AF_INET, comp.value, out, (socklen_t)cap);
      return;
    }
    if (comp.code == LD_MA_IP6 && comp.value_len == 16) {
      inet_ntop(AF_INET6, comp.value, out, (socklen_t)cap);
      return;
    }
  }
}

/* ---- timers --------------------------------------------------------------------------------- */

static void on_soon(uv_timer_t *t);
static void on_timer(uv_timer_t *t);

static void arm_soon(ld_gs_service_t *svc) {
  if (svc->soon_armed)
    return;
  svc->soon_armed = true;
  uv_timer_start(&svc->timers->soon, on_soon, 0, 0);
}

static uint64_t min_u64(uint64_t a, uint64_t b) {
  return a < b ? a : b;
}

/* Arms the timer for the earliest of: the router's heartbeat, a validation deadline, a retry. */
static void arm_timer(ld_gs_service_t *svc) {
  uint64_t at = ld_gs_router_next_deadline(svc->router);
  if (svc->vals_head != NULL)
    at = min_u64(at, svc->vals_head->deadline);
  if (svc->next_retry != 0)
    at = min_u64(at, svc->next_retry);
  if (at == svc->timer_at)
    return;
  uint64_t now = ld_now_ms();
  svc->timer_at = at;
  uv_timer_start(&svc->timers->hb, on_timer, at > now ? at - now : 0, 0);
}

static void timers_closed(uv_handle_t *h) {
  gs_timers_t *t = h->data;
  if (--t->open == 0)
    free(t);
}

/* ---- events --------------------------------------------------------------------------------- */

static void emit_peer(ld_gs_service_t *svc, const gs_peer_t *p, bool up) {
  if (svc->ev.on_peer != NULL)
    svc->ev.on_peer(svc, &p->id, up, svc->ev_ud);
}

/* ---- router membership ---------------------------------------------------------------------- */

static int router_add(gs_peer_t *p, bool events) {
  ld_gs_service_t *svc = p->svc;
  char ip[IP_TEXT_MAX];
  conn_ip(p->conns[0], ip, sizeof ip);
  int rc = ld_gs_router_add_peer(svc->router, p->handle, p->proto, p->outbound,
                                 ip[0] != '\0' ? ip : NULL, ld_now_ms());
  arm_timer(svc);
  if (rc < 0) {
    LD_WARN(LOG_TOPIC, "cannot add pubsub peer %s: %s", p->text, ld_errname(rc));
    return rc;
  }
  p->added = true;
  p->had_stream = false;
  LD_DEBUG(LOG_TOPIC, "pubsub peer %s added (%s, %s)", p->text, ld_gs_proto_id(p->proto),
           p->outbound ? "outbound" : "inbound");
  if (events)
    emit_peer(svc, p, true);
  return 0;
}

static void router_remove(gs_peer_t *p, bool events) {
  if (!p->added)
    return;
  ld_gs_service_t *svc = p->svc;
  p->added = false;
  ld_gs_router_remove_peer(svc->router, p->handle, ld_now_ms());
  arm_timer(svc);
  if (events)
    emit_peer(svc, p, false);
}

/* ---- writing -------------------------------------------------------------------------------- */

static void drop_frame(gs_peer_t *p, size_t n) {
  ld_gs_service_t *svc = p->svc;
  if (p->dropped++ == 0 || (p->dropped & 1023) == 0)
    LD_WARN(LOG_TOPIC, "outbound queue of %s full: RPC dropped (%llu so far)", p->text,
            (unsigned long long)p->dropped);
  svc->stats.frames_dropped++;
  svc->stats.bytes_dropped += n;
}

/* Writes on the outbound stream, or queues while there is none (or it is closing and will be
 * reopened); beyond max_queued bytes for the peer the frame is dropped. */
static void write_frame(gs_peer_t *p, const uint8_t *frame, size_t n) {
  ld_gs_service_t *svc = p->svc;
  int rc = LD_ERR_CLOSED;
  if (p->out != NULL) {
    rc = ld_stream_buffered(p->out) + n <= svc->max_queued ? ld_stream_write(p->out, frame, n)
                                                           : LD_ERR_LIMIT;
  }
  if (rc == LD_ERR_CLOSED && p->pending.len + n <= svc->max_queued &&
      ld_buf_append(&p->pending, frame, n) == 0)
    rc = 0;
  if (rc == 0)
    svc->stats.frames_out++;
  else
    drop_frame(p, n);
}

static void cb_send(void *ud, ld_gs_peer_t peer, const uint8_t *rpc, size_t len) {
  ld_gs_service_t *svc = ud;
  gs_peer_t *p = peer_by_handle(svc, peer);
  if (p == NULL)
    return;
  ld_buf_reset(&svc->frame);
  if (ld_buf_varint(&svc->frame, len) != 0 || ld_buf_append(&svc->frame, rpc, len) != 0) {
    drop_frame(p, len);
    return;
  }
  write_frame(p, svc->frame.data, svc->frame.len);
}

static void flush_pending(gs_peer_t *p) {
  if (p->pending.len > 0 && ld_stream_write(p->out, p->pending.data, p->pending.len) != 0)
    drop_frame(p, p->pending.len);
  ld_buf_clear(&p->pending);
}

/* ---- outbound stream ------------------------------------------------------------------------ */

static void out_open(gs_peer_t *p);

static void out_ensure(gs_peer_t *p) {
  if (p->out != NULL || p->opening != NULL || p->gave_up || p->retry_at != 0 || p->n_conns == 0)
    return;
  out_open(p);
}

static void give_up(gs_peer_t *p, int err) {
  LD_WARN(LOG_TOPIC, "no pubsub stream to %s after %u attempts (%s): peer dropped until it returns",
          p->text, p->failures, ld_errname(err));
  p->gave_up = true;
  p->retry_at = 0;
  ld_buf_clear(&p->pending);
  router_remove(p, true);
  if (p->in != NULL) {
    gs_inbound_t *in = p->in;
    p->in = NULL;
    in->peer = NULL;
    ld_stream_reset(in->s);
  }
}

static void schedule_retry(gs_peer_t *p) {
  ld_gs_service_t *svc = p->svc;
  unsigned shift = p->failures > 1 ? p->failures - 2 : 0;
  p->retry_at = ld_now_ms() + ((uint64_t)LD_GS_SERVICE_REOPEN_BACKOFF_MS << shift);
  if (svc->next_retry == 0 || p->retry_at < svc->next_retry)
    svc->next_retry = p->retry_at;
  arm_timer(svc);
}

/* Counts a failure and retries (the first at once, later ones after a doubling back-off). */
static void out_failed(gs_peer_t *p, int err) {
  p->svc->stats.outbound_failed++;
  if (err == LD_ERR_PROTOCOL_UNSUPPORTED && !p->added) {
    LD_DEBUG(LOG_TOPIC, "%s speaks none of our pubsub protocols", p->text);
    p->gave_up = true;
    return;
  }
  p->failures++;
  LD_DEBUG(LOG_TOPIC, "pubsub stream to %s failed: %s (%u)", p->text, ld_errname(err), p->failures);
  if (p->failures >= LD_GS_SERVICE_MAX_OPEN_ATTEMPTS)
    give_up(p, err);
  else if (p->failures == 1)
    out_open(p);
  else
    schedule_retry(p);
}

static void out_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  (void)s;
  (void)data;
  (void)len;
}

/* The peer never writes on our stream; its EOF means it is done with it (go then resets it and
 * considers the stream dead): reset, and on_close reopens. */
static void out_eof(ld_stream_t *s) {
  if (ld_stream_user_data(s) != NULL)
    ld_stream_reset(s);
}

static void out_close(ld_stream_t *s, int err) {
  gs_peer_t *p = ld_stream_user_data(s);
  if (p == NULL)
    return;
  p->out = NULL;
  LD_DEBUG(LOG_TOPIC, "outbound pubsub stream to %s closed: %s", p->text, ld_errname(err));
  if (ld_now_ms() - p->out_since >= LD_GS_SERVICE_STABLE_STREAM_MS)
    p->failures = 0;
  if (err == LD_ERR_CLOSED)
    out_ensure(p); /* its connection is going: another one may carry the stream */
  else
    out_failed(p, err == 0 ? LD_ERR_CLOSED : err);
}

static const ld_stream_handler_t k_out_handler = {
    .on_data = out_data,
    .on_eof = out_eof,
    .on_close = out_close,
};

static void hello_emit(void *ctx, const uint8_t *rpc, size_t len) {
  cb_send(((gs_peer_t *)ctx)->svc, ((gs_peer_t *)ctx)->handle, rpc, len);
}

/* Our subscriptions, first on a stream that replaces a broken one: the peer may have dropped its
 * state about us with the old stream (js does), while the router keeps its own about the peer. */
static void send_hello(gs_peer_t *p) {
  ld_gs_service_t *svc = p->svc;
  size_t n = ld_gs_router_topics(svc->router, NULL, 0);
  const char **topics = n > 0 ? calloc(n, sizeof *topics) : NULL;
  uint8_t *scratch = n > 0 ? malloc(svc->cfg.params.max_rpc_size) : NULL;
  ld_gs_out_t o;
  ld_gs_out_init(&o);
  if (topics != NULL && scratch != NULL) {
    n = ld_gs_router_topics(svc->router, topics, n);
    for (size_t i = 0; i < n; i++)
      ld_gs_out_sub(&o, topics[i], true);
    ld_gs_out_flush(&o, scratch, svc->cfg.params.max_rpc_size, hello_emit, p, NULL);
  } else if (n > 0) {
    LD_WARN(LOG_TOPIC, "no hello for %s: %s", p->text, ld_errname(LD_ERR_NOMEM));
  }
  ld_gs_out_clear(&o);
  free(scratch);
  free(topics);
}

static void out_ready(gs_peer_t *p, ld_stream_t *s) {
  ld_gs_service_t *svc = p->svc;
  ld_gs_proto_t proto = LD_GS_PROTO_MESHSUB_11;
  ld_gs_proto_from_id(ld_stream_protocol(s), &proto);
  ld_stream_set_handler(s, &k_out_handler, p);
  p->out = s;
  p->out_since = ld_now_ms();
  p->retry_at = 0;
  svc->stats.outbound_opened++;
  if (!p->added) {
    /* first contact: adding the peer makes the router send our hello */
    ld_buf_clear(&p->pending);
    p->proto = proto;
    if (router_add(p, true) < 0) {
      p->out = NULL;
      ld_stream_set_handler(s, &k_detached, NULL);
      ld_stream_reset(s);
      return;
    }
  } else {
    /* added on its inbound stream (the router's hello waits in pending), or a new stream after
     * a broken one (the frames queued meanwhile follow a fresh hello) */
    if (p->had_stream)
      send_hello(p);
    flush_pending(p);
  }
  p->had_stream = true;
}

static void on_opened(ld_stream_t *s, int err, void *user_data) {
  gs_open_t *op = user_data;
  gs_peer_t *p = op->peer;
  free(op);
  if (p == NULL) {
    if (s != NULL) {
      ld_stream_set_handler(s, &k_detached, NULL);
      ld_stream_reset(s);
    }
    return;
  }
  p->opening = NULL;
  if (err == 0 && s != NULL)
    out_ready(p, s);
  else if (err == LD_ERR_CLOSED)
    out_ensure(p);
  else
    out_failed(p, err);
}

static void out_open(gs_peer_t *p) {
  ld_gs_service_t *svc = p->svc;
  int rc = LD_ERR_CLOSED;
  for (size_t i = p->n_conns; i-- > 0;) {
    gs_open_t *op = malloc(sizeof *op);
    if (op == NULL) {
      rc = LD_ERR_NOMEM;
      break;
    }
    op->peer = p;
    rc = ld_switch_open_stream(svc->sw, p->conns[i], (const char *const *)svc->proto_ids,
                               svc->cfg.n_protocols, on_opened, op);
    if (rc == 0) {
      p->opening = op;
      return;
    }
    free(op);
  }
  if (rc != LD_ERR_CLOSED) /* every connection closing: their on_disconnected follows */
    out_failed(p, rc);
}

/* ---- peers ---------------------------------------------------------------------------------- */

static gs_peer_t *peer_create(ld_gs_service_t *svc, ld_conn_t *c) {
  gs_peer_t *p = calloc(1, sizeof *p);
  if (p == NULL)
    return NULL;
  p->svc = svc;
  p->handle = ++svc->next_handle;
  p->id = *ld_conn_remote_peer(c);
  p->outbound = ld_conn_is_outbound(c);
  ld_peerid_to_text(&p->id, p->text, sizeof p->text);
  ld_buf_init(&p->pending);
  if (ld_hashmap_put_u64(svc->peers, p->handle, p, NULL) != 0) {
    free(p);
    return NULL;
  }
  if (ld_hashmap_put(svc->by_id, p->id.bytes, p->id.len, p, NULL) != 0) {
    ld_hashmap_remove_u64(svc->peers, p->handle);
    free(p);
    return NULL;
  }
  return p;
}

static void peer_track(gs_peer_t *p, ld_conn_t *c) {
  for (size_t i = 0; i < p->n_conns; i++)
    if (p->conns[i] == c)
      return;
  if (p->n_conns < LD_GS_SERVICE_MAX_CONNS_PER_PEER)
    p->conns[p->n_conns++] = c;
}

static void peer_untrack(gs_peer_t *p, ld_conn_t *c) {
  for (size_t i = 0; i < p->n_conns; i++) {
    if (p->conns[i] == c) {
      memmove(&p->conns[i], &p->conns[i + 1], (p->n_conns - i - 1) * sizeof p->conns[0]);
      p->n_conns--;
      return;
    }
  }
}

/* The pubsub peer behind `c`, created on first use, with `c` tracked. */
static gs_peer_t *peer_for_conn(ld_gs_service_t *svc, ld_conn_t *c) {
  gs_peer_t *p = peer_by_id(svc, ld_conn_remote_peer(c));
  if (p == NULL && (p = peer_create(svc, c)) == NULL)
    return NULL;
  peer_track(p, c);
  return p;
}

static void detach_streams(gs_peer_t *p) {
  if (p->in != NULL) {
    p->in->peer = NULL;
    ld_stream_reset(p->in->s);
    p->in = NULL;
  }
  if (p->out != NULL) {
    ld_stream_set_handler(p->out, &k_detached, NULL);
    ld_stream_reset(p->out);
    p->out = NULL;
  }
  if (p->opening != NULL) {
    p->opening->peer = NULL;
    p->opening = NULL;
  }
}

static void peer_free(gs_peer_t *p, bool events) {
  ld_gs_service_t *svc = p->svc;
  router_remove(p, events);
  detach_streams(p);
  ld_hashmap_remove_u64(svc->peers, p->handle);
  ld_hashmap_remove(svc->by_id, p->id.bytes, p->id.len);
  ld_buf_clear(&p->pending);
  free(p);
}

/* ---- inbound streams ------------------------------------------------------------------------ */

static void in_detach(gs_inbound_t *in) {
  if (in->peer != NULL && in->peer->in == in)
    in->peer->in = NULL;
  in->peer = NULL;
}

static void in_fail(gs_inbound_t *in, int err, uint64_t frame_len) {
  gs_peer_t *p = in->peer;
  ld_gs_service_t *svc = p->svc;
  if (err == LD_ERR_TOO_LARGE) {
    svc->stats.frames_too_large++;
    LD_WARN(LOG_TOPIC, "RPC of %llu bytes from %s exceeds %zu: %s, stream reset",
            (unsigned long long)frame_len, p->text, svc->cfg.params.max_rpc_size, ld_errname(err));
    /* the router has no penalty for a frame it never sees: an oversize frame is a malformed RPC
     * stream, so it is reported as one (a truncated field), which costs the peer a behaviour
     * penalty and, repeated, the connection */
    static const uint8_t truncated[2] = {0x0a, 0x05};
    ld_gs_router_handle_rpc(svc->router, p->handle, truncated, sizeof truncated, ld_now_ms());
    arm_timer(svc);
  } else {
    LD_WARN(LOG_TOPIC, "bad RPC stream from %s: %s, stream reset", p->text, ld_errname(err));
  }
  svc->stats.inbound_resets++;
  in_detach(in);
  ld_stream_reset(in->s);
}

/* Hands every complete frame of data[0..n) to the router and stores the bytes used. */
static int in_frames(gs_inbound_t *in, const uint8_t *data, size_t n, size_t *used,
                     uint64_t *bad_len) {
  ld_gs_service_t *svc = in->peer->svc;
  size_t off = 0;
  while (off < n) {
    uint64_t flen;
    size_t hl;
    int rc = ld_uvarint_decode(data + off, n - off, &flen, &hl);
    if (rc == LD_ERR_TRUNCATED)
      break;
    if (rc < 0)
      return rc;
    if (flen > svc->cfg.params.max_rpc_size) {
      *bad_len = flen;
      return LD_ERR_TOO_LARGE;
    }
    if (n - off - hl < flen)
      break;
    svc->stats.frames_in++;
    rc = ld_gs_router_handle_rpc(svc->router, in->peer->handle, data + off + hl, (size_t)flen,
                                 ld_now_ms());
    if (rc < 0)
      return rc;
    off += hl + (size_t)flen;
  }
  *used = off;
  return 0;
}

static void in_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  gs_inbound_t *in = ld_stream_user_data(s);
  if (in->peer == NULL)
    return;
  ld_gs_service_t *svc = in->peer->svc;
  size_t used = 0;
  uint64_t bad_len = 0;
  int rc;
  if (in->buf.len == 0) {
    rc = in_frames(in, data, len, &used, &bad_len);
    if (rc == 0 && used < len)
      rc = ld_buf_append(&in->buf, data + used, len - used);
  } else {
    rc = ld_buf_append(&in->buf, data, len);
    if (rc == 0)
      rc = in_frames(in, in->buf.data, in->buf.len, &used, &bad_len);
    if (rc == 0)
      ld_buf_consume(&in->buf, used);
  }
  arm_timer(svc);
  if (rc < 0)
    in_fail(in, rc, bad_len);
}

static void in_eof(ld_stream_t *s) {
  ld_stream_close_write(s);
}

static void in_close(ld_stream_t *s, int err) {
  gs_inbound_t *in = ld_stream_user_data(s);
  (void)err;
  in_detach(in);
  ld_buf_clear(&in->buf);
  free(in);
}

static const ld_stream_handler_t k_in_handler = {
    .on_data = in_data,
    .on_eof = in_eof,
    .on_close = in_close,
};

static void on_accept(ld_stream_t *s, void *user_data) {
  ld_gs_service_t *svc = user_data;
  gs_peer_t *p = svc->dead ? NULL : peer_for_conn(svc, ld_stream_conn(s));
  gs_inbound_t *in = p != NULL ? calloc(1, sizeof *in) : NULL;
  if (in == NULL) {
    ld_stream_set_handler(s, &k_detached, NULL);
    ld_stream_reset(s);
    return;
  }
  in->s = s;
  ld_buf_init(&in->buf);
  ld_stream_set_handler(s, &k_in_handler, in);
  if (p->in != NULL) { /* the newer stream replaces the older one */
    gs_inbound_t *old = p->in;
    in_detach(old);
    svc->stats.inbound_resets++;
    ld_stream_reset(old->s);
  }
  in->peer = p;
  p->in = in;
  if (p->gave_up) {
    p->gave_up = false;
    p->failures = 0;
  }
  if (!p->added) {
    ld_gs_proto_from_id(ld_stream_protocol(s), &p->proto);
    if (router_add(p, true) < 0) {
      in_detach(in);
      ld_stream_reset(s);
      return;
    }
  }
  out_ensure(p);
}

/* ---- connections and identify --------------------------------------------------------------- */

static bool lists_our_protocol(const ld_gs_service_t *svc, const ld_identify_info_t *info) {
  for (size_t i = 0; i < svc->cfg.n_protocols; i++)
    if (ld_identify_info_has_protocol(info, svc->proto_ids[i]))
      return true;
  return false;
}

void ld_gs_service_peer_identified(ld_gs_service_t *svc, ld_conn_t *c,
                                   const ld_identify_info_t *info) {
  if (svc == NULL || svc->dead || c == NULL || info == NULL || !lists_our_protocol(svc, info))
    return;
  gs_peer_t *p = peer_for_conn(svc, c);
  if (p == NULL)
    return;
  if (p->gave_up && !p->added) { /* its protocols changed (push): one more try */
    p->gave_up = false;
    p->failures = 0;
  }
  out_ensure(p);
}

static void on_identified(ld_conn_t *c, const ld_identify_info_t *info, void *user_data) {
  ld_gs_service_peer_identified(user_data, c, info);
}

static const ld_identify_events_t k_identify_events = {.on_identified = on_identified};

static void sw_connected(ld_conn_t *c, void *user_data) {
  ld_gs_service_t *svc = user_data;
  if (svc->dead)
    return;
  gs_peer_t *p = peer_by_id(svc, ld_conn_remote_peer(c));
  if (p == NULL && !svc->cfg.open_on_connect)
    return;
  if (p == NULL && (p = peer_create(svc, c)) == NULL)
    return;
  peer_track(p, c);
  if (p->gave_up && !p->added) { /* it came back */
    p->gave_up = false;
    p->failures = 0;
  }
  out_ensure(p);
}

static void sw_disconnected(ld_conn_t *c, int reason, void *user_data) {
  ld_gs_service_t *svc = user_data;
  (void)reason;
  if (svc->dead)
    return;
  gs_peer_t *p = peer_by_id(svc, ld_conn_remote_peer(c));
  if (p == NULL)
    return;
  peer_untrack(p, c);
  if (p->n_conns == 0) {
    LD_DEBUG(LOG_TOPIC, "pubsub peer %s gone", p->text);
    peer_free(p, true);
  } else {
    out_ensure(p);
  }
}

static const ld_switch_events_t k_switch_events = {
    .on_connected = sw_connected,
    .on_disconnected = sw_disconnected,
};

static void cb_disconnect(void *ud, ld_gs_peer_t peer, int reason) {
  ld_gs_service_t *svc = ud;
  gs_peer_t *p = peer_by_handle(svc, peer);
  if (p == NULL)
    return;
  int err = reason == LD_GS_DISCONNECT_GRAYLISTED ? LD_ERR_GRAYLISTED : LD_ERR_PROTOCOL;
  svc->stats.disconnects++;
  LD_WARN(LOG_TOPIC, "disconnecting pubsub peer %s: %s", p->text,
          reason == LD_GS_DISCONNECT_GRAYLISTED ? "score below the graylist threshold"
                                                : "repeated malformed RPCs");
  for (size_t i = 0; i < p->n_conns; i++)
    ld_conn_close(p->conns[i], err, false);
}

/* ---- deliveries ----------------------------------------------------------------------------- */

static void delivery_queue(ld_gs_service_t *svc, const char *topic, const uint8_t *data, size_t len,
                           const uint8_t id[LD_GS_MSG_ID_LEN], const ld_peerid_t *from) {
  size_t tlen = strlen(topic);
  gs_delivery_t *d = malloc(sizeof *d + tlen + 1 + len);
  if (d == NULL) {
    LD_WARN(LOG_TOPIC, "message on %s not delivered: %s", topic, ld_errname(LD_ERR_NOMEM));
    return;
  }
  d->next = NULL;
  d->has_from = from != NULL;
  if (from != NULL)
    d->from = *from;
  memcpy(d->id, id, LD_GS_MSG_ID_LEN);
  d->topic = (char *)(d + 1);
  memcpy(d->topic, topic, tlen + 1);
  d->data = (uint8_t *)d->topic + tlen + 1;
  if (len > 0)
    memcpy(d->data, data, len);
  d->len = len;
  if (svc->dl_tail != NULL)
    svc->dl_tail->next = d;
  else
    svc->dl_head = d;
  svc->dl_tail = d;
  arm_soon(svc);
}

static void run_deliveries(ld_gs_service_t *svc) {
  gs_delivery_t *d = svc->dl_head;
  svc->dl_head = svc->dl_tail = NULL;
  while (d != NULL) {
    gs_delivery_t *next = d->next;
    gs_sub_t *sub = sub_get(svc, d->topic);
    if (sub != NULL && sub->fn != NULL)
      sub->fn(svc, d->topic, d->data, d->len, d->id, d->has_from ? &d->from : NULL, sub->ud);
    free(d);
    d = next;
  }
}

static void cb_deliver(void *ud, const char *topic, const uint8_t *data, size_t len,
                       const uint8_t id[LD_GS_MSG_ID_LEN], ld_gs_peer_t from) {
  ld_gs_service_t *svc = ud;
  gs_sub_t *sub = sub_get(svc, topic);
  if (sub == NULL || sub->fn == NULL)
    return;
  const ld_peerid_t *pid = NULL;
  if (svc->completing != NULL && svc->completing->has_from) {
    pid = &svc->completing->from;
  } else {
    gs_peer_t *p = peer_by_handle(svc, from);
    pid = p != NULL ? &p->id : NULL;
  }
  delivery_queue(svc, topic, data, len, id, pid);
}

/* ---- mesh events ---------------------------------------------------------------------------- */

static void cb_mesh_changed(void *ud, const char *topic, ld_gs_peer_t peer, bool joined) {
  ld_gs_service_t *svc = ud;
  (void)topic;
  (void)peer;
  (void)joined;
  svc->mesh_dirty = true;
  if (svc->ev.on_mesh_changed != NULL)
    arm_soon(svc);
}

typedef struct mesh_change {
  char *topic;
  size_t size;
} mesh_change_t;

/* Collects the changed topics first: the handlers may subscribe or unsubscribe. */
static void report_mesh(ld_gs_service_t *svc) {
  if (!svc->mesh_dirty || svc->ev.on_mesh_changed == NULL)
    return;
  svc->mesh_dirty = false;
  size_t n = 0, cap = ld_hashmap_size(svc->subs);
  mesh_change_t *ch = cap > 0 ? calloc(cap, sizeof *ch) : NULL;
  ld_hashmap_iter_t it = {0};
  const void *key;
  size_t klen;
  void *value;
  while (ch != NULL && ld_hashmap_next(svc->subs, &it, &key, &klen, &value)) {
    gs_sub_t *sub = value;
    size_t size = ld_gs_router_mesh_size(svc->router, key);
    if (size == sub->mesh_reported || (ch[n].topic = strdup(key)) == NULL)
      continue;
    sub->mesh_reported = size;
    ch[n++].size = size;
  }
  for (size_t i = 0; i < n; i++) {
    if (svc->ev.on_mesh_changed != NULL && sub_get(svc, ch[i].topic) != NULL)
      svc->ev.on_mesh_changed(svc, ch[i].topic, ch[i].size, svc->ev_ud);
    free(ch[i].topic);
  }
  free(ch);
}

/* ---- validation ----------------------------------------------------------------------------- */

static const gs_validator_t *next_validator(const ld_gs_service_t *svc, const char *topic,
                                            int after) {
  for (size_t i = 0; i < svc->n_validators; i++) {
    const gs_validator_t *v = &svc->validators[i];
    if (v->id > after && (v->topic == NULL || strcmp(v->topic, topic) == 0))
      return v;
  }
  return NULL;
}

static void val_unlink(ld_gs_service_t *svc, gs_val_t *v) {
  if (!v->linked)
    return;
  if (v->prev != NULL)
    v->prev->next = v->next;
  else
    svc->vals_head = v->next;
  if (v->next != NULL)
    v->next->prev = v->prev;
  else
    svc->vals_tail = v->prev;
  v->prev = v->next = NULL;
  v->linked = false;
}

static void val_finish(ld_gs_service_t *svc, gs_val_t *v, ld_gs_verdict_t verdict) {
  val_unlink(svc, v);
  ld_hashmap_remove_u64(svc->vals, v->vid);
  svc->completing = v;
  ld_gs_router_validated(svc->router, v->vid, verdict, ld_now_ms());
  svc->completing = NULL;
  free(v);
  arm_timer(svc);
}

static void val_queue(ld_gs_service_t *svc, gs_val_t *v) {
  v->queued = true;
  v->run_next = NULL;
  if (svc->run_tail != NULL)
    svc->run_tail->run_next = v;
  else
    svc->run_head = v;
  svc->run_tail = v;
  arm_soon(svc);
}

/* Calls the next validator of `v`, or accepts it when none is left. */
static void val_step(ld_gs_service_t *svc, gs_val_t *v) {
  if (v->expired) {
    svc->stats.validations_timed_out++;
    val_finish(svc, v, LD_GS_IGNORE);
    return;
  }
  const gs_validator_t *val = next_validator(svc, v->topic, v->step);
  if (val == NULL) {
    val_finish(svc, v, LD_GS_ACCEPT);
    return;
  }
  v->step = val->id;
  v->waiting = true;
  uint64_t vid = v->vid;
  val->fn(svc, vid, v->topic, v->data, v->len, v->has_from ? &v->from : NULL, val->ud);
  const gs_val_t *after = ld_hashmap_get_u64(svc->vals, vid);
  if (after != NULL && after->waiting)
    ld_gs_router_validation_deferred(svc->router, vid);
}

static void run_validations(ld_gs_service_t *svc) {
  gs_val_t *v = svc->run_head;
  svc->run_head = svc->run_tail = NULL;
  while (v != NULL) {
    gs_val_t *next = v->run_next;
    v->queued = false;
    val_step(svc, v);
    v = next;
  }
}

static gs_val_t *val_new(ld_gs_service_t *svc, uint64_t vid, ld_gs_peer_t from, const char *topic,
                         const uint8_t *data, size_t len) {
  size_t tlen = strlen(topic);
  gs_val_t *v = calloc(1, sizeof *v + tlen + 1 + len);
  if (v == NULL)
    return NULL;
  v->vid = vid;
  v->deadline = ld_now_ms() + svc->validation_timeout;
  gs_peer_t *p = peer_by_handle(svc, from);
  if (p != NULL) {
    v->has_from = true;
    v->from = p->id;
  }
  v->topic = (char *)(v + 1);
  memcpy(v->topic, topic, tlen + 1);
  v->data = (uint8_t *)v->topic + tlen + 1;
  if (len > 0)
    memcpy(v->data, data, len);
  v->len = len;
  if (ld_hashmap_put_u64(svc->vals, vid, v, NULL) != 0) {
    free(v);
    return NULL;
  }
  v->prev = svc->vals_tail;
  if (svc->vals_tail != NULL)
    svc->vals_tail->next = v;
  else
    svc->vals_head = v;
  svc->vals_tail = v;
  v->linked = true;
  return v;
}

static void cb_validate(void *ud, uint64_t vid, ld_gs_peer_t from, const char *topic,
                        const uint8_t *data, size_t len, const uint8_t id[LD_GS_MSG_ID_LEN]) {
  ld_gs_service_t *svc = ud;
  (void)id;
  if (next_validator(svc, topic, 0) == NULL) {
    ld_gs_router_validated(svc->router, vid, LD_GS_ACCEPT, ld_now_ms());
    return;
  }
  gs_val_t *v = val_new(svc, vid, from, topic, data, len);
  if (v == NULL) {
    ld_gs_router_validated(svc->router, vid, LD_GS_IGNORE, ld_now_ms());
    return;
  }
  val_queue(svc, v);
}

static void expire_validations(ld_gs_service_t *svc, uint64_t now) {
  while (svc->vals_head != NULL && svc->vals_head->deadline <= now) {
    gs_val_t *v = svc->vals_head;
    val_unlink(svc, v);
    v->expired = true;
    if (v->queued)
      continue; /* val_step answers it */
    LD_DEBUG(LOG_TOPIC, "validation of a message on %s timed out", v->topic);
    svc->stats.validations_timed_out++;
    val_finish(svc, v, LD_GS_IGNORE);
  }
}

int ld_gs_service_validation_done(ld_gs_service_t *svc, uint64_t token, ld_gs_verdict_t verdict) {
  if (svc == NULL)
    return LD_ERR_INVALID_ARG;
  gs_val_t *v = ld_hashmap_get_u64(svc->vals, token);
  if (v == NULL || !v->waiting)
    return LD_ERR_NOT_FOUND;
  if (verdict != LD_GS_ACCEPT && verdict != LD_GS_REJECT && verdict != LD_GS_IGNORE)
    return LD_ERR_INVALID_ARG;
  v->waiting = false;
  if (verdict == LD_GS_ACCEPT && next_validator(svc, v->topic, v->step) != NULL)
    val_queue(svc, v);
  else
    val_finish(svc, v, verdict);
  return 0;
}

int ld_gs_service_add_validator(ld_gs_service_t *svc, const char *topic, ld_gs_validator_fn fn,
                                void *user_data) {
  if (svc == NULL || fn == NULL || (topic != NULL && !topic_ok(topic)))
    return LD_ERR_INVALID_ARG;
  if (svc->n_validators == LD_GS_SERVICE_MAX_VALIDATORS)
    return LD_ERR_LIMIT;
  char *copy = topic != NULL ? strdup(topic) : NULL;
  if (topic != NULL && copy == NULL)
    return LD_ERR_NOMEM;
  gs_validator_t *v = &svc->validators[svc->n_validators++];
  v->id = ++svc->next_validator_id;
  v->topic = copy;
  v->fn = fn;
  v->ud = user_data;
  return v->id;
}

int ld_gs_service_remove_validator(ld_gs_service_t *svc, int validator_id) {
  if (svc == NULL)
    return LD_ERR_INVALID_ARG;
  for (size_t i = 0; i < svc->n_validators; i++) {
    if (svc->validators[i].id != validator_id)
      continue;
    free(svc->validators[i].topic);
    memmove(&svc->validators[i], &svc->validators[i + 1],
            (svc->n_validators - i - 1) * sizeof svc->validators[0]);
    svc->n_validators--;
    return 0;
  }
  return LD_ERR_NOT_FOUND;
}

/* ---- timers' work --------------------------------------------------------------------------- */

static void run_retries(ld_gs_service_t *svc, uint64_t now) {
  if (svc->next_retry == 0 || now < svc->next_retry)
    return;
  svc->next_retry = 0;
  ld_hashmap_iter_t it = {0};
  void *value;
  while (ld_hashmap_next(svc->peers, &it, NULL, NULL, &value)) {
    gs_peer_t *p = value;
    if (p->retry_at == 0)
      continue;
    if (p->retry_at <= now) {
      p->retry_at = 0;
      out_ensure(p); /* failures only reschedule: the map is not modified */
    }
    if (p->retry_at != 0 && (svc->next_retry == 0 || p->retry_at < svc->next_retry))
      svc->next_retry = p->retry_at;
  }
}

static void on_timer(uv_timer_t *t) {
  ld_gs_service_t *svc = t->data;
  uint64_t now = ld_now_ms();
  svc->timer_at = UINT64_MAX;
  if (now >= ld_gs_router_next_deadline(svc->router))
    ld_gs_router_heartbeat(svc->router, now);
  expire_validations(svc, now);
  run_retries(svc, now);
  arm_timer(svc);
}

static void on_soon(uv_timer_t *t) {
  ld_gs_service_t *svc = t->data;
  svc->soon_armed = false;
  run_validations(svc);
  run_deliveries(svc);
  report_mesh(svc);
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

void ld_gs_service_config_default(ld_gs_service_config_t *cfg) {
  static const char *const defaults[] = {LD_GS_ID_WAKU_RELAY, LD_GS_ID_MESHSUB_12,
                                         LD_GS_ID_MESHSUB_11, LD_GS_ID_MESHSUB_10};
  memset(cfg, 0, sizeof *cfg);
  for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
    cfg->protocols[i] = defaults[i];
  cfg->n_protocols = sizeof defaults / sizeof defaults[0];
  ld_gs_params_nwaku(&cfg->params);
  cfg->max_queued_bytes = LD_GS_SERVICE_DEFAULT_MAX_QUEUED;
  cfg->validation_timeout_ms = LD_GS_SERVICE_DEFAULT_VALIDATION_TIMEOUT_MS;
  cfg->deliver_own = true;
}

static int config_copy(ld_gs_service_t *svc, const ld_gs_service_config_t *cfg) {
  svc->cfg = *cfg;
  if (cfg->n_protocols == 0) {
    ld_gs_service_config_t def;
    ld_gs_service_config_default(&def);
    memcpy(svc->cfg.protocols, def.protocols, sizeof def.protocols);
    svc->cfg.n_protocols = def.n_protocols;
  }
  if (svc->cfg.n_protocols > LD_GS_SERVICE_MAX_PROTOCOLS || ld_gs_params_check(&cfg->params) != 0)
    return LD_ERR_INVALID_ARG;
  for (size_t i = 0; i < svc->cfg.n_protocols; i++) {
    ld_gs_proto_t proto;
    const char *id = svc->cfg.protocols[i];
    if (id == NULL || ld_gs_proto_from_id(id, &proto) != 0)
      return LD_ERR_INVALID_ARG;
    if ((svc->proto_ids[i] = strdup(id)) == NULL)
      return LD_ERR_NOMEM;
    svc->cfg.protocols[i] = svc->proto_ids[i];
  }
  svc->max_queued =
      cfg->max_queued_bytes != 0 ? cfg->max_queued_bytes : LD_GS_SERVICE_DEFAULT_MAX_QUEUED;
  if (svc->max_queued > LD_STREAM_MAX_BUFFERED)
    svc->max_queued = LD_STREAM_MAX_BUFFERED;
  svc->validation_timeout = cfg->validation_timeout_ms != 0
                                ? cfg->validation_timeout_ms
                                : LD_GS_SERVICE_DEFAULT_VALIDATION_TIMEOUT_MS;
  return 0;
}

static int timers_init(ld_gs_service_t *svc) {
  svc->timers = calloc(1, sizeof *svc->timers);
  if (svc->timers == NULL)
    return LD_ERR_NOMEM;
  uv_loop_t *loop = ld_switch_loop(svc->sw);
  uv_timer_init(loop, &svc->timers->hb);
  uv_timer_init(loop, &svc->timers->soon);
  svc->timers->hb.data = svc;
  svc->timers->soon.data = svc;
  svc->timers->open = 2;
  svc->timer_at = UINT64_MAX;
  return 0;
}

static int state_init(ld_gs_service_t *svc) {
  static const ld_gs_callbacks_t callbacks = {
      .send = cb_send,
      .validate = cb_validate,
      .deliver = cb_deliver,
      .disconnect = cb_disconnect,
      .mesh_changed = cb_mesh_changed,
  };
  uint64_t seed = svc->cfg.seed;
  if (seed == 0)
    ld_random_bytes(&seed, sizeof seed);
  ld_buf_init(&svc->frame);
  svc->peers = ld_hashmap_new(64);
  svc->by_id = ld_hashmap_new(64);
  svc->subs = ld_hashmap_new(16);
  svc->vals = ld_hashmap_new(64);
  if (svc->peers == NULL || svc->by_id == NULL || svc->subs == NULL || svc->vals == NULL)
    return LD_ERR_NOMEM;
  svc->router = ld_gs_router_new(&svc->cfg.params, &callbacks, svc, seed);
  if (svc->router == NULL)
    return LD_ERR_NOMEM;
  return timers_init(svc);
}

/* LD_ERR_EXISTS when one of our protocols is registered already (checked before registering
 * anything, since handlers cannot be removed). */
static int check_free_protocols(const ld_gs_service_t *svc) {
  size_t n = ld_switch_protocols(svc->sw, NULL, 0);
  const char **list = n > 0 ? calloc(n, sizeof *list) : NULL;
  if (n > 0 && list == NULL)
    return LD_ERR_NOMEM;
  n = ld_switch_protocols(svc->sw, list, n);
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++)
    for (size_t j = 0; j < svc->cfg.n_protocols; j++)
      if (strcmp(list[i], svc->proto_ids[j]) == 0)
        rc = LD_ERR_EXISTS;
  free(list);
  return rc;
}

static int register_all(ld_gs_service_t *svc) {
  int rc = check_free_protocols(svc);
  if (rc == 0)
    rc = ld_switch_add_listener(svc->sw, &k_switch_events, svc);
  if (rc != 0)
    return rc;
  for (size_t i = 0; i < svc->cfg.n_protocols; i++) {
    rc = ld_switch_handle(svc->sw, svc->proto_ids[i], on_accept, svc);
    if (rc != 0) {
      svc->dead = true; /* the switch keeps pointing at us: stay allocated, inert */
      return rc;
    }
  }
  return 0;
}

/* Connections that exist already (the service was created late). */
static void adopt_connections(ld_gs_service_t *svc) {
  size_t n = ld_switch_connections(svc->sw, NULL, 0);
  ld_conn_t **conns = n > 0 ? calloc(n, sizeof *conns) : NULL;
  if (conns == NULL)
    return;
  n = ld_switch_connections(svc->sw, conns, n);
  for (size_t i = 0; i < n; i++) {
    const ld_identify_info_t *info =
        svc->identify != NULL ? ld_identify_get(svc->identify, conns[i]) : NULL;
    if (info != NULL)
      ld_gs_service_peer_identified(svc, conns[i], info);
    else
      sw_connected(conns[i], svc);
  }
  free(conns);
}

static void service_release(ld_gs_service_t *svc);

ld_gs_service_t *ld_gs_service_new(ld_switch_t *sw, ld_identify_t *id,
                                   const ld_gs_service_config_t *cfg, int *err) {
  ld_gs_service_config_t def;
  if (cfg == NULL) {
    ld_gs_service_config_default(&def);
    cfg = &def;
  }
  int rc = sw != NULL ? 0 : LD_ERR_INVALID_ARG;
  ld_gs_service_t *svc = rc == 0 ? calloc(1, sizeof *svc) : NULL;
  if (rc == 0 && svc == NULL)
    rc = LD_ERR_NOMEM;
  if (rc == 0) {
    svc->sw = sw;
    svc->identify = id;
    rc = config_copy(svc, cfg);
  }
  if (rc == 0)
    rc = state_init(svc);
  if (rc == 0)
    rc = register_all(svc);
  if (err != NULL)
    *err = rc;
  if (rc != 0) {
    if (svc != NULL && !svc->dead)
      service_release(svc);
    return NULL;
  }
  if (id != NULL)
    ld_identify_set_events(id, &k_identify_events, svc);
  adopt_connections(svc);
  return svc;
}

static void free_value(void *v) {
  free(v);
}

static void service_release(ld_gs_service_t *svc) {
  ld_hashmap_iter_t it = {0};
  void *value;
  while (svc->peers != NULL && ld_hashmap_next(svc->peers, &it, NULL, NULL, &value)) {
    peer_free(value, false);
    ld_hashmap_iter_init(&it);
  }
  ld_gs_router_free(svc->router);
  ld_hashmap_free(svc->peers, NULL);
  ld_hashmap_free(svc->by_id, NULL);
  ld_hashmap_free(svc->subs, free_value);
  ld_hashmap_free(svc->vals, free_value);
  for (gs_delivery_t *d = svc->dl_head, *next; d != NULL; d = next) {
    next = d->next;
    free(d);
  }
  for (size_t i = 0; i < svc->n_validators; i++)
    free(svc->validators[i].topic);
  for (size_t i = 0; i < LD_GS_SERVICE_MAX_PROTOCOLS; i++)
    free(svc->proto_ids[i]);
  ld_buf_clear(&svc->frame);
  if (svc->timers != NULL) {
    uv_close((uv_handle_t *)&svc->timers->hb, timers_closed);
    uv_close((uv_handle_t *)&svc->timers->soon, timers_closed);
    svc->timers->hb.data = svc->timers;
    svc->timers->soon.data = svc->timers;
  }
  free(svc);
}

void ld_gs_service_free(ld_gs_service_t *svc) {
  if (svc == NULL)
    return;
  /* no router calls and no events while tearing down */
  ld_hashmap_iter_t it = {0};
  void *value;
  while (ld_hashmap_next(svc->peers, &it, NULL, NULL, &value))
    ((gs_peer_t *)value)->added = false;
  service_release(svc);
}

void ld_gs_service_set_events(ld_gs_service_t *svc, const ld_gs_service_events_t *ev,
                              void *user_data) {
  memset(&svc->ev, 0, sizeof svc->ev);
  if (ev != NULL)
    svc->ev = *ev;
  svc->ev_ud = user_data;
}

/* ---- subscriptions and publishing ----------------------------------------------------------- */

int ld_gs_service_subscribe(ld_gs_service_t *svc, const char *topic, ld_gs_message_fn on_message,
                            void *user_data) {
  if (svc == NULL || !topic_ok(topic))
    return LD_ERR_INVALID_ARG;
  size_t tlen = strlen(topic);
  if (sub_get(svc, topic) != NULL)
    return LD_ERR_EXISTS;
  if (ld_hashmap_size(svc->subs) >= LD_GS_SERVICE_MAX_SUBSCRIPTIONS)
    return LD_ERR_LIMIT;
  gs_sub_t *sub = calloc(1, sizeof *sub);
  if (sub == NULL || ld_hashmap_put(svc->subs, topic, tlen + 1, sub, NULL) != 0) {
    free(sub);
    return LD_ERR_NOMEM;
  }
  sub->fn = on_message;
  sub->ud = user_data;
  int rc = ld_gs_router_subscribe(svc->router, topic, ld_now_ms());
  arm_timer(svc);
  if (rc < 0) {
    free(ld_hashmap_remove(svc->subs, topic, tlen + 1));
    return rc;
  }
  return 0;
}

int ld_gs_service_unsubscribe(ld_gs_service_t *svc, const char *topic) {
  if (svc == NULL || topic == NULL)
    return LD_ERR_INVALID_ARG;
  gs_sub_t *sub = ld_hashmap_remove(svc->subs, topic, strlen(topic) + 1);
  if (sub == NULL)
    return LD_ERR_NOT_FOUND;
  free(sub);
  int rc = ld_gs_router_unsubscribe(svc->router, topic, ld_now_ms());
  arm_timer(svc);
  return rc;
}

bool ld_gs_service_subscribed(const ld_gs_service_t *svc, const char *topic) {
  return svc != NULL && topic != NULL && sub_get(svc, topic) != NULL;
}

int ld_gs_service_publish(ld_gs_service_t *svc, const char *topic, const uint8_t *data,
                          size_t len) {
  return ld_gs_service_publish_id(svc, topic, data, len, NULL);
}

int ld_gs_service_publish_id(ld_gs_service_t *svc, const char *topic, const uint8_t *data,
                             size_t len, uint8_t id_out[LD_GS_MSG_ID_LEN]) {
  static const uint8_t empty[1];
  if (svc == NULL || !topic_ok(topic) || (data == NULL && len > 0))
    return LD_ERR_INVALID_ARG;
  if (data == NULL)
    data = empty;
  uint8_t id[LD_GS_MSG_ID_LEN];
  ld_gs_msg_id(data, len, id);
  if (id_out != NULL)
    memcpy(id_out, id, sizeof id);
  int rc = ld_gs_router_publish_id(svc->router, topic, data, len, id, ld_now_ms());
  arm_timer(svc);
  if (rc < 0 || !svc->cfg.deliver_own)
    return rc;
  gs_sub_t *sub = sub_get(svc, topic);
  if (sub != NULL && sub->fn != NULL)
    delivery_queue(svc, topic, data, len, id, NULL);
  return rc;
}

int ld_gs_service_seen_reach(const ld_gs_service_t *svc, const char *topic, const uint8_t *data,
                             size_t len) {
  static const uint8_t empty[1];
  if (svc == NULL || topic == NULL || (data == NULL && len > 0))
    return LD_ERR_INVALID_ARG;
  uint8_t id[LD_GS_MSG_ID_LEN];
  ld_gs_msg_id(data != NULL ? data : empty, len, id);
  return ld_gs_router_seen_reach(svc->router, topic, id, ld_now_ms());
}

/* ---- introspection -------------------------------------------------------------------------- */

typedef size_t (*peer_list_fn)(const ld_gs_router_t *r, const char *topic, ld_gs_peer_t *out,
                               size_t cap);

static size_t list_peers(const ld_gs_service_t *svc, peer_list_fn fn, const char *topic,
                         ld_peerid_t *out, size_t cap) {
  if (svc == NULL || topic == NULL)
    return 0;
  if (out == NULL || cap == 0)
    return fn(svc->router, topic, NULL, 0);
  ld_gs_peer_t *handles = calloc(cap, sizeof *handles);
  if (handles == NULL)
    return fn(svc->router, topic, NULL, 0);
  size_t total = fn(svc->router, topic, handles, cap);
  size_t n = total < cap ? total : cap;
  for (size_t i = 0; i < n; i++) {
    const gs_peer_t *p = peer_by_handle(svc, handles[i]);
    if (p != NULL)
      out[i] = p->id;
    else
      memset(&out[i], 0, sizeof out[i]);
  }
  free(handles);
  return total;
}

size_t ld_gs_service_mesh_peers(const ld_gs_service_t *svc, const char *topic, ld_peerid_t *out,
                                size_t cap) {
  return list_peers(svc, ld_gs_router_mesh_peers, topic, out, cap);
}

size_t ld_gs_service_topic_peers(const ld_gs_service_t *svc, const char *topic, ld_peerid_t *out,
                                 size_t cap) {
  return list_peers(svc, ld_gs_router_topic_peers, topic, out, cap);
}

int ld_gs_service_topic_stats(const ld_gs_service_t *svc, const char *topic,
                              ld_gs_topic_stats_t *out) {
  if (svc == NULL || topic == NULL || out == NULL)
    return LD_ERR_INVALID_ARG;
  return ld_gs_router_topic_stats(svc->router, topic, out);
}

void ld_gs_service_backlog(const ld_gs_service_t *svc, size_t threshold, size_t *over,
                           size_t *total) {
  *over = *total = 0;
  if (svc == NULL)
    return;
  ld_hashmap_iter_t it = {0};
  void *value;
  while (ld_hashmap_next(svc->peers, &it, NULL, NULL, &value)) {
    const gs_peer_t *p = value;
    if (!p->added)
      continue;
    (*total)++;
    if ((p->out != NULL ? ld_stream_buffered(p->out) : 0) + p->pending.len > threshold)
      (*over)++;
  }
}

size_t ld_gs_service_peers(const ld_gs_service_t *svc, ld_gs_peer_info_t *out, size_t cap) {
  if (svc == NULL)
    return 0;
  size_t n = 0;
  uint64_t now = ld_now_ms();
  ld_hashmap_iter_t it = {0};
  void *value;
  while (ld_hashmap_next(svc->peers, &it, NULL, NULL, &value)) {
    const gs_peer_t *p = value;
    if (!p->added)
      continue;
    if (out != NULL && n < cap) {
      ld_gs_peer_info_t *info = &out[n];
      info->id = p->id;
      info->proto = p->proto;
      info->outbound = p->outbound;
      info->writable = p->out != NULL;
      info->n_conns = p->n_conns;
      info->score = ld_gs_router_peer_score(svc->router, p->handle, now);
      info->rpcs_dropped = p->dropped;
    }
    n++;
  }
  return n;
}

void ld_gs_service_stats(const ld_gs_service_t *svc, ld_gs_service_stats_t *out) {
  *out = svc->stats;
  ld_gs_router_stats(svc->router, &out->router);
}

ld_gs_router_t *ld_gs_service_router(ld_gs_service_t *svc) {
  return svc != NULL ? svc->router : NULL;
}
