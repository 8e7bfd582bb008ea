#include "logosdelivery/node_options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "logosdelivery/flags.h"
#include "logosdelivery/toml.h"

typedef struct node_flags {
  char config_file[LD_FLAG_STRING_MAX];
  char nodekey[LD_FLAG_STRING_MAX];
  char listen_address[LD_FLAG_STRING_MAX];
  int64_t tcp_port, ports_shift, max_connections, colocation_limit;
  char log_level[LD_FLAG_STRING_MAX];
  char log_format[LD_FLAG_STRING_MAX];
  bool relay;
  int64_t cluster_id, num_shards;
  ld_strlist_t shards, content_topics, static_nodes, protected_shards;
  char max_msg_size[LD_FLAG_STRING_MAX];
  bool rest, rest_admin, metrics;
  char rest_address[LD_FLAG_STRING_MAX], metrics_address[LD_FLAG_STRING_MAX];
  int64_t rest_port, metrics_port, rest_cache;
  ld_strlist_t rest_origins;
  bool ws, wss;
  int64_t ws_port;
  char ws_key[LD_FLAG_STRING_MAX], ws_cert[LD_FLAG_STRING_MAX];
  bool lightpush, filter, store, peer_exchange;
  int64_t filter_timeout, filter_max_peers, filter_max_criteria, store_db_connections;
  char store_db_url[LD_FLAG_STRING_MAX], store_retention[LD_FLAG_STRING_MAX];
  char service_node[LD_NODE_SERVICES][LD_FLAG_STRING_MAX];
  bool help;
} node_flags_t;

#define NODE_FLAGS_MAX 64

#define PORT_FLAG(name, target, help)                                                              \
  { name, LD_FLAG_INT, target, 0, 65535, help }

