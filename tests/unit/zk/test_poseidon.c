/* Poseidon, zerokit's hash_to_field and the RLN Merkle tree against zerokit's test vectors
 * (utils/tests/poseidon_hash_test.rs, rln/tests/protocol.rs test_merkle_proof). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "zk/merkle.h"
#include "zk/poseidon.h"
#include "zk/rln.h"
#include "zktest.h"

static ld_fr_t dec(const char *s) {
  ld_fr_t r;
  assert_int_equal(ld_fr_from_decimal(&r, s, strlen(s)), 0);
  return r;
}

/* big-endian 0x-hex, as zerokit's str_to_fr(…, 16) reads it */
static ld_fr_t hexbe(const char *s) {
  uint8_t le[32];
  mpz_t z;
  mpz_init(z);
  assert_int_equal(mpz_set_str(z, s + 2, 16), 0);
  zktest_le_from_mpz(le, z);
  mpz_clear(z);
  ld_fr_t r;
  assert_int_equal(ld_fr_from_bytes(&r, le), 0);
  return r;
}

static void assert_fr(const ld_fr_t *got, const ld_fr_t *want) {
  assert_true(ld_fr_equal(got, want));
}

static void poseidon_one_input(void **state) {
  (void)state;
  static const struct {
    uint64_t in;
    const char *out;
  } v[] = {
      {0, "19014214495641488759237505126948346942972912379615652741039992445865937985820"},
      {1, "18586133768512220936620570745912940619677854269274689475585506675881198879027"},
      {255, "20026131459732984724454933360292530547665726761019872861025481903072111625788"},
      {65535, "12358868638722666642632413418981275677998688723398440898957566982787708451243"},
      {UINT64_MAX, "17449307747295017006142981453320720946812828330895590310359634430146721583189"},
  };
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    ld_fr_t in, out, want = dec(v[i].out);
    ld_fr_from_u64(&in, v[i].in);
    ld_poseidon_hash1(&out, &in);
    assert_fr(&out, &want);
    assert_int_equal(ld_poseidon_hash(&out, &in, 1), 0);
    assert_fr(&out, &want);
  }
}

static void poseidon_pairs(void **state) {
  (void)state;
  /* the Merkle tree over leaves 0..7 */
  const char *level1[4] = {
      "12583541437132735734108669866114103169564651237895298778035846191048104863326",
      "17197790661637433027297685226742709599380837544520340689137581733613433332983",
      "756592041685769348226045093946546956867261766023639881791475046640232555043",
      "5558359459771725727593826278265342308584225092343962757289948761260561575479"};
  const char *level2[2] = {
      "3720616653028013822312861221679392249031832781774563366107458835261883914924",
      "7960741062684589801276390367952372418815534638314682948141519164356522829957"};
  const char *root =
      "11780650233517635876913804110234352847867393797952240856403268682492028497284";
  ld_fr_t l1[4], l2[2], out;
  for (int i = 0; i < 4; i++) {
    ld_fr_t a, b;
    ld_fr_from_u64(&a, 2 * i);
    ld_fr_from_u64(&b, 2 * i + 1);
    ld_poseidon_hash2(&out, &a, &b);
    l1[i] = dec(level1[i]);
    assert_fr(&out, &l1[i]);
  }
  for (int i = 0; i < 2; i++) {
    ld_poseidon_hash2(&out, &l1[2 * i], &l1[2 * i + 1]);
    l2[i] = dec(level2[i]);
    assert_fr(&out, &l2[i]);
  }
  ld_poseidon_hash2(&out, &l2[0], &l2[1]);
  ld_fr_t want = dec(root);
  assert_fr(&out, &want);
  /* the same tree built by ld_merkle */
  ld_merkle_tree_t *t;
  assert_int_equal(ld_merkle_new(&t, 3), 0);
  ld_fr_t leaves[8];
  for (int i = 0; i < 8; i++) {
    ld_fr_from_u64(&leaves[i], (uint64_t)i);
  }
  assert_int_equal(ld_merkle_set_range(t, 0, leaves, 8), 0);
  ld_merkle_root(t, &out);
  assert_fr(&out, &want);
  ld_merkle_free(t);
}

static void poseidon_widths(void **state) {
  (void)state;
  ld_fr_t in[9], out;
  for (int i = 0; i < 9; i++) {
    ld_fr_from_u64(&in[i], (uint64_t)i + 1);
  }
  for (size_t n = 1; n <= LD_POSEIDON_MAX_INPUTS; n++) {
    assert_int_equal(ld_poseidon_hash(&out, in, n), 0);
  }
  assert_int_equal(ld_poseidon_hash(&out, in, 0), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_poseidon_hash(&out, in, 9), LD_ERR_INVALID_ARG);
  /* circomlib's published Poseidon([1, 2]) (t = 3), a third source beside zerokit */
  ld_poseidon_hash(&out, in, 2);
  ld_fr_t want =
      dec("7853200120776062878684798364095072458815029376092732009249414926327459813530");
  assert_fr(&out, &want);
}

