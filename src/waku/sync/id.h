/* Store-sync items (nwaku's SyncID) and range fingerprints.
 *
 * An item is (timestamp, hash): the message's own timestamp in Unix nanoseconds and its 32-byte
 * deterministic Waku message hash. Items are ordered by timestamp (signed), then by the hash's
 * bytes (memcmp order), as nwaku's waku_store_sync/common.nim `cmp` does. A range's fingerprint
 * is the XOR of the hashes of its items (32 zero bytes for an empty range): XOR is its own
 * inverse, so adding or removing one item updates a cached fingerprint in O(1), and the
 * fingerprint of [a, b] is prefix(b) XOR prefix(a).
 *
 * Range bounds are items too. Bounds sent on the wire carry a zero hash (the hash travels only
 * when two consecutive bounds share a timestamp, and then only as a prefix), so a range
 * [(t1, 0…0), (t2, 0…0)] holds the items with t1 ≤ time < t2 (and any with an all-zero hash at
 * t2). LD_SYNC_ID_MIN / _MAX bound everything.
 *
 * Header-only helpers, pure; any thread. */
#ifndef LD_WAKU_SYNC_ID_H
#define LD_WAKU_SYNC_ID_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define LD_SYNC_HASH_LEN 32
#define LD_SYNC_FP_LEN 32

typedef struct ld_sync_id {
  int64_t time; /* message timestamp, Unix ns */
  uint8_t hash[LD_SYNC_HASH_LEN];
} ld_sync_id_t;

/* A fingerprint in four native words (XOR is byte-order free); ld_sync_fp_{load,store} convert
 * from and to the 32 wire bytes. */
typedef struct ld_sync_fp {
  uint64_t w[4];
} ld_sync_fp_t;

static inline int ld_sync_id_cmp(const ld_sync_id_t *a, const ld_sync_id_t *b) {
  if (a->time != b->time)
    return a->time < b->time ? -1 : 1;
  return memcmp(a->hash, b->hash, LD_SYNC_HASH_LEN);
}

/* (time, 32 zero bytes): the form of every bound decoded from the wire (but a dt == 0 one). */
static inline ld_sync_id_t ld_sync_id_bound(int64_t time) {
  ld_sync_id_t id;
  id.time = time;
  memset(id.hash, 0, sizeof id.hash);
  return id;
}

static inline ld_sync_id_t ld_sync_id_min(void) {
  return ld_sync_id_bound(INT64_MIN);
}

static inline ld_sync_id_t ld_sync_id_max(void) {
  ld_sync_id_t id;
  id.time = INT64_MAX;
  memset(id.hash, 0xff, sizeof id.hash);
  return id;
}

static inline void ld_sync_fp_zero(ld_sync_fp_t *fp) {
  fp->w[0] = fp->w[1] = fp->w[2] = fp->w[3] = 0;
}

static inline void ld_sync_fp_xor(ld_sync_fp_t *fp, const ld_sync_fp_t *other) {
  fp->w[0] ^= other->w[0];
  fp->w[1] ^= other->w[1];
  fp->w[2] ^= other->w[2];
  fp->w[3] ^= other->w[3];
}

/* Folds a 32-byte hash into `fp`. */
static inline void ld_sync_fp_xor_hash(ld_sync_fp_t *fp, const uint8_t hash[LD_SYNC_HASH_LEN]) {
  uint64_t w[4];
  memcpy(w, hash, sizeof w);
  fp->w[0] ^= w[0];
  fp->w[1] ^= w[1];
  fp->w[2] ^= w[2];
  fp->w[3] ^= w[3];
}

static inline bool ld_sync_fp_equal(const ld_sync_fp_t *a, const ld_sync_fp_t *b) {
  return ((a->w[0] ^ b->w[0]) | (a->w[1] ^ b->w[1]) | (a->w[2] ^ b->w[2]) | (a->w[3] ^ b->w[3])) ==
         0;
}

static inline void ld_sync_fp_load(ld_sync_fp_t *fp, const uint8_t bytes[LD_SYNC_FP_LEN]) {
  memcpy(fp->w, bytes, LD_SYNC_FP_LEN);
}

static inline void ld_sync_fp_store(const ld_sync_fp_t *fp, uint8_t bytes[LD_SYNC_FP_LEN]) {
  memcpy(bytes, fp->w, LD_SYNC_FP_LEN);
}

#endif
