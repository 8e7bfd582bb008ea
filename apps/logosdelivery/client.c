#include "logosdelivery/client.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "logosdelivery/app.h"
#include "logosdelivery/hints.h"
#include "node/events.h"
#include "waku/core/sharding.h"
#include "waku/core/topics.h"

/* ---- flags ---------------------------------------------------------------------------------- */

static const char *const g_names[] = {"send", "subscribe", "query"};

static const char *const g_usage[] = {
    "usage: logosdelivery send --peer <multiaddr> --content-topic T [--cluster-id C\n"
    "         --num-shards-in-network N | --pubsub-topic P] [--lightpush] [--meta hex]\n"
    "         [--ephemeral] [--timeout S] <text>",
    "usage: logosdelivery subscribe --peer <multiaddr> --content-topic T [--cluster-id C\n"
    "         --num-shards-in-network N | --pubsub-topic P] [--filter [--ping-interval S]]\n"
    "         [--count N] [--timeout S]",
    "usage: logosdelivery query --peer <multiaddr> [--pubsub-topic P] [--content-topic T]...\n"
    "         [--start-time ns] [--end-time ns] [--hash 0x…]... [--cursor 0x…]\n"
    "         [--page-size N] [--backward] [--no-data] [--all] [--cluster-id C] [--timeout S]",
};

static const char g_exit_codes[] =
    "\nexit codes: 0 success, 1 bad usage, 2 peer unreachable, lost or in another cluster,\n"
    "  3 handshake failed, 4 the peer does not support the protocol, 5 timed out, 6 other\n"
    "  failure, 7 the service answered with an error status (printed on stderr)\n";

const char *ld_client_command_name(ld_client_command_t cmd) {
  return g_names[cmd];
}

const char *ld_client_usage(ld_client_command_t cmd) {
  return g_usage[cmd];
}

static size_t append(ld_flag_t *t, size_t n, const ld_flag_t *more, size_t k) {
  memcpy(t + n, more, k * sizeof *more);
  return n + k;
}

#define APPEND(t, n, arr) append(t, n, arr, sizeof arr / sizeof arr[0])

static size_t common_flags(ld_client_opts_t *o, ld_flag_t *t) {
  const ld_flag_t common[] = {
      {"peer", LD_FLAG_STRING, o->peer, 0, 0, "service peer multiaddr ending in /p2p/<id>"},
      {"pubsub-topic", LD_FLAG_STRING, o->pubsub_topic, 0, 0,
       "static-shard pubsub topic /waku/2/rs/<cluster>/<shard>"},
      {"cluster-id", LD_FLAG_INT, &o->cluster_id, 0, 65535, "cluster ID (default: the peer's)"},
      {"timeout", LD_FLAG_INT, &o->timeout_s, 0, 86400, "seconds before giving up (0 = never)"},
      {"log-level", LD_FLAG_STRING, o->log_level, 0, 0, "log level on stderr (default ERROR)"},
      {"help", LD_FLAG_BOOL, &o->help, 0, 0, "print this help"},
  };
  return APPEND(t, 0, common);
}

static size_t topic_flags(ld_client_opts_t *o, ld_flag_t *t, size_t n) {
  const ld_flag_t topic[] = {
      {"content-topic", LD_FLAG_STRING, o->content_topic, 0, 0, "content topic"},
      {"num-shards-in-network", LD_FLAG_INT, &o->num_shards, 1, LD_NODE_MAX_SHARDS_IN_NETWORK,
       "autosharding shard count (default: learnt from the peer)"},
  };
  return APPEND(t, n, topic);
}

static size_t send_flags(ld_client_opts_t *o, ld_flag_t *t, size_t n) {
  const ld_flag_t sending[] = {
      {"lightpush", LD_FLAG_BOOL, &o->light, 0, 0, "push through lightpush v3 instead of relay"},
      {"meta", LD_FLAG_STRING, o->meta_hex, 0, 0, "meta bytes as hex (at most 64)"},
      {"ephemeral", LD_FLAG_BOOL, &o->ephemeral, 0, 0, "mark the message ephemeral"},
  };
  return APPEND(t, topic_flags(o, t, n), sending);
}

static size_t subscribe_flags(ld_client_opts_t *o, ld_flag_t *t, size_t n) {
  const ld_flag_t receiving[] = {
      {"filter", LD_FLAG_BOOL, &o->light, 0, 0, "receive through filter v2 instead of relay"},
      {"ping-interval", LD_FLAG_INT, &o->ping_interval_s, 1, 3600,
       "--filter: seconds between pings of the subscription (default 60)"},
      {"count", LD_FLAG_INT, &o->count, 0, INT64_MAX, "exit after this many messages"},
  };
  return APPEND(t, topic_flags(o, t, n), receiving);
}

