#include "node/config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "base/hex.h"
#include "crypto/crypto.h"
#include "waku/core/sharding.h"
#include "waku/core/topics.h"

static void set_http(ld_node_http_config_t *h, const char *address, uint16_t port) {
  h->enabled = false;
  snprintf(h->address, sizeof h->address, "%s", address);
  h->port = port;
}

void ld_node_config_default(ld_node_config_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  strcpy(cfg->listen_address, "0.0.0.0");
  cfg->tcp_port = LD_NODE_DEFAULT_TCP_PORT;
  cfg->max_connections = LD_NODE_DEFAULT_MAX_CONNECTIONS;
  cfg->dial_timeout_ms = 10000;
  cfg->colocation_limit = LD_NODE_DEFAULT_COLOCATION_LIMIT;
  cfg->relay = true;
  cfg->max_msg_size = LD_NODE_DEFAULT_MAX_MSG_SIZE;
  set_http(&cfg->rest, LD_NODE_DEFAULT_REST_ADDRESS, LD_NODE_DEFAULT_REST_PORT);
  set_http(&cfg->metrics, LD_NODE_DEFAULT_METRICS_ADDRESS, LD_NODE_DEFAULT_METRICS_PORT);
  cfg->reconnect_min_ms = 1000;
  cfg->reconnect_max_ms = 60000;
  cfg->listen = true;
  cfg->rest_relay_cache_capacity = LD_NODE_DEFAULT_REST_CACHE;
  cfg->ws.port = LD_NODE_DEFAULT_WS_PORT;
  cfg->filter_subscription_timeout_s = LD_NODE_DEFAULT_FILTER_TIMEOUT_S;
  cfg->filter_max_peers = LD_NODE_DEFAULT_FILTER_MAX_PEERS;
  cfg->filter_max_criteria = LD_NODE_DEFAULT_FILTER_MAX_CRITERIA;
  strcpy(cfg->store_db_url, LD_NODE_DEFAULT_STORE_DB_URL);
  strcpy(cfg->store_retention, LD_NODE_DEFAULT_RETENTION);
  cfg->store_max_db_connections = LD_NODE_DEFAULT_DB_CONNECTIONS;
  cfg->store_sync_interval_s = LD_NODE_DEFAULT_STORE_SYNC_INTERVAL_S;
  cfg->reliability_confirm_peers = LD_NODE_DEFAULT_RELIABILITY_CONFIRM_PEERS;
  cfg->reliability_window_ms = LD_NODE_DEFAULT_RELIABILITY_WINDOW_MS;
  cfg->store_sync_range_s = LD_NODE_DEFAULT_STORE_SYNC_RANGE_S;
  cfg->store_sync_relay_jitter_s = LD_NODE_DEFAULT_STORE_SYNC_JITTER_S;
  ld_node_config_discovery_default(cfg);
  cfg->store_key_value = cfg->store_key_presence = cfg->store_wayback = true;
}

int ld_node_config_set_nodekey_hex(ld_node_config_t *cfg, const char *hex, char *err,
                                   size_t errlen) {
  uint8_t secret[32];
  size_t n = 0;
  int rc = ld_hex_decode(hex, strlen(hex), secret, sizeof secret, &n);
  if (rc != 0 || n != sizeof secret)
    return ld_error_fmt(err, errlen, rc != 0 && rc != LD_ERR_LIMIT ? rc : LD_ERR_BAD_ENCODING,
                        "nodekey must be 64 hex characters (a secp256k1 private key)");
  rc = ld_privkey_from_secp256k1(&cfg->nodekey, secret);
  memset(secret, 0, sizeof secret);
  if (rc != 0)
    return ld_error_fmt(err, errlen, rc, "nodekey is not a valid secp256k1 private key");
  cfg->has_nodekey = true;
  return 0;
}

static bool is_ip_literal(const char *address) {
  uint8_t tmp[16];
  return inet_pton(AF_INET, address, tmp) == 1 || inet_pton(AF_INET6, address, tmp) == 1;
}

