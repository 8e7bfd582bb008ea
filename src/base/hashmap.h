/* A hash map from byte-string keys to void* values.
 *
 * Keys are copied into the map; values are borrowed pointers the map never dereferences.
 * Keys may come from remote peers, so buckets are chosen with SipHash-1-3 under a secret key
 * drawn once per process from getrandom(). Open hashing with chaining, O(1) average; the bucket
 * array doubles when the load factor passes 1. Not thread-safe: one thread at a time per map. */
#ifndef LD_BASE_HASHMAP_H
#define LD_BASE_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ld_hashmap ld_hashmap_t;

/* Iteration state: zero-initialise it (ld_hashmap_iter_t it = {0}) or call ld_hashmap_iter_init
 * before the first ld_hashmap_next. */
typedef struct ld_hashmap_iter {
  size_t bucket; /* next bucket to scan (internal) */
  void *next;    /* entry to return next (internal) */
} ld_hashmap_iter_t;

/* Creates an empty map sized for about `initial_capacity` entries (0 is allowed). Returns NULL
 * when out of memory. Free with ld_hashmap_free. */
ld_hashmap_t *ld_hashmap_new(size_t initial_capacity);

/* Frees the map and its key copies; calls `free_value` (when not NULL) on every value first.
 * NULL map is a no-op. */
void ld_hashmap_free(ld_hashmap_t *m, void (*free_value)(void *));

/* Stores `value` under a copy of `key[0..klen)` (klen 0 is a valid key). When the key was
 * present its value is replaced and the previous value is stored in *old_value; otherwise
 * *old_value is set to NULL (old_value may be NULL if the caller does not need it). Returns 0 or
 * LD_ERR_NOMEM (map unchanged). Invalidates iterators unless the key was already present. */
int ld_hashmap_put(ld_hashmap_t *m, const void *key, size_t klen, void *value, void **old_value);

/* Returns the value stored under the key, or NULL when absent. Use ld_hashmap_contains to tell
 * a stored NULL from a missing key. */
void *ld_hashmap_get(const ld_hashmap_t *m, const void *key, size_t klen);
bool ld_hashmap_contains(const ld_hashmap_t *m, const void *key, size_t klen);

/* Removes the key and returns its value (NULL when absent). The map never frees values.
 * During iteration, removing the entry that ld_hashmap_next just returned is safe; removing
 * any other entry, or inserting a new key, invalidates the iterator. */
void *ld_hashmap_remove(ld_hashmap_t *m, const void *key, size_t klen);

size_t ld_hashmap_size(const ld_hashmap_t *m);

/* Removes every entry (calling `free_value` on each value when not NULL), keeping the map. */
void ld_hashmap_clear(ld_hashmap_t *m, void (*free_value)(void *));

static inline void ld_hashmap_iter_init(ld_hashmap_iter_t *it) {
  it->bucket = 0;
  it->next = NULL;
}

/* Advances the iterator. Returns true and stores the entry's key (owned by the map, valid until
 * the entry is removed or the map freed), key length and value through the non-NULL out
 * pointers; returns false when every entry has been visited. Order is unspecified. */
bool ld_hashmap_next(const ld_hashmap_t *m, ld_hashmap_iter_t *it, const void **key, size_t *klen,
                     void **value);

/* Conveniences for 64-bit integer keys (stored as the 8 bytes of the value in host order;
 * do not mix with byte keys of length 8 in the same map). Semantics as above. */
int ld_hashmap_put_u64(ld_hashmap_t *m, uint64_t key, void *value, void **old_value);
void *ld_hashmap_get_u64(const ld_hashmap_t *m, uint64_t key);
void *ld_hashmap_remove_u64(ld_hashmap_t *m, uint64_t key);

/* SipHash-1-3 of `data[0..len)` under the process-wide secret key (seeded on first use; thread-
 * safe). Exposed for other hash tables that need a keyed hash of untrusted bytes. */
uint64_t ld_hash_bytes(const void *data, size_t len);

/* SipHash with an explicit 16-byte key: 1-3 (fast, for tables) and 2-4 (the reference
 * parameters, also used to check the implementation against the published vector). */
uint64_t ld_siphash13(const uint8_t key[16], const void *data, size_t len);
uint64_t ld_siphash24(const uint8_t key[16], const void *data, size_t len);

#endif
