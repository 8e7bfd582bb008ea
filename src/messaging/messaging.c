#include "messaging/messaging.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/hashmap.h"
#include "base/hex.h"
#include "base/log.h"
#include "crypto/crypto.h"
#include "messaging/edge_filter.h"
#include "messaging/health.h"
#include "messaging/records.h"
#include "messaging/recv_service.h"
#include "messaging/reliability.h"
#include "messaging/resume.h"
#include "messaging/send_service.h"
#include "messaging/service_peers.h"
#include "node/node_filter.h"
#include "waku/core/codecs.h"
#include "waku/lightpush/client.h"
#include "waku/nrs/nrs.h"
#include "waku/sync/codec.h"

#if __has_include("messaging/messaging_rest.h")
#include "messaging/messaging_rest.h"
/* Shards one resume query covers at most (each with its first LD_RELIABILITY_MAX_TOPICS content
 * topics). */
#define RESUME_MAX_SHARDS 8
#define LD_MESSAGING_HAVE_REST 1
#endif

#define TOPIC "messaging"
#define ID_BYTES 10
#define N_LISTENERS 2

/* A lightpush under way for a delivery task. */
typedef struct lp_call {
  ld_messaging_t *m;
  uint64_t task_id;
  ld_service_peer_t peer;
  ld_service_dial_t *dial;
  ld_lightpush_call_t *call;
  uint64_t started_ms; /* for the service-peer outcome */
  char *pubsub_topic;
  ld_waku_message_t msg;
} lp_call_t;

/* A relay publish under way for a delivery task: RLN-relay proves the message first. */
typedef struct relay_call {
  ld_messaging_t *m;
  uint64_t task_id;
  ld_node_publish_call_t *call;
} relay_call_t;

/* A subscribed content topic and its ID. */
typedef struct sub {
  char id[LD_MESSAGING_SUBSCRIPTION_ID_LEN + 1];
  char *content_topic;
} sub_t;

struct ld_messaging {
  ld_node_t *node;
  ld_messaging_config_t cfg;
  ld_broker_t *broker;
  ld_switch_t *sw;
  ld_send_service_t *send;
  ld_recv_t *recv;
  ld_records_t *records;
  ld_service_peers_t *peers;
  ld_reliability_t *rel;
  ld_edge_filter_t *ef;
  ld_health_tracker_t health;
  ld_hashmap_t *subs_by_topic; /* content topic → sub_t (owned) */
  ld_hashmap_t *subs_by_id;    /* subscription ID → the same sub_t */
  ld_hashmap_t *joined;        /* pubsub topics relay joined for us */
  ld_hashmap_t *lp_calls;      /* task ID → lp_call_t */
  ld_hashmap_t *relay_calls;   /* task ID → relay_call_t */
  ld_reliability_call_t *confirm_call;
  const ld_recv_recovery_t *recovery;
  size_t recovery_range;
  ld_reliability_call_t *recover_call;
  /* p2p reliability: store at start-up only (resume.h) */
  ld_resume_t resume;
  ld_reliability_t *resume_rel; /* store-based, for the one resume query; NULL: store mode */
  ld_reliability_call_t *resume_call;
  char resume_shards[RESUME_MAX_SHARDS][LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1];
  size_t resume_n_shards, resume_next_shard;
  uint64_t resume_since_ms, resume_until_ms;
  int fanout_handle;
  int64_t listeners[N_LISTENERS];
  uv_timer_t tick, kick;
  int open_handles;
  bool in_ef_callback;
  bool closing;
  bool rest_attached;
  ld_messaging_stats_t stats;
  void (*done)(void *user_data);
  void *done_data;
};

static uint64_t wall_ms(void) {
  return ld_wall_ns() / 1000000u;
}

static void random_id(char out[2 * ID_BYTES + 1]) {
  uint8_t bytes[ID_BYTES];
  ld_random_bytes(bytes, sizeof bytes);
  ld_hex_encode(bytes, sizeof bytes, out);
}

void ld_messaging_config_default(ld_messaging_config_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->mode = LD_MESSAGING_CORE;
  cfg->reliability = true;
  cfg->tick_ms = LD_MESSAGING_DEFAULT_TICK_MS;
  cfg->retry_window_ms = LD_MESSAGING_DEFAULT_RETRY_WINDOW_MS;
  cfg->confirm_after_ms = LD_MESSAGING_DEFAULT_CONFIRM_AFTER_MS;
  cfg->dedup_window_ms = LD_MESSAGING_DEFAULT_DEDUP_WINDOW_MS;
  cfg->max_records = LD_MESSAGING_DEFAULT_MAX_RECORDS;
  cfg->max_pending = LD_MESSAGING_DEFAULT_MAX_PENDING;
}

/* ---- events out ------------------------------------------------------------------------------ */

static void publish_send_event(ld_messaging_t *m, int kind, const ld_send_event_t *ev) {
  ld_messaging_send_event_t out = {ev->request_id, true, {0}, ev->error};
  memcpy(out.hash, ev->hash, LD_WAKU_HASH_LEN);
  ld_broker_publish(m->broker, kind, &out);
}

/* Send-service events: the record first, then the broker. */
static void op_event(void *ud, const ld_send_event_t *ev) {
  ld_messaging_t *m = ud;
  if (m->closing)
    return;
  switch (ev->kind) {
  case LD_SEND_EV_PROPAGATED:
    /* the hash of the message as published: RLN-relay may have stamped it again */
    ld_records_set_published(m->records, ev->request_id, ev->hash, ev->timestamp);
    ld_records_mark_propagated(m->records, ev->request_id, ev->done);
    m->stats.propagated++;
    publish_send_event(m, LD_EVENT_MESSAGING_PROPAGATED, ev);
    break;
  case LD_SEND_EV_SENT:
    ld_records_mark_sent(m->records, ev->request_id);
    m->stats.sent++;
    publish_send_event(m, LD_EVENT_MESSAGING_SENT, ev);
    break;
  case LD_SEND_EV_ERROR:
    ld_records_mark_error(m->records, ev->request_id, ev->error);
    m->stats.send_errors++;
    publish_send_event(m, LD_EVENT_MESSAGING_ERROR, ev);
    break;
  case LD_SEND_EV_DROPPED:
    ld_records_mark_given_up(m->records, ev->request_id);
    m->stats.validation_timeouts++;
    break;
  }
}

