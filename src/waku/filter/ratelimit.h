/* Per-peer request rate limit of the filter service: one token bucket per peer ID, `volume`
 * tokens per `period`, refilled continuously, each request takes one (nwaku's PerPeerRateLimiter
 * with the filter default of 30 requests per minute). A peer seen for the first time starts with
 * a full bucket.
 *
 * At most `max_peers` buckets are kept; a full bucket is the same as no bucket, so full ones are
 * forgotten by ld_filter_ratelimit_prune and whenever room is needed. When every tracked bucket
 * is in use the request is let through untracked (the switch's connection cap bounds how many
 * peers can ask at once).
 *
 * Times are caller-supplied monotonic milliseconds. Not thread-safe. */
#ifndef LD_WAKU_FILTER_RATELIMIT_H
#define LD_WAKU_FILTER_RATELIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/peerid.h"

/* nwaku FilterDefaultPerPeerRateLimit: 30 requests per minute. */
#define LD_FILTER_RATE_LIMIT_VOLUME 30
#define LD_FILTER_RATE_LIMIT_PERIOD_MS (60u * 1000)
/* Buckets kept at most (peers asking within one period). */
#define LD_FILTER_RATE_LIMIT_MAX_PEERS 4096
/* Largest accepted volume and period (keeps the arithmetic in 64 bits). */
#define LD_FILTER_RATE_LIMIT_MAX_VOLUME 1000000u
#define LD_FILTER_RATE_LIMIT_MAX_PERIOD_MS (24u * 3600 * 1000)

typedef struct ld_filter_ratelimit ld_filter_ratelimit_t;

/* volume 0 or period 0: unlimited (every request passes, nothing is tracked). Values above the
 * maxima are clamped; max_peers 0 means LD_FILTER_RATE_LIMIT_MAX_PEERS. NULL when out of
 * memory. */
ld_filter_ratelimit_t *ld_filter_ratelimit_new(uint32_t volume, uint64_t period_ms,
                                               size_t max_peers);
void ld_filter_ratelimit_free(ld_filter_ratelimit_t *rl);

/* Takes one token from `peer`'s bucket: true when the request is within the limit. */
bool ld_filter_ratelimit_take(ld_filter_ratelimit_t *rl, const ld_peerid_t *peer, uint64_t now);

/* Forgets every bucket that has filled up again. */
void ld_filter_ratelimit_prune(ld_filter_ratelimit_t *rl, uint64_t now);

/* Buckets currently tracked. */
size_t ld_filter_ratelimit_count(const ld_filter_ratelimit_t *rl);

#endif
