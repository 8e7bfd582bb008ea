/* RLN-v2 proof generation: the two-adic root and the NTTs, Pippenger's MSM (G1 with and without
 * GLV, the GLV split against GMP) and the fixed-base tables against the plain sum, the zkey
 * reader and witness-graph loader on good and broken bytes, the native witness (its public wires
 * equal the values computed outside the circuit) and Groth16 proofs from it that our verifier
 * accepts for random identities, paths, epochs and messages and rejects when tampered; the
 * graph's split of the wires into a member's fixed ones and a message's, and proofs through a
 * proving context (its cache reused, and remade when the root changes). The circuit files come
 * from LD_RLN_FIXTURES (rln_final.zkey, graph.bin). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "zk/fft.h"
#include "zk/groth16_prove.h"
#include "zk/msm.h"
#include "zk/rln_prover.h"
#include "zk/witness_graph.h"
#include "zk/zkey.h"
#include "rln_circuit.h"
#include "zktest.h"

static void fr_dec(ld_fr_t *r, const char *s) {
  assert_int_equal(ld_fr_from_decimal(r, s, strlen(s)), 0);
}

/* arkworks' and snarkjs' TWO_ADIC_ROOT_OF_UNITY for BN254's Fr. */
static void two_adic_root(void **state) {
  (void)state;
  ld_fr_t w, expect, one;
  ld_fr_two_adic_root(&w);
  fr_dec(&expect, "19103219067921713944291392827692070036145651957329286315305642004821462161904");
  assert_true(ld_fr_equal(&w, &expect));
  /* order exactly 2^28 */
  for (int i = 0; i < 27; i++) {
    ld_fr_sqr(&w, &w);
  }
  ld_fr_set_one(&one);
  assert_false(ld_fr_equal(&w, &one));
  ld_fr_sqr(&w, &w);
  assert_true(ld_fr_equal(&w, &one));
}

/* The NTT equals evaluating the polynomial at w^i (and at g w^i on the coset); inverses undo. */
static void fft_matches_evaluation(void **state) {
  (void)state;
  uint64_t seed = 11;
  ld_fr_domain_t *d;
  assert_int_equal(ld_fr_domain_new(&d, 5), 0);
  size_t n = ld_fr_domain_size(d);
  ld_fr_t coef[32], ev[32], cev[32], w, g, one;
  for (size_t i = 0; i < n; i++) {
    zktest_fr(&seed, &coef[i]);
  }
  memcpy(ev, coef, sizeof coef);
  memcpy(cev, coef, sizeof coef);
  ld_fr_fft(d, ev);
  ld_fr_coset_fft(d, cev);
  ld_fr_domain_generator(d, &w);
  ld_fr_two_adic_root(&g);
  for (int i = 0; i < LD_FR_TWO_ADICITY - 6; i++) {
    ld_fr_sqr(&g, &g); /* a primitive 64th root: the coset shift of a 32-point domain */
  }
  ld_fr_set_one(&one);
  ld_fr_t x = one;
  for (size_t i = 0; i < n; i++) {
    ld_fr_t xs[2], acc[2];
    xs[0] = x;
    ld_fr_mul(&xs[1], &x, &g);
    for (int k = 0; k < 2; k++) {
      ld_fr_set_zero(&acc[k]);
      for (size_t j = n; j-- > 0;) { /* Horner */
        ld_fr_mul(&acc[k], &acc[k], &xs[k]);
        ld_fr_add(&acc[k], &acc[k], &coef[j]);
      }
    }
    assert_true(ld_fr_equal(&acc[0], &ev[i]));
    assert_true(ld_fr_equal(&acc[1], &cev[i]));
    ld_fr_mul(&x, &x, &w);
  }
  ld_fr_ifft(d, ev);
  ld_fr_coset_ifft(d, cev);
  for (size_t i = 0; i < n; i++) {
    assert_true(ld_fr_equal(&ev[i], &coef[i]));
    assert_true(ld_fr_equal(&cev[i], &coef[i]));
  }
  ld_fr_domain_free(d);
  assert_int_equal(ld_fr_domain_new(&d, 0), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_fr_domain_new(&d, LD_FR_TWO_ADICITY), LD_ERR_INVALID_ARG);
}

