/* Kernel tier: version and topic helpers, relay (publish, subscriptions, protected shards, peer
 * counts) and lightpush publishing (c-api.md §3). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "lib/kernel_internal.h"
#include "lib/message_json.h"
#include "waku/core/sharding.h"
#include "waku/core/topics.h"
#include "waku/lightpush/client.h"

/* ---- version and topics ------------------------------------------------------------------------
 */

static void h_version(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *args) {
  (void)ctx, (void)args;
  ld_lib_reply_text(req, ld_lib_version());
}

int waku_version(void *ctx, FFICallBack callback, void *userData) {
  return ld_kernel_call(ctx, callback, userData, h_version, NULL, NULL, NULL, 0, 0);
}

static void reply_formatted(ld_lib_request_t *req, int n, char *text) {
  if (n < 0) {
    ld_lib_reply_err(req, "out of memory");
    return;
  }
  ld_lib_reply_ok(req, text, (size_t)n);
  free(text);
}

static void h_content_topic(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  (void)ctx;
  ld_kernel_args_t *a = p;
  char *text = NULL;
  int n = asprintf(&text, "/%s/%u/%s/%s", a->s[0], (unsigned)a->n[0], a->s[1], a->s[2]);
  reply_formatted(req, n, text);
}

int waku_content_topic(void *ctx, FFICallBack callback, void *userData, const char *appName,
                       unsigned int appVersion, const char *contentTopicName,
                       const char *encoding) {
  return ld_kernel_call(ctx, callback, userData, h_content_topic, appName, contentTopicName,
                        encoding, appVersion, 0);
}

static void h_pubsub_topic(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  (void)ctx;
  ld_kernel_args_t *a = p;
  char *text = NULL;
  int n = asprintf(&text, "/waku/2/%s", a->s[0]);
  reply_formatted(req, n, text);
}

int waku_pubsub_topic(void *ctx, FFICallBack callback, void *userData, const char *topicName) {
  return ld_kernel_call(ctx, callback, userData, h_pubsub_topic, topicName, NULL, NULL, 0, 0);
}

static void h_default_pubsub_topic(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *args) {
  (void)ctx, (void)args;
  ld_lib_reply_text(req, LD_WAKU_DEFAULT_PUBSUB_TOPIC);
}

int waku_default_pubsub_topic(void *ctx, FFICallBack callback, void *userData) {
  return ld_kernel_call(ctx, callback, userData, h_default_pubsub_topic, NULL, NULL, NULL, 0, 0);
}

/* ---- publishing --------------------------------------------------------------------------------
 */

static bool blank(const char *s) {
  for (; *s != '\0'; s++)
    if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r' && *s != '\v' && *s != '\f')
      return false;
  return true;
}

/* Parses the jsonWakuMessage argument; false after completing `req` with the parser's text. */
static bool parse_message(ld_node_t *node, ld_lib_request_t *req, const char *json,
                          ld_lib_json_message_t *m) {
  char err[512];
  size_t max = ld_node_config(node)->max_msg_size;
  if (ld_lib_json_message_parse(json, strlen(json), max, m, err, sizeof err) == 0)
    return true;
  ld_lib_reply_err(req, "%s", err);
  return false;
}

static void reply_hash(ld_lib_request_t *req, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  char hex[LD_WAKU_HASH_HEX_LEN + 1];
  ld_waku_hash_to_hex(hash, hex);
  ld_lib_reply_ok(req, hex, LD_WAKU_HASH_HEX_LEN);
}

/* nwaku's texts for WakuRelay.publish's outcomes. */
static void publish_error_text(ld_node_t *node, int rc, char *out, size_t cap) {
  if (rc == 0)
    snprintf(out, cap, "NoPeersToPublish");
  else if (rc == LD_ERR_TOO_LARGE)
    snprintf(out, cap, "Message size exceeded maximum of %zu bytes",
             ld_node_config(node)->max_msg_size);
  else if (rc == LD_ERR_EXISTS)
    snprintf(out, cap, "DuplicateMessage");
  else
    snprintf(out, cap, "relayPublish: %s", ld_strerror(rc));
}

static void reply_publish_error(ld_node_t *node, ld_lib_request_t *req, int rc) {
  char text[128];
  publish_error_text(node, rc, text, sizeof text);
  ld_lib_reply_err(req, "%s", text);
}

