#include "messaging/edge_filter.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "node/events.h"
#include "node/node_filter.h"
#include "waku/core/codecs.h"
#include "waku/filter/codec.h"

#define TOPIC "edge-filter"

typedef struct fpeer {
  struct fpeer *next;
  uint64_t id; /* unique within the edge filter; requests find their peer by it */
  ld_service_peer_t peer;
  bool active;                       /* every SUBSCRIBE so far succeeded */
  bool broken;                       /* to be dropped */
  ld_service_outcome_t drop_outcome; /* what dropping it tells the selector */
  uint64_t added_ms;                 /* when it was picked */
  size_t outstanding;                /* SUBSCRIBE requests without an answer */
  bool ping_inflight;
  unsigned ping_failures;
  uint64_t next_ping_ms;
} fpeer_t;

typedef struct fshard {
  struct fshard *next;
  char *pubsub;
  char **topics;
  size_t n_topics;
  size_t cap;
  fpeer_t *peers;
  size_t n_peers;
} fshard_t;

typedef struct req {
  struct req *prev, *next;
  ld_edge_filter_t *ef; /* NULL once the edge filter is gone */
  uint64_t peer_id;     /* 0: nobody waits for the answer (UNSUBSCRIBE) */
  uint32_t type;        /* ld_filter_request_type_t */
  char *pubsub;
  char **topics;
  size_t n;
  ld_service_dial_t *dial; /* while connecting */
} req_t;

struct ld_edge_filter {
  ld_node_t *node;
  ld_filter_client_t *client;
  ld_service_peers_t *peers;
  ld_edge_filter_config_t cfg;
  ld_edge_filter_callbacks_t cb;
  void *user_data;
  uv_loop_t *loop;
  uv_timer_t *timer;
  int64_t listener;      /* LD_EVENT_CONNECTION */
  int64_t push_listener; /* LD_EVENT_FILTER_PUSH */
  fshard_t *shards;
  size_t n_shards;
  req_t *reqs;
  uint64_t next_id;
  size_t reported; /* peers last reported through on_peers_changed */
  ld_edge_filter_stats_t stats;
};

static void process(ld_edge_filter_t *ef);
static void restart_timer(ld_edge_filter_t *ef, uint64_t first);

void ld_edge_filter_config_default(ld_edge_filter_config_t *cfg) {
  *cfg = (ld_edge_filter_config_t){
      LD_EDGE_FILTER_DEFAULT_TARGET_PEERS, LD_EDGE_FILTER_DEFAULT_PING_INTERVAL_MS,
      LD_EDGE_FILTER_DEFAULT_PING_RETRY_MS, LD_EDGE_FILTER_DEFAULT_TICK_MS};
}

static uint64_t now_ms(const ld_edge_filter_t *ef) {
  (void)ef;
  return ld_now_ms(); /* the clock of the other users of the shared selector */
}

/* ---- requests ------------------------------------------------------------------------------- */

static void free_strings(char **v, size_t n) {
  for (size_t i = 0; v != NULL && i < n; i++)
    free(v[i]);
  free(v);
}

static void req_free(req_t *q) {
  free(q->pubsub);
  free_strings(q->topics, q->n);
  free(q);
}

static void req_unlink(req_t *q) {
  if (q->ef == NULL)
    return;
  if (q->prev != NULL)
    q->prev->next = q->next;
  else
    q->ef->reqs = q->next;
  if (q->next != NULL)
    q->next->prev = q->prev;
}

static req_t *req_new(ld_edge_filter_t *ef, uint64_t peer_id, uint32_t type, const char *pubsub,
                      char *const *topics, size_t n) {
  req_t *q = calloc(1, sizeof *q);
  if (q == NULL)
    return NULL;
  *q = (req_t){.ef = ef, .peer_id = peer_id, .type = type};
  bool ok = pubsub == NULL || (q->pubsub = strdup(pubsub)) != NULL;
  if (ok && n > 0)
    ok = (q->topics = calloc(n, sizeof(char *))) != NULL;
  for (size_t i = 0; ok && i < n; i++, q->n++)
    ok = (q->topics[i] = strdup(topics[i])) != NULL;
  if (!ok) {
    req_free(q);
    return NULL;
  }
  q->next = ef->reqs;
  if (ef->reqs != NULL)
    ef->reqs->prev = q;
  ef->reqs = q;
  return q;
}