static size_t node_flag_table(node_flags_t *f, ld_flag_t *t) {
  const ld_flag_t table[] = {
      {"config-file", LD_FLAG_STRING, f->config_file, 0, 0,
       "load configuration from a TOML file (command line and environment take precedence)"},
      {"nodekey", LD_FLAG_STRING, f->nodekey, 0, 0, "P2P node private key as 64 hex chars"},
      {"listen-address", LD_FLAG_STRING, f->listen_address, 0, 0,
       "listening address (default 0.0.0.0)"},
      PORT_FLAG("tcp-port", &f->tcp_port, "TCP listening port (default 60000; 0 = any)"),
      PORT_FLAG("ports-shift", &f->ports_shift, "added to every port"),
      {"max-connections", LD_FLAG_INT, &f->max_connections, 1, LD_NODE_MAX_CONNECTIONS_LIMIT,
       "maximum connections (default 50)"},
      {"ip-colocation-limit", LD_FLAG_INT, &f->colocation_limit, 0, LD_NODE_MAX_CONNECTIONS_LIMIT,
       "peers allowed from one IP address (default 5; 0 = no limit)"},
      {"log-level", LD_FLAG_STRING, f->log_level, 0, 0,
       "TRACE, DEBUG, INFO, NOTICE, WARN, ERROR or FATAL"},
      {"log-format", LD_FLAG_STRING, f->log_format, 0, 0, "TEXT or JSON"},
      {"relay", LD_FLAG_BOOL, &f->relay, 0, 0, "enable relay: true|false (default true)"},
      {"cluster-id", LD_FLAG_INT, &f->cluster_id, 0, 65535, "cluster ID (default 0)"},
      {"shard", LD_FLAG_LIST, &f->shards, 0, 0,
       "shard to subscribe to; repeatable (default 0..7, or all with autosharding)"},
      {"num-shards-in-network", LD_FLAG_INT, &f->num_shards, 0, LD_NODE_MAX_SHARDS_IN_NETWORK,
       "shards for autosharding (default 0 = static sharding)"},
      {"content-topic", LD_FLAG_LIST, &f->content_topics, 0, 0,
       "content topic to subscribe to; repeatable"},
      {"staticnode", LD_FLAG_LIST, &f->static_nodes, 0, 0,
       "peer multiaddr to stay connected to; repeatable"},
      {"max-msg-size", LD_FLAG_STRING, f->max_msg_size, 0, 0,
       "largest message: B, KB, KiB, MB or MiB (default 150KiB)"},
      {"protected-shard", LD_FLAG_LIST, &f->protected_shards, 0, 0,
       "<shard>:<secp256k1 public key hex> whose messages must be signed; repeatable"},
      {"rest", LD_FLAG_BOOL, &f->rest, 0, 0, "enable the REST server (default false)"},
      {"rest-address", LD_FLAG_STRING, f->rest_address, 0, 0,
       "REST listening address (default 127.0.0.1)"},
      PORT_FLAG("rest-port", &f->rest_port, "REST listening port (default 8645)"),
      {"rest-admin", LD_FLAG_BOOL, &f->rest_admin, 0, 0, "enable the REST admin API"},
      {"rest-relay-cache-capacity", LD_FLAG_INT, &f->rest_cache, 1, LD_NODE_MAX_REST_CACHE,
       "messages the REST relay cache keeps per topic (default 50)"},
      {"rest-allow-origin", LD_FLAG_LIST, &f->rest_origins, 0, 0,
       "CORS origin allowed on REST (wildcards * and ?); repeatable"},
      {"metrics-server", LD_FLAG_BOOL, &f->metrics, 0, 0, "enable the metrics server"},
      {"metrics-server-address", LD_FLAG_STRING, f->metrics_address, 0, 0,
       "metrics listening address (default 127.0.0.1)"},
      PORT_FLAG("metrics-server-port", &f->metrics_port, "metrics listening port (default 8008)"),
      {"websocket-support", LD_FLAG_BOOL, &f->ws, 0, 0, "listen for WebSocket (/ws) connections"},
      PORT_FLAG("websocket-port", &f->ws_port, "WebSocket listening port (default 8000)"),
      {"websocket-secure-support", LD_FLAG_BOOL, &f->wss, 0, 0,
       "listen for secure WebSocket (/wss) on the WebSocket port"},
      {"websocket-secure-key-path", LD_FLAG_STRING, f->ws_key, 0, 0,
       "PEM private key for secure WebSocket"},
      {"websocket-secure-cert-path", LD_FLAG_STRING, f->ws_cert, 0, 0,
       "PEM certificate chain for secure WebSocket"},
      {"lightpush", LD_FLAG_BOOL, &f->lightpush, 0, 0, "serve lightpush (needs relay)"},
      {"filter", LD_FLAG_BOOL, &f->filter, 0, 0, "serve filter"},
      {"filter-subscription-timeout", LD_FLAG_INT, &f->filter_timeout, 1, 86400,
       "seconds a filter subscription lives without a ping (default 300)"},
      {"filter-max-peers-to-serve", LD_FLAG_INT, &f->filter_max_peers, 1, 1000000,
       "filter subscribers at most (default 1000)"},
      {"filter-max-criteria", LD_FLAG_INT, &f->filter_max_criteria, 1, 1000000,
       "filter criteria per subscriber at most (default 1000)"},
      {"store", LD_FLAG_BOOL, &f->store, 0, 0, "archive messages and serve store queries"},
      {"store-message-db-url", LD_FLAG_STRING, f->store_db_url, 0, 0,
       "archive database: sqlite://<path>, postgres://user:pass@host:port/db or memory:// "
       "(default sqlite://store.sqlite3)"},
      {"store-message-retention-policy", LD_FLAG_STRING, f->store_retention, 0, 0,
       "time:<seconds>, capacity:<count> or size:<n>GB|MB, several joined by ';' "
       "(default time:172800)"},
      {"store-max-num-db-connections", LD_FLAG_INT, &f->store_db_connections, 1, 1000,
       "PostgreSQL connections at most (default 50)"},
      {"peer-exchange", LD_FLAG_BOOL, &f->peer_exchange, 0, 0, "serve peer exchange"},
      {"storenode", LD_FLAG_STRING, f->service_node[LD_NODE_SERVICE_STORE], 0, 0,
       "store service peer multiaddr for the store client"},
      {"filternode", LD_FLAG_STRING, f->service_node[LD_NODE_SERVICE_FILTER], 0, 0,
       "filter service peer multiaddr for the filter client"},
      {"lightpushnode", LD_FLAG_STRING, f->service_node[LD_NODE_SERVICE_LIGHTPUSH], 0, 0,
       "lightpush service peer multiaddr for the lightpush client"},
      {"help", LD_FLAG_BOOL, &f->help, 0, 0, "print this help"},
  };
  _Static_assert(sizeof table / sizeof table[0] <= NODE_FLAGS_MAX, "NODE_FLAGS_MAX too small");
  memcpy(t, table, sizeof table);
  return sizeof table / sizeof table[0];
}