static int check_address(const char *what, const char *address, char *err, size_t errlen) {
  if (strlen(address) >= LD_NODE_ADDRESS_MAX || !is_ip_literal(address))
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "%s '%s' is not an IPv4 or IPv6 address",
                        what, address);
  return 0;
}

static int check_port(const char *what, int64_t port, int64_t shift, char *err, size_t errlen) {
  if (port < 0 || shift < 0 || port > 65535 || port + shift > 65535)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "%s %lld plus ports shift %lld is not a valid port", what, (long long)port,
                        (long long)shift);
  return 0;
}

int ld_node_config_set_listen(ld_node_config_t *cfg, const char *address, int64_t port,
                              int64_t shift, char *err, size_t errlen) {
  int rc = check_address("listen address", address, err, errlen);
  if (rc == 0)
    rc = check_port("TCP port", port, shift, err, errlen);
  if (rc != 0)
    return rc;
  strcpy(cfg->listen_address, address);
  cfg->tcp_port = (uint16_t)(port + shift);
  return 0;
}

static int set_http_server(ld_node_http_config_t *h, const char *what, bool enabled,
                           const char *address, int64_t port, int64_t shift, char *err,
                           size_t errlen) {
  char label[64];
  snprintf(label, sizeof label, "%s address", what);
  int rc = check_address(label, address, err, errlen);
  snprintf(label, sizeof label, "%s port", what);
  if (rc == 0)
    rc = check_port(label, port, shift, err, errlen);
  if (rc != 0)
    return rc;
  h->enabled = enabled;
  strcpy(h->address, address);
  h->port = (uint16_t)(port + shift);
  return 0;
}

int ld_node_config_set_rest(ld_node_config_t *cfg, bool enabled, const char *address, int64_t port,
                            int64_t shift, char *err, size_t errlen) {
  return set_http_server(&cfg->rest, "REST", enabled, address, port, shift, err, errlen);
}

int ld_node_config_set_metrics(ld_node_config_t *cfg, bool enabled, const char *address,
                               int64_t port, int64_t shift, char *err, size_t errlen) {
  return set_http_server(&cfg->metrics, "metrics server", enabled, address, port, shift, err,
                         errlen);
}

static int check_range(const char *what, int64_t v, int64_t min, int64_t max, char *err,
                       size_t errlen) {
  if (v < min || v > max)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "%s %lld is out of range (%lld..%lld)",
                        what, (long long)v, (long long)min, (long long)max);
  return 0;
}

int ld_node_config_set_max_connections(ld_node_config_t *cfg, int64_t n, char *err, size_t errlen) {
  int rc = check_range("max-connections", n, 1, LD_NODE_MAX_CONNECTIONS_LIMIT, err, errlen);
  if (rc == 0)
    cfg->max_connections = (size_t)n;
  return rc;
}

int ld_node_config_set_rest_cache(ld_node_config_t *cfg, int64_t n, char *err, size_t errlen) {
  int rc = check_range("rest-relay-cache-capacity", n, 1, LD_NODE_MAX_REST_CACHE, err, errlen);
  if (rc == 0)
    cfg->rest_relay_cache_capacity = (size_t)n;
  return rc;
}

int ld_node_config_add_rest_origin(ld_node_config_t *cfg, const char *pattern, char *err,
                                   size_t errlen) {
  size_t len = strlen(pattern);
  if (len == 0 || len >= LD_NODE_REST_ORIGIN_MAX || strpbrk(pattern, " \t\r\n") != NULL)
    return ld_error_fmt(
        err, errlen, LD_ERR_INVALID_ARG,
        "rest-allow-origin '%s' must be a non-empty pattern without blanks, shorter than "
        "%d bytes",
        pattern, LD_NODE_REST_ORIGIN_MAX);
  for (size_t i = 0; i < cfg->n_rest_allow_origins; i++)
    if (strcmp(cfg->rest_allow_origins[i], pattern) == 0)
      return 0;
  if (cfg->n_rest_allow_origins >= LD_NODE_MAX_REST_ORIGINS)
    return ld_error_fmt(err, errlen, LD_ERR_LIMIT, "more than %d REST allowed origins",
                        LD_NODE_MAX_REST_ORIGINS);
  memcpy(cfg->rest_allow_origins[cfg->n_rest_allow_origins++], pattern, len + 1);
  return 0;
}