/* Pippenger against sum_i [k_i] P_i one by one, with zero scalars, -1, infinity and repeats. */
static void msm_matches_naive(void **state) {
  (void)state;
  uint64_t seed = 5;
  size_t sizes[] = {0, 1, 3, 40, 300};
  for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
    size_t n = sizes[t];
    ld_g1_affine_t *p1 = calloc(n + 1, sizeof *p1);
    ld_g2_affine_t *p2 = calloc(n + 1, sizeof *p2);
    ld_fr_t *k = calloc(n + 1, sizeof *k);
    ld_g1_t e1, got1, acc1, g1;
    ld_g2_t e2, got2, acc2, g2;
    ld_g1_affine_t gen1;
    ld_g2_affine_t gen2;
    ld_g1_generator(&gen1);
    ld_g2_generator(&gen2);
    ld_g1_from_affine(&g1, &gen1);
    ld_g2_from_affine(&g2, &gen2);
    ld_g1_set_infinity(&acc1);
    ld_g2_set_infinity(&acc2);
    for (size_t i = 0; i < n; i++) {
      ld_fr_t m;
      zktest_fr(&seed, &m);
      ld_g1_mul_fr_vartime(&e1, &g1, &m);
      ld_g2_mul_fr_vartime(&e2, &g2, &m);
      ld_g1_to_affine(&p1[i], &e1);
      ld_g2_to_affine(&p2[i], &e2);
      switch (i % 7) {
      case 0:
        ld_fr_set_zero(&k[i]);
        break;
      case 1:
        ld_fr_set_one(&k[i]);
        ld_fr_neg(&k[i], &k[i]);
        break;
      case 2:
        ld_fr_from_u64(&k[i], i);
        break;
      case 3:
        p1[i].infinity = 1;
        p2[i].infinity = 1;
        zktest_fr(&seed, &k[i]);
        break;
      case 4:
        if (i > 0) {
          p1[i] = p1[i - 1];
          p2[i] = p2[i - 1];
        }
        zktest_fr(&seed, &k[i]);
        break;
      default:
        zktest_fr(&seed, &k[i]);
        break;
      }
      ld_g1_t pj1, t1;
      ld_g2_t pj2, t2;
      ld_g1_from_affine(&pj1, &p1[i]);
      ld_g2_from_affine(&pj2, &p2[i]);
      ld_g1_mul_fr_vartime(&t1, &pj1, &k[i]);
      ld_g2_mul_fr_vartime(&t2, &pj2, &k[i]);
      ld_g1_add(&acc1, &acc1, &t1);
      ld_g2_add(&acc2, &acc2, &t2);
    }
    assert_int_equal(ld_g1_msm_pippenger(&got1, p1, k, n), 0);
    assert_int_equal(ld_g2_msm_pippenger(&got2, p2, k, n), 0);
    assert_true(ld_g1_equal(&got1, &acc1));
    assert_true(ld_g2_equal(&got2, &acc2));
    /* the G1 MSM without the endomorphism gives the same sum */
    assert_int_equal(ld_g1_msm_pippenger_noglv(&got1, p1, k, n), 0);
    assert_true(ld_g1_equal(&got1, &acc1));
    /* the fixed-base tables give the same sums */
    ld_msm_table_t *t1, *t2;
    assert_int_equal(ld_g1_msm_table_new(&t1, p1, n), 0);
    assert_int_equal(ld_g2_msm_table_new(&t2, p2, n), 0);
    assert_int_equal(ld_g1_msm_table(&got1, t1, k), 0);
    assert_int_equal(ld_g2_msm_table(&got2, t2, k), 0);
    assert_true(ld_g1_equal(&got1, &acc1));
    assert_true(ld_g2_equal(&got2, &acc2));
    assert_int_equal(ld_g2_msm_table(&got2, t1, k), LD_ERR_INVALID_ARG);
    ld_msm_table_free(t1);
    ld_msm_table_free(t2);
    /* the same tables built in slices of 7 rows: refused until complete, then the same sums */
    assert_int_equal(ld_g1_msm_table_begin(&t1, p1, n), 0);
    assert_int_equal(ld_g2_msm_table_begin(&t2, p2, n), 0);
    size_t steps = 0;
    while (!ld_msm_table_complete(t1)) {
      assert_int_equal(ld_g1_msm_table(&got1, t1, k), LD_ERR_STATE);
      int rc = ld_msm_table_build_step(t1, 7);
      assert_int_equal(rc, ld_msm_table_complete(t1) ? 0 : 1);
      steps++;
    }
    assert_int_equal(steps, n == 0 ? 0 : (n + 6) / 7);
    while (ld_msm_table_build_step(t2, 7) == 1) {
      assert_int_equal(ld_g2_msm_table(&got2, t2, k), LD_ERR_STATE);
    }
    assert_int_equal(ld_msm_table_build_step(t1, 7), 0);
    assert_int_equal(ld_g1_msm_table(&got1, t1, k), 0);
    assert_int_equal(ld_g2_msm_table(&got2, t2, k), 0);
    assert_true(ld_g1_equal(&got1, &acc1));
    assert_true(ld_g2_equal(&got2, &acc2));
    ld_msm_table_free(t1);
    ld_msm_table_free(t2);
    free(p1);
    free(p2);
    free(k);
  }
}

