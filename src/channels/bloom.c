#include "channels/bloom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* ---- MurmurHash3 x86 32-bit ----------------------------------------------------------------- */

static uint32_t rotl32(uint32_t x, int r) {
  return (x << r) | (x >> (32 - r));
}

static uint32_t mix_k1(uint32_t k1) {
  k1 *= 0xcc9e2d51u;
  k1 = rotl32(k1, 15);
  return k1 * 0x1b873593u;
}

static uint32_t fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  return h ^ (h >> 16);
}

/* Little-endian read of up to 4 bytes. */
static uint32_t load_le(const uint8_t *p, size_t n) {
  uint32_t v = 0;
  for (size_t i = n; i > 0; i--)
    v = (v << 8) | p[i - 1];
  return v;
}

uint32_t ld_murmur3_32(const void *data, size_t len, uint32_t seed) {
  const uint8_t *p = data;
  uint32_t h = seed;
  size_t blocks = len / 4;
  for (size_t i = 0; i < blocks; i++) {
    h ^= mix_k1(load_le(p + 4 * i, 4));
    h = rotl32(h, 13) * 5 + 0xe6546b64u;
  }
  size_t tail = len & 3;
  if (tail > 0)
    h ^= mix_k1(load_le(p + 4 * blocks, tail));
  return fmix32(h ^ (uint32_t)len);
}

/* ---- Nim's hash as js-waku runs it ---------------------------------------------------------- */

/* |H| as Nim on JS computes it: the hash read as a signed 32-bit integer, then its absolute
 * value (2^31 for INT32_MIN: JS numbers do not overflow). */
static uint64_t abs_hash(uint32_t h) {
  int64_t s = h >= 0x80000000u ? (int64_t)h - 0x100000000LL : (int64_t)h;
  return (uint64_t)(s < 0 ? -s : s);
}

static uint64_t hash_item(const void *item, size_t len) {
  return abs_hash(ld_murmur3_32(item, len, 0));
}

/* MurmurHash3 (seed 0) of the concatenation a ‖ b, without copying. */
static uint32_t murmur3_concat(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
  const uint8_t *parts[2] = {a, b};
  size_t lens[2] = {alen, blen};
  uint8_t block[4];
  size_t fill = 0;
  uint32_t h = 0;
  for (int p = 0; p < 2; p++) {
    for (size_t i = 0; i < lens[p]; i++) {
      block[fill++] = parts[p][i];
      if (fill == 4) {
        h ^= mix_k1(load_le(block, 4));
        h = rotl32(h, 13) * 5 + 0xe6546b64u;
        fill = 0;
      }
    }
  }
  if (fill > 0)
    h ^= mix_k1(load_le(block, fill));
  return fmix32(h ^ (uint32_t)(alen + blen));
}

/* H(item ‖ " b"). */
static uint64_t hash_item_b(const void *item, size_t len) {
  static const uint8_t suffix[2] = {' ', 'b'};
  return abs_hash(murmur3_concat(item, len, suffix, sizeof suffix));
}

uint32_t ld_bloom_hash_n(const void *item, size_t len, uint32_t n, uint32_t max_value) {
  uint64_t a = hash_item(item, len) % max_value;
  uint64_t b = hash_item_b(item, len) % max_value;
  return (uint32_t)((a + (uint64_t)n * b) % max_value);
}

void ld_bloom_positions(const ld_bloom_params_t *p, const void *item, size_t len, uint32_t *out) {
  uint64_t a = hash_item(item, len) % p->bits;
  uint64_t b = hash_item_b(item, len) % p->bits;
  for (uint32_t i = 0; i < p->k; i++)
    out[i] = (uint32_t)((a + (uint64_t)i * b) % p->bits);
}

/* ---- parameters ----------------------------------------------------------------------------- */

int ld_bloom_params(uint32_t capacity, double error_rate, ld_bloom_params_t *out) {
  if (capacity == 0 || !(error_rate > 0.0 && error_rate < 1.0))
    return LD_ERR_INVALID_ARG;
  double ln2 = log(2.0);
  double bits_per_elem = ceil(-1.0 * (log(error_rate) / (ln2 * ln2)));
  uint64_t bits = (uint64_t)capacity * (uint64_t)bits_per_elem;
  long k = lround(ln2 * bits_per_elem);
  if (bits > LD_BLOOM_MAX_BITS || k > LD_BLOOM_MAX_K)
    return LD_ERR_LIMIT;
  out->k = (uint32_t)k;
  out->bits = (uint32_t)bits;
  out->bytes = 8 * (1 + (size_t)(bits / 64));
  out->capacity = capacity;
  return 0;
}

/* ---- the filter ----------------------------------------------------------------------------- */

int ld_bloom_init(ld_bloom_t *b, uint32_t capacity, double error_rate) {
  memset(b, 0, sizeof *b);
  int rc = ld_bloom_params(capacity, error_rate, &b->params);
  if (rc != 0)
    return rc;
  if ((b->data = calloc(1, b->params.bytes)) == NULL)
    return LD_ERR_NOMEM;
  return 0;
}

void ld_bloom_clear(ld_bloom_t *b) {
  free(b->data);
  memset(b, 0, sizeof *b);
}

void ld_bloom_reset(ld_bloom_t *b) {
  memset(b->data, 0, b->params.bytes);
  b->n_items = 0;
}

/* Byte and mask of bit h in big-endian words. */
static size_t bit_byte(uint32_t h) {
  return (size_t)(h / 64) * 8 + (7 - (h % 64) / 8);
}

static uint8_t bit_mask(uint32_t h) {
  return (uint8_t)(1u << (h % 8));
}

void ld_bloom_insert(ld_bloom_t *b, const void *item, size_t len) {
  uint32_t pos[LD_BLOOM_MAX_K];
  ld_bloom_positions(&b->params, item, len, pos);
  for (uint32_t i = 0; i < b->params.k; i++)
    b->data[bit_byte(pos[i])] |= bit_mask(pos[i]);
  b->n_items++;
}

bool ld_bloom_positions_set(const ld_bloom_params_t *p, const uint8_t *bytes,
                            const uint32_t *positions) {
  for (uint32_t i = 0; i < p->k; i++)
    if ((bytes[bit_byte(positions[i])] & bit_mask(positions[i])) == 0)
      return false;
  return true;
}

bool ld_bloom_lookup_bytes(const ld_bloom_params_t *p, const uint8_t *bytes, const void *item,
                           size_t len) {
  uint32_t pos[LD_BLOOM_MAX_K];
  ld_bloom_positions(p, item, len, pos);
  return ld_bloom_positions_set(p, bytes, pos);
}

bool ld_bloom_lookup(const ld_bloom_t *b, const void *item, size_t len) {
  return ld_bloom_lookup_bytes(&b->params, b->data, item, len);
}