/* With RLN-relay the request is answered once the message is proved and handed to relay, with
 * its final hash (a message that waited long is stamped again), as nwaku proves inside publish.
 * The operation's data is the node's publish call, NULL once its outcome came. */
static void rp_cancel(ld_kernel_op_t *op) {
  ld_node_publish_call_t *call = op->data;
  if (call != NULL) {
    ld_node_publish_detach(call);
    op->data = NULL;
    ld_kernel_op_release(op);
  }
}

static void on_relay_published(void *user_data, int result, const char *pubsub_topic,
                               const ld_waku_message_t *msg, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  (void)pubsub_topic;
  (void)msg;
  ld_kernel_op_t *op = user_data;
  op->data = NULL;
  op->cancel = NULL;
  if (ld_kernel_op_open(op) && result > 0) {
    char hex[LD_WAKU_HASH_HEX_LEN + 1];
    ld_waku_hash_to_hex(hash, hex);
    ld_kernel_op_ok(op, hex, LD_WAKU_HASH_HEX_LEN);
  } else if (ld_kernel_op_open(op)) {
    char text[128];
    publish_error_text(ld_kernel_node_of(op->k), result, text, sizeof text);
    ld_kernel_op_err(op, "%s", text);
  }
  ld_kernel_op_release(op);
}

static void relay_publish_proved(ld_kernel_t *k, ld_lib_request_t *req, const char *pubsub_topic,
                                 const ld_waku_message_t *msg) {
  ld_node_t *node = ld_kernel_node_of(k);
  ld_kernel_op_t *op = ld_kernel_op_new(k, req, "relayPublish", 0, NULL);
  if (op == NULL)
    return;
  ld_node_publish_call_t *call = NULL;
  int rc = ld_node_publish_async(node, pubsub_topic, msg, NULL, on_relay_published, op, &call);
  if (rc == LD_NODE_PUBLISH_LATER) { /* the call holds the caller's reference */
    op->data = call;
    op->cancel = rp_cancel;
    return;
  }
  char text[128];
  publish_error_text(node, rc > 0 ? LD_ERR_INTERNAL : rc, text, sizeof text);
  ld_kernel_op_err(op, "%s", text);
  ld_kernel_op_release(op);
}

static void h_relay_publish(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  ld_kernel_args_t *a = p;
  ld_node_t *node = ld_kernel_node(ctx, req, "relayPublish");
  ld_lib_json_message_t m;
  if (node == NULL || !parse_message(node, req, a->s[1], &m))
    return;
  uint8_t hash[LD_WAKU_HASH_LEN];
  int rc = 0;
  ld_kernel_t *k = NULL;
  if (ld_node_relay(node) == NULL)
    ld_lib_reply_err(req, "relayPublish: WakuRelay not mounted");
  else if (blank(a->s[0]))
    ld_lib_reply_err(req, "NoTopicSpecified");
  else if (ld_node_rln_stats(node) != NULL) {
    if ((k = ld_kernel_get(ctx, req, "relayPublish")) != NULL)
      relay_publish_proved(k, req, a->s[0], &m.msg);
  } else if ((rc = ld_node_publish(node, a->s[0], &m.msg, hash)) > 0)
    reply_hash(req, hash);
  else
    reply_publish_error(node, req, rc);
  ld_lib_json_message_clear(&m);
}

int waku_relay_publish(void *ctx, FFICallBack callback, void *userData, const char *pubSubTopic,
                       const char *jsonWakuMessage, unsigned int timeoutMs) {
  return ld_kernel_call(ctx, callback, userData, h_relay_publish, pubSubTopic, jsonWakuMessage,
                        NULL, timeoutMs, 0);
}

/* ---- lightpush ---- */

typedef struct lp_data {
  ld_lib_json_message_t m;
  char topic[LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1];
  char *named_topic; /* the caller's topic when it is not a static-shard one */
  ld_lightpush_call_t *call;
} lp_data_t;

static void lp_free(ld_kernel_op_t *op) {
  lp_data_t *d = op->data;
  ld_lib_json_message_clear(&d->m);
  free(d->named_topic);
  free(d);
}

static void lp_cancel(ld_kernel_op_t *op) {
  lp_data_t *d = op->data;
  if (d->call != NULL) {
    ld_lightpush_client_cancel(d->call);
    d->call = NULL;
    ld_kernel_op_release(op);
  }
}