static void node_flags_default(node_flags_t *f) {
  memset(f, 0, sizeof *f);
  strcpy(f->listen_address, "0.0.0.0");
  f->tcp_port = LD_NODE_DEFAULT_TCP_PORT;
  f->max_connections = LD_NODE_DEFAULT_MAX_CONNECTIONS;
  f->colocation_limit = LD_NODE_DEFAULT_COLOCATION_LIMIT;
  strcpy(f->log_level, "INFO");
  strcpy(f->log_format, "TEXT");
  f->relay = true;
  strcpy(f->max_msg_size, "150KiB");
  strcpy(f->rest_address, LD_NODE_DEFAULT_REST_ADDRESS);
  f->rest_port = LD_NODE_DEFAULT_REST_PORT;
  strcpy(f->metrics_address, LD_NODE_DEFAULT_METRICS_ADDRESS);
  f->metrics_port = LD_NODE_DEFAULT_METRICS_PORT;
  f->rest_cache = LD_NODE_DEFAULT_REST_CACHE;
  f->ws_port = LD_NODE_DEFAULT_WS_PORT;
  f->filter_timeout = LD_NODE_DEFAULT_FILTER_TIMEOUT_S;
  f->filter_max_peers = LD_NODE_DEFAULT_FILTER_MAX_PEERS;
  f->filter_max_criteria = LD_NODE_DEFAULT_FILTER_MAX_CRITERIA;
  f->store_db_connections = LD_NODE_DEFAULT_DB_CONNECTIONS;
  strcpy(f->store_db_url, LD_NODE_DEFAULT_STORE_DB_URL);
  strcpy(f->store_retention, LD_NODE_DEFAULT_RETENTION);
}

static void node_flags_clear(node_flags_t *f) {
  ld_strlist_clear(&f->shards);
  ld_strlist_clear(&f->content_topics);
  ld_strlist_clear(&f->static_nodes);
  ld_strlist_clear(&f->protected_shards);
  ld_strlist_clear(&f->rest_origins);
}

int ld_app_read_file(const char *path, size_t max, char **out, size_t *len, char *err,
                     size_t errlen) {
  FILE *fp = fopen(path, "rb");
  if (fp == NULL) {
    snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
    return LD_ERR_IO;
  }
  char *buf = malloc(max + 2);
  size_t n = buf != NULL ? fread(buf, 1, max + 1, fp) : 0;
  int rc = buf == NULL ? LD_ERR_NOMEM : ferror(fp) ? LD_ERR_IO : n > max ? LD_ERR_TOO_LARGE : 0;
  fclose(fp);
  if (rc != 0) {
    snprintf(err, errlen, "cannot read '%s': %s", path,
             rc == LD_ERR_TOO_LARGE ? "file too large" : ld_strerror(rc));
    free(buf);
    return rc;
  }
  buf[n] = '\0';
  *out = buf;
  *len = n;
  return 0;
}

/* Everything read so far, so that a value refused later is reported where it came from. */
typedef struct collected {
  node_flags_t flags;
  ld_flag_t table[NODE_FLAGS_MAX];
  size_t n;
  ld_flags_result_t res;
} collected_t;

static int apply_config_file(collected_t *c, char *err, size_t errlen) {
  const char *path = c->flags.config_file;
  char *text = NULL;
  size_t len = 0;
  char why[LD_TOML_ERROR_MAX];
  int rc = ld_app_read_file(path, LD_TOML_MAX_INPUT, &text, &len, why, sizeof why);
  if (rc != 0) {
    snprintf(err, errlen, "--config-file: %s", why);
    return rc;
  }
  ld_toml_t doc;
  rc = ld_toml_parse(text, len, &doc, why, sizeof why);
  free(text);
  if (rc != 0) {
    snprintf(err, errlen, "config file '%s': %s", path, why);
    return rc == LD_ERR_NOMEM ? rc : LD_ERR_INVALID_ARG;
  }
  const ld_toml_entry_t *self = ld_toml_get(&doc, "config-file");
  if (self != NULL) {
    snprintf(err, errlen, "config file '%s': line %u: config-file cannot be set in a config file",
             path, self->line);
    rc = LD_ERR_INVALID_ARG;
  } else if ((rc = ld_flags_apply_toml(c->table, c->n, &doc, NULL, &c->res)) != 0) {
    snprintf(err, errlen, "config file '%s': %s", path, c->res.error);
  }
  ld_toml_clear(&doc);
  return rc;
}

static int collect_flags(int argc, char **argv, collected_t *c, char *err, size_t errlen) {
  memset(&c->res, 0, sizeof c->res);
  c->n = node_flag_table(&c->flags, c->table);
  int rc = ld_flags_parse(c->table, c->n, argc, argv, &c->res);
  if (rc == 0)
    rc = ld_flags_apply_env(c->table, c->n, LD_APP_ENV_PREFIX, &c->res);
  if (rc != 0) {
    snprintf(err, errlen, "%s", c->res.error);
    return rc;
  }
  if (c->res.n_positional > 0) {
    snprintf(err, errlen, "unexpected argument '%s'", c->res.positional[0]);
    return LD_ERR_INVALID_ARG;
  }
  if (c->flags.config_file[0] != '\0' && !c->flags.help)
    return apply_config_file(c, err, errlen);
  return 0;
}

