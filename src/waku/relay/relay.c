#include "waku/relay/relay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/hashmap.h"
#include "base/log.h"
#include "waku/core/sharding.h"
#include "waku/core/topics.h"

#define LOG_TOPIC "waku relay"

typedef struct topic {
  char *name;
  bool subscribed;
  bool dirty; /* health to recompute */
  ld_relay_message_fn fn;
  void *ud;
  ld_relay_topic_stats_t stats;
} topic_t;

typedef struct validator {
  ld_relay_validator_fn fn; /* NULL: free slot */
  void *ud;
  int id;
} validator_t;

/* A message waiting on the added validators. */
typedef struct pending {
  uint64_t token; /* the gossipsub service's token */
  char *topic;
  topic_t *entry; /* may be NULL */
  ld_waku_message_t msg;
  bool has_from;
  ld_peerid_t from;
  size_t next; /* index of the next validator slot to run */
} pending_t;

struct ld_relay {
  ld_gs_service_t *gs;
  uv_loop_t *loop;
  uint16_t cluster_id;
  uint32_t num_shards;
  size_t max_msg_size;
  bool js_rules;
  ld_relay_protected_shard_t protected_shards[LD_RELAY_MAX_PROTECTED_SHARDS];
  size_t n_protected;
  uint32_t d_low;
  int64_t (*now_ns)(void *ud);
  void *clock_ud;
  int gs_validator_id;
  ld_hashmap_t *topics;  /* name → topic_t */
  ld_hashmap_t *pending; /* token → pending_t */
  validator_t validators[LD_RELAY_MAX_VALIDATORS];
  size_t n_validator_slots;
  size_t n_validators;
  int next_validator_id;
  uv_timer_t health_timer;
  bool health_scheduled;
  uint64_t health_last_ms;
  bool closing;
  ld_relay_events_t ev;
  void *ev_ud;
  ld_relay_stats_t stats;
  ld_relay_latency_t latency;
};

const uint32_t ld_relay_latency_bounds_us[LD_RELAY_LATENCY_BUCKETS] = {
    250,    500,    750,    1000,   1250,   1500,   1750,    2000,    2500,   3000,
    4000,   5000,   7500,   10000,  15000,  20000,  30000,   40000,   50000,  75000,
    100000, 150000, 200000, 300000, 500000, 750000, 1000000, 2000000, 5000000};

static int64_t now_ns(const ld_relay_t *r) {
  return r->now_ns != NULL ? r->now_ns(r->clock_ud) : (int64_t)ld_wall_ns();
}

/* ---- topics --------------------------------------------------------------------------------- */

static topic_t *topic_find(const ld_relay_t *r, const char *name) {
  return ld_hashmap_get(r->topics, name, strlen(name));
}

static void topic_free(void *value) {
  topic_t *t = value;
  free(t->name);
  free(t);
}

/* The entry of `name`, created when missing. NULL with *err set on failure. */
static topic_t *topic_get(ld_relay_t *r, const char *name, int *err) {
  topic_t *t = topic_find(r, name);
  if (t != NULL)
    return t;
  if (ld_hashmap_size(r->topics) >= LD_RELAY_MAX_TOPICS) {
    *err = LD_ERR_LIMIT;
    return NULL;
  }
  *err = LD_ERR_NOMEM;
  if ((t = calloc(1, sizeof *t)) == NULL)
    return NULL;
  if ((t->name = strdup(name)) == NULL ||
      ld_hashmap_put(r->topics, name, strlen(name), t, NULL) != 0) {
    topic_free(t);
    return NULL;
  }
  t->stats.health = LD_RELAY_NOT_SUBSCRIBED;
  return t;
}

static void count_payload(topic_t *t, size_t payload_len) {
  t->stats.payload_count++;
  t->stats.payload_bytes_total += payload_len;
  if (payload_len > t->stats.payload_bytes_max)
    t->stats.payload_bytes_max = payload_len;
}

/* ---- health --------------------------------------------------------------------------------- */

static void on_health_timer(uv_timer_t *timer);

static void schedule_health(ld_relay_t *r) {
  if (r->health_scheduled || r->closing)
    return;
  uint64_t now = uv_now(r->loop);
  uint64_t due = r->health_last_ms + LD_RELAY_HEALTH_COOLDOWN_MS;
  r->health_scheduled = true;
  uv_timer_start(&r->health_timer, on_health_timer, due > now ? due - now : 0, 0);
}

