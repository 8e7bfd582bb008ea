#include "logosdelivery/client.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "logosdelivery/app.h"
#include "node/events.h"
#include "waku/core/sharding.h"
#include "waku/core/topics.h"

/* ---- flags ---------------------------------------------------------------------------------- */

static size_t client_flags(ld_client_opts_t *o, bool send_flags, ld_flag_t *t) {
  const ld_flag_t common[] = {
      {"peer", LD_FLAG_STRING, o->peer, 0, 0, "relay peer multiaddr ending in /p2p/<id>"},
      {"content-topic", LD_FLAG_STRING, o->content_topic, 0, 0, "content topic"},
      {"pubsub-topic", LD_FLAG_STRING, o->pubsub_topic, 0, 0,
       "static-shard pubsub topic /waku/2/rs/<cluster>/<shard> (default: autosharding)"},
      {"cluster-id", LD_FLAG_INT, &o->cluster_id, 0, 65535, "cluster ID (default 0)"},
      {"num-shards-in-network", LD_FLAG_INT, &o->num_shards, 1, LD_NODE_MAX_SHARDS_IN_NETWORK,
       "autosharding shard count (default 1)"},
      {"timeout", LD_FLAG_INT, &o->timeout_s, 0, 86400, "seconds before giving up (0 = never)"},
      {"log-level", LD_FLAG_STRING, o->log_level, 0, 0, "log level on stderr (default ERROR)"},
      {"help", LD_FLAG_BOOL, &o->help, 0, 0, "print this help"},
  };
  const ld_flag_t sending[] = {
      {"meta", LD_FLAG_STRING, o->meta_hex, 0, 0, "meta bytes as hex (at most 64)"},
      {"ephemeral", LD_FLAG_BOOL, &o->ephemeral, 0, 0, "mark the message ephemeral"},
  };
  const ld_flag_t receiving[] = {
      {"count", LD_FLAG_INT, &o->count, 0, INT64_MAX, "exit after this many messages"},
  };
  size_t n = sizeof common / sizeof common[0];
  memcpy(t, common, sizeof common);
  if (send_flags) {
    memcpy(t + n, sending, sizeof sending);
    return n + sizeof sending / sizeof sending[0];
  }
  memcpy(t + n, receiving, sizeof receiving);
  return n + sizeof receiving / sizeof receiving[0];
}

int ld_client_parse(const char *command, int argc, char **argv, bool send_flags,
                    ld_client_opts_t *o, const char **positional, size_t *n_positional, char *err,
                    size_t errlen) {
  memset(o, 0, sizeof *o);
  o->num_shards = 1;
  o->timeout_s = send_flags ? 20 : 0;
  o->cluster_id = -1;
  strcpy(o->log_level, "ERROR");
  ld_flag_t table[16];
  ld_flags_result_t res;
  memset(&res, 0, sizeof res);
  size_t n = client_flags(o, send_flags, table);
  if (ld_flags_parse(table, n, argc, argv, &res) != 0) {
    snprintf(err, errlen, "%s: %s", command, res.error);
    return LD_ERR_INVALID_ARG;
  }
  if (o->help) {
    ld_flags_print_help(table, n, stdout);
    return 0;
  }
  for (size_t i = 0; i < res.n_positional; i++)
    positional[i] = res.positional[i];
  *n_positional = res.n_positional;
  if (o->peer[0] == '\0' || o->content_topic[0] == '\0') {
    snprintf(err, errlen, "%s: --peer and --content-topic are required", command);
    return LD_ERR_INVALID_ARG;
  }
  return 0;
}

/* ---- the topic ------------------------------------------------------------------------------ */

static int topic_from_pubsub(const ld_client_opts_t *o, char *topic, size_t cap, uint16_t *cluster,
                             uint16_t *shard, char *err, size_t errlen) {
  ld_relay_shard_t rs;
  ld_topic_error_t why = LD_TOPIC_OK;
  if (ld_pubsub_topic_parse(o->pubsub_topic, strlen(o->pubsub_topic), &rs, &why) != 0) {
    snprintf(err, errlen, "--pubsub-topic '%s': %s", o->pubsub_topic, ld_topic_strerror(why));
    return LD_ERR_INVALID_ARG;
  }
  if (o->cluster_id >= 0 && o->cluster_id != rs.cluster_id) {
    snprintf(err, errlen, "--pubsub-topic '%s' is not in --cluster-id %lld", o->pubsub_topic,
             (long long)o->cluster_id);
    return LD_ERR_INVALID_ARG;
  }
  if (rs.shard_id > LD_NODE_MAX_SHARD) {
    snprintf(err, errlen, "--pubsub-topic '%s': shard above %d", o->pubsub_topic,
             LD_NODE_MAX_SHARD);
    return LD_ERR_INVALID_ARG;
  }
  *cluster = rs.cluster_id;
  *shard = rs.shard_id;
  ld_pubsub_topic_format(rs, topic, cap);
  return 0;
}

