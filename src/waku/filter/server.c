#include "waku/filter/server.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/hashmap.h"
#include "base/log.h"
#include "base/varint.h"
#include "p2p/gossipsub/idset.h"
#include "p2p/reqresp.h"
#include "waku/filter/ratelimit.h"

#define TOPIC "filter"

/* One encoded MessagePush frame, shared by every subscriber queue it waits in. */
typedef struct frame {
  size_t refs;
  ld_buf_t buf;
} frame_t;

typedef struct qitem {
  frame_t *f;
  uint64_t at; /* when it was queued */
} qitem_t;

/* Push state of one subscriber (the data attached to its entry in the subscription table). */
typedef struct push_peer {
  ld_filter_server_t *srv;
  ld_peerid_t id;
  ld_conn_t *conn; /* where push streams are opened; NULL while the peer has no connection */
  bool gone;       /* conn is NULL since gone_since */
  uint64_t gone_since;
  ld_stream_t *stream; /* the open push stream */
  bool opening;        /* a stream is being opened (the open callback holds this struct) */
  bool removed;        /* left the table while opening: freed by the open callback */
  unsigned open_failures;
  qitem_t *q; /* ring of cfg.push_queue_max items */
  size_t qhead, qlen;
} push_peer_t;

typedef struct srv_timer {
  uv_timer_t handle;
  ld_filter_server_t *srv;
} srv_timer_t;

/* One served subscribe stream. */
typedef struct serve_ctx {
  ld_filter_server_t *srv;
  ld_conn_t *conn; /* key in srv->inbound only, never dereferenced */
} serve_ctx_t;

struct ld_filter_server {
  ld_switch_t *sw;
  uv_loop_t *loop;
  ld_filter_server_config_t cfg;
  ld_filter_subs_t *subs;
  ld_filter_ratelimit_t *rl;
  ld_gs_idset_t seen;    /* hashes pushed within dedup_ttl_ms */
  ld_hashmap_t *inbound; /* connection → subscribe streams being served */
  srv_timer_t *timer;
  push_peer_t **targets; /* scratch: the subscribers of the message being pushed */
  size_t n_targets, cap_targets;
  ld_filter_server_stats_t stats;
};

static const char *const k_push_protocols[1] = {LD_FILTER_PUSH_PROTOCOL};

static void pump(push_peer_t *pp, uint64_t now);

/* ---- frames and queues ---------------------------------------------------------------------- */

static void frame_unref(frame_t *f) {
  if (--f->refs > 0)
    return;
  ld_buf_clear(&f->buf);
  free(f);
}

static qitem_t *q_head(push_peer_t *pp) {
  return &pp->q[pp->qhead];
}

static void q_pop(push_peer_t *pp) {
  frame_unref(q_head(pp)->f);
  pp->qhead = (pp->qhead + 1) % pp->srv->cfg.push_queue_max;
  pp->qlen--;
  pp->srv->stats.queued--;
}

/* Drops every waiting frame, counting them in *counter (may be NULL). */
static void q_drop_all(push_peer_t *pp, uint64_t *counter) {
  if (counter != NULL)
    *counter += pp->qlen;
  while (pp->qlen > 0)
    q_pop(pp);
}

static void q_expire(push_peer_t *pp, uint64_t now) {
  while (pp->qlen > 0 && now > q_head(pp)->at &&
         now - q_head(pp)->at > pp->srv->cfg.push_timeout_ms) {
    q_pop(pp);
    pp->srv->stats.push_timeouts++;
  }
}

static void enqueue(push_peer_t *pp, frame_t *f, uint64_t now) {
  ld_filter_server_t *srv = pp->srv;
  if (pp->qlen == srv->cfg.push_queue_max) {
    srv->stats.push_dropped++;
    return;
  }
  qitem_t *it = &pp->q[(pp->qhead + pp->qlen) % srv->cfg.push_queue_max];
  it->f = f;
  it->at = now;
  f->refs++;
  pp->qlen++;
  srv->stats.queued++;
  pump(pp, now);
}

/* ---- push streams --------------------------------------------------------------------------- */

static void ignore_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  (void)s;
  (void)data;
  (void)len;
}

static void orphan_close(ld_stream_t *s, int err) {
  (void)s;
  (void)err;
}