int ld_node_config_set_cluster_id(ld_node_config_t *cfg, int64_t id, char *err, size_t errlen) {
  int rc = check_range("cluster-id", id, 0, UINT16_MAX, err, errlen);
  if (rc == 0)
    cfg->cluster_id = (uint16_t)id;
  return rc;
}

int ld_node_config_set_num_shards(ld_node_config_t *cfg, int64_t n, char *err, size_t errlen) {
  int rc = check_range("num-shards-in-network", n, 0, LD_NODE_MAX_SHARDS_IN_NETWORK, err, errlen);
  if (rc == 0)
    cfg->num_shards_in_network = (uint16_t)n;
  return rc;
}

int ld_node_config_set_colocation_limit(ld_node_config_t *cfg, int64_t n, char *err,
                                        size_t errlen) {
  int rc = check_range("ip-colocation-limit", n, 0, LD_NODE_MAX_CONNECTIONS_LIMIT, err, errlen);
  if (rc == 0)
    cfg->colocation_limit = (size_t)n;
  return rc;
}

/* Decimal digits only, no sign, no blanks; false when empty, not a number or above `max`. */
static bool parse_decimal(const char *text, size_t len, uint64_t max, uint64_t *out) {
  uint64_t v = 0;
  if (len == 0 || len > 20)
    return false;
  for (size_t i = 0; i < len; i++) {
    if (text[i] < '0' || text[i] > '9')
      return false;
    v = v * 10 + (uint64_t)(text[i] - '0');
    if (v > max)
      return false;
  }
  *out = v;
  return true;
}

static int parse_shard(const char *text, size_t len, uint16_t *shard, char *err, size_t errlen) {
  uint64_t v;
  if (!parse_decimal(text, len, LD_NODE_MAX_SHARD, &v))
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "shard '%.*s' is not an integer in 0..%d",
                        (int)len, text, LD_NODE_MAX_SHARD);
  *shard = (uint16_t)v;
  return 0;
}

int ld_node_config_add_shard(ld_node_config_t *cfg, const char *text, char *err, size_t errlen) {
  uint16_t shard = 0;
  int rc = parse_shard(text, strlen(text), &shard, err, errlen);
  if (rc != 0 || ld_node_config_has_shard(cfg, shard))
    return rc;
  if (cfg->n_shards >= LD_NODE_MAX_SHARDS)
    return ld_error_fmt(err, errlen, LD_ERR_LIMIT, "more than %d shards", LD_NODE_MAX_SHARDS);
  cfg->shards[cfg->n_shards++] = shard;
  return 0;
}

static int check_content_topic(const char *topic, char *err, size_t errlen) {
  ld_content_topic_t ct;
  ld_topic_error_t why = LD_TOPIC_OK;
  if (ld_content_topic_parse(topic, strlen(topic), &ct, &why) != 0)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "content topic '%s' is invalid: %s", topic,
                        ld_topic_strerror(why));
  return 0;
}

int ld_node_config_add_content_topic(ld_node_config_t *cfg, const char *text, char *err,
                                     size_t errlen) {
  if (strlen(text) >= LD_NODE_CONTENT_TOPIC_MAX)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "content topic longer than %d bytes",
                        LD_NODE_CONTENT_TOPIC_MAX - 1);
  int rc = check_content_topic(text, err, errlen);
  if (rc != 0)
    return rc;
  for (size_t i = 0; i < cfg->n_content_topics; i++)
    if (strcmp(cfg->content_topics[i], text) == 0)
      return 0;
  if (cfg->n_content_topics >= LD_NODE_MAX_CONTENT_TOPICS)
    return ld_error_fmt(err, errlen, LD_ERR_LIMIT, "more than %d content topics",
                        LD_NODE_MAX_CONTENT_TOPICS);
  strcpy(cfg->content_topics[cfg->n_content_topics++], text);
  return 0;
}