static fpeer_t *find_peer(const ld_edge_filter_t *ef, uint64_t id) {
  for (fshard_t *s = ef->shards; s != NULL; s = s->next)
    for (fpeer_t *p = s->peers; p != NULL; p = p->next)
      if (p->id == id)
        return p;
  return NULL;
}

/* A refused SUBSCRIBE counts as transient: the peer is asked again at a later round, paced by
 * the selector's back-off, rather than skipped for the failure expiry. */
static void on_subscribe_result(ld_edge_filter_t *ef, fpeer_t *p, int err, uint32_t code) {
  ld_service_outcome_t outcome = ld_service_outcome_of(err, code);
  if (outcome != LD_SERVICE_SERVED) {
    ef->stats.subscribe_failures++;
    p->broken = true;
    p->drop_outcome = outcome == LD_SERVICE_REFUSED ? LD_SERVICE_TRANSIENT : outcome;
    return;
  }
  ef->stats.subscribes++;
  if (p->outstanding > 0)
    p->outstanding--;
  if (p->outstanding == 0 && !p->active && !p->broken) {
    ld_service_peers_report(ef->peers, &p->peer.id, LD_SERVICE_SERVED, p->added_ms, now_ms(ef));
    p->active = true;
    p->ping_failures = 0;
    p->next_ping_ms = now_ms(ef) + ef->cfg.ping_interval_ms;
  }
}

static void resubscribe(ld_edge_filter_t *ef, fshard_t *s, fpeer_t *p);

static fshard_t *shard_of_peer(const ld_edge_filter_t *ef, const fpeer_t *p) {
  for (fshard_t *s = ef->shards; s != NULL; s = s->next)
    for (fpeer_t *q = s->peers; q != NULL; q = q->next)
      if (q == p)
        return s;
  return NULL;
}

static void on_ping_result(ld_edge_filter_t *ef, fpeer_t *p, bool ok, uint32_t code) {
  p->ping_inflight = false;
  uint64_t now = now_ms(ef);
  if (ok || code == LD_FILTER_STATUS_NOT_FOUND) {
    ef->stats.pings += ok;
    p->ping_failures = 0;
    p->next_ping_ms = now + ef->cfg.ping_interval_ms;
    if (!ok)
      resubscribe(ef, shard_of_peer(ef, p), p);
    return;
  }
  ef->stats.ping_failures++;
  if (++p->ping_failures >= LD_EDGE_FILTER_MAX_PING_FAILURES) {
    p->broken = true; /* repeated failures */
    p->drop_outcome = LD_SERVICE_BROKEN;
  } else
    p->next_ping_ms = now + ef->cfg.ping_retry_ms;
}

/* Records an outcome; never calls the user. */
static void settle(req_t *q, int err, uint32_t code) {
  ld_edge_filter_t *ef = q->ef;
  fpeer_t *p = ef != NULL && q->peer_id != 0 ? find_peer(ef, q->peer_id) : NULL;
  bool ok = err == 0 && code == LD_FILTER_STATUS_OK;
  if (p != NULL && q->type == LD_FILTER_SUBSCRIBE)
    on_subscribe_result(ef, p, err, code);
  else if (p != NULL && q->type == LD_FILTER_SUBSCRIBER_PING)
    on_ping_result(ef, p, ok, err == 0 ? code : 0);
  req_unlink(q);
  req_free(q);
}

static void on_answer(const ld_filter_result_t *res, void *user_data) {
  req_t *q = user_data;
  ld_edge_filter_t *ef = q->ef;
  if (res->err != 0 || res->status_code != LD_FILTER_STATUS_OK)
    LD_DEBUG(TOPIC, "%s failed: %u %s", ld_filter_request_type_name(q->type), res->status_code,
             res->status_desc);
  settle(q, res->err, res->status_code);
  if (ef != NULL)
    process(ef);
}

static int send_request(req_t *q, ld_conn_t *c) {
  ld_filter_client_t *cl = q->ef->client;
  const char *const *topics = (const char *const *)q->topics;
  switch (q->type) {
  case LD_FILTER_SUBSCRIBE:
    return ld_filter_client_subscribe(cl, c, q->pubsub, topics, q->n, on_answer, q);
  case LD_FILTER_UNSUBSCRIBE:
    return ld_filter_client_unsubscribe(cl, c, q->pubsub, topics, q->n, on_answer, q);
  default:
    return ld_filter_client_ping(cl, c, on_answer, q);
  }
}

