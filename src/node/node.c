#include "node/node.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "node/events.h"
#include "node/node_internal.h"
#include "node/peer_manager.h"
#include "p2p/transport_ws.h"
#include "p2p/ping.h"
#include "waku/core/topics.h"

#define TOPIC "node"

/* ---- creation ------------------------------------------------------------------------------ */

static int derive_identity(ld_node_t *node) {
  int rc = node->cfg.has_nodekey ? 0 : ld_privkey_generate(&node->key, LD_KEY_SECP256K1);
  if (node->cfg.has_nodekey)
    node->key = node->cfg.nodekey;
  if (rc != 0)
    return rc;
  ld_pubkey_t pub;
  ld_privkey_public(&node->key, &pub);
  return ld_peerid_from_pubkey(&node->peer_id, &pub);
}

static int create_switch(ld_node_t *node) {
  ld_switch_config_t sc;
  ld_switch_config_default(&sc);
  sc.loop = node->loop;
  sc.identity = &node->key;
  sc.max_connections = node->cfg.max_connections;
  sc.dial_timeout_ms = node->cfg.dial_timeout_ms;
  node->sw = ld_switch_new(&sc);
  return node->sw != NULL ? 0 : LD_ERR_NOMEM;
}

/* WebSocket for dialing /ws and /wss peers always; for listening with --websocket-support. */
static int add_websocket(ld_node_t *node) {
  ld_ws_config_t wc;
  ld_ws_config_default(&wc);
  if (node->cfg.ws.secure) {
    wc.tls_cert_path = node->cfg.ws.cert_path;
    wc.tls_key_path = node->cfg.ws.key_path;
  }
  int err = 0;
  ld_transport_t *ws = ld_transport_ws_new(node->loop, &wc, &err);
  if (ws == NULL) {
    LD_ERROR(TOPIC, "WebSocket transport: %s (%s)", ld_strerror(err), ld_errname(err));
    char paths[2 * LD_NODE_PATH_MAX + 8];
    snprintf(paths, sizeof paths, "%s, %s", node->cfg.ws.key_path, node->cfg.ws.cert_path);
    ld_node_note_failure(node, "websocket-tls", err != 0 ? err : LD_ERR_NOMEM, paths);
    return err != 0 ? err : LD_ERR_NOMEM;
  }
  err = ld_switch_add_transport(node->sw, ws);
  if (err != 0)
    ws->ops->destroy(ws);
  return err;
}

static void broker_stage(const ld_fanout_message_t *m, void *user_data) {
  ld_node_t *node = user_data;
  ld_broker_publish(node->broker, LD_EVENT_MESSAGE, m);
}

static void free_parts(ld_node_t *node) {
  ld_node_services_free(node);
  ld_node_discv5_free(node);
  ld_relay_free(node->relay);
  ld_node_rln_publish_free(node);
  ld_node_rln_free(node);
  ld_gs_service_free(node->gs);
  ld_metadata_free(node->metadata);
  ld_identify_free(node->identify);
  ld_static_peers_free(node->statics);
  ld_peerstore_free(node->peerstore);
  ld_fanout_free(node->fanout);
  ld_broker_free(node->broker);
  ld_hashmap_free(node->peer_conns, NULL);
  ld_node_servers_free(node);
  memset(&node->key, 0, sizeof node->key);
  memset(&node->cfg.nodekey, 0, sizeof node->cfg.nodekey);
}

static int create_parts(ld_node_t *node) {
  ld_peerstore_config_t pc;
  ld_peerstore_config_default(&pc);
  node->peerstore = ld_peerstore_new(&pc);
  node->broker = ld_broker_new();
  node->fanout = ld_fanout_new();
  node->peer_conns = ld_hashmap_new(64);
  if (node->peerstore == NULL || node->broker == NULL || node->fanout == NULL ||
      node->peer_conns == NULL)
    return LD_ERR_NOMEM;
  node->broker_stage = ld_fanout_add(node->fanout, LD_FANOUT_BROKER, broker_stage, node);
  if (node->broker_stage < 0)
    return node->broker_stage;
  int rc = derive_identity(node);
  return rc != 0 ? rc : create_switch(node);
}

static int provide_listen_addrs(const void *request, void *response, void *user_data) {
  (void)request;
  ld_request_addrs_t *r = response;
  r->total = ld_node_listen_addrs(user_data, r->out, r->max);
  return 0;
}

