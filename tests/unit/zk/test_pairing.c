/* The tower Fp2/Fp6/Fp12 and the optimal ate pairing: field laws, Frobenius against
 * exponentiation by p, cyclotomic squaring, bilinearity, non-degeneracy and EIP-197's vectors
 * (go-ethereum's precompile tests). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../crypto/testhex.h"
#include "zk/pairing.h"
#include "zktest.h"

static const uint64_t P_LIMBS[4] = LD_BN254_P_LIMBS;
static const uint64_t R_LIMBS[4] = LD_BN254_R_LIMBS;

static void rand_fp2(uint64_t *s, ld_fp2_t *r) {
  zktest_fp(s, &r->c0);
  zktest_fp(s, &r->c1);
}

static void rand_fp12(uint64_t *s, ld_fp12_t *r) {
  ld_fp2_t *c[6] = {&r->c0.c0, &r->c0.c1, &r->c0.c2, &r->c1.c0, &r->c1.c1, &r->c1.c2};
  for (int i = 0; i < 6; i++) {
    rand_fp2(s, c[i]);
  }
}

static void fp2_ops(void **state) {
  (void)state;
  uint64_t seed = 20;
  for (int i = 0; i < 200; i++) {
    ld_fp2_t a, b, t, one;
    rand_fp2(&seed, &a);
    rand_fp2(&seed, &b);
    ld_fp2_sqr(&t, &a);
    ld_fp2_mul(&b, &a, &a);
    assert_true(ld_fp2_equal(&t, &b));
    ld_fp2_inv(&t, &a);
    ld_fp2_mul(&t, &t, &a);
    ld_fp2_set_one(&one);
    assert_true(ld_fp2_equal(&t, &one));
    /* a^2 always has a root, which squares back */
    ld_fp2_sqr(&t, &a);
    ld_fp2_t s, s2;
    assert_true(ld_fp2_sqrt_vartime(&s, &t));
    ld_fp2_sqr(&s2, &s);
    assert_true(ld_fp2_equal(&s2, &t));
    /* u * xi: xi = 9 + u */
    ld_fp2_t xi, m;
    ld_fp_from_u64(&xi.c0, 9);
    ld_fp_set_one(&xi.c1);
    ld_fp2_mul(&m, &a, &xi);
    ld_fp2_mul_xi(&t, &a);
    assert_true(ld_fp2_equal(&m, &t));
    /* conj = a^p */
    ld_fp2_pow(&m, &a, P_LIMBS);
    ld_fp2_conj(&t, &a);
    assert_true(ld_fp2_equal(&m, &t));
  }
  /* xi itself is a non-square in Fp2 (the tower needs it) */
  ld_fp2_t xi, s;
  ld_fp_from_u64(&xi.c0, 9);
  ld_fp_set_one(&xi.c1);
  assert_false(ld_fp2_sqrt_vartime(&s, &xi));
}