static void on_connected(ld_conn_t *c, int err, void *user_data) {
  req_t *q = user_data;
  ld_edge_filter_t *ef = q->ef;
  q->dial = NULL;
  if (err == 0)
    err = send_request(q, c);
  if (err == 0)
    return;
  LD_DEBUG(TOPIC, "%s not sent: %s", ld_filter_request_type_name(q->type), ld_errname(err));
  settle(q, err, 0);
  process(ef);
}

/* Starts a request; a failure to start is settled at once (the peer breaks, the next tick drops
 * it). */
static void start(ld_edge_filter_t *ef, fpeer_t *p, uint32_t type, const char *pubsub,
                  char *const *topics, size_t n) {
  req_t *q = req_new(ef, type == LD_FILTER_UNSUBSCRIBE ? 0 : p->id, type, pubsub, topics, n);
  int rc = q != NULL ? 0 : LD_ERR_NOMEM;
  if (rc == 0)
    rc = ld_service_peers_connect(ld_node_switch(ef->node), &p->peer, on_connected, q, &q->dial);
  if (rc == 0)
    return;
  LD_DEBUG(TOPIC, "%s not started: %s", ld_filter_request_type_name(type), ld_errname(rc));
  if (q != NULL)
    settle(q, rc, 0);
  else if (type == LD_FILTER_SUBSCRIBE)
    on_subscribe_result(ef, p, rc, 0);
  else if (type == LD_FILTER_SUBSCRIBER_PING)
    on_ping_result(ef, p, false, 0);
  restart_timer(ef, 0);
}

/* SUBSCRIBE for every topic of the shard, LD_FILTER_MAX_CONTENT_TOPICS per request. */
static void resubscribe(ld_edge_filter_t *ef, fshard_t *s, fpeer_t *p) {
  if (s == NULL)
    return;
  for (size_t i = 0; i < s->n_topics && !p->broken; i += LD_FILTER_MAX_CONTENT_TOPICS) {
    size_t n = s->n_topics - i;
    if (n > LD_FILTER_MAX_CONTENT_TOPICS)
      n = LD_FILTER_MAX_CONTENT_TOPICS;
    p->outstanding++;
    start(ef, p, LD_FILTER_SUBSCRIBE, s->pubsub, &s->topics[i], n);
  }
}

/* ---- maintenance ---------------------------------------------------------------------------- */

static void drop_broken(ld_edge_filter_t *ef, fshard_t *s) {
  fpeer_t **link = &s->peers;
  while (*link != NULL) {
    fpeer_t *p = *link;
    if (!p->broken) {
      link = &p->next;
      continue;
    }
    char id[LD_PEERID_TEXT_MAX];
    if (ld_peerid_to_text(&p->peer.id, id, sizeof id) < 0)
      id[0] = '\0';
    LD_INFO(TOPIC, "dropping filter service peer %s of %s (%s)", id, s->pubsub,
            ld_service_outcome_name(p->drop_outcome));
    ld_service_peers_report(ef->peers, &p->peer.id, p->drop_outcome, p->added_ms, now_ms(ef));
    ef->stats.peers_dropped++;
    *link = p->next;
    s->n_peers--;
    free(p);
  }
}

static void add_peer(ld_edge_filter_t *ef, fshard_t *s, const ld_service_peer_t *cand) {
  fpeer_t *p = calloc(1, sizeof *p);
  if (p == NULL)
    return;
  p->id = ++ef->next_id;
  p->peer = *cand;
  p->drop_outcome = LD_SERVICE_BROKEN;
  p->added_ms = now_ms(ef);
  p->next = s->peers;
  s->peers = p;
  s->n_peers++;
  resubscribe(ef, s, p);
}

static void fill_shard(ld_edge_filter_t *ef, fshard_t *s) {
  size_t want = s->n_peers < ef->cfg.target_peers ? ef->cfg.target_peers - s->n_peers : 0;
  if (want == 0 || s->n_topics == 0)
    return;
  ld_peerid_t exclude[LD_EDGE_FILTER_MAX_TARGET_PEERS];
  ld_service_peer_t cand[LD_EDGE_FILTER_MAX_TARGET_PEERS];
  size_t n_ex = 0;
  for (fpeer_t *p = s->peers; p != NULL && n_ex < LD_EDGE_FILTER_MAX_TARGET_PEERS; p = p->next)
    exclude[n_ex++] = p->peer.id;
  size_t n = ld_service_peers_pick(ef->peers, LD_WAKU_FILTER_SUBSCRIBE_CODEC, exclude, n_ex,
                                   now_ms(ef), cand, want);
  for (size_t i = 0; i < n; i++)
    add_peer(ef, s, &cand[i]);
}

