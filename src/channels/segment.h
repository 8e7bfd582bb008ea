/* Message segmentation and reconstruction (LIP-243) for reliable channels.
 *
 * Wire: a SegmentMessage protobuf with the fields that the LIP (master) and its 2025 draft share
 * for data segments:
 *   1 bytes  entire_message_hash  keccak256 of the whole payload (32 bytes)
 *   2 uint32 data_segment_index   0 .. count-1
 *   3 uint32 data_segment_count   2 .. LD_SEGMENT_MAX_SEGMENTS
 *   4 bytes  payload              the segment's bytes (non-empty)
 * Payloads up to the segment size are sent unwrapped, as logos-delivery master, js-waku and the
 * 2025 draft do (the LIP master would wrap them with count 1; a count of 1 is not a segment
 * here, so such a message is delivered as it is). No Reed–Solomon parity is produced; a parity
 * segment (fields 5–7 of the LIP) is refused (LD_ERR_UNSUPPORTED).
 *
 * Decoding is strict, so that an application payload is taken for a segment only when it is
 * one: every field present once with its wire type, no other field, the hash 32 bytes,
 * 2 ≤ count ≤ LD_SEGMENT_MAX_SEGMENTS, index < count, a non-empty payload.
 *
 * Reassembly keeps the segments of each (sender, hash) set until all `count` are there, then
 * checks keccak256 of the concatenation. Bounds: `max_sets` sets and `max_bytes` buffered bytes
 * (beyond: the oldest set is dropped), a set older than `timeout_ms` is dropped. Pure data
 * structure: one thread at a time. */
#ifndef LD_CHANNELS_SEGMENT_H
#define LD_CHANNELS_SEGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

#define LD_SEGMENT_HASH_LEN 32
#define LD_SEGMENT_MAX_SEGMENTS 256u
/* Bytes a segment's wrapper adds at most (hash, index, count, length prefixes). */
#define LD_SEGMENT_OVERHEAD 64u

#define LD_SEGMENT_DEFAULT_MAX_SETS 100u
#define LD_SEGMENT_DEFAULT_MAX_BYTES (32u * 1024 * 1024)
#define LD_SEGMENT_DEFAULT_TIMEOUT_MS 300000u

/* A decoded segment: views into the decoded input. */
typedef struct ld_segment {
  const uint8_t *hash; /* LD_SEGMENT_HASH_LEN bytes */
  uint32_t index, count;
  const uint8_t *payload;
  size_t len;
} ld_segment_t;

/* Appends the encoding of a data segment. LD_ERR_INVALID_ARG for values decoding would refuse,
 * LD_ERR_NOMEM. */
int ld_segment_encode(const uint8_t hash[LD_SEGMENT_HASH_LEN], uint32_t index, uint32_t count,
                      const uint8_t *payload, size_t len, ld_buf_t *out);

/* Decodes `data` as a segment. 0, LD_ERR_MALFORMED (not a segment), LD_ERR_UNSUPPORTED (a parity
 * segment). */
int ld_segment_decode(const uint8_t *data, size_t len, ld_segment_t *out);

typedef struct ld_reassembler ld_reassembler_t;

ld_reassembler_t *ld_reassembler_new(size_t max_sets, size_t max_bytes, uint64_t timeout_ms);
void ld_reassembler_free(ld_reassembler_t *r);

/* What ld_reassembler_add did. */
typedef enum ld_reassembly {
  LD_REASSEMBLY_HELD = 0,     /* kept, the set is not complete */
  LD_REASSEMBLY_COMPLETE,     /* *out holds the whole payload (heap; the caller frees it) */
  LD_REASSEMBLY_DUPLICATE,    /* this index was held already */
  LD_REASSEMBLY_MISMATCH,     /* count differs from the set's: segment discarded */
  LD_REASSEMBLY_HASH_MISMATCH /* complete, but keccak256 differs: the set is dropped */
} ld_reassembly_t;

/* Adds a segment of `sender`'s set at `now_ms`. Returns the outcome (>= 0) or LD_ERR_TOO_LARGE
 * (the segment alone exceeds max_bytes), LD_ERR_NOMEM. */
int ld_reassembler_add(ld_reassembler_t *r, const char *sender, const ld_segment_t *seg,
                       uint64_t now_ms, uint8_t **out, size_t *out_len);

/* Why a set was dropped before it was delivered. */
typedef enum ld_reassembly_loss {
  LD_REASSEMBLY_LOST_EXPIRED = 1,  /* older than the timeout */
  LD_REASSEMBLY_LOST_EVICTED,      /* the oldest set, dropped to make room (max_sets, max_bytes) */
  LD_REASSEMBLY_LOST_HASH_MISMATCH /* complete, but keccak256 differs */
} ld_reassembly_loss_t;

/* Called for each set dropped undelivered, before it is freed: its sender, hash, the segments
 * held of `count`. It must not call into the reassembler. */
typedef void (*ld_reassembler_loss_fn)(void *user_data, const char *sender,
                                       const uint8_t hash[LD_SEGMENT_HASH_LEN], uint32_t held,
                                       uint32_t count, ld_reassembly_loss_t why);

/* Sets (or with NULL clears) the loss reporter of `r`. */
void ld_reassembler_on_loss(ld_reassembler_t *r, ld_reassembler_loss_fn fn, void *user_data);

/* Drops the sets older than the timeout; returns how many, and the next expiry in *next
 * (UINT64_MAX when none). */
size_t ld_reassembler_expire(ld_reassembler_t *r, uint64_t now_ms, uint64_t *next);

/* Sets held and bytes buffered; sets dropped so far (evicted or expired). */
size_t ld_reassembler_sets(const ld_reassembler_t *r);
size_t ld_reassembler_bytes(const ld_reassembler_t *r);
uint64_t ld_reassembler_dropped(const ld_reassembler_t *r);

#endif
