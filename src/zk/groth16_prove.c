/* Groth16 proof generation (snarkjs' algorithm over a zkey). */
#include "zk/groth16_prove.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
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

static void random_scalar(ld_fr_t *k);

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

/* Adds the key's constant terms and the blinding: A += alpha1 + r delta1, B += beta2 + s
 * delta2, B1 += beta1 + s delta1, C += s A + r B1 - r s delta1; writes the affine proof. */
static void finish_proof(const ld_zkey_t *zk, ld_g1_t *a, ld_g1_t *b1, ld_g2_t *b2, ld_g1_t *c,
                         const ld_fr_t *r, const ld_fr_t *s, ld_groth16_proof_t *out) {
  ld_g1_add_affine(a, a, &zk->alpha1);
  g1_add_mul(a, &zk->delta1, r);
  ld_g1_add_affine(b1, b1, &zk->beta1);
  g1_add_mul(b1, &zk->delta1, s);
  ld_g2_t t2, d2;
  ld_g2_add_affine(b2, b2, &zk->beta2);
  ld_g2_from_affine(&d2, &zk->delta2);
  ld_g2_mul_fr_vartime(&t2, &d2, s);
  ld_g2_add(b2, b2, &t2);
  ld_g1_t t;
  ld_g1_mul_fr_vartime(&t, a, s);
  ld_g1_add(c, c, &t);
  ld_g1_mul_fr_vartime(&t, b1, r);
  ld_g1_add(c, c, &t);
  ld_fr_t rs;
  ld_fr_mul(&rs, r, s);
  ld_fr_neg(&rs, &rs);
  g1_add_mul(c, &zk->delta1, &rs);
  explicit_bzero(&rs, sizeof rs);
  ld_g1_to_affine(&out->a, a);
  ld_g2_to_affine(&out->b, b2);
  ld_g1_to_affine(&out->c, c);
}

static int check_witness(const ld_zkey_t *zk, const ld_fr_t *w, size_t n) {
  ld_fr_t one;
  ld_fr_set_one(&one);
  return n != zk->num_wires || !ld_fr_equal(&w[0], &one) ? LD_ERR_INVALID_ARG : 0;
}

/* The H MSM over the quotient's evaluations (computed here): c = sum_j h_j H_j, from the H
 * points' table. */
static int quotient_commitment(const ld_groth16_prover_t *p, const ld_msm_table_t *th,
                               const ld_fr_t *w, ld_g1_t *c) {
  size_t n = p->zk->domain_size;
  ld_fr_t *h = malloc(n * sizeof *h);
  if (h == NULL) {
    return LD_ERR_NOMEM;
  }
  int rc = quotient_evaluations(p, w, h);
  if (rc == 0) {
    rc = th != NULL && ld_msm_table_complete(th) ? ld_g1_msm_table(c, th, h)
                                                 : ld_g1_msm_pippenger(c, p->zk->h, h, n);
  }
  explicit_bzero(h, n * sizeof *h);
  free(h);
  return rc;
}

int ld_groth16_prove_rs(const ld_groth16_prover_t *p, const ld_fr_t *w, size_t n, const ld_fr_t *r,
                        const ld_fr_t *s, ld_groth16_proof_t *out) {
  const ld_zkey_t *zk = p->zk;
  int rc = check_witness(zk, w, n);
  if (rc != 0) {
    return rc;
  }
  ld_fr_t *h = malloc(zk->domain_size * sizeof *h);
  if (h == NULL) {
    return LD_ERR_NOMEM;
  }
  ld_g1_t a, b1, c;
  ld_g2_t b2;
  rc = quotient_evaluations(p, w, h);
  if (rc == 0) {
    rc = commitments(p, w, h, &a, &b1, &b2, &c);
  }
  explicit_bzero(h, zk->domain_size * sizeof *h);
  free(h);
  if (rc != 0) {
    return rc;
  }
  finish_proof(zk, &a, &b1, &b2, &c, r, s, out);
  return 0;
}

/* ---- proofs with the fixed wires' sums cached ---- */

/* One group of wires (fixed or varying): their indices, and the key's points of each, gathered
 * so that an MSM over the group runs over contiguous arrays. C's points exist for the private
 * wires only: c_wires/c_points hold the group's private wires. */
typedef struct wire_group {
  uint32_t *wires, *c_wires;
  size_t n, c_n;
  ld_g1_affine_t *a, *b1, *c;
  ld_g2_affine_t *b2;
  ld_msm_table_t *ta, *tb1, *tb2, *tc; /* the varying group's fixed-base tables */
} wire_group_t;