static void mark_dirty(ld_relay_t *r, topic_t *t) {
  t->dirty = true;
  schedule_health(r);
}

static void mark_all_dirty(ld_relay_t *r) {
  ld_hashmap_iter_t it = {0};
  void *value;
  while (ld_hashmap_next(r->topics, &it, NULL, NULL, &value))
    if (((topic_t *)value)->subscribed)
      ((topic_t *)value)->dirty = true;
  schedule_health(r);
}

/* Recomputes a dirty topic; true when its health changed. */
static bool recompute(ld_relay_t *r, topic_t *t) {
  t->dirty = false;
  ld_relay_health_t h = LD_RELAY_NOT_SUBSCRIBED;
  if (t->subscribed) {
    t->stats.mesh_size = ld_gs_service_mesh_peers(r->gs, t->name, NULL, 0);
    h = ld_relay_health_from_mesh(t->stats.mesh_size, r->d_low);
  } else {
    t->stats.mesh_size = 0;
  }
  if (h == t->stats.health)
    return false;
  t->stats.health = h;
  return true;
}

static void on_health_timer(uv_timer_t *timer) {
  ld_relay_t *r = timer->data;
  r->health_scheduled = false;
  r->health_last_ms = uv_now(r->loop);
  size_t n = 0, cap = ld_hashmap_size(r->topics);
  topic_t **changed = cap > 0 ? malloc(cap * sizeof *changed) : NULL;
  ld_hashmap_iter_t it = {0};
  void *value;
  while (changed != NULL && ld_hashmap_next(r->topics, &it, NULL, NULL, &value))
    if (((topic_t *)value)->dirty && recompute(r, value))
      changed[n++] = value;
  for (size_t i = 0; i < n && !r->closing; i++) {
    LD_DEBUG(LOG_TOPIC, "topic health: %s %s (mesh %zu)", changed[i]->name,
             ld_relay_health_name(changed[i]->stats.health), changed[i]->stats.mesh_size);
    if (r->ev.on_health != NULL)
      r->ev.on_health(r, changed[i]->name, changed[i]->stats.health, r->ev_ud);
  }
  free(changed);
}

/* ---- validation ----------------------------------------------------------------------------- */

static void count_verdict(ld_relay_t *r, topic_t *t, ld_gs_verdict_t v, ld_relay_reason_t why) {
  if (v == LD_GS_ACCEPT) {
    r->stats.accepted++;
    if (t != NULL)
      t->stats.accepted++;
  } else if (v == LD_GS_IGNORE) {
    r->stats.ignored++;
    if (t != NULL)
      t->stats.ignored++;
  } else {
    r->stats.rejected[why]++;
    if (t != NULL)
      t->stats.rejected[why]++;
  }
}

static ld_relay_reason_t check_protected(ld_relay_t *r, const char *topic,
                                         const ld_waku_message_t *msg) {
  const ld_relay_protected_shard_t *ps =
      ld_relay_protected_find(r->protected_shards, r->n_protected, r->cluster_id, topic);
  if (ps == NULL)
    return LD_RELAY_OK;
  ld_relay_reason_t why = ld_relay_verify_signed(ps->pubkey, topic, msg, now_ns(r));
  if (why == LD_RELAY_OK)
    r->stats.signed_accepted++;
  else
    r->stats.signed_rejected++;
  return why;
}

static void log_reject(const char *topic, ld_relay_reason_t why, const ld_peerid_t *from) {
  if (!LD_LOG_ENABLED(LD_LOG_DEBUG))
    return;
  char peer[LD_PEERID_TEXT_MAX] = "?";
  if (from != NULL)
    ld_peerid_to_text(from, peer, sizeof peer);
  LD_DEBUG(LOG_TOPIC, "message rejected: topic=%s reason=%s from=%s", topic,
           ld_relay_reason_name(why), peer);
}

static void pending_free(pending_t *p) {
  ld_waku_message_clear(&p->msg);
  free(p->topic);
  free(p);
}

/* Ends a message's validation with `v` and hands the verdict to gossipsub. */
static void finish(ld_relay_t *r, pending_t *p, ld_gs_verdict_t v) {
  ld_hashmap_remove_u64(r->pending, p->token);
  count_verdict(r, p->entry, v, LD_RELAY_VALIDATOR);
  if (v == LD_GS_REJECT)
    log_reject(p->topic, LD_RELAY_VALIDATOR, p->has_from ? &p->from : NULL);
  uint64_t token = p->token;
  pending_free(p);
  ld_gs_service_validation_done(r->gs, token, v);
}