/* The GLV split against GMP: k = (-1)^neg1 k1 + lambda (-1)^neg2 k2 (mod r) with both halves
 * below 2^127, for random scalars and the edges (0, 1, r - 1, lambda, -lambda, 2^253); phi(P) is
 * [lambda] P; and the GLV MSM equals the plain one for a few thousand random points and
 * scalars. */
static void glv_split_and_endomorphism(void **state) {
  (void)state;
  static const char *LAMBDA = "4407920970296243842393367215006156084916469457145843978461";
  static const char *R =
      "21888242871839275222246405745257275088548364400416034343698204186575808495617";
  mpz_t r, lambda, want, got, h1, h2;
  mpz_inits(r, lambda, want, got, h1, h2, NULL);
  mpz_set_str(r, R, 10);
  mpz_set_str(lambda, LAMBDA, 10);
  uint64_t seed = 99;
  ld_fr_t lam;
  assert_int_equal(ld_fr_from_decimal(&lam, LAMBDA, strlen(LAMBDA)), 0);
  for (int i = 0; i < 20000; i++) {
    ld_fr_t k;
    switch (i) {
    case 0:
      ld_fr_set_zero(&k);
      break;
    case 1:
      ld_fr_set_one(&k);
      break;
    case 2:
      ld_fr_set_one(&k);
      ld_fr_neg(&k, &k);
      break;
    case 3:
      k = lam;
      break;
    case 4:
      ld_fr_neg(&k, &lam);
      break;
    case 5: {
      uint8_t b[32] = {0};
      b[31] = 0x20; /* 2^253 */
      assert_int_equal(ld_fr_from_bytes(&k, b), 0);
      break;
    }
    default:
      zktest_fr(&seed, &k);
    }
    uint64_t k1[4], k2[4];
    int n1, n2;
    ld_fr_glv_split(&k, k1, &n1, k2, &n2);
    assert_true(k1[2] == 0 && k1[3] == 0 && k1[1] >> 63 == 0);
    assert_true(k2[2] == 0 && k2[3] == 0 && k2[1] >> 63 == 0);
    mpz_import(h1, 4, -1, 8, 0, 0, k1);
    mpz_import(h2, 4, -1, 8, 0, 0, k2);
    if (n1) {
      mpz_neg(h1, h1);
    }
    if (n2) {
      mpz_neg(h2, h2);
    }
    mpz_mul(got, h2, lambda);
    mpz_add(got, got, h1);
    mpz_mod(got, got, r);
    zktest_mpz_from_fr(want, &k);
    assert_int_equal(mpz_cmp(got, want), 0);
  }
  mpz_clears(r, lambda, want, got, h1, h2, NULL);

  ld_g1_affine_t gen, phi, want_a;
  ld_g1_t g, lg;
  ld_g1_generator(&gen);
  ld_g1_from_affine(&g, &gen);
  for (int i = 0; i < 4; i++) {
    ld_fr_t m;
    zktest_fr(&seed, &m);
    ld_g1_t pj;
    ld_g1_affine_t pa;
    ld_g1_mul_fr_vartime(&pj, &g, &m);
    ld_g1_to_affine(&pa, &pj);
    ld_g1_endomorphism(&phi, &pa);
    ld_g1_mul_fr_vartime(&lg, &pj, &lam);
    ld_g1_to_affine(&want_a, &lg);
    assert_memory_equal(&phi.x, &want_a.x, sizeof phi.x);
    assert_memory_equal(&phi.y, &want_a.y, sizeof phi.y);
  }

  enum { N = 3000 };
  ld_g1_affine_t *pts = calloc(N, sizeof *pts);
  ld_fr_t *k = calloc(N, sizeof *k);
  assert_non_null(pts);
  assert_non_null(k);
  ld_g1_t acc, step;
  ld_g1_mul_fr_vartime(&acc, &g, &lam);
  for (size_t i = 0; i < N; i++) { /* points from a cheap chain: P_i = P_{i-1} + step */
    if (i % 97 == 0) {
      ld_fr_t m;
      zktest_fr(&seed, &m);
      ld_g1_mul_fr_vartime(&step, &g, &m);
    }
    ld_g1_add(&acc, &acc, &step);
    ld_g1_to_affine(&pts[i], &acc);
    zktest_fr(&seed, &k[i]);
  }
  ld_g1_t a, b;
  assert_int_equal(ld_g1_msm_pippenger(&a, pts, k, N), 0);
  assert_int_equal(ld_g1_msm_pippenger_noglv(&b, pts, k, N), 0);
  assert_true(ld_g1_equal(&a, &b));
  free(pts);
  free(k);
}

