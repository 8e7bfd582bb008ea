/* RLN-v2: the circuit's hashes, its values, and verification. */
#include "zk/rln.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "crypto/keccak.h"
#include "zk/poseidon.h"

struct ld_rln_verifier {
  ld_groth16_vk_t *vk;
};

void ld_rln_hash_to_field(ld_fr_t *out, const void *data, size_t len) {
  uint8_t digest[LD_KECCAK256_LEN];
  ld_keccak256(data, len, digest);
  ld_fr_from_bytes_reduce(out, digest);
}

void ld_rln_external_nullifier(ld_fr_t *out, const uint8_t epoch[32],
                               const uint8_t rln_identifier[32]) {
  ld_fr_t e, id;
  ld_rln_hash_to_field(&e, epoch, 32);
  ld_rln_hash_to_field(&id, rln_identifier, 32);
  ld_poseidon_hash2(out, &e, &id);
}

void ld_rln_id_commitment(ld_fr_t *out, const ld_fr_t *identity_secret) {
  ld_poseidon_hash1(out, identity_secret);
}

void ld_rln_rate_commitment(ld_fr_t *out, const ld_fr_t *id_commitment,
                            uint64_t user_message_limit) {
  ld_fr_t limit;
  ld_fr_from_u64(&limit, user_message_limit);
  ld_poseidon_hash2(out, id_commitment, &limit);
}

int ld_rln_proof_values_from_witness(ld_rln_proof_values_t *out, const ld_rln_witness_t *w) {
  if (w->message_id >= w->user_message_limit || w->merkle.depth != LD_RLN_TREE_DEPTH) {
    return LD_ERR_INVALID_ARG;
  }
  ld_fr_t in[3], a1, commitment, leaf;
  in[0] = w->identity_secret;
  in[1] = w->external_nullifier;
  ld_fr_from_u64(&in[2], w->message_id);
  ld_poseidon_hash(&a1, in, 3);
  ld_fr_mul(&out->y, &w->x, &a1);
  ld_fr_add(&out->y, &out->y, &w->identity_secret);
  ld_poseidon_hash1(&out->nullifier, &a1);
  ld_rln_id_commitment(&commitment, &w->identity_secret);
  ld_rln_rate_commitment(&leaf, &commitment, w->user_message_limit);
  ld_merkle_root_from_proof(&leaf, &w->merkle, &out->root);
  out->x = w->x;
  out->external_nullifier = w->external_nullifier;
  return 0;
}

int ld_rln_proof_values_decode(ld_rln_proof_values_t *out,
                               const uint8_t in[LD_RLN_PROOF_VALUES_BYTES]) {
  ld_fr_t *fields[5] = {&out->root, &out->external_nullifier, &out->x, &out->y, &out->nullifier};
  for (int i = 0; i < 5; i++) {
    int rc = ld_fr_from_bytes(fields[i], in + 32 * i);
    if (rc != 0) {
      return rc;
    }
  }
  return 0;
}

void ld_rln_proof_values_encode(uint8_t out[LD_RLN_PROOF_VALUES_BYTES],
                                const ld_rln_proof_values_t *v) {
  const ld_fr_t *fields[5] = {&v->root, &v->external_nullifier, &v->x, &v->y, &v->nullifier};
  for (int i = 0; i < 5; i++) {
    ld_fr_to_bytes(out + 32 * i, fields[i]);
  }
}

int ld_rln_verifier_new_from_json(ld_rln_verifier_t **out, const char *json, size_t len) {
  ld_rln_verifier_t *v = calloc(1, sizeof *v);
  if (v == NULL) {
    return LD_ERR_NOMEM;
  }
  int rc = ld_groth16_vk_from_json(&v->vk, json, len);
  if (rc == 0 && ld_groth16_vk_num_public(v->vk) != LD_RLN_NUM_PUBLIC) {
    rc = LD_ERR_MALFORMED;
  }
  if (rc != 0) {
    ld_rln_verifier_free(v);
    return rc;
  }
  *out = v;
  return 0;
}

int ld_rln_verifier_new(ld_rln_verifier_t **out) {
  return ld_rln_verifier_new_from_json(out, ld_rln_v2_vk_json, strlen(ld_rln_v2_vk_json));
}

void ld_rln_verifier_free(ld_rln_verifier_t *v) {
  if (v != NULL) {
    ld_groth16_vk_free(v->vk);
    free(v);
  }
}

int ld_rln_verify(const ld_rln_verifier_t *v, const uint8_t proof[LD_RLN_PROOF_BYTES],
                  const ld_rln_proof_values_t *values) {
  ld_groth16_proof_t p;
  int rc = ld_groth16_proof_decode(&p, proof);
  if (rc != 0) {
    return rc;
  }
  /* the circuit's public signals: outputs y, root, nullifier, then inputs x, external nullifier */
  const ld_fr_t inputs[LD_RLN_NUM_PUBLIC] = {values->y, values->root, values->nullifier, values->x,
                                             values->external_nullifier};
  return ld_groth16_verify(v->vk, &p, inputs, LD_RLN_NUM_PUBLIC);
}

static void public_inputs(ld_fr_t out[LD_RLN_NUM_PUBLIC], const ld_rln_proof_values_t *values) {
  out[0] = values->y;
  out[1] = values->root;
  out[2] = values->nullifier;
  out[3] = values->x;
  out[4] = values->external_nullifier;
}

int ld_rln_verify_batch(const ld_rln_verifier_t *v, const uint8_t (*proofs)[LD_RLN_PROOF_BYTES],
                        const ld_rln_proof_values_t *values, size_t count, int *results) {
  ld_groth16_proof_t *decoded = calloc(count ? count : 1, sizeof *decoded);
  ld_fr_t *inputs = calloc((count ? count : 1) * LD_RLN_NUM_PUBLIC, sizeof *inputs);
  size_t *which = malloc((count ? count : 1) * sizeof *which);
  if (decoded == NULL || inputs == NULL || which == NULL) {
    free(decoded);
    free(inputs);
    free(which);
    return LD_ERR_NOMEM;
  }
  size_t n = 0;
  for (size_t i = 0; i < count; i++) {
    results[i] = ld_groth16_proof_decode(&decoded[n], proofs[i]);
    if (results[i] == 0) {
      public_inputs(&inputs[n * LD_RLN_NUM_PUBLIC], &values[i]);
      which[n++] = i;
    }
  }
  int rc = ld_groth16_verify_batch(v->vk, decoded, inputs, LD_RLN_NUM_PUBLIC, n);
  if (rc == LD_ERR_BAD_PROOF) {
    for (size_t k = 0; k < n; k++) {
      results[which[k]] =
          ld_groth16_verify(v->vk, &decoded[k], &inputs[k * LD_RLN_NUM_PUBLIC], LD_RLN_NUM_PUBLIC);
    }
  }
  free(decoded);
  free(inputs);
  free(which);
  if (rc == LD_ERR_NOMEM) {
    return rc;
  }
  for (size_t i = 0; i < count; i++) {
    if (results[i] != 0) {
      return LD_ERR_BAD_PROOF;
    }
  }
  return 0;
}