/* Runs the next added validator, or accepts when none is left. */
static void advance(ld_relay_t *r, pending_t *p) {
  while (p->next < r->n_validator_slots && r->validators[p->next].fn == NULL)
    p->next++;
  if (p->next >= r->n_validator_slots) {
    finish(r, p, LD_GS_ACCEPT);
    return;
  }
  const validator_t *v = &r->validators[p->next++];
  v->fn(r, p->token, p->topic, &p->msg, p->has_from ? &p->from : NULL, v->ud);
}

/* Takes ownership of `msg` and starts the added validators on it. */
static void start_pending(ld_relay_t *r, uint64_t token, const char *topic, topic_t *t,
                          ld_waku_message_t *msg, const ld_peerid_t *from) {
  pending_t *p = NULL;
  if (ld_hashmap_size(r->pending) >= LD_RELAY_MAX_PENDING)
    r->stats.pending_overflow++;
  else
    p = calloc(1, sizeof *p);
  if (p != NULL) {
    p->token = token;
    p->entry = t;
    p->msg = *msg;
    p->has_from = from != NULL;
    if (from != NULL)
      p->from = *from;
    ld_waku_message_init(msg);
    if ((p->topic = strdup(topic)) == NULL || ld_hashmap_put_u64(r->pending, token, p, NULL) != 0) {
      pending_free(p);
      p = NULL;
    }
  }
  if (p == NULL) {
    ld_waku_message_clear(msg);
    count_verdict(r, t, LD_GS_IGNORE, LD_RELAY_OK);
    ld_gs_service_validation_done(r->gs, token, LD_GS_IGNORE);
    return;
  }
  advance(r, p);
}

/* The gossipsub validator of every topic: the built-in checks, then the added validators. */
static void gs_validate(ld_gs_service_t *svc, uint64_t token, const char *topic,
                        const uint8_t *data, size_t len, const ld_peerid_t *from, void *ud) {
  ld_relay_t *r = ud;
  topic_t *t = topic_find(r, topic);
  ld_waku_message_t msg;
  ld_waku_message_init(&msg);
  ld_relay_reason_t why = ld_relay_check_message(data, len, r->max_msg_size, r->js_rules, &msg);
  if (why == LD_RELAY_OK)
    why = check_protected(r, topic, &msg);
  if (why != LD_RELAY_OK) {
    ld_waku_message_clear(&msg);
    count_verdict(r, t, LD_GS_REJECT, why);
    log_reject(topic, why, from);
    ld_gs_service_validation_done(svc, token, LD_GS_REJECT);
    return;
  }
  if (r->n_validators == 0) {
    ld_waku_message_clear(&msg);
    count_verdict(r, t, LD_GS_ACCEPT, LD_RELAY_OK);
    ld_gs_service_validation_done(svc, token, LD_GS_ACCEPT);
    return;
  }
  start_pending(r, token, topic, t, &msg, from);
}

/* ---- delivery ------------------------------------------------------------------------------- */

/* nwaku's relay lines: sentTime is the message's timestamp, receivedTime (received messages,
 * `received_ns` > 0) when it was delivered here, both in Unix nanoseconds. */
static void log_message(const char *what, const char *topic, const ld_waku_message_t *msg,
                        const uint8_t hash[LD_WAKU_HASH_LEN], const ld_peerid_t *peer,
                        int64_t received_ns) {
  if (!LD_LOG_ENABLED(LD_LOG_DEBUG))
    return;
  char hex[LD_WAKU_HASH_HEX_LEN + 1], id[LD_PEERID_TEXT_MAX] = "self", rcv[40] = "";
  ld_waku_hash_to_hex(hash, hex);
  if (peer != NULL)
    ld_peerid_to_text(peer, id, sizeof id);
  if (received_ns > 0)
    snprintf(rcv, sizeof rcv, " receivedTime=%lld", (long long)received_ns);
  LD_DEBUG(LOG_TOPIC,
           "%s relay message: msg_hash=%s topic=%s contentTopic=%.*s peer=%s sentTime=%lld%s", what,
           hex, topic, (int)msg->content_topic_len, msg->content_topic, id,
           (long long)msg->timestamp, rcv);
}

