/* Service-peer selection for the Messaging API's clients (filter, lightpush, store).
 *
 * Candidates for a protocol come in this order, each peer once:
 *   1. the service node configured for it (ld_node_config_t.service_node: --storenode for
 *      LD_WAKU_STORE_CODEC, --filternode for LD_WAKU_FILTER_SUBSCRIBE_CODEC, --lightpushnode for
 *      LD_WAKU_LIGHTPUSH_CODEC and LD_WAKU_LEGACY_LIGHTPUSH_CODEC), whatever the peer store says;
 *   2. connected peers whose identified protocols (peer store) include the protocol, in the
 *      switch's connection order;
 *   3. other peers of the peer store that support the protocol and have an address, most
 *      recently seen first.
 * Never the node itself, never a peer in the caller's exclusion list, never a peer marked failed
 * (until its failure expires).
 *
 * What an exchange with a peer says about it (ld_service_outcome_of, the same rule for
 * lightpush, filter and store) decides how long it is skipped (ld_service_peers_report):
 *   served     2xx: the peer's count of transient outcomes is reset.
 *   refused    4xx but 429, the request's fault: nothing, the peer is fine.
 *   transient  429, 5xx, a store's 300 archive error, a timeout, a reset stream (the service has
 *              no relay peer yet, is overloaded or failed internally): the same peer is asked
 *              again at the next round. The n-th consecutive one skips it for
 *              ld_service_peers_backoff_ms(n): half a second for the first
 *              LD_SERVICE_PEERS_RETRY_FAST, then 2 s doubling up to LD_SERVICE_PEERS_RETRY_MAX_MS,
 *              so repeated failures set a growing pause.
 *   broken     a dial failure or a protocol failure (the peer does not speak the protocol, the
 *              answer does not decode, the connection went away): marked failed for
 *              fail_expiry_ms.
 * The peer list holds at most LD_SERVICE_PEERS_MAX_FAILED peers; when full, a peer that is not
 * failed (else the one whose failure expires first) is replaced.
 *
 * ld_service_peers_select is the pure part (a view of the configured node, the peer store and
 * the connected peers in; candidates out) and is what unit tests exercise;
 * ld_service_peers_pick builds that view from a started node. ld_service_peers_connect gets a
 * connection to a chosen peer.
 *
 * Times are monotonic milliseconds supplied by the caller: ld_now_ms() (base/clock.h), since
 * several clients (edge filter, store reliability) share one selector and its failure list.
 * Every call on the node's loop thread (one thread at a time for an object without a node). */
#ifndef LD_MESSAGING_SERVICE_PEERS_H
#define LD_MESSAGING_SERVICE_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "node/node.h"
#include "p2p/multiaddr.h"
#include "p2p/peerid.h"
#include "p2p/peerstore.h"
#include "p2p/switch.h"

/* Peers remembered (failed, or counting transient outcomes) at most. */
#define LD_SERVICE_PEERS_MAX_FAILED 64
/* How long a failed (broken) peer is skipped by default. */
#define LD_SERVICE_PEERS_DEFAULT_FAIL_EXPIRY_MS (60u * 1000)
/* Back-off after transient outcomes: the first LD_SERVICE_PEERS_RETRY_FAST consecutive ones skip
 * the peer for LD_SERVICE_PEERS_RETRY_ROUND_MS (less than a round of the Messaging API, 1 s: it
 * is asked again at the next round, never within the same one); the n-th after them for
 * LD_SERVICE_PEERS_RETRY_BASE_MS · 2^(n - LD_SERVICE_PEERS_RETRY_FAST), at most
 * LD_SERVICE_PEERS_RETRY_MAX_MS. */
#define LD_SERVICE_PEERS_RETRY_FAST 4u
#define LD_SERVICE_PEERS_RETRY_ROUND_MS 500u
#define LD_SERVICE_PEERS_RETRY_BASE_MS 1000u
#define LD_SERVICE_PEERS_RETRY_MAX_MS (30u * 1000)
/* Connected peers examined per pick at most (connections beyond are ignored). */
#define LD_SERVICE_PEERS_MAX_CONNECTED 256
/* Peer-store peers examined per pick at most. */
#define LD_SERVICE_PEERS_MAX_KNOWN 256

/* One candidate. Plain value. */
typedef struct ld_service_peer {
  ld_peerid_t id;
  ld_multiaddr_t addr; /* dialable, ending in /p2p/<id>; len 0 when none is known (a peer that
                          only dialed us: usable while its connection lasts) */
  bool connected;      /* a connection to it existed when picked */
  bool configured;     /* it is the configured service node */
} ld_service_peer_t;

typedef struct ld_service_peers ld_service_peers_t;

/* Creates the selector for `node` (may be NULL: then only ld_service_peers_select and the
 * failure list work, and pick returns 0). `fail_expiry_ms` 0 means
 * LD_SERVICE_PEERS_DEFAULT_FAIL_EXPIRY_MS. The node must outlive the selector. NULL when out of
 * memory. */
ld_service_peers_t *ld_service_peers_new(ld_node_t *node, uint32_t fail_expiry_ms);

/* NULL is a no-op. */
void ld_service_peers_free(ld_service_peers_t *sp);

/* Remembers `peer` as failed until now_ms + fail_expiry_ms (a peer already listed gets the new
 * expiry). */
void ld_service_peers_mark_failed(ld_service_peers_t *sp, const ld_peerid_t *peer, uint64_t now_ms);

/* What one exchange with a service peer says about the peer (see the top). */
typedef enum ld_service_outcome {
  LD_SERVICE_SERVED = 0,
  LD_SERVICE_REFUSED,
  LD_SERVICE_TRANSIENT,
  LD_SERVICE_BROKEN,
} ld_service_outcome_t;

