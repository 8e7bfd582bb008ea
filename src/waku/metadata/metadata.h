/* Waku metadata: /vac/waku/metadata/1.0.0 (66/WAKU2-METADATA).
 *
 * Two parts. A pure codec and policy: a node's {cluster ID, shards} to and from one
 * length-prefixed protobuf, and the decision whether a peer may stay connected. And a service on
 * top of the switch: on every new connection (both directions) it sends a request carrying our
 * real cluster and shards (js-waku stores a request's shards as the sender's shard info), reads
 * the response, answers the peer's requests, disconnects a peer of another cluster, and keeps
 * what each peer said for shard-aware peer selection and the REST admin API.
 *
 * Streams follow the request/response rule: one LP-framed request per stream, one LP-framed
 * response, then the responder closes. Frames are at most LD_METADATA_MAX_MSG bytes (nwaku's
 * read limit). */
#ifndef LD_WAKU_METADATA_METADATA_H
#define LD_WAKU_METADATA_METADATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "p2p/peerid.h"
#include "p2p/peerstore.h"
#include "p2p/stream.h"
#include "p2p/switch.h"

#define LD_METADATA_PROTOCOL "/vac/waku/metadata/1.0.0"

/* Largest frame body read or written (nwaku's RpcResponseMaxBytes). */
#define LD_METADATA_MAX_MSG 1024
/* Shard indices are 0..1023 within a cluster (RELAY-SHARDING); larger values read from a peer
 * are dropped. */
#define LD_METADATA_MAX_SHARDS 1024
/* Deadline of one exchange (opening the stream, request, response). */
#define LD_METADATA_TIMEOUT_MS 10000
/* How long a connection we reject stays open for the peer's own metadata request, when it has
 * not asked yet: answered, it learns our cluster before the close (see ld_metadata_new). */
#define LD_METADATA_REJECT_GRACE_MS 3000
/* Inbound metadata streams served at the same time on one connection; more are reset. */
#define LD_METADATA_MAX_INBOUND_STREAMS 4
/* Peers whose metadata is remembered; adding one more forgets the least recently updated. */
#define LD_METADATA_DEFAULT_MAX_PEERS 1000

/* ---- a node's metadata ---------------------------------------------------------------------- */

/* What a node says about itself: its cluster (when it said one) and a set of shards. Plain value
 * type (no heap memory): copy it freely. Zero-initialise it or call ld_metadata_info_init. */
typedef struct ld_metadata_info {
  bool has_cluster;
  uint32_t cluster_id;
  uint16_t n_shards;                              /* number of bits set in `shard_bits` */
  uint8_t shard_bits[LD_METADATA_MAX_SHARDS / 8]; /* bit s%8 of byte s/8 set: shard s */
} ld_metadata_info_t;

void ld_metadata_info_init(ld_metadata_info_t *info);

/* Adds shard `shard`; LD_ERR_INVALID_ARG when it is ≥ LD_METADATA_MAX_SHARDS. Adding a shard
 * already present is a no-op. */
int ld_metadata_info_add_shard(ld_metadata_info_t *info, uint32_t shard);

bool ld_metadata_info_has_shard(const ld_metadata_info_t *info, uint32_t shard);

/* Copies up to `max` shards in ascending order to `out` (may be NULL when max is 0) and returns
 * how many there are in total. */
size_t ld_metadata_info_shards(const ld_metadata_info_t *info, uint16_t *out, size_t max);

/* ---- codec ---------------------------------------------------------------------------------- */

/* Appends one length-prefixed WakuMetadataRequest/Response (the two are identical on the wire)
 * to `out` as nwaku writes it: field 1 when info->has_cluster, then every shard in ascending
 * order as an unpacked field 2 and again as a packed field 3 (omitted when there are none).
 * Returns 0, or LD_ERR_NOMEM (`out` unchanged). Pure function; any thread. */
int ld_metadata_encode(const ld_metadata_info_t *info, ld_buf_t *out);