static size_t query_flags(ld_client_opts_t *o, ld_flag_t *t, size_t n) {
  const ld_flag_t querying[] = {
      {"content-topic", LD_FLAG_LIST, &o->content_topics, 0, 0, "content topic (repeatable)"},
      {"start-time", LD_FLAG_INT, &o->start_time, 0, INT64_MAX, "from this Unix time in ns"},
      {"end-time", LD_FLAG_INT, &o->end_time, 0, INT64_MAX, "until this Unix time in ns"},
      {"hash", LD_FLAG_LIST, &o->hashes, 0, 0, "message hash 0x… (repeatable)"},
      {"cursor", LD_FLAG_STRING, o->cursor, 0, 0, "start after this message hash (a cursor)"},
      {"page-size", LD_FLAG_INT, &o->page_size, 1, LD_STORE_MAX_PAGE_SIZE,
       "messages per page (default 20)"},
      {"backward", LD_FLAG_BOOL, &o->backward, 0, 0, "newest first"},
      {"no-data", LD_FLAG_BOOL, &o->no_data, 0, 0, "hashes only"},
      {"all", LD_FLAG_BOOL, &o->all, 0, 0, "read every page"},
  };
  return APPEND(t, n, querying);
}

static size_t client_flags(ld_client_opts_t *o, ld_flag_t *t) {
  size_t n = common_flags(o, t);
  switch (o->command) {
  case LD_CLIENT_SEND:
    return send_flags(o, t, n);
  case LD_CLIENT_SUBSCRIBE:
    return subscribe_flags(o, t, n);
  case LD_CLIENT_QUERY:
    return query_flags(o, t, n);
  }
  return n;
}

static void set_defaults(ld_client_opts_t *o, ld_client_command_t cmd) {
  memset(o, 0, sizeof *o);
  o->command = cmd;
  o->timeout_s = cmd == LD_CLIENT_SEND ? LD_CLIENT_SEND_TIMEOUT_S : 0;
  o->cluster_id = -1;
  o->ping_interval_s = LD_CLIENT_FILTER_PING_S;
  o->start_time = o->end_time = -1;
  strcpy(o->log_level, "ERROR");
}

size_t ld_client_flags(ld_client_command_t cmd, ld_flag_t *out, size_t cap) {
  static ld_client_opts_t unused;
  ld_client_opts_clear(&unused);
  set_defaults(&unused, cmd);
  ld_flag_t table[LD_CLIENT_MAX_FLAGS];
  size_t n = client_flags(&unused, table);
  n = n < cap ? n : cap;
  memcpy(out, table, n * sizeof *table);
  return n;
}

static int check_required(const ld_client_opts_t *o, char *err, size_t errlen) {
  const char *name = ld_client_command_name(o->command);
  bool query = o->command == LD_CLIENT_QUERY;
  if (o->peer[0] == '\0' || (!query && o->content_topic[0] == '\0')) {
    snprintf(
        err, errlen,
        "%s: %s required; give --peer <multiaddr of the node, as it logs it>%s (`logosdelivery "
        "%s --help`)",
        name, query ? "--peer is" : "--peer and --content-topic are",
        query ? "" : " and --content-topic /<app>/<version>/<topic>/<encoding>", name);
    return LD_ERR_INVALID_ARG;
  }
  return 0;
}

int ld_client_parse(ld_client_command_t cmd, int argc, char **argv, ld_client_opts_t *o,
                    const char **positional, size_t *n_positional, char *err, size_t errlen) {
  set_defaults(o, cmd);
  ld_flag_t table[LD_CLIENT_MAX_FLAGS];
  ld_flags_result_t res;
  memset(&res, 0, sizeof res);
  size_t n = client_flags(o, table);
  int rc = ld_flags_parse(table, n, argc, argv, &res);
  if (rc != 0) {
    snprintf(err, errlen, "%s: %s", ld_client_command_name(cmd),
             rc == LD_ERR_NOMEM ? "out of memory" : res.error);
    return rc;
  }
  if (o->help) {
    printf("%s\n\n", ld_client_usage(cmd));
    ld_flags_print_help(table, n, stdout);
    printf("%s", g_exit_codes);
    return 0;
  }
  for (size_t i = 0; i < res.n_positional; i++)
    positional[i] = res.positional[i];
  *n_positional = res.n_positional;
  return check_required(o, err, errlen);
}