/* A message seen on a pubsub topic (relay, filter or recovery); true when it was reported. */
static bool on_seen(ld_messaging_t *m, const char *pubsub_topic, const ld_waku_message_t *msg,
                    const uint8_t hash[LD_WAKU_HASH_LEN]) {
  if (m->closing || ld_recv_seen(m->recv, pubsub_topic, msg, hash, wall_ms()) != LD_RECV_DELIVER)
    return false;
  if (ld_records_add_received(m->records, pubsub_topic, hash, msg) != 0)
    LD_WARN(TOPIC, "out of memory recording a received message");
  m->stats.received++;
  ld_messaging_received_event_t ev = {pubsub_topic, {0}, msg};
  memcpy(ev.hash, hash, LD_WAKU_HASH_LEN);
  ld_broker_publish(m->broker, LD_EVENT_MESSAGING_RECEIVED, &ev);
  return true;
}

/* A message we send: the reliability implementation may track it (p2p: awaiting confirmation by
 * peer presence). */
static void track_send(ld_messaging_t *m, const char *pubsub_topic, const ld_waku_message_t *msg,
                       const uint8_t hash[LD_WAKU_HASH_LEN]) {
  if (!m->cfg.reliability || msg->ephemeral)
    return;
  int rc = ld_reliability_track(m->rel, pubsub_topic, msg, hash);
  if (rc != 0)
    LD_DEBUG(TOPIC, "a send is not tracked for confirmation: %s", ld_errname(rc));
}

/* ---- relay ----------------------------------------------------------------------------------- */

/* The outcome of a relay publish that waited for its RLN proof: tracked with its final hash,
 * then handed to the send service. */
static void on_relayed(void *ud, int result, const char *pubsub_topic, const ld_waku_message_t *msg,
                       const uint8_t hash[LD_WAKU_HASH_LEN]) {
  relay_call_t *c = ud;
  ld_messaging_t *m = c->m;
  ld_hashmap_remove_u64(m->relay_calls, c->task_id);
  uint64_t task_id = c->task_id;
  free(c);
  if (m->closing)
    return;
  if (msg != NULL)
    track_send(m, pubsub_topic, msg, hash);
  ld_send_service_relay_done(m->send, task_id, result == LD_ERR_EXISTS ? 0 : result,
                             msg != NULL ? msg->timestamp : 0, ld_now_ms());
}

/* Publishes only when the shard has relay peers (a publish to nobody would mark the message
 * seen and refuse it later); a message relay saw already counts as not propagated. With
 * RLN-relay the outcome comes once the message is proved and published (LD_SEND_LATER). */
static int op_relay(void *ud, uint64_t task_id, const char *pubsub_topic,
                    const ld_waku_message_t *msg, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  ld_messaging_t *m = ud;
  if (ld_gs_service_topic_peers(ld_node_gossipsub(m->node), pubsub_topic, NULL, 0) == 0)
    return 0;
  if (ld_node_rln_stats(m->node) == NULL) { /* no RLN-relay: published at once */
    track_send(m, pubsub_topic, msg, hash);
    int rc = ld_node_publish_hashed(m->node, pubsub_topic, msg, hash);
    return rc == LD_ERR_EXISTS ? 0 : rc;
  }
  relay_call_t *c = calloc(1, sizeof *c);
  if (c == NULL || ld_hashmap_put_u64(m->relay_calls, task_id, c, NULL) != 0) {
    free(c);
    return LD_ERR_NOMEM;
  }
  *c = (relay_call_t){m, task_id, NULL};
  int rc = ld_node_publish_async(m->node, pubsub_topic, msg, hash, on_relayed, c, &c->call);
  if (rc == LD_NODE_PUBLISH_LATER)
    return LD_SEND_LATER;
  ld_hashmap_remove_u64(m->relay_calls, task_id); /* refused at once */
  free(c);
  return rc == LD_ERR_EXISTS ? 0 : rc;
}

/* The relay publishes still waiting for their proofs: published without telling us. */
static void relay_detach_all(ld_messaging_t *m) {
  ld_hashmap_iter_t it = {0};
  void *value;
  while (ld_hashmap_next(m->relay_calls, &it, NULL, NULL, &value)) {
    relay_call_t *c = value;
    ld_node_publish_detach(c->call);
    free(c);
  }
  ld_hashmap_clear(m->relay_calls, NULL);
}

/* ---- lightpush ------------------------------------------------------------------------------- */

static void lp_free(lp_call_t *c) {
  ld_waku_message_clear(&c->msg);
  free(c->pubsub_topic);
  free(c);
}

/* Hands the answer to the send service; the call is gone afterwards. */
static void lp_finish(lp_call_t *c, uint32_t status, const char *desc) {
  ld_messaging_t *m = c->m;
  ld_hashmap_remove_u64(m->lp_calls, c->task_id);
  if (!m->closing)
    ld_send_service_lightpush_done(m->send, c->task_id, status, desc, ld_now_ms());
  lp_free(c);
}

/* The answer tells the service-peer selector how the peer is (service_peers.h): a transient
 * answer (no relay peers yet, overloaded, internal error, timeout) keeps it for the next round,
 * with back-off; only a broken exchange skips it for the failure expiry. */
static void on_pushed(const ld_lightpush_result_t *res, void *ud) {
  lp_call_t *c = ud;
  c->call = NULL;
  ld_service_outcome_t outcome = ld_service_outcome_of(res->err, res->status_code);
  if (outcome != LD_SERVICE_SERVED)
    LD_DEBUG(TOPIC, "lightpush answered %u %s (%s): %s peer", res->status_code,
             res->status_desc != NULL ? res->status_desc : "", ld_errname(res->err),
             ld_service_outcome_name(outcome));
  ld_service_peers_report(c->m->peers, &c->peer.id, outcome, c->started_ms, ld_now_ms());
  lp_finish(c, res->status_code, res->status_desc);
}

