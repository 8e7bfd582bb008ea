/* A bounded cache of verified node records keyed by libp2p peer ID: where the node keeps the
 * ENRs it learns (discv5, peer exchange, DNS discovery, connected peers) and from which the
 * peer-exchange server samples its answers.
 *
 * Entries are copies (ld_enr_t values). Putting a record for a known peer replaces it unless the
 * cached one has a higher sequence number. When the cache is full, the least recently put entry
 * is evicted. Not thread-safe: one thread (the node's loop) at a time. */
#ifndef LD_WAKU_ENR_CACHE_H
#define LD_WAKU_ENR_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/peerid.h"
#include "waku/enr/enr.h"

/* Entries kept when ld_enr_cache_new is given 0. */
#define LD_ENR_CACHE_DEFAULT_MAX 1000

typedef struct ld_enr_cache ld_enr_cache_t;

/* Creates an empty cache holding at most `max_entries` records (0: LD_ENR_CACHE_DEFAULT_MAX).
 * NULL when out of memory. */
ld_enr_cache_t *ld_enr_cache_new(size_t max_entries);

/* Frees the cache and its entries. NULL is a no-op. */
void ld_enr_cache_free(ld_enr_cache_t *c);

/* Stores a copy of `enr` (a verified record) under its peer ID, evicting the least recently put
 * entry when full. Returns 0 (stored or replaced; an equal seq replaces and refreshes),
 * LD_ERR_EXISTS when a record of that peer with a higher seq is cached (kept unchanged),
 * LD_ERR_NOMEM, or the error of ld_enr_peer_id. */
int ld_enr_cache_put(ld_enr_cache_t *c, const ld_enr_t *enr);

/* The cached record of `peer`, or NULL. Valid until the next put or remove. */
const ld_enr_t *ld_enr_cache_get(const ld_enr_cache_t *c, const ld_peerid_t *peer);

/* Forgets `peer`; LD_ERR_NOT_FOUND when it is not cached. */
int ld_enr_cache_remove(ld_enr_cache_t *c, const ld_peerid_t *peer);

size_t ld_enr_cache_size(const ld_enr_cache_t *c);

/* Decides whether a cached record may be handed out (NULL: every record may). */
typedef bool (*ld_enr_filter_fn)(const ld_enr_t *enr, const ld_peerid_t *peer, void *user_data);

/* Picks up to `max` records uniformly at random among those `filter` accepts (reservoir
 * sampling, as nwaku's peer-exchange server) into out[0..) and returns how many were picked.
 * The pointers are valid until the next put or remove. */
size_t ld_enr_cache_sample(const ld_enr_cache_t *c, ld_enr_filter_fn filter, void *user_data,
                           const ld_enr_t **out, size_t max);

/* Visits every entry, most recently put first; stop early by returning false from `fn`. */
void ld_enr_cache_foreach(const ld_enr_cache_t *c,
                          bool (*fn)(const ld_enr_t *enr, const ld_peerid_t *peer, void *ud),
                          void *user_data);

#endif