void ld_client_opts_clear(ld_client_opts_t *o) {
  ld_strlist_clear(&o->content_topics);
  ld_strlist_clear(&o->hashes);
}

/* ---- the topic ------------------------------------------------------------------------------ */

bool ld_client_cluster_from_flags(const ld_client_opts_t *o) {
  return o->cluster_id >= 0 || o->pubsub_topic[0] != '\0';
}

bool ld_client_topic_from_flags(const ld_client_opts_t *o) {
  return o->pubsub_topic[0] != '\0' || (o->cluster_id >= 0 && o->num_shards > 0);
}

static int topic_from_pubsub(const ld_client_opts_t *o, ld_client_topic_t *out, char *err,
                             size_t errlen) {
  ld_relay_shard_t rs;
  ld_topic_error_t why = LD_TOPIC_OK;
  if (ld_pubsub_topic_parse(o->pubsub_topic, strlen(o->pubsub_topic), &rs, &why) != 0) {
    snprintf(err, errlen, "--pubsub-topic '%s': %s; write /waku/2/rs/<cluster>/<shard>",
             o->pubsub_topic, ld_topic_strerror(why));
    return LD_ERR_INVALID_ARG;
  }
  if (o->cluster_id >= 0 && o->cluster_id != rs.cluster_id) {
    snprintf(err, errlen,
             "--pubsub-topic '%s' is not in --cluster-id %lld; give one of them, or the same "
             "cluster in both",
             o->pubsub_topic, (long long)o->cluster_id);
    return LD_ERR_INVALID_ARG;
  }
  if (rs.shard_id > LD_NODE_MAX_SHARD) {
    snprintf(err, errlen, "--pubsub-topic '%s': shard above %d; give a shard in 0..%d",
             o->pubsub_topic, LD_NODE_MAX_SHARD, LD_NODE_MAX_SHARD);
    return LD_ERR_INVALID_ARG;
  }
  out->cluster = rs.cluster_id;
  out->shard = rs.shard_id;
  out->num_shards = 0;
  snprintf(out->source, sizeof out->source, "--pubsub-topic");
  ld_pubsub_topic_format(rs, out->topic, sizeof out->topic);
  return 0;
}

/* Writes the peer's shards as "0, 3, 5" (the first few) to `out`. */
static void shards_text(const ld_metadata_info_t *peer, char *out, size_t cap) {
  uint16_t shards[8];
  size_t n = ld_metadata_info_shards(peer, shards, 8);
  size_t used = 0;
  out[0] = '\0';
  for (size_t i = 0; i < n && i < 8 && used < cap; i++)
    used += (size_t)snprintf(out + used, cap - used, "%s%u", i > 0 ? ", " : "", shards[i]);
  if (n > 8 && used < cap)
    snprintf(out + used, cap - used, ", … (%zu shards)", n);
}

/* The largest shard the peer named plus one, or 0 when it named none. */
static uint32_t shard_span(const ld_metadata_info_t *peer) {
  uint16_t shards[LD_METADATA_MAX_SHARDS];
  size_t n = ld_metadata_info_shards(peer, shards, LD_METADATA_MAX_SHARDS);
  return n > 0 ? (uint32_t)shards[n - 1] + 1 : 0;
}

/* The autosharding shard count (see ld_client_topic), or 0 when the peer's shards tell none. */
static uint32_t shard_count(const ld_client_opts_t *o, const ld_metadata_info_t *peer,
                            uint16_t cluster, char *source, size_t cap) {
  if (o->num_shards > 0) {
    snprintf(source, cap, "--num-shards-in-network");
    return (uint32_t)o->num_shards;
  }
  uint32_t span = peer != NULL ? shard_span(peer) : 0;
  if (span > 0 && span == peer->n_shards) {
    snprintf(source, cap, "the peer serves shards 0..%u", span - 1);
    return span;
  }
  size_t n_presets = 0;
  const ld_waku_network_preset_t *presets = ld_waku_network_presets(&n_presets);
  for (size_t i = 0; i < n_presets && span > 0; i++)
    if (presets[i].cluster_id == cluster && span <= presets[i].num_shards) {
      snprintf(source, cap, "the network preset %s of cluster %u", presets[i].name, cluster);
      return presets[i].num_shards;
    }
  if (span == 0) {
    snprintf(source, cap, "the default: the peer named no shards");
    return LD_WAKU_DEFAULT_NUM_SHARDS;
  }
  return 0;
}

