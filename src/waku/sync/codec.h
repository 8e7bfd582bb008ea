/* The store-sync reconciliation payload (nwaku's RangesData), exchanged as length-prefixed frames
 * on /vac/waku/reconciliation/1.0.0 (LD_WAKU_RECONCILIATION_CODEC), byte for byte as nwaku's
 * waku_store_sync/codec.nim writes and reads it (digest waku.md §7.3; its code, not the
 * waku-org/specs sync.md text, which differs):
 *
 *   payload := varint n ; n × (varint len ‖ pubsub topic)      the sender's configured topics
 *              varint m ; m × (varint len ‖ content topic)
 *              varint T0                                       lower bound of the first range
 *              ranges × { varint dt                            upper.time − previous upper time
 *                         [dt == 0: u8 k ‖ k bytes]            upper.hash prefix, see below
 *                         u8 type                              0 Skip, 1 Fingerprint, 2 ItemSet
 *                         [1: 32-byte fingerprint]
 *                         [2: varint count ‖ count × (varint Δtime ‖ 32-byte hash) ‖ u8 reconciled]
 * } no ranges := the single byte 00 (topics are not written then)
 *
 * Integers are LEB128 (protobuf) varints of the timestamps cast to uint64; differences wrap
 * modulo 2^64. Each range's lower bound is the previous range's upper time with a zero hash (the
 * first one: T0); an upper bound's hash travels only when dt == 0, as its first k bytes, k being
 * the position of the first byte that differs from the first range's lower-bound hash, plus one
 * (32 when equal); the decoder fills the rest with zeros. The item times of an item set are
 * deltas from the previous item, the first one from 0. nwaku's own quirks, kept for
 * compatibility: a payload of at most one byte decodes as "no ranges"; the range loop runs while
 * more than one byte remains, so one trailing byte is ignored. nwaku's decoder reads at most
 * 9-byte varints (and needs 9 bytes left when it reads T0 or an item time), so values at or above
 * 2^63 (negative timestamps, backward steps) and unrealistically small timestamps do not reach an
 * nwaku peer; real Unix-nanosecond timestamps always do.
 *
 * Decoding is stricter than nwaku's where nwaku would read garbage (it does not check): every
 * read goes through the bounds-checked cursor; a range whose upper time falls below its lower
 * bound (the wrap-around nwaku's int64 addition would trap on), a prefix longer than 32 bytes, a
 * type above 2, a reconciled byte above 1, item-set items out of order or outside their range's
 * times, and anything above the limits fail with a named error. Nothing from the input is
 * borrowed: a decoded payload owns its topics, ranges and items.
 *
 * Pure functions (no I/O, no global state); one thread at a time per payload. */
#ifndef LD_WAKU_SYNC_CODEC_H
#define LD_WAKU_SYNC_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "waku/core/codecs.h"
#include "waku/sync/id.h"

#define LD_SYNC_RECONCILIATION_PROTOCOL LD_WAKU_RECONCILIATION_CODEC

enum {
  LD_SYNC_RANGE_SKIP = 0,
  LD_SYNC_RANGE_FINGERPRINT = 1,
  LD_SYNC_RANGE_ITEM_SET = 2,
};

/* Default caps on one received payload (ld_sync_limits_default). nwaku caps nothing (it reads
 * reconciliation frames with readLp(int.high)). Memory of one decoded payload at the caps:
 * 4 MiB of input (the caller's), at most 32,768 ranges (≈ 3.1 MB) and 127,100 item-set entries
 * (4 MiB / 33 bytes each: ≈ 5.1 MB). */
#define LD_SYNC_DEFAULT_MAX_PAYLOAD (4u * 1024 * 1024)
#define LD_SYNC_DEFAULT_MAX_RANGES 32768u
#define LD_SYNC_DEFAULT_MAX_TOPICS 1024u   /* per list: nwaku's clusters have up to 1024 shards */
#define LD_SYNC_DEFAULT_MAX_TOPIC_LEN 512u /* bytes */
/* Smallest wire size of one item-set entry (1-byte delta + hash). */
#define LD_SYNC_MIN_ITEM_WIRE_LEN (1 + LD_SYNC_HASH_LEN)

typedef struct ld_sync_limits {
  size_t max_payload;   /* bytes of one payload (frame body) */
  size_t max_ranges;    /* ranges in one payload */
  size_t max_items;     /* item-set entries over all ranges of one payload */
  size_t max_topics;    /* topics in each list */
  size_t max_topic_len; /* bytes of one topic */
} ld_sync_limits_t;