static void fp12_ops(void **state) {
  (void)state;
  uint64_t seed = 21;
  for (int i = 0; i < 10; i++) {
    ld_fp12_t a, b, c, t, u;
    rand_fp12(&seed, &a);
    rand_fp12(&seed, &b);
    rand_fp12(&seed, &c);
    ld_fp12_sqr(&t, &a);
    ld_fp12_mul(&u, &a, &a);
    assert_true(ld_fp12_equal(&t, &u));
    ld_fp12_mul(&t, &a, &b); /* commutative, associative */
    ld_fp12_mul(&u, &b, &a);
    assert_true(ld_fp12_equal(&t, &u));
    ld_fp12_mul(&t, &t, &c);
    ld_fp12_mul(&u, &b, &c);
    ld_fp12_mul(&u, &a, &u);
    assert_true(ld_fp12_equal(&t, &u));
    ld_fp12_inv(&t, &a);
    ld_fp12_mul(&t, &t, &a);
    assert_true(ld_fp12_is_one(&t));
    /* Frobenius = exponentiation by p, p^2, p^3 */
    ld_fp12_pow_vartime(&t, &a, P_LIMBS, 4);
    ld_fp12_frobenius(&u, &a, 1);
    assert_true(ld_fp12_equal(&t, &u));
    ld_fp12_pow_vartime(&t, &t, P_LIMBS, 4);
    ld_fp12_frobenius(&u, &a, 2);
    assert_true(ld_fp12_equal(&t, &u));
    ld_fp12_pow_vartime(&t, &t, P_LIMBS, 4);
    ld_fp12_frobenius(&u, &a, 3);
    assert_true(ld_fp12_equal(&t, &u));
    /* sparse line product = full product with the sparse element */
    ld_fp12_t sparse;
    memset(&sparse, 0, sizeof sparse);
    rand_fp2(&seed, &sparse.c0.c0);
    rand_fp2(&seed, &sparse.c1.c0);
    rand_fp2(&seed, &sparse.c1.c1);
    ld_fp12_mul(&t, &a, &sparse);
    ld_fp12_mul_034(&u, &a, &sparse.c0.c0, &sparse.c1.c0, &sparse.c1.c1);
    assert_true(ld_fp12_equal(&t, &u));
    /* cyclotomic squaring on g = a^((p^6 - 1)(p^2 + 1)) */
    ld_fp12_t g;
    ld_fp12_conj(&t, &a);
    ld_fp12_inv(&u, &a);
    ld_fp12_mul(&g, &t, &u);
    ld_fp12_frobenius(&t, &g, 2);
    ld_fp12_mul(&g, &t, &g);
    ld_fp12_sqr(&t, &g);
    ld_fp12_cyclotomic_sqr(&u, &g);
    assert_true(ld_fp12_equal(&t, &u));
    const uint64_t e = 0x44e992b44a6909f1ULL;
    ld_fp12_pow_vartime(&t, &g, &e, 1);
    ld_fp12_cyclotomic_exp(&u, &g, e);
    assert_true(ld_fp12_equal(&t, &u));
    ld_fp12_conj(&t, &g); /* conj is the inverse there */
    ld_fp12_mul(&t, &t, &g);
    assert_true(ld_fp12_is_one(&t));
  }
}

static void rand_points(uint64_t *seed, ld_g1_affine_t *p, ld_g2_affine_t *q, ld_fr_t *a,
                        ld_fr_t *b) {
  ld_g1_affine_t g1;
  ld_g2_affine_t g2;
  ld_g1_t pj;
  ld_g2_t qj;
  ld_g1_generator(&g1);
  ld_g2_generator(&g2);
  zktest_fr(seed, a);
  zktest_fr(seed, b);
  ld_g1_from_affine(&pj, &g1);
  ld_g2_from_affine(&qj, &g2);
  ld_g1_mul_fr_vartime(&pj, &pj, a);
  ld_g2_mul_fr_vartime(&qj, &qj, b);
  ld_g1_to_affine(p, &pj);
  ld_g2_to_affine(q, &qj);
}

static void bilinear_and_non_degenerate(void **state) {
  (void)state;
  uint64_t seed = 22;
  ld_g1_affine_t g1;
  ld_g2_affine_t g2;
  ld_g1_generator(&g1);
  ld_g2_generator(&g2);
  ld_fp12_t e, t;
  ld_pairing(&e, &g1, &g2);
  assert_false(ld_fp12_is_one(&e));
  ld_fp12_pow_vartime(&t, &e, R_LIMBS, 4); /* in GT: order r */
  assert_true(ld_fp12_is_one(&t));
  for (int i = 0; i < 3; i++) {
    ld_g1_affine_t p;
    ld_g2_affine_t q;
    ld_fr_t a, b, ab;
    rand_points(&seed, &p, &q, &a, &b);
    ld_fp12_t lhs, rhs;
    ld_pairing(&lhs, &p, &q); /* e(aG1, bG2) = e(G1, G2)^(ab) */
    ld_fr_mul(&ab, &a, &b);
    uint64_t k[4];
    ld_fr_to_limbs(k, &ab);
    ld_fp12_pow_vartime(&rhs, &e, k, 4);
    assert_true(ld_fp12_equal(&lhs, &rhs));
    /* e(P, Q) e(-P, Q) = 1 in one multi-Miller loop */
    ld_g1_affine_t pn[2] = {p, p};
    ld_fp_neg(&pn[1].y, &p.y);
    ld_g2_prepared_t *qp = malloc(2 * sizeof *qp);
    ld_g2_prepare(&qp[0], &q);
    ld_g2_prepare(&qp[1], &q);
    ld_fp12_t f;
    ld_pairing_miller_loop(&f, pn, qp, 2);
    ld_pairing_final_exp(&f, &f);
    assert_true(ld_fp12_is_one(&f));
    free(qp);
  }
  /* infinity on either side pairs to 1 */
  ld_g1_affine_t inf1 = g1;
  inf1.infinity = 1;
  ld_pairing(&t, &inf1, &g2);
  assert_true(ld_fp12_is_one(&t));
}

