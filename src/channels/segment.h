/* Message segmentation and reconstruction (LIP-243) for reliable channels.
 *
 * Wire: a SegmentMessage protobuf, the LIP's fields (master) and the length of its revision:
 *   1 bytes  entire_message_hash     keccak256 of the whole payload (32 bytes)
 *   2 uint32 data_segment_index      data segments: 0 .. count-1
 *   3 uint32 data_segment_count      on every segment: 2 .. LD_SEGMENT_MAX_SEGMENTS
 *   4 bytes  payload                 the segment's bytes (non-empty)
 *   5 uint32 parity_segment_index    parity segments: 0 .. parity_count-1
 *   6 uint32 parity_segment_count    on every segment of a set with parity, else 0 (absent)
 *   7 bool   is_parity               true on parity segments
 *   8 uint64 original_payload_length the payload's length, on every segment of a set with parity
 * Payloads up to the segment size are sent unwrapped, as logos-delivery master, js-waku and the
 * 2025 draft do (the LIP master would wrap them with count 1; a count of 1 is not a segment
 * here, so such a message is delivered as it is).
 *
 * Parity (optional, the sender's choice): Leopard-RS over GF(2^8) (channels/leopard_rs.h), the
 * code of the LIP's reference implementation (nim-segmentation over nim-leopard). Shards are
 * `shard_len` bytes, a multiple of 64: every data segment but the last is shard_len bytes, the
 * last one is sent at its true length and zero-padded to shard_len for the code only; the
 * parity segments are shard_len bytes. A receiver rebuilds the payload from any
 * `data_segment_count` segments of the set, truncating to original_payload_length.
 *
 * Decoding is strict, so that an application payload is taken for a segment only when it is
 * one: every field present at most once with its wire type, no other field, the hash 32 bytes,
 * 2 ≤ count ≤ LD_SEGMENT_MAX_SEGMENTS, a non-empty payload; a data segment: index < count, no
 * parity index; a parity segment: no data index, 1 ≤ parity_count ≤ count,
 * count + parity_count ≤ LD_SEGMENT_MAX_SEGMENTS, parity index < parity_count.
 *
 * Reassembly keeps the segments of each (sender, hash) set until the payload can be rebuilt —
 * all `count` data segments, or `count` segments of both kinds when the set has parity — then
 * checks keccak256 of the result. Segments of a set already delivered are answered DUPLICATE
 * (remembered for the timeout, at most LD_SEGMENT_DONE_MEMORY sets). Bounds: `max_sets` sets
 * and `max_bytes` buffered bytes (beyond: the oldest set is dropped), a set older than
 * `timeout_ms` is dropped; rebuilding from parity takes, transiently, count + 1 shards for the
 * result and NextPow2(NextPow2(parity_count) + count) ≤ 256 shards of work space. Pure data
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
/* The same for a segment of a set with parity (adds parity index and count, is_parity, length). */
#define LD_SEGMENT_PARITY_OVERHEAD 96u
/* Delivered sets remembered so that their late segments are not taken for a new set. */
#define LD_SEGMENT_DONE_MEMORY 256u

#define LD_SEGMENT_DEFAULT_MAX_SETS 100u
#define LD_SEGMENT_DEFAULT_MAX_BYTES (32u * 1024 * 1024)
#define LD_SEGMENT_DEFAULT_TIMEOUT_MS 300000u

/* A decoded segment: views into the decoded input. */
typedef struct ld_segment {
  const uint8_t *hash; /* LD_SEGMENT_HASH_LEN bytes */
  uint32_t index, count;
  const uint8_t *payload;
  size_t len;
  /* parity: is_parity segments use parity_index instead of index; parity_count is 0 for a set
   * without parity; total_len is original_payload_length (0 when absent) */
  bool is_parity;
  uint32_t parity_index, parity_count;
  uint64_t total_len;
} ld_segment_t;

/* Appends the encoding of a data segment of a set without parity. LD_ERR_INVALID_ARG for values
 * decoding would refuse, LD_ERR_NOMEM. */
int ld_segment_encode(const uint8_t hash[LD_SEGMENT_HASH_LEN], uint32_t index, uint32_t count,
                      const uint8_t *payload, size_t len, ld_buf_t *out);

/* Appends the encoding of any segment (all fields of `seg`). LD_ERR_INVALID_ARG for values
 * decoding would refuse, LD_ERR_NOMEM. */
int ld_segment_encode_full(const ld_segment_t *seg, ld_buf_t *out);

/* Decodes `data` as a segment (data or parity). 0, LD_ERR_MALFORMED (not a segment). */
int ld_segment_decode(const uint8_t *data, size_t len, ld_segment_t *out);

/* The `m` parity segments' payloads of the payload split into `k` data segments of `shard_len`
 * bytes (the last possibly shorter, zero-padded here): m buffers of shard_len bytes into
 * parity[]. Errors of ld_rs_encode (LD_ERR_UNSUPPORTED when the counts are out of GF(2^8)). */
int ld_segment_parity(const uint8_t *payload, size_t len, size_t shard_len, uint32_t k, uint32_t m,
                      uint8_t *const parity[]);

/* Parity segments for `k` data segments at `rate_ppm` parity per million data segments:
 * ceil(k · rate_ppm / 10^6) in integers (as nim-segmentation), at most k, and 0 when the set
 * would exceed LD_SEGMENT_MAX_SEGMENTS or Leopard's GF(2^8) range. */
uint32_t ld_segment_parity_count(uint32_t k, uint32_t rate_ppm);

typedef struct ld_reassembler ld_reassembler_t;

ld_reassembler_t *ld_reassembler_new(size_t max_sets, size_t max_bytes, uint64_t timeout_ms);
void ld_reassembler_free(ld_reassembler_t *r);

/* What ld_reassembler_add did. */
typedef enum ld_reassembly {
  LD_REASSEMBLY_HELD = 0,     /* kept, the set is not complete */
  LD_REASSEMBLY_COMPLETE,     /* *out holds the whole payload (heap; the caller frees it) */
  LD_REASSEMBLY_DUPLICATE,    /* this index was held already */
  LD_REASSEMBLY_MISMATCH,     /* counts, length or shard size differ from the set's: discarded */
  LD_REASSEMBLY_HASH_MISMATCH /* complete, but keccak256 differs: the set is dropped */
} ld_reassembly_t;

/* Adds a segment of `sender`'s set at `now_ms`. Returns the outcome (>= 0) or LD_ERR_TOO_LARGE
 * (the segment alone exceeds max_bytes), LD_ERR_NOMEM. A set with parity is rebuilt from any
 * `count` of its segments when its shards are LD_RS_SHARD_ALIGN-aligned, its counts in GF(2^8)
 * and its length known (original_payload_length, or its last data segment held); otherwise it
 * waits for its data segments. */
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