struct ld_groth16_cache {
  const ld_groth16_prover_t *p;
  wire_group_t fixed, varying;
  ld_fr_t *fixed_values; /* the fixed wires' values the sums were made for (fixed.n) */
  ld_fr_t *scalars;      /* scratch: one group's scalars */
  ld_msm_table_t *th;    /* the H points' fixed-base table */
  unsigned building;     /* the table being built (TABLE_COUNT: all complete) */
  bool valid;
  ld_g1_t a, b1, c; /* sums over the fixed wires */
  ld_g2_t b2;
  uint64_t hits, misses;
};

static void group_free(wire_group_t *g) {
  free(g->wires);
  free(g->c_wires);
  free(g->a);
  free(g->b1);
  free(g->c);
  free(g->b2);
  ld_msm_table_free(g->ta);
  ld_msm_table_free(g->tb1);
  ld_msm_table_free(g->tb2);
  ld_msm_table_free(g->tc);
}

/* Gathers the wires whose flag equals `varying` and their points. */
static int group_build(wire_group_t *g, const ld_zkey_t *zk, const uint8_t *varies, int varying) {
  size_t priv = (size_t)zk->num_public + 1, n = 0, c_n = 0;
  for (size_t i = 0; i < zk->num_wires; i++) {
    if ((varies[i] != 0) == (varying != 0)) {
      n++;
      c_n += i >= priv;
    }
  }
  g->wires = malloc((n + 1) * sizeof *g->wires);
  g->c_wires = malloc((c_n + 1) * sizeof *g->c_wires);
  g->a = malloc((n + 1) * sizeof *g->a);
  g->b1 = malloc((n + 1) * sizeof *g->b1);
  g->b2 = malloc((n + 1) * sizeof *g->b2);
  g->c = malloc((c_n + 1) * sizeof *g->c);
  if (g->wires == NULL || g->c_wires == NULL || g->a == NULL || g->b1 == NULL || g->b2 == NULL ||
      g->c == NULL) {
    return LD_ERR_NOMEM;
  }
  for (size_t i = 0; i < zk->num_wires; i++) {
    if ((varies[i] != 0) != (varying != 0)) {
      continue;
    }
    g->wires[g->n] = (uint32_t)i;
    g->a[g->n] = zk->a[i];
    g->b1[g->n] = zk->b1[i];
    g->b2[g->n] = zk->b2[i];
    g->n++;
    if (i >= priv) {
      g->c_wires[g->c_n] = (uint32_t)i;
      g->c[g->c_n] = zk->c[i - priv];
      g->c_n++;
    }
  }
  return 0;
}

int ld_groth16_cache_new_deferred(ld_groth16_cache_t **out, const ld_groth16_prover_t *p,
                                  const uint8_t *wire_varies) {
  *out = NULL;
  const ld_zkey_t *zk = p->zk;
  ld_groth16_cache_t *c = calloc(1, sizeof *c);
  if (c == NULL) {
    return LD_ERR_NOMEM;
  }
  c->p = p;
  int rc = group_build(&c->fixed, zk, wire_varies, 0);
  if (rc == 0) {
    rc = group_build(&c->varying, zk, wire_varies, 1);
  }
  if (rc == 0) {
    c->fixed_values = calloc(c->fixed.n + 1, sizeof *c->fixed_values);
    c->scalars = calloc(zk->num_wires, sizeof *c->scalars);
    rc = c->fixed_values == NULL || c->scalars == NULL ? LD_ERR_NOMEM : 0;
  }
  if (rc != 0) {
    ld_groth16_cache_free(c);
    return rc;
  }
  *out = c;
  return 0;
}

/* The tables in the order they are built: the varying wires' A, B1, B2 (in G2), C, then H. */
enum { TABLE_A, TABLE_B1, TABLE_B2, TABLE_C, TABLE_H, TABLE_COUNT };

static ld_msm_table_t **table_slot(ld_groth16_cache_t *c, unsigned which) {
  wire_group_t *g = &c->varying;
  ld_msm_table_t **slots[TABLE_COUNT] = {&g->ta, &g->tb1, &g->tb2, &g->tc, &c->th};
  return slots[which];
}

static int table_begin(ld_groth16_cache_t *c, unsigned which) {
  const wire_group_t *g = &c->varying;
  ld_msm_table_t **t = table_slot(c, which);
  switch (which) {
  case TABLE_A:
    return ld_g1_msm_table_begin(t, g->a, g->n);
  case TABLE_B1:
    return ld_g1_msm_table_begin(t, g->b1, g->n);
  case TABLE_B2:
    return ld_g2_msm_table_begin(t, g->b2, g->n);
  case TABLE_C:
    return ld_g1_msm_table_begin(t, g->c, g->c_n);
  default:
    return ld_g1_msm_table_begin(t, c->p->zk->h, c->p->zk->domain_size);
  }
}

