/* The SDS bloom filter of received message IDs, bit-compatible with js-waku's `@waku/sds`
 * (DefaultBloomFilter) so that an SDS message's bloom_filter bytes mean the same to both.
 *
 * Sizing (js-waku, the path where k is derived from the error rate):
 *   bits_per_elem = ceil(-ln(p) / ln(2)^2), k = round(ln(2) · bits_per_elem),
 *   m = capacity · bits_per_elem bits, stored in 1 + floor(m / 64) 64-bit words.
 * Defaults: capacity 10 000, p = 0.001 → 15 bits per element, k = 10, m = 150 000 bits,
 * 2 344 words = 18 752 bytes.
 *
 * Bit positions (Kirsch–Mitzenmacher double hashing over Nim's `hashes.hash`, which js-waku
 * compiled to JS): H(s) = MurmurHash3 x86 32-bit, seed 0, over the item's bytes, read as a signed
 * 32-bit integer; a = |H(item)| mod m, b = |H(item ‖ " b")| mod m, h_i = (a + i·b) mod m for
 * i = 0..k-1. Bit h lives in word h / 64 at bit h % 64 (least significant = 0).
 * The item is the message ID's bytes. js-waku hashes UTF-16 code units of the string (one per
 * code point), which equals its UTF-8 bytes only for ASCII: SDS message IDs are hex text.
 *
 * Serialisation (js-waku): the words in order, each big-endian. The filter keeps its bits in
 * that form, so serialising is a copy and a received filter is looked up in place. A receiver
 * can only read a filter made with its own parameters: bytes of another length are refused
 * (js-waku throws on shorter bytes and ignores extra ones).
 *
 * Caller storage (ld_bloom_init / ld_bloom_clear); one thread at a time per filter. */
#ifndef LD_CHANNELS_BLOOM_H
#define LD_CHANNELS_BLOOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LD_BLOOM_DEFAULT_CAPACITY 10000u
#define LD_BLOOM_DEFAULT_ERROR_RATE 0.001
/* Largest filter accepted: 2^24 bits (2 MiB), the capacity and error rate that need more are
 * refused (js-waku's index arithmetic is 32-bit). */
#define LD_BLOOM_MAX_BITS (1u << 24)
/* Most hash functions (error rates below about 1e-19 would need more). */
#define LD_BLOOM_MAX_K 64u

/* The parameters derived from (capacity, error rate). */
typedef struct ld_bloom_params {
  uint32_t k;        /* hash functions */
  uint32_t bits;     /* m */
  size_t bytes;      /* serialised size: 8 · (1 + bits / 64) */
  uint32_t capacity; /* items it is sized for */
} ld_bloom_params_t;

typedef struct ld_bloom {
  ld_bloom_params_t params;
  uint8_t *data;  /* params.bytes bytes: big-endian 64-bit words */
  size_t n_items; /* insertions since the last reset (duplicates counted) */
} ld_bloom_t;

/* Derives the parameters. LD_ERR_INVALID_ARG for capacity 0 or an error rate outside (0, 1);
 * LD_ERR_LIMIT when m would exceed LD_BLOOM_MAX_BITS or k LD_BLOOM_MAX_K. */
int ld_bloom_params(uint32_t capacity, double error_rate, ld_bloom_params_t *out);

/* An empty filter (errors as ld_bloom_params, or LD_ERR_NOMEM). */
int ld_bloom_init(ld_bloom_t *b, uint32_t capacity, double error_rate);
void ld_bloom_clear(ld_bloom_t *b);

/* Clears every bit (n_items = 0), keeping the parameters. */
void ld_bloom_reset(ld_bloom_t *b);

void ld_bloom_insert(ld_bloom_t *b, const void *item, size_t len);
bool ld_bloom_lookup(const ld_bloom_t *b, const void *item, size_t len);

/* Looks `item` up in serialised filter bytes made with the parameters `p` (the bytes must be
 * exactly p->bytes long, which the caller checks with ld_bloom_bytes_fit). */
bool ld_bloom_lookup_bytes(const ld_bloom_params_t *p, const uint8_t *bytes, const void *item,
                           size_t len);

static inline bool ld_bloom_bytes_fit(const ld_bloom_params_t *p, size_t len) {
  return len == p->bytes;
}

/* The k bit positions of `item` (out has room for p->k values). */
void ld_bloom_positions(const ld_bloom_params_t *p, const void *item, size_t len, uint32_t *out);

/* True when the k bits at `positions` (from ld_bloom_positions) are all set in serialised bytes
 * of the parameters `p` (exactly p->bytes long): a lookup with the hashing done beforehand. */
bool ld_bloom_positions_set(const ld_bloom_params_t *p, const uint8_t *bytes,
                            const uint32_t *positions);

/* js-waku's hashN(item, n, max_value): (|H(item)| mod max + n · (|H(item ‖ " b")| mod max)) mod
 * max, max > 0. Exposed for the test vectors. */
uint32_t ld_bloom_hash_n(const void *item, size_t len, uint32_t n, uint32_t max_value);

/* MurmurHash3 x86 32-bit of data[0..len) with `seed`. */
uint32_t ld_murmur3_32(const void *data, size_t len, uint32_t seed);

#endif