static int provide_topic_health(const void *request, void *response, void *user_data) {
  ld_node_t *node = user_data;
  if (node->relay == NULL)
    return LD_ERR_UNSUPPORTED;
  *(ld_relay_health_t *)response = ld_relay_topic_health(node->relay, request);
  return 0;
}

static int provide_publish(const void *request, void *response, void *user_data) {
  const ld_request_publish_t *req = request;
  ld_response_publish_t *res = response;
  int rc = ld_node_publish(user_data, req->pubsub_topic, req->msg, res->hash);
  res->peers = rc > 0 ? rc : 0;
  return rc < 0 ? rc : 0;
}

static int register_providers(ld_node_t *node) {
  int rc =
      ld_broker_set_provider(node->broker, LD_PROVIDE_LISTEN_ADDRS, provide_listen_addrs, node);
  if (rc == 0)
    rc = ld_broker_set_provider(node->broker, LD_PROVIDE_TOPIC_HEALTH, provide_topic_health, node);
  if (rc == 0)
    rc = ld_broker_set_provider(node->broker, LD_PROVIDE_RELAY_PUBLISH, provide_publish, node);
  return rc;
}

ld_node_t *ld_node_new(uv_loop_t *loop, const ld_node_config_t *cfg, int *err) {
  *err = LD_ERR_INVALID_ARG;
  if (loop == NULL || cfg == NULL)
    return NULL;
  ld_node_t *node = calloc(1, sizeof *node);
  *err = LD_ERR_NOMEM;
  if (node == NULL)
    return NULL;
  node->loop = loop;
  node->cfg = *cfg;
  *err = create_parts(node); /* the switch comes last: nothing to close when this fails */
  if (*err == 0)
    *err = register_providers(node);
  if (*err != 0) {
    if (node->sw != NULL)
      ld_switch_close(node->sw, NULL, NULL);
    free_parts(node);
    free(node);
    return NULL;
  }
  return node;
}

/* ---- connection and identify events -----------------------------------------------------------
 */

/* Counts the live connections to `peer` up or down; returns the new count. */
static size_t count_conns(ld_node_t *node, const ld_peerid_t *peer, bool up) {
  uintptr_t n = (uintptr_t)ld_hashmap_get(node->peer_conns, peer->bytes, peer->len);
  n = up ? n + 1 : n > 0 ? n - 1 : 0;
  if (n == 0)
    ld_hashmap_remove(node->peer_conns, peer->bytes, peer->len);
  else if (ld_hashmap_put(node->peer_conns, peer->bytes, peer->len, (void *)n, NULL) != 0)
    LD_WARN(TOPIC, "out of memory counting connections");
  return n;
}

static void publish_connection(ld_node_t *node, ld_conn_t *c, bool up, int reason) {
  const ld_peerid_t *peer = ld_conn_remote_peer(c);
  ld_event_connection_t ev = {
      peer, c, up, ld_conn_is_outbound(c), reason, count_conns(node, peer, up)};
  ld_broker_publish(node->broker, LD_EVENT_CONNECTION, &ev);
}

static void on_connected(ld_conn_t *c, void *user_data) {
  ld_node_t *node = user_data;
  if (node->state == NODE_STOPPING)
    return;
  ld_node_static_conn(node, ld_conn_remote_peer(c), true);
  publish_connection(node, c, true, 0);
}

static void on_disconnected(ld_conn_t *c, int reason, void *user_data) {
  ld_node_t *node = user_data;
  if (node->state == NODE_STOPPING)
    return;
  ld_node_static_conn(node, ld_conn_remote_peer(c), false);
  publish_connection(node, c, false, reason);
}

static const ld_switch_events_t g_switch_events = {on_connected, on_disconnected};

static void on_identified(ld_conn_t *c, const ld_identify_info_t *info, void *user_data) {
  ld_node_t *node = user_data;
  if (node->gs != NULL && node->state != NODE_STOPPING)
    ld_gs_service_peer_identified(node->gs, c, info);
  ld_node_px_learn(node, c, info);
  ld_node_pm_identified(node, c, info);
}

static const ld_identify_events_t g_identify_events = {on_identified, NULL};

/* ---- relay -------------------------------------------------------------------------------- */

static void on_relay_health(ld_relay_t *r, const char *topic, ld_relay_health_t health,
                            void *user_data) {
  (void)r;
  ld_node_t *node = user_data;
  ld_event_topic_health_t ev = {topic, health};
  ld_broker_publish(node->broker, LD_EVENT_TOPIC_HEALTH, &ev);
}