static void on_lp_connected(ld_conn_t *conn, int err, void *ud) {
  lp_call_t *c = ud;
  c->dial = NULL;
  if (err != 0) {
    ld_service_peers_report(c->m->peers, &c->peer.id, LD_SERVICE_BROKEN, c->started_ms,
                            ld_now_ms());
    lp_finish(c, LD_LIGHTPUSH_NO_PEERS_TO_RELAY, "Peer is not accessible: dial_failure");
    return;
  }
  ld_lightpush_push_opts_t opts = {0};
  opts.max_msg_size = SIZE_MAX; /* the send service checked the size */
  int rc = ld_lightpush_client_push_ex(c->m->sw, conn, c->pubsub_topic, &c->msg, &opts, on_pushed,
                                       c, &c->call);
  if (rc == LD_ERR_FIELD_TOO_LONG || rc == LD_ERR_INVALID_ARG)
    lp_finish(c, LD_LIGHTPUSH_INVALID_MESSAGE, ld_strerror(rc));
  else if (rc != 0)
    lp_finish(c, LD_LIGHTPUSH_NO_PEERS_TO_RELAY, ld_strerror(rc));
}

static int op_lightpush(void *ud, uint64_t task_id, const char *pubsub_topic,
                        const ld_waku_message_t *msg, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  ld_messaging_t *m = ud;
  ld_service_peer_t peer;
  if (ld_service_peers_pick(m->peers, LD_WAKU_LIGHTPUSH_CODEC, NULL, 0, ld_now_ms(), &peer, 1) == 0)
    return LD_ERR_NOT_FOUND;
  track_send(m, pubsub_topic, msg, hash);
  lp_call_t *c = calloc(1, sizeof *c);
  if (c == NULL)
    return LD_ERR_NOMEM;
  c->m = m;
  c->task_id = task_id;
  c->peer = peer;
  c->started_ms = ld_now_ms();
  ld_waku_message_init(&c->msg);
  int rc = (c->pubsub_topic = strdup(pubsub_topic)) == NULL ? LD_ERR_NOMEM
                                                            : ld_waku_message_copy(&c->msg, msg);
  if (rc == 0)
    rc = ld_hashmap_put_u64(m->lp_calls, task_id, c, NULL);
  if (rc == 0) {
    rc = ld_service_peers_connect(m->sw, &c->peer, on_lp_connected, c, &c->dial);
    if (rc != 0)
      ld_hashmap_remove_u64(m->lp_calls, task_id);
  }
  if (rc != 0)
    lp_free(c);
  return rc;
}

static void lp_cancel_all(ld_messaging_t *m) {
  ld_hashmap_iter_t it = {0};
  void *value;
  while (ld_hashmap_next(m->lp_calls, &it, NULL, NULL, &value)) {
    lp_call_t *c = value;
    if (c->dial != NULL)
      ld_service_peers_connect_cancel(c->dial);
    if (c->call != NULL)
      ld_lightpush_client_cancel(c->call);
    lp_free(c);
  }
  ld_hashmap_clear(m->lp_calls, NULL);
}

/* ---- confirmation ---------------------------------------------------------------------------- */

static void on_confirmed(int err, const bool *present, size_t n, void *ud) {
  ld_messaging_t *m = ud;
  m->confirm_call = NULL;
  if (m->closing)
    return;
  if (m->rel->ops->absent_unknown)
    ld_send_service_confirm_some(m->send, err, present, n, ld_now_ms());
  else
    ld_send_service_confirm_done(m->send, err, present, n, ld_now_ms());
}

static int op_confirm(void *ud, const uint8_t (*hashes)[LD_WAKU_HASH_LEN], size_t n) {
  ld_messaging_t *m = ud;
  return ld_reliability_confirm(m->rel, hashes, n, on_confirmed, m, &m->confirm_call);
}

/* ---- recovery -------------------------------------------------------------------------------- */

static void recovery_next(ld_messaging_t *m);

static void recovery_finish(ld_messaging_t *m, bool ok) {
  const ld_recv_recovery_t *rec = m->recovery;
  m->recovery = NULL;
  if (ok)
    m->stats.recoveries++;
  ld_recv_recovery_done(m->recv, rec, ok, wall_ms());
}

static bool recovery_known(const uint8_t hash[LD_WAKU_HASH_LEN], void *ud) {
  ld_messaging_t *m = ud;
  return ld_recv_known(m->recv, hash);
}

static void recovery_message(const char *pubsub_topic, const uint8_t hash[LD_WAKU_HASH_LEN],
                             const ld_waku_message_t *msg, void *ud) {
  ld_messaging_t *m = ud;
  if (on_seen(m, pubsub_topic, msg, hash))
    m->stats.recovered++;
}

static void recovery_range_done(int err, size_t recovered, void *ud) {
  ld_messaging_t *m = ud;
  m->recover_call = NULL;
  if (m->closing)
    return;
  if (err != 0) {
    LD_DEBUG(TOPIC, "recovery failed: %s", ld_errname(err));
    recovery_finish(m, false);
    return;
  }
  if (recovered > 0)
    LD_INFO(TOPIC, "recovered %zu missed messages", recovered);
  m->recovery_range++;
  recovery_next(m);
}

static void recovery_next(ld_messaging_t *m) {
  const ld_recv_recovery_t *rec = m->recovery;
  if (m->recovery_range >= rec->n_ranges) {
    recovery_finish(m, true);
    return;
  }
  const ld_recv_range_t *rg = &rec->ranges[m->recovery_range];
  ld_reliability_range_t range = {rg->pubsub_topic, rg->content_topics, rg->n_content_topics,
                                  (int64_t)(rg->start_ms * 1000000u),
                                  (int64_t)(rg->end_ms * 1000000u)};
  int rc = ld_reliability_recover(m->rel, &range, recovery_known, recovery_message,
                                  recovery_range_done, m, &m->recover_call);
  if (rc != 0)
    recovery_finish(m, false);
}

static bool store_peer_available(ld_messaging_t *m) {
  ld_service_peer_t peer;
  return ld_service_peers_pick(m->peers, LD_WAKU_STORE_CODEC, NULL, 0, ld_now_ms(), &peer, 1) > 0;
}

/* Starts the recovery that is due, if any (only with a store peer to ask). */
/* ---- store at start-up only (p2p reliability) ----------------------------------------------- */

static void resume_next(ld_messaging_t *m);

