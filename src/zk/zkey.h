/* snarkjs' Groth16 proving key (.zkey, "zkey" binary format version 1, as circom's trusted setup
 * writes it and zerokit and arkworks-circom read it), for BN254:
 *
 *   "zkey" ‖ version u32 ‖ section count u32 ‖ sections (type u32 ‖ size u64 ‖ body), with
 *   1 header (protocol 1 = Groth16), 2 Groth16 header (field sizes and moduli, nVars, nPublic,
 *   domain size, alpha1, beta1, beta2, gamma2, delta1, delta2), 3 IC, 4 the A and B matrices'
 *   coefficients, 5 A, 6 B1, 7 B2, 8 C (private wires only), 9 H (one per domain point),
 *   10 contributions (ignored).
 *
 * Integers little-endian; coordinates in Montgomery form (x·2^256 mod p), affine, (0, 0) for the
 * point at infinity; coefficients as c·2^512 mod r. The reader checks the layout, the moduli,
 * every coordinate < p and every point on its curve; it does not check G2 subgroup membership
 * (the key is trusted input, as in snarkjs and arkworks). Immutable once read: share freely. */
#ifndef LD_ZK_ZKEY_H
#define LD_ZK_ZKEY_H

#include <stddef.h>
#include <stdint.h>

#include "zk/curve.h"

/* One non-zero entry of matrix A or B: row `constraint`, column `wire`. */
typedef struct ld_zkey_coef {
  uint32_t constraint;
  uint32_t wire;
  ld_fr_t value;
} ld_zkey_coef_t;

typedef struct ld_zkey {
  uint32_t num_wires;   /* nVars, wire 0 being the constant 1 */
  uint32_t num_public;  /* public wires after wire 0 (outputs, then public inputs) */
  uint32_t domain_size; /* a power of two above the constraint count */
  unsigned domain_log2;
  ld_g1_affine_t alpha1, beta1, delta1;
  ld_g2_affine_t beta2, gamma2, delta2;
  ld_g1_affine_t *ic; /* num_public + 1 */
  ld_zkey_coef_t *coefs_a, *coefs_b;
  size_t num_coefs_a, num_coefs_b;
  ld_g1_affine_t *a, *b1; /* num_wires each */
  ld_g2_affine_t *b2;     /* num_wires */
  ld_g1_affine_t *c;      /* num_wires - num_public - 1 (wires num_public+1..) */
  ld_g1_affine_t *h;      /* domain_size */
} ld_zkey_t;

/* Reads a zkey from memory. LD_ERR_MALFORMED for bytes that are not a BN254 Groth16 zkey (bad
 * magic, version, protocol, moduli, missing or mis-sized sections, coefficient indices out of
 * range), LD_ERR_OVERFLOW for a coordinate >= p, LD_ERR_BAD_POINT for a point off its curve,
 * LD_ERR_TOO_LARGE for more than 2^24 wires or a domain beyond 2^24, LD_ERR_NOMEM. Free with
 * ld_zkey_free. */
int ld_zkey_read(ld_zkey_t **out, const uint8_t *data, size_t len);
/* ld_zkey_read on a file's contents; LD_ERR_IO when it cannot be read. */
int ld_zkey_read_file(ld_zkey_t **out, const char *path);
void ld_zkey_free(ld_zkey_t *zk);

#endif