/* One point many times: bucket sums hit the doubling and cancelling cases of the affine
 * addition. sum = [sum k_i] G. */
static void msm_repeated_points(void **state) {
  (void)state;
  uint64_t seed = 17;
  enum { N = 96 };
  ld_g1_affine_t p1[N];
  ld_g2_affine_t p2[N];
  ld_fr_t k[N], total, base;
  ld_g1_generator(&p1[0]);
  ld_g2_generator(&p2[0]);
  zktest_fr(&seed, &base);
  ld_fr_set_zero(&total);
  for (int i = 0; i < N; i++) {
    p1[i] = p1[0];
    p2[i] = p2[0];
    k[i] = base; /* equal digits everywhere: doublings */
    if (i % 3 == 1) {
      ld_fr_neg(&k[i], &base); /* opposite digits: cancellations */
    } else if (i % 3 == 2) {
      ld_fr_from_u64(&k[i], (uint64_t)i);
    }
    ld_fr_add(&total, &total, &k[i]);
  }
  ld_g1_t got1, want1, g1;
  ld_g2_t got2, want2, g2;
  ld_g1_from_affine(&g1, &p1[0]);
  ld_g2_from_affine(&g2, &p2[0]);
  ld_g1_mul_fr_vartime(&want1, &g1, &total);
  ld_g2_mul_fr_vartime(&want2, &g2, &total);
  assert_int_equal(ld_g1_msm_pippenger(&got1, p1, k, N), 0);
  assert_int_equal(ld_g2_msm_pippenger(&got2, p2, k, N), 0);
  assert_true(ld_g1_equal(&got1, &want1));
  assert_true(ld_g2_equal(&got2, &want2));
}