/* EIP-197 input: pairs of G1 (x, y) and G2 (x.c1, x.c0, y.c1, y.c0), 32-byte big-endian each. */
static int eip197_check(const char *hex) {
  size_t len = strlen(hex) / 2;
  uint8_t *in = malloc(len + 1);
  testhex(hex, in);
  size_t n = len / 192;
  ld_g1_affine_t *p = calloc(n + 1, sizeof *p);
  ld_g2_prepared_t *q = calloc(n + 1, sizeof *q);
  for (size_t i = 0; i < n; i++) {
    ld_fp_t v[6];
    for (int j = 0; j < 6; j++) {
      uint8_t le[32];
      for (int b = 0; b < 32; b++) {
        le[b] = in[192 * i + 32 * j + 31 - b];
      }
      assert_int_equal(ld_fp_from_bytes(&v[j], le), 0);
    }
    p[i] = (ld_g1_affine_t){v[0], v[1], ld_fp_is_zero(&v[0]) && ld_fp_is_zero(&v[1])};
    ld_g2_affine_t g2 = {{v[3], v[2]}, {v[5], v[4]}, 0};
    assert_true(ld_g1_is_on_curve(&p[i]));
    assert_true(ld_g2_is_on_curve(&g2) && ld_g2_is_in_subgroup(&g2));
    ld_g2_prepare(&q[i], &g2);
  }
  ld_fp12_t f;
  ld_pairing_miller_loop(&f, p, q, n);
  ld_pairing_final_exp(&f, &f);
  free(in);
  free(p);
  free(q);
  return ld_fp12_is_one(&f);
}

#define G2_GEN_BE                                                                                  \
  "198e9393920d483a7260bfb731fb5d25f1aa493335a9e71297e485b7aef312c2"                               \
  "1800deef121f1e76426a00665e5c4479674322d4f75edadd46debd5cd992f6ed"                               \
  "090689d0585ff075ec9e99ad690c3395bc4b313370b38ef355acdadcd122975b"                               \
  "12c85ea5db8c6deb4aab71808dcb408fe3d1e7690c43d37b4ce6cc0166fa7daa"