int ld_client_topic(const ld_client_opts_t *o, const ld_metadata_info_t *peer,
                    ld_client_topic_t *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  ld_topic_error_t why = LD_TOPIC_OK;
  ld_content_topic_t ct;
  if (ld_content_topic_parse(o->content_topic, strlen(o->content_topic), &ct, &why) != 0) {
    snprintf(err, errlen,
             "--content-topic '%s': %s; write /<app>/<version>/<topic>/<encoding>, e.g. "
             "/demo/1/chat/proto",
             o->content_topic, ld_topic_strerror(why));
    return LD_ERR_INVALID_ARG;
  }
  if (o->pubsub_topic[0] != '\0')
    return topic_from_pubsub(o, out, err, errlen);
  uint16_t cluster = o->cluster_id >= 0                  ? (uint16_t)o->cluster_id
                     : peer != NULL && peer->has_cluster ? (uint16_t)peer->cluster_id
                                                         : LD_WAKU_DEFAULT_CLUSTER_ID;
  uint32_t n = shard_count(o, peer, cluster, out->source, sizeof out->source);
  if (n == 0) {
    char shards[96];
    shards_text(peer, shards, sizeof shards);
    snprintf(err, errlen,
             "the peer serves shards %s of cluster %u, which tell no autosharding shard count: "
             "give --num-shards-in-network or --pubsub-topic",
             shards, cluster);
    return LD_ERR_INVALID_ARG;
  }
  ld_relay_shard_t rs;
  if (ld_autoshard_parsed(&ct, n, cluster, &rs, &why) != 0) {
    snprintf(err, errlen, "--content-topic '%s': %s; give --pubsub-topic to choose the shard",
             o->content_topic, ld_topic_strerror(why));
    return LD_ERR_INVALID_ARG;
  }
  out->cluster = rs.cluster_id;
  out->shard = rs.shard_id;
  out->num_shards = n;
  ld_pubsub_topic_format(rs, out->topic, sizeof out->topic);
  return 0;
}

/* ---- exit codes ----------------------------------------------------------------------------- */

int ld_client_exit_code(int err) {
  switch (err) {
  case LD_ERR_UNREACHABLE:
  case LD_ERR_REFUSED:
  case LD_ERR_IO:
  case LD_ERR_CLOSED:
  case LD_ERR_CLUSTER_MISMATCH:
    return LD_CANARY_EXIT_UNREACHABLE;
  case LD_ERR_HANDSHAKE:
  case LD_ERR_BAD_SIGNATURE:
  case LD_ERR_BAD_KEY:
  case LD_ERR_PEER_ID_MISMATCH:
  case LD_ERR_DECRYPT:
  case LD_ERR_NEGOTIATION_FAILED:
    return LD_CANARY_EXIT_HANDSHAKE;
  case LD_ERR_PROTOCOL_UNSUPPORTED:
    return LD_CANARY_EXIT_UNSUPPORTED;
  case LD_ERR_TIMEOUT:
    return LD_CANARY_EXIT_TIMEOUT;
  default:
    return LD_CANARY_EXIT_OTHER;
  }
}

int ld_client_service_exit(int err) {
  return err != 0 ? ld_client_exit_code(err) : LD_EXIT_SERVICE;
}

/* ---- the node's configuration --------------------------------------------------------------- */

/* The cluster before the peer said anything: --cluster-id, else the cluster of --pubsub-topic,
 * else 0. */
static uint16_t initial_cluster(const ld_client_opts_t *o) {
  ld_relay_shard_t rs;
  if (o->cluster_id >= 0)
    return (uint16_t)o->cluster_id;
  if (o->pubsub_topic[0] != '\0' &&
      ld_pubsub_topic_parse(o->pubsub_topic, strlen(o->pubsub_topic), &rs, NULL) == 0)
    return rs.cluster_id;
  return LD_WAKU_DEFAULT_CLUSTER_ID;
}

static bool wants_topic(const ld_client_t *c) {
  return c->opts.command != LD_CLIENT_QUERY;
}

static bool wants_relay(const ld_client_t *c) {
  return wants_topic(c) && !c->opts.light;
}

/* Chooses c->topic (and c->cluster) from the options and what the peer said (`peer`, NULL:
 * nothing) and says on stderr which topic it is and why. */