static void observe_latency(ld_relay_t *r, int64_t sent_ns, int64_t received_ns) {
  if (sent_ns <= 0)
    return;
  int64_t d = received_ns > sent_ns ? received_ns - sent_ns : 0;
  uint64_t us = (uint64_t)d / 1000;
  size_t i = 0;
  while (i < LD_RELAY_LATENCY_BUCKETS && (us > ld_relay_latency_bounds_us[i] ||
                                          (us == ld_relay_latency_bounds_us[i] && d % 1000 != 0)))
    i++;
  r->latency.counts[i]++;
  r->latency.count++;
  r->latency.sum_s += (double)d / 1e9;
}

static void gs_on_message(ld_gs_service_t *svc, const char *topic, const uint8_t *data, size_t len,
                          const uint8_t id[LD_GS_MSG_ID_LEN], const ld_peerid_t *from, void *ud) {
  (void)svc;
  (void)id;
  ld_relay_t *r = ud;
  topic_t *t = topic_find(r, topic);
  ld_waku_message_t msg;
  ld_waku_message_init(&msg);
  int rc = ld_waku_message_decode(data, len, SIZE_MAX, 0, &msg);
  if (rc != 0) {
    LD_WARN(LOG_TOPIC, "undecodable message delivered on %s: %s", topic, ld_errname(rc));
    return;
  }
  uint8_t hash[LD_WAKU_HASH_LEN];
  ld_waku_message_hash(topic, &msg, hash);
  if (t != NULL && from != NULL) {
    t->stats.msgs_in++;
    t->stats.bytes_in += len + strlen(topic);
    count_payload(t, msg.payload_len);
  }
  r->stats.delivered++;
  if (from != NULL) {
    int64_t received_ns = now_ns(r);
    observe_latency(r, msg.timestamp, received_ns);
    log_message("received", topic, &msg, hash, from, received_ns);
  }
  if (t != NULL && t->subscribed && t->fn != NULL)
    t->fn(r, topic, &msg, hash, from, t->ud);
  if (r->ev.on_message != NULL && !r->closing)
    r->ev.on_message(r, topic, &msg, hash, from, r->ev_ud);
  ld_waku_message_clear(&msg);
}

/* ---- gossipsub events ----------------------------------------------------------------------- */

static void gs_mesh_changed(ld_gs_service_t *svc, const char *topic, size_t mesh_size, void *ud) {
  (void)svc;
  (void)mesh_size;
  ld_relay_t *r = ud;
  topic_t *t = topic_find(r, topic);
  if (t != NULL && t->subscribed)
    mark_dirty(r, t);
}

static void gs_peer(ld_gs_service_t *svc, const ld_peerid_t *peer, bool up, void *ud) {
  (void)svc;
  ld_relay_t *r = ud;
  if (!up)
    mark_all_dirty(r);
  if (r->ev.on_peer != NULL)
    r->ev.on_peer(r, peer, up, r->ev_ud);
}

static const ld_gs_service_events_t g_gs_events = {
    .on_mesh_changed = gs_mesh_changed,
    .on_peer = gs_peer,
};

/* ---- lifecycle ------------------------------------------------------------------------------ */

void ld_relay_config_default(ld_relay_config_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->cluster_id = LD_WAKU_DEFAULT_CLUSTER_ID;
  cfg->num_shards = LD_WAKU_DEFAULT_NUM_SHARDS;
  cfg->max_msg_size = LD_WAKU_DEFAULT_MAX_MSG_SIZE;
  cfg->js_waku_rules = true;
  cfg->health_d_low = LD_RELAY_DEFAULT_D_LOW;
}

void ld_relay_gs_config(ld_gs_service_config_t *gs, size_t max_msg_size) {
  ld_gs_service_config_default(gs);
  if (max_msg_size == 0)
    max_msg_size = LD_WAKU_DEFAULT_MAX_MSG_SIZE;
  gs->params.max_rpc_size = max_msg_size < 1024 ? 1024 : max_msg_size;
}

static int check_config(const ld_relay_config_t *cfg) {
  if (cfg == NULL || cfg->loop == NULL || cfg->n_protected_shards > LD_RELAY_MAX_PROTECTED_SHARDS ||
      (cfg->n_protected_shards > 0 && cfg->protected_shards == NULL) ||
      cfg->num_shards > LD_WAKU_MAX_SHARDS_PER_CLUSTER)
    return LD_ERR_INVALID_ARG;
  return 0;
}

