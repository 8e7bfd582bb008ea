/* Groth16 proof generation (snarkjs' algorithm over a zkey). */
#include "zk/groth16_prove.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "zk/fft.h"
#include "zk/msm.h"

struct ld_groth16_prover {
  ld_zkey_t *zk;
  ld_fr_domain_t *domain;
  unsigned threads; /* 1, or 2: the MSMs split over a second thread */
};

int ld_groth16_prover_new(ld_groth16_prover_t **out, ld_zkey_t *zk) {
  *out = NULL;
  ld_groth16_prover_t *p = calloc(1, sizeof *p);
  if (p == NULL) {
    ld_zkey_free(zk);
    return LD_ERR_NOMEM;
  }
  p->zk = zk;
  p->threads = 1;
  int rc = ld_fr_domain_new(&p->domain, zk->domain_log2);
  if (rc != 0) {
    ld_groth16_prover_free(p);
    return rc;
  }
  *out = p;
  return 0;
}

void ld_groth16_prover_free(ld_groth16_prover_t *p) {
  if (p == NULL) {
    return;
  }
  ld_fr_domain_free(p->domain);
  ld_zkey_free(p->zk);
  free(p);
}

const ld_zkey_t *ld_groth16_prover_key(const ld_groth16_prover_t *p) {
  return p->zk;
}

void ld_groth16_prover_set_threads(ld_groth16_prover_t *p, unsigned threads) {
  p->threads = threads >= 2 ? 2 : 1;
}

/* rows[i] = sum over the matrix's entries in row i of value * w[wire]. */
static void matrix_rows(ld_fr_t *rows, size_t n, const ld_zkey_coef_t *coefs, size_t count,
                        const ld_fr_t *w) {
  memset(rows, 0, n * sizeof *rows);
  for (size_t k = 0; k < count; k++) {
    ld_fr_t t;
    ld_fr_mul(&t, &coefs[k].value, &w[coefs[k].wire]);
    ld_fr_add(&rows[coefs[k].constraint], &rows[coefs[k].constraint], &t);
  }
}

/* h on the odd coset: (A·B − C)(g w^j) with C = A ∘ B on the domain. */
static int quotient_evaluations(const ld_groth16_prover_t *p, const ld_fr_t *w, ld_fr_t *h) {
  size_t n = p->zk->domain_size;
  ld_fr_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  if (a == NULL || b == NULL) {
    free(a);
    free(b);
    return LD_ERR_NOMEM;
  }
  matrix_rows(a, n, p->zk->coefs_a, p->zk->num_coefs_a, w);
  matrix_rows(b, n, p->zk->coefs_b, p->zk->num_coefs_b, w);
  for (size_t i = 0; i < n; i++) {
    ld_fr_mul(&h[i], &a[i], &b[i]);
  }
  ld_fr_t *polys[3] = {a, b, h};
  for (int k = 0; k < 3; k++) {
    ld_fr_ifft(p->domain, polys[k]);
    ld_fr_coset_fft(p->domain, polys[k]);
  }
  for (size_t i = 0; i < n; i++) {
    ld_fr_t ab;
    ld_fr_mul(&ab, &a[i], &b[i]);
    ld_fr_sub(&h[i], &ab, &h[i]);
  }
  explicit_bzero(a, n * sizeof *a);
  explicit_bzero(b, n * sizeof *b);
  free(a);
  free(b);
  return 0;
}

static void g1_add_mul(ld_g1_t *acc, const ld_g1_affine_t *base, const ld_fr_t *k) {
  ld_g1_t t, b;
  ld_g1_from_affine(&b, base);
  ld_g1_mul_fr_vartime(&t, &b, k);
  ld_g1_add(acc, acc, &t);
}

/* The MSMs of A (G1) and B (G2) over the witness: about half of a proof's MSM work. */
typedef struct ab_msms {
  const ld_zkey_t *zk;
  const ld_fr_t *w;
  ld_g1_t *a;
  ld_g2_t *b2;
  int rc;
} ab_msms_t;

static void *run_ab_msms(void *arg) {
  ab_msms_t *j = arg;
  j->rc = ld_g2_msm_pippenger(j->b2, j->zk->b2, j->w, j->zk->num_wires);
  if (j->rc == 0) {
    j->rc = ld_g1_msm_pippenger(j->a, j->zk->a, j->w, j->zk->num_wires);
  }
  return NULL;
}

/* The three G1 MSMs over the witness and the one over h, and B in G2: with two threads, A and B
 * on a second thread while this one does B1, C and H. */