static void random_witness(uint64_t *seed, ld_rln_witness_t *w) {
  memset(w, 0, sizeof *w);
  zktest_fr(seed, &w->identity_secret);
  uint64_t limits[] = {1, 10, 100, 65535};
  w->user_message_limit = limits[zktest_next(seed) % 4];
  w->message_id = zktest_next(seed) % w->user_message_limit;
  w->merkle.depth = LD_RLN_TREE_DEPTH;
  uint64_t index = zktest_next(seed);
  for (int l = 0; l < LD_RLN_TREE_DEPTH; l++) {
    zktest_fr(seed, &w->merkle.path[l]);
    w->merkle.index_bits[l] = (uint8_t)((index >> l) & 1);
  }
  uint8_t msg[40], epoch[32] = {0}, rln_id[32] = "rln/waku-rln-relay/v2.0.0";
  zktest_bytes(seed, msg, sizeof msg);
  zktest_bytes(seed, epoch, 8);
  ld_rln_hash_to_field(&w->x, msg, sizeof msg);
  ld_rln_external_nullifier(&w->external_nullifier, epoch, rln_id);
}

/* The native witness's public wires are the values computed outside the circuit. */
static void witness_public_wires(void **state) {
  (void)state;
  uint64_t seed = 99;
  size_t n = ld_rln_prover_num_wires(rln_circuit.prover);
  assert_int_equal(n, 5844);
  ld_fr_t *wires = malloc(n * sizeof *wires);
  for (int t = 0; t < 20; t++) {
    ld_rln_witness_t w;
    ld_rln_proof_values_t v;
    random_witness(&seed, &w);
    assert_int_equal(ld_rln_proof_values_from_witness(&v, &w), 0);
    assert_int_equal(ld_rln_witness_compute(rln_circuit.prover, &w, wires), 0);
    ld_fr_t one;
    ld_fr_set_one(&one);
    assert_true(ld_fr_equal(&wires[0], &one));
    assert_true(ld_fr_equal(&wires[1], &v.y));
    assert_true(ld_fr_equal(&wires[2], &v.root));
    assert_true(ld_fr_equal(&wires[3], &v.nullifier));
    assert_true(ld_fr_equal(&wires[4], &v.x));
    assert_true(ld_fr_equal(&wires[5], &v.external_nullifier));
    assert_true(ld_fr_equal(&wires[6], &w.identity_secret));
  }
  ld_rln_witness_t w;
  random_witness(&seed, &w);
  w.message_id = w.user_message_limit;
  assert_int_equal(ld_rln_witness_compute(rln_circuit.prover, &w, wires), LD_ERR_INVALID_ARG);
  free(wires);
}

/* Our proofs verify with our verifier; each tampered value and flipped proof byte fails. */
static void proofs_verify(void **state) {
  (void)state;
  uint64_t seed = 2026;
  for (int t = 0; t < 3; t++) {
    ld_rln_witness_t w;
    ld_rln_proof_values_t v, expect;
    uint8_t proof[LD_RLN_PROOF_BYTES];
    random_witness(&seed, &w);
    assert_int_equal(ld_rln_prove(rln_circuit.prover, &w, proof, &v), 0);
    assert_int_equal(ld_rln_proof_values_from_witness(&expect, &w), 0);
    assert_memory_equal(&v, &expect, sizeof v);
    assert_int_equal(ld_rln_verify(rln_circuit.verifier, proof, &v), 0);
    ld_fr_t one;
    ld_fr_set_one(&one);
    ld_fr_t *fields[5] = {&v.root, &v.external_nullifier, &v.x, &v.y, &v.nullifier};
    for (int f = 0; f < 5; f++) {
      ld_rln_proof_values_t bad = v;
      ld_fr_t *bf[5] = {&bad.root, &bad.external_nullifier, &bad.x, &bad.y, &bad.nullifier};
      ld_fr_add(bf[f], fields[f], &one);
      assert_int_equal(ld_rln_verify(rln_circuit.verifier, proof, &bad), LD_ERR_BAD_PROOF);
    }
    uint8_t flipped[LD_RLN_PROOF_BYTES];
    memcpy(flipped, proof, sizeof proof);
    flipped[zktest_next(&seed) % 128] ^= (uint8_t)(1u << (zktest_next(&seed) % 8));
    assert_int_not_equal(ld_rln_verify(rln_circuit.verifier, flipped, &v), 0);
  }
}