static bool has_transport(const ld_multiaddr_t *ma) {
  size_t off = 0;
  ld_multiaddr_component_t c;
  bool host = false;
  while (ld_multiaddr_next(ma, &off, &c) == 1) {
    if (c.code == LD_MA_IP4 || c.code == LD_MA_IP6 || c.code == LD_MA_DNS || c.code == LD_MA_DNS4 ||
        c.code == LD_MA_DNS6)
      host = true;
    if (c.code == LD_MA_TCP && host)
      return true;
  }
  return false;
}

int ld_node_config_add_static_node(ld_node_config_t *cfg, const char *text, char *err,
                                   size_t errlen) {
  ld_multiaddr_t ma, transport;
  if (ld_multiaddr_parse(&ma, text) != 0)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "staticnode '%s' is not a valid multiaddr",
                        text);
  transport = ma;
  if (!ld_multiaddr_peerid(&transport, NULL, true))
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "staticnode '%s' must end with /p2p/<peer id>", text);
  if (!has_transport(&transport))
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "staticnode '%s' has no /ip4, /ip6 or /dns address with /tcp", text);
  for (size_t i = 0; i < cfg->n_static_nodes; i++)
    if (ld_multiaddr_equal(&cfg->static_nodes[i], &ma))
      return 0;
  if (cfg->n_static_nodes >= LD_NODE_MAX_STATIC_NODES)
    return ld_error_fmt(err, errlen, LD_ERR_LIMIT, "more than %d static nodes",
                        LD_NODE_MAX_STATIC_NODES);
  cfg->static_nodes[cfg->n_static_nodes++] = ma;
  return 0;
}

/* ---- sizes -------------------------------------------------------------------------------- */

static const char *skip_blanks(const char *p) {
  while (*p == ' ' || *p == '\t')
    p++;
  return p;
}

/* Reads "123", "1.5" or "1,5" as a multiple of 10^-9 (exact for 9 fractional digits). */
static bool parse_decimal_fraction(const char **pp, uint64_t *whole, uint64_t *nano) {
  const char *p = *pp;
  size_t n = strspn(p, "0123456789");
  if (n == 0 || !parse_decimal(p, n, UINT32_MAX, whole))
    return false;
  p += n;
  *nano = 0;
  if (*p == '.' || *p == ',') {
    p++;
    uint64_t scale = 100000000;
    for (; *p >= '0' && *p <= '9'; p++, scale /= 10)
      *nano += (uint64_t)(*p - '0') * scale;
  }
  *pp = p;
  return true;
}

static uint64_t unit_multiplier(const char *unit, size_t len) {
  static const struct {
    const char *name;
    uint64_t mult;
  } units[] = {{"b", 1}, {"kb", 1000}, {"kib", 1024}, {"mb", 1000000}, {"mib", 1048576}};
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    if (strlen(units[i].name) == len && strncasecmp(unit, units[i].name, len) == 0)
      return units[i].mult;
  return 0;
}

int ld_node_parse_size(const char *text, uint64_t *bytes, char *err, size_t errlen) {
  const char *p = skip_blanks(text);
  uint64_t whole, nano;
  if (!parse_decimal_fraction(&p, &whole, &nano))
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "size '%s' must be a number followed by B, KB, KiB, MB or MiB", text);
  p = skip_blanks(p);
  size_t unit_len = strcspn(p, " \t");
  uint64_t mult = unit_multiplier(p, unit_len);
  if (mult == 0 || *skip_blanks(p + unit_len) != '\0')
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "size '%s' needs a unit: B, KB, KiB, MB or MiB (e.g. 150KiB)", text);
  *bytes = whole * mult + nano * mult / 1000000000u;
  return 0;
}

int ld_node_config_set_max_msg_size(ld_node_config_t *cfg, const char *text, char *err,
                                    size_t errlen) {
  uint64_t bytes;
  int rc = ld_node_parse_size(text, &bytes, err, errlen);
  if (rc != 0)
    return rc;
  if (bytes == 0 || bytes > LD_NODE_MAX_MSG_SIZE_LIMIT)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "max-msg-size '%s' is %llu bytes; it must be between 1 and %u", text,
                        (unsigned long long)bytes, (unsigned)LD_NODE_MAX_MSG_SIZE_LIMIT);
  cfg->max_msg_size = (size_t)bytes;
  return 0;
}