static void eip197_vectors(void **state) {
  (void)state;
  /* jeff1: true */
  assert_true(
      eip197_check("1c76476f4def4bb94541d57ebba1193381ffa7aa76ada664dd31c16024c43f59"
                   "3034dd2920f673e204fee2811c678745fc819b55d3e9d294e45c9b03a76aef41"
                   "209dd15ebff5d46c4bd888e51a93cf99a7329636c63514396b4a452003a35bf7"
                   "04bf11ca01483bfa8b34b43561848d28905960114c8ac04049af4b6315a41678"
                   "2bb8324af6cfc93537a2ad1a445cfd0ca2a71acd7ac41fadbf933c2a51be344d"
                   "120a2a4cf30c1bf9845f20c6fe39e07ea2cce61f0c9bb048165fe5e4de877550"
                   "111e129f1cf1097710d41c4ac70fcdfa5ba2023c6ff1cbeac322de49d1b6df7c"
                   "2032c61a830e3c17286de9462bf242fca2883585b93870a73853face6a6bf411" G2_GEN_BE));
  /* jeff6: the same with one coordinate changed: false */
  assert_false(
      eip197_check("1c76476f4def4bb94541d57ebba1193381ffa7aa76ada664dd31c16024c43f59"
                   "3034dd2920f673e204fee2811c678745fc819b55d3e9d294e45c9b03a76aef41"
                   "209dd15ebff5d46c4bd888e51a93cf99a7329636c63514396b4a452003a35bf7"
                   "04bf11ca01483bfa8b34b43561848d28905960114c8ac04049af4b6315a41678"
                   "2bb8324af6cfc93537a2ad1a445cfd0ca2a71acd7ac41fadbf933c2a51be344d"
                   "120a2a4cf30c1bf9845f20c6fe39e07ea2cce61f0c9bb048165fe5e4de877550"
                   "111e129f1cf1097710d41c4ac70fcdfa5ba2023c6ff1cbeac322de49d1b6df7c"
                   "103188585e2364128fe25c70558f1560f4f9350baf3959e603cc91486e110936" G2_GEN_BE));
  /* jeff2: true */
  assert_true(
      eip197_check("2eca0c7238bf16e83e7a1e6c5d49540685ff51380f309842a98561558019fc02"
                   "03d3260361bb8451de5ff5ecd17f010ff22f5c31cdf184e9020b06fa5997db84"
                   "1213d2149b006137fcfb23036606f848d638d576a120ca981b5b1a5f9300b3ee"
                   "2276cf730cf493cd95d64677bbb75fc42db72513a4c1e387b476d056f80aa75f"
                   "21ee6226d31426322afcda621464d0611d226783262e21bb3bc86b537e986237"
                   "096df1f82dff337dd5972e32a8ad43e28a78a96a823ef1cd4debe12b6552ea5f"
                   "06967a1237ebfeca9aaae0d6d0bab8e28c198c5a339ef8a2407e31cdac516db9"
                   "22160fa257a5fd5b280642ff47b65eca77e626cb685c84fa6d3b6882a283ddd1" G2_GEN_BE));
  /* one_point: e(G1, G2) alone is not 1 */
  assert_false(
      eip197_check("0000000000000000000000000000000000000000000000000000000000000001"
                   "0000000000000000000000000000000000000000000000000000000000000002" G2_GEN_BE));
  /* two_point_match_3: true */
  assert_true(
      eip197_check("0000000000000000000000000000000000000000000000000000000000000001"
                   "0000000000000000000000000000000000000000000000000000000000000002"
                   "203e205db4f19b37b60121b83a7333706db86431c6d835849957ed8c3928ad79"
                   "27dc7234fd11d3e8c36c59277c3e6f149d5cd3cfa9a62aee49f8130962b4b3b9"
                   "195e8aa5b7827463722b8c153931579d3505566b4edf48d498e185f0509de152"
                   "04bb53b8977e5f92a0bc372742c4830944a59b4fe6b1c0466e2a6dad122b5d2e"
                   "030644e72e131a029b85045b68181585d97816a916871ca8d3c208c16d87cfd3"
                   "1a76dae6d3272396d0cbe61fced2bc532edac647851e3ac53ce1cc9c7e645a83" G2_GEN_BE));
  /* two_point_match_4: true */
  assert_true(eip197_check("105456a333e6d636854f987ea7bb713dfd0ae8371a72aea313ae0c32c0bf1016"
                           "0cf031d41b41557f3e7e3ba0c51bebe5da8e6ecd855ec50fc87efcdeac168bcc"
                           "0476be093a6d2b4bbf907172049874af11e1b6267606e00804d3ff0037ec57fd"
                           "3010c68cb50161b7d1d96bb71edfec9880171954e56871abf3d93cc94d745fa1"
                           "14c059d74e5b6c4ec14ae5864ebe23a71781d86c29fb8fb6cce94f70d3de7a21"
                           "01b33461f39d9e887dbb100f170a2345dde3c07e256d1dfa2b657ba5cd030427"
                           "0000000000000000000000000000000000000000000000000000000000000001"
                           "0000000000000000000000000000000000000000000000000000000000000002"
                           "1a2c3013d2ea92e13c800cde68ef56a294b883f6ac35d25f587c09b1b3c635f7"
                           "290158a80cd3d66530f74dc94c94adb88f5cdb481acca997b6e60071f08a115f"
                           "2f997f3dbd66a7afe07fe7862ce239edba9e05c5afff7f8a1259c9733b2dfbb9"
                           "29d1691530ca701b4a106054688728c9972c8512e9789e9567aae23e302ccd75"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fp2_ops),
      cmocka_unit_test(fp12_ops),
      cmocka_unit_test(bilinear_and_non_degenerate),
      cmocka_unit_test(eip197_vectors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
