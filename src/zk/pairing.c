/* Miller loop with precomputed lines (homogeneous projective doubling and addition steps of
 * Costello-Lange-Naehrig / Aranha et al., D-type twist) and the final exponentiation of
 * Fuentes-Castaneda, Knapp and Rodriguez-Henriquez. */
#include "zk/pairing.h"

#include <string.h>

static const signed char ATE_NAF[LD_BN254_ATE_NAF_LEN] = LD_BN254_ATE_NAF;
static const ld_fp2_t G2_B = LD_BN254_G2_B;

typedef struct {
  ld_fp2_t x, y, z;
} hom_point_t;

/* T = 2T; returns the tangent line's coefficients (D-type: -h, 3x^2, 3b'z^2 - y^2). */
static void doubling_step(hom_point_t *t, ld_fp2_t ell[3], const ld_fp_t *two_inv) {
  ld_fp2_t a, b, c, e, f, g, h, i, j, e2, s;
  ld_fp2_mul(&a, &t->x, &t->y);
  ld_fp2_mul_fp(&a, &a, two_inv);
  ld_fp2_sqr(&b, &t->y);
  ld_fp2_sqr(&c, &t->z);
  ld_fp2_dbl(&e, &c);
  ld_fp2_add(&e, &e, &c);
  ld_fp2_mul(&e, &e, &G2_B);
  ld_fp2_dbl(&f, &e);
  ld_fp2_add(&f, &f, &e);
  ld_fp2_add(&g, &b, &f);
  ld_fp2_mul_fp(&g, &g, two_inv);
  ld_fp2_add(&h, &t->y, &t->z);
  ld_fp2_sqr(&h, &h);
  ld_fp2_add(&s, &b, &c);
  ld_fp2_sub(&h, &h, &s);
  ld_fp2_sub(&i, &e, &b);
  ld_fp2_sqr(&j, &t->x);
  ld_fp2_sqr(&e2, &e);
  ld_fp2_sub(&s, &b, &f);
  ld_fp2_mul(&t->x, &a, &s);
  ld_fp2_sqr(&s, &g);
  ld_fp2_sub(&s, &s, &e2);
  ld_fp2_sub(&s, &s, &e2);
  ld_fp2_sub(&t->y, &s, &e2);
  ld_fp2_mul(&t->z, &b, &h);
  ld_fp2_neg(&ell[0], &h);
  ld_fp2_dbl(&ell[1], &j);
  ld_fp2_add(&ell[1], &ell[1], &j);
  ell[2] = i;
}

/* T = T + Q (Q affine); returns the chord's coefficients (D-type: lambda, -theta, j). */
static void addition_step(hom_point_t *t, ld_fp2_t ell[3], const ld_g2_affine_t *q) {
  ld_fp2_t theta, lambda, c, d, e, f, g, h, s;
  ld_fp2_mul(&s, &q->y, &t->z);
  ld_fp2_sub(&theta, &t->y, &s);
  ld_fp2_mul(&s, &q->x, &t->z);
  ld_fp2_sub(&lambda, &t->x, &s);
  ld_fp2_sqr(&c, &theta);
  ld_fp2_sqr(&d, &lambda);
  ld_fp2_mul(&e, &lambda, &d);
  ld_fp2_mul(&f, &t->z, &c);
  ld_fp2_mul(&g, &t->x, &d);
  ld_fp2_add(&h, &e, &f);
  ld_fp2_sub(&h, &h, &g);
  ld_fp2_sub(&h, &h, &g);
  ld_fp2_mul(&t->x, &lambda, &h);
  ld_fp2_sub(&s, &g, &h);
  ld_fp2_mul(&s, &theta, &s);
  ld_fp2_mul(&f, &e, &t->y);
  ld_fp2_sub(&t->y, &s, &f);
  ld_fp2_mul(&t->z, &t->z, &e);
  ld_fp2_mul(&s, &theta, &q->x);
  ld_fp2_mul(&f, &lambda, &q->y);
  ell[0] = lambda;
  ld_fp2_neg(&ell[1], &theta);
  ld_fp2_sub(&ell[2], &s, &f);
}

void ld_g2_prepare(ld_g2_prepared_t *out, const ld_g2_affine_t *q) {
  out->n = 0;
  out->infinity = q->infinity;
  if (q->infinity) {
    return;
  }
  ld_fp_t two_inv;
  ld_fp_from_u64(&two_inv, 2);
  ld_fp_inv(&two_inv, &two_inv);
  hom_point_t t = {q->x, q->y, {{{0}}, {{0}}}};
  ld_fp2_set_one(&t.z);
  ld_g2_affine_t neg_q = *q;
  ld_fp2_neg(&neg_q.y, &q->y);
  for (int i = LD_BN254_ATE_NAF_LEN - 2; i >= 0; i--) {
    doubling_step(&t, out->ell[out->n++], &two_inv);
    if (ATE_NAF[i] == 1) {
      addition_step(&t, out->ell[out->n++], q);
    } else if (ATE_NAF[i] == -1) {
      addition_step(&t, out->ell[out->n++], &neg_q);
    }
  }
  ld_g2_affine_t q1, q2;
  ld_g2_psi(&q1, q);
  ld_g2_psi(&q2, &q1);
  ld_fp2_neg(&q2.y, &q2.y);
  addition_step(&t, out->ell[out->n++], &q1);
  addition_step(&t, out->ell[out->n++], &q2);
}

