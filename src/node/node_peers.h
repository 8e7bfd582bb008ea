/* Peer management on top of the node's switch and peer store: the distinct connected peers, a
 * dialable address for a known peer, and disconnecting peers. Used by the C library's kernel
 * tier (waku_get_connected_peers, waku_disconnect_peer_by_id, waku_dial_peer_by_id, …).
 *
 * Every call on the node's loop thread, on a started node. */
#ifndef LD_NODE_NODE_PEERS_H
#define LD_NODE_NODE_PEERS_H

#include <stdbool.h>
#include <stddef.h>

#include "node/node.h"

/* Writes up to `max` distinct peers with at least one open connection to `out` (in the
 * switch's connection order; `out` may be NULL with max 0) and returns how many there are. */
size_t ld_node_connected_peers(ld_node_t *node, ld_peerid_t *out, size_t max);

/* True when at least one connection to `peer` is open. */
bool ld_node_peer_connected(ld_node_t *node, const ld_peerid_t *peer);

/* An open connection to `peer` (the first in the switch's order), or NULL. Valid until the
 * connection's on_disconnected. */
ld_conn_t *ld_node_peer_conn(ld_node_t *node, const ld_peerid_t *peer);

/* Writes an address to reach `peer` with, ending in /p2p/<peer>: the remote address of an open
 * connection to it (a dial of it reuses that connection), else the first address the peer store
 * holds for it. LD_ERR_NOT_FOUND when neither exists. */
int ld_node_peer_dial_addr(ld_node_t *node, const ld_peerid_t *peer, ld_multiaddr_t *out);

/* Closes every open connection to `peer` at once (no graceful flush); the switch reports each
 * one gone from the loop (LD_EVENT_CONNECTION). They stop being listed by the switch right away.
 * Returns how many were closed, or LD_ERR_NOMEM. */
int ld_node_disconnect_peer(ld_node_t *node, const ld_peerid_t *peer);

/* As ld_node_disconnect_peer for every open connection. */
int ld_node_disconnect_all(ld_node_t *node);

#endif
