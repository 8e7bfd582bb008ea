#include "metrics/node_metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "p2p/stream.h"

#define MAX_LABEL_SET 64 /* distinct protocols or agents reported */
#define WAKU_PROTOCOL_PREFIX "/vac/waku"

typedef enum {
  F_VALIDATION_SUCCESS,
  F_VALIDATION_FAILURE,
  F_VALIDATION_IGNORE,
  F_RECEIVED,
  F_DUPLICATE,
  F_NODE_MESSAGES,
  F_COUNT,
} field_t;

typedef struct field_ctx {
  ld_node_metrics_t *nm;
  field_t field;
} field_ctx_t;

struct ld_node_metrics {
  ld_metrics_t *reg;
  ld_node_metrics_sources_t src;
  ld_relay_t *relay;
  char version[64];
  char *topics[LD_NODE_METRICS_MAX_TOPICS];
  size_t n_topics;
  field_ctx_t fields[F_COUNT];
};

/* ---- connections ----------------------------------------------------------------------------- */

typedef struct conns {
  ld_conn_t **c;
  size_t n;
} conns_t;

static void conns_get(const ld_node_metrics_t *nm, conns_t *out) {
  out->c = NULL;
  out->n = 0;
  if (nm->src.sw == NULL)
    return;
  size_t total = ld_switch_connections(nm->src.sw, NULL, 0);
  if (total > LD_NODE_METRICS_MAX_CONNS)
    total = LD_NODE_METRICS_MAX_CONNS;
  if (total == 0 || (out->c = calloc(total, sizeof *out->c)) == NULL)
    return;
  out->n = ld_switch_connections(nm->src.sw, out->c, total);
  if (out->n > total)
    out->n = total;
}

/* True when an earlier connection in `cs` (before index i) has the same peer (and the same
 * direction when `by_dir`). */
static bool seen_before(const conns_t *cs, size_t i, bool by_dir) {
  const ld_peerid_t *p = ld_conn_remote_peer(cs->c[i]);
  for (size_t j = 0; j < i; j++) {
    if (by_dir && ld_conn_is_outbound(cs->c[j]) != ld_conn_is_outbound(cs->c[i]))
      continue;
    if (ld_peerid_equal(ld_conn_remote_peer(cs->c[j]), p))
      return true;
  }
  return false;
}

static void c_peers(ld_metrics_emitter_t *e, void *ud) {
  if (((ld_node_metrics_t *)ud)->src.sw == NULL)
    return;
  conns_t cs;
  conns_get(ud, &cs);
  size_t n = 0;
  for (size_t i = 0; i < cs.n; i++)
    n += !seen_before(&cs, i, false);
  free(cs.c);
  ld_metrics_emit(e, NULL, (double)n);
}

/* ---- label sets ------------------------------------------------------------------------------ */

typedef struct label_set {
  const char *names[MAX_LABEL_SET];
  double counts[MAX_LABEL_SET];
  size_t n;
} label_set_t;

static int label_index(label_set_t *ls, const char *name, bool add) {
  for (size_t i = 0; i < ls->n; i++)
    if (strcmp(ls->names[i], name) == 0)
      return (int)i;
  if (!add || ls->n == MAX_LABEL_SET)
    return -1;
  ls->names[ls->n] = name;
  ls->counts[ls->n] = 0;
  return (int)ls->n++;
}

/* The Waku protocols any peer in the store advertises (pointers valid until the store changes). */
static void waku_protocols(const ld_peerstore_t *ps, label_set_t *ls) {
  size_t total = ld_peerstore_count(ps);
  ld_peerid_t *ids = total > 0 ? calloc(total, sizeof *ids) : NULL;
  size_t n = ids != NULL ? ld_peerstore_peers(ps, NULL, ids, total) : 0;
  for (size_t i = 0; i < n && i < total; i++) {
    const ld_peerstore_peer_t *p = ld_peerstore_get(ps, &ids[i]);
    for (size_t k = 0; p != NULL && k < p->n_protocols; k++)
      if (strncmp(p->protocols[k], WAKU_PROTOCOL_PREFIX, strlen(WAKU_PROTOCOL_PREFIX)) == 0)
        label_index(ls, p->protocols[k], true);
  }
  free(ids);
}

