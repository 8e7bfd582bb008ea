/* RLN-v2 against zerokit's own proofs (rln_vectors.h, made by @waku/zerokit-rln-wasm with the
 * shared proving key): our values equal zerokit's, our verifier accepts every proof and rejects
 * each tampered public value and flipped proof bit; the verifying-key parser's errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../crypto/testhex.h"
#include "base/error.h"
#include "rln_vectors.h"
#include "zk/rln.h"

#define NVEC (sizeof rln_vectors / sizeof rln_vectors[0])

static ld_rln_verifier_t *verifier;

static int setup(void **state) {
  (void)state;
  return ld_rln_verifier_new(&verifier);
}

static int teardown(void **state) {
  (void)state;
  ld_rln_verifier_free(verifier);
  return 0;
}

typedef struct {
  uint8_t proof[128], values[160], signal[256], epoch[32], rln_id[32];
  size_t signal_len;
  ld_rln_witness_t witness;
} vector_t;

static void load(vector_t *v, const rln_vector_t *src) {
  memset(v, 0, sizeof *v);
  testhex(src->proof, v->proof);
  testhex(src->values, v->values);
  v->signal_len = testhex(src->signal, v->signal);
  testhex(src->epoch, v->epoch);
  testhex(src->rln_identifier, v->rln_id);
  uint8_t b[32 * 20];
  testhex(src->secret, b);
  assert_int_equal(ld_fr_from_bytes(&v->witness.identity_secret, b), 0);
  v->witness.user_message_limit = src->limit;
  v->witness.message_id = src->message_id;
  testhex(src->path, b);
  v->witness.merkle.depth = LD_RLN_TREE_DEPTH;
  for (int l = 0; l < LD_RLN_TREE_DEPTH; l++) {
    assert_int_equal(ld_fr_from_bytes(&v->witness.merkle.path[l], b + 32 * l), 0);
    v->witness.merkle.index_bits[l] = (uint8_t)((src->index >> l) & 1);
  }
  ld_rln_hash_to_field(&v->witness.x, v->signal, v->signal_len);
  ld_rln_external_nullifier(&v->witness.external_nullifier, v->epoch, v->rln_id);
}

static void values_match_zerokit(void **state) {
  (void)state;
  for (size_t i = 0; i < NVEC; i++) {
    vector_t v;
    load(&v, &rln_vectors[i]);
    ld_rln_proof_values_t ours, theirs;
    assert_int_equal(ld_rln_proof_values_from_witness(&ours, &v.witness), 0);
    assert_int_equal(ld_rln_proof_values_decode(&theirs, v.values), 0);
    uint8_t enc[160];
    ld_rln_proof_values_encode(enc, &ours);
    assert_memory_equal(enc, v.values, 160);
  }
}

static void accepts_zerokit_proofs(void **state) {
  (void)state;
  for (size_t i = 0; i < NVEC; i++) {
    vector_t v;
    load(&v, &rln_vectors[i]);
    ld_rln_proof_values_t values;
    assert_int_equal(ld_rln_proof_values_decode(&values, v.values), 0);
    assert_int_equal(ld_rln_verify(verifier, v.proof, &values), 0);
    /* re-encoding the decoded proof gives zerokit's bytes back */
    ld_groth16_proof_t p;
    uint8_t again[128];
    assert_int_equal(ld_groth16_proof_decode(&p, v.proof), 0);
    ld_groth16_proof_encode(again, &p);
    assert_memory_equal(again, v.proof, 128);
  }
}