/* Handler of push streams whose subscriber has gone: they wind down by themselves. */
static const ld_stream_handler_t k_orphan = {.on_data = ignore_data, .on_close = orphan_close};

static void push_close(ld_stream_t *s, int err) {
  push_peer_t *pp = ld_stream_user_data(s);
  LD_DEBUG(TOPIC, "push stream closed: %s", ld_errname(err));
  pp->stream = NULL;
  if (pp->qlen > 0)
    pump(pp, ld_now_ms());
}

static void push_drain(ld_stream_t *s) {
  pump(ld_stream_user_data(s), ld_now_ms());
}

static const ld_stream_handler_t k_push = {
    .on_data = ignore_data, .on_close = push_close, .on_drain = push_drain};

static void abandon_stream(ld_stream_t *s, bool graceful) {
  ld_stream_set_handler(s, &k_orphan, NULL);
  if (!graceful || ld_stream_close_write(s) != 0)
    ld_stream_reset(s);
}

/* A live connection to `peer` other than `except`, or NULL. */
static ld_conn_t *find_conn(ld_filter_server_t *srv, const ld_peerid_t *peer, ld_conn_t *except) {
  size_t n = ld_switch_connections(srv->sw, NULL, 0);
  ld_conn_t **all = n > 0 ? malloc(n * sizeof *all) : NULL;
  ld_conn_t *found = NULL;
  if (all == NULL)
    return NULL;
  n = ld_switch_connections(srv->sw, all, n);
  for (size_t i = 0; i < n && found == NULL; i++)
    if (all[i] != except && ld_peerid_equal(ld_conn_remote_peer(all[i]), peer))
      found = all[i];
  free(all);
  return found;
}

static void set_conn(push_peer_t *pp, ld_conn_t *c, uint64_t now) {
  pp->conn = c;
  pp->gone = c == NULL;
  pp->gone_since = c == NULL ? now : 0;
}

static void open_stream(push_peer_t *pp, uint64_t now);

static void open_failed(push_peer_t *pp, ld_conn_t *tried, int err, uint64_t now) {
  ld_filter_server_t *srv = pp->srv;
  LD_DEBUG(TOPIC, "push stream not opened: %s", ld_errname(err));
  if (pp->qlen == 0 || ++pp->open_failures >= 2) {
    pp->open_failures = 0;
    q_drop_all(pp, &srv->stats.push_errors);
    return;
  }
  if (tried != NULL && pp->conn == tried && err != LD_ERR_PROTOCOL_UNSUPPORTED) {
    ld_conn_t *other = find_conn(srv, &pp->id, tried);
    if (other != NULL || err == LD_ERR_CLOSED || err == LD_ERR_GOAWAY)
      set_conn(pp, other, now);
  }
  open_stream(pp, now);
}

static void on_push_open(ld_stream_t *s, int err, void *user_data) {
  push_peer_t *pp = user_data;
  pp->opening = false;
  if (pp->removed) {
    if (s != NULL)
      abandon_stream(s, false);
    free(pp->q);
    free(pp);
    return;
  }
  uint64_t now = ld_now_ms();
  if (s == NULL) {
    open_failed(pp, pp->conn, err, now);
    return;
  }
  pp->stream = s;
  pp->open_failures = 0;
  pp->srv->stats.push_streams_opened++;
  ld_stream_set_handler(s, &k_push, pp);
  pump(pp, now);
}

static void open_stream(push_peer_t *pp, uint64_t now) {
  ld_filter_server_t *srv = pp->srv;
  ld_conn_t *c = pp->conn != NULL ? pp->conn : find_conn(srv, &pp->id, NULL);
  if (c == NULL) {
    pp->open_failures = 0;
    q_drop_all(pp, &srv->stats.push_errors);
    return;
  }
  set_conn(pp, c, now);
  int rc = ld_switch_open_stream(srv->sw, c, k_push_protocols, 1, on_push_open, pp);
  if (rc != 0) {
    open_failed(pp, c, rc, now);
    return;
  }
  pp->opening = true;
}