static void c_connected_peers(ld_metrics_emitter_t *e, void *ud) {
  ld_node_metrics_t *nm = ud;
  if (nm->src.peerstore == NULL)
    return;
  label_set_t protos = {.n = 0};
  waku_protocols(nm->src.peerstore, &protos);
  conns_t cs;
  conns_get(nm, &cs);
  for (size_t k = 0; k < protos.n; k++) {
    double in = 0, out = 0;
    for (size_t i = 0; i < cs.n; i++) {
      const ld_peerid_t *p = ld_conn_remote_peer(cs.c[i]);
      if (seen_before(&cs, i, true) ||
          !ld_peerstore_supports(nm->src.peerstore, p, protos.names[k]))
        continue;
      *(ld_conn_is_outbound(cs.c[i]) ? &out : &in) += 1;
    }
    ld_metrics_emit(e, (const char *const[]){"In", protos.names[k]}, in);
    ld_metrics_emit(e, (const char *const[]){"Out", protos.names[k]}, out);
  }
  free(cs.c);
}

static void c_agents(ld_metrics_emitter_t *e, void *ud) {
  ld_node_metrics_t *nm = ud;
  if (nm->src.peerstore == NULL)
    return;
  label_set_t agents = {.n = 0};
  conns_t cs;
  conns_get(nm, &cs);
  for (size_t i = 0; i < cs.n; i++) {
    const ld_peerstore_peer_t *p =
        ld_peerstore_get(nm->src.peerstore, ld_conn_remote_peer(cs.c[i]));
    if (seen_before(&cs, i, false) || p == NULL || p->agent_version == NULL)
      continue;
    int k = label_index(&agents, p->agent_version, true);
    if (k >= 0)
      agents.counts[k] += 1;
  }
  for (size_t k = 0; k < agents.n; k++)
    ld_metrics_emit(e, (const char *const[]){agents.names[k]}, agents.counts[k]);
  free(cs.c);
}

static void c_shards(ld_metrics_emitter_t *e, void *ud) {
  ld_node_metrics_t *nm = ud;
  if (nm->src.metadata == NULL)
    return;
  ld_metadata_info_t local;
  ld_metadata_local(nm->src.metadata, &local);
  uint16_t shards[LD_METADATA_MAX_SHARDS];
  size_t n = ld_metadata_info_shards(&local, shards, LD_METADATA_MAX_SHARDS);
  conns_t cs;
  conns_get(nm, &cs);
  for (size_t k = 0; k < n && k < LD_METADATA_MAX_SHARDS; k++) {
    double count = 0;
    for (size_t i = 0; i < cs.n; i++)
      count += !seen_before(&cs, i, false) &&
               ld_metadata_peer_on_shard(nm->src.metadata, ld_conn_remote_peer(cs.c[i]), shards[k]);
    char label[8];
    snprintf(label, sizeof label, "%u", (unsigned)shards[k]);
    ld_metrics_emit(e, (const char *const[]){label}, count);
  }
  free(cs.c);
}

static void c_peerstore_size(ld_metrics_emitter_t *e, void *ud) {
  ld_node_metrics_t *nm = ud;
  if (nm->src.peerstore != NULL)
    ld_metrics_emit(e, NULL, (double)ld_peerstore_count(nm->src.peerstore));
}

static void c_version(ld_metrics_emitter_t *e, void *ud) {
  ld_node_metrics_t *nm = ud;
  ld_metrics_emit(e, (const char *const[]){nm->version}, 1);
}

/* ---- gossipsub ---------------------------------------------------------------------------------
 */

/* Adds the router's subscribed topics to the topics we report. */
static void refresh_topics(ld_node_metrics_t *nm) {
  const char *subs[LD_NODE_METRICS_MAX_TOPICS];
  size_t n = ld_gs_router_topics(nm->src.router, subs, LD_NODE_METRICS_MAX_TOPICS);
  for (size_t i = 0; i < n && i < LD_NODE_METRICS_MAX_TOPICS; i++) {
    bool known = false;
    for (size_t k = 0; k < nm->n_topics && !known; k++)
      known = strcmp(nm->topics[k], subs[i]) == 0;
    if (!known && nm->n_topics < LD_NODE_METRICS_MAX_TOPICS) {
      char *copy = strdup(subs[i]);
      if (copy != NULL)
        nm->topics[nm->n_topics++] = copy;
    }
  }
}