static int choose_topic(ld_client_t *c, const ld_metadata_info_t *peer, char *err, size_t errlen) {
  ld_client_topic_t t;
  int rc = ld_client_topic(&c->opts, peer, &t, err, errlen);
  if (rc != 0)
    return rc;
  snprintf(c->topic, sizeof c->topic, "%s", t.topic);
  c->cluster = t.cluster;
  const char *name = ld_client_command_name(c->opts.command);
  if (t.num_shards == 0)
    fprintf(stderr, "%s: pubsub topic %s (%s)\n", name, t.topic, t.source);
  else
    fprintf(stderr, "%s: pubsub topic %s (autosharding of %s over %u shard%s in cluster %u: %s)\n",
            name, t.topic, c->opts.content_topic, t.num_shards, t.num_shards == 1 ? "" : "s",
            t.cluster, t.source);
  return 0;
}

static int peer_id_of(const char *text, ld_peerid_t *id) {
  ld_multiaddr_t ma;
  if (ld_multiaddr_parse(&ma, text) != 0 || !ld_multiaddr_peerid(&ma, id, false))
    return LD_ERR_INVALID_ARG;
  return 0;
}

/* The node in c->cluster, with relay on the shard of c->topic when the command relays and the
 * topic is chosen (before that, and for the light variants and query, without relay). */
static int build_config(ld_client_t *c, ld_node_config_t *cfg, char *err, size_t errlen) {
  ld_node_config_default(cfg);
  cfg->listen = false;
  cfg->max_connections = 8;
  cfg->cluster_id = c->cluster;
  ld_relay_shard_t rs;
  if (c->topic[0] != '\0' && ld_pubsub_topic_parse(c->topic, strlen(c->topic), &rs, NULL) == 0) {
    cfg->shards[0] = rs.shard_id;
    cfg->n_shards = 1;
  }
  cfg->relay = wants_relay(c) && cfg->n_shards > 0;
  char why[300];
  int rc = ld_node_config_add_static_node(cfg, c->opts.peer, why, sizeof why);
  if (rc == 0)
    rc = ld_node_config_finalize(cfg, why, sizeof why);
  if (rc == 0 && (rc = peer_id_of(c->opts.peer, &c->peer_id)) != 0)
    snprintf(why, sizeof why, "'%.200s' has no /p2p/<peer id>", c->opts.peer);
  if (rc != 0)
    snprintf(err, errlen,
             "--peer: %s; give the node's full multiaddr, e.g. "
             "/ip4/127.0.0.1/tcp/60000/p2p/16Uiu2…, as it logs it (`Listening on …`)",
             why);
  return rc;
}

/* ---- stopping ------------------------------------------------------------------------------- */

static void close_handles(ld_client_t *c) {
  c->node = NULL;
  uv_close((uv_handle_t *)&c->sigint, NULL);
  uv_close((uv_handle_t *)&c->sigterm, NULL);
  uv_close((uv_handle_t *)&c->tick, NULL);
}

static void on_node_stopped(void *user_data) {
  close_handles(user_data);
}

void ld_client_stop(ld_client_t *c) {
  if (c->stopping)
    return;
  c->stopping = true;
  c->finished = true;
  c->conn = NULL;
  uv_timer_stop(&c->tick);
  if (c->node != NULL)
    ld_node_stop(c->node, on_node_stopped, c); /* while replacing, on_replaced sees `stopping` */
  else
    close_handles(c);
}

void ld_client_finish(ld_client_t *c, int exit_code) {
  if (c->finished)
    return;
  c->finished = true;
  c->exit_code = exit_code;
  if (c->hooks->on_finishing != NULL)
    c->hooks->on_finishing(c);
  else
    ld_client_stop(c);
}

uint64_t ld_client_now_ms(ld_client_t *c) {
  return uv_now(&c->loop);
}

size_t ld_client_topic_peers(const ld_client_t *c) {
  ld_gs_service_t *gs = c->node != NULL ? ld_node_gossipsub(c->node) : NULL;
  return gs != NULL ? ld_gs_service_topic_peers(gs, c->topic, NULL, 0) : 0;
}

size_t ld_client_mesh_peers(const ld_client_t *c) {
  ld_gs_service_t *gs = c->node != NULL ? ld_node_gossipsub(c->node) : NULL;
  return gs != NULL ? ld_gs_service_mesh_peers(gs, c->topic, NULL, 0) : 0;
}

/* ---- replacing the node --------------------------------------------------------------------- */

static int start_node(ld_client_t *c, const ld_node_config_t *cfg);

static void report_start_failure(ld_client_t *c, int rc) {
  fprintf(stderr, "%s: cannot start: %s (%s); run it again with --log-level=DEBUG to see why\n",
          ld_client_command_name(c->opts.command), ld_strerror(rc), ld_errname(rc));
  c->exit_code = c->node != NULL ? ld_client_exit_code(rc) : LD_CANARY_EXIT_OTHER;
}

