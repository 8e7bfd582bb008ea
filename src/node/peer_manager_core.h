/* The peer manager's decisions, sans-I/O (nwaku's peer_manager.nim): a bounded store of the
 * peers the node knows (where each came from, how to dial it, its shards and services, its
 * connections and failed dials), the connection targets, and what to do next. The node's glue
 * (peer_manager.h) feeds it events and the time, and carries out the actions it returns (dial,
 * disconnect, forget); tests drive it with a fake clock.
 *
 * Targets (nwaku's PeerManager.new): relay peers = ceil(max_connections × relay%), service
 * peers = floor(max_connections × service%); of the relay peers a third are dialed out
 * (out target = relay div 3) and the rest may come in (in target = relay − out).
 *
 * Decisions:
 * - Connectivity (nwaku's relayConnectivityLoop with its sharded variant): inbound relay peers
 *   above the in target are disconnected (the oldest first); while outbound relay peers are below
 *   the out target, peers that are neither connected, being dialed nor backing off are dialed, at
 *   most max_parallel_dials at a time: first, for every subscribed shard with fewer than
 *   out target / shards outbound peers, peers known to be on it; then any other (random order).
 *   The next run comes sooner the further the node is from its targets (nwaku's factor).
 * - Back-off: a peer whose dial failed n times is not dialed again before
 *   initial_backoff × factor^(n−1) after the last failure; after max_failed_attempts it is not
 *   dialed any more (until it connects to us) and is the first to go when the store is pruned.
 * - Colocation: with colocation_limit > 0, when more peers than that are connected from one IP,
 *   the earliest connected ones beyond the limit are disconnected and forgotten (nwaku).
 * - Metadata: a peer announcing another cluster is disconnected and forgotten (nwaku's
 *   onPeerMetadata); its shards are recorded otherwise.
 * - Pruning (nwaku's prunePeerStore): above capacity, peers past max_failed_attempts go first,
 *   then peers without known shards, then peers of the most crowded shards; connected peers and
 *   static peers are never pruned.
 * - Service slots: a peer per service (store, filter, lightpush, peer exchange) chosen by the
 *   operator (ld_pm_set_slot), else a connected peer that serves it, else a known one not
 *   backing off.
 *
 * Memory: at most 2 × capacity peers (+ the connected ones, which are never pruned), each
 * sizeof(ld_pm_peer_t) ≈ 1.4 KB. One thread. */
#ifndef LD_NODE_PEER_MANAGER_CORE_H
#define LD_NODE_PEER_MANAGER_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/multiaddr.h"
#include "p2p/peerid.h"

#define LD_PM_MAX_ADDRS 4
#define LD_PM_MAX_PEER_SHARDS 16 /* shards recorded per peer */
#define LD_PM_MAX_SHARDS 1024    /* our subscribed shards */
#define LD_PM_IP_MAX 46

/* nwaku's PeerOrigin. */
typedef enum ld_pm_origin {
  LD_PM_ORIGIN_UNKNOWN = 0,
  LD_PM_ORIGIN_DISCV5,
  LD_PM_ORIGIN_STATIC,
  LD_PM_ORIGIN_PX,
  LD_PM_ORIGIN_DNS,
} ld_pm_origin_t;

/* "UnknownOrigin", "Discv5", "Static", "PeerExchange", "Dns" (nwaku's names, /admin/v1/peers). */
const char *ld_pm_origin_name(ld_pm_origin_t origin);

/* Services a peer is known to serve (identify's protocols or its ENR's waku2 bits). */
enum {
  LD_PM_RELAY = 1u << 0,
  LD_PM_STORE = 1u << 1,
  LD_PM_FILTER = 1u << 2,
  LD_PM_LIGHTPUSH = 1u << 3,
  LD_PM_PX = 1u << 4,
};
typedef enum ld_pm_service {
  LD_PM_SLOT_STORE = 0,
  LD_PM_SLOT_FILTER,
  LD_PM_SLOT_LIGHTPUSH,
  LD_PM_SLOT_PX,
  LD_PM_SLOTS,
} ld_pm_service_t;