static void ell(ld_fp12_t *f, const ld_fp2_t coeffs[3], const ld_g1_affine_t *p) {
  ld_fp2_t c0, c1;
  ld_fp2_mul_fp(&c0, &coeffs[0], &p->y);
  ld_fp2_mul_fp(&c1, &coeffs[1], &p->x);
  ld_fp12_mul_034(f, f, &c0, &c1, &coeffs[2]);
}

#define MAX_PAIRS 16

void ld_pairing_miller_loop_ptrs(ld_fp12_t *f, const ld_g1_affine_t *const *p,
                                 const ld_g2_prepared_t *const *q, size_t n) {
  ld_fp12_set_one(f);
  for (size_t base = 0; base < n; base += MAX_PAIRS) {
    /* the pairs that contribute, in chunks that share one squaring chain */
    const ld_g1_affine_t *ps[MAX_PAIRS];
    const ld_g2_prepared_t *qs[MAX_PAIRS];
    size_t m = 0;
    for (size_t i = base; i < n && i < base + MAX_PAIRS; i++) {
      if (!p[i]->infinity && !q[i]->infinity) {
        ps[m] = p[i];
        qs[m++] = q[i];
      }
    }
    ld_fp12_t acc;
    ld_fp12_set_one(&acc);
    size_t idx = 0;
    for (int i = LD_BN254_ATE_NAF_LEN - 1; i >= 1; i--) {
      if (i != LD_BN254_ATE_NAF_LEN - 1) {
        ld_fp12_sqr(&acc, &acc);
      }
      for (size_t k = 0; k < m; k++) {
        ell(&acc, qs[k]->ell[idx], ps[k]);
      }
      idx++;
      if (ATE_NAF[i - 1] != 0) {
        for (size_t k = 0; k < m; k++) {
          ell(&acc, qs[k]->ell[idx], ps[k]);
        }
        idx++;
      }
    }
    for (int extra = 0; extra < 2; extra++, idx++) {
      for (size_t k = 0; k < m; k++) {
        ell(&acc, qs[k]->ell[idx], ps[k]);
      }
    }
    ld_fp12_mul(f, f, &acc);
  }
}

void ld_pairing_miller_loop(ld_fp12_t *f, const ld_g1_affine_t *p, const ld_g2_prepared_t *q,
                            size_t n) {
  ld_fp12_set_one(f);
  for (size_t base = 0; base < n; base += MAX_PAIRS) {
    const ld_g1_affine_t *ps[MAX_PAIRS];
    const ld_g2_prepared_t *qs[MAX_PAIRS];
    size_t m = 0;
    for (size_t i = base; i < n && i < base + MAX_PAIRS; i++, m++) {
      ps[m] = &p[i];
      qs[m] = &q[i];
    }
    ld_fp12_t part;
    ld_pairing_miller_loop_ptrs(&part, ps, qs, m);
    ld_fp12_mul(f, f, &part);
  }
}

/* f^-x (x > 0 for BN254): cyclotomic exponentiation then the cyclotomic inverse. */
static void exp_by_neg_x(ld_fp12_t *r, const ld_fp12_t *f) {
  ld_fp12_cyclotomic_exp(r, f, LD_BN254_X);
  ld_fp12_conj(r, r);
}

void ld_pairing_final_exp(ld_fp12_t *out, const ld_fp12_t *f) {
  /* easy part: f^((p^6 - 1)(p^2 + 1)) */
  ld_fp12_t r, t;
  ld_fp12_conj(&t, f);
  ld_fp12_inv(&r, f);
  ld_fp12_mul(&r, &t, &r);
  ld_fp12_frobenius(&t, &r, 2);
  ld_fp12_mul(&r, &t, &r);
  /* hard part */
  ld_fp12_t y0, y1, y2, y3, y4, y5, y6, y7, y8, y9, y10, y11, y12, y13, y14, y15;
  exp_by_neg_x(&y0, &r);
  ld_fp12_cyclotomic_sqr(&y1, &y0);
  ld_fp12_cyclotomic_sqr(&y2, &y1);
  ld_fp12_mul(&y3, &y2, &y1);
  exp_by_neg_x(&y4, &y3);
  ld_fp12_cyclotomic_sqr(&y5, &y4);
  exp_by_neg_x(&y6, &y5);
  ld_fp12_conj(&y3, &y3);
  ld_fp12_conj(&y6, &y6);
  ld_fp12_mul(&y7, &y6, &y4);
  ld_fp12_mul(&y8, &y7, &y3);
  ld_fp12_mul(&y9, &y8, &y1);
  ld_fp12_mul(&y10, &y8, &y4);
  ld_fp12_mul(&y11, &y10, &r);
  ld_fp12_frobenius(&y12, &y9, 1);
  ld_fp12_mul(&y13, &y12, &y11);
  ld_fp12_frobenius(&y8, &y8, 2);
  ld_fp12_mul(&y14, &y8, &y13);
  ld_fp12_conj(&r, &r);
  ld_fp12_mul(&y15, &r, &y9);
  ld_fp12_frobenius(&y15, &y15, 3);
  ld_fp12_mul(out, &y15, &y14);
}

void ld_pairing(ld_fp12_t *r, const ld_g1_affine_t *p, const ld_g2_affine_t *q) {
  ld_g2_prepared_t prep;
  ld_g2_prepare(&prep, q);
  ld_fp12_t f;
  ld_pairing_miller_loop(&f, p, &prep, 1);
  ld_pairing_final_exp(r, &f);
}