static void resume_range_done(int err, size_t recovered, void *ud) {
  ld_messaging_t *m = ud;
  m->resume_call = NULL;
  if (m->closing)
    return;
  if (err != 0)
    LD_WARN(TOPIC, "resume from the store failed on %s: %s", m->resume_shards[m->resume_next_shard],
            ld_errname(err));
  else if (recovered > 0)
    LD_INFO(TOPIC, "resumed %zu messages from the store on %s", recovered,
            m->resume_shards[m->resume_next_shard]);
  m->resume_next_shard++;
  resume_next(m);
}

static void resume_next(ld_messaging_t *m) {
  while (m->resume_next_shard < m->resume_n_shards) {
    const char *shard = m->resume_shards[m->resume_next_shard];
    const char *topics[LD_RELIABILITY_MAX_TOPICS];
    size_t n = ld_recv_shard_topics(m->recv, shard, topics, LD_RELIABILITY_MAX_TOPICS);
    if (n > LD_RELIABILITY_MAX_TOPICS)
      n = LD_RELIABILITY_MAX_TOPICS;
    ld_reliability_range_t range = {shard, topics, n, (int64_t)(m->resume_since_ms * 1000000u),
                                    (int64_t)(m->resume_until_ms * 1000000u)};
    if (n > 0 && ld_reliability_recover(m->resume_rel, &range, recovery_known, recovery_message,
                                        resume_range_done, m, &m->resume_call) == 0)
      return;
    m->resume_next_shard++;
  }
  m->resume.done = true;
  m->stats.resumes++;
}

/* The one resume query, once something is subscribed and a store peer is known. */
static void resume_poll(ld_messaging_t *m) {
  if (m->resume_rel == NULL || m->resume.done || m->resume_call != NULL || m->closing ||
      ld_recv_topic_count(m->recv) == 0 || !store_peer_available(m))
    return;
  const char *shards[RESUME_MAX_SHARDS];
  size_t n = ld_recv_shards(m->recv, shards, RESUME_MAX_SHARDS);
  m->resume_n_shards = n < RESUME_MAX_SHARDS ? n : RESUME_MAX_SHARDS;
  for (size_t i = 0; i < m->resume_n_shards; i++)
    snprintf(m->resume_shards[i], sizeof m->resume_shards[i], "%s", shards[i]);
  m->resume_next_shard = 0;
  m->resume_until_ms = wall_ms();
  m->resume_since_ms = ld_resume_since_ms(&m->resume, m->resume_until_ms);
  LD_INFO(TOPIC, "resuming from the store since %llu (last online %llu)",
          (unsigned long long)m->resume_since_ms, (unsigned long long)m->resume.last_online_ms);
  resume_next(m);
}

static void recovery_poll(ld_messaging_t *m) {
  resume_poll(m);
  if (m->closing || m->recovery != NULL || !store_peer_available(m))
    return;
  m->recovery = ld_recv_recovery_poll(m->recv, wall_ms());
  if (m->recovery == NULL)
    return;
  m->recovery_range = 0;
  recovery_next(m);
}

/* ---- health ---------------------------------------------------------------------------------- */

static size_t filter_peers(ld_messaging_t *m) {
  if (m->ef != NULL && ld_recv_topic_count(m->recv) > 0)
    return ld_edge_filter_peers(m->ef, NULL, NULL, 0);
  return ld_service_peers_count_connected(m->peers, LD_WAKU_FILTER_SUBSCRIBE_CODEC);
}

static void health_update(ld_messaging_t *m) {
  if (m->closing)
    return;
  ld_health_counts_t c = {0};
  ld_gs_service_t *gs = ld_node_gossipsub(m->node);
  c.relay_mounted = m->cfg.mode == LD_MESSAGING_CORE && gs != NULL;
  c.relay_peers = c.relay_mounted ? ld_gs_service_peers(gs, NULL, 0) : 0;
  c.lightpush_peers = ld_service_peers_count_connected(m->peers, LD_WAKU_LIGHTPUSH_CODEC);
  /* with p2p reliability the peers that reconcile with us stand where store peers stand */
  c.store_peers = ld_service_peers_count_connected(m->peers, ld_node_nrs(m->node) != NULL
                                                                 ? LD_SYNC_RECONCILIATION_PROTOCOL
                                                                 : LD_WAKU_STORE_CODEC);
  c.filter_peers = filter_peers(m);
  ld_connection_status_t st;
  if (!ld_health_tracker_update(&m->health, &c, &st))
    return;
  LD_INFO(TOPIC, "connection status: %s", ld_connection_status_name(st));
  ld_recv_set_status(m->recv, st, wall_ms());
  ld_messaging_status_event_t ev = {st};
  ld_broker_publish(m->broker, LD_EVENT_MESSAGING_CONNECTION_STATUS, &ev);
  recovery_poll(m);
}

static void on_peer_event(int kind, const void *payload, void *ud) {
  (void)kind, (void)payload;
  health_update(ud);
}

/* ---- the loop -------------------------------------------------------------------------------- */

static void on_tick(uv_timer_t *t) {
  ld_messaging_t *m = t->data;
  if (m->closing)
    return;
  ld_send_service_tick(m->send, ld_now_ms());
  if (m->closing)
    return;
  ld_recv_tick(m->recv, wall_ms());
  if (m->resume_rel != NULL && ld_resume_touch(&m->resume, wall_ms(), false) != 0)
    LD_DEBUG(TOPIC, "last-online time not written");
  health_update(m);
  recovery_poll(m);
}

static void on_kick(uv_timer_t *t) {
  ld_messaging_t *m = t->data;
  if (m->closing)
    return;
  ld_send_service_process(m->send, ld_now_ms());
  health_update(m);
}

static void kick(ld_messaging_t *m) {
  uv_timer_start(&m->kick, on_kick, 0, 0);
}

/* ---- receiving ------------------------------------------------------------------------------- */

static void on_fanout(const ld_fanout_message_t *fm, void *ud) {
  on_seen(ud, fm->pubsub_topic, fm->msg, fm->hash);
}