/* Decodes the length-prefixed message at the start of data[0..len) into `out` (overwritten).
 * Shards come from the packed field 3 when it holds any, otherwise from field 2 in either
 * form; shards ≥ LD_METADATA_MAX_SHARDS are dropped, duplicates merged. Unknown fields are
 * skipped.
 *
 * Returns the bytes consumed (> 0), or: LD_ERR_TRUNCATED when the frame is incomplete (more
 * bytes may complete it); LD_ERR_TOO_LARGE when the length prefix exceeds LD_METADATA_MAX_MSG;
 * LD_ERR_VARINT_NONMINIMAL or LD_ERR_VARINT_TOO_LONG for a malformed prefix; LD_ERR_BAD_PROTOBUF
 * when the body is not a metadata protobuf; LD_ERR_NOMEM. On error `out` is left empty.
 * Pure function; any thread. */
int ld_metadata_decode(const uint8_t *data, size_t len, ld_metadata_info_t *out);

/* ---- policy --------------------------------------------------------------------------------- */

/* True for the errors that mean the peer sent a broken answer (as opposed to not answering):
 * LD_ERR_BAD_PROTOBUF, LD_ERR_TOO_LARGE, LD_ERR_MALFORMED, the varint errors, LD_ERR_TRUNCATED. */
bool ld_metadata_is_decode_error(int err);

/* Decides whether a connection may stay after our request ended with `result` (0, or the error
 * of the exchange) and, on success, the peer's answer `remote`. Returns 0 to keep the
 * connection, or the reason to close it:
 * - LD_ERR_CLUSTER_MISMATCH: the answer has no cluster ID or another one than `local_cluster`;
 * - the decode error itself (see ld_metadata_is_decode_error): the peer speaks the protocol but
 *   answered garbage;
 * - `result` when `require_metadata` is set and the exchange failed otherwise
 *   (LD_ERR_PROTOCOL_UNSUPPORTED: the peer does not speak metadata; LD_ERR_TIMEOUT,
 *   LD_ERR_RESET, …).
 * LD_ERR_CLOSED (the connection is already gone) and LD_ERR_NOMEM (our own failure) always keep.
 * Shard disagreement never closes a connection (nwaku). Pure function. */
int ld_metadata_policy(uint32_t local_cluster, bool require_metadata, int result,
                       const ld_metadata_info_t *remote);

/* ---- service -------------------------------------------------------------------------------- */

/* Every service function must be called on the switch's loop thread; callbacks come from that
 * loop, never from inside these calls. */
typedef struct ld_metadata ld_metadata_t;

typedef struct ld_metadata_config {
  uint32_t cluster_id;
  const uint16_t *shards; /* our configured shards (copied), reported when the shard provider
                             gives none; each < LD_METADATA_MAX_SHARDS */
  size_t n_shards;
  /* Close connections to peers that do not answer metadata (nwaku always does). Off: such
   * peers stay, with unknown shards, as js-waku treats them. Default true. */
  bool require_metadata;
  uint32_t timeout_ms;      /* default LD_METADATA_TIMEOUT_MS */
  uint32_t reject_grace_ms; /* default LD_METADATA_REJECT_GRACE_MS (0 too) */
  size_t max_peers;         /* default LD_METADATA_DEFAULT_MAX_PEERS */
} ld_metadata_config_t;

void ld_metadata_config_default(ld_metadata_config_t *cfg);

typedef struct ld_metadata_events {
  /* A peer's metadata was learnt (from its response to our request, or from its own request
   * while we have no response yet). `info` is valid only during the call. Optional. */
  void (*on_peer)(ld_conn_t *c, const ld_metadata_info_t *info, void *user_data);
  /* The connection is about to be closed with `reason` (see ld_metadata_policy); `info` is the
   * peer's answer or NULL when there was none. Optional. */
  void (*on_rejected)(ld_conn_t *c, int reason, const ld_metadata_info_t *info, void *user_data);
  /* Our request on `c` failed with `err` and the connection stays. Optional. */
  void (*on_failed)(ld_conn_t *c, int err, void *user_data);
} ld_metadata_events_t;