static int commitments(const ld_groth16_prover_t *p, const ld_fr_t *w, const ld_fr_t *h, ld_g1_t *a,
                       ld_g1_t *b1, ld_g2_t *b2, ld_g1_t *c) {
  const ld_zkey_t *zk = p->zk;
  size_t priv = (size_t)zk->num_public + 1;
  ab_msms_t ab = {zk, w, a, b2, 0};
  pthread_t side;
  int threaded = p->threads >= 2 && pthread_create(&side, NULL, run_ab_msms, &ab) == 0;
  ld_g1_t hc;
  int rc = ld_g1_msm_pippenger(b1, zk->b1, w, zk->num_wires);
  if (rc == 0) {
    rc = ld_g1_msm_pippenger(c, zk->c, w + priv, zk->num_wires - priv);
  }
  if (rc == 0) {
    rc = ld_g1_msm_pippenger(&hc, zk->h, h, zk->domain_size);
  }
  if (rc == 0) {
    ld_g1_add(c, c, &hc);
  }
  if (threaded) {
    pthread_join(side, NULL);
  } else {
    run_ab_msms(&ab);
  }
  return rc != 0 ? rc : ab.rc;
}

int ld_groth16_prove_rs(const ld_groth16_prover_t *p, const ld_fr_t *w, size_t n, const ld_fr_t *r,
                        const ld_fr_t *s, ld_groth16_proof_t *out) {
  const ld_zkey_t *zk = p->zk;
  ld_fr_t one;
  ld_fr_set_one(&one);
  if (n != zk->num_wires || !ld_fr_equal(&w[0], &one)) {
    return LD_ERR_INVALID_ARG;
  }
  ld_fr_t *h = malloc(zk->domain_size * sizeof *h);
  if (h == NULL) {
    return LD_ERR_NOMEM;
  }
  ld_g1_t a, b1, c;
  ld_g2_t b2;
  int rc = quotient_evaluations(p, w, h);
  if (rc == 0) {
    rc = commitments(p, w, h, &a, &b1, &b2, &c);
  }
  explicit_bzero(h, zk->domain_size * sizeof *h);
  free(h);
  if (rc != 0) {
    return rc;
  }
  /* A = alpha1 + sum + r delta1; B = beta2 + sum + s delta2; B1 = beta1 + sum + s delta1 */
  ld_g1_add_affine(&a, &a, &zk->alpha1);
  g1_add_mul(&a, &zk->delta1, r);
  ld_g1_add_affine(&b1, &b1, &zk->beta1);
  g1_add_mul(&b1, &zk->delta1, s);
  ld_g2_t t2, d2;
  ld_g2_add_affine(&b2, &b2, &zk->beta2);
  ld_g2_from_affine(&d2, &zk->delta2);
  ld_g2_mul_fr_vartime(&t2, &d2, s);
  ld_g2_add(&b2, &b2, &t2);
  /* C += s A + r B1 - r s delta1 */
  ld_g1_t t;
  ld_g1_mul_fr_vartime(&t, &a, s);
  ld_g1_add(&c, &c, &t);
  ld_g1_mul_fr_vartime(&t, &b1, r);
  ld_g1_add(&c, &c, &t);
  ld_fr_t rs;
  ld_fr_mul(&rs, r, s);
  ld_fr_neg(&rs, &rs);
  g1_add_mul(&c, &zk->delta1, &rs);
  ld_g1_to_affine(&out->a, &a);
  ld_g2_to_affine(&out->b, &b2);
  ld_g1_to_affine(&out->c, &c);
  return 0;
}

static void random_scalar(ld_fr_t *k) {
  uint8_t b[64];
  ld_random_bytes(b, sizeof b);
  /* 512 random bits reduced mod r: a negligible bias. hi * 2^256 + lo. */
  ld_fr_t lo, hi, shift;
  b[31] &= 0x1f;
  b[63] &= 0x1f;
  ld_fr_from_bytes_reduce(&lo, b);
  ld_fr_from_bytes_reduce(&hi, b + 32);
  ld_fr_from_u64(&shift, 1);
  for (int i = 0; i < 253; i++) {
    ld_fr_add(&shift, &shift, &shift);
  }
  ld_fr_mul(&hi, &hi, &shift);
  ld_fr_add(k, &lo, &hi);
  explicit_bzero(b, sizeof b);
}

int ld_groth16_prove(const ld_groth16_prover_t *p, const ld_fr_t *w, size_t n,
                     ld_groth16_proof_t *out) {
  ld_fr_t r, s;
  random_scalar(&r);
  random_scalar(&s);
  int rc = ld_groth16_prove_rs(p, w, n, &r, &s, out);
  explicit_bzero(&r, sizeof r);
  explicit_bzero(&s, sizeof s);
  return rc;
}