static const char *lp_topic(const lp_data_t *d) {
  return d->named_topic != NULL ? d->named_topic : d->topic;
}

static void on_pushed(const ld_lightpush_result_t *res, void *user_data) {
  ld_kernel_op_t *op = user_data;
  lp_data_t *d = op->data;
  d->call = NULL;
  op->cancel = NULL;
  if (res->status_code == LD_LIGHTPUSH_SUCCESS && res->has_hash) {
    char hex[LD_WAKU_HASH_HEX_LEN + 1];
    ld_waku_hash_to_hex(res->hash, hex);
    ld_kernel_op_ok(op, hex, LD_WAKU_HASH_HEX_LEN);
  } else {
    ld_kernel_op_err(op, "lightpush failed: %s: %s", ld_lightpush_code_name(res->status_code),
                     res->status_desc != NULL ? res->status_desc : "");
  }
  ld_kernel_op_release(op);
}

static void on_legacy_pushed(const ld_lightpush_legacy_result_t *res, void *user_data) {
  ld_kernel_op_t *op = user_data;
  lp_data_t *d = op->data;
  d->call = NULL;
  op->cancel = NULL;
  if (res->success) {
    char hex[LD_WAKU_HASH_HEX_LEN + 1];
    ld_waku_hash_to_hex(res->hash, hex);
    ld_kernel_op_ok(op, hex, LD_WAKU_HASH_HEX_LEN);
  } else {
    ld_kernel_op_err(op, "lightpush failed: %s", res->info);
  }
  ld_kernel_op_release(op);
}

/* v3 unless the peer store says the peer speaks only the legacy protocol. */
static bool use_legacy(ld_kernel_op_t *op, const ld_service_peer_t *peer) {
  ld_peerstore_t *ps = ld_node_peerstore(ld_kernel_node_of(op->k));
  return !ld_peerstore_supports(ps, &peer->id, LD_WAKU_LIGHTPUSH_CODEC) &&
         ld_peerstore_supports(ps, &peer->id, LD_WAKU_LEGACY_LIGHTPUSH_CODEC);
}

static void on_lp_conn(ld_kernel_op_t *op, ld_conn_t *c, int err, const ld_service_peer_t *peer) {
  lp_data_t *d = op->data;
  if (err == 0 && ld_kernel_op_open(op)) {
    ld_switch_t *sw = ld_node_switch(ld_kernel_node_of(op->k));
    err = use_legacy(op, peer)
              ? ld_lightpush_legacy_client_push_ex(sw, c, lp_topic(d), &d->m.msg, NULL,
                                                   on_legacy_pushed, op, &d->call)
              : ld_lightpush_client_push_ex(sw, c, lp_topic(d), &d->m.msg, NULL, on_pushed, op,
                                            &d->call);
    if (err == 0) {
      op->refs++;
      op->cancel = lp_cancel;
    }
  }
  if (err != 0)
    ld_kernel_op_err(op, "lightpush failed: dial_failure: %s", ld_strerror(err));
  ld_kernel_op_release(op);
}

/* The pubsub topic to push on: the caller's, or the shard of the content topic. */
static bool lp_set_topic(ld_node_t *node, ld_lib_request_t *req, const char *given, lp_data_t *d) {
  if (!blank(given)) {
    d->named_topic = strdup(given);
    if (d->named_topic == NULL)
      ld_lib_reply_err(req, "out of memory");
    return d->named_topic != NULL;
  }
  const ld_node_config_t *cfg = ld_node_config(node);
  if (cfg->num_shards_in_network == 0) {
    ld_lib_reply_err(req, "Pubsub topic must be specified when static sharding is enabled.");
    return false;
  }
  ld_topic_error_t why = LD_TOPIC_OK;
  int rc = ld_autoshard_pubsub_topic(d->m.content_topic, strlen(d->m.content_topic),
                                     cfg->num_shards_in_network, cfg->cluster_id, d->topic,
                                     sizeof d->topic, &why);
  if (rc < 0)
    ld_lib_reply_err(req, "Autosharding error: %s",
                     why != LD_TOPIC_OK ? ld_topic_strerror(why) : ld_strerror(rc));
  return rc >= 0;
}