static void apply_config(ld_relay_t *r, const ld_relay_config_t *cfg) {
  r->loop = cfg->loop;
  r->cluster_id = cfg->cluster_id;
  r->num_shards = cfg->num_shards;
  r->max_msg_size = cfg->max_msg_size != 0 ? cfg->max_msg_size : LD_WAKU_DEFAULT_MAX_MSG_SIZE;
  r->js_rules = cfg->js_waku_rules;
  r->n_protected = cfg->n_protected_shards;
  if (r->n_protected > 0)
    memcpy(r->protected_shards, cfg->protected_shards,
           r->n_protected * sizeof *r->protected_shards);
  r->d_low = cfg->health_d_low != 0 ? cfg->health_d_low : LD_RELAY_DEFAULT_D_LOW;
  r->now_ns = cfg->now_ns;
  r->clock_ud = cfg->clock_user_data;
  r->next_validator_id = 1;
}

static ld_relay_t *fail_new(ld_relay_t *r, int rc, int *err) {
  if (err != NULL)
    *err = rc;
  if (r != NULL) {
    ld_hashmap_free(r->topics, topic_free);
    ld_hashmap_free(r->pending, NULL);
    free(r);
  }
  return NULL;
}

ld_relay_t *ld_relay_new(ld_gs_service_t *gs, const ld_relay_config_t *cfg, int *err) {
  int rc = gs == NULL ? LD_ERR_INVALID_ARG : check_config(cfg);
  if (rc != 0)
    return fail_new(NULL, rc, err);
  ld_relay_t *r = calloc(1, sizeof *r);
  if (r == NULL)
    return fail_new(NULL, LD_ERR_NOMEM, err);
  r->gs = gs;
  apply_config(r, cfg);
  if ((r->topics = ld_hashmap_new(16)) == NULL || (r->pending = ld_hashmap_new(64)) == NULL)
    return fail_new(r, LD_ERR_NOMEM, err);
  rc = ld_gs_service_add_validator(gs, NULL, gs_validate, r);
  if (rc < 0)
    return fail_new(r, rc, err);
  r->gs_validator_id = rc;
  uv_timer_init(r->loop, &r->health_timer);
  r->health_timer.data = r;
  ld_gs_service_set_events(gs, &g_gs_events, r);
  if (err != NULL)
    *err = 0;
  return r;
}

static void on_timer_closed(uv_handle_t *h) {
  free(h->data);
}

static void free_pending_value(void *value) {
  pending_free(value);
}

void ld_relay_free(ld_relay_t *r) {
  if (r == NULL)
    return;
  r->closing = true;
  ld_gs_service_remove_validator(r->gs, r->gs_validator_id);
  ld_gs_service_set_events(r->gs, NULL, NULL);
  ld_hashmap_iter_t it = {0};
  void *value;
  while (ld_hashmap_next(r->topics, &it, NULL, NULL, &value))
    if (((topic_t *)value)->subscribed)
      ld_gs_service_unsubscribe(r->gs, ((topic_t *)value)->name);
  ld_hashmap_free(r->pending, free_pending_value);
  ld_hashmap_free(r->topics, topic_free);
  r->pending = r->topics = NULL;
  uv_timer_stop(&r->health_timer);
  uv_close((uv_handle_t *)&r->health_timer, on_timer_closed);
}

ld_gs_service_t *ld_relay_gossipsub(ld_relay_t *r) {
  return r->gs;
}

uint16_t ld_relay_cluster_id(const ld_relay_t *r) {
  return r->cluster_id;
}

size_t ld_relay_max_msg_size(const ld_relay_t *r) {
  return r->max_msg_size;
}

/* ---- subscriptions -------------------------------------------------------------------------- */