typedef struct ld_pm_peer {
  ld_peerid_t id;
  ld_pm_origin_t origin;
  ld_multiaddr_t addrs[LD_PM_MAX_ADDRS]; /* transport addresses, without /p2p */
  size_t n_addrs;
  bool has_shards; /* from its ENR or its metadata */
  uint16_t cluster_id;
  uint16_t shards[LD_PM_MAX_PEER_SHARDS];
  size_t n_shards;
  unsigned services;     /* LD_PM_RELAY, … */
  unsigned conns;        /* open connections */
  bool outbound;         /* direction of the first open connection */
  char ip[LD_PM_IP_MAX]; /* of the open connection, "" otherwise */
  uint64_t connected_ms;
  uint64_t connect_seq; /* order of connection */
  bool dialing;
  uint32_t failed_attempts;
  uint64_t last_failed_ms;
  uint64_t hold_until_ms; /* not dialed before (ld_pm_hold_off) */
  uint64_t last_seen_ms;
} ld_pm_peer_t;

typedef struct ld_pm_config {
  size_t max_connections;
  uint32_t relay_ratio;    /* % of max_connections for relay peers */
  size_t capacity;         /* peers kept (pruning); 0: 1000 */
  size_t colocation_limit; /* 0: no limit */
  uint32_t initial_backoff_ms;
  uint32_t backoff_factor;
  uint32_t max_failed_attempts;
  size_t max_parallel_dials;
  uint16_t cluster_id;
  const uint16_t *shards; /* our subscribed shards (copied) */
  size_t n_shards;
  uint64_t seed; /* shuffles */
} ld_pm_config_t;

/* nwaku's: 50 connections, 50:50, capacity 1000, colocation 5, back-off 120 s × 4^(n−1), 5
 * attempts, 10 dials at once, cluster 0, no shards. */
void ld_pm_config_default(ld_pm_config_t *cfg);

typedef struct ld_pm_targets {
  size_t max_relay, max_service, out_relay, in_relay;
} ld_pm_targets_t;

/* nwaku's arithmetic (see above). */
void ld_pm_compute_targets(size_t max_connections, uint32_t relay_ratio, ld_pm_targets_t *out);

typedef enum ld_pm_action_type {
  LD_PM_DIAL = 1,   /* dial the peer (it is marked dialing: report ld_pm_on_dial_result) */
  LD_PM_DISCONNECT, /* close its connections */
  LD_PM_FORGET,     /* it was removed from the store: drop it from persistence too */
} ld_pm_action_type_t;

typedef struct ld_pm_action {
  ld_pm_action_type_t type;
  ld_peerid_t peer;
} ld_pm_action_t;

typedef struct ld_pm ld_pm_t;

/* NULL when out of memory or cfg->n_shards > LD_PM_MAX_SHARDS. */
ld_pm_t *ld_pm_new(const ld_pm_config_t *cfg);
void ld_pm_free(ld_pm_t *pm);

const ld_pm_targets_t *ld_pm_targets(const ld_pm_t *pm);

/* Replaces our subscribed shards. LD_ERR_LIMIT above LD_PM_MAX_SHARDS. */
int ld_pm_set_shards(ld_pm_t *pm, const uint16_t *shards, size_t n);

/* What the store knows of a peer before it is added. */
typedef struct ld_pm_peer_info {
  const ld_multiaddr_t *addrs; /* may carry /p2p (dropped) */
  size_t n_addrs;
  ld_pm_origin_t origin;
  bool has_shards;
  uint16_t cluster_id;
  const uint16_t *shards;
  size_t n_shards;
  unsigned services;
} ld_pm_peer_info_t;

/* Adds a peer or updates a known one (addresses added, shards and services replaced when given;
 * the origin replaced unless the peer is static). The store may grow to twice its capacity
 * between periodic prunes; adding beyond that prunes at once (the FORGET actions go to `out`, up
 * to `max`; returns their count, or LD_ERR_NOMEM). */
