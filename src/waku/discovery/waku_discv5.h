/* Waku's use of discv5 (nwaku's waku_discv5.nim): a search loop that keeps running random
 * lookups and hands every record that suits our node to the peer manager.
 *
 * The loop: a random lookup, then a pause of interval_ms (nwaku: 5 s) after it ends, and again.
 * Every record the engine reports (DISCOVERED by any lookup, NODE_ADDED from handshakes) is
 * matched against the predicate; a match is reported through `on_peer` once, and again only
 * when its seq grows or after repeat_ms (so a peer manager that dropped it hears of it again).
 *
 * The predicate (nwaku's shardingPredicate, 31/WAKU2-ENR, 64/WAKU2-NETWORK): a bootstrap record
 * always matches; any other needs a `waku2` field with at least one bit set (and all of
 * required_caps), at least one dialable address (ip/tcp, ip6/tcp6 or `multiaddrs`: what nwaku's
 * toRemotePeerInfo needs), and, when has_cluster, `rs`/`rsv` for our cluster holding at least
 * one of our shards (any shard of the cluster when n_shards is 0). nwaku skips the shard check
 * when its own record has no shards and then also passes records without `waku2`; we always
 * require `waku2`, as RFC 31 asks of discoverers.
 *
 * Sans-I/O: the owner routes the engine's events here (ld_waku_discv5_on_event) and calls
 * ld_waku_discv5_handle_timeout when ld_waku_discv5_next_deadline says; the libuv adapter
 * (discv5_uv.h) does both when a search is attached to it.
 *
 * Intended wiring into the node (a later stage; src/node is not touched here): the node builds
 * its record as today (ld_enr_build_node with udp_port = --discv5-udp-port, cluster and
 * shards), opens a discv5_uv adapter on that port with protocol "d5waku" and the
 * --discv5-bits-per-hop, --discv5-bucket-ip-limit, --discv5-table-ip-limit and
 * --discv5-enr-auto-update values, adds the --discv5-bootstrap-node records (and DNS discovery's)
 * as bootstrap nodes, and attaches this search with the node's cluster and shards. `on_peer`
 * goes to the peer manager (origin discv5) and into the ENR cache that the peer-exchange server
 * samples; ENR_UPDATED events (auto-update, shard changes via ld_discv5_set_enr) refresh the
 * record the node announces. Relay subscriptions that change our shards call
 * ld_waku_discv5_set_shards and re-sign the record.
 *
 * Memory: the emitted-records cache holds at most LD_WAKU_DISCV5_REMEMBER entries (~60 B
 * each). One thread (the engine's). */
#ifndef LD_WAKU_DISCOVERY_WAKU_DISCV5_H
#define LD_WAKU_DISCOVERY_WAKU_DISCV5_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "waku/discovery/discv5.h"
#include "waku/enr/enr.h"

#define LD_WAKU_DISCV5_DEFAULT_INTERVAL_MS 5000
#define LD_WAKU_DISCV5_DEFAULT_REPEAT_MS 600000
#define LD_WAKU_DISCV5_REMEMBER 4096
#define LD_WAKU_DISCV5_MAX_SHARDS 64
#define LD_WAKU_DISCV5_MAX_BOOTNODES 64

typedef struct ld_waku_discv5_config {
  bool has_cluster;
  uint16_t cluster_id;
  size_t n_shards;
  uint16_t shards[LD_WAKU_DISCV5_MAX_SHARDS];
  uint8_t required_caps; /* `waku2` bits a record must have, beyond "at least one" */
  uint32_t interval_ms;  /* pause after a lookup ends */
  uint32_t repeat_ms;    /* a matching record is reported again after this long */
  /* Bootstrap records: always reported, whatever they announce (nwaku's bootnode exception). */
  size_t n_bootnodes;
  uint8_t bootnode_ids[LD_WAKU_DISCV5_MAX_BOOTNODES][LD_DISCV5_NODE_ID_LEN];
} ld_waku_discv5_config_t;

