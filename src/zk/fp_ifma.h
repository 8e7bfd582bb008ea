/* Eight BN254 Fp elements at once with AVX-512 IFMA (vpmadd52luq / vpmadd52huq).
 *
 * An ld_fp8_t holds eight independent elements ("lanes"), each in five limbs of 52 bits (radix
 * 2^52, least significant first), stored limb-major: v[j][lane] is limb j of that lane, so that
 * limb j of all eight lanes is one 512-bit register. Each lane is in ld_fp_t's Montgomery form
 * (value * 2^256 mod p), fully reduced (< p), every limb below 2^52: conversion from and to
 * ld_fp_t is a re-split of the bits (4 x 64 <-> 5 x 52) and a transposition, no arithmetic.
 *
 * Every function below except ld_fp8_available needs a CPU with AVX-512F and AVX-512 IFMA: call
 * them only when ld_fp8_available() returns 1, and keep the scalar ld_fp_* code as the path
 * for other machines. The library is built without -mavx512*: only these functions are
 * compiled for the instructions. Constant-time: no branch or memory access depends on the
 * values, except that the batch additions (for the MSMs, variable-time by design) refuse a
 * batch holding a zero denominator. Pure functions on caller storage; outputs may alias
 * inputs. */
#ifndef LD_ZK_FP_IFMA_H
#define LD_ZK_FP_IFMA_H

#include <stddef.h>
#include <stdint.h>

#include "zk/curve.h"
#include "zk/field.h"

#define LD_FP8_LANES 8
#define LD_FP8_LIMBS 5

/* 64-byte aligned: allocate arrays of it with aligned_alloc(64, ...). */
typedef struct ld_fp8 {
  _Alignas(64) uint64_t v[LD_FP8_LIMBS][LD_FP8_LANES];
} ld_fp8_t;

/* 1 when this CPU (and the operating system) support AVX-512F and AVX-512 IFMA and the library
 * was built for x86-64, else 0 (and 0 while the scalar path is forced). Cheap after the first
 * call. */
int ld_fp8_available(void);

/* Internal switch for tests and benchmarks: while forced (on = 1), ld_fp8_available() returns 0,
 * so the MSMs take their scalar path on a CPU with IFMA too; on = 0 restores the detection. Not
 * to be flipped while another thread runs an MSM. */
void ld_fp8_force_scalar(int on);

/* r's lane i = a[i], for i in 0..7. */
void ld_fp8_from_fp(ld_fp8_t *r, const ld_fp_t a[LD_FP8_LANES]);
/* r[i] = a's lane i. */
void ld_fp8_to_fp(ld_fp_t r[LD_FP8_LANES], const ld_fp8_t *a);

/* Lane by lane: r = a * b, a + b, a - b (mod p). */
void ld_fp8_mul(ld_fp8_t *r, const ld_fp8_t *a, const ld_fp8_t *b);
void ld_fp8_add(ld_fp8_t *r, const ld_fp8_t *a, const ld_fp8_t *b);
void ld_fp8_sub(ld_fp8_t *r, const ld_fp8_t *a, const ld_fp8_t *b);

/* r[i] = a[i] + b[i] for eight pairs of affine G1 points in the general case only: neither at
 * infinity and a[i].x != b[i].x, given inv[i] = 1 / (b[i].x - a[i].x). All inputs are read before
 * any output is written, so r[i] may alias any of the inputs. */
void ld_g1_affine_add8(ld_g1_affine_t *const r[LD_FP8_LANES],
                       const ld_g1_affine_t *const a[LD_FP8_LANES],
                       const ld_g1_affine_t *const b[LD_FP8_LANES],
                       const ld_fp_t *const inv[LD_FP8_LANES]);

/* Batch-affine additions, eight at a time: r[i] = a[i] + b[i] for i < n, every point given
 * finite (the infinity flags are not read). The n slope denominators x_b - x_a are inverted
 * together by Montgomery's trick in the eight lanes (lane l a running product over pairs l,
 * l + 8, ...; one scalar inversion for the eight lanes' totals), so each addition costs six
 * products in lanes. Every input is read before any output is written, so the r[i] may alias
 * inputs. 0; LD_ERR_INVALID_ARG (nothing written) when some pair has a[i].x == b[i].x (a
 * doubling or a cancellation, for the caller to make otherwise); LD_ERR_NOMEM (nothing
 * written). */
int ld_g1_affine_add_batch(ld_g1_affine_t *const *r, const ld_g1_affine_t *const *a,
                           const ld_g1_affine_t *const *b, size_t n);
/* The same in G2 (Fp2 coordinates, each Fp2 product three Fp products in lanes; the
 * denominators inverted through their norms in Fp). */
int ld_g2_affine_add_batch(ld_g2_affine_t *const *r, const ld_g2_affine_t *const *a,
                           const ld_g2_affine_t *const *b, size_t n);

/* Fr (ld_fr_t, Montgomery form mod r) in the same lanes, for the NTTs of fft.c. One stage of
 * radix-2 butterflies: for each block of 2 half elements from s = 0, 2 half, ... below n and each
 * k < half, t = a[s + k + half] tw[k step], a[s + k + half] = a[s + k] - t, a[s + k] += t. half
 * a multiple of 8. */
void ld_fr8_fft_stage(ld_fr_t *a, size_t n, size_t half, const ld_fr_t *tw, size_t step);
/* a[i] = a[i] b[i], and a[i] = a[i] c, for i < n (n a multiple of 8). */
void ld_fr8_mul_pointwise(ld_fr_t *a, const ld_fr_t *b, size_t n);
void ld_fr8_scale(ld_fr_t *a, const ld_fr_t *c, size_t n);

#endif