int ld_relay_subscribe(ld_relay_t *r, const char *pubsub_topic, ld_relay_message_fn fn,
                       void *user_data) {
  if (r == NULL || pubsub_topic == NULL || pubsub_topic[0] == '\0' ||
      strlen(pubsub_topic) > LD_GS_MAX_TOPIC_LEN)
    return LD_ERR_INVALID_ARG;
  int rc;
  topic_t *t = topic_get(r, pubsub_topic, &rc);
  if (t == NULL)
    return rc;
  if (t->subscribed)
    return LD_ERR_EXISTS;
  rc = ld_gs_service_subscribe(r->gs, pubsub_topic, gs_on_message, r);
  if (rc != 0)
    return rc;
  t->subscribed = true;
  t->fn = fn;
  t->ud = user_data;
  t->stats.health = LD_RELAY_UNHEALTHY;
  mark_dirty(r, t);
  LD_INFO(LOG_TOPIC, "subscribe: pubsubTopic=%s", pubsub_topic);
  return 0;
}

int ld_relay_unsubscribe(ld_relay_t *r, const char *pubsub_topic) {
  topic_t *t = pubsub_topic != NULL ? topic_find(r, pubsub_topic) : NULL;
  if (t == NULL || !t->subscribed)
    return LD_ERR_NOT_FOUND;
  ld_gs_service_unsubscribe(r->gs, pubsub_topic);
  t->subscribed = false;
  t->fn = NULL;
  t->ud = NULL;
  mark_dirty(r, t);
  LD_INFO(LOG_TOPIC, "unsubscribe: pubsubTopic=%s", pubsub_topic);
  return 0;
}

bool ld_relay_subscribed(const ld_relay_t *r, const char *pubsub_topic) {
  const topic_t *t = pubsub_topic != NULL ? topic_find(r, pubsub_topic) : NULL;
  return t != NULL && t->subscribed;
}

static size_t list_topics(const ld_relay_t *r, bool only_subscribed, const char **out, size_t cap) {
  ld_hashmap_iter_t it = {0};
  void *value;
  size_t n = 0;
  while (ld_hashmap_next(r->topics, &it, NULL, NULL, &value)) {
    const topic_t *t = value;
    if (only_subscribed && !t->subscribed)
      continue;
    if (n < cap)
      out[n] = t->name;
    n++;
  }
  return n;
}

size_t ld_relay_subscriptions(const ld_relay_t *r, const char **out, size_t cap) {
  return list_topics(r, true, out, cap);
}

size_t ld_relay_topics(const ld_relay_t *r, const char **out, size_t cap) {
  return list_topics(r, false, out, cap);
}

size_t ld_relay_shard_provider(void *relay, uint16_t *out, size_t max) {
  const ld_relay_t *r = relay;
  uint8_t bits[LD_WAKU_MAX_SHARDS_PER_CLUSTER / 8] = {0};
  ld_hashmap_iter_t it = {0};
  void *value;
  while (ld_hashmap_next(r->topics, &it, NULL, NULL, &value)) {
    const topic_t *t = value;
    ld_relay_shard_t rs;
    if (t->subscribed && ld_pubsub_topic_parse(t->name, strlen(t->name), &rs, NULL) == 0 &&
        rs.cluster_id == r->cluster_id && rs.shard_id < LD_WAKU_MAX_SHARDS_PER_CLUSTER)
      bits[rs.shard_id / 8] |= (uint8_t)(1u << (rs.shard_id % 8));
  }
  size_t n = 0;
  for (uint32_t s = 0; s < LD_WAKU_MAX_SHARDS_PER_CLUSTER; s++) {
    if (!((bits[s / 8] >> (s % 8)) & 1u))
      continue;
    if (n < max)
      out[n] = (uint16_t)s;
    n++;
  }
  return n;
}

/* ---- content topics ------------------------------------------------------------------------- */

int ld_relay_autoshard(const ld_relay_t *r, const char *content_topic, char *out, size_t cap) {
  if (r == NULL || content_topic == NULL || out == NULL)
    return LD_ERR_INVALID_ARG;
  if (r->num_shards == 0)
    return LD_ERR_UNSUPPORTED;
  return ld_autoshard_pubsub_topic(content_topic, strlen(content_topic), r->num_shards,
                                   r->cluster_id, out, cap, NULL);
}

int ld_relay_subscribe_content_topic(ld_relay_t *r, const char *content_topic,
                                     ld_relay_message_fn fn, void *user_data) {
  char topic[LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1];
  int rc = ld_relay_autoshard(r, content_topic, topic, sizeof topic);
  return rc < 0 ? rc : ld_relay_subscribe(r, topic, fn, user_data);
}

int ld_relay_unsubscribe_content_topic(ld_relay_t *r, const char *content_topic) {
  char topic[LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1];
  int rc = ld_relay_autoshard(r, content_topic, topic, sizeof topic);
  return rc < 0 ? rc : ld_relay_unsubscribe(r, topic);
}