/* The first node has stopped: start the one that fits the settled cluster and topic. */
static void on_replaced(void *user_data) {
  static ld_node_config_t cfg;
  ld_client_t *c = user_data;
  c->node = NULL;
  c->replacing = false;
  if (c->stopping) {
    close_handles(c);
    return;
  }
  char err[512];
  int rc = build_config(c, &cfg, err, sizeof err);
  if (rc == 0)
    rc = start_node(c, &cfg);
  if (rc != 0) {
    report_start_failure(c, rc);
    ld_client_stop(c);
  }
}

static void replace_node(ld_client_t *c) {
  LD_INFO("client", "connecting to %s again in cluster %u%s%s", c->opts.peer, c->cluster,
          wants_relay(c) ? " with relay on " : "", wants_relay(c) ? c->topic : "");
  c->replaced = c->replacing = true;
  c->conn = NULL;
  c->awaiting_ready = c->peer_connected = c->has_peer_info = false;
  ld_node_stop(c->node, on_replaced, c);
}

/* ---- the peer's cluster --------------------------------------------------------------------- */

/* The cluster the peer's metadata named, or -1 when it has not said. */
static int64_t peer_cluster(const ld_client_t *c) {
  return c->has_peer_info && c->peer_info.has_cluster ? (int64_t)c->peer_info.cluster_id : -1;
}

/* Whether the peer is in another cluster than the node: its metadata said so, or our metadata
 * service closed a connection for that reason (`reason`, or its counter: the node has no other
 * peer). */
static bool other_cluster(ld_client_t *c, int reason) {
  ld_metadata_stats_t st = {0};
  ld_metadata_t *md = ld_node_metadata(c->node);
  if (md != NULL)
    ld_metadata_get_stats(md, &st);
  int64_t theirs = peer_cluster(c);
  uint32_t ours = ld_node_config(c->node)->cluster_id;
  return (theirs >= 0 && theirs != ours) || st.rejected_cluster > 0 ||
         reason == LD_ERR_CLUSTER_MISMATCH;
}

static void report_other_cluster(ld_client_t *c) {
  int64_t theirs = peer_cluster(c);
  uint32_t ours = ld_node_config(c->node)->cluster_id;
  fprintf(stderr, "%s: %s is not in cluster %u", ld_client_command_name(c->opts.command),
          c->opts.peer, ours);
  if (theirs >= 0 && theirs != ours)
    fprintf(stderr, " but in cluster %lld", (long long)theirs);
  fprintf(stderr, " (CLUSTER_MISMATCH); ");
  if (theirs >= 0)
    fprintf(stderr,
            "give --cluster-id %lld (or a --pubsub-topic of that cluster), or leave both "
            "out to use the peer's cluster\n",
            (long long)theirs);
  else
    fprintf(stderr, "give the peer's cluster with --cluster-id, or leave it out\n");
  ld_client_finish(c, ld_client_exit_code(LD_ERR_CLUSTER_MISMATCH));
}

/* Settles the cluster and the topic with what the peer said (`reason`: why the last connection
 * went away, or 0): adopts the peer's cluster unless the flags name one (then a peer of another
 * cluster ends the command), chooses the topic, and replaces the node when it does not fit them.
 * Calls on_started once the node in place is the one to use; returns true then. */
static bool settle(ld_client_t *c, int reason) {
  if (other_cluster(c, reason)) {
    if (c->settled || c->replaced || peer_cluster(c) < 0 ||
        ld_client_cluster_from_flags(&c->opts)) {
      report_other_cluster(c);
      return false;
    }
    c->cluster = (uint16_t)peer_cluster(c);
  }
  if (c->settled)
    return true;
  char err[512];
  if (wants_topic(c) && c->topic[0] == '\0' &&
      choose_topic(c, c->has_peer_info ? &c->peer_info : NULL, err, sizeof err) != 0) {
    fprintf(stderr, "%s: %s\n", ld_client_command_name(c->opts.command), err);
    ld_client_finish(c, LD_EXIT_USAGE);
    return false;
  }
  if (ld_node_config(c->node)->cluster_id != c->cluster ||
      (wants_relay(c) && ld_node_relay(c->node) == NULL)) {
    replace_node(c);
    return false;
  }
  c->settled = true;
  if (c->hooks->on_started != NULL)
    c->hooks->on_started(c);
  return !c->finished;
}

/* ---- events --------------------------------------------------------------------------------- */