static void ping_due(ld_edge_filter_t *ef, uint64_t now) {
  for (fshard_t *s = ef->shards; s != NULL; s = s->next)
    for (fpeer_t *p = s->peers; p != NULL; p = p->next)
      if (p->active && !p->broken && !p->ping_inflight && now >= p->next_ping_ms) {
        p->ping_inflight = true;
        start(ef, p, LD_FILTER_SUBSCRIBER_PING, NULL, NULL, 0);
      }
}

static bool listed(const ld_peerid_t *ids, size_t n, const ld_peerid_t *id) {
  for (size_t i = 0; i < n; i++)
    if (ld_peerid_equal(&ids[i], id))
      return true;
  return false;
}

/* Distinct active peers; copies up to `max` of them to `out` (may be NULL). */
static size_t active_peers(const ld_edge_filter_t *ef, const char *pubsub, ld_peerid_t *out,
                           size_t max) {
  size_t n = 0;
  ld_peerid_t seen[LD_EDGE_FILTER_MAX_TARGET_PEERS * 8];
  size_t n_seen = 0;
  for (const fshard_t *s = ef->shards; s != NULL; s = s->next) {
    if (pubsub != NULL && strcmp(pubsub, s->pubsub) != 0)
      continue;
    for (const fpeer_t *p = s->peers; p != NULL; p = p->next) {
      if (!p->active || p->broken || listed(seen, n_seen, &p->peer.id))
        continue;
      if (n_seen < sizeof seen / sizeof seen[0])
        seen[n_seen++] = p->peer.id;
      if (out != NULL && n < max)
        out[n] = p->peer.id;
      n++;
    }
  }
  return n;
}

static void report(ld_edge_filter_t *ef) {
  size_t n = active_peers(ef, NULL, NULL, 0);
  if (n == ef->reported)
    return;
  ef->reported = n;
  if (ef->cb.on_peers_changed != NULL)
    ef->cb.on_peers_changed(n, ef->user_data);
}

static void process(ld_edge_filter_t *ef) {
  for (fshard_t *s = ef->shards; s != NULL; s = s->next)
    drop_broken(ef, s);
  for (fshard_t *s = ef->shards; s != NULL; s = s->next)
    fill_shard(ef, s);
  ping_due(ef, now_ms(ef));
  report(ef);
}

static void on_tick(uv_timer_t *t) {
  ld_edge_filter_t *ef = t->data;
  process(ef);
}

static void restart_timer(ld_edge_filter_t *ef, uint64_t first) {
  uv_timer_start(ef->timer, on_tick, first, ef->cfg.tick_ms);
}

/* ---- events --------------------------------------------------------------------------------- */

static void on_push(int kind, const void *payload, void *user_data) {
  (void)kind;
  ld_edge_filter_t *ef = user_data;
  ef->stats.pushes++;
  ef->cb.on_push(payload, ef->user_data);
}

