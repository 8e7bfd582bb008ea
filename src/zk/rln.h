/* RLN-v2, the rate-limiting nullifier circuit of zerokit (>= 0.5) that Waku's RLN relay
 * (17/WAKU2-RLN-RELAY) uses: tree depth 20, public values in the circuit's order
 * [y, root, nullifier, x, external_nullifier], proofs as arkworks' 128-byte compressed Groth16.
 * Field elements travel as 32 bytes little-endian (zerokit's fr_to_bytes_le).
 *
 * This module holds the circuit's arithmetic outside the SNARK (hash_to_field, the commitments,
 * the external nullifier, the shares) and proof verification. The validator that runs nwaku's
 * checks in order (clock gap, epoch, root window, then ld_rln_verify, then the nullifier log)
 * belongs to the relay layer; it calls ld_rln_verify with values decoded from a RateLimitProof
 * and checks x == ld_rln_hash_to_field(signal) and the external nullifier itself.
 *
 * Proof generation is rln_prover.h: an ld_rln_prover_t built from the proving key
 * (rln_final.zkey) and the circuit's witness graph takes the ld_rln_witness_t below and writes
 * the same 128-byte proof for the values ld_rln_proof_values_from_witness gives. All functions
 * here are thread-safe; a verifier is immutable and may be shared between threads. */
#ifndef LD_ZK_RLN_H
#define LD_ZK_RLN_H

#include <stddef.h>
#include <stdint.h>

#include "zk/field.h"
#include "zk/groth16.h"
#include "zk/merkle.h"

#define LD_RLN_TREE_DEPTH LD_MERKLE_RLN_DEPTH
#define LD_RLN_PROOF_BYTES LD_GROTH16_PROOF_BYTES
#define LD_RLN_NUM_PUBLIC 5
/* zerokit's serialize_proof_values: root ‖ external_nullifier ‖ x ‖ y ‖ nullifier */
#define LD_RLN_PROOF_VALUES_BYTES 160

/* The compiled-in RLN-v2 verifying key (snarkjs JSON; src/zk/rln_vk.c). */
extern const char ld_rln_v2_vk_json[];

typedef struct ld_rln_proof_values {
  ld_fr_t root;
  ld_fr_t external_nullifier;
  ld_fr_t x; /* hash_to_field(signal) */
  ld_fr_t y; /* the share: identity_secret + x * a1 */
  ld_fr_t nullifier;
} ld_rln_proof_values_t;

/* The prover's private and public inputs (zerokit's RLNWitnessInput). */
typedef struct ld_rln_witness {
  ld_fr_t identity_secret; /* identity_secret_hash */
  uint64_t user_message_limit;
  uint64_t message_id;      /* 0 <= message_id < user_message_limit */
  ld_merkle_proof_t merkle; /* of the rate commitment, depth LD_RLN_TREE_DEPTH */
  ld_fr_t x;
  ld_fr_t external_nullifier;
} ld_rln_witness_t;

/* zerokit's hash_to_field_le: Keccak-256 of the bytes, read little-endian, reduced mod r. */
void ld_rln_hash_to_field(ld_fr_t *out, const void *data, size_t len);
/* Poseidon(hash_to_field(epoch), hash_to_field(rln_identifier)), both 32-byte fields as carried
 * in a RateLimitProof (the epoch a little-endian uint64 zero-padded). */
void ld_rln_external_nullifier(ld_fr_t *out, const uint8_t epoch[32],
                               const uint8_t rln_identifier[32]);
/* id_commitment = Poseidon(identity_secret). */
void ld_rln_id_commitment(ld_fr_t *out, const ld_fr_t *identity_secret);
/* The member's leaf: Poseidon(id_commitment, user_message_limit). */
void ld_rln_rate_commitment(ld_fr_t *out, const ld_fr_t *id_commitment,
                            uint64_t user_message_limit);
/* The values a proof for `w` carries: a1 = Poseidon(secret, external_nullifier, message_id),
 * y = secret + x a1, nullifier = Poseidon(a1), root from the Merkle proof of the rate
 * commitment. LD_ERR_INVALID_ARG when message_id >= user_message_limit or the Merkle proof's
 * depth is not LD_RLN_TREE_DEPTH. Constant-time in the secret. */
int ld_rln_proof_values_from_witness(ld_rln_proof_values_t *out, const ld_rln_witness_t *w);

/* zerokit's 160-byte proof-values layout. Decoding refuses non-canonical field elements
 * (LD_ERR_OVERFLOW), which zerokit would reduce mod r: an element and its non-canonical twin
 * must not pass as two different nullifiers. */
int ld_rln_proof_values_decode(ld_rln_proof_values_t *out,
                               const uint8_t in[LD_RLN_PROOF_VALUES_BYTES]);
void ld_rln_proof_values_encode(uint8_t out[LD_RLN_PROOF_VALUES_BYTES],
                                const ld_rln_proof_values_t *v);

typedef struct ld_rln_verifier ld_rln_verifier_t;

/* A verifier for the compiled-in RLN-v2 key. About 5 ms to build and 350 KiB to hold (the key's
 * pairing lines and fixed-base tables). LD_ERR_NOMEM. */
int ld_rln_verifier_new(ld_rln_verifier_t **out);
/* A verifier for another snarkjs key of the same circuit shape (5 public inputs); errors as
 * ld_groth16_vk_from_json, LD_ERR_MALFORMED when the key has another number of inputs. */
int ld_rln_verifier_new_from_json(ld_rln_verifier_t **out, const char *json, size_t len);
void ld_rln_verifier_free(ld_rln_verifier_t *v);

/* Verifies a 128-byte proof for `values`. 0 when valid; LD_ERR_BAD_PROOF when the proof does not
 * hold for these values; the decoders' errors (LD_ERR_MALFORMED, LD_ERR_OVERFLOW,
 * LD_ERR_BAD_POINT) when the bytes are not a proof at all. */
int ld_rln_verify(const ld_rln_verifier_t *v, const uint8_t proof[LD_RLN_PROOF_BYTES],
                  const ld_rln_proof_values_t *values);

/* Verifies `count` proofs at once (ld_groth16_verify_batch; much cheaper per proof than
 * ld_rln_verify when several are waiting). results[i] gets what ld_rln_verify would answer for
 * proofs[i] and values[i]: a proof that does not decode gets its decoder's error and stays out of
 * the batch; when the batch does not hold, the proofs are verified one by one to say which.
 * Returns 0 when every proof holds, LD_ERR_BAD_PROOF when at least one does not, LD_ERR_NOMEM
 * (results then unset). */
int ld_rln_verify_batch(const ld_rln_verifier_t *v, const uint8_t (*proofs)[LD_RLN_PROOF_BYTES],
                        const ld_rln_proof_values_t *values, size_t count, int *results);

#endif