/* Writes waiting frames while the stream takes them; opens a stream when there is none. */
static void pump(push_peer_t *pp, uint64_t now) {
  ld_filter_server_t *srv = pp->srv;
  q_expire(pp, now);
  while (pp->stream != NULL && pp->qlen > 0 &&
         ld_stream_buffered(pp->stream) < LD_FILTER_PUSH_HIGH_WATER) {
    ld_buf_t *b = &q_head(pp)->f->buf;
    int rc = ld_stream_write(pp->stream, b->data, b->len);
    if (rc == LD_ERR_LIMIT && ld_stream_buffered(pp->stream) > 0)
      return;                 /* on_drain resumes */
    if (rc == LD_ERR_LIMIT) { /* larger than a stream ever buffers */
      srv->stats.push_errors++;
      q_pop(pp);
      continue;
    }
    if (rc != 0) {
      abandon_stream(pp->stream, false);
      pp->stream = NULL;
      break;
    }
    srv->stats.pushes++;
    srv->stats.push_bytes += b->len;
    q_pop(pp);
  }
  if (pp->stream == NULL && pp->qlen > 0 && !pp->opening)
    open_stream(pp, now);
}

/* ---- subscribers ---------------------------------------------------------------------------- */

static void on_peer_removed(const ld_peerid_t *peer, void *peer_data, void *user_data) {
  (void)peer;
  (void)user_data;
  push_peer_t *pp = peer_data;
  if (pp == NULL)
    return;
  q_drop_all(pp, NULL);
  if (pp->stream != NULL)
    abandon_stream(pp->stream, true);
  if (pp->opening) {
    pp->removed = true;
    return;
  }
  free(pp->q);
  free(pp);
}

/* Remembers where `peer` (in the table) is connected; creates its push state on first use. */
static int attach_peer(ld_filter_server_t *srv, const ld_peerid_t *peer, ld_conn_t *c,
                       uint64_t now) {
  push_peer_t *pp = ld_filter_subs_peer_data(srv->subs, peer);
  if (pp == NULL) {
    pp = calloc(1, sizeof *pp);
    qitem_t *q = calloc(srv->cfg.push_queue_max, sizeof *q);
    if (pp == NULL || q == NULL) {
      free(pp);
      free(q);
      return LD_ERR_NOMEM;
    }
    pp->srv = srv;
    pp->id = *peer;
    pp->q = q;
    ld_filter_subs_set_peer_data(srv->subs, peer, pp);
  }
  set_conn(pp, c, now);
  return 0;
}

/* Opens the push stream before the first message needs it. */
static void open_early(push_peer_t *pp, uint64_t now) {
  if (pp != NULL && pp->stream == NULL && !pp->opening)
    open_stream(pp, now);
}

/* ---- requests ------------------------------------------------------------------------------- */

static void count_status(ld_filter_server_stats_t *st, uint32_t code) {
  switch (code) {
  case LD_FILTER_STATUS_OK:
    st->status_ok++;
    break;
  case LD_FILTER_STATUS_BAD_REQUEST:
    st->status_bad_request++;
    break;
  case LD_FILTER_STATUS_NOT_FOUND:
    st->status_not_found++;
    break;
  case LD_FILTER_STATUS_TOO_MANY_REQUESTS:
    st->status_too_many_requests++;
    break;
  default:
    st->status_service_unavailable++;
    break;
  }
}

static int answer_rate_limited(ld_filter_server_t *srv, ld_buf_t *resp) {
  ld_filter_str_t id = {LD_FILTER_RATE_LIMITED_REQUEST_ID,
                        strlen(LD_FILTER_RATE_LIMITED_REQUEST_ID)};
  count_status(&srv->stats, LD_FILTER_STATUS_TOO_MANY_REQUESTS);
  return ld_filter_response_encode(&id, LD_FILTER_STATUS_TOO_MANY_REQUESTS,
                                   LD_FILTER_RATE_LIMITED_DESC, resp);
}

/* Applies a decoded request and writes the answer. */
static int answer_request(ld_filter_server_t *srv, ld_conn_t *c, const ld_filter_request_t *req,
                          ld_buf_t *resp) {
  const ld_peerid_t *peer = ld_conn_remote_peer(c);
  uint64_t now = ld_now_ms();
  ld_filter_status_t st;
  srv->stats.requests[req->type]++;
  ld_filter_subs_handle(srv->subs, peer, req, now, &st);
  if (ld_filter_subs_has_peer(srv->subs, peer) && attach_peer(srv, peer, c, now) != 0) {
    ld_filter_subs_remove_peer(srv->subs, peer);
    ld_filter_status_set(&st, LD_FILTER_STATUS_SERVICE_UNAVAILABLE, "out of memory");
  }
  count_status(&srv->stats, st.code);
  if (req->type == LD_FILTER_SUBSCRIBE && st.code == LD_FILTER_STATUS_OK &&
      srv->cfg.open_push_on_subscribe)
    open_early(ld_filter_subs_peer_data(srv->subs, peer), now);
  LD_DEBUG(TOPIC, "%s request answered: %s", ld_filter_request_type_name(req->type), st.desc);
  return ld_filter_response_encode(&req->request_id, st.code, st.desc, resp);
}