static void lp_start(ld_kernel_t *k, ld_lib_request_t *req, lp_data_t *d) {
  ld_kernel_op_t *op = ld_kernel_op_new(k, req, "lightpushPublish", 0, NULL);
  if (op == NULL) {
    ld_lib_json_message_clear(&d->m);
    free(d->named_topic);
    free(d);
    return;
  }
  op->data = d;
  op->free_data = lp_free;
  int rc = ld_kernel_op_connect(op, LD_WAKU_LIGHTPUSH_CODEC, NULL, on_lp_conn);
  if (rc == LD_ERR_NOT_FOUND)
    rc = ld_kernel_op_connect(op, LD_WAKU_LEGACY_LIGHTPUSH_CODEC, NULL, on_lp_conn);
  if (rc == LD_ERR_NOT_FOUND)
    ld_kernel_op_err(op, "failed to lightpublish message, no suitable remote peers");
  else if (rc != 0)
    ld_kernel_op_err(op, "lightpush failed: dial_failure: %s", ld_strerror(rc));
  ld_kernel_op_release(op);
}

static void h_lightpush_publish(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  ld_kernel_args_t *a = p;
  ld_kernel_t *k = ld_kernel_get(ctx, req, "lightpushPublish");
  if (k == NULL)
    return;
  ld_node_t *node = ld_kernel_node_of(k);
  lp_data_t *d = calloc(1, sizeof *d);
  if (d == NULL) {
    ld_lib_reply_err(req, "out of memory");
    return;
  }
  if (!parse_message(node, req, a->s[1], &d->m)) {
    free(d);
    return;
  }
  if (!lp_set_topic(node, req, a->s[0], d)) {
    ld_lib_json_message_clear(&d->m);
    free(d);
    return;
  }
  lp_start(k, req, d);
}

int waku_lightpush_publish(void *ctx, FFICallBack callback, void *userData, const char *pubSubTopic,
                           const char *jsonWakuMessage) {
  return ld_kernel_call(ctx, callback, userData, h_lightpush_publish, pubSubTopic, jsonWakuMessage,
                        NULL, 0, 0);
}

/* ---- subscriptions -----------------------------------------------------------------------------
 */

static void h_relay_subscribe(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  ld_kernel_args_t *a = p;
  ld_kernel_t *k = ld_kernel_get(ctx, req, "relaySubscribe");
  if (k == NULL)
    return;
  ld_node_t *node = ld_kernel_node_of(k);
  int rc = ld_node_relay(node) != NULL ? ld_node_subscribe(node, a->s[0]) : LD_ERR_UNSUPPORTED;
  if (rc == 0)
    rc = ld_kernel_relay_add(k, a->s[0]);
  if (rc == LD_ERR_UNSUPPORTED)
    ld_lib_reply_err(req, "relaySubscribe: WakuRelay not mounted");
  else if (rc != 0)
    ld_lib_reply_err(req, "relaySubscribe: %s", ld_strerror(rc));
  else
    ld_lib_reply_text(req, "");
}

int waku_relay_subscribe(void *ctx, FFICallBack callback, void *userData, const char *pubSubTopic) {
  return ld_kernel_call(ctx, callback, userData, h_relay_subscribe, pubSubTopic, NULL, NULL, 0, 0);
}

static void h_relay_unsubscribe(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  ld_kernel_args_t *a = p;
  ld_kernel_t *k = ld_kernel_get(ctx, req, "relayUnsubscribe");
  if (k == NULL)
    return;
  ld_node_t *node = ld_kernel_node_of(k);
  if (ld_node_relay(node) == NULL) {
    ld_lib_reply_err(req, "relayUnsubscribe: WakuRelay not mounted");
    return;
  }
  ld_kernel_relay_remove(k, a->s[0]);
  int rc = ld_node_unsubscribe(node, a->s[0]);
  if (rc != 0)
    ld_lib_reply_err(req, "relayUnsubscribe: %s", ld_strerror(rc));
  else
    ld_lib_reply_text(req, "");
}

int waku_relay_unsubscribe(void *ctx, FFICallBack callback, void *userData,
                           const char *pubSubTopic) {
  return ld_kernel_call(ctx, callback, userData, h_relay_unsubscribe, pubSubTopic, NULL, NULL, 0,
                        0);
}