/* The fan-out hook: every message relay delivers (received or our own) goes through the stages. */
static void on_relay_message(ld_relay_t *r, const char *topic, const ld_waku_message_t *msg,
                             const uint8_t hash[LD_WAKU_HASH_LEN], const ld_peerid_t *from,
                             void *user_data) {
  (void)r;
  ld_node_t *node = user_data;
  if (node->state == NODE_STOPPING)
    return;
  ld_fanout_message_t m = {topic, msg, {0}, from, from == NULL, uv_now(node->loop)};
  memcpy(m.hash, hash, LD_WAKU_HASH_LEN);
  int rc = ld_fanout_dispatch(node->fanout, &m);
  if (rc < 0)
    LD_WARN(TOPIC, "fan-out refused a message on %s: %s", topic, ld_errname(rc));
}

static void on_relay_peer(ld_relay_t *r, const ld_peerid_t *peer, bool up, void *user_data) {
  (void)r;
  ld_node_t *node = user_data;
  ld_event_relay_peer_t ev = {peer, up};
  ld_broker_publish(node->broker, LD_EVENT_RELAY_PEER, &ev);
}

static const ld_relay_events_t g_relay_events = {on_relay_health, on_relay_message, on_relay_peer};

static void publish_peer_metadata(ld_node_t *node, ld_conn_t *c, const ld_metadata_info_t *info,
                                  int rejected) {
  ld_event_peer_metadata_t ev = {ld_conn_remote_peer(c), c, info, rejected};
  ld_broker_publish(node->broker, LD_EVENT_PEER_METADATA, &ev);
}

static void on_metadata_peer(ld_conn_t *c, const ld_metadata_info_t *info, void *user_data) {
  publish_peer_metadata(user_data, c, info, 0);
}

static void on_metadata_rejected(ld_conn_t *c, int reason, const ld_metadata_info_t *info,
                                 void *user_data) {
  publish_peer_metadata(user_data, c, info, reason);
}

static const ld_metadata_events_t g_metadata_events = {on_metadata_peer, on_metadata_rejected,
                                                       NULL};

static int mount_metadata(ld_node_t *node) {
  ld_metadata_config_t mc;
  ld_metadata_config_default(&mc);
  mc.cluster_id = node->cfg.cluster_id;
  mc.shards = node->cfg.shards;
  mc.n_shards = node->cfg.n_shards;
  mc.require_metadata = node->cfg.require_metadata;
  node->metadata = ld_metadata_new(node->sw, &mc);
  if (node->metadata == NULL)
    return LD_ERR_NOMEM;
  ld_metadata_set_peerstore(node->metadata, node->peerstore);
  ld_metadata_set_events(node->metadata, &g_metadata_events, node);
  return 0;
}

static void relay_config(const ld_node_t *node, ld_relay_config_t *rc,
                         ld_relay_protected_shard_t *ps) {
  ld_relay_config_default(rc);
  rc->loop = node->loop;
  rc->cluster_id = node->cfg.cluster_id;
  rc->num_shards = node->cfg.num_shards_in_network;
  rc->max_msg_size = node->cfg.max_msg_size;
  for (size_t i = 0; i < node->cfg.n_protected_shards; i++) {
    ps[i].shard = node->cfg.protected_shards[i].shard;
    memcpy(ps[i].pubkey, node->cfg.protected_shards[i].public_key, sizeof ps[i].pubkey);
  }
  rc->protected_shards = ps;
  rc->n_protected_shards = node->cfg.n_protected_shards;
}

static int create_relay(ld_node_t *node) {
  ld_gs_service_config_t gc;
  ld_relay_gs_config(&gc, node->cfg.max_msg_size);
  gc.params.ip_colocation_threshold =
      node->cfg.colocation_limit == 0 ? UINT32_MAX : (uint32_t)node->cfg.colocation_limit;
  int err = 0;
  node->gs = ld_gs_service_new(node->sw, NULL, &gc, &err);
  if (node->gs == NULL)
    return err != 0 ? err : LD_ERR_NOMEM;
  ld_relay_config_t rc;
  ld_relay_protected_shard_t ps[LD_NODE_MAX_PROTECTED_SHARDS];
  relay_config(node, &rc, ps);
  node->relay = ld_relay_new(node->gs, &rc, &err);
  if (node->relay == NULL)
    return err != 0 ? err : LD_ERR_NOMEM;
  ld_relay_set_events(node->relay, &g_relay_events, node);
  ld_metadata_set_shard_provider(node->metadata, ld_relay_shard_provider, node->relay);
  return 0;
}