static void on_filter_push(const ld_filter_push_t *push, void *ud) {
  ld_messaging_t *m = ud;
  ld_nrs_t *nrs = ld_node_nrs(m->node);
  if (nrs != NULL && !push->msg->ephemeral) /* a light node's sets are fed by its filter pushes */
    ld_nrs_observe(nrs, push->pubsub_topic, push->msg, push->hash);
  m->in_ef_callback = true;
  on_seen(m, push->pubsub_topic, push->msg, push->hash);
  m->in_ef_callback = false;
}

static void on_filter_peers(size_t n, void *ud) {
  ld_messaging_t *m = ud;
  (void)n;
  m->in_ef_callback = true;
  health_update(m);
  m->in_ef_callback = false;
}

/* Core: joins the shard on relay unless the node is on it already. */
static int join_shard(ld_messaging_t *m, const char *pubsub_topic) {
  if (ld_gs_service_subscribed(ld_node_gossipsub(m->node), pubsub_topic))
    return 0;
  int rc = ld_node_subscribe(m->node, pubsub_topic);
  if (rc == 0)
    rc = ld_hashmap_put(m->joined, pubsub_topic, strlen(pubsub_topic), m, NULL);
  return rc;
}

static void leave_shard(ld_messaging_t *m, const char *pubsub_topic) {
  if (ld_hashmap_remove(m->joined, pubsub_topic, strlen(pubsub_topic)) != NULL)
    ld_node_unsubscribe(m->node, pubsub_topic);
}

static int receive_on(ld_messaging_t *m, const char *content_topic, const ld_recv_change_t *ch) {
  if (m->cfg.mode == LD_MESSAGING_EDGE)
    return ld_edge_filter_subscribe(m->ef, ch->pubsub_topic, content_topic);
  return ch->shard_edge ? join_shard(m, ch->pubsub_topic) : 0;
}

static void receive_off(ld_messaging_t *m, const char *content_topic, const ld_recv_change_t *ch) {
  if (m->cfg.mode == LD_MESSAGING_EDGE)
    ld_edge_filter_unsubscribe(m->ef, ch->pubsub_topic, content_topic);
  else if (ch->shard_edge)
    leave_shard(m, ch->pubsub_topic);
}

static void sub_free(void *p) {
  sub_t *s = p;
  if (s != NULL)
    free(s->content_topic);
  free(s);
}

static int sub_add(ld_messaging_t *m, const char *content_topic) {
  sub_t *s = calloc(1, sizeof *s);
  if (s == NULL || (s->content_topic = strdup(content_topic)) == NULL) {
    sub_free(s);
    return LD_ERR_NOMEM;
  }
  random_id(s->id);
  size_t len = strlen(content_topic);
  if (ld_hashmap_put(m->subs_by_topic, content_topic, len, s, NULL) != 0) {
    sub_free(s);
    return LD_ERR_NOMEM;
  }
  if (ld_hashmap_put(m->subs_by_id, s->id, LD_MESSAGING_SUBSCRIPTION_ID_LEN, s, NULL) != 0) {
    ld_hashmap_remove(m->subs_by_topic, content_topic, len);
    sub_free(s);
    return LD_ERR_NOMEM;
  }
  int rc = ld_reliability_watch(m->rel, content_topic);
  if (rc != 0)
    LD_DEBUG(TOPIC, "no reconciliation set for %s: %s", content_topic, ld_errname(rc));
  return 0;
}

static void sub_remove(ld_messaging_t *m, const char *content_topic) {
  sub_t *s = ld_hashmap_remove(m->subs_by_topic, content_topic, strlen(content_topic));
  if (s != NULL)
    ld_hashmap_remove(m->subs_by_id, s->id, LD_MESSAGING_SUBSCRIPTION_ID_LEN);
  sub_free(s);
}

/* The pubsub topic of a content topic, with the reason of a refusal in `why`. */
static int shard_of(ld_messaging_t *m, const char *content_topic, char *pubsub, char *why,
                    size_t why_cap) {
  ld_topic_error_t terr = LD_TOPIC_OK;
  int rc = content_topic == NULL ? LD_ERR_INVALID_ARG
                                 : ld_recv_shard_of(m->recv, content_topic, pubsub, &terr);
  if (rc == 0)
    return 0;
  const char *reason = terr != LD_TOPIC_OK ? ld_topic_strerror(terr) : ld_strerror(rc);
  return ld_error_fmt(why, why_cap, LD_ERR_INVALID_ARG, "invalid content topic '%s': %s",
                      content_topic ? content_topic : "", reason);
}

int ld_messaging_subscribe(ld_messaging_t *m, const char *content_topic, char *why,
                           size_t why_cap) {
  char pubsub[LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1];
  int rc = shard_of(m, content_topic, pubsub, why, why_cap);
  if (rc != 0 || ld_recv_subscribed(m->recv, content_topic))
    return rc;
  if (m->closing)
    return LD_ERR_STATE;
  ld_recv_change_t ch;
  rc = ld_recv_subscribe(m->recv, content_topic, &ch);
  if (rc == 0) {
    rc = receive_on(m, content_topic, &ch);
    if (rc == 0)
      rc = sub_add(m, content_topic);
    if (rc != 0) {
      ld_recv_unsubscribe(m->recv, content_topic, &ch);
      receive_off(m, content_topic, &ch);
    }
  }
  if (rc == LD_ERR_LIMIT)
    return ld_error_fmt(why, why_cap, rc, "too many content topics (at most %u)",
                        LD_MESSAGING_MAX_CONTENT_TOPICS);
  if (rc != 0)
    return ld_error_fmt(why, why_cap, rc, "cannot subscribe to %s: %s", content_topic,
                        ld_strerror(rc));
  kick(m); /* health (edge filter counts) from the loop */
  return 0;
}

int ld_messaging_unsubscribe(ld_messaging_t *m, const char *content_topic, char *why,
                             size_t why_cap) {
  char pubsub[LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1];
  int rc = shard_of(m, content_topic, pubsub, why, why_cap);
  if (rc != 0)
    return rc;
  ld_recv_change_t ch;
  if (ld_recv_unsubscribe(m->recv, content_topic, &ch) != 0)
    return ld_error_fmt(why, why_cap, LD_ERR_NOT_FOUND, "not subscribed to %s", content_topic);
  receive_off(m, content_topic, &ch);
  sub_remove(m, content_topic);
  return 0;
}

