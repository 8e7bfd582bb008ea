#include "node/node_peers.h"

#include <stdlib.h>

#include "base/error.h"

/* The open connections of the switch (heap array, free()); NULL when there are none or out of
 * memory (told apart by *n). */
static ld_conn_t **open_conns(ld_node_t *node, size_t *n) {
  ld_switch_t *sw = ld_node_switch(node);
  *n = ld_switch_connections(sw, NULL, 0);
  ld_conn_t **conns = *n > 0 ? malloc(*n * sizeof *conns) : NULL;
  if (conns != NULL)
    *n = ld_switch_connections(sw, conns, *n);
  return conns;
}

static bool listed(const ld_peerid_t *ids, size_t n, const ld_peerid_t *id) {
  for (size_t i = 0; i < n; i++)
    if (ld_peerid_equal(&ids[i], id))
      return true;
  return false;
}

size_t ld_node_connected_peers(ld_node_t *node, ld_peerid_t *out, size_t max) {
  size_t n = 0;
  ld_conn_t **conns = open_conns(node, &n);
  ld_peerid_t *seen = conns != NULL ? malloc(n * sizeof *seen) : NULL;
  size_t distinct = 0;
  for (size_t i = 0; seen != NULL && i < n; i++) {
    const ld_peerid_t *id = ld_conn_remote_peer(conns[i]);
    if (listed(seen, distinct, id))
      continue;
    if (distinct < max)
      out[distinct] = *id;
    seen[distinct++] = *id;
  }
  free(seen);
  free(conns);
  return distinct;
}

ld_conn_t *ld_node_peer_conn(ld_node_t *node, const ld_peerid_t *peer) {
  size_t n = 0;
  ld_conn_t **conns = open_conns(node, &n);
  ld_conn_t *found = NULL;
  for (size_t i = 0; conns != NULL && i < n && found == NULL; i++)
    if (ld_peerid_equal(ld_conn_remote_peer(conns[i]), peer))
      found = conns[i];
  free(conns);
  return found;
}

bool ld_node_peer_connected(ld_node_t *node, const ld_peerid_t *peer) {
  return ld_node_peer_conn(node, peer) != NULL;
}

int ld_node_peer_dial_addr(ld_node_t *node, const ld_peerid_t *peer, ld_multiaddr_t *out) {
  ld_conn_t *c = ld_node_peer_conn(node, peer);
  const ld_peerstore_peer_t *known = ld_peerstore_get(ld_node_peerstore(node), peer);
  if (c != NULL)
    *out = *ld_conn_remote_addr(c);
  else if (known != NULL && known->n_addrs > 0)
    *out = known->addrs[0];
  else
    return LD_ERR_NOT_FOUND;
  return ld_multiaddr_push(out, LD_MA_P2P, peer->bytes, peer->len);
}

static int close_matching(ld_node_t *node, const ld_peerid_t *peer) {
  size_t n = 0;
  ld_conn_t **conns = open_conns(node, &n);
  if (conns == NULL && n > 0)
    return LD_ERR_NOMEM;
  int closed = 0;
  for (size_t i = 0; i < n; i++)
    if (peer == NULL || ld_peerid_equal(ld_conn_remote_peer(conns[i]), peer)) {
      ld_conn_close(conns[i], 0, false);
      closed++;
    }
  free(conns);
  return closed;
}

int ld_node_disconnect_peer(ld_node_t *node, const ld_peerid_t *peer) {
  return close_matching(node, peer);
}

int ld_node_disconnect_all(ld_node_t *node) {
  return close_matching(node, NULL);
}
