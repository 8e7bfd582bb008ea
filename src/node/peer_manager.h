/* The node's peer manager and discv5 (nwaku's peer_manager.nim and waku_discv5.nim in the node):
 * the glue that runs the decisions of peer_manager_core.h on the node's loop.
 *
 * Peer manager (always on, from ld_node_start): every peer the node learns — static peers,
 * discv5 records, peer-exchange answers, DNS discovery, peers that connect — goes into its store
 * with its origin. A connectivity loop (every connectivity_interval_ms, sooner while the node is
 * short of peers, and right after a discovery while below target) dials toward the outbound
 * relay target and disconnects inbound relay peers above the inbound target; failed dials back
 * off; the store is pruned every prune_interval_ms; connected peers are pinged every
 * keepalive_interval_ms (a peer that fails the ping is disconnected); a peer of another cluster
 * (metadata) is disconnected and forgotten, and so are the peers beyond --ip-colocation-limit.
 * With --peer-persistence the store is kept in SQLite (cfg.pm.db_path): a restarted node loads
 * it and redials its peers.
 *
 * discv5 (--discv5-discovery, with a listening node): a UDP socket on --discv5-udp-port, the
 * node's ENR (waku2 bits, rs/rsv, ip/tcp/udp) served by the engine, --discv5-bootstrap-node
 * records as bootstrap nodes, and the Waku search loop: every matching record goes to the peer
 * manager (origin Discv5) and into the ENR cache that peer exchange answers from.
 *
 * Every call on the node's loop thread, on a started node. */
#ifndef LD_NODE_PEER_MANAGER_H
#define LD_NODE_PEER_MANAGER_H

#include <stdbool.h>
#include <stddef.h>

#include "node/node.h"
#include "node/peer_manager_core.h"
#include "waku/discovery/discv5.h"
#include "waku/enr/enr.h"

/* The decision core (read it: peers, origins, targets); NULL before start. */
ld_pm_t *ld_node_pm(ld_node_t *node);

/* Adds or updates a peer with its addresses (may end in /p2p/<id>) and origin; the connectivity
 * loop may then dial it. LD_ERR_STATE before start, LD_ERR_INVALID_ARG (our own ID), NOMEM. */
int ld_node_add_peer(ld_node_t *node, const ld_peerid_t *id, const ld_multiaddr_t *addrs, size_t n,
                     ld_pm_origin_t origin);

/* As ld_node_add_peer for a verified record: its dialable addresses, waku2 services and shards.
 * Records of another cluster are refused (LD_ERR_INVALID_ARG), as are records without a
 * dialable address (LD_ERR_NOT_FOUND). */
int ld_node_add_peer_enr(ld_node_t *node, const ld_enr_t *enr, ld_pm_origin_t origin);

/* Adds a discv5 bootstrap record at run time (DNS discovery, the library's bootnode update): into
 * the routing table as a bootstrap node, and to the peer manager (origin Dns when `from_dns`,
 * else Discv5). LD_ERR_UNSUPPORTED when discv5 is not running, the engine's errors
 * (LD_ERR_NOT_FOUND: no `udp` endpoint). */
int ld_node_discv5_add_bootstrap(ld_node_t *node, const ld_enr_t *enr, bool from_dns);

/* The discv5 engine while it runs (NULL otherwise) and its UDP port (0). */
ld_discv5_t *ld_node_discv5(ld_node_t *node);
uint16_t ld_node_discv5_port(const ld_node_t *node);

/* Starts / stops discv5 on a started node (the library's start_discv5 / stop_discv5). Start on a
 * running discv5 is 0; LD_ERR_UNSUPPORTED without an ENR (not listening). */
int ld_node_discv5_start(ld_node_t *node);
void ld_node_discv5_stop(ld_node_t *node);

/* The application disconnected `peer` (NULL: every peer, as when it goes offline) on purpose: the
 * peer manager does not redial it for its initial back-off (2 minutes); a connection, from either
 * side, lifts that. nwaku redials at its next connectivity run. */
void ld_node_pm_hold_off(ld_node_t *node, const ld_peerid_t *peer);

/* Runs the connectivity loop soon (after a discovery). */
void ld_node_pm_poke(ld_node_t *node);

#endif