/* The defaults above; max_items follows max_payload. */
void ld_sync_limits_default(ld_sync_limits_t *l);

/* A topic: `len` bytes, NUL-terminated (not counted), owned by its payload. */
typedef struct ld_sync_topic {
  char *data;
  size_t len;
} ld_sync_topic_t;

/* One range. Its lower bound is not stored: see ld_sync_payload_lower. */
typedef struct ld_sync_range {
  ld_sync_id_t upper;
  uint8_t type;                        /* LD_SYNC_RANGE_* */
  bool reconciled;                     /* ITEM_SET */
  uint8_t fingerprint[LD_SYNC_FP_LEN]; /* FINGERPRINT */
  size_t first_item, n_items;          /* ITEM_SET: items[first_item .. first_item + n_items) */
} ld_sync_range_t;

/* A payload. Caller storage: ld_sync_payload_init before use, ld_sync_payload_clear to release.
 * `start` is the first range's lower bound; its hash is only the reference of the upper-bound
 * hash prefixes (always zero in what nwaku and this engine produce). */
typedef struct ld_sync_payload {
  ld_sync_topic_t *pubsub_topics;
  size_t n_pubsub_topics;
  ld_sync_topic_t *content_topics;
  size_t n_content_topics;
  ld_sync_id_t start;
  ld_sync_range_t *ranges;
  size_t n_ranges, ranges_cap;
  ld_sync_id_t *items;
  size_t n_items, items_cap;
} ld_sync_payload_t;

void ld_sync_payload_init(ld_sync_payload_t *p);

/* Releases everything; the payload is empty and reusable. */
void ld_sync_payload_clear(ld_sync_payload_t *p);

/* Drops topics, ranges and items but keeps the range and item memory; start becomes `start`. */
void ld_sync_payload_reset(ld_sync_payload_t *p, const ld_sync_id_t *start);

/* Appends a copy of a topic to the pubsub (content = false) or content topic list.
 * Errors: LD_ERR_NOMEM. */
int ld_sync_payload_add_topic(ld_sync_payload_t *p, bool content, const char *topic, size_t len);

/* Appends a range ending at `upper` (its lower bound is the previous range's upper time, or
 * start). Errors: LD_ERR_NOMEM (nothing appended). */
int ld_sync_payload_add_skip(ld_sync_payload_t *p, const ld_sync_id_t *upper);
int ld_sync_payload_add_fingerprint(ld_sync_payload_t *p, const ld_sync_id_t *upper,
                                    const ld_sync_fp_t *fp);
/* `items` (n of them, may be NULL when n is 0) are copied; they must be in ascending order. */
int ld_sync_payload_add_item_set(ld_sync_payload_t *p, const ld_sync_id_t *upper,
                                 const ld_sync_id_t *items, size_t n, bool reconciled);

/* The items of an ITEM_SET range (NULL when it has none). */
static inline const ld_sync_id_t *ld_sync_range_items(const ld_sync_payload_t *p,
                                                      const ld_sync_range_t *r) {
  return r->n_items > 0 ? p->items + r->first_item : NULL;
}

/* Lower bound of range i as a receiver sees it: (start time or range i−1's upper time, zero
 * hash). */
ld_sync_id_t ld_sync_payload_lower(const ld_sync_payload_t *p, size_t i);

/* True when the payload has no range, or only Skip ranges: a session ends on it. */
bool ld_sync_payload_all_skip(const ld_sync_payload_t *p);

/* Appends the encoding of `p` (a frame body, no length prefix) to `out`.
 * Errors: LD_ERR_NOMEM (out unchanged). */
int ld_sync_payload_encode(const ld_sync_payload_t *p, ld_buf_t *out);

/* Size ld_sync_payload_encode writes for `p`. */
size_t ld_sync_payload_encoded_len(const ld_sync_payload_t *p);

/* Decodes a frame body data[0..len) into `out` (initialised; its old content is dropped) under
 * `lim` (NULL: the defaults). On failure `out` is left empty, a description goes to why[0..cap)
 * (may be NULL), and the error is one of: LD_ERR_TOO_LARGE (len, ranges, items or topics above
 * the caps), LD_ERR_TRUNCATED (input ends inside a field), LD_ERR_VARINT_TOO_LONG,
 * LD_ERR_MALFORMED (a range running backwards, a hash prefix over 32 bytes, an unknown range
 * type, a reconciled byte above 1, item-set items out of order or outside their range),
 * LD_ERR_NOMEM. */
int ld_sync_payload_decode(const uint8_t *data, size_t len, const ld_sync_limits_t *lim,
                           ld_sync_payload_t *out, char *why, size_t cap);

#endif