/* ---- protected shards ----------------------------------------------------------------------- */

/* "/waku/2/rs/<cluster>/<shard>" → cluster and shard. */
static bool parse_static_pubsub_topic(const char *text, size_t len, uint16_t *cluster,
                                      uint16_t *shard) {
  static const char prefix[] = "/waku/2/rs/";
  size_t plen = sizeof prefix - 1;
  if (len <= plen || memcmp(text, prefix, plen) != 0)
    return false;
  const char *rest = text + plen;
  const char *slash = memchr(rest, '/', len - plen);
  uint64_t c, s;
  if (slash == NULL || !parse_decimal(rest, (size_t)(slash - rest), UINT16_MAX, &c) ||
      !parse_decimal(slash + 1, (size_t)(text + len - slash - 1), LD_NODE_MAX_SHARD, &s))
    return false;
  *cluster = (uint16_t)c;
  *shard = (uint16_t)s;
  return true;
}

static int parse_protected_target(const char *text, size_t len, ld_node_protected_shard_t *ps,
                                  char *err, size_t errlen) {
  ps->topic_cluster = -1;
  if (text[0] != '/')
    return parse_shard(text, len, &ps->shard, err, errlen);
  uint16_t cluster;
  if (!parse_static_pubsub_topic(text, len, &cluster, &ps->shard))
    return ld_error_fmt(
        err, errlen, LD_ERR_INVALID_ARG,
        "protected-shard '%.*s': pubsub topics must be /waku/2/rs/<cluster-id>/<shard-id>",
        (int)len, text);
  ps->topic_cluster = cluster;
  return 0;
}

static int parse_protected_key(const char *hex, ld_node_protected_shard_t *ps, char *err,
                               size_t errlen) {
  uint8_t raw[65];
  size_t n = 0;
  if (ld_hex_decode(hex, strlen(hex), raw, sizeof raw, &n) != 0 || (n != 33 && n != 65))
    return ld_error_fmt(err, errlen, LD_ERR_BAD_KEY,
                        "protected-shard public key '%s' must be 66 or 130 hex characters "
                        "(a compressed or uncompressed secp256k1 key)",
                        hex);
  if (ld_secp256k1_compress(raw, n, ps->public_key) != 0)
    return ld_error_fmt(err, errlen, LD_ERR_BAD_KEY,
                        "protected-shard public key '%s' is not a valid secp256k1 key", hex);
  return 0;
}

int ld_node_config_add_protected_shard(ld_node_config_t *cfg, const char *text, char *err,
                                       size_t errlen) {
  const char *colon = strchr(text, ':');
  if (colon == NULL || colon == text || strchr(colon + 1, ':') != NULL)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "protected-shard '%s' must be <shard>:<public key hex>", text);
  ld_node_protected_shard_t ps;
  int rc = parse_protected_target(text, (size_t)(colon - text), &ps, err, errlen);
  if (rc == 0)
    rc = parse_protected_key(colon + 1, &ps, err, errlen);
  if (rc != 0)
    return rc;
  for (size_t i = 0; i < cfg->n_protected_shards; i++)
    if (cfg->protected_shards[i].shard == ps.shard) {
      cfg->protected_shards[i] = ps;
      return 0;
    }
  if (cfg->n_protected_shards >= LD_NODE_MAX_PROTECTED_SHARDS)
    return ld_error_fmt(err, errlen, LD_ERR_LIMIT, "more than %d protected shards",
                        LD_NODE_MAX_PROTECTED_SHARDS);
  cfg->protected_shards[cfg->n_protected_shards++] = ps;
  return 0;
}

/* ---- cross-option checks -----------------------------------------------------------------------
 */

/* ---- services -------------------------------------------------------------------------------- */