bool ld_messaging_subscribed(const ld_messaging_t *m, const char *content_topic) {
  return content_topic != NULL && ld_recv_subscribed(m->recv, content_topic);
}

bool ld_messaging_each_subscription(const ld_messaging_t *m,
                                    bool (*fn)(void *ctx, const char *content_topic,
                                               const char *subscription_id),
                                    void *ctx) {
  ld_hashmap_iter_t it = {0};
  void *value = NULL;
  while (ld_hashmap_next(m->subs_by_topic, &it, NULL, NULL, &value)) {
    const sub_t *sub = value;
    if (fn(ctx, sub->content_topic, sub->id))
      return true;
  }
  return false;
}

bool ld_messaging_subscription_id(const ld_messaging_t *m, const char *content_topic,
                                  char out[LD_MESSAGING_SUBSCRIPTION_ID_LEN + 1]) {
  const sub_t *s = content_topic == NULL
                       ? NULL
                       : ld_hashmap_get(m->subs_by_topic, content_topic, strlen(content_topic));
  if (s != NULL)
    memcpy(out, s->id, sizeof s->id);
  return s != NULL;
}

/* ---- sending --------------------------------------------------------------------------------- */

static void envelope_message(const ld_messaging_envelope_t *env, ld_waku_message_t *msg) {
  ld_waku_message_init(msg);
  msg->payload = env->payload;
  msg->payload_len = env->payload_len;
  msg->content_topic = env->content_topic;
  msg->content_topic_len = strlen(env->content_topic);
  msg->meta = env->meta;
  msg->meta_len = env->meta_len;
  msg->ephemeral = env->ephemeral;
  msg->timestamp = (int64_t)ld_wall_ns();
}

static bool envelope_valid(const ld_messaging_envelope_t *env) {
  return env != NULL && env->content_topic != NULL &&
         (env->payload != NULL || env->payload_len == 0) &&
         (env->meta != NULL || env->meta_len == 0);
}

int ld_messaging_send(ld_messaging_t *m, const ld_messaging_envelope_t *env,
                      char request_id[LD_MESSAGING_REQUEST_ID_LEN + 1], char *why, size_t why_cap) {
  if (m == NULL || !envelope_valid(env) || request_id == NULL)
    return ld_error_fmt(why, why_cap, LD_ERR_INVALID_ARG, "invalid message");
  if (m->closing)
    return LD_ERR_STATE;
  char sub_why[256] = "", pubsub[LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1];
  int rc = ld_messaging_subscribe(m, env->content_topic, sub_why, sizeof sub_why);
  if (rc == 0)
    rc = shard_of(m, env->content_topic, pubsub, sub_why, sizeof sub_why);
  if (rc != 0)
    return ld_error_fmt(why, why_cap, rc, "Failed to auto-subscribe before sending: %s", sub_why);
  ld_waku_message_t msg;
  envelope_message(env, &msg);
  char rid[LD_MESSAGING_REQUEST_ID_LEN + 1];
  random_id(rid);
  uint8_t hash[LD_WAKU_HASH_LEN];
  rc = ld_send_service_submit(m->send, rid, pubsub, &msg, ld_now_ms(), hash, NULL);
  if (rc != 0)
    return ld_error_fmt(why, why_cap, rc, "Failed to create delivery task: %s",
                        rc == LD_ERR_LIMIT ? "too many messages in flight" : ld_strerror(rc));
  if (ld_records_add_send(m->records, rid, pubsub, &msg, hash) != 0)
    LD_WARN(TOPIC, "out of memory recording request %s", rid);
  memcpy(request_id, rid, sizeof rid);
  m->stats.submitted++;
  kick(m);
  return 0;
}

/* ---- records --------------------------------------------------------------------------------- */

const ld_message_record_t *ld_messaging_record_by_request(const ld_messaging_t *m,
                                                          const char *request_id) {
  return ld_records_by_request(m->records, request_id);
}

const ld_message_record_t *ld_messaging_record_by_hash(const ld_messaging_t *m,
                                                       const uint8_t hash[LD_WAKU_HASH_LEN]) {
  return ld_records_by_hash(m->records, hash);
}

size_t ld_messaging_records_by_topic(const ld_messaging_t *m, const char *content_topic,
                                     size_t skip, size_t take, const ld_message_record_t **out,
                                     size_t max) {
  return ld_records_by_topic(m->records, content_topic, skip, take, out, max);
}

size_t ld_messaging_records_by_subscription(const ld_messaging_t *m, const char *subscription_id,
                                            size_t skip, size_t take,
                                            const ld_message_record_t **out, size_t max) {
  if (subscription_id == NULL || strlen(subscription_id) != LD_MESSAGING_SUBSCRIPTION_ID_LEN)
    return 0;
  const sub_t *s = ld_hashmap_get(m->subs_by_id, subscription_id, LD_MESSAGING_SUBSCRIPTION_ID_LEN);
  return s == NULL ? 0 : ld_records_by_topic(m->records, s->content_topic, skip, take, out, max);
}

ld_connection_status_t ld_messaging_connection_status(const ld_messaging_t *m) {
  return ld_health_tracker_status(&m->health);
}

const ld_messaging_config_t *ld_messaging_config(const ld_messaging_t *m) {
  return &m->cfg;
}

ld_node_t *ld_messaging_node(ld_messaging_t *m) {
  return m->node;
}

void ld_messaging_get_stats(const ld_messaging_t *m, ld_messaging_stats_t *out) {
  *out = m->stats;
}

/* ---- creation -------------------------------------------------------------------------------- */

static void fill_defaults(ld_messaging_config_t *cfg) {
  ld_messaging_config_t d;
  ld_messaging_config_default(&d);
  if (cfg->tick_ms == 0)
    cfg->tick_ms = d.tick_ms;
  if (cfg->retry_window_ms == 0)
    cfg->retry_window_ms = d.retry_window_ms;
  if (cfg->confirm_after_ms == 0)
    cfg->confirm_after_ms = d.confirm_after_ms;
  if (cfg->dedup_window_ms == 0)
    cfg->dedup_window_ms = d.dedup_window_ms;
  if (cfg->max_records == 0)
    cfg->max_records = d.max_records;
  if (cfg->max_pending == 0)
    cfg->max_pending = d.max_pending;
}