static int serve_request(ld_stream_t *s, const uint8_t *data, size_t len, ld_buf_t *resp,
                         void *user_data) {
  ld_filter_server_t *srv = ((serve_ctx_t *)user_data)->srv;
  ld_conn_t *c = ld_stream_conn(s);
  if (!ld_filter_ratelimit_take(srv->rl, ld_conn_remote_peer(c), ld_now_ms()))
    return answer_rate_limited(srv, resp);
  const uint8_t *body = NULL;
  size_t blen = 0;
  ld_filter_request_t req;
  int rc = ld_reqresp_read_frame(data, len, LD_FILTER_MAX_REQUEST_SIZE, &body, &blen);
  if (rc >= 0)
    rc = ld_filter_request_decode(body, blen, &req);
  if (rc < 0) {
    srv->stats.decode_errors++;
    LD_DEBUG(TOPIC, "undecodable subscribe request: %s", ld_errname(rc));
    return 0; /* no answer: our side is half-closed */
  }
  return answer_request(srv, c, &req, resp);
}

static void serve_failed(ld_stream_t *s, int err, void *user_data) {
  (void)s;
  serve_ctx_t *ctx = user_data;
  ctx->srv->stats.request_failures++;
  LD_DEBUG(TOPIC, "subscribe stream without a request: %s", ld_errname(err));
}

static void serve_closed(void *user_data) {
  serve_ctx_t *ctx = user_data;
  uint64_t key = (uint64_t)(uintptr_t)ctx->conn;
  uintptr_t n = (uintptr_t)ld_hashmap_get_u64(ctx->srv->inbound, key);
  if (n > 1)
    ld_hashmap_put_u64(ctx->srv->inbound, key, (void *)(n - 1), NULL);
  else
    ld_hashmap_remove_u64(ctx->srv->inbound, key);
  free(ctx);
}

static const ld_reqresp_server_t k_serve = {
    .on_request = serve_request, .on_failed = serve_failed, .on_closed = serve_closed};

static void accept_subscribe(ld_stream_t *s, void *user_data) {
  ld_filter_server_t *srv = user_data;
  ld_conn_t *c = ld_stream_conn(s);
  uint64_t key = (uint64_t)(uintptr_t)c;
  uintptr_t n = (uintptr_t)ld_hashmap_get_u64(srv->inbound, key);
  serve_ctx_t *ctx = n < LD_FILTER_MAX_INBOUND_STREAMS ? malloc(sizeof *ctx) : NULL;
  if (ctx == NULL || ld_hashmap_put_u64(srv->inbound, key, (void *)(n + 1), NULL) != 0) {
    srv->stats.streams_refused++;
    free(ctx);
    ld_stream_reset(s);
    return;
  }
  *ctx = (serve_ctx_t){srv, c};
  ld_reqresp_opts_t o = {.max_bytes = LD_FILTER_MAX_REQUEST_SIZE + LD_UVARINT_MAX_LEN,
                         .frame_max = LD_FILTER_MAX_REQUEST_SIZE,
                         .timeout_ms = srv->cfg.request_timeout_ms};
  if (ld_reqresp_serve(srv->sw, s, &o, &k_serve, ctx, NULL) != 0)
    serve_closed(ctx); /* the stream was reset; undo the count */
}

/* ---- connection events ---------------------------------------------------------------------- */

static void on_connected(ld_conn_t *c, void *user_data) {
  ld_filter_server_t *srv = user_data;
  push_peer_t *pp = ld_filter_subs_peer_data(srv->subs, ld_conn_remote_peer(c));
  if (pp != NULL && pp->conn == NULL)
    set_conn(pp, c, ld_now_ms());
}