/* "served", "refused", "transient", "broken". */
const char *ld_service_outcome_name(ld_service_outcome_t o);

/* The outcome of an exchange that ended with `err` (0: an answer was decoded; else the client's
 * LD_ERR_*) and the answer's `status` (lightpush v3, filter v2 and store v3 codes; ignored when
 * err is not 0): err LD_ERR_TIMEOUT or LD_ERR_RESET → transient, any other err → broken; 2xx →
 * served; 429, 5xx and 300 (the BAD_RESPONSE a store service answers for an archive error) →
 * transient; other 4xx → refused; anything else → broken. Pure. */
ld_service_outcome_t ld_service_outcome_of(int err, uint32_t status);

/* The pause after the n-th consecutive transient outcome (n ≥ 1; see the constants). Pure. */
uint64_t ld_service_peers_backoff_ms(uint32_t n);

/* Records the outcome of an exchange with `peer` started at `started_ms` and ended at `now_ms`
 * (see the top). A transient outcome of an exchange started before the last one that was counted
 * ended (exchanges in flight side by side: several tasks pushed in the same round) is not
 * counted again. */
void ld_service_peers_report(ld_service_peers_t *sp, const ld_peerid_t *peer,
                             ld_service_outcome_t outcome, uint64_t started_ms, uint64_t now_ms);

/* Consecutive transient outcomes of `peer` counted since it was last served (0 when unknown). */
uint32_t ld_service_peers_transient_count(const ld_service_peers_t *sp, const ld_peerid_t *peer);

/* Forgets a failure and the peer's transient count (a no-op when the peer is not listed). */
void ld_service_peers_clear_failed(ld_service_peers_t *sp, const ld_peerid_t *peer);

/* True when `peer` is listed as failed and its entry has not expired at now_ms. */
bool ld_service_peers_failed(const ld_service_peers_t *sp, const ld_peerid_t *peer,
                             uint64_t now_ms);

/* The input of a selection; every field may be NULL / 0. Borrowed for the call. */
typedef struct ld_service_peers_view {
  const ld_peerid_t *self;               /* never picked */
  const ld_multiaddr_t *configured;      /* the configured service node, with /p2p/<id> */
  const ld_peerstore_t *peerstore;       /* protocols and addresses */
  const ld_peerid_t *connected;          /* peers with a live connection, in preference order */
  const ld_multiaddr_t *connected_addrs; /* parallel to `connected`: a dialable address of each
                                            (len 0 when none; NULL: none known for any) */
  size_t n_connected;
} ld_service_peers_view_t;

/* Writes up to `max` candidates for `protocol` (not NULL) to `out` in the order described at the
 * top, skipping the `n_exclude` peers of `exclude` (may be NULL) and the failed ones, and returns
 * how many were written. An address is taken from the configuration, else from the peer store
 * (its first address), else from connected_addrs. Expired failures are dropped. */
size_t ld_service_peers_select(ld_service_peers_t *sp, const ld_service_peers_view_t *view,
                               const char *protocol, const ld_peerid_t *exclude, size_t n_exclude,
                               uint64_t now_ms, ld_service_peer_t *out, size_t max);

/* ld_service_peers_select over the node's configuration, peer store and live connections (the
 * address of an outbound connection is its remote address). 0 without a node or before it
 * started. */
size_t ld_service_peers_pick(ld_service_peers_t *sp, const char *protocol,
                             const ld_peerid_t *exclude, size_t n_exclude, uint64_t now_ms,
                             ld_service_peer_t *out, size_t max);

/* Connected peers supporting `protocol` by the peer store, plus the configured service node of
 * that protocol when it is connected (counted once), failures ignored: the edge counts of
 * health.h. 0 without a started node. */
size_t ld_service_peers_count_connected(const ld_service_peers_t *sp, const char *protocol);

/* The configured service slot for a protocol ID, or LD_NODE_SERVICES when none (pure). */
ld_node_service_t ld_service_peers_service_of(const char *protocol);

/* ---- connections ---------------------------------------------------------------------------- */

/* A connection attempt; cancel it with ld_service_peers_connect_cancel. */
typedef struct ld_service_dial ld_service_dial_t;

/* Called once with the connection (err 0) or with NULL and the switch's dial error. */
typedef void (*ld_service_dial_fn)(ld_conn_t *c, int err, void *user_data);

/* Gets a connection to `peer` on `sw`: an existing connection to peer->id when there is one
 * (handed over from the loop, not from inside this call), else a dial of peer->addr. `cb` is
 * called once from the loop unless the attempt is cancelled first. *out (may be NULL) receives
 * the handle, valid until `cb` has been called or the attempt cancelled. Returns 0, or
 * LD_ERR_INVALID_ARG (NULL arguments), LD_ERR_NOT_FOUND (no connection and no address),
 * LD_ERR_NOMEM, or the direct errors of ld_switch_dial (LD_ERR_CLOSED, LD_ERR_UNSUPPORTED,
 * LD_ERR_TOO_MANY_CONNECTIONS, …); then `cb` is never called. */
int ld_service_peers_connect(ld_switch_t *sw, const ld_service_peer_t *peer, ld_service_dial_fn cb,
                             void *user_data, ld_service_dial_t **out);

/* Cancels an attempt whose callback has not been called yet: the callback is never called. The
 * handle's memory is reclaimed when the switch reports the dial (at the latest when it closes).
 * Not valid after the callback ran. */
void ld_service_peers_connect_cancel(ld_service_dial_t *d);

#endif