/* ---- publishing ----------------------------------------------------------------------------- */

static void count_published(ld_relay_t *r, const char *topic, const ld_waku_message_t *msg,
                            size_t len) {
  int err;
  topic_t *t = topic_get(r, topic, &err);
  r->stats.published++;
  if (t == NULL)
    return;
  t->stats.msgs_out++;
  t->stats.bytes_out += len + strlen(topic);
  count_payload(t, msg->payload_len);
}

/* Encodes and publishes `m` (timestamp set). `known` is its Waku hash (NULL: computed here after
 * the encoding checks); the hash is stored in `h`. */
static int publish_stamped(ld_relay_t *r, const char *pubsub_topic, const ld_waku_message_t *m,
                           const uint8_t known[LD_WAKU_HASH_LEN], uint8_t h[LD_WAKU_HASH_LEN]) {
  ld_buf_t data;
  ld_buf_init(&data);
  int rc = ld_waku_message_encode(m, r->max_msg_size, &data);
  if (rc == 0 && known != NULL)
    memcpy(h, known, LD_WAKU_HASH_LEN);
  else if (rc == 0)
    rc = ld_waku_message_hash(pubsub_topic, m, h);
  if (rc == 0)
    rc = ld_gs_service_publish(r->gs, pubsub_topic, data.data, data.len);
  if (rc >= 0) {
    count_published(r, pubsub_topic, m, data.len);
    log_message("sent", pubsub_topic, m, h, NULL, 0);
  } else {
    r->stats.publish_failed++;
    LD_DEBUG(LOG_TOPIC, "publish on %s failed: %s", pubsub_topic, ld_errname(rc));
  }
  ld_buf_clear(&data);
  return rc;
}

int ld_relay_publish_hashed(ld_relay_t *r, const char *pubsub_topic, const ld_waku_message_t *msg,
                            const uint8_t hash[LD_WAKU_HASH_LEN]) {
  if (r == NULL || pubsub_topic == NULL || pubsub_topic[0] == '\0' || msg == NULL ||
      msg->timestamp == 0 || hash == NULL)
    return LD_ERR_INVALID_ARG;
  uint8_t h[LD_WAKU_HASH_LEN];
  return publish_stamped(r, pubsub_topic, msg, hash, h);
}

int ld_relay_publish(ld_relay_t *r, const char *pubsub_topic, const ld_waku_message_t *msg,
                     uint8_t hash[LD_WAKU_HASH_LEN]) {
  if (r == NULL || pubsub_topic == NULL || pubsub_topic[0] == '\0' || msg == NULL)
    return LD_ERR_INVALID_ARG;
  ld_waku_message_t m = *msg;
  if (m.timestamp == 0)
    m.timestamp = now_ns(r);
  uint8_t h[LD_WAKU_HASH_LEN];
  int rc = publish_stamped(r, pubsub_topic, &m, NULL, h);
  if (rc >= 0 && hash != NULL)
    memcpy(hash, h, sizeof h);
  return rc;
}

int ld_relay_seen_reach(const ld_relay_t *r, const char *pubsub_topic,
                        const ld_waku_message_t *msg) {
  if (r == NULL || pubsub_topic == NULL || msg == NULL)
    return LD_ERR_INVALID_ARG;
  if (msg->timestamp == 0)
    return LD_ERR_NOT_FOUND; /* a publish stamps it: other bytes than any seen before */
  ld_buf_t data;
  ld_buf_init(&data);
  int rc = ld_waku_message_encode(msg, r->max_msg_size, &data);
  if (rc == 0)
    rc = ld_gs_service_seen_reach(r->gs, pubsub_topic, data.data, data.len);
  ld_buf_clear(&data);
  return rc;
}