static void on_disconnected(ld_conn_t *c, int reason, void *user_data) {
  (void)reason;
  ld_filter_server_t *srv = user_data;
  ld_hashmap_remove_u64(srv->inbound, (uint64_t)(uintptr_t)c);
  const ld_peerid_t *peer = ld_conn_remote_peer(c);
  push_peer_t *pp = ld_filter_subs_peer_data(srv->subs, peer);
  if (pp != NULL && pp->conn == c)
    set_conn(pp, find_conn(srv, peer, c), ld_now_ms());
}

static const ld_switch_events_t k_switch_events = {.on_connected = on_connected,
                                                   .on_disconnected = on_disconnected};

/* ---- messages ------------------------------------------------------------------------------- */

static void collect_target(const ld_peerid_t *peer, void *peer_data, void *user_data) {
  (void)peer;
  ld_filter_server_t *srv = user_data;
  if (peer_data == NULL)
    return;
  if (srv->n_targets == srv->cap_targets) {
    size_t ncap = srv->cap_targets == 0 ? 16 : srv->cap_targets * 2;
    push_peer_t **p = realloc(srv->targets, ncap * sizeof *p);
    if (p == NULL) {
      srv->stats.push_errors++;
      return;
    }
    srv->targets = p;
    srv->cap_targets = ncap;
  }
  srv->targets[srv->n_targets++] = peer_data;
}

/* True when `hash` was pushed within the TTL; (re)arms its entry either way. */
static bool seen_before(ld_filter_server_t *srv, const uint8_t *hash, uint64_t now) {
  ld_gs_idset_expire(&srv->seen, now, NULL, NULL);
  uint64_t h = ld_gs_idset_hash(hash);
  bool dup = ld_gs_idset_remove_h(&srv->seen, hash, h);
  ld_gs_idset_add_h(&srv->seen, hash, h, now + srv->cfg.dedup_ttl_ms, 0);
  return dup;
}

static frame_t *frame_new(const char *pubsub_topic, size_t topic_len, const ld_waku_message_t *msg,
                          int *err) {
  frame_t *f = malloc(sizeof *f);
  *err = LD_ERR_NOMEM;
  if (f == NULL)
    return NULL;
  f->refs = 1;
  ld_buf_init(&f->buf);
  *err = ld_filter_push_encode(pubsub_topic, topic_len, msg, &f->buf);
  if (*err != 0) {
    free(f);
    return NULL;
  }
  return f;
}

int ld_filter_server_handle_message(ld_filter_server_t *srv, const char *pubsub_topic,
                                    const ld_waku_message_t *msg, const uint8_t *hash) {
  if (srv == NULL || pubsub_topic == NULL || msg == NULL)
    return LD_ERR_INVALID_ARG;
  uint64_t now = ld_now_ms();
  size_t tlen = strlen(pubsub_topic);
  srv->n_targets = 0;
  ld_filter_subs_match(srv->subs, pubsub_topic, tlen, msg->content_topic, msg->content_topic_len,
                       now, collect_target, srv);
  if (srv->n_targets == 0)
    return 0;
  srv->stats.messages++;
  uint8_t own[LD_WAKU_HASH_LEN];
  int rc = hash != NULL ? 0 : ld_waku_message_hash(pubsub_topic, msg, own);
  if (rc != 0)
    return rc;
  if (seen_before(srv, hash != NULL ? hash : own, now)) {
    srv->stats.duplicates++;
    return 0;
  }
  frame_t *f = frame_new(pubsub_topic, tlen, msg, &rc);
  if (f == NULL)
    return rc;
  size_t n = srv->n_targets;
  for (size_t i = 0; i < n; i++)
    enqueue(srv->targets[i], f, now);
  frame_unref(f);
  return (int)n;
}

/* ---- maintenance ---------------------------------------------------------------------------- */

typedef struct sweep {
  ld_filter_server_t *srv;
  uint64_t now;
  ld_peerid_t *gone;
  size_t n_gone, cap_gone;
} sweep_t;

static void sweep_peer(const ld_filter_subs_peer_info_t *info, void *ud) {
  sweep_t *sw = ud;
  push_peer_t *pp = info->data;
  if (pp == NULL)
    return;
  q_expire(pp, sw->now);
  if (!pp->gone || sw->now - pp->gone_since < sw->srv->cfg.maintenance_interval_ms)
    return;
  if (sw->n_gone == sw->cap_gone) {
    size_t ncap = sw->cap_gone == 0 ? 8 : sw->cap_gone * 2;
    ld_peerid_t *p = realloc(sw->gone, ncap * sizeof *p);
    if (p == NULL)
      return;
    sw->gone = p;
    sw->cap_gone = ncap;
  }
  sw->gone[sw->n_gone++] = *info->id;
}