/* Fixed r and s give the same proof twice; other r, s another proof that also verifies. */
static void proofs_blinded(void **state) {
  (void)state;
  uint64_t seed = 7;
  ld_rln_witness_t w;
  random_witness(&seed, &w);
  ld_fr_t r, s;
  zktest_fr(&seed, &r);
  zktest_fr(&seed, &s);
  uint8_t p1[128], p2[128], p3[128];
  ld_rln_proof_values_t v;
  assert_int_equal(ld_rln_prove_rs(rln_circuit.prover, &w, &r, &s, p1, &v), 0);
  assert_int_equal(ld_rln_prove_rs(rln_circuit.prover, &w, &r, &s, p2, &v), 0);
  assert_memory_equal(p1, p2, 128);
  assert_int_equal(ld_rln_prove(rln_circuit.prover, &w, p3, &v), 0);
  assert_memory_not_equal(p1, p3, 128);
  assert_int_equal(ld_rln_verify(rln_circuit.verifier, p1, &v), 0);
  assert_int_equal(ld_rln_verify(rln_circuit.verifier, p3, &v), 0);
}

/* With the MSMs split over two threads a proof is the same bytes as on one, and verifies. */
static void proofs_two_threads(void **state) {
  (void)state;
  uint64_t seed = 11;
  ld_rln_witness_t w;
  random_witness(&seed, &w);
  ld_fr_t r, s;
  zktest_fr(&seed, &r);
  zktest_fr(&seed, &s);
  uint8_t one[128], two[128];
  ld_rln_proof_values_t v1, v2;
  assert_int_equal(ld_rln_prove_rs(rln_circuit.prover, &w, &r, &s, one, &v1), 0);
  ld_rln_prover_set_threads(rln_circuit.prover, 2);
  int rc = ld_rln_prove_rs(rln_circuit.prover, &w, &r, &s, two, &v2);
  ld_rln_prover_set_threads(rln_circuit.prover, 1);
  assert_int_equal(rc, 0);
  assert_memory_equal(one, two, 128);
  assert_memory_equal(&v1, &v2, sizeof v1);
  assert_int_equal(ld_rln_verify(rln_circuit.verifier, two, &v2), 0);
}

/* The same member with another message id, x and external nullifier: the message's wires. */
static void next_message(uint64_t *seed, ld_rln_witness_t *w) {
  w->message_id = zktest_next(seed) % w->user_message_limit;
  uint8_t msg[40], epoch[32] = {0}, rln_id[32] = "rln/waku-rln-relay/v2.0.0";
  zktest_bytes(seed, msg, sizeof msg);
  zktest_bytes(seed, epoch, 8);
  ld_rln_hash_to_field(&w->x, msg, sizeof msg);
  ld_rln_external_nullifier(&w->external_nullifier, epoch, rln_id);
}

/* The wires the graph marks independent of the message id, x and external nullifier keep
 * their values across two messages of one member; some of the others change (y, nullifier). */
static void graph_dependents_split(void **state) {
  (void)state;
  ld_witness_graph_t *g;
  assert_int_equal(ld_witness_graph_load(&g, rln_circuit.graph, rln_circuit.graph_len), 0);
  size_t ni = ld_witness_graph_num_inputs(g), nw = ld_witness_graph_num_wires(g);
  uint8_t *in = calloc(ni, 1), *varies = malloc(nw);
  size_t off, len;
  const char *names[] = {"messageId", "x", "externalNullifier"};
  for (int i = 0; i < 3; i++) {
    assert_int_equal(ld_witness_graph_input(g, names[i], &off, &len), 0);
    in[off] = 1;
  }
  assert_int_equal(ld_witness_graph_dependents(g, in, varies), 0);
  ld_witness_graph_free(g);
  ld_fr_t *w1 = malloc(nw * sizeof *w1), *w2 = malloc(nw * sizeof *w2);
  uint64_t seed = 31;
  ld_rln_witness_t w;
  random_witness(&seed, &w);
  w.user_message_limit = 100;
  w.message_id = 3;
  assert_int_equal(ld_rln_witness_compute(rln_circuit.prover, &w, w1), 0);
  next_message(&seed, &w);
  w.message_id = 4;
  assert_int_equal(ld_rln_witness_compute(rln_circuit.prover, &w, w2), 0);
  size_t fixed = 0, changed = 0;
  for (size_t i = 0; i < nw; i++) {
    int same = ld_fr_equal(&w1[i], &w2[i]);
    if (!varies[i]) {
      assert_true(same);
      fixed++;
    } else {
      changed += !same;
    }
  }
  assert_false(varies[0]); /* the constant 1 */
  assert_false(varies[2]); /* the root */
  assert_true(varies[1] && varies[3] && varies[4] && varies[5]);
  assert_true(fixed > nw / 2);
  assert_true(changed > 0);
  free(w1);
  free(w2);
  free(in);
  free(varies);
}

