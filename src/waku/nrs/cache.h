/* The recent-message cache of the Network Reliability Service: the bodies of the messages in the
 * rolling window, so that what a reconciliation finds a peer lacks can be pushed to it by
 * transfer (the NRS's stand-in for a store node's archive).
 *
 * Entries are keyed by message hash and hold the pubsub topic and an owned copy of the message.
 * ld_nrs_cache_prune drops every entry whose timestamp is older than a time (the window's
 * start); when `max_bytes` would be passed the oldest entries (by insertion) go first.
 *
 * Memory: the message's encoded fields plus about 120 bytes per entry, at most max_bytes of
 * message data (default 64 MiB: 7 minutes at 150 msg/s of 1 KiB).
 *
 * One thread; no clock of its own. */
#ifndef LD_WAKU_NRS_CACHE_H
#define LD_WAKU_NRS_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "waku/core/message.h"

#define LD_NRS_CACHE_DEFAULT_MAX_BYTES (64u * 1024 * 1024)

typedef struct ld_nrs_cache ld_nrs_cache_t;

/* max_bytes 0: the default. NULL when out of memory. */
ld_nrs_cache_t *ld_nrs_cache_new(size_t max_bytes);
void ld_nrs_cache_free(ld_nrs_cache_t *c); /* NULL is a no-op */

/* Keeps a copy of `msg` on `pubsub_topic` under `hash`. Returns 0, LD_ERR_EXISTS (kept already),
 * LD_ERR_TOO_LARGE (a message larger than max_bytes), LD_ERR_NOMEM. */
int ld_nrs_cache_put(ld_nrs_cache_t *c, const char *pubsub_topic, const ld_waku_message_t *msg,
                     const uint8_t hash[LD_WAKU_HASH_LEN]);

/* The message kept under `hash` and its pubsub topic (valid until the cache next changes), or
 * false. */
bool ld_nrs_cache_get(const ld_nrs_cache_t *c, const uint8_t hash[LD_WAKU_HASH_LEN],
                      const char **pubsub_topic, const ld_waku_message_t **msg);

/* Drops entries with timestamp < before; returns how many. */
size_t ld_nrs_cache_prune(ld_nrs_cache_t *c, int64_t before);

size_t ld_nrs_cache_size(const ld_nrs_cache_t *c);
size_t ld_nrs_cache_bytes(const ld_nrs_cache_t *c);

#endif