static void on_static_peer(int kind, const void *payload, void *user_data) {
  (void)kind;
  const ld_event_static_peer_t *ev = payload;
  ld_client_t *c = user_data;
  if (ev->dial_error == 0 || c->finished || c->replacing)
    return;
  char hint[384];
  fprintf(stderr, "%s: cannot reach --peer %s: %s (%s); %s\n",
          ld_client_command_name(c->opts.command), c->opts.peer, ld_strerror(ev->dial_error),
          ld_errname(ev->dial_error),
          ld_app_dial_hint(ev->dial_error, "--peer", hint, sizeof hint));
  ld_client_finish(c, ld_client_exit_code(ev->dial_error));
}

static void on_peer_metadata(int kind, const void *payload, void *user_data) {
  (void)kind;
  const ld_event_peer_metadata_t *ev = payload;
  ld_client_t *c = user_data;
  if (c->finished || c->replacing || ev->info == NULL || !ld_peerid_equal(ev->peer, &c->peer_id))
    return;
  c->peer_info = *ev->info;
  c->has_peer_info = true;
}

/* Another live connection to the peer than `gone`, or NULL. */
static ld_conn_t *other_conn(ld_client_t *c, const ld_conn_t *gone) {
  ld_conn_t *conns[8];
  size_t n = ld_switch_connections(ld_node_switch(c->node), conns, 8);
  for (size_t i = 0; i < n && i < 8; i++)
    if (conns[i] != gone && ld_peerid_equal(ld_conn_remote_peer(conns[i]), &c->peer_id))
      return conns[i];
  return NULL;
}

/* A connection is ready once the peer said its metadata, or LD_CLIENT_METADATA_WAIT_MS after it
 * came up without; the first ready connection settles the cluster and topic. */
static void check_ready(ld_client_t *c) {
  if (!c->awaiting_ready || c->conn == NULL)
    return;
  if (c->settled && other_cluster(c, 0)) {
    report_other_cluster(c);
    return;
  }
  if (!c->has_peer_info && uv_now(&c->loop) - c->connected_ms < LD_CLIENT_METADATA_WAIT_MS)
    return;
  if (!settle(c, 0))
    return;
  c->awaiting_ready = false;
  if (c->hooks->on_peer_ready != NULL)
    c->hooks->on_peer_ready(c);
}

static void peer_up(ld_client_t *c, ld_conn_t *conn) {
  c->peer_connected = true;
  if (c->conn != NULL)
    return;
  c->conn = conn;
  c->awaiting_ready = true;
  c->connected_ms = uv_now(&c->loop);
  check_ready(c);
}

static void on_connection(int kind, const void *payload, void *user_data) {
  (void)kind;
  const ld_event_connection_t *ev = payload;
  ld_client_t *c = user_data;
  if (c->finished || c->replacing || !ld_peerid_equal(ev->peer, &c->peer_id))
    return;
  if (ev->connected) {
    peer_up(c, ev->conn);
    return;
  }
  if (ev->conn == c->conn)
    c->conn = ev->n_conns > 0 ? other_conn(c, ev->conn) : NULL;
  if (ev->n_conns > 0)
    return;
  c->peer_connected = c->awaiting_ready = false;
  c->conn = NULL;
  if (other_cluster(c, ev->reason)) {
    settle(c, ev->reason); /* adopts the peer's cluster, or ends the command */
    return;
  }
  if (c->hooks->on_peer_lost != NULL)
    c->hooks->on_peer_lost(c, ev->reason);
}

static void on_message(int kind, const void *payload, void *user_data) {
  (void)kind;
  ld_client_t *c = user_data;
  if (!c->finished && c->settled && c->hooks->on_message != NULL)
    c->hooks->on_message(c, payload);
}

static void report_timeout(ld_client_t *c) {
  const char *name = ld_client_command_name(c->opts.command);
  if (c->node != NULL && ld_node_gossipsub(c->node) != NULL)
    fprintf(stderr, "%s: timed out after %lld s (relay peers on %s: %zu); %s\n", name,
            (long long)c->opts.timeout_s, c->topic, ld_client_topic_peers(c),
            ld_client_topic_peers(c) == 0
                ? "the peer does not relay that topic: check it runs --relay=true with the topic's "
                  "shard, or give --pubsub-topic; a longer --timeout may help"
                : "give it more time with --timeout=<seconds>");
  else
    fprintf(stderr, "%s: timed out after %lld s (%s); %s\n", name, (long long)c->opts.timeout_s,
            c->peer_connected ? "connected to the peer" : "not connected to the peer",
            c->peer_connected ? "give it more time with --timeout=<seconds>"
                              : "check that the node at --peer runs and answers (`logosdelivery "
                                "canary <multiaddr>`), or give more time with --timeout");
}