static ld_recv_t *make_recv(const ld_messaging_t *m) {
  const ld_node_config_t *nc = ld_node_config(m->node);
  ld_recv_config_t rc;
  ld_recv_config_default(&rc);
  rc.cluster_id = nc->cluster_id;
  rc.num_shards = nc->num_shards_in_network;
  rc.static_shard = nc->n_shards > 0 ? nc->shards[0] : 0;
  rc.dedup_window_ms = m->cfg.dedup_window_ms;
  return ld_recv_new(&rc, wall_ms());
}

/* With p2p reliability a confirmation is a local look-up that waits for peer presence
 * (reliability.h), so a send is asked about soon after it propagated. */
static uint32_t confirm_after_ms(const ld_messaging_t *m) {
  if (ld_node_nrs(m->node) != NULL &&
      m->cfg.confirm_after_ms == LD_MESSAGING_DEFAULT_CONFIRM_AFTER_MS)
    return LD_MESSAGING_P2P_CONFIRM_AFTER_MS;
  return m->cfg.confirm_after_ms;
}

static ld_send_service_t *make_send(ld_messaging_t *m) {
  bool relay = m->cfg.mode == LD_MESSAGING_CORE;
  ld_send_ops_t ops = {relay ? op_relay : NULL, op_lightpush, op_confirm, op_event};
  ld_send_service_config_t sc = {m->cfg.reliability, m->cfg.retry_window_ms, confirm_after_ms(m),
                                 m->cfg.max_pending, ld_node_config(m->node)->max_msg_size};
  return ld_send_service_new(&sc, &ops, m);
}

static int make_edge_filter(ld_messaging_t *m) {
  int err = 0;
  ld_filter_client_t *fc = ld_node_filter_client(m->node, &err);
  if (fc == NULL)
    return err != 0 ? err : LD_ERR_NOMEM;
  ld_edge_filter_callbacks_t cb = {on_filter_push, on_filter_peers};
  m->ef = ld_edge_filter_new(m->node, fc, m->peers, NULL, &cb, m, &err);
  return m->ef == NULL ? (err != 0 ? err : LD_ERR_NOMEM) : 0;
}

/* A light node reconciles with its first service peers that serve reconciliation, chosen and
 * replaced as its filter and lightpush peers are (service_peers.h). */
static bool edge_sync_peer(void *user, const ld_peerid_t *peer) {
  ld_messaging_t *m = user;
  ld_service_peer_t picked[LD_MESSAGING_EDGE_SYNC_PEERS];
  size_t n = ld_service_peers_pick(m->peers, LD_SYNC_RECONCILIATION_PROTOCOL, NULL, 0, ld_now_ms(),
                                   picked, LD_MESSAGING_EDGE_SYNC_PEERS);
  for (size_t i = 0; i < n; i++)
    if (ld_peerid_equal(&picked[i].id, peer))
      return true;
  return false;
}

/* A light node's reconciliation with a service peer tells the selector how the peer is: complete
 * → served; a scope it does not reconcile (a store-sync node) → broken, so that another service
 * peer takes its place; a timeout or reset → transient; any other failure → broken. */
static void edge_sync_session(void *user, const ld_peerid_t *peer, uint64_t started_ms, int err,
                              bool disjoint) {
  ld_messaging_t *m = user;
  ld_service_outcome_t outcome = disjoint ? LD_SERVICE_BROKEN : ld_service_outcome_of(err, 200);
  ld_service_peers_report(m->peers, peer, outcome, started_ms, ld_now_ms());
}

/* p2p when the node runs the Network Reliability Service (--reliability-mode=p2p), else store. */
static ld_reliability_t *make_reliability(ld_messaging_t *m) {
  ld_nrs_t *nrs = ld_node_nrs(m->node);
  if (nrs != NULL) {
    if (m->cfg.mode == LD_MESSAGING_EDGE) {
      ld_nrs_set_eligible(nrs, edge_sync_peer, m);
      ld_nrs_set_session_listener(nrs, edge_sync_session, m);
    }
    return ld_p2p_reliability_new(ld_switch_loop(m->sw), nrs, 0);
  }
  ld_store_reliability_config_t rc = {0};
  rc.max_msg_size = ld_node_config(m->node)->max_msg_size;
  return ld_store_reliability_new(m->sw, m->peers, &rc);
}

static int make_parts(ld_messaging_t *m) {
  m->subs_by_topic = ld_hashmap_new(16);
  m->subs_by_id = ld_hashmap_new(16);
  m->joined = ld_hashmap_new(8);
  m->lp_calls = ld_hashmap_new(16);
  m->relay_calls = ld_hashmap_new(16);
  m->records = ld_records_new(m->cfg.max_records);
  m->peers = ld_service_peers_new(m->node, 0);
  m->recv = make_recv(m);
  m->send = make_send(m);
  if (m->subs_by_topic == NULL || m->subs_by_id == NULL || m->joined == NULL ||
      m->lp_calls == NULL || m->relay_calls == NULL || m->records == NULL || m->peers == NULL ||
      m->recv == NULL || m->send == NULL)
    return LD_ERR_NOMEM;
  m->rel = make_reliability(m);
  if (m->rel == NULL)
    return LD_ERR_NOMEM;
  if (ld_node_nrs(m->node) != NULL) { /* store at start-up only */
    ld_resume_init(&m->resume, ld_node_config(m->node)->local_storage_path);
    ld_store_reliability_config_t rc = {0};
    rc.max_msg_size = ld_node_config(m->node)->max_msg_size;
    m->resume_rel = ld_store_reliability_new(m->sw, m->peers, &rc);
    if (m->resume_rel == NULL)
      return LD_ERR_NOMEM;
  }
  ld_health_tracker_init(&m->health, m->cfg.mode == LD_MESSAGING_CORE);
  return m->cfg.mode == LD_MESSAGING_EDGE ? make_edge_filter(m) : 0;
}

static int attach(ld_messaging_t *m) {
  int h = ld_fanout_add(ld_node_fanout(m->node), LD_FANOUT_BROKER, on_fanout, m);
  if (h < 0)
    return h;
  m->fanout_handle = h;
  static const int kinds[N_LISTENERS] = {LD_EVENT_CONNECTION, LD_EVENT_RELAY_PEER};
  for (int i = 0; i < N_LISTENERS; i++) {
    int64_t l = ld_broker_subscribe(m->broker, kinds[i], on_peer_event, m);
    if (l < 0)
      return (int)l;
    m->listeners[i] = l;
  }
  return 0;
}