static void rejects_tampered_values(void **state) {
  (void)state;
  for (size_t i = 0; i < NVEC; i++) {
    vector_t v;
    load(&v, &rln_vectors[i]);
    ld_rln_proof_values_t good;
    assert_int_equal(ld_rln_proof_values_decode(&good, v.values), 0);
    ld_fr_t one;
    ld_fr_set_one(&one);
    /* each public value moved by one: root, external nullifier (another epoch), x (another
     * signal), y (another share), nullifier */
    ld_fr_t *fields[5];
    for (int f = 0; f < 5; f++) {
      ld_rln_proof_values_t bad = good;
      fields[0] = &bad.root;
      fields[1] = &bad.external_nullifier;
      fields[2] = &bad.x;
      fields[3] = &bad.y;
      fields[4] = &bad.nullifier;
      ld_fr_add(fields[f], fields[f], &one);
      assert_int_equal(ld_rln_verify(verifier, v.proof, &bad), LD_ERR_BAD_PROOF);
    }
    /* the proof of one vector with the values of another */
    vector_t other;
    load(&other, &rln_vectors[(i + 1) % NVEC]);
    ld_rln_proof_values_t theirs;
    assert_int_equal(ld_rln_proof_values_decode(&theirs, other.values), 0);
    assert_int_equal(ld_rln_verify(verifier, v.proof, &theirs), LD_ERR_BAD_PROOF);
    /* another epoch, recomputed the way a validator would */
    ld_rln_proof_values_t bad = good;
    v.epoch[0] ^= 1;
    ld_rln_external_nullifier(&bad.external_nullifier, v.epoch, v.rln_id);
    assert_int_equal(ld_rln_verify(verifier, v.proof, &bad), LD_ERR_BAD_PROOF);
  }
}

static void rejects_flipped_proof_bits(void **state) {
  (void)state;
  vector_t v;
  load(&v, &rln_vectors[1]);
  ld_rln_proof_values_t values;
  assert_int_equal(ld_rln_proof_values_decode(&values, v.values), 0);
  int bad_proof = 0, bad_encoding = 0;
  for (int bit = 0; bit < 128 * 8; bit += 3) {
    uint8_t p[128];
    memcpy(p, v.proof, 128);
    p[bit / 8] ^= (uint8_t)(1 << (bit % 8));
    int rc = ld_rln_verify(verifier, p, &values);
    assert_true(rc == LD_ERR_BAD_PROOF || rc == LD_ERR_BAD_POINT || rc == LD_ERR_OVERFLOW ||
                rc == LD_ERR_MALFORMED);
    bad_proof += rc == LD_ERR_BAD_PROOF;
    bad_encoding += rc != LD_ERR_BAD_PROOF;
  }
  assert_true(bad_proof > 0 && bad_encoding > 0);
}

static void values_encoding(void **state) {
  (void)state;
  vector_t v;
  load(&v, &rln_vectors[0]);
  ld_rln_proof_values_t values;
  /* a non-canonical nullifier (value + r) is refused, not reduced */
  static const uint8_t r_le[32] = {0x01, 0x00, 0x00, 0xf0, 0x93, 0xf5, 0xe1, 0x43, 0x91, 0x70, 0xb9,
                                   0x79, 0x48, 0xe8, 0x33, 0x28, 0x5d, 0x58, 0x81, 0x81, 0xb6, 0x45,
                                   0x50, 0xb8, 0x29, 0xa0, 0x31, 0xe1, 0x72, 0x4e, 0x64, 0x30};
  uint8_t bad[160];
  memcpy(bad, v.values, 160);
  unsigned carry = 0;
  for (int i = 0; i < 32; i++) {
    unsigned s = bad[128 + i] + r_le[i] + carry;
    bad[128 + i] = (uint8_t)s;
    carry = s >> 8;
  }
  assert_int_equal(carry, 0); /* nullifier + r < 2r < 2^256 */
  assert_int_equal(ld_rln_proof_values_decode(&values, bad), LD_ERR_OVERFLOW);
  memset(bad, 0xff, 160);
  assert_int_equal(ld_rln_proof_values_decode(&values, bad), LD_ERR_OVERFLOW);
  /* the witness helper checks its bounds */
  v.witness.message_id = v.witness.user_message_limit;
  assert_int_equal(ld_rln_proof_values_from_witness(&values, &v.witness), LD_ERR_INVALID_ARG);
}

