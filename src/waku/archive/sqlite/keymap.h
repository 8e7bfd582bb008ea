/* The SQLite archive's map from message hash to the rowids of the rows that may hold it.
 *
 * A hash lookup through the table's unique index descends two B-trees per hash (the index, then
 * the row); with the map it descends one (the row, by rowid). The map is kept in memory by the
 * writer thread and read by the query threads:
 *
 * - Each entry is 8 bytes: a 28-bit tag (the hash's first 28 bits) and a 36-bit rowid, in an
 *   open-addressing table (linear probing) whose slot is chosen from the tag with the process's
 *   secret SipHash key, so stored messages cannot be ground into one run of slots. 16 MB per
 *   million messages at most load (the table doubles past 3/4 full).
 * - A lookup returns every rowid whose tag matches: candidates, which the caller checks against
 *   the full hash in the row. Stale entries (of deleted rows) are harmless for that reason: the
 *   row is gone, or a later row reuses the rowid and its hash does not match. The writer rebuilds
 *   the map when stale entries pass a quarter of it.
 * - "Complete" means every committed row has an entry. The writer adds a batch's entries after
 *   its COMMIT and before acknowledging it, so a query issued after an acknowledgement finds the
 *   row. When the map cannot be complete (a rowid out of range, no memory, a table without
 *   rowids), it is marked unusable and lookups fall back to the hash index.
 *
 * Thread model: one writer calls put, replace and invalidate; any thread calls find. */
#ifndef LD_WAKU_ARCHIVE_SQLITE_KEYMAP_H
#define LD_WAKU_ARCHIVE_SQLITE_KEYMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "waku/core/message.h"

/* Rowids the map can hold: 1 … 2^36 − 1. */
#define LD_SQ_KEYMAP_MAX_ROWID ((1ll << 36) - 1)
/* Entries at most (the table is then 512 MB); a larger archive looks hashes up in the index. */
#define LD_SQ_KEYMAP_MAX_ENTRIES ((size_t)1 << 25)

/* A table of entries: the map's, or one the writer builds before putting it in place. */
typedef struct ld_sq_keytab {
  uint64_t *slots; /* 0: empty; otherwise tag << 36 | rowid */
  size_t mask;     /* slots − 1 (a power of two minus one) */
  size_t used;     /* entries, stale ones included */
} ld_sq_keytab_t;

typedef struct ld_sq_keymap {
  uv_rwlock_t lock; /* find holds it shared; put and replace exclusively */
  ld_sq_keytab_t tab;
  size_t stale;  /* entries whose rows were deleted (as far as the writer knows) */
  bool complete; /* every committed row has an entry: lookups may trust a miss */
} ld_sq_keymap_t;

/* A committed row's key and rowid, as the writer adds it. */
typedef struct ld_sq_keyrow {
  const uint8_t *hash; /* LD_WAKU_HASH_LEN bytes */
  int64_t rowid;
} ld_sq_keyrow_t;

/* A row a lookup may find: its rowid and the index of the hash asked for. */
typedef struct ld_sq_candidate {
  int64_t rowid;
  size_t hash_index;
} ld_sq_candidate_t;

/* An empty, incomplete map. Returns 0 or LD_ERR_NOMEM. */
int ld_sq_keymap_init(ld_sq_keymap_t *m);

/* Frees the entries and the lock. */
void ld_sq_keymap_destroy(ld_sq_keymap_t *m);

/* An empty table sized for `expected` entries without growing. Returns 0, LD_ERR_LIMIT when
 * `expected` passes LD_SQ_KEYMAP_MAX_ENTRIES, or LD_ERR_NOMEM. */
int ld_sq_keytab_init(ld_sq_keytab_t *t, size_t expected);

/* Adds (hash, rowid) to a table nobody else reads yet, doubling it past 3/4 full. Returns 0,
 * LD_ERR_INVALID_ARG for a rowid outside 1 … LD_SQ_KEYMAP_MAX_ROWID, LD_ERR_LIMIT past
 * LD_SQ_KEYMAP_MAX_ENTRIES or LD_ERR_NOMEM. */
int ld_sq_keytab_put(ld_sq_keytab_t *t, const uint8_t hash[LD_WAKU_HASH_LEN], int64_t rowid);

void ld_sq_keytab_free(ld_sq_keytab_t *t);

/* Writer: puts the complete table `t` in place of the map's entries (t is taken over and left
 * empty); the map becomes complete with no stale entries. */
void ld_sq_keymap_replace(ld_sq_keymap_t *m, ld_sq_keytab_t *t);

/* Writer: adds the entries of n committed rows. On failure (LD_ERR_INVALID_ARG, LD_ERR_LIMIT,
 * LD_ERR_NOMEM) the map is marked incomplete. Growth rehashes outside the lock, so readers wait
 * only for the swap and the n additions. */
int ld_sq_keymap_put(ld_sq_keymap_t *m, const ld_sq_keyrow_t *rows, size_t n);

/* Writer: `n` rows were deleted; their entries go stale. True when stale entries now pass a
 * quarter of the map, so the writer should rebuild it. */
bool ld_sq_keymap_note_deleted(ld_sq_keymap_t *m, uint64_t n);

/* Writer: the map no longer matches the table (an unknown writer, a failed addition). */
void ld_sq_keymap_invalidate(ld_sq_keymap_t *m);

/* The candidates for n hashes, in out[0 … *n_out). Returns 0, LD_ERR_UNSUPPORTED when the map
 * is incomplete, or LD_ERR_LIMIT when there are more than `max` candidates (the caller then
 * uses the index). A hash with no candidate is not stored. */
int ld_sq_keymap_find(ld_sq_keymap_t *m, const uint8_t (*hashes)[LD_WAKU_HASH_LEN], size_t n,
                      ld_sq_candidate_t *out, size_t max, size_t *n_out);

#endif