static void hash_to_field(void **state) {
  (void)state;
  /* keccak256("") = c5d24601…a470, read little-endian and reduced mod r */
  ld_fr_t got, want;
  ld_rln_hash_to_field(&got, "", 0);
  uint8_t digest[32] = {0xc5, 0xd2, 0x46, 0x01, 0x86, 0xf7, 0x23, 0x3c, 0x92, 0x7e, 0x7d,
                        0xb2, 0xdc, 0xc7, 0x03, 0xc0, 0xe5, 0x00, 0xb6, 0x53, 0xca, 0x82,
                        0x27, 0x3b, 0x7b, 0xfa, 0xd8, 0x04, 0x5d, 0x85, 0xa4, 0x70};
  mpz_t z, r;
  mpz_inits(z, r, NULL);
  zktest_mpz_from_le(z, digest);
  mpz_set_str(r, ZKTEST_R, 10);
  mpz_mod(z, z, r);
  uint8_t le[32];
  zktest_le_from_mpz(le, z);
  assert_int_equal(ld_fr_from_bytes(&want, le), 0);
  assert_fr(&got, &want);
  mpz_clears(z, r, NULL);
}

static void merkle_matches_zerokit(void **state) {
  (void)state;
  /* rln/tests/protocol.rs test_merkle_proof: secret = hash_to_field("test-merkle-proof"), the
   * rate commitment with limit 100 at index 3 of a depth-20 tree */
  ld_fr_t secret, commitment, leaf, root, want;
  ld_rln_hash_to_field(&secret, "test-merkle-proof", strlen("test-merkle-proof"));
  ld_rln_id_commitment(&commitment, &secret);
  ld_rln_rate_commitment(&leaf, &commitment, 100);
  ld_merkle_tree_t *t;
  assert_int_equal(ld_merkle_new(&t, LD_MERKLE_RLN_DEPTH), 0);
  assert_int_equal(ld_merkle_set(t, 3, &leaf), 0);
  ld_merkle_root(t, &root);
  uint64_t limbs[4] = {4939322235247991215ULL, 5110804094006647505ULL, 4427606543677101242ULL,
                       910933464535675827ULL};
  uint8_t le[32];
  for (int i = 0; i < 32; i++) {
    le[i] = (uint8_t)(limbs[i / 8] >> (8 * (i % 8)));
  }
  assert_int_equal(ld_fr_from_bytes(&want, le), 0);
  assert_fr(&root, &want);
  static const char *path[20] = {
      "0x0000000000000000000000000000000000000000000000000000000000000000",
      "0x2098f5fb9e239eab3ceac3f27b81e481dc3124d55ffed523a839ee8446b64864",
      "0x1069673dcdb12263df301a6ff584a7ec261a44cb9dc68df067a4774460b1f1e1",
      "0x18f43331537ee2af2e3d758d50f72106467c6eea50371dd528d57eb2b856d238",
      "0x07f9d837cb17b0d36320ffe93ba52345f1b728571a568265caac97559dbc952a",
      "0x2b94cf5e8746b3f5c9631f4c5df32907a699c58c94b2ad4d7b5cec1639183f55",
      "0x2dee93c5a666459646ea7d22cca9e1bcfed71e6951b953611d11dda32ea09d78",
      "0x078295e5a22b84e982cf601eb639597b8b0515a88cb5ac7fa8a4aabe3c87349d",
      "0x2fa5e5f18f6027a6501bec864564472a616b2e274a41211a444cbe3a99f3cc61",
      "0x0e884376d0d8fd21ecb780389e941f66e45e7acce3e228ab3e2156a614fcd747",
      "0x1b7201da72494f1e28717ad1a52eb469f95892f957713533de6175e5da190af2",
      "0x1f8d8822725e36385200c0b201249819a6e6e1e4650808b5bebc6bface7d7636",
      "0x2c5d82f66c914bafb9701589ba8cfcfb6162b0a12acf88a8d0879a0471b5f85a",
      "0x14c54148a0940bb820957f5adf3fa1134ef5c4aaa113f4646458f270e0bfbfd0",
      "0x190d33b12f986f961e10c0ee44d8b9af11be25588cad89d416118e4bf4ebe80c",
      "0x22f98aa9ce704152ac17354914ad73ed1167ae6596af510aa5b3649325e06c92",
      "0x2a7c7c9b6ce5880b9f6f228d72bf6a575a526f29c66ecceef8b753d38bba7323",
      "0x2e8186e558698ec1c67af9c14d463ffc470043c9c2988b954d75dd643f36b992",
      "0x0f57c5571e9a4eab49e2c8cf050dae948aef6ead647392273546249d1c1ff10f",
      "0x1830ee67b5fb554ad5f63d4388800e1cfe78e310697d46e43c9ce36134f72cca"};
  ld_merkle_proof_t proof;
  assert_int_equal(ld_merkle_proof(t, 3, &proof), 0);
  assert_int_equal(proof.depth, 20);
  for (int l = 0; l < 20; l++) {
    ld_fr_t e = hexbe(path[l]);
    assert_fr(&proof.path[l], &e);
    assert_int_equal(proof.index_bits[l], l < 2 ? 1 : 0);
    ld_fr_t z;
    ld_merkle_zero(t, (unsigned)l, &z); /* the path of a lone member is the zero ladder */
    assert_fr(&z, &e);
  }
  ld_merkle_root_from_proof(&leaf, &proof, &root);
  assert_fr(&root, &want);
  assert_int_equal(ld_merkle_next_index(t), 4);
  ld_merkle_free(t);
}

