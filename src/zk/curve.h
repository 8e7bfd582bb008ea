/* The BN254 groups: G1 = E(Fp), y^2 = x^3 + 3, and G2 on the D-type sextic twist
 * E'(Fp2), y^2 = x^3 + 3/(9 + u), both of prime order r (G1's cofactor is 1; G2's points must
 * pass the subgroup check). Generators as in EIP-197, arkworks and snarkjs.
 *
 * Points in Jacobian coordinates (X/Z^2, Y/Z^3; Z = 0 is the point at infinity) for arithmetic,
 * affine with an infinity flag at the edges. Group operations and scalar multiplication are
 * variable-time (they branch on the points and scalars): fine for verification, which handles
 * only public data; the prover's multi-scalar multiplications will need the same care arkworks
 * takes (none) or blinding.
 *
 * Encodings are arkworks' CanonicalSerialize for BN254 (what zerokit writes):
 *   G1 compressed   32 bytes: x little-endian; bit 7 of the last byte set when y is the larger of
 *                   (y, -y) ("negative"), bit 6 set for the point at infinity (x = 0).
 *   G1 uncompressed 64 bytes: x ‖ y, the same two flag bits in y's last byte.
 *   G2 compressed   64 bytes: x.c0 ‖ x.c1, flags in the last byte; Fp2 order compares c1 first.
 *   G2 uncompressed 128 bytes: x.c0 ‖ x.c1 ‖ y.c0 ‖ y.c1, flags in the last byte.
 * Decoders accept exactly the encodings arkworks writes and reject the rest with a named error:
 * LD_ERR_OVERFLOW (a coordinate >= p), LD_ERR_MALFORMED (both flag bits set, infinity with
 * non-zero coordinates, a sign flag that contradicts y in the uncompressed form, which arkworks
 * ignores but never writes), LD_ERR_BAD_POINT (not on the curve, or a G2 point outside the
 * order-r subgroup). Pure functions; thread-safe; outputs may alias inputs. */
#ifndef LD_ZK_CURVE_H
#define LD_ZK_CURVE_H

#include <stddef.h>
#include <stdint.h>

#include "zk/fp2.h"

#define LD_G1_COMPRESSED_BYTES 32
#define LD_G1_UNCOMPRESSED_BYTES 64
#define LD_G2_COMPRESSED_BYTES 64
#define LD_G2_UNCOMPRESSED_BYTES 128

typedef struct ld_g1_affine {
  ld_fp_t x, y;
  int infinity;
} ld_g1_affine_t;

typedef struct ld_g1 {
  ld_fp_t x, y, z;
} ld_g1_t;

typedef struct ld_g2_affine {
  ld_fp2_t x, y;
  int infinity;
} ld_g2_affine_t;

typedef struct ld_g2 {
  ld_fp2_t x, y, z;
} ld_g2_t;

/* ---- G1 ---------------------------------------------------------------------------------------
 */

void ld_g1_generator(ld_g1_affine_t *r);
void ld_g1_set_infinity(ld_g1_t *r);
int ld_g1_is_infinity(const ld_g1_t *p);
void ld_g1_from_affine(ld_g1_t *r, const ld_g1_affine_t *p);
/* One inversion. */
void ld_g1_to_affine(ld_g1_affine_t *r, const ld_g1_t *p);
void ld_g1_neg(ld_g1_t *r, const ld_g1_t *p);
void ld_g1_dbl(ld_g1_t *r, const ld_g1_t *p);
void ld_g1_add(ld_g1_t *r, const ld_g1_t *p, const ld_g1_t *q);
void ld_g1_add_affine(ld_g1_t *r, const ld_g1_t *p, const ld_g1_affine_t *q);
/* Projective equality (same point, any representation). */
int ld_g1_equal(const ld_g1_t *p, const ld_g1_t *q);
/* r = [k]p for a scalar of n 64-bit limbs, least significant first. */
void ld_g1_mul_vartime(ld_g1_t *r, const ld_g1_t *p, const uint64_t *k, size_t n);
void ld_g1_mul_fr_vartime(ld_g1_t *r, const ld_g1_t *p, const ld_fr_t *k);
/* r = sum [k_i] p_i (Straus' interleaved windows); n may be 0 (r = infinity). */
void ld_g1_msm_vartime(ld_g1_t *r, const ld_g1_affine_t *points, const ld_fr_t *scalars, size_t n);
int ld_g1_is_on_curve(const ld_g1_affine_t *p);

int ld_g1_from_compressed(ld_g1_affine_t *r, const uint8_t in[LD_G1_COMPRESSED_BYTES]);
void ld_g1_to_compressed(uint8_t out[LD_G1_COMPRESSED_BYTES], const ld_g1_affine_t *p);
int ld_g1_from_uncompressed(ld_g1_affine_t *r, const uint8_t in[LD_G1_UNCOMPRESSED_BYTES]);
void ld_g1_to_uncompressed(uint8_t out[LD_G1_UNCOMPRESSED_BYTES], const ld_g1_affine_t *p);

/* ---- G2 ---------------------------------------------------------------------------------------
 */

void ld_g2_generator(ld_g2_affine_t *r);
void ld_g2_set_infinity(ld_g2_t *r);
int ld_g2_is_infinity(const ld_g2_t *p);
void ld_g2_from_affine(ld_g2_t *r, const ld_g2_affine_t *p);
void ld_g2_to_affine(ld_g2_affine_t *r, const ld_g2_t *p);
void ld_g2_neg(ld_g2_t *r, const ld_g2_t *p);
void ld_g2_dbl(ld_g2_t *r, const ld_g2_t *p);
void ld_g2_add(ld_g2_t *r, const ld_g2_t *p, const ld_g2_t *q);
void ld_g2_add_affine(ld_g2_t *r, const ld_g2_t *p, const ld_g2_affine_t *q);
int ld_g2_equal(const ld_g2_t *p, const ld_g2_t *q);
void ld_g2_mul_vartime(ld_g2_t *r, const ld_g2_t *p, const uint64_t *k, size_t n);
void ld_g2_mul_fr_vartime(ld_g2_t *r, const ld_g2_t *p, const ld_fr_t *k);
int ld_g2_is_on_curve(const ld_g2_affine_t *p);
/* psi(p): the untwist-Frobenius-twist endomorphism (p-power Frobenius acting on G2). */
void ld_g2_psi(ld_g2_affine_t *r, const ld_g2_affine_t *p);
/* For a point on the curve: 1 when it lies in the order-r subgroup, checked as
 * psi(p) == [6x^2] p (El Housni, Guillevic, Piellard 2022, as ark-bn254 checks it). */
int ld_g2_is_in_subgroup(const ld_g2_affine_t *p);

int ld_g2_from_compressed(ld_g2_affine_t *r, const uint8_t in[LD_G2_COMPRESSED_BYTES]);
void ld_g2_to_compressed(uint8_t out[LD_G2_COMPRESSED_BYTES], const ld_g2_affine_t *p);
int ld_g2_from_uncompressed(ld_g2_affine_t *r, const uint8_t in[LD_G2_UNCOMPRESSED_BYTES]);
void ld_g2_to_uncompressed(uint8_t out[LD_G2_UNCOMPRESSED_BYTES], const ld_g2_affine_t *p);

#endif