static int subscribe_configured(ld_node_t *node) {
  char topic[LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1];
  for (size_t i = 0; i < node->cfg.n_shards; i++) {
    ld_relay_shard_t shard = {node->cfg.cluster_id, node->cfg.shards[i]};
    ld_pubsub_topic_format(shard, topic, sizeof topic);
    int rc = ld_node_subscribe(node, topic);
    if (rc != 0)
      return rc;
  }
  for (size_t i = 0; i < node->cfg.n_content_topics && node->cfg.num_shards_in_network > 0; i++) {
    int rc = ld_relay_autoshard(node->relay, node->cfg.content_topics[i], topic, sizeof topic);
    if (rc >= 0)
      rc = ld_node_subscribe(node, topic);
    if (rc < 0)
      return rc;
  }
  return 0;
}

/* ---- start ----------------------------------------------------------------------------------- */

static int mount_protocols(ld_node_t *node) {
  int rc = ld_switch_add_listener(node->sw, &g_switch_events, node);
  if (rc != 0)
    return rc;
  node->identify = ld_identify_new(node->sw, NULL);
  if (node->identify == NULL)
    return LD_ERR_NOMEM;
  ld_identify_set_peerstore(node->identify, node->peerstore);
  ld_identify_set_events(node->identify, &g_identify_events, node);
  rc = ld_ping_handle(node->sw);
  if (rc == 0)
    rc = mount_metadata(node);
  if (rc == 0 && node->cfg.relay)
    rc = create_relay(node);
  if (rc == 0)
    rc = ld_node_rln_mount(node);
  if (rc == 0 && node->cfg.relay)
    rc = subscribe_configured(node);
  if (rc == 0)
    rc = ld_node_services_mount(node);
  return rc;
}

static int listen_on(ld_node_t *node, uint16_t port, const char *suffix) {
  char text[160];
  const char *family = strchr(node->cfg.listen_address, ':') != NULL ? "ip6" : "ip4";
  snprintf(text, sizeof text, "/%s/%s/tcp/%u%s", family, node->cfg.listen_address, port, suffix);
  ld_multiaddr_t ma;
  int rc = ld_multiaddr_parse(&ma, text);
  if (rc == 0)
    rc = ld_switch_listen(node->sw, &ma);
  if (rc != 0) {
    LD_ERROR(TOPIC, "Cannot listen on %s: %s", text, ld_strerror(rc));
    ld_node_note_failure(node, suffix[0] == '\0' ? "tcp" : "websocket", rc, text);
  }
  return rc;
}

static int listen_all(ld_node_t *node) {
  int rc = listen_on(node, node->cfg.tcp_port, "");
  if (rc == 0 && node->listening_ns == 0)
    node->listening_ns = ld_now_ns();
  if (rc == 0 && node->cfg.ws.enabled)
    rc = listen_on(node, node->cfg.ws.port, node->cfg.ws.secure ? "/wss" : "/ws");
  if (rc == 0)
    rc = ld_node_announce_addrs(node);
  return rc != 0 ? rc : ld_node_build_enr(node);
}

static void log_start(const ld_node_t *node) {
  char id[LD_PEERID_TEXT_MAX];
  ld_peerid_to_text(&node->peer_id, id, sizeof id);
  LD_INFO(TOPIC, "Started node with peer ID %s (cluster %u, relay %s, %zu shards)", id,
          node->cfg.cluster_id, node->relay != NULL ? "on" : "off", node->cfg.n_shards);
  ld_multiaddr_t addrs[LD_NODE_MAX_LISTEN_ADDRS];
  size_t n = ld_node_listen_addrs(node, addrs, LD_NODE_MAX_LISTEN_ADDRS);
  for (size_t i = 0; i < n && i < LD_NODE_MAX_LISTEN_ADDRS; i++) {
    char text[LD_MULTIADDR_TEXT_MAX];
    if (ld_multiaddr_to_text(&addrs[i], text, sizeof text) > 0)
      LD_INFO(TOPIC, "Listening on %s", text);
  }
  char inert[1024];
  if (ld_node_config_inert_text(&node->cfg, inert, sizeof inert) > 0)
    LD_WARN(TOPIC, "Options accepted without effect in this build: %s", inert);
}