int ld_client_topic(const ld_client_opts_t *o, char *topic, size_t cap, uint16_t *cluster,
                    uint16_t *shard, char *err, size_t errlen) {
  ld_topic_error_t why = LD_TOPIC_OK;
  ld_content_topic_t ct;
  if (ld_content_topic_parse(o->content_topic, strlen(o->content_topic), &ct, &why) != 0) {
    snprintf(err, errlen, "--content-topic '%s': %s", o->content_topic, ld_topic_strerror(why));
    return LD_ERR_INVALID_ARG;
  }
  if (o->pubsub_topic[0] != '\0')
    return topic_from_pubsub(o, topic, cap, cluster, shard, err, errlen);
  ld_relay_shard_t rs;
  uint16_t c = o->cluster_id >= 0 ? (uint16_t)o->cluster_id : 0;
  if (ld_autoshard_parsed(&ct, (uint32_t)o->num_shards, c, &rs, &why) != 0) {
    snprintf(err, errlen, "--content-topic '%s': %s", o->content_topic, ld_topic_strerror(why));
    return LD_ERR_INVALID_ARG;
  }
  *cluster = rs.cluster_id;
  *shard = rs.shard_id;
  ld_pubsub_topic_format(rs, topic, cap);
  return 0;
}

/* ---- the node ------------------------------------------------------------------------------- */

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

static int build_config(ld_client_t *c, ld_node_config_t *cfg, char *err, size_t errlen) {
  uint16_t cluster, shard;
  int rc = ld_client_topic(&c->opts, c->topic, sizeof c->topic, &cluster, &shard, err, errlen);
  if (rc != 0)
    return rc;
  ld_node_config_default(cfg);
  cfg->listen = false;
  cfg->max_connections = 8;
  cfg->cluster_id = cluster;
  cfg->shards[0] = shard;
  cfg->n_shards = 1;
  if (c->opts.pubsub_topic[0] == '\0')
    cfg->num_shards_in_network = (uint16_t)c->opts.num_shards;
  char why[300];
  rc = ld_node_config_add_static_node(cfg, c->opts.peer, why, sizeof why);
  if (rc == 0)
    rc = ld_node_config_finalize(cfg, why, sizeof why);
  if (rc != 0)
    snprintf(err, errlen, "--peer: %s", why);
  return rc;
}

static void on_node_stopped(void *user_data) {
  ld_client_t *c = user_data;
  uv_close((uv_handle_t *)&c->sigint, NULL);
  uv_close((uv_handle_t *)&c->sigterm, NULL);
  uv_close((uv_handle_t *)&c->tick, NULL);
}

void ld_client_finish(ld_client_t *c, int exit_code) {
  if (c->finished)
    return;
  c->finished = true;
  c->exit_code = exit_code;
  uv_timer_stop(&c->tick);
  ld_node_stop(c->node, on_node_stopped, c);
}

size_t ld_client_topic_peers(const ld_client_t *c) {
  ld_gs_service_t *gs = ld_node_gossipsub(c->node);
  return gs != NULL ? ld_gs_service_topic_peers(gs, c->topic, NULL, 0) : 0;
}

size_t ld_client_mesh_peers(const ld_client_t *c) {
  ld_gs_service_t *gs = ld_node_gossipsub(c->node);
  return gs != NULL ? ld_gs_service_mesh_peers(gs, c->topic, NULL, 0) : 0;
}

