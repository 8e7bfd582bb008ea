/* Helpers of the zk layer's tests: a seeded generator and conversions to GMP integers. */
#ifndef LD_TESTS_ZK_ZKTEST_H
#define LD_TESTS_ZK_ZKTEST_H

#include <gmp.h>
#include <stdint.h>
#include <string.h>

#include "zk/field.h"

#define ZKTEST_P "21888242871839275222246405745257275088696311157297823662689037894645226208583"
#define ZKTEST_R "21888242871839275222246405745257275088548364400416034343698204186575808495617"

/* splitmix64: reproducible runs (a failure names its seed). */
static inline uint64_t zktest_next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static inline void zktest_bytes(uint64_t *s, uint8_t *out, size_t n) {
  for (size_t i = 0; i < n; i++) {
    out[i] = (uint8_t)zktest_next(s);
  }
}

static inline void zktest_fp(uint64_t *s, ld_fp_t *out) {
  uint8_t b[32];
  zktest_bytes(s, b, 32);
  b[31] &= 0x1f; /* below 2^253 < p */
  if (ld_fp_from_bytes(out, b) != 0) {
    abort();
  }
}

static inline void zktest_fr(uint64_t *s, ld_fr_t *out) {
  uint8_t b[32];
  zktest_bytes(s, b, 32);
  ld_fr_from_bytes_reduce(out, b);
}

static inline void zktest_mpz_from_le(mpz_t z, const uint8_t b[32]) {
  mpz_import(z, 32, -1, 1, 0, 0, b);
}

static inline void zktest_mpz_from_fp(mpz_t z, const ld_fp_t *a) {
  uint8_t b[32];
  ld_fp_to_bytes(b, a);
  zktest_mpz_from_le(z, b);
}

static inline void zktest_mpz_from_fr(mpz_t z, const ld_fr_t *a) {
  uint8_t b[32];
  ld_fr_to_bytes(b, a);
  zktest_mpz_from_le(z, b);
}

static inline void zktest_le_from_mpz(uint8_t b[32], const mpz_t z) {
  memset(b, 0, 32);
  size_t n = 0;
  mpz_export(b, &n, -1, 1, 0, 0, z);
}

#endif