int ld_pm_add(ld_pm_t *pm, const ld_peerid_t *id, const ld_pm_peer_info_t *info, uint64_t now_ms,
              ld_pm_action_t *out, size_t max);

/* The peer or NULL; valid until the next call that changes the store. */
const ld_pm_peer_t *ld_pm_get(const ld_pm_t *pm, const ld_peerid_t *id);
size_t ld_pm_count(const ld_pm_t *pm);
/* The i-th peer (0..count-1, no particular order). */
const ld_pm_peer_t *ld_pm_at(const ld_pm_t *pm, size_t i);

/* Forgets a peer. LD_ERR_NOT_FOUND. */
int ld_pm_remove(ld_pm_t *pm, const ld_peerid_t *id);

/* The services a peer serves (identify). Unknown peers are ignored. */
void ld_pm_set_services(ld_pm_t *pm, const ld_peerid_t *id, unsigned services);

/* A dial the glue started itself (not through LD_PM_DIAL), so the peer is not dialed twice. */
void ld_pm_on_dialing(ld_pm_t *pm, const ld_peerid_t *id);
/* The end of a dial: success clears the failures, failure counts one at now_ms. */
void ld_pm_on_dial_result(ld_pm_t *pm, const ld_peerid_t *id, bool ok, uint64_t now_ms);

/* A connection came up (`ip` of the remote end, may be NULL). Adds the peer when unknown.
 * Returns the actions (in-relay target, colocation), up to `max`. */
size_t ld_pm_on_connected(ld_pm_t *pm, const ld_peerid_t *id, bool outbound, const char *ip,
                          uint64_t now_ms, ld_pm_action_t *out, size_t max);
/* A connection went away. */
void ld_pm_on_disconnected(ld_pm_t *pm, const ld_peerid_t *id, uint64_t now_ms);

/* The peer's metadata: another cluster → DISCONNECT and FORGET (the peer is removed); else its
 * shards are recorded. Returns the actions' count. */
size_t ld_pm_on_metadata(ld_pm_t *pm, const ld_peerid_t *id, uint32_t cluster_id,
                         const uint16_t *shards, size_t n_shards, ld_pm_action_t *out, size_t max);

/* The application disconnected the peer on purpose: the connectivity loop does not dial it
 * before `until_ms` (a connection, from either side, lifts it). Unknown peers are ignored. nwaku
 * redials such a peer at its next connectivity run. */
void ld_pm_hold_off(ld_pm_t *pm, const ld_peerid_t *id, uint64_t until_ms);

/* True when the peer may be dialed now (back-off, hold-off). Unknown peers may. */
bool ld_pm_can_dial(const ld_pm_t *pm, const ld_peerid_t *id, uint64_t now_ms);

/* One run of the connectivity loop (see above). Returns the actions' count. */
size_t ld_pm_connectivity(ld_pm_t *pm, uint64_t now_ms, ld_pm_action_t *out, size_t max);

/* How long until the next connectivity run: base × min(out factor, in factor), at least 1 s
 * (nwaku's dynamic sleep). */
uint32_t ld_pm_next_interval(const ld_pm_t *pm, uint32_t base_ms);

/* Prunes the store down to capacity (see above). Returns the FORGET actions' count. */
size_t ld_pm_prune(ld_pm_t *pm, ld_pm_action_t *out, size_t max);

/* Connected relay peers by direction. */
void ld_pm_relay_counts(const ld_pm_t *pm, size_t *in, size_t *out);

/* Service slots. set: the operator's choice (must be known; LD_ERR_NOT_FOUND). select: the
 * slot's peer, else a connected peer serving it, else a known one that may be dialed; NULL. */
int ld_pm_set_slot(ld_pm_t *pm, ld_pm_service_t service, const ld_peerid_t *id);
const ld_pm_peer_t *ld_pm_select_service(const ld_pm_t *pm, ld_pm_service_t service,
                                         uint64_t now_ms);

#endif