int ld_node_start(ld_node_t *node) {
  if (node->state != NODE_NEW)
    return LD_ERR_STATE;
  node->state = NODE_STARTED;
  node->started_ms = ld_now_ms();
  int rc = add_websocket(node);
  if (rc == 0)
    rc = mount_protocols(node);
  if (rc == 0)
    rc = ld_node_discv5_open(node); /* its port goes into the ENR */
  if (rc == 0 && node->cfg.listen)
    rc = listen_all(node);
  if (rc != 0)
    return rc;
  log_start(node);
  rc = ld_node_static_start(node);
  if (rc == 0)
    rc = ld_node_pm_start(node);
  if (rc == 0 && node->d5 != NULL)
    rc = ld_node_discv5_start(node);
  if (rc == 0)
    rc = ld_node_dns_start(node);
  if (rc == 0)
    rc = ld_node_nat_start(node);
  return rc != 0 ? rc : ld_node_servers_start(node);
}

/* ---- stop ------------------------------------------------------------------------------------ */

static void on_switch_closed(void *user_data) {
  ld_node_t *node = user_data;
  void (*stopped)(void *) = node->stopped;
  void *data = node->stopped_data;
  free_parts(node);
  free(node);
  if (stopped != NULL)
    stopped(data);
}

void ld_node_pending_done(void *user_data) {
  ld_node_t *node = user_data;
  if (--node->pending > 0)
    return;
  ld_switch_close(node->sw, on_switch_closed, node);
}

static void on_defer_closed(uv_handle_t *h) {
  ld_node_pending_done(h->data);
}

void ld_node_stop(ld_node_t *node, void (*done)(void *user_data), void *user_data) {
  if (node->state == NODE_STOPPING)
    return;
  node->state = NODE_STOPPING;
  node->stopped = done;
  node->stopped_data = user_data;
  /* The switch closes only once every close below has completed, and never from inside the
   * call: the caller may be a listener running inside a connection's callback. */
  node->pending = 1;
  uv_timer_init(node->loop, &node->stop_defer);
  node->stop_defer.data = node;
  uv_close((uv_handle_t *)&node->stop_defer, on_defer_closed);
  ld_node_servers_stop(node);
  ld_node_discv5_stop(node);
  ld_node_pm_stop(node);
  ld_node_static_stop(node);
  ld_node_dns_stop(node);
  ld_node_nat_stop(node);
  ld_node_services_stop(node);
  ld_node_rln_publish_stop(node);
  ld_node_rln_stop(node);
}

/* ---- accessors ------------------------------------------------------------------------------- */

const ld_peerid_t *ld_node_peer_id(const ld_node_t *node) {
  return &node->peer_id;
}

uint64_t ld_node_listening_ns(const ld_node_t *node) {
  return node->listening_ns;
}

const ld_node_config_t *ld_node_config(const ld_node_t *node) {
  return &node->cfg;
}

size_t ld_node_listen_addrs(const ld_node_t *node, ld_multiaddr_t *out, size_t max) {
  for (size_t i = 0; i < node->n_announced && i < max; i++) {
    out[i] = node->announced[i];
    ld_multiaddr_push(&out[i], LD_MA_P2P, node->peer_id.bytes, node->peer_id.len);
  }
  return node->n_announced;
}

ld_switch_t *ld_node_switch(ld_node_t *node) {
  return node->sw;
}

ld_broker_t *ld_node_broker(ld_node_t *node) {
  return node->broker;
}

ld_fanout_t *ld_node_fanout(ld_node_t *node) {
  return node->fanout;
}

ld_peerstore_t *ld_node_peerstore(ld_node_t *node) {
  return node->peerstore;
}

ld_identify_t *ld_node_identify(ld_node_t *node) {
  return node->identify;
}

ld_metadata_t *ld_node_metadata(ld_node_t *node) {
  return node->metadata;
}

ld_relay_t *ld_node_relay(ld_node_t *node) {
  return node->relay;
}

ld_gs_service_t *ld_node_gossipsub(ld_node_t *node) {
  return node->gs;
}

ld_static_peers_t *ld_node_static_peers(ld_node_t *node) {
  return node->statics;
}

/* ---- relay conveniences ---------------------------------------------------------------------- */

int ld_node_subscribe(ld_node_t *node, const char *pubsub_topic) {
  if (node->relay == NULL)
    return LD_ERR_UNSUPPORTED;
  int rc = ld_relay_subscribe(node->relay, pubsub_topic, NULL, NULL);
  return rc == LD_ERR_EXISTS ? 0 : rc;
}

