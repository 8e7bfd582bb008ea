/* A set of 32-byte message IDs whose entries expire in insertion order: the seen cache, the
 * message cache index, per-peer IDONTWANT sets and IWANT promises are all built on it.
 *
 * Entries live in a FIFO ring (insertion order) with an open-addressing index keyed by SipHash
 * (ld_hash_bytes), so IDs chosen by remote peers cannot degrade lookups. Every entry carries an
 * expiry and a 64-bit value for the owner. Expiries must be non-decreasing in insertion order
 * (a constant TTL added to a monotonic clock, or to a heartbeat counter): expiry pops from the
 * front. Caller storage, not thread-safe. */
#ifndef LD_P2P_GOSSIPSUB_IDSET_H
#define LD_P2P_GOSSIPSUB_IDSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LD_GS_IDSET_ID_LEN 32

typedef struct ld_gs_idset_entry {
  uint8_t id[LD_GS_IDSET_ID_LEN];
  uint64_t expiry;
  uint64_t value; /* owner's data */
  bool live;      /* false once removed (the ring slot stays until it reaches the front) */
} ld_gs_idset_entry_t;

typedef struct ld_gs_idset {
  ld_gs_idset_entry_t *ring; /* power-of-two capacity; entry of sequence s at s & (cap - 1) */
  size_t ring_cap;
  uint64_t head, tail; /* sequences [head, tail) are in the ring */
  uint64_t *index;     /* slot: hash tag (high 32 bits, odd) | low 32 bits of sequence + 1;
                          0 = empty */
  size_t index_cap;    /* power of two */
  size_t live;         /* live entries */
  size_t max;          /* cap on ring entries (live + removed not yet popped) */
} ld_gs_idset_t;

/* An empty set holding at most `max` entries. Never allocates. */
void ld_gs_idset_init(ld_gs_idset_t *s, size_t max);
/* Frees the memory; the set is empty and reusable. */
void ld_gs_idset_clear(ld_gs_idset_t *s);

/* Inserts `id`. Errors: LD_ERR_EXISTS (a live entry with this id, expired or not — call
 * ld_gs_idset_expire first), LD_ERR_LIMIT (max entries), LD_ERR_NOMEM. */
int ld_gs_idset_add(ld_gs_idset_t *s, const uint8_t id[LD_GS_IDSET_ID_LEN], uint64_t expiry,
                    uint64_t value);

/* The live entry for `id` or NULL. The pointer is valid until the next add, remove or expire. */
ld_gs_idset_entry_t *ld_gs_idset_find(const ld_gs_idset_t *s, const uint8_t *id, size_t id_len);

/* Removes `id` if present; returns whether it was. */
bool ld_gs_idset_remove(ld_gs_idset_t *s, const uint8_t *id, size_t id_len);

/* The keyed hash every set uses for `id` (ld_hash_bytes). Callers that look one ID up in several
 * sets compute it once and use the _h variants, which behave as the functions above. */
uint64_t ld_gs_idset_hash(const uint8_t id[LD_GS_IDSET_ID_LEN]);
int ld_gs_idset_add_h(ld_gs_idset_t *s, const uint8_t id[LD_GS_IDSET_ID_LEN], uint64_t h,
                      uint64_t expiry, uint64_t value);
ld_gs_idset_entry_t *ld_gs_idset_find_h(const ld_gs_idset_t *s,
                                        const uint8_t id[LD_GS_IDSET_ID_LEN], uint64_t h);
bool ld_gs_idset_remove_h(ld_gs_idset_t *s, const uint8_t id[LD_GS_IDSET_ID_LEN], uint64_t h);

/* Pops every entry with expiry <= now from the front; `fn` (may be NULL) sees each live one
 * before it goes. Returns how many live entries expired. */
size_t ld_gs_idset_expire(ld_gs_idset_t *s, uint64_t now,
                          void (*fn)(void *ctx, const ld_gs_idset_entry_t *e), void *ctx);

/* Gives memory back after a burst: shrinks the ring and the index when they are mostly empty.
 * Invalidates entry pointers. Cheap when there is nothing to do; call it now and then. */
void ld_gs_idset_compact(ld_gs_idset_t *s);

static inline size_t ld_gs_idset_size(const ld_gs_idset_t *s) {
  return s->live;
}

/* Ring access in insertion order for sequences in [s->head, s->tail): NULL for removed
 * entries. */
ld_gs_idset_entry_t *ld_gs_idset_at(const ld_gs_idset_t *s, uint64_t seq);

#endif