static void on_connection(int kind, const void *payload, void *user_data) {
  (void)kind;
  const ld_event_connection_t *ev = payload;
  ld_edge_filter_t *ef = user_data;
  if (ev->connected || ev->n_conns > 0 || ev->peer == NULL)
    return;
  bool ours = false;
  for (fshard_t *s = ef->shards; s != NULL; s = s->next)
    for (fpeer_t *p = s->peers; p != NULL; p = p->next)
      if (ld_peerid_equal(&p->peer.id, ev->peer)) {
        p->next_ping_ms = 0;
        ours = true;
      }
  if (ours)
    restart_timer(ef, 0);
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

static int check_args(ld_node_t *node, ld_filter_client_t *client, ld_service_peers_t *peers,
                      const ld_edge_filter_config_t *cfg, const ld_edge_filter_callbacks_t *cb) {
  if (node == NULL || client == NULL || peers == NULL || cb == NULL || cb->on_push == NULL)
    return LD_ERR_INVALID_ARG;
  if (cfg != NULL && cfg->target_peers > LD_EDGE_FILTER_MAX_TARGET_PEERS)
    return LD_ERR_INVALID_ARG;
  return ld_node_switch(node) != NULL && ld_node_broker(node) != NULL ? 0 : LD_ERR_STATE;
}

static void apply_config(ld_edge_filter_config_t *out, const ld_edge_filter_config_t *cfg) {
  ld_edge_filter_config_default(out);
  if (cfg == NULL)
    return;
  if (cfg->target_peers > 0)
    out->target_peers = cfg->target_peers;
  if (cfg->ping_interval_ms > 0)
    out->ping_interval_ms = cfg->ping_interval_ms;
  if (cfg->ping_retry_ms > 0)
    out->ping_retry_ms = cfg->ping_retry_ms;
  if (cfg->tick_ms > 0)
    out->tick_ms = cfg->tick_ms;
}

static void free_handle(uv_handle_t *h) {
  free(h);
}

ld_edge_filter_t *ld_edge_filter_new(ld_node_t *node, ld_filter_client_t *client,
                                     ld_service_peers_t *peers, const ld_edge_filter_config_t *cfg,
                                     const ld_edge_filter_callbacks_t *cb, void *user_data,
                                     int *err) {
  int rc = check_args(node, client, peers, cfg, cb);
  ld_edge_filter_t *ef = rc == 0 ? calloc(1, sizeof *ef) : NULL;
  if (rc == 0 && ef == NULL)
    rc = LD_ERR_NOMEM;
  if (rc == 0) {
    *ef = (ld_edge_filter_t){.node = node,
                             .client = client,
                             .peers = peers,
                             .cb = *cb,
                             .user_data = user_data,
                             .listener = -1,
                             .push_listener = -1};
    apply_config(&ef->cfg, cfg);
    ef->loop = ld_switch_loop(ld_node_switch(node));
    ef->timer = malloc(sizeof *ef->timer);
    rc = ef->timer != NULL ? uv_timer_init(ef->loop, ef->timer) : LD_ERR_NOMEM;
    if (rc != 0) {
      free(ef->timer);
      free(ef);
      ef = NULL;
      rc = rc == LD_ERR_NOMEM ? rc : LD_ERR_IO;
    }
  }
  if (rc == 0) {
    ef->timer->data = ef;
    ef->listener =
        ld_broker_subscribe(ld_node_broker(node), LD_EVENT_CONNECTION, on_connection, ef);
    rc = ef->listener > 0 ? 0 : (int)ef->listener;
    if (rc != 0)
      ld_edge_filter_free(ef), ef = NULL;
  }
  if (rc == 0) {
    ef->push_listener =
        ld_broker_subscribe(ld_node_broker(node), LD_EVENT_FILTER_PUSH, on_push, ef);
    rc = ef->push_listener > 0 ? 0 : (int)ef->push_listener;
    if (rc != 0)
      ld_edge_filter_free(ef), ef = NULL;
  }
  if (rc == 0)
    restart_timer(ef, ef->cfg.tick_ms);
  if (err != NULL)
    *err = rc;
  return ef;
}

static void free_shard(fshard_t *s) {
  while (s->peers != NULL) {
    fpeer_t *p = s->peers;
    s->peers = p->next;
    free(p);
  }
  free_strings(s->topics, s->n_topics);
  free(s->pubsub);
  free(s);
}

void ld_edge_filter_free(ld_edge_filter_t *ef) {
  if (ef == NULL)
    return;
  if (ef->listener > 0)
    ld_broker_unsubscribe(ld_node_broker(ef->node), ef->listener);
  if (ef->push_listener > 0)
    ld_broker_unsubscribe(ld_node_broker(ef->node), ef->push_listener);
  uv_timer_stop(ef->timer);
  uv_close((uv_handle_t *)ef->timer, free_handle);
  while (ef->reqs != NULL) {
    req_t *q = ef->reqs;
    ef->reqs = q->next;
    q->ef = NULL;
    if (q->dial != NULL) {
      ld_service_peers_connect_cancel(q->dial);
      req_free(q);
    }
  }
  while (ef->shards != NULL) {
    fshard_t *s = ef->shards;
    ef->shards = s->next;
    free_shard(s);
  }
  free(ef);
}

/* ---- subscriptions -------------------------------------------------------------------------- */

static fshard_t *find_shard(const ld_edge_filter_t *ef, const char *pubsub) {
  for (fshard_t *s = ef->shards; s != NULL; s = s->next)
    if (strcmp(s->pubsub, pubsub) == 0)
      return s;
  return NULL;
}

static long topic_index(const fshard_t *s, const char *topic) {
  for (size_t i = 0; s != NULL && i < s->n_topics; i++)
    if (strcmp(s->topics[i], topic) == 0)
      return (long)i;
  return -1;
}

static fshard_t *new_shard(ld_edge_filter_t *ef, const char *pubsub) {
  if (ef->n_shards >= LD_EDGE_FILTER_MAX_SHARDS)
    return NULL;
  fshard_t *s = calloc(1, sizeof *s);
  if (s == NULL || (s->pubsub = strdup(pubsub)) == NULL) {
    free(s);
    return NULL;
  }
  s->next = ef->shards;
  ef->shards = s;
  ef->n_shards++;
  return s;
}

static void remove_shard(ld_edge_filter_t *ef, fshard_t *s) {
  fshard_t **link = &ef->shards;
  while (*link != s)
    link = &(*link)->next;
  *link = s->next;
  ef->n_shards--;
  free_shard(s);
}

static int add_topic(fshard_t *s, const char *topic) {
  if (s->n_topics >= LD_EDGE_FILTER_MAX_TOPICS)
    return LD_ERR_LIMIT;
  if (s->n_topics == s->cap) {
    size_t cap = s->cap > 0 ? s->cap * 2 : 4;
    char **t = realloc(s->topics, cap * sizeof *t);
    if (t == NULL)
      return LD_ERR_NOMEM;
    s->topics = t;
    s->cap = cap;
  }
  if ((s->topics[s->n_topics] = strdup(topic)) == NULL)
    return LD_ERR_NOMEM;
  s->n_topics++;
  return 0;
}

static bool valid(const char *s) {
  return s != NULL && s[0] != '\0';
}

int ld_edge_filter_subscribe(ld_edge_filter_t *ef, const char *pubsub_topic,
                             const char *content_topic) {
  if (ef == NULL || !valid(pubsub_topic) || !valid(content_topic))
    return LD_ERR_INVALID_ARG;
  fshard_t *s = find_shard(ef, pubsub_topic);
  if (topic_index(s, content_topic) >= 0)
    return 0;
  bool created = s == NULL;
  if (created && ef->n_shards >= LD_EDGE_FILTER_MAX_SHARDS)
    return LD_ERR_LIMIT;
  if (created && (s = new_shard(ef, pubsub_topic)) == NULL)
    return LD_ERR_NOMEM;
  int rc = add_topic(s, content_topic);
  if (rc != 0) {
    if (created)
      remove_shard(ef, s);
    return rc;
  }
  char *topic = s->topics[s->n_topics - 1];
  for (fpeer_t *p = s->peers; p != NULL; p = p->next) {
    if (p->broken)
      continue;
    p->outstanding++;
    start(ef, p, LD_FILTER_SUBSCRIBE, s->pubsub, &topic, 1);
  }
  if (s->n_peers < ef->cfg.target_peers)
    restart_timer(ef, 0);
  return 0;
}

int ld_edge_filter_unsubscribe(ld_edge_filter_t *ef, const char *pubsub_topic,
                               const char *content_topic) {
  if (ef == NULL || !valid(pubsub_topic) || !valid(content_topic))
    return LD_ERR_INVALID_ARG;
  fshard_t *s = find_shard(ef, pubsub_topic);
  long i = topic_index(s, content_topic);
  if (i < 0)
    return LD_ERR_NOT_FOUND;
  char *topic = s->topics[i];
  for (fpeer_t *p = s->peers; p != NULL; p = p->next)
    if (!p->broken)
      start(ef, p, LD_FILTER_UNSUBSCRIBE, s->pubsub, &topic, 1);
  free(topic);
  memmove(&s->topics[i], &s->topics[i + 1], (s->n_topics - (size_t)i - 1) * sizeof(char *));
  s->n_topics--;
  if (s->n_topics == 0) {
    remove_shard(ef, s);
    restart_timer(ef, 0); /* reports the change in peers from the loop */
  }
  return 0;
}

bool ld_edge_filter_subscribed(const ld_edge_filter_t *ef, const char *pubsub_topic,
                               const char *content_topic) {
  if (ef == NULL || !valid(pubsub_topic) || !valid(content_topic))
    return false;
  return topic_index(find_shard(ef, pubsub_topic), content_topic) >= 0;
}

size_t ld_edge_filter_peers(const ld_edge_filter_t *ef, const char *pubsub_topic, ld_peerid_t *out,
                            size_t max) {
  return ef != NULL ? active_peers(ef, pubsub_topic, out, max) : 0;
}

void ld_edge_filter_get_stats(const ld_edge_filter_t *ef, ld_edge_filter_stats_t *out) {
  *out = ef->stats;
}