int ld_groth16_cache_build_step(ld_groth16_cache_t *c, size_t max_points) {
  if (c->building == TABLE_COUNT) {
    return 0;
  }
  ld_msm_table_t **t = table_slot(c, c->building);
  int rc = *t == NULL ? table_begin(c, c->building) : 0;
  if (rc == 0) {
    /* a G2 row costs about three G1 rows */
    size_t rows = c->building == TABLE_B2 ? max_points / 3 + 1 : max_points + 1;
    rc = ld_msm_table_build_step(*t, rows);
  }
  if (rc < 0) {
    return rc;
  }
  if (rc == 0) {
    c->building++;
  }
  return c->building < TABLE_COUNT ? 1 : 0;
}

bool ld_groth16_cache_complete(const ld_groth16_cache_t *c) {
  return c->building == TABLE_COUNT;
}

int ld_groth16_cache_new(ld_groth16_cache_t **out, const ld_groth16_prover_t *p,
                         const uint8_t *wire_varies) {
  int rc = ld_groth16_cache_new_deferred(out, p, wire_varies);
  int more = rc == 0 ? 1 : 0;
  while (more == 1) {
    more = ld_groth16_cache_build_step(*out, SIZE_MAX / 2);
  }
  if (rc == 0 && more < 0) {
    rc = more;
  }
  if (rc != 0) {
    ld_groth16_cache_free(*out);
    *out = NULL;
  }
  return rc;
}

void ld_groth16_cache_free(ld_groth16_cache_t *c) {
  if (c == NULL) {
    return;
  }
  if (c->fixed_values != NULL) {
    explicit_bzero(c->fixed_values, (c->fixed.n + 1) * sizeof *c->fixed_values);
  }
  if (c->scalars != NULL) {
    explicit_bzero(c->scalars, c->p->zk->num_wires * sizeof *c->scalars);
  }
  free(c->fixed_values);
  free(c->scalars);
  group_free(&c->fixed);
  group_free(&c->varying);
  ld_msm_table_free(c->th);
  explicit_bzero(c, sizeof *c);
  free(c);
}

void ld_groth16_cache_stats(const ld_groth16_cache_t *c, size_t *fixed_wires, uint64_t *hits,
                            uint64_t *misses) {
  if (fixed_wires != NULL) {
    *fixed_wires = c->fixed.n;
  }
  if (hits != NULL) {
    *hits = c->hits;
  }
  if (misses != NULL) {
    *misses = c->misses;
  }
}

/* Whether the fixed wires of w hold the values the sums were made for (without an early exit
 * on the first difference). */
static bool cache_matches(const ld_groth16_cache_t *c, const ld_fr_t *w) {
  if (!c->valid) {
    return false;
  }
  uint64_t diff = 0;
  for (size_t k = 0; k < c->fixed.n; k++) {
    const ld_fr_t *x = &w[c->fixed.wires[k]], *y = &c->fixed_values[k];
    for (size_t l = 0; l < sizeof x->l / sizeof x->l[0]; l++) {
      diff |= x->l[l] ^ y->l[l];
    }
  }
  return diff == 0;
}

/* Whether a fixed-base table exists and is complete (a cache still being built proves with
 * plain MSMs where its tables are missing). */
static bool usable(const ld_msm_table_t *t) {
  return t != NULL && ld_msm_table_complete(t);
}

/* The A, B1, B2 and C sums over one group of wires. */
static int group_sums(ld_groth16_cache_t *c, const wire_group_t *g, const ld_fr_t *w, ld_g1_t *a,
                      ld_g1_t *b1, ld_g2_t *b2, ld_g1_t *cc) {
  for (size_t k = 0; k < g->n; k++) {
    c->scalars[k] = w[g->wires[k]];
  }
  int rc = usable(g->ta) ? ld_g1_msm_table(a, g->ta, c->scalars)
                         : ld_g1_msm_pippenger(a, g->a, c->scalars, g->n);
  if (rc == 0) {
    rc = usable(g->tb1) ? ld_g1_msm_table(b1, g->tb1, c->scalars)
                        : ld_g1_msm_pippenger(b1, g->b1, c->scalars, g->n);
  }
  if (rc == 0) {
    rc = usable(g->tb2) ? ld_g2_msm_table(b2, g->tb2, c->scalars)
                        : ld_g2_msm_pippenger(b2, g->b2, c->scalars, g->n);
  }
  for (size_t k = 0; rc == 0 && k < g->c_n; k++) {
    c->scalars[k] = w[g->c_wires[k]];
  }
  if (rc == 0) {
    rc = usable(g->tc) ? ld_g1_msm_table(cc, g->tc, c->scalars)
                       : ld_g1_msm_pippenger(cc, g->c, c->scalars, g->c_n);
  }
  explicit_bzero(c->scalars, g->n * sizeof *c->scalars);
  return rc;
}