/* A proving context gives the same proof as the prover alone for the same r and s: the first
 * proof fills its cache, the next message of the member reuses it, a changed Merkle path (a new
 * root) and another member remake it; every proof verifies. */
static void proofs_cached(void **state) {
  (void)state;
  uint64_t seed = 4242;
  ld_rln_proving_ctx_t *ctx;
  assert_int_equal(ld_rln_proving_ctx_new(&ctx, rln_circuit.prover), 0);
  size_t fixed;
  uint64_t hits, misses;
  ld_rln_proving_ctx_stats(ctx, &fixed, &hits, &misses);
  assert_true(fixed > 0 && fixed < ld_rln_prover_num_wires(rln_circuit.prover));
  assert_int_equal(hits + misses, 0);
  ld_rln_witness_t w;
  random_witness(&seed, &w);
  uint64_t expect_hits[] = {0, 1, 2, 2, 3, 3};
  uint64_t expect_misses[] = {1, 1, 1, 2, 2, 3};
  for (int t = 0; t < 6; t++) {
    if (t == 1 || t == 2 || t == 4) {
      next_message(&seed, &w);
    } else if (t == 3) {
      zktest_fr(&seed, &w.merkle.path[LD_RLN_TREE_DEPTH - 1]); /* the tree changed: new root */
    } else if (t == 5) {
      random_witness(&seed, &w); /* another member */
    }
    ld_fr_t r, s;
    zktest_fr(&seed, &r);
    zktest_fr(&seed, &s);
    uint8_t plain[128], cached[128];
    ld_rln_proof_values_t v1, v2;
    assert_int_equal(ld_rln_prove_rs(rln_circuit.prover, &w, &r, &s, plain, &v1), 0);
    assert_int_equal(ld_rln_prove_ctx_rs(ctx, &w, &r, &s, cached, &v2), 0);
    assert_memory_equal(plain, cached, 128);
    assert_memory_equal(&v1, &v2, sizeof v1);
    assert_int_equal(ld_rln_verify(rln_circuit.verifier, cached, &v2), 0);
    ld_rln_proving_ctx_stats(ctx, NULL, &hits, &misses);
    assert_int_equal(hits, expect_hits[t]);
    assert_int_equal(misses, expect_misses[t]);
  }
  /* fresh randomness through the context verifies too */
  uint8_t proof[128];
  ld_rln_proof_values_t v;
  next_message(&seed, &w);
  assert_int_equal(ld_rln_prove_ctx(ctx, &w, proof, &v), 0);
  assert_int_equal(ld_rln_verify(rln_circuit.verifier, proof, &v), 0);
  ld_rln_proving_ctx_stats(ctx, NULL, &hits, &misses);
  assert_int_equal(hits, 4);
  ld_rln_proving_ctx_free(ctx);
}

/* Broken zkeys: truncations at every section boundary and inside, bad magic, a coordinate
 * pushed off the curve. */