/* Prefixes a refused value's reason with where the value came from. */
static int refused(const collected_t *c, const char *flag, int rc, const char *why, char *err,
                   size_t errlen) {
  if (rc == 0)
    return 0;
  char where[LD_FLAG_STRING_MAX + 64];
  int i = ld_flags_find(c->table, c->n, flag);
  if (i < 0)
    snprintf(where, sizeof where, "--%s", flag);
  else
    ld_flags_origin(c->table, (size_t)i, &c->res, LD_APP_ENV_PREFIX, c->flags.config_file, where,
                    sizeof where);
  snprintf(err, errlen, "%s: %s", where, why);
  return rc;
}

static int set_logging(const collected_t *c, ld_app_node_options_t *opts, char *err,
                       size_t errlen) {
  char why[LD_FLAG_STRING_MAX + 64];
  const node_flags_t *f = &c->flags;
  if (ld_log_parse_level(f->log_level, &opts->log_level) != 0) {
    snprintf(why, sizeof why, "unknown level '%s'", f->log_level);
    return refused(c, "log-level", LD_ERR_INVALID_ARG, why, err, errlen);
  }
  if (ld_log_parse_format(f->log_format, &opts->log_format) != 0) {
    snprintf(why, sizeof why, "expected TEXT or JSON, got '%s'", f->log_format);
    return refused(c, "log-format", LD_ERR_INVALID_ARG, why, err, errlen);
  }
  return 0;
}

typedef int (*add_fn)(ld_node_config_t *, const char *, char *, size_t);

/* Runs `add` on every item of a list flag. */
static int add_each(const collected_t *c, ld_node_config_t *cfg, const char *flag,
                    const ld_strlist_t *l, add_fn add, char *err, size_t errlen) {
  char why[300];
  for (size_t i = 0; i < l->count; i++) {
    int rc = add(cfg, l->items[i], why, sizeof why);
    if (rc != 0)
      return refused(c, flag, rc, why, err, errlen);
  }
  return 0;
}

static int build_lists(const collected_t *c, ld_node_config_t *cfg, char *err, size_t errlen) {
  const node_flags_t *f = &c->flags;
  int rc = add_each(c, cfg, "shard", &f->shards, ld_node_config_add_shard, err, errlen);
  if (rc == 0)
    rc = add_each(c, cfg, "content-topic", &f->content_topics, ld_node_config_add_content_topic,
                  err, errlen);
  if (rc == 0)
    rc = add_each(c, cfg, "staticnode", &f->static_nodes, ld_node_config_add_static_node, err,
                  errlen);
  if (rc == 0)
    rc = add_each(c, cfg, "protected-shard", &f->protected_shards,
                  ld_node_config_add_protected_shard, err, errlen);
  if (rc == 0)
    rc = add_each(c, cfg, "rest-allow-origin", &f->rest_origins, ld_node_config_add_rest_origin,
                  err, errlen);
  return rc;
}

static int build_scalars(const collected_t *c, ld_node_config_t *cfg, char *err, size_t errlen) {
  const node_flags_t *f = &c->flags;
  char why[300];
  int rc = 0;
  if (f->nodekey[0] != '\0')
    rc = refused(c, "nodekey", ld_node_config_set_nodekey_hex(cfg, f->nodekey, why, sizeof why),
                 why, err, errlen);
  if (rc == 0)
    rc = refused(c, "listen-address",
                 ld_node_config_set_listen(cfg, f->listen_address, f->tcp_port, f->ports_shift, why,
                                           sizeof why),
                 why, err, errlen);
  if (rc == 0)
    rc = refused(c, "rest-address",
                 ld_node_config_set_rest(cfg, f->rest, f->rest_address, f->rest_port,
                                         f->ports_shift, why, sizeof why),
                 why, err, errlen);
  if (rc == 0)
    rc = refused(c, "metrics-server-address",
                 ld_node_config_set_metrics(cfg, f->metrics, f->metrics_address, f->metrics_port,
                                            f->ports_shift, why, sizeof why),
                 why, err, errlen);
  if (rc == 0)
    rc = refused(c, "max-msg-size",
                 ld_node_config_set_max_msg_size(cfg, f->max_msg_size, why, sizeof why), why, err,
                 errlen);
  return rc;
}