static void on_static_peer(int kind, const void *payload, void *user_data) {
  (void)kind;
  const ld_event_static_peer_t *ev = payload;
  ld_client_t *c = user_data;
  if (ev->dial_error == 0 || c->finished)
    return;
  fprintf(stderr, "%s: cannot reach %s: %s (%s)\n", c->command, c->opts.peer,
          ld_strerror(ev->dial_error), ld_errname(ev->dial_error));
  ld_client_finish(c, ld_client_exit_code(ev->dial_error));
}

static void on_connection(int kind, const void *payload, void *user_data) {
  (void)kind;
  const ld_event_connection_t *ev = payload;
  ld_client_t *c = user_data;
  if (ev->n_conns > 0 || c->finished)
    return;
  c->peer_connected = ev->connected;
  if (!ev->connected && c->hooks->on_peer_lost != NULL)
    c->hooks->on_peer_lost(c, ev->reason);
}

static void on_message(int kind, const void *payload, void *user_data) {
  (void)kind;
  ld_client_t *c = user_data;
  if (!c->finished && c->hooks->on_message != NULL)
    c->hooks->on_message(c, payload);
}

static void on_tick(uv_timer_t *t) {
  ld_client_t *c = t->data;
  uint64_t timeout_ms = (uint64_t)c->opts.timeout_s * 1000;
  if (timeout_ms > 0 && uv_now(&c->loop) - c->started_ms >= timeout_ms) {
    fprintf(stderr, "%s: timed out after %lld s (relay peers on %s: %zu)\n", c->command,
            (long long)c->opts.timeout_s, c->topic, ld_client_topic_peers(c));
    ld_client_finish(c, LD_CANARY_EXIT_TIMEOUT);
    return;
  }
  c->hooks->on_tick(c);
}

static void on_signal(uv_signal_t *h, int signum) {
  (void)signum;
  ld_client_t *c = h->data;
  ld_client_finish(c, strcmp(c->command, "subscribe") == 0 ? LD_EXIT_OK : LD_CANARY_EXIT_OTHER);
}

static int start(ld_client_t *c, const ld_node_config_t *cfg) {
  int err = 0;
  c->node = ld_node_new(&c->loop, cfg, &err);
  if (c->node == NULL)
    return err;
  ld_broker_t *b = ld_node_broker(c->node);
  ld_broker_subscribe(b, LD_EVENT_STATIC_PEER, on_static_peer, c);
  ld_broker_subscribe(b, LD_EVENT_CONNECTION, on_connection, c);
  ld_broker_subscribe(b, LD_EVENT_MESSAGE, on_message, c);
  uv_signal_start(&c->sigint, on_signal, SIGINT);
  uv_signal_start(&c->sigterm, on_signal, SIGTERM);
  c->started_ms = uv_now(&c->loop);
  uv_timer_start(&c->tick, on_tick, LD_CLIENT_TICK_MS, LD_CLIENT_TICK_MS);
  return ld_node_start(c->node);
}

static void init_handles(ld_client_t *c) {
  uv_loop_init(&c->loop);
  uv_signal_init(&c->loop, &c->sigint);
  uv_signal_init(&c->loop, &c->sigterm);
  uv_timer_init(&c->loop, &c->tick);
  c->sigint.data = c->sigterm.data = c->tick.data = c;
}

int ld_client_run(ld_client_t *c, const ld_client_hooks_t *hooks) {
  static ld_node_config_t cfg;
  char err[512];
  ld_log_level_t level;
  if (ld_log_parse_level(c->opts.log_level, &level) != 0) {
    fprintf(stderr, "%s: --log-level: unknown level '%s'\n", c->command, c->opts.log_level);
    return LD_EXIT_USAGE;
  }
  ld_log_set_level(level);
  if (build_config(c, &cfg, err, sizeof err) != 0) {
    fprintf(stderr, "%s: %s\n", c->command, err);
    return LD_EXIT_USAGE;
  }
  c->hooks = hooks;
  init_handles(c);
  int rc = start(c, &cfg);
  if (rc != 0) {
    fprintf(stderr, "%s: cannot start: %s (%s)\n", c->command, ld_strerror(rc), ld_errname(rc));
    if (c->node != NULL)
      ld_client_finish(c, ld_client_exit_code(rc));
    else
      on_node_stopped(c);
  }
  uv_run(&c->loop, UV_RUN_DEFAULT);
  uv_loop_close(&c->loop);
  return rc != 0 && c->node == NULL ? LD_CANARY_EXIT_OTHER : c->exit_code;
}