/* Moves valid sums made for the fixed values v to those of w: the sums are linear in the
 * wires, so they change by the sums over (w_i - v_i), whose zeros (the wires that kept their
 * value) the MSMs skip. A new Merkle root changes the path's levels from the one where the new
 * leaf joins up to the root, so it costs those levels' wires rather than all fixed wires. */
static int cache_move(ld_groth16_cache_t *c, const ld_fr_t *w) {
  size_t nw = c->p->zk->num_wires;
  ld_fr_t *delta = calloc(nw, sizeof *delta);
  if (delta == NULL) {
    return LD_ERR_NOMEM;
  }
  for (size_t k = 0; k < c->fixed.n; k++) {
    uint32_t i = c->fixed.wires[k];
    ld_fr_sub(&delta[i], &w[i], &c->fixed_values[k]);
  }
  ld_g1_t a, b1, cc;
  ld_g2_t b2;
  int rc = group_sums(c, &c->fixed, delta, &a, &b1, &b2, &cc);
  explicit_bzero(delta, nw * sizeof *delta);
  free(delta);
  if (rc == 0) {
    ld_g1_add(&c->a, &c->a, &a);
    ld_g1_add(&c->b1, &c->b1, &b1);
    ld_g2_add(&c->b2, &c->b2, &b2);
    ld_g1_add(&c->c, &c->c, &cc);
  }
  explicit_bzero(&a, sizeof a);
  explicit_bzero(&b1, sizeof b1);
  explicit_bzero(&b2, sizeof b2);
  explicit_bzero(&cc, sizeof cc);
  return rc;
}

/* Makes the fixed wires' sums for w: from scratch when the cache is empty, else by moving the
 * sums it holds (cache_move). */
static int cache_fill(ld_groth16_cache_t *c, const ld_fr_t *w) {
  bool had_sums = c->valid;
  c->valid = false;
  int rc = had_sums ? cache_move(c, w) : group_sums(c, &c->fixed, w, &c->a, &c->b1, &c->b2, &c->c);
  if (rc != 0) {
    return rc;
  }
  for (size_t k = 0; k < c->fixed.n; k++) {
    c->fixed_values[k] = w[c->fixed.wires[k]];
  }
  c->valid = true;
  return 0;
}

int ld_groth16_prove_cached_rs(ld_groth16_cache_t *c, const ld_fr_t *w, size_t n, const ld_fr_t *r,
                               const ld_fr_t *s, ld_groth16_proof_t *out) {
  const ld_groth16_prover_t *p = c->p;
  int rc = check_witness(p->zk, w, n);
  if (rc != 0) {
    return rc;
  }
  if (cache_matches(c, w)) {
    c->hits++;
  } else {
    c->misses++;
    rc = cache_fill(c, w);
    if (rc != 0) {
      return rc;
    }
  }
  ld_g1_t a, b1, cc, hc;
  ld_g2_t b2;
  rc = group_sums(c, &c->varying, w, &a, &b1, &b2, &cc);
  if (rc == 0) {
    rc = quotient_commitment(p, c->th, w, &hc);
  }
  if (rc != 0) {
    return rc;
  }
  ld_g1_add(&a, &a, &c->a);
  ld_g1_add(&b1, &b1, &c->b1);
  ld_g2_add(&b2, &b2, &c->b2);
  ld_g1_add(&cc, &cc, &c->c);
  ld_g1_add(&cc, &cc, &hc);
  finish_proof(p->zk, &a, &b1, &b2, &cc, r, s, out);
  return 0;
}

int ld_groth16_cache_prepare(ld_groth16_cache_t *c, const ld_fr_t *w, size_t n) {
  int rc = check_witness(c->p->zk, w, n);
  if (rc != 0) {
    return rc;
  }
  if (cache_matches(c, w)) {
    return 0;
  }
  rc = cache_fill(c, w);
  return rc != 0 ? rc : 1;
}

/* Proves with fresh blinding scalars r and s (wiped afterwards): through the cache c when it is
 * not NULL, else with the prover p alone. */
static int prove_blinded(const ld_groth16_prover_t *p, ld_groth16_cache_t *c, const ld_fr_t *w,
                         size_t n, ld_groth16_proof_t *out) {
  ld_fr_t r, s;
  random_scalar(&r);
  random_scalar(&s);
  int rc = c != NULL ? ld_groth16_prove_cached_rs(c, w, n, &r, &s, out)
                     : ld_groth16_prove_rs(p, w, n, &r, &s, out);
  explicit_bzero(&r, sizeof r);
  explicit_bzero(&s, sizeof s);
  return rc;
}

int ld_groth16_prove_cached(ld_groth16_cache_t *c, const ld_fr_t *w, size_t n,
                            ld_groth16_proof_t *out) {
  return prove_blinded(c->p, c, w, n, out);
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
  return prove_blinded(p, NULL, w, n, out);
}
