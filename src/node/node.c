#include "node/node.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "p2p/identify.h"
#include "p2p/peerstore.h"
#include "p2p/ping.h"

#define LD_NODE_MAX_LISTEN_ADDRS 8

struct ld_node {
  uv_loop_t *loop;
  ld_node_config_t cfg;
  ld_privkey_t key;
  ld_peerid_t peer_id;
  ld_switch_t *sw;
  ld_peerstore_t *peerstore;
  ld_identify_t *identify;
  void (*stopped)(void *user_data);
  void *stopped_data;
};

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

ld_node_t *ld_node_new(uv_loop_t *loop, const ld_node_config_t *cfg, int *err) {
  ld_node_t *node = calloc(1, sizeof *node);
  *err = LD_ERR_NOMEM;
  if (node == NULL)
    return NULL;
  node->loop = loop;
  node->cfg = *cfg;
  ld_peerstore_config_t pc;
  ld_peerstore_config_default(&pc);
  node->peerstore = ld_peerstore_new(&pc);
  if (node->peerstore == NULL || (*err = derive_identity(node)) != 0 ||
      (*err = create_switch(node)) != 0) {
    ld_peerstore_free(node->peerstore);
    free(node);
    return NULL;
  }
  *err = 0;
  return node;
}

static int mount_protocols(ld_node_t *node) {
  node->identify = ld_identify_new(node->sw, NULL);
  if (node->identify == NULL)
    return LD_ERR_NOMEM;
  ld_identify_set_peerstore(node->identify, node->peerstore);
  return ld_ping_handle(node->sw);
}

static int listen_tcp(ld_node_t *node) {
  char text[128];
  const char *family = strchr(node->cfg.listen_address, ':') != NULL ? "ip6" : "ip4";
  snprintf(text, sizeof text, "/%s/%s/tcp/%u", family, node->cfg.listen_address,
           node->cfg.tcp_port);
  ld_multiaddr_t ma;
  int rc = ld_multiaddr_parse(&ma, text);
  return rc != 0 ? rc : ld_switch_listen(node->sw, &ma);
}

static void log_listen_addrs(const ld_node_t *node) {
  ld_multiaddr_t addrs[LD_NODE_MAX_LISTEN_ADDRS];
  size_t n = ld_node_listen_addrs(node, addrs, LD_NODE_MAX_LISTEN_ADDRS);
  for (size_t i = 0; i < n && i < LD_NODE_MAX_LISTEN_ADDRS; i++) {
    char text[LD_MULTIADDR_TEXT_MAX];
    if (ld_multiaddr_to_text(&addrs[i], text, sizeof text) > 0)
      LD_INFO("node", "Listening on %s", text);
  }
}

int ld_node_start(ld_node_t *node) {
  int rc = mount_protocols(node);
  if (rc == 0)
    rc = listen_tcp(node);
  if (rc != 0)
    return rc;
  char id[LD_PEERID_TEXT_MAX];
  ld_peerid_to_text(&node->peer_id, id, sizeof id);
  LD_INFO("node", "Started node with peer ID %s", id);
  log_listen_addrs(node);
  return 0;
}

static void on_switch_closed(void *user_data) {
  ld_node_t *node = user_data;
  ld_identify_free(node->identify);
  ld_peerstore_free(node->peerstore);
  void (*stopped)(void *) = node->stopped;
  void *data = node->stopped_data;
  memset(&node->key, 0, sizeof node->key);
  free(node);
  if (stopped != NULL)
    stopped(data);
}

void ld_node_stop(ld_node_t *node, void (*done)(void *user_data), void *user_data) {
  node->stopped = done;
  node->stopped_data = user_data;
  ld_switch_close(node->sw, on_switch_closed, node);
}

const ld_peerid_t *ld_node_peer_id(const ld_node_t *node) {
  return &node->peer_id;
}

ld_switch_t *ld_node_switch(ld_node_t *node) {
  return node->sw;
}

size_t ld_node_listen_addrs(const ld_node_t *node, ld_multiaddr_t *out, size_t max) {
  size_t total = ld_switch_listen_addrs(node->sw, out, max);
  for (size_t i = 0; i < total && i < max; i++)
    ld_multiaddr_push(&out[i], LD_MA_P2P, node->peer_id.bytes, node->peer_id.len);
  return total;
}
