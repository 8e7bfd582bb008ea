/* The send side of the Network Reliability Service, sans-I/O: which of our own messages are
 * held by enough distinct peers to be confirmed.
 *
 * A message we send is tracked (its item and the local monotonic time it was tracked). A
 * reconciliation session we initiated and that ended complete tells which of our items the peer
 * lacked (ld_store_sync_presence_fn, session.h "Presence"); every tracked item that
 *   - was tracked no later than the session started (so it was in our set when the session
 *     began),
 *   - is newer than the session window's start plus `skew_ns` (a responder that skips old ranges
 *     answers Skip for ranges ending before its own window), and
 *   - is not among the lacked items
 * is then present at that peer. An item counts each distinct peer once (peers are remembered by
 * a 64-bit digest of their ID); it is confirmed once `confirm_peers` peers hold it. Several
 * distinct peers are asked for because XOR fingerprints do not resist a peer that forges them.
 *
 * Memory: one entry of 48 + 8 × confirm_peers bytes per tracked item (plus the map's), at most
 * `max_tracked`; entries leave at ld_nrs_presence_forget or when their item leaves the window
 * (ld_nrs_presence_expire).
 *
 * One thread; no clock of its own (times are parameters). */
#ifndef LD_WAKU_NRS_PRESENCE_H
#define LD_WAKU_NRS_PRESENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/peerid.h"
#include "waku/core/message.h"
#include "waku/sync/id.h"

#define LD_NRS_MAX_CONFIRM_PEERS 16u
#define LD_NRS_DEFAULT_CONFIRM_PEERS 2u
#define LD_NRS_DEFAULT_MAX_TRACKED 100000u
/* How much newer than a session window's start a tracked item must be to count. */
#define LD_NRS_DEFAULT_SKEW_NS (20ll * 1000000000ll)

typedef struct ld_nrs_presence ld_nrs_presence_t;

/* confirm_peers 1 … LD_NRS_MAX_CONFIRM_PEERS; max_tracked 0: the default. NULL on a bad
 * argument or out of memory. */
ld_nrs_presence_t *ld_nrs_presence_new(size_t confirm_peers, size_t max_tracked, int64_t skew_ns);
void ld_nrs_presence_free(ld_nrs_presence_t *p); /* NULL is a no-op */

/* Tracks `id` from now_ms. Returns 0, LD_ERR_EXISTS (tracked already: its time is kept),
 * LD_ERR_LIMIT (max_tracked), LD_ERR_NOMEM. */
int ld_nrs_presence_track(ld_nrs_presence_t *p, const ld_sync_id_t *id, uint64_t now_ms);

/* One complete session with `peer` that started at started_ms over a window starting at
 * window_start; lacked[0..n): our items the peer lacked. Returns how many items this made
 * confirmed. */
size_t ld_nrs_presence_observe(ld_nrs_presence_t *p, const ld_peerid_t *peer, uint64_t started_ms,
                               int64_t window_start, const ld_sync_id_t *lacked, size_t n);

/* Distinct peers known to hold the item of `hash` (0 when not tracked). */
size_t ld_nrs_presence_count(const ld_nrs_presence_t *p, const uint8_t hash[LD_WAKU_HASH_LEN]);
bool ld_nrs_presence_confirmed(const ld_nrs_presence_t *p, const uint8_t hash[LD_WAKU_HASH_LEN]);
bool ld_nrs_presence_tracked(const ld_nrs_presence_t *p, const uint8_t hash[LD_WAKU_HASH_LEN]);

/* Tracked items not yet confirmed. */
size_t ld_nrs_presence_unconfirmed(const ld_nrs_presence_t *p);
size_t ld_nrs_presence_size(const ld_nrs_presence_t *p);

/* Stops tracking one item (0 or LD_ERR_NOT_FOUND). */
int ld_nrs_presence_forget(ld_nrs_presence_t *p, const uint8_t hash[LD_WAKU_HASH_LEN]);

/* Stops tracking every item with time < before; returns how many. */
size_t ld_nrs_presence_expire(ld_nrs_presence_t *p, int64_t before);

#endif