int ld_node_unsubscribe(ld_node_t *node, const char *pubsub_topic) {
  if (node->relay == NULL)
    return LD_ERR_UNSUPPORTED;
  int rc = ld_relay_unsubscribe(node->relay, pubsub_topic);
  return rc == LD_ERR_NOT_FOUND ? 0 : rc;
}

int ld_node_outgoing_error(ld_relay_reason_t reason) {
  switch (reason) {
  case LD_RELAY_OK:
    return 0;
  case LD_RELAY_TOO_LARGE:
    return LD_ERR_TOO_LARGE;
  case LD_RELAY_NO_TIMESTAMP:
  case LD_RELAY_OUT_OF_WINDOW:
  case LD_RELAY_BAD_SIGNATURE:
    return LD_ERR_BAD_SIGNATURE;
  default:
    return LD_ERR_INVALID_ARG;
  }
}

/* The pubsub topic to publish `msg` on: `pubsub_topic`, or when NULL its content topic's shard
 * by autosharding, written to topic[] (*out points to one or the other). */
static int publish_topic(ld_node_t *node, const char *pubsub_topic, const ld_waku_message_t *msg,
                         char topic[LD_GS_MAX_TOPIC_LEN + 1], const char **out) {
  *out = pubsub_topic;
  if (pubsub_topic != NULL)
    return 0;
  char ct[LD_NODE_CONTENT_TOPIC_MAX];
  if (msg->content_topic_len >= sizeof ct)
    return LD_ERR_BAD_CONTENT_TOPIC;
  memcpy(ct, msg->content_topic, msg->content_topic_len);
  ct[msg->content_topic_len] = '\0';
  int rc = ld_relay_autoshard(node->relay, ct, topic, LD_GS_MAX_TOPIC_LEN + 1);
  if (rc < 0)
    return rc;
  *out = topic;
  return 0;
}

int ld_node_publish(ld_node_t *node, const char *pubsub_topic, const ld_waku_message_t *msg,
                    uint8_t hash[LD_WAKU_HASH_LEN]) {
  if (node->relay == NULL || msg == NULL)
    return node->relay == NULL ? LD_ERR_UNSUPPORTED : LD_ERR_INVALID_ARG;
  char topic[LD_GS_MAX_TOPIC_LEN + 1];
  int rc = publish_topic(node, pubsub_topic, msg, topic, &pubsub_topic);
  if (rc != 0)
    return rc;
  if (node->rln != NULL) /* RLN-relay: proved off the loop, then published */
    return ld_node_rln_publish(node, pubsub_topic, msg, hash, NULL, NULL, NULL, NULL);
  rc = ld_node_outgoing_error(ld_relay_check_outgoing(node->relay, pubsub_topic, msg));
  return rc != 0 ? rc : ld_relay_publish(node->relay, pubsub_topic, msg, hash);
}

int ld_node_publish_async(ld_node_t *node, const char *pubsub_topic, const ld_waku_message_t *msg,
                          const uint8_t hash[LD_WAKU_HASH_LEN], ld_node_published_fn done,
                          void *user_data, ld_node_publish_call_t **call) {
  if (call != NULL)
    *call = NULL;
  if (node->relay == NULL || msg == NULL || done == NULL)
    return node->relay == NULL ? LD_ERR_UNSUPPORTED : LD_ERR_INVALID_ARG;
  if (node->rln == NULL) /* published at once */
    return pubsub_topic != NULL && hash != NULL
               ? ld_node_publish_hashed(node, pubsub_topic, msg, hash)
               : ld_node_publish(node, pubsub_topic, msg, NULL);
  char topic[LD_GS_MAX_TOPIC_LEN + 1];
  int rc = publish_topic(node, pubsub_topic, msg, topic, &pubsub_topic);
  if (rc != 0)
    return rc;
  return ld_node_rln_publish(node, pubsub_topic, msg, NULL, NULL, done, user_data, call);
}

int ld_node_publish_hashed(ld_node_t *node, const char *pubsub_topic, const ld_waku_message_t *msg,
                           const uint8_t hash[LD_WAKU_HASH_LEN]) {
  if (pubsub_topic == NULL || msg == NULL || hash == NULL)
    return LD_ERR_INVALID_ARG;
  if (node->relay == NULL || node->rln != NULL || msg->timestamp == 0)
    return ld_node_publish(node, pubsub_topic, msg, NULL);
  int rc = ld_node_outgoing_error(ld_relay_check_outgoing(node->relay, pubsub_topic, msg));
  return rc != 0 ? rc : ld_relay_publish_hashed(node->relay, pubsub_topic, msg, hash);
}