static int copy_path(char *dst, const char *src, const char *what, char *err, size_t errlen) {
  if (src == NULL)
    return 0;
  if (strlen(src) >= LD_NODE_PATH_MAX)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "%s is longer than %d bytes", what,
                        LD_NODE_PATH_MAX - 1);
  strcpy(dst, src);
  return 0;
}

int ld_node_config_set_websocket(ld_node_config_t *cfg, bool enabled, int64_t port, int64_t shift,
                                 bool secure, const char *key_path, const char *cert_path,
                                 char *err, size_t errlen) {
  ld_node_ws_config_t ws = cfg->ws;
  int rc = check_port("websocket-port", port, shift, err, errlen);
  rc = rc ? rc : copy_path(ws.key_path, key_path, "websocket-secure-key-path", err, errlen);
  rc = rc ? rc : copy_path(ws.cert_path, cert_path, "websocket-secure-cert-path", err, errlen);
  if (rc != 0)
    return rc;
  ws.enabled = enabled || secure;
  ws.secure = secure;
  ws.port = (uint16_t)(port + shift);
  cfg->ws = ws;
  return 0;
}

static bool has_prefix(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

int ld_node_config_set_store_db_url(ld_node_config_t *cfg, const char *url, char *err,
                                    size_t errlen) {
  if (strlen(url) >= LD_NODE_URL_MAX)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "store-message-db-url is longer than %d bytes", LD_NODE_URL_MAX - 1);
  bool sqlite = has_prefix(url, "sqlite://") && url[strlen("sqlite://")] != '\0';
  bool pg = has_prefix(url, "postgres://") || has_prefix(url, "postgresql://");
  if (!sqlite && !pg && strcmp(url, "memory://") != 0)
    return ld_error_fmt(
        err, errlen, LD_ERR_INVALID_ARG,
        "store-message-db-url '%s': expected sqlite://<path>, postgres://… or memory://", url);
  strcpy(cfg->store_db_url, url);
  return 0;
}

int ld_node_config_set_store_retention(ld_node_config_t *cfg, const char *policy, char *err,
                                       size_t errlen) {
  if (policy[0] == '\0' || strlen(policy) >= LD_NODE_POLICY_MAX)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "store-message-retention-policy must have 1 to %d characters",
                        LD_NODE_POLICY_MAX - 1);
  strcpy(cfg->store_retention, policy);
  return 0;
}

static const char *service_flag(ld_node_service_t which) {
  static const char *names[] = {"storenode", "filternode", "lightpushnode"};
  return names[which];
}

int ld_node_config_set_service_node(ld_node_config_t *cfg, ld_node_service_t which,
                                    const char *text, char *err, size_t errlen) {
  if ((unsigned)which >= LD_NODE_SERVICES)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "unknown service");
  ld_multiaddr_t ma, transport;
  const char *flag = service_flag(which);
  if (ld_multiaddr_parse(&ma, text) != 0)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "%s '%s' is not a valid multiaddr", flag,
                        text);
  transport = ma;
  if (!ld_multiaddr_peerid(&transport, NULL, true) || !has_transport(&transport))
    return ld_error_fmt(
        err, errlen, LD_ERR_INVALID_ARG,
        "%s '%s' must be a /ip4, /ip6 or /dns address with /tcp and end with /p2p/<id>", flag,
        text);
  cfg->service_node[which] = ma;
  cfg->has_service_node[which] = true;
  return 0;
}

/* Lightpush without relay is allowed: nwaku v0.36 mounts it with a push handler that answers
 * every push "no waku relay found" (waku_node.nim mountLightPush, getNilPushHandler). */
static int check_services(const ld_node_config_t *cfg, char *err, size_t errlen) {
  if (cfg->ws.secure && (cfg->ws.key_path[0] == '\0' || cfg->ws.cert_path[0] == '\0'))
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "websocket-secure-support needs websocket-secure-key-path and "
                        "websocket-secure-cert-path");
  if (cfg->filter_subscription_timeout_s == 0 || cfg->filter_max_peers == 0 ||
      cfg->filter_max_criteria == 0)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "filter limits must be positive");
  return 0;
}