static void c_pubsub_peers(ld_metrics_emitter_t *e, void *ud) {
  ld_node_metrics_t *nm = ud;
  if (nm->src.router != NULL)
    ld_metrics_emit(e, NULL, (double)ld_gs_router_peer_count(nm->src.router));
}

static void c_pubsub_topics(ld_metrics_emitter_t *e, void *ud) {
  ld_node_metrics_t *nm = ud;
  if (nm->src.router != NULL) {
    const char *none[1];
    ld_metrics_emit(e, NULL, (double)ld_gs_router_topics(nm->src.router, none, 0));
  }
}

static void emit_per_subscribed_topic(ld_metrics_emitter_t *e, ld_node_metrics_t *nm, bool mesh) {
  if (nm->src.router == NULL)
    return;
  const char *subs[LD_NODE_METRICS_MAX_TOPICS];
  size_t n = ld_gs_router_topics(nm->src.router, subs, LD_NODE_METRICS_MAX_TOPICS);
  for (size_t i = 0; i < n && i < LD_NODE_METRICS_MAX_TOPICS; i++) {
    ld_gs_peer_t none[1];
    size_t v = mesh ? ld_gs_router_mesh_size(nm->src.router, subs[i])
                    : ld_gs_router_topic_peers(nm->src.router, subs[i], none, 0);
    ld_metrics_emit(e, (const char *const[]){subs[i]}, (double)v);
  }
}

static void c_mesh(ld_metrics_emitter_t *e, void *ud) {
  emit_per_subscribed_topic(e, ud, true);
}

static void c_topic_peers(ld_metrics_emitter_t *e, void *ud) {
  emit_per_subscribed_topic(e, ud, false);
}

/* Calls fn for every reported topic the router has stats for. */
static void for_each_topic(ld_node_metrics_t *nm,
                           void (*fn)(const char *topic, const ld_gs_topic_stats_t *st, void *arg),
                           void *arg) {
  if (nm->src.router == NULL)
    return;
  refresh_topics(nm);
  for (size_t k = 0; k < nm->n_topics; k++) {
    ld_gs_topic_stats_t st;
    if (ld_gs_router_topic_stats(nm->src.router, nm->topics[k], &st) == 0)
      fn(nm->topics[k], &st, arg);
  }
}

typedef struct sum_arg {
  field_t field;
  double sum;
} sum_arg_t;

static void add_field(const char *topic, const ld_gs_topic_stats_t *st, void *arg) {
  (void)topic;
  sum_arg_t *a = arg;
  uint64_t v[F_COUNT] = {
      st->accepted,   st->rejected,
      st->ignored,    st->msgs_in > st->duplicates ? st->msgs_in - st->duplicates : 0,
      st->duplicates, st->delivered + st->published};
  a->sum += (double)v[a->field];
}

static void c_sum(ld_metrics_emitter_t *e, void *ud) {
  field_ctx_t *fc = ud;
  if (fc->nm->src.router == NULL)
    return;
  sum_arg_t a = {.field = fc->field, .sum = 0};
  for_each_topic(fc->nm, add_field, &a);
  if (fc->field == F_NODE_MESSAGES)
    ld_metrics_emit(e, (const char *const[]){"relay"}, a.sum);
  else
    ld_metrics_emit(e, NULL, a.sum);
}

static void c_disconnects(ld_metrics_emitter_t *e, void *ud) {
  ld_node_metrics_t *nm = ud;
  if (nm->src.router == NULL)
    return;
  ld_gs_stats_t st;
  ld_gs_router_stats(nm->src.router, &st);
  ld_metrics_emit(e, NULL, (double)st.disconnects);
}

static void emit_published(const char *topic, const ld_gs_topic_stats_t *st, void *arg) {
  ld_metrics_emit(arg, (const char *const[]){topic}, (double)st->published);
}