/* A public key as nwaku reads one (hex, 0x optional; compressed or uncompressed). */
static int parse_key(uint16_t shard, const char *key, ld_relay_protected_shard_t *out) {
  if (strchr(key, ':') != NULL)
    return LD_ERR_BAD_KEY;
  char *text = NULL;
  if (asprintf(&text, "%u:%s", shard, key) < 0)
    return LD_ERR_NOMEM;
  int rc = ld_relay_protected_shard_parse(text, out);
  free(text);
  return rc;
}

static void h_add_protected_shard(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  ld_kernel_args_t *a = p;
  ld_kernel_t *k = ld_kernel_get(ctx, req, "relayAddProtectedShard");
  if (k == NULL)
    return;
  if (ld_node_relay(ld_kernel_node_of(k)) == NULL) {
    ld_lib_reply_err(req, "relayAddProtectedShard: WakuRelay not mounted");
    return;
  }
  if (a->n[0] < 0 || a->n[0] > UINT16_MAX || a->n[1] < 0 || a->n[1] > UINT16_MAX) {
    ld_lib_reply_err(req, "relayAddProtectedShard: clusterId and shardId must be 0..65535");
    return;
  }
  ld_relay_protected_shard_t ps;
  int rc = parse_key((uint16_t)a->n[1], a->s[0], &ps);
  if (rc != 0) {
    ld_lib_reply_err(req, "relayAddProtectedShard: invalid public key: %s", ld_strerror(rc));
    return;
  }
  rc = ld_kernel_protect_shard(k, (uint16_t)a->n[0], (uint16_t)a->n[1], ps.pubkey);
  if (rc != 0)
    ld_lib_reply_err(req, "relayAddProtectedShard: %s", ld_strerror(rc));
  else
    ld_lib_reply_text(req, "");
}

int waku_relay_add_protected_shard(void *ctx, FFICallBack callback, void *userData, int clusterId,
                                   int shardId, char *publicKey) {
  return ld_kernel_call(ctx, callback, userData, h_add_protected_shard, publicKey, NULL, NULL,
                        clusterId, shardId);
}

/* ---- relay peers -------------------------------------------------------------------------------
 */

static bool has_id(const ld_peerid_t *ids, size_t n, const ld_peerid_t *id) {
  for (size_t i = 0; i < n; i++)
    if (ld_peerid_equal(&ids[i], id))
      return true;
  return false;
}

/* Appends the mesh peers of `topic` not yet in ids[0..*n); false when out of memory. */
static bool add_mesh(ld_gs_service_t *gs, const char *topic, ld_peerid_t **ids, size_t *n) {
  size_t m = ld_gs_service_mesh_peers(gs, topic, NULL, 0);
  ld_peerid_t *mesh = m > 0 ? malloc(m * sizeof *mesh) : NULL;
  ld_peerid_t *grown = m > 0 ? realloc(*ids, (*n + m) * sizeof *grown) : *ids;
  if (m > 0 && (mesh == NULL || grown == NULL)) {
    free(mesh);
    if (grown != NULL)
      *ids = grown;
    return false;
  }
  *ids = grown;
  m = ld_gs_service_mesh_peers(gs, topic, mesh, m);
  for (size_t i = 0; i < m; i++)
    if (!has_id(*ids, *n, &mesh[i]))
      (*ids)[(*n)++] = mesh[i];
  free(mesh);
  return true;
}

/* Mesh peers of `topic`, or of every subscribed topic for "" (heap array in *ids). */
static int mesh_peers(ld_node_t *node, const char *topic, ld_peerid_t **ids, size_t *n) {
  ld_gs_service_t *gs = ld_node_gossipsub(node);
  *ids = NULL;
  *n = 0;
  if (topic[0] != '\0')
    return add_mesh(gs, topic, ids, n) ? 0 : LD_ERR_NOMEM;
  ld_relay_t *relay = ld_node_relay(node);
  size_t nt = ld_relay_subscriptions(relay, NULL, 0);
  const char **topics = nt > 0 ? malloc(nt * sizeof *topics) : NULL;
  if (nt > 0 && topics == NULL)
    return LD_ERR_NOMEM;
  nt = ld_relay_subscriptions(relay, topics, nt);
  int rc = 0;
  for (size_t i = 0; i < nt && rc == 0; i++)
    rc = add_mesh(gs, topics[i], ids, n) ? 0 : LD_ERR_NOMEM;
  free(topics);
  return rc;
}