static void on_tick(uv_timer_t *t) {
  ld_client_t *c = t->data;
  if (c->finished || c->replacing)
    return;
  uint64_t timeout_ms = (uint64_t)c->opts.timeout_s * 1000;
  if (timeout_ms > 0 && uv_now(&c->loop) - c->started_ms >= timeout_ms) {
    report_timeout(c);
    ld_client_finish(c, LD_CANARY_EXIT_TIMEOUT);
    return;
  }
  check_ready(c);
  if (!c->finished && !c->replacing && c->settled && c->hooks->on_tick != NULL)
    c->hooks->on_tick(c);
}

/* The first signal ends the command as it would end anyway; a second one stops at once. */
static void on_signal(uv_signal_t *h, int signum) {
  (void)signum;
  ld_client_t *c = h->data;
  if (c->finished) {
    ld_client_stop(c);
    return;
  }
  ld_client_finish(c, c->opts.command == LD_CLIENT_SUBSCRIBE ? LD_EXIT_OK : LD_CANARY_EXIT_OTHER);
}

/* ---- running -------------------------------------------------------------------------------- */

static int start_node(ld_client_t *c, const ld_node_config_t *cfg) {
  int err = 0;
  c->node = ld_node_new(&c->loop, cfg, &err);
  if (c->node == NULL)
    return err;
  ld_broker_t *b = ld_node_broker(c->node);
  ld_broker_subscribe(b, LD_EVENT_STATIC_PEER, on_static_peer, c);
  ld_broker_subscribe(b, LD_EVENT_CONNECTION, on_connection, c);
  ld_broker_subscribe(b, LD_EVENT_PEER_METADATA, on_peer_metadata, c);
  ld_broker_subscribe(b, LD_EVENT_MESSAGE, on_message, c);
  return ld_node_start(c->node);
}

static int start(ld_client_t *c, const ld_node_config_t *cfg) {
  uv_signal_start(&c->sigint, on_signal, SIGINT);
  uv_signal_start(&c->sigterm, on_signal, SIGTERM);
  c->started_ms = uv_now(&c->loop);
  uv_timer_start(&c->tick, on_tick, LD_CLIENT_TICK_MS, LD_CLIENT_TICK_MS);
  return start_node(c, cfg);
}

static void init_handles(ld_client_t *c) {
  uv_loop_init(&c->loop);
  uv_signal_init(&c->loop, &c->sigint);
  uv_signal_init(&c->loop, &c->sigterm);
  uv_timer_init(&c->loop, &c->tick);
  c->sigint.data = c->sigterm.data = c->tick.data = c;
}

/* The log level, the cluster and, when the flags decide it, the topic; then the configuration of
 * the first node. */
static int prepare(ld_client_t *c, ld_node_config_t *cfg) {
  const char *name = ld_client_command_name(c->opts.command);
  char err[512];
  ld_log_level_t level;
  if (ld_log_parse_level(c->opts.log_level, &level) != 0) {
    fprintf(stderr,
            "%s: --log-level: unknown level '%s'; write TRACE, DEBUG, INFO, NOTICE, WARN, ERROR "
            "or FATAL\n",
            name, c->opts.log_level);
    return LD_EXIT_USAGE;
  }
  ld_log_set_level(level);
  c->cluster = initial_cluster(&c->opts);
  int rc = 0;
  ld_client_topic_t unsettled;
  if (wants_topic(c) && ld_client_topic_from_flags(&c->opts))
    rc = choose_topic(c, NULL, err, sizeof err);
  else if (wants_topic(c)) /* checks the content topic now; the peer settles the rest */
    rc = ld_client_topic(&c->opts, NULL, &unsettled, err, sizeof err);
  if (rc == 0)
    rc = build_config(c, cfg, err, sizeof err);
  if (rc != 0) {
    fprintf(stderr, "%s: %s\n", name, err);
    return LD_EXIT_USAGE;
  }
  return LD_EXIT_OK;
}

int ld_client_run(ld_client_t *c, const ld_client_hooks_t *hooks) {
  static ld_node_config_t cfg;
  int code = prepare(c, &cfg);
  if (code != LD_EXIT_OK)
    return code;
  c->hooks = hooks;
  init_handles(c);
  int rc = start(c, &cfg);
  if (rc != 0) {
    report_start_failure(c, rc);
    ld_client_stop(c);
  }
  uv_run(&c->loop, UV_RUN_DEFAULT);
  uv_loop_close(&c->loop);
  return c->exit_code;
}