static void c_published(ld_metrics_emitter_t *e, void *ud) {
  for_each_topic(ud, emit_published, e);
}

static void emit_messages(const char *topic, const ld_gs_topic_stats_t *st, void *arg) {
  ld_metrics_emit(arg, (const char *const[]){topic, "in"}, (double)st->msgs_in);
  ld_metrics_emit(arg, (const char *const[]){topic, "out"}, (double)st->msgs_out);
}

static void c_relay_messages(ld_metrics_emitter_t *e, void *ud) {
  for_each_topic(ud, emit_messages, e);
}

/* nwaku counts data and topic bytes of every message. */
static void emit_bytes(const char *topic, const ld_gs_topic_stats_t *st, void *arg) {
  double tlen = (double)strlen(topic);
  ld_metrics_emit(arg, (const char *const[]){topic, "gross", "in"},
                  (double)st->bytes_in + (double)st->msgs_in * tlen);
  ld_metrics_emit(arg, (const char *const[]){topic, "net", "out"},
                  (double)st->bytes_out + (double)st->msgs_out * tlen);
}

/* The relay set with ld_node_metrics_set_relay, or NULL. */
static ld_relay_t *relay_of(const ld_node_metrics_t *nm) {
  return nm->relay;
}

/* Calls fn for every topic the relay keeps counters for. */
static void for_each_relay_topic(ld_node_metrics_t *nm,
                                 void (*fn)(const char *topic, const ld_relay_topic_stats_t *st,
                                            void *arg),
                                 void *arg) {
  ld_relay_t *relay = relay_of(nm);
  if (relay == NULL)
    return;
  const char *topics[LD_NODE_METRICS_MAX_TOPICS];
  size_t n = ld_relay_topics(relay, topics, LD_NODE_METRICS_MAX_TOPICS);
  for (size_t i = 0; i < n && i < LD_NODE_METRICS_MAX_TOPICS; i++) {
    ld_relay_topic_stats_t st;
    if (ld_relay_topic_stats(relay, topics[i], &st) == 0)
      fn(topics[i], &st, arg);
  }
}

static void emit_net_in(const char *topic, const ld_relay_topic_stats_t *st, void *arg) {
  ld_metrics_emit(arg, (const char *const[]){topic, "net", "in"}, (double)st->bytes_in);
}

static void c_relay_bytes(ld_metrics_emitter_t *e, void *ud) {
  for_each_topic(ud, emit_bytes, e);
  for_each_relay_topic(ud, emit_net_in, e);
}

typedef struct shard_arg {
  ld_metrics_emitter_t *e;
  int which; /* 0 total, 1 max, 2 average */
} shard_arg_t;

static void emit_shard_size(const char *topic, const ld_relay_topic_stats_t *st, void *arg) {
  shard_arg_t *a = arg;
  double v[3] = {(double)st->payload_bytes_total, (double)st->payload_bytes_max,
                 st->payload_count > 0 ? (double)st->payload_bytes_total / (double)st->payload_count
                                       : 0};
  ld_metrics_emit(a->e, (const char *const[]){topic}, v[a->which]);
}

static void c_shard_total(ld_metrics_emitter_t *e, void *ud) {
  shard_arg_t a = {e, 0};
  for_each_relay_topic(ud, emit_shard_size, &a);
}

static void c_shard_max(ld_metrics_emitter_t *e, void *ud) {
  shard_arg_t a = {e, 1};
  for_each_relay_topic(ud, emit_shard_size, &a);
}

static void c_shard_avg(ld_metrics_emitter_t *e, void *ud) {
  shard_arg_t a = {e, 2};
  for_each_relay_topic(ud, emit_shard_size, &a);
}

static void c_signed(ld_metrics_emitter_t *e, void *ud) {
  ld_node_metrics_t *nm = ud;
  ld_relay_t *relay = relay_of(nm);
  if (relay == NULL)
    return;
  ld_relay_stats_t st;
  ld_relay_get_stats(relay, &st);
  ld_metrics_emit(e, (const char *const[]){"Accept"}, (double)st.signed_accepted);
  ld_metrics_emit(e, (const char *const[]){"Reject"}, (double)st.signed_rejected);
}