static void verifying_key_errors(void **state) {
  (void)state;
  ld_rln_verifier_t *x;
  const char *bad[] = {
      "",
      "{}",
      "[1,2]",
      "{\"protocol\":\"plonk\",\"curve\":\"bn128\",\"nPublic\":0,\"IC\":[]}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(ld_rln_verifier_new_from_json(&x, bad[i], strlen(bad[i])), LD_ERR_MALFORMED);
  }
  /* the real key with one change at a time */
  size_t len = strlen(ld_rln_v2_vk_json);
  char *copy = malloc(len + 1);
  /* nPublic 5 -> 4 (IC no longer matches) */
  memcpy(copy, ld_rln_v2_vk_json, len + 1);
  char *np = strstr(copy, "\"nPublic\":5");
  assert_non_null(np);
  np[strlen("\"nPublic\":")] = '4';
  assert_int_equal(ld_rln_verifier_new_from_json(&x, copy, len), LD_ERR_MALFORMED);
  /* alpha's x coordinate changed: off the curve */
  memcpy(copy, ld_rln_v2_vk_json, len + 1);
  char *alpha = strstr(copy, "\"vk_alpha_1\":[\"");
  assert_non_null(alpha);
  char *digit = alpha + strlen("\"vk_alpha_1\":[\"");
  *digit = *digit == '1' ? '2' : '1';
  assert_int_equal(ld_rln_verifier_new_from_json(&x, copy, len), LD_ERR_BAD_POINT);
  free(copy);
  assert_int_equal(ld_rln_verifier_new_from_json(&x, ld_rln_v2_vk_json, len), 0);
  ld_rln_verifier_free(x);
}

/* Batches of zerokit's proofs: every proof good holds; one bad value, two proofs with their
 * values swapped (errors that a sum without random weights would cancel) or bytes that are no
 * proof are caught, and the one-by-one fallback names exactly the bad ones. */
#define BATCH (3 * NVEC)
static void batch_verification(void **state) {
  (void)state;
  static uint8_t proofs[BATCH][LD_RLN_PROOF_BYTES];
  static ld_rln_proof_values_t values[BATCH];
  int results[BATCH];
  for (size_t i = 0; i < BATCH; i++) {
    vector_t v;
    load(&v, &rln_vectors[i % NVEC]);
    memcpy(proofs[i], v.proof, LD_RLN_PROOF_BYTES);
    assert_int_equal(ld_rln_proof_values_decode(&values[i], v.values), 0);
  }
  assert_int_equal(ld_rln_verify_batch(verifier, proofs, values, BATCH, results), 0);
  for (size_t i = 0; i < BATCH; i++)
    assert_int_equal(results[i], 0);
  assert_int_equal(ld_rln_verify_batch(verifier, proofs, values, 0, results), 0);
  ld_fr_t one;
  ld_fr_set_one(&one);
  for (size_t k = 0; k < NVEC; k++) {
    ld_rln_proof_values_t saved = values[k];
    ld_fr_add(&values[k].y, &values[k].y, &one);
    assert_int_equal(ld_rln_verify_batch(verifier, proofs, values, NVEC, results),
                     LD_ERR_BAD_PROOF);
    for (size_t i = 0; i < NVEC; i++)
      assert_int_equal(results[i], i == k ? LD_ERR_BAD_PROOF : 0);
    values[k] = saved;
  }
  /* proofs 1 and 2 with each other's values */
  ld_rln_proof_values_t t = values[1];
  values[1] = values[2];
  values[2] = t;
  assert_int_equal(ld_rln_verify_batch(verifier, proofs, values, NVEC, results), LD_ERR_BAD_PROOF);
  for (size_t i = 0; i < NVEC; i++)
    assert_int_equal(results[i], i == 1 || i == 2 ? LD_ERR_BAD_PROOF : 0);
  values[2] = values[1];
  values[1] = t;
  /* bytes that do not decode: the decoder's error, the rest still verified */
  proofs[3][0] ^= 0xff;
  assert_int_equal(ld_rln_verify_batch(verifier, proofs, values, NVEC, results), LD_ERR_BAD_PROOF);
  for (size_t i = 0; i < NVEC; i++)
    if (i == 3)
      assert_true(results[i] != 0 && results[i] != LD_ERR_BAD_PROOF);
    else
      assert_int_equal(results[i], 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(values_match_zerokit),    cmocka_unit_test(accepts_zerokit_proofs),
      cmocka_unit_test(rejects_tampered_values), cmocka_unit_test(rejects_flipped_proof_bits),
      cmocka_unit_test(values_encoding),         cmocka_unit_test(verifying_key_errors),
      cmocka_unit_test(batch_verification),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