/* No cluster, no shards, no required bits, interval 5 s, repeat 10 min, no bootnodes. */
void ld_waku_discv5_config_default(ld_waku_discv5_config_t *cfg);

/* Adds a bootstrap record's node ID. LD_ERR_LIMIT beyond LD_WAKU_DISCV5_MAX_BOOTNODES. */
int ld_waku_discv5_config_add_bootnode(ld_waku_discv5_config_t *cfg, const ld_enr_t *enr);

/* Sets the cluster and shards (duplicates kept, harmless). LD_ERR_LIMIT beyond
 * LD_WAKU_DISCV5_MAX_SHARDS, LD_ERR_INVALID_ARG for a shard above LD_ENR_MAX_SHARD. */
int ld_waku_discv5_config_set_shards(ld_waku_discv5_config_t *cfg, uint16_t cluster_id,
                                     const uint16_t *shards, size_t n);

/* Why a record does not match (0 when it does). */
typedef enum ld_waku_discv5_verdict {
  LD_WAKU_DISCV5_MATCH = 0,
  LD_WAKU_DISCV5_NO_WAKU2,     /* no `waku2`, no bit set, or not the required bits */
  LD_WAKU_DISCV5_NOT_DIALABLE, /* no TCP or `multiaddrs` address */
  LD_WAKU_DISCV5_NO_SHARDS,    /* no valid `rs`/`rsv` */
  LD_WAKU_DISCV5_OTHER_CLUSTER,
  LD_WAKU_DISCV5_OTHER_SHARDS, /* our cluster, none of our shards */
} ld_waku_discv5_verdict_t;

/* The predicate. Pure; any thread. */
ld_waku_discv5_verdict_t ld_waku_discv5_match(const ld_waku_discv5_config_t *cfg,
                                              const ld_enr_t *enr);

/* A matching record; `enr` is valid only during the call. */
typedef void (*ld_waku_discv5_peer_fn)(void *ud, const ld_enr_t *enr);

typedef struct ld_waku_discv5_stats {
  uint64_t lookups, seen, matched, reported;
  uint64_t rejected[LD_WAKU_DISCV5_OTHER_SHARDS + 1]; /* by verdict */
} ld_waku_discv5_stats_t;

typedef struct ld_waku_discv5 ld_waku_discv5_t;

/* A search over `engine` (borrowed: it must outlive the search). NULL when out of memory or
 * on_peer is NULL. The first lookup runs at the first ld_waku_discv5_handle_timeout at or after
 * now_ms. */
ld_waku_discv5_t *ld_waku_discv5_new(ld_discv5_t *engine, const ld_waku_discv5_config_t *cfg,
                                     ld_waku_discv5_peer_fn on_peer, void *ud, uint64_t now_ms);
void ld_waku_discv5_free(ld_waku_discv5_t *s);

/* Replaces the shards the predicate asks for (records already reported are not re-checked). */
int ld_waku_discv5_set_shards(ld_waku_discv5_t *s, uint16_t cluster_id, const uint16_t *shards,
                              size_t n);

/* An event of the engine, in the order the engine emitted them. May call on_peer. */
void ld_waku_discv5_on_event(ld_waku_discv5_t *s, const ld_discv5_event_t *ev, uint64_t now_ms);

/* When handle_timeout must run next: UINT64_MAX while a lookup of ours runs. */
uint64_t ld_waku_discv5_next_deadline(const ld_waku_discv5_t *s);

/* Starts the next lookup when it is due. A lookup that cannot start (the engine's lookup limit)
 * is tried again after interval_ms. */
void ld_waku_discv5_handle_timeout(ld_waku_discv5_t *s, uint64_t now_ms);

void ld_waku_discv5_get_stats(const ld_waku_discv5_t *s, ld_waku_discv5_stats_t *out);

#endif