static void c_latency(ld_metrics_emitter_t *e, void *ud) {
  ld_node_metrics_t *nm = ud;
  ld_relay_t *relay = relay_of(nm);
  if (relay == NULL)
    return;
  ld_relay_latency_t lat;
  ld_relay_get_latency(relay, &lat);
  double bounds[LD_RELAY_LATENCY_BUCKETS];
  uint64_t cum[LD_RELAY_LATENCY_BUCKETS], acc = 0;
  for (size_t i = 0; i < LD_RELAY_LATENCY_BUCKETS; i++) {
    bounds[i] = ld_relay_latency_bounds_us[i] / 1e6;
    acc += lat.counts[i];
    cum[i] = acc;
  }
  ld_metrics_emit_histogram(e, NULL, bounds, cum, LD_RELAY_LATENCY_BUCKETS, lat.count, lat.sum_s);
}

/* ---- registration ---------------------------------------------------------------------------- */

typedef struct family_def {
  const char *name;
  ld_metric_type_t type;
  const char *help;
  const char *labels[3];
  size_t n_labels;
  ld_metrics_collect_fn fn;
  int field; /* -1: user data is the object itself */
} family_def_t;

static const family_def_t FAMILIES[] = {
    {"waku_version",
     LD_METRIC_GAUGE,
     "Waku version info (in git describe format)",
     {"version"},
     1,
     c_version,
     -1},
    {"libp2p_peers", LD_METRIC_GAUGE, "total connected peers", {0}, 0, c_peers, -1},
    {"waku_connected_peers",
     LD_METRIC_GAUGE,
     "Number of physical connections per direction and protocol",
     {"direction", "protocol"},
     2,
     c_connected_peers,
     -1},
    {"waku_connected_peers_per_agent",
     LD_METRIC_GAUGE,
     "Number of physical connections per agent",
     {"agent"},
     1,
     c_agents,
     -1},
    {"waku_connected_peers_per_shard",
     LD_METRIC_GAUGE,
     "Number of physical connections per shard",
     {"shard"},
     1,
     c_shards,
     -1},
    {"waku_peer_store_size",
     LD_METRIC_GAUGE,
     "Number of peers managed by the peer store",
     {0},
     0,
     c_peerstore_size,
     -1},
    {"libp2p_pubsub_peers", LD_METRIC_GAUGE, "pubsub peer instances", {0}, 0, c_pubsub_peers, -1},
    {"libp2p_pubsub_topics",
     LD_METRIC_GAUGE,
     "pubsub subscribed topics",
     {0},
     0,
     c_pubsub_topics,
     -1},
    {"libp2p_gossipsub_peers_per_topic_mesh",
     LD_METRIC_GAUGE,
     "gossipsub peers per topic in mesh",
     {"topic"},
     1,
     c_mesh,
     -1},
    {"libp2p_gossipsub_peers_per_topic_gossipsub",
     LD_METRIC_GAUGE,
     "gossipsub peers per topic in gossipsub",
     {"topic"},
     1,
     c_topic_peers,
     -1},
    {"libp2p_pubsub_validation_success",
     LD_METRIC_COUNTER,
     "pubsub successfully validated messages",
     {0},
     0,
     c_sum,
     F_VALIDATION_SUCCESS},
    {"libp2p_pubsub_validation_failure",
     LD_METRIC_COUNTER,
     "pubsub failed validated messages",
     {0},
     0,
     c_sum,
     F_VALIDATION_FAILURE},
    {"libp2p_pubsub_validation_ignore",
     LD_METRIC_COUNTER,
     "pubsub ignore validated messages",
     {0},
     0,
     c_sum,
     F_VALIDATION_IGNORE},
    {"libp2p_gossipsub_received",
     LD_METRIC_COUNTER,
     "number of messages received (deduplicated)",
     {0},
     0,
     c_sum,
     F_RECEIVED},
    {"libp2p_gossipsub_duplicate",
     LD_METRIC_COUNTER,
     "number of duplicates received",
     {0},
     0,
     c_sum,
     F_DUPLICATE},
    {"libp2p_gossipsub_bad_score_disconnection",
     LD_METRIC_COUNTER,
     "the number of peers disconnected by gossipsub",
     {0},
     0,
     c_disconnects,
     -1},
    {"libp2p_pubsub_messages_published",
     LD_METRIC_COUNTER,
     "published messages",
     {"topic"},
     1,
     c_published,
     -1},
    {"waku_relay_messages",
     LD_METRIC_COUNTER,
     "relay message copies per topic and direction",
     {"topic", "direction"},
     2,
     c_relay_messages,
     -1},
    {"waku_relay_network_bytes",
     LD_METRIC_COUNTER,
     "total traffic per topic, distinct gross/net and direction",
     {"topic", "type", "direction"},
     3,
     c_relay_bytes,
     -1},
    {"waku_node_messages",
     LD_METRIC_COUNTER,
     "number of messages received",
     {"type"},
     1,
     c_sum,
     F_NODE_MESSAGES},
    {"waku_relay_total_msg_bytes_per_shard",
     LD_METRIC_GAUGE,
     "total length of messages seen per shard",
     {"shard"},
     1,
     c_shard_total,
     -1},
    {"waku_relay_max_msg_bytes_per_shard",
     LD_METRIC_GAUGE,
     "Maximum length of messages seen per shard",
     {"shard"},
     1,
     c_shard_max,
     -1},
    {"waku_relay_avg_msg_bytes_per_shard",
     LD_METRIC_GAUGE,
     "Average length of messages seen per shard",
     {"shard"},
     1,
     c_shard_avg,
     -1},
    {"waku_msg_validator_signed_outcome",
     LD_METRIC_COUNTER,
     "number of messages for each validation outcome",
     {"result"},
     1,
     c_signed,
     -1},
    {"waku_relay_message_latency_seconds",
     LD_METRIC_HISTOGRAM,
     "time from a received relay message's timestamp to its delivery",
     {0},
     0,
     c_latency,
     -1},
};