void ld_filter_server_maintain(ld_filter_server_t *srv) {
  uint64_t now = ld_now_ms();
  srv->stats.expired_peers += ld_filter_subs_expire(srv->subs, now);
  sweep_t sw = {srv, now, NULL, 0, 0};
  ld_filter_subs_foreach_peer(srv->subs, sweep_peer, &sw);
  for (size_t i = 0; i < sw.n_gone; i++)
    if (ld_filter_subs_remove_peer(srv->subs, &sw.gone[i]) == 0)
      srv->stats.expired_peers++;
  free(sw.gone);
  ld_gs_idset_expire(&srv->seen, now, NULL, NULL);
  ld_gs_idset_compact(&srv->seen);
  ld_filter_ratelimit_prune(srv->rl, now);
  LD_DEBUG(TOPIC, "maintenance: %zu subscribers, %zu criteria",
           ld_filter_subs_peer_count(srv->subs), ld_filter_subs_criteria_count(srv->subs));
}

static void on_maintenance(uv_timer_t *t) {
  srv_timer_t *st = t->data;
  if (st->srv != NULL)
    ld_filter_server_maintain(st->srv);
}

static void timer_closed(uv_handle_t *h) {
  free(h->data);
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

void ld_filter_server_config_default(ld_filter_server_config_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->max_peers = LD_FILTER_DEFAULT_MAX_PEERS;
  cfg->max_criteria_per_peer = LD_FILTER_DEFAULT_MAX_CRITERIA;
  cfg->subscription_ttl_ms = LD_FILTER_DEFAULT_TTL_MS;
  cfg->maintenance_interval_ms = LD_FILTER_MAINTENANCE_INTERVAL_MS;
  cfg->dedup_ttl_ms = LD_FILTER_DEDUP_TTL_MS;
  cfg->push_timeout_ms = LD_FILTER_PUSH_TIMEOUT_MS;
  cfg->push_queue_max = LD_FILTER_PUSH_QUEUE_MAX;
  cfg->request_timeout_ms = LD_FILTER_REQUEST_TIMEOUT_MS;
  cfg->rate_limit_volume = LD_FILTER_RATE_LIMIT_VOLUME;
  cfg->rate_limit_period_ms = LD_FILTER_RATE_LIMIT_PERIOD_MS;
  cfg->open_push_on_subscribe = true;
}

#define DEFAULT_IF_ZERO(field, value)                                                              \
  do {                                                                                             \
    if ((field) == 0)                                                                              \
      (field) = (value);                                                                           \
  } while (0)

static void config_fill(ld_filter_server_config_t *c) {
  DEFAULT_IF_ZERO(c->max_peers, LD_FILTER_DEFAULT_MAX_PEERS);
  DEFAULT_IF_ZERO(c->max_criteria_per_peer, LD_FILTER_DEFAULT_MAX_CRITERIA);
  DEFAULT_IF_ZERO(c->subscription_ttl_ms, LD_FILTER_DEFAULT_TTL_MS);
  DEFAULT_IF_ZERO(c->maintenance_interval_ms, LD_FILTER_MAINTENANCE_INTERVAL_MS);
  DEFAULT_IF_ZERO(c->dedup_ttl_ms, LD_FILTER_DEDUP_TTL_MS);
  DEFAULT_IF_ZERO(c->push_timeout_ms, LD_FILTER_PUSH_TIMEOUT_MS);
  DEFAULT_IF_ZERO(c->push_queue_max, LD_FILTER_PUSH_QUEUE_MAX);
  DEFAULT_IF_ZERO(c->request_timeout_ms, LD_FILTER_REQUEST_TIMEOUT_MS);
  DEFAULT_IF_ZERO(c->rate_limit_volume, LD_FILTER_RATE_LIMIT_VOLUME);
  DEFAULT_IF_ZERO(c->rate_limit_period_ms, LD_FILTER_RATE_LIMIT_PERIOD_MS);
}

static int state_init(ld_filter_server_t *srv) {
  ld_filter_subs_config_t sc = {srv->cfg.max_peers, srv->cfg.max_criteria_per_peer,
                                srv->cfg.subscription_ttl_ms};
  uint32_t volume = srv->cfg.rate_limit_unlimited ? 0 : srv->cfg.rate_limit_volume;
  srv->subs = ld_filter_subs_new(&sc);
  srv->rl = ld_filter_ratelimit_new(volume, srv->cfg.rate_limit_period_ms, 0);
  srv->inbound = ld_hashmap_new(16);
  srv->timer = calloc(1, sizeof *srv->timer);
  if (srv->subs == NULL || srv->rl == NULL || srv->inbound == NULL || srv->timer == NULL)
    return LD_ERR_NOMEM;
  ld_filter_subs_set_on_removed(srv->subs, on_peer_removed, srv);
  ld_gs_idset_init(&srv->seen, LD_FILTER_DEDUP_MAX);
  return 0;
}

static void start_timer(ld_filter_server_t *srv) {
  srv_timer_t *t = srv->timer;
  uv_timer_init(srv->loop, &t->handle);
  t->handle.data = t;
  t->srv = srv;
  uint64_t every = srv->cfg.maintenance_interval_ms;
  uv_timer_start(&t->handle, on_maintenance, every, every);
  uv_unref((uv_handle_t *)&t->handle);
}

static void release(ld_filter_server_t *srv) {
  ld_filter_subs_free(srv->subs); /* frees every push state */
  ld_filter_ratelimit_free(srv->rl);
  ld_hashmap_free(srv->inbound, NULL);
  ld_gs_idset_clear(&srv->seen);
  free(srv->targets);
  if (srv->timer != NULL && srv->timer->srv != NULL) {
    srv->timer->srv = NULL;
    uv_timer_stop(&srv->timer->handle);
    uv_close((uv_handle_t *)&srv->timer->handle, timer_closed);
  } else {
    free(srv->timer);
  }
  free(srv);
}

ld_filter_server_t *ld_filter_server_new(ld_switch_t *sw, uv_loop_t *loop,
                                         const ld_filter_server_config_t *cfg) {
  int rc = sw != NULL && loop != NULL ? 0 : LD_ERR_INVALID_ARG;
  ld_filter_server_t *srv = rc == 0 ? calloc(1, sizeof *srv) : NULL;
  if (rc == 0 && srv == NULL)
    rc = LD_ERR_NOMEM;
  if (rc == 0) {
    srv->sw = sw;
    srv->loop = loop;
    if (cfg != NULL)
      srv->cfg = *cfg;
    else
      ld_filter_server_config_default(&srv->cfg);
    config_fill(&srv->cfg);
    rc = state_init(srv);
  }
  if (rc == 0)
    rc = ld_switch_handle(sw, LD_FILTER_SUBSCRIBE_PROTOCOL, accept_subscribe, srv);
  if (rc == 0 && (rc = ld_switch_add_listener(sw, &k_switch_events, srv)) != 0) {
    /* the switch keeps the protocol handler, which points at srv: it must stay allocated */
    LD_ERROR(TOPIC, "filter service not started: %s", ld_errname(rc));
    return NULL;
  }
  if (rc != 0) {
    LD_ERROR(TOPIC, "filter service not started: %s", ld_errname(rc));
    if (srv != NULL)
      release(srv);
    return NULL;
  }
  start_timer(srv);
  return srv;
}

void ld_filter_server_free(ld_filter_server_t *srv) {
  if (srv != NULL)
    release(srv);
}

/* ---- queries -------------------------------------------------------------------------------- */

const ld_filter_subs_t *ld_filter_server_subscriptions(const ld_filter_server_t *srv) {
  return srv->subs;
}

void ld_filter_server_set_subscription_ttl(ld_filter_server_t *srv, uint64_t ttl_ms) {
  srv->cfg.subscription_ttl_ms = ttl_ms;
  ld_filter_subs_set_ttl(srv->subs, ttl_ms);
}

void ld_filter_server_get_stats(const ld_filter_server_t *srv, ld_filter_server_stats_t *out) {
  *out = srv->stats;
  out->peers = ld_filter_subs_peer_count(srv->subs);
  out->criteria = ld_filter_subs_criteria_count(srv->subs);
}