int ld_relay_publish_auto(ld_relay_t *r, const ld_waku_message_t *msg,
                          uint8_t hash[LD_WAKU_HASH_LEN], char *topic_out, size_t cap) {
  if (msg == NULL || (msg->content_topic == NULL && msg->content_topic_len > 0))
    return LD_ERR_INVALID_ARG;
  char ct[LD_GS_MAX_TOPIC_LEN + 1];
  if (msg->content_topic_len > LD_GS_MAX_TOPIC_LEN)
    return LD_ERR_BAD_CONTENT_TOPIC;
  if (msg->content_topic_len > 0)
    memcpy(ct, msg->content_topic, msg->content_topic_len);
  ct[msg->content_topic_len] = '\0';
  char topic[LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1];
  int rc = ld_relay_autoshard(r, ct, topic, sizeof topic);
  if (rc < 0)
    return rc;
  if (topic_out != NULL && cap > 0) {
    if ((size_t)rc >= cap)
      return LD_ERR_LIMIT;
    memcpy(topic_out, topic, (size_t)rc + 1);
  }
  return ld_relay_publish(r, topic, msg, hash);
}

ld_relay_reason_t ld_relay_check_outgoing(const ld_relay_t *r, const char *pubsub_topic,
                                          const ld_waku_message_t *msg) {
  if (ld_waku_message_encoded_len(msg) > r->max_msg_size)
    return LD_RELAY_TOO_LARGE;
  const ld_relay_protected_shard_t *ps =
      ld_relay_protected_find(r->protected_shards, r->n_protected, r->cluster_id, pubsub_topic);
  return ps == NULL ? LD_RELAY_OK
                    : ld_relay_verify_signed(ps->pubkey, pubsub_topic, msg, now_ns(r));
}

/* ---- added validators ----------------------------------------------------------------------- */

int ld_relay_add_validator(ld_relay_t *r, ld_relay_validator_fn fn, void *user_data) {
  if (r == NULL || fn == NULL)
    return LD_ERR_INVALID_ARG;
  size_t slot = 0;
  while (slot < r->n_validator_slots && r->validators[slot].fn != NULL)
    slot++;
  if (slot >= LD_RELAY_MAX_VALIDATORS)
    return LD_ERR_LIMIT;
  if (slot == r->n_validator_slots)
    r->n_validator_slots++;
  validator_t *v = &r->validators[slot];
  v->fn = fn;
  v->ud = user_data;
  v->id = r->next_validator_id++;
  r->n_validators++;
  return v->id;
}

int ld_relay_remove_validator(ld_relay_t *r, int validator_id) {
  for (size_t i = 0; i < r->n_validator_slots; i++) {
    if (r->validators[i].fn != NULL && r->validators[i].id == validator_id) {
      memset(&r->validators[i], 0, sizeof r->validators[i]);
      r->n_validators--;
      return 0;
    }
  }
  return LD_ERR_NOT_FOUND;
}

int ld_relay_validation_done(ld_relay_t *r, uint64_t token, ld_gs_verdict_t verdict) {
  pending_t *p = ld_hashmap_get_u64(r->pending, token);
  if (p == NULL)
    return LD_ERR_NOT_FOUND;
  if (verdict != LD_GS_ACCEPT && verdict != LD_GS_REJECT && verdict != LD_GS_IGNORE)
    return LD_ERR_INVALID_ARG;
  if (verdict == LD_GS_ACCEPT)
    advance(r, p);
  else
    finish(r, p, verdict);
  return 0;
}

/* ---- events, health, statistics ------------------------------------------------------------- */

void ld_relay_set_events(ld_relay_t *r, const ld_relay_events_t *ev, void *user_data) {
  memset(&r->ev, 0, sizeof r->ev);
  if (ev != NULL)
    r->ev = *ev;
  r->ev_ud = user_data;
}

ld_relay_health_t ld_relay_topic_health(const ld_relay_t *r, const char *pubsub_topic) {
  const topic_t *t = pubsub_topic != NULL ? topic_find(r, pubsub_topic) : NULL;
  return t != NULL && t->subscribed ? t->stats.health : LD_RELAY_NOT_SUBSCRIBED;
}

int ld_relay_topic_stats(const ld_relay_t *r, const char *pubsub_topic,
                         ld_relay_topic_stats_t *out) {
  const topic_t *t = pubsub_topic != NULL ? topic_find(r, pubsub_topic) : NULL;
  if (t == NULL)
    return LD_ERR_NOT_FOUND;
  *out = t->stats;
  if (!t->subscribed)
    out->health = LD_RELAY_NOT_SUBSCRIBED;
  return 0;
}

void ld_relay_get_stats(const ld_relay_t *r, ld_relay_stats_t *out) {
  *out = r->stats;
}

void ld_relay_get_latency(const ld_relay_t *r, ld_relay_latency_t *out) {
  *out = r->latency;
}