#define N_FAMILIES (sizeof FAMILIES / sizeof FAMILIES[0])

static void remove_families(ld_node_metrics_t *nm, size_t n) {
  for (size_t i = 0; i < n; i++)
    ld_metrics_remove_family(nm->reg, FAMILIES[i].name);
}

ld_node_metrics_t *ld_node_metrics_new(ld_metrics_t *reg, const ld_node_metrics_sources_t *src) {
  ld_node_metrics_t *nm = calloc(1, sizeof *nm);
  if (nm == NULL)
    return NULL;
  nm->reg = reg;
  nm->src = *src;
  snprintf(nm->version, sizeof nm->version, "%s", src->version ? src->version : "v" LD_VERSION);
  nm->src.version = nm->version;
  for (size_t f = 0; f < F_COUNT; f++)
    nm->fields[f] = (field_ctx_t){.nm = nm, .field = (field_t)f};
  for (size_t i = 0; i < N_FAMILIES; i++) {
    const family_def_t *d = &FAMILIES[i];
    void *ud = d->field >= 0 ? (void *)&nm->fields[d->field] : (void *)nm;
    if (ld_metrics_add_collector(reg, d->name, d->type, d->help, d->labels, d->n_labels, d->fn,
                                 ud) != 0) {
      remove_families(nm, i);
      free(nm);
      return NULL;
    }
  }
  return nm;
}

void ld_node_metrics_set_router(ld_node_metrics_t *nm, ld_gs_router_t *router) {
  nm->src.router = router;
  for (size_t k = 0; k < nm->n_topics; k++)
    free(nm->topics[k]);
  nm->n_topics = 0;
}

void ld_node_metrics_set_relay(ld_node_metrics_t *nm, ld_relay_t *relay) {
  nm->relay = relay;
}

void ld_node_metrics_free(ld_node_metrics_t *nm) {
  if (nm == NULL)
    return;
  remove_families(nm, N_FAMILIES);
  for (size_t k = 0; k < nm->n_topics; k++)
    free(nm->topics[k]);
  free(nm);
}
