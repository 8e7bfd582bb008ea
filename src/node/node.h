/* A node: the switch with the protocols mounted in nwaku's order, its lifecycle and its
 * addresses. The program and the C library both assemble nodes through this module.
 *
 * A node lives on one libuv loop; every call must come from that loop's thread. */
#ifndef LD_NODE_NODE_H
#define LD_NODE_NODE_H

#include <stddef.h>
#include <uv.h>

#include "node/config.h"
#include "p2p/multiaddr.h"
#include "p2p/switch.h"

typedef struct ld_node ld_node_t;

/* Creates a node on `loop` from a validated configuration (copied). Nothing listens yet.
 * Returns NULL and sets *err (LD_ERR_NOMEM, LD_ERR_INVALID_ARG) on failure. */
ld_node_t *ld_node_new(uv_loop_t *loop, const ld_node_config_t *cfg, int *err);

/* Mounts the protocols and starts listening; logs one line per listen address with its full
 * multiaddr ending in /p2p/<peer id>. Errors: LD_ERR_ADDR_IN_USE, LD_ERR_IO, … */
int ld_node_start(ld_node_t *node);

/* Closes every connection and listener, then calls `done` (may be NULL) from the loop and frees
 * the node. */
void ld_node_stop(ld_node_t *node, void (*done)(void *user_data), void *user_data);

const ld_peerid_t *ld_node_peer_id(const ld_node_t *node);
ld_switch_t *ld_node_switch(ld_node_t *node);

/* Copies up to `max` listen addresses, each ending in /p2p/<peer id>; returns the total. */
size_t ld_node_listen_addrs(const ld_node_t *node, ld_multiaddr_t *out, size_t max);

#endif
