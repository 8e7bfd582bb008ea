/* Groth16 over BN254: proofs in arkworks' compressed encoding, verifying keys in snarkjs' JSON
 * format (verification_key.json), and verification as ark-groth16 performs it:
 *
 *   e(A, B) = e(alpha, beta) * e(IC[0] + sum_i input_i IC[i+1], gamma) * e(C, delta)
 *
 * checked as one multi-Miller loop of (A, B), (L, -gamma), (C, -delta), one final
 * exponentiation, and a comparison with e(alpha, beta), which the prepared key holds together
 * with the lines of -gamma and -delta, and fixed-base tables of the input points (about 68 KiB
 * per public input). A verifying key is immutable once built: share it between threads freely. */
#ifndef LD_ZK_GROTH16_H
#define LD_ZK_GROTH16_H

#include <stddef.h>
#include <stdint.h>

#include "zk/curve.h"

#define LD_GROTH16_PROOF_BYTES 128 /* A (G1, 32) ‖ B (G2, 64) ‖ C (G1, 32), compressed */

typedef struct ld_groth16_proof {
  ld_g1_affine_t a;
  ld_g2_affine_t b;
  ld_g1_affine_t c;
} ld_groth16_proof_t;

typedef struct ld_groth16_vk ld_groth16_vk_t;

/* Decodes arkworks' compressed proof (what zerokit's Proof::serialize_compressed writes): each
 * point checked on the curve and B in its subgroup. Errors as the point decoders (curve.h). */
int ld_groth16_proof_decode(ld_groth16_proof_t *out, const uint8_t in[LD_GROTH16_PROOF_BYTES]);
void ld_groth16_proof_encode(uint8_t out[LD_GROTH16_PROOF_BYTES], const ld_groth16_proof_t *p);

/* Builds a prepared verifying key from snarkjs' verification_key.json text (protocol "groth16",
 * curve "bn128"; decimal coordinates; affine points with z = "1", or the point at infinity
 * "0","1","0"). LD_ERR_MALFORMED for JSON that is not such a key, LD_ERR_OVERFLOW for a
 * coordinate >= p, LD_ERR_BAD_POINT for points off the curve or outside their subgroup,
 * LD_ERR_NOMEM. Free with ld_groth16_vk_free. */
int ld_groth16_vk_from_json(ld_groth16_vk_t **out, const char *json, size_t len);
void ld_groth16_vk_free(ld_groth16_vk_t *vk);
/* Number of public inputs the key expects (its "nPublic"). */
size_t ld_groth16_vk_num_public(const ld_groth16_vk_t *vk);

/* Verifies `proof` for the public inputs in the circuit's order. 0 when it holds,
 * LD_ERR_BAD_PROOF when it does not, LD_ERR_INVALID_ARG when n differs from the key's count. */
int ld_groth16_verify(const ld_groth16_vk_t *vk, const ld_groth16_proof_t *proof,
                      const ld_fr_t *inputs, size_t n);

/* Verifies `count` proofs at once, proofs[i] for inputs[i * n .. i * n + n): 0 when every proof
 * holds (up to a chance of 2^-127), LD_ERR_BAD_PROOF when at least one does not (which one is
 * not said: verify them one by one then), LD_ERR_INVALID_ARG when n differs from the key's
 * count, LD_ERR_NOMEM (about 26 KiB per proof). With fresh random 128-bit weights r_i (from the
 * system's generator, unknown to whoever made the proofs) one product is checked:
 *
 *   prod_i e(r_i A_i, B_i) * e(sum_i r_i L_i, -gamma) * e(sum_i r_i C_i, -delta)
 *     * e(-(sum_i r_i) alpha, beta) = 1,
 *
 * a multi-Miller loop of count + 3 pairs and one final exponentiation, where single
 * verification spends a final exponentiation and three Miller-loop pairs per proof. */
int ld_groth16_verify_batch(const ld_groth16_vk_t *vk, const ld_groth16_proof_t *proofs,
                            const ld_fr_t *inputs, size_t n, size_t count);

#endif