/* Integer flags whose range the flag table already checked. */
static int build_numbers(const collected_t *c, ld_node_config_t *cfg, char *err, size_t errlen) {
  const node_flags_t *f = &c->flags;
  char why[300];
  int rc = refused(c, "max-connections",
                   ld_node_config_set_max_connections(cfg, f->max_connections, why, sizeof why),
                   why, err, errlen);
  if (rc == 0)
    rc = refused(c, "ip-colocation-limit",
                 ld_node_config_set_colocation_limit(cfg, f->colocation_limit, why, sizeof why),
                 why, err, errlen);
  if (rc == 0)
    rc =
        refused(c, "cluster-id", ld_node_config_set_cluster_id(cfg, f->cluster_id, why, sizeof why),
                why, err, errlen);
  if (rc == 0)
    rc = refused(c, "rest-relay-cache-capacity",
                 ld_node_config_set_rest_cache(cfg, f->rest_cache, why, sizeof why), why, err,
                 errlen);
  if (rc == 0)
    rc = refused(c, "num-shards-in-network",
                 ld_node_config_set_num_shards(cfg, f->num_shards, why, sizeof why), why, err,
                 errlen);
  return rc;
}

static int build_services(const collected_t *c, ld_node_config_t *cfg, char *err, size_t errlen) {
  static const char *flags[LD_NODE_SERVICES] = {"storenode", "filternode", "lightpushnode"};
  const node_flags_t *f = &c->flags;
  char why[300];
  cfg->lightpush = f->lightpush;
  cfg->filter = f->filter;
  cfg->store = f->store;
  cfg->peer_exchange = f->peer_exchange;
  cfg->filter_subscription_timeout_s = (uint32_t)f->filter_timeout;
  cfg->filter_max_peers = (uint32_t)f->filter_max_peers;
  cfg->filter_max_criteria = (uint32_t)f->filter_max_criteria;
  cfg->store_max_db_connections = (uint32_t)f->store_db_connections;
  int rc = refused(c, "websocket-port",
                   ld_node_config_set_websocket(cfg, f->ws, f->ws_port, f->ports_shift, f->wss,
                                                f->ws_key, f->ws_cert, why, sizeof why),
                   why, err, errlen);
  if (rc == 0)
    rc = refused(c, "store-message-db-url",
                 ld_node_config_set_store_db_url(cfg, f->store_db_url, why, sizeof why), why, err,
                 errlen);
  if (rc == 0)
    rc = refused(c, "store-message-retention-policy",
                 ld_node_config_set_store_retention(cfg, f->store_retention, why, sizeof why), why,
                 err, errlen);
  for (int i = 0; rc == 0 && i < LD_NODE_SERVICES; i++)
    if (f->service_node[i][0] != '\0')
      rc = refused(c, flags[i],
                   ld_node_config_set_service_node(cfg, (ld_node_service_t)i, f->service_node[i],
                                                   why, sizeof why),
                   why, err, errlen);
  return rc;
}

static int build_config(const collected_t *c, ld_node_config_t *cfg, char *err, size_t errlen) {
  ld_node_config_default(cfg);
  cfg->relay = c->flags.relay;
  cfg->rest_admin = c->flags.rest_admin;
  int rc = build_scalars(c, cfg, err, errlen);
  if (rc == 0)
    rc = build_services(c, cfg, err, errlen);
  if (rc == 0)
    rc = build_numbers(c, cfg, err, errlen);
  if (rc == 0)
    rc = build_lists(c, cfg, err, errlen);
  if (rc == 0)
    rc = ld_node_config_finalize(cfg, err, errlen);
  return rc;
}

int ld_app_node_options_parse(int argc, char **argv, ld_app_node_options_t *opts, char *err,
                              size_t errlen) {
  collected_t *c = malloc(sizeof *c);
  if (c == NULL)
    return LD_ERR_NOMEM;
  node_flags_default(&c->flags);
  memset(opts, 0, sizeof *opts);
  int rc = collect_flags(argc, argv, c, err, errlen);
  opts->help = c->flags.help;
  if (rc == 0 && !c->flags.help)
    rc = set_logging(c, opts, err, errlen);
  if (rc == 0 && !c->flags.help)
    rc = build_config(c, &opts->config, err, errlen);
  node_flags_clear(&c->flags);
  free(c);
  return rc;
}

void ld_app_node_options_help(FILE *out) {
  collected_t *c = malloc(sizeof *c);
  if (c == NULL)
    return;
  node_flags_default(&c->flags);
  c->n = node_flag_table(&c->flags, c->table);
  ld_flags_print_help(c->table, c->n, out);
  free(c);
}