static void detach(ld_messaging_t *m) {
  if (m->fanout_handle > 0)
    ld_fanout_remove(ld_node_fanout(m->node), m->fanout_handle);
  m->fanout_handle = 0;
  for (int i = 0; i < N_LISTENERS; i++)
    if (m->listeners[i] > 0)
      ld_broker_unsubscribe(m->broker, m->listeners[i]);
  memset(m->listeners, 0, sizeof m->listeners);
}

static void free_parts(ld_messaging_t *m) {
  ld_edge_filter_free(m->ef);
  if (m->cfg.mode == LD_MESSAGING_EDGE && ld_node_nrs(m->node) != NULL) {
    ld_nrs_set_eligible(ld_node_nrs(m->node), NULL, NULL);
    ld_nrs_set_session_listener(ld_node_nrs(m->node), NULL, NULL);
  }
  ld_reliability_free(m->rel);
  if (m->resume_rel != NULL)
    (void)ld_resume_touch(&m->resume, wall_ms(), true);
  ld_reliability_free(m->resume_rel);
  ld_send_service_free(m->send);
  ld_recv_free(m->recv);
  ld_records_free(m->records);
  ld_service_peers_free(m->peers);
  ld_hashmap_free(m->subs_by_topic, sub_free);
  ld_hashmap_free(m->subs_by_id, NULL);
  ld_hashmap_free(m->joined, NULL);
  ld_hashmap_free(m->lp_calls, NULL);
  ld_hashmap_free(m->relay_calls, NULL);
}

static void start_timers(ld_messaging_t *m) {
  uv_loop_t *loop = ld_switch_loop(m->sw);
  uv_timer_init(loop, &m->tick);
  uv_timer_init(loop, &m->kick);
  m->tick.data = m->kick.data = m;
  m->open_handles = 2;
  uv_timer_start(&m->tick, on_tick, m->cfg.tick_ms, m->cfg.tick_ms);
  kick(m); /* first health status from the loop */
}

static void attach_rest(ld_messaging_t *m) {
#ifdef LD_MESSAGING_HAVE_REST
  int rc = ld_messaging_rest_attach(m);
  if (rc == 0)
    m->rest_attached = true;
  else
    LD_WARN(TOPIC, "messaging REST paths not installed: %s", ld_strerror(rc));
#else
  (void)m;
#endif
}

static int check_new(ld_node_t *node, const ld_messaging_config_t *cfg) {
  if (node == NULL || cfg == NULL ||
      (cfg->mode != LD_MESSAGING_CORE && cfg->mode != LD_MESSAGING_EDGE))
    return LD_ERR_INVALID_ARG;
  if (ld_node_identify(node) == NULL || ld_node_switch(node) == NULL)
    return LD_ERR_STATE; /* not started */
  if (cfg->mode == LD_MESSAGING_CORE && ld_node_relay(node) == NULL)
    return LD_ERR_INVALID_ARG; /* Core mode needs relay */
  return 0;
}

ld_messaging_t *ld_messaging_new(ld_node_t *node, const ld_messaging_config_t *cfg, int *err) {
  int local;
  if (err == NULL)
    err = &local;
  *err = check_new(node, cfg);
  ld_messaging_t *m = *err == 0 ? calloc(1, sizeof *m) : NULL;
  if (m == NULL) {
    *err = *err != 0 ? *err : LD_ERR_NOMEM;
    return NULL;
  }
  m->node = node;
  m->cfg = *cfg;
  fill_defaults(&m->cfg);
  m->broker = ld_node_broker(node);
  m->sw = ld_node_switch(node);
  *err = make_parts(m);
  if (*err == 0)
    *err = attach(m);
  if (*err != 0) {
    detach(m);
    free_parts(m);
    free(m);
    return NULL;
  }
  start_timers(m);
  attach_rest(m);
  return m;
}

/* ---- freeing --------------------------------------------------------------------------------- */

static void on_handle_closed(uv_handle_t *h) {
  ld_messaging_t *m = h->data;
  if (--m->open_handles > 0)
    return;
  void (*done)(void *) = m->done;
  void *data = m->done_data;
  free_parts(m);
  free(m);
  if (done != NULL)
    done(data);
}

/* Stops everything that could call back: calls under way, the edge filter, the hooks. */
static void cancel_all(ld_messaging_t *m) {
  lp_cancel_all(m);
  relay_detach_all(m);
  if (m->confirm_call != NULL)
    ld_reliability_cancel(m->rel, m->confirm_call);
  if (m->recover_call != NULL)
    ld_reliability_cancel(m->rel, m->recover_call);
  m->confirm_call = m->recover_call = NULL;
  if (m->resume_call != NULL)
    ld_reliability_cancel(m->resume_rel, m->resume_call);
  m->resume_call = NULL;
  if (!m->in_ef_callback) {
    ld_edge_filter_free(m->ef);
    m->ef = NULL;
  }
  ld_hashmap_iter_t it = {0};
  const void *key;
  size_t klen;
  char topic[LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1];
  while (ld_hashmap_next(m->joined, &it, &key, &klen, NULL)) {
    if (klen < sizeof topic) {
      memcpy(topic, key, klen);
      topic[klen] = '\0';
      ld_node_unsubscribe(m->node, topic);
    }
  }
  ld_hashmap_clear(m->joined, NULL);
}

void ld_messaging_free(ld_messaging_t *m, void (*done)(void *user_data), void *user_data) {
  if (m == NULL || m->closing)
    return;
#ifdef LD_MESSAGING_HAVE_REST
  if (m->rest_attached)
    ld_messaging_rest_detach(m);
#endif
  m->closing = true;
  m->done = done;
  m->done_data = user_data;
  detach(m);
  cancel_all(m);
  uv_timer_stop(&m->tick);
  uv_timer_stop(&m->kick);
  uv_close((uv_handle_t *)&m->tick, on_handle_closed);
  uv_close((uv_handle_t *)&m->kick, on_handle_closed);
}