static void merkle_updates(void **state) {
  (void)state;
  uint64_t seed = 30;
  ld_merkle_tree_t *a, *b;
  assert_int_equal(ld_merkle_new(&a, 10), 0);
  assert_int_equal(ld_merkle_new(&b, 10), 0);
  ld_fr_t empty_root, root_a, root_b, leaves[300];
  ld_merkle_root(a, &empty_root);
  ld_fr_t z;
  ld_merkle_zero(a, 10, &z);
  assert_fr(&empty_root, &z);
  for (int i = 0; i < 300; i++) {
    zktest_fr(&seed, &leaves[i]);
  }
  /* one by one (append) and in ranges give the same roots and proofs */
  for (int i = 0; i < 300; i++) {
    uint64_t at;
    assert_int_equal(ld_merkle_append(a, &leaves[i], &at), 0);
    assert_int_equal(at, (uint64_t)i);
  }
  assert_int_equal(ld_merkle_set_range(b, 0, leaves, 17), 0);
  assert_int_equal(ld_merkle_set_range(b, 17, leaves + 17, 283), 0);
  ld_merkle_root(a, &root_a);
  ld_merkle_root(b, &root_b);
  assert_fr(&root_a, &root_b);
  for (uint64_t i = 0; i < 300; i += 37) {
    ld_merkle_proof_t p;
    ld_fr_t r, leaf;
    assert_int_equal(ld_merkle_proof(a, i, &p), 0);
    assert_int_equal(ld_merkle_get(a, i, &leaf), 0);
    ld_merkle_root_from_proof(&leaf, &p, &r);
    assert_fr(&r, &root_a);
  }
  /* deleting sets 0: same root as a tree that never had that leaf */
  assert_int_equal(ld_merkle_delete(a, 299), 0);
  ld_merkle_tree_t *c;
  assert_int_equal(ld_merkle_new(&c, 10), 0);
  assert_int_equal(ld_merkle_set_range(c, 0, leaves, 299), 0);
  ld_merkle_root(a, &root_a);
  ld_merkle_root(c, &root_b);
  assert_fr(&root_a, &root_b);
  assert_int_equal(ld_merkle_next_index(a), 300);
  /* a sparse set far out, and the bounds */
  assert_int_equal(ld_merkle_set(c, 1023, &leaves[0]), 0);
  assert_int_equal(ld_merkle_set(c, 1024, &leaves[0]), LD_ERR_LIMIT);
  assert_int_equal(ld_merkle_set_range(c, 1000, leaves, 25), LD_ERR_LIMIT);
  ld_merkle_proof_t p;
  assert_int_equal(ld_merkle_proof(c, 1023, &p), 0);
  ld_merkle_root_from_proof(&leaves[0], &p, &root_a);
  ld_merkle_root(c, &root_b);
  assert_fr(&root_a, &root_b);
  ld_merkle_tree_t *none;
  assert_int_equal(ld_merkle_new(&none, 0), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_merkle_new(&none, 33), LD_ERR_INVALID_ARG);
  ld_merkle_free(a);
  ld_merkle_free(b);
  ld_merkle_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(poseidon_one_input),     cmocka_unit_test(poseidon_pairs),
      cmocka_unit_test(poseidon_widths),        cmocka_unit_test(hash_to_field),
      cmocka_unit_test(merkle_matches_zerokit), cmocka_unit_test(merkle_updates),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
