/* Static peers (--staticnode) and the configured service nodes (--storenode, --filternode,
 * --lightpushnode): dialed at start and redialed whenever they are not connected, with
 * exponential back-off.
 *
 * A sans-I/O engine: it owns no sockets and reads no clock. The node tells it when a connection
 * to a peer came or went (from the switch's events, whoever dialed) and when a dial it asked for
 * finished; it asks the node to dial through the `dial` callback from inside
 * ld_static_peers_tick, and says when it next needs a tick.
 *
 * Back-off: the n-th consecutive failed attempt (dial error, or a connection that dropped before
 * it had been up for `stable_ms`) waits min(max_ms, min_ms · 2^(n-1)) before the next dial. A
 * connection that stayed up for `stable_ms` resets the count, so after a long-lived connection
 * drops, the first redial waits min_ms. Used from one thread at a time (the node's loop). */
#ifndef LD_NODE_STATIC_PEERS_H
#define LD_NODE_STATIC_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/multiaddr.h"
#include "p2p/peerid.h"

/* Peers at most: the node's 64 --staticnode values and its configured service nodes. */
#define LD_STATIC_PEERS_MAX 72

typedef struct ld_static_peers_config {
  uint32_t min_ms;    /* first back-off delay; default 1,000 */
  uint32_t max_ms;    /* longest delay; default 60,000 */
  uint32_t stable_ms; /* a connection this old resets the back-off; default 10,000 */
} ld_static_peers_config_t;

void ld_static_peers_config_default(ld_static_peers_config_t *cfg);

/* Asks the node to dial static peer `index` at `addr` (with /p2p). Return 0 when the dial
 * started (the node reports its end with ld_static_peers_dial_done), or an error, which counts as
 * a failed attempt. Called only from inside ld_static_peers_tick. */
typedef int (*ld_static_peers_dial_fn)(void *user_data, size_t index, const ld_multiaddr_t *addr);

typedef enum ld_static_peer_state {
  LD_STATIC_PEER_IDLE,      /* waiting for its next dial time */
  LD_STATIC_PEER_DIALING,   /* a dial is under way */
  LD_STATIC_PEER_CONNECTED, /* at least one connection is up */
} ld_static_peer_state_t;

typedef struct ld_static_peers ld_static_peers_t;

/* Creates the engine for `n` peers (each address must end in /p2p/<id>; copied). The first dial
 * of every peer is due at `now_ms`. NULL on bad arguments (n > LD_STATIC_PEERS_MAX, an address
 * without a peer ID, min_ms > max_ms) or allocation failure. */
ld_static_peers_t *ld_static_peers_new(const ld_static_peers_config_t *cfg,
                                       const ld_multiaddr_t *addrs, size_t n,
                                       ld_static_peers_dial_fn dial, void *user_data,
                                       uint64_t now_ms);
void ld_static_peers_free(ld_static_peers_t *sp);

/* Starts the dials that are due. Returns how many were started. */
size_t ld_static_peers_tick(ld_static_peers_t *sp, uint64_t now_ms);

/* Absolute time of the next due dial (≤ now means "tick now"), or UINT64_MAX when every peer is
 * connected or being dialed. */
uint64_t ld_static_peers_next_deadline(const ld_static_peers_t *sp);

/* The dial of peer `index` started by the engine finished: `err` 0 (a connection exists; the
 * connection itself is reported with ld_static_peers_connected) or its error. */
void ld_static_peers_dial_done(ld_static_peers_t *sp, size_t index, int err, uint64_t now_ms);

/* A connection to `peer` came up / went away (any direction). Peers that are not static peers
 * are ignored. Returns true when `peer` is a static peer. */
bool ld_static_peers_connected(ld_static_peers_t *sp, const ld_peerid_t *peer, uint64_t now_ms);
bool ld_static_peers_disconnected(ld_static_peers_t *sp, const ld_peerid_t *peer, uint64_t now_ms);

/* ---- introspection ------------------------------------------------------------------------- */

size_t ld_static_peers_count(const ld_static_peers_t *sp);
ld_static_peer_state_t ld_static_peers_state(const ld_static_peers_t *sp, size_t index);
/* Consecutive failed attempts of peer `index` since its last stable connection. */
uint32_t ld_static_peers_failures(const ld_static_peers_t *sp, size_t index);
/* When the next dial of `index` is due (meaningful in the IDLE state). */
uint64_t ld_static_peers_due(const ld_static_peers_t *sp, size_t index);
/* Dials started for `index` since creation. */
uint64_t ld_static_peers_attempts(const ld_static_peers_t *sp, size_t index);
const ld_peerid_t *ld_static_peers_peer(const ld_static_peers_t *sp, size_t index);

/* The back-off delay after `failures` consecutive failures (failures ≥ 1). */
uint64_t ld_static_peers_backoff(const ld_static_peers_config_t *cfg, uint32_t failures);

#endif