/* Returns the shards we report now (for example the relay's subscribed shards) into `out` (room
 * for `max`) and their count; 0 means "report the configured shards". */
typedef size_t (*ld_metadata_shard_provider_fn)(void *user_data, uint16_t *out, size_t max);

/* Creates the service on `sw`: registers /vac/waku/metadata/1.0.0 and a connection listener
 * that runs the exchange on every new connection. A connection ld_metadata_policy rejects is
 * reported (on_rejected), its peer forgotten and removed from the peer store, and closed. When the
 * peer did answer (another cluster, or none) the close waits until the peer's own metadata request
 * has been answered (at once when it was already; else when the request in progress or the next
 * one is, or after reject_grace_ms), so that it learns our cluster instead of reading an end of
 * stream. NULL on bad configuration (a shard out of range), allocation failure, or when the
 * protocol is already registered. The switch cannot drop handlers or listeners, so the service
 * lives as long as the switch: free it only after ld_switch_close has called its `done`. Loop
 * thread only. */
ld_metadata_t *ld_metadata_new(ld_switch_t *sw, const ld_metadata_config_t *cfg);

/* Frees the service (see ld_metadata_new for when). NULL is a no-op. */
void ld_metadata_free(ld_metadata_t *md);

/* Sets the event callbacks (`ev` is copied; NULL removes them). */
void ld_metadata_set_events(ld_metadata_t *md, const ld_metadata_events_t *ev, void *user_data);

/* A rejected peer is also removed from `ps` (borrowed; must outlive the service or be detached
 * with NULL), as nwaku deletes it from its peer store. */
void ld_metadata_set_peerstore(ld_metadata_t *md, ld_peerstore_t *ps);

/* Replaces the configured shards (copied). LD_ERR_INVALID_ARG for a shard out of range. */
int ld_metadata_set_shards(ld_metadata_t *md, const uint16_t *shards, size_t n);

/* Installs (or with NULL removes) the provider of our current shards. */
void ld_metadata_set_shard_provider(ld_metadata_t *md, ld_metadata_shard_provider_fn fn,
                                    void *user_data);

uint32_t ld_metadata_cluster_id(const ld_metadata_t *md);

/* Our metadata as it would be sent now (cluster plus provider or configured shards). */
void ld_metadata_local(const ld_metadata_t *md, ld_metadata_info_t *out);

/* What `peer` told us, or NULL when nothing is known. The pointer stays valid until the next
 * call that changes the service's state or the next loop iteration. Peers are remembered after
 * they disconnect (up to max_peers). */
const ld_metadata_info_t *ld_metadata_peer(const ld_metadata_t *md, const ld_peerid_t *peer);

/* True when `peer` is known to be in our cluster and on `shard`. */
bool ld_metadata_peer_on_shard(const ld_metadata_t *md, const ld_peerid_t *peer, uint32_t shard);

/* Copies up to `max` IDs of peers known to be in our cluster and on `shard`; returns how many
 * match in total. Order is unspecified. */
size_t ld_metadata_peers_on_shard(const ld_metadata_t *md, uint32_t shard, ld_peerid_t *out,
                                  size_t max);

/* Forgets `peer`. LD_ERR_NOT_FOUND when unknown. */
int ld_metadata_forget(ld_metadata_t *md, const ld_peerid_t *peer);

/* Counters since creation, for metrics and tests. */
typedef struct ld_metadata_stats {
  uint64_t requests_sent;    /* exchanges started by us */
  uint64_t responses_ok;     /* answers decoded */
  uint64_t requests_failed;  /* exchanges that ended without an answer */
  uint64_t requests_served;  /* requests we answered */
  uint64_t rejected_cluster; /* connections closed for LD_ERR_CLUSTER_MISMATCH */
  uint64_t rejected_other;   /* connections closed for another reason */
} ld_metadata_stats_t;

void ld_metadata_get_stats(const ld_metadata_t *md, ld_metadata_stats_t *out);

#endif