static void default_shards(ld_node_config_t *cfg) {
  size_t n =
      cfg->num_shards_in_network > 0 ? cfg->num_shards_in_network : LD_NODE_DEFAULT_STATIC_SHARDS;
  for (size_t i = 0; i < n && cfg->n_shards < LD_NODE_MAX_SHARDS; i++)
    cfg->shards[cfg->n_shards++] = (uint16_t)i;
}

static int check_autosharding(const ld_node_config_t *cfg, char *err, size_t errlen) {
  unsigned n = cfg->num_shards_in_network;
  for (size_t i = 0; i < cfg->n_shards; i++)
    if (cfg->shards[i] >= n)
      return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                          "shard %u is not below num-shards-in-network %u", cfg->shards[i], n);
  for (size_t i = 0; i < cfg->n_protected_shards; i++)
    if (cfg->protected_shards[i].shard >= n)
      return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                          "protected shard %u is not below num-shards-in-network %u",
                          cfg->protected_shards[i].shard, n);
  for (size_t i = 0; i < cfg->n_content_topics; i++) {
    const char *t = cfg->content_topics[i];
    ld_relay_shard_t shard;
    ld_topic_error_t why = LD_TOPIC_OK;
    if (ld_autoshard(t, strlen(t), n, cfg->cluster_id, &shard, &why) != 0)
      return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "content topic '%s': %s", t,
                          ld_topic_strerror(why));
  }
  return 0;
}

static int check_protected_clusters(const ld_node_config_t *cfg, char *err, size_t errlen) {
  for (size_t i = 0; i < cfg->n_protected_shards; i++) {
    const ld_node_protected_shard_t *ps = &cfg->protected_shards[i];
    if (ps->topic_cluster >= 0 && ps->topic_cluster != cfg->cluster_id)
      return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                          "protected shard /waku/2/rs/%d/%u is not in cluster %u",
                          (int)ps->topic_cluster, ps->shard, cfg->cluster_id);
  }
  return 0;
}

int ld_node_config_finalize(ld_node_config_t *cfg, char *err, size_t errlen) {
  if (cfg->n_shards == 0)
    default_shards(cfg);
  int rc = check_protected_clusters(cfg, err, errlen);
  if (rc == 0 && cfg->num_shards_in_network > 0)
    rc = check_autosharding(cfg, err, errlen);
  if (rc == 0 && cfg->reconnect_min_ms > cfg->reconnect_max_ms)
    rc = ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "reconnect delays: minimum above maximum");
  if (rc == 0)
    rc = check_services(cfg, err, errlen);
  return rc;
}

bool ld_node_config_has_shard(const ld_node_config_t *cfg, uint16_t shard) {
  for (size_t i = 0; i < cfg->n_shards; i++)
    if (cfg->shards[i] == shard)
      return true;
  return false;
}

const ld_node_protected_shard_t *ld_node_config_protected_shard(const ld_node_config_t *cfg,
                                                                uint16_t shard) {
  for (size_t i = 0; i < cfg->n_protected_shards; i++)
    if (cfg->protected_shards[i].shard == shard)
      return &cfg->protected_shards[i];
  return NULL;
}

int ld_node_config_add_inert(ld_node_config_t *cfg, const char *name) {
  for (size_t i = 0; i < cfg->n_inert; i++)
    if (strcmp(cfg->inert[i], name) == 0)
      return 0;
  if (cfg->n_inert >= LD_NODE_MAX_INERT)
    return LD_ERR_LIMIT;
  cfg->inert[cfg->n_inert++] = name;
  return 0;
}

size_t ld_node_config_inert_text(const ld_node_config_t *cfg, char *out, size_t cap) {
  size_t used = 0;
  if (cap > 0)
    out[0] = '\0';
  for (size_t i = 0; i < cfg->n_inert && used < cap; i++) {
    int n = snprintf(out + used, cap - used, "%s%s", i > 0 ? ", " : "", cfg->inert[i]);
    if (n < 0)
      break;
    used += (size_t)n;
  }
  return cfg->n_inert;
}