static void zkey_errors(void **state) {
  (void)state;
  ld_zkey_t *zk;
  assert_int_equal(ld_zkey_read(&zk, rln_circuit.zkey, rln_circuit.zkey_len), 0);
  assert_int_equal(zk->num_wires, 5844);
  assert_int_equal(zk->num_public, 5);
  assert_int_equal(zk->domain_size, 8192);
  ld_zkey_free(zk);
  size_t cuts[] = {0, 3, 11, 12, 100, 1000, rln_circuit.zkey_len / 2, rln_circuit.zkey_len - 1};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
    assert_int_equal(ld_zkey_read(&zk, rln_circuit.zkey, cuts[i]), LD_ERR_MALFORMED);
    assert_null(zk);
  }
  uint8_t *copy = malloc(rln_circuit.zkey_len);
  memcpy(copy, rln_circuit.zkey, rln_circuit.zkey_len);
  copy[0] = 'x';
  assert_int_equal(ld_zkey_read(&zk, copy, rln_circuit.zkey_len), LD_ERR_MALFORMED);
  /* alpha1 in the Groth16 header: a changed y is off the curve, an all-ones x is >= p */
  size_t at = 12, alpha1 = 0;
  while (at + 12 <= rln_circuit.zkey_len && alpha1 == 0) {
    uint32_t type = (uint32_t)copy[at] | (uint32_t)copy[at + 1] << 8;
    uint64_t size = 0;
    for (int b = 7; b >= 0; b--) {
      size = size << 8 | copy[at + 4 + b];
    }
    if (type == 2) {
      alpha1 = at + 12 + 4 + 32 + 4 + 32 + 12;
    }
    at += 12 + size;
  }
  assert_int_not_equal(alpha1, 0);
  memcpy(copy, rln_circuit.zkey, rln_circuit.zkey_len);
  copy[alpha1 + 32] ^= 1;
  assert_int_equal(ld_zkey_read(&zk, copy, rln_circuit.zkey_len), LD_ERR_BAD_POINT);
  memcpy(copy, rln_circuit.zkey, rln_circuit.zkey_len);
  memset(copy + alpha1, 0xff, 32);
  assert_int_equal(ld_zkey_read(&zk, copy, rln_circuit.zkey_len), LD_ERR_OVERFLOW);
  free(copy);
}

/* Broken graphs: truncations, bad magic, trailing bytes. */
static void graph_errors(void **state) {
  (void)state;
  ld_witness_graph_t *g;
  assert_int_equal(ld_witness_graph_load(&g, rln_circuit.graph, rln_circuit.graph_len), 0);
  assert_int_equal(ld_witness_graph_num_wires(g), 5844);
  size_t off, len;
  assert_int_equal(ld_witness_graph_input(g, "pathElements", &off, &len), 0);
  assert_int_equal(len, LD_RLN_TREE_DEPTH);
  assert_int_equal(ld_witness_graph_input(g, "nope", &off, &len), LD_ERR_NOT_FOUND);
  ld_witness_graph_free(g);
  size_t cuts[] = {0,
                   13,
                   14,
                   22,
                   23,
                   1000,
                   rln_circuit.graph_len / 2,
                   rln_circuit.graph_len - 9,
                   rln_circuit.graph_len - 1};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
    assert_int_equal(ld_witness_graph_load(&g, rln_circuit.graph, cuts[i]), LD_ERR_MALFORMED);
    assert_null(g);
  }
  uint8_t *copy = malloc(rln_circuit.graph_len + 1);
  memcpy(copy, rln_circuit.graph, rln_circuit.graph_len);
  copy[rln_circuit.graph_len] = 0;
  assert_int_equal(ld_witness_graph_load(&g, copy, rln_circuit.graph_len + 1), LD_ERR_MALFORMED);
  copy[3] ^= 1;
  assert_int_equal(ld_witness_graph_load(&g, copy, rln_circuit.graph_len), LD_ERR_MALFORMED);
  free(copy);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(two_adic_root),
      cmocka_unit_test(fft_matches_evaluation),
      cmocka_unit_test(msm_matches_naive),
      cmocka_unit_test(msm_repeated_points),
      cmocka_unit_test(glv_split_and_endomorphism),
      cmocka_unit_test(zkey_errors),
      cmocka_unit_test(graph_errors),
      cmocka_unit_test(witness_public_wires),
      cmocka_unit_test(proofs_verify),
      cmocka_unit_test(proofs_blinded),
      cmocka_unit_test(proofs_two_threads),
      cmocka_unit_test(graph_dependents_split),
      cmocka_unit_test(proofs_cached),
  };
  return cmocka_run_group_tests(tests, rln_circuit_setup, rln_circuit_teardown);
}