/* Peers subscribed to `topic`, or every pubsub peer for "" (heap array in *ids). */
static int topic_peers(ld_node_t *node, const char *topic, ld_peerid_t **ids, size_t *n) {
  ld_gs_service_t *gs = ld_node_gossipsub(node);
  bool all = topic[0] == '\0';
  size_t m = all ? ld_gs_service_peers(gs, NULL, 0) : ld_gs_service_topic_peers(gs, topic, NULL, 0);
  *ids = m > 0 ? malloc(m * sizeof **ids) : NULL;
  ld_gs_peer_info_t *info = all && m > 0 ? malloc(m * sizeof *info) : NULL;
  if (m > 0 && (*ids == NULL || (all && info == NULL))) {
    free(*ids);
    free(info);
    *ids = NULL;
    return LD_ERR_NOMEM;
  }
  *n = all ? ld_gs_service_peers(gs, info, m) : ld_gs_service_topic_peers(gs, topic, *ids, m);
  *n = *n < m ? *n : m;
  for (size_t i = 0; all && i < *n; i++)
    (*ids)[i] = info[i].id;
  free(info);
  return 0;
}

typedef enum peers_query {
  NUM_CONNECTED,
  LIST_CONNECTED,
  NUM_MESH,
  LIST_MESH,
} peers_query_t;

static const char *const g_peers_ops[] = {"relayNumConnectedPeers", "relayConnectedPeers",
                                          "relayNumPeersInMesh", "relayPeersInMesh"};

static void relay_peers(ld_lib_ctx_t *ctx, ld_lib_request_t *req, const char *topic,
                        peers_query_t what) {
  const char *op = g_peers_ops[what];
  ld_node_t *node = ld_kernel_node(ctx, req, op);
  if (node == NULL)
    return;
  if (ld_node_gossipsub(node) == NULL || ld_node_relay(node) == NULL) {
    ld_lib_reply_err(req, "%s: WakuRelay not mounted", op);
    return;
  }
  ld_peerid_t *ids = NULL;
  size_t n = 0;
  bool mesh = what == NUM_MESH || what == LIST_MESH;
  int rc = mesh ? mesh_peers(node, topic, &ids, &n) : topic_peers(node, topic, &ids, &n);
  if (rc != 0)
    ld_lib_reply_err(req, "%s: %s", op, ld_strerror(rc));
  else if (what == NUM_CONNECTED || what == NUM_MESH)
    ld_kernel_reply_u64(req, n);
  else
    ld_kernel_reply_peers(req, ids, n);
  free(ids);
}

static void h_num_connected(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  relay_peers(ctx, req, ((ld_kernel_args_t *)p)->s[0], NUM_CONNECTED);
}

static void h_connected(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  relay_peers(ctx, req, ((ld_kernel_args_t *)p)->s[0], LIST_CONNECTED);
}

static void h_num_mesh(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  relay_peers(ctx, req, ((ld_kernel_args_t *)p)->s[0], NUM_MESH);
}

static void h_mesh(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  relay_peers(ctx, req, ((ld_kernel_args_t *)p)->s[0], LIST_MESH);
}

int waku_relay_get_num_connected_peers(void *ctx, FFICallBack callback, void *userData,
                                       const char *pubSubTopic) {
  return ld_kernel_call(ctx, callback, userData, h_num_connected, pubSubTopic, NULL, NULL, 0, 0);
}

int waku_relay_get_connected_peers(void *ctx, FFICallBack callback, void *userData,
                                   const char *pubSubTopic) {
  return ld_kernel_call(ctx, callback, userData, h_connected, pubSubTopic, NULL, NULL, 0, 0);
}

int waku_relay_get_num_peers_in_mesh(void *ctx, FFICallBack callback, void *userData,
                                     const char *pubSubTopic) {
  return ld_kernel_call(ctx, callback, userData, h_num_mesh, pubSubTopic, NULL, NULL, 0, 0);
}

int waku_relay_get_peers_in_mesh(void *ctx, FFICallBack callback, void *userData,
                                 const char *pubSubTopic) {
  return ld_kernel_call(ctx, callback, userData, h_mesh, pubSubTopic, NULL, NULL, 0, 0);
}
