/* Groth16 verification with a prepared snarkjs verifying key. */
#include "zk/groth16.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "zk/pairing.h"

/* Far above any circuit this library verifies (RLN-v2 has 5). */
#define MAX_PUBLIC 64

/* Fixed-base tables for the input points: window w (4 bits of the scalar) holds j * 16^w * P for
 * j = 1..15 in affine form, so that sum_i input_i IC[i+1] costs one mixed addition per non-zero
 * window and no doubling (about 68 KiB per input). */
#define WINDOWS 64
typedef struct {
  ld_g1_affine_t t[WINDOWS][15];
} fixed_base_t;

struct ld_groth16_vk {
  size_t n_public;
  ld_g1_affine_t *ic;   /* n_public + 1 */
  fixed_base_t *tables; /* n_public: for ic[1..] */
  ld_fp12_t alpha_beta;
  ld_g2_prepared_t neg_gamma, neg_delta;
  /* for batches: e(alpha, beta) enters the product as e(-R alpha, beta) */
  ld_g1_affine_t alpha;
  ld_g2_prepared_t beta;
};

int ld_groth16_proof_decode(ld_groth16_proof_t *out, const uint8_t in[LD_GROTH16_PROOF_BYTES]) {
  int rc = ld_g1_from_compressed(&out->a, in);
  if (rc == 0) {
    rc = ld_g2_from_compressed(&out->b, in + 32);
  }
  if (rc == 0) {
    rc = ld_g1_from_compressed(&out->c, in + 96);
  }
  return rc;
}

void ld_groth16_proof_encode(uint8_t out[LD_GROTH16_PROOF_BYTES], const ld_groth16_proof_t *p) {
  ld_g1_to_compressed(out, &p->a);
  ld_g2_to_compressed(out + 32, &p->b);
  ld_g1_to_compressed(out + 96, &p->c);
}

/* ---- snarkjs JSON ---------------------------------------------------------------------------- */

static int json_fp(ld_fp_t *r, json_t *v) {
  const char *s = json_string_value(v);
  if (s == NULL) {
    return LD_ERR_MALFORMED;
  }
  return ld_fp_from_decimal(r, s, strlen(s));
}

static int json_is(json_t *v, const char *want) {
  const char *s = json_string_value(v);
  return s != NULL && strcmp(s, want) == 0;
}

/* [x, y, z] with z "1", or infinity ["0", "1", "0"]. */
static int json_g1(ld_g1_affine_t *r, json_t *v) {
  if (!json_is_array(v) || json_array_size(v) != 3) {
    return LD_ERR_MALFORMED;
  }
  memset(r, 0, sizeof *r);
  if (json_is(json_array_get(v, 2), "0")) {
    int ok = json_is(json_array_get(v, 0), "0") && json_is(json_array_get(v, 1), "1");
    r->infinity = 1;
    return ok ? 0 : LD_ERR_MALFORMED;
  }
  if (!json_is(json_array_get(v, 2), "1")) {
    return LD_ERR_MALFORMED;
  }
  int rc = json_fp(&r->x, json_array_get(v, 0));
  if (rc == 0) {
    rc = json_fp(&r->y, json_array_get(v, 1));
  }
  if (rc == 0 && !ld_g1_is_on_curve(r)) {
    rc = LD_ERR_BAD_POINT;
  }
  return rc;
}

static int json_fp2(ld_fp2_t *r, json_t *v) {
  if (!json_is_array(v) || json_array_size(v) != 2) {
    return LD_ERR_MALFORMED;
  }
  int rc = json_fp(&r->c0, json_array_get(v, 0));
  return rc == 0 ? json_fp(&r->c1, json_array_get(v, 1)) : rc;
}

/* [[x0, x1], [y0, y1], ["1", "0"]], or infinity [["0","0"], ["1","0"], ["0","0"]]. */
static int json_g2(ld_g2_affine_t *r, json_t *v) {
  if (!json_is_array(v) || json_array_size(v) != 3) {
    return LD_ERR_MALFORMED;
  }
  memset(r, 0, sizeof *r);
  ld_fp2_t z;
  int rc = json_fp2(&z, json_array_get(v, 2));
  if (rc != 0) {
    return rc;
  }
  ld_fp2_t one;
  ld_fp2_set_one(&one);
  if (ld_fp2_is_zero(&z)) {
    r->infinity = 1;
    return 0;
  }
  if (!ld_fp2_equal(&z, &one)) {
    return LD_ERR_MALFORMED;
  }
  rc = json_fp2(&r->x, json_array_get(v, 0));
  if (rc == 0) {
    rc = json_fp2(&r->y, json_array_get(v, 1));
  }
  if (rc == 0 && (!ld_g2_is_on_curve(r) || !ld_g2_is_in_subgroup(r))) {
    rc = LD_ERR_BAD_POINT;
  }
  return rc;
}

/* Affine forms of n Jacobian points with one inversion (Montgomery's trick). */
static void batch_to_affine(ld_g1_affine_t *out, const ld_g1_t *in, size_t n, ld_fp_t *scratch) {
  ld_fp_t acc, inv;
  ld_fp_set_one(&acc);
  for (size_t i = 0; i < n; i++) {
    scratch[i] = acc;
    if (!ld_g1_is_infinity(&in[i])) {
      ld_fp_mul(&acc, &acc, &in[i].z);
    }
  }
  ld_fp_inv(&inv, &acc);
  for (size_t i = n; i-- > 0;) {
    if (ld_g1_is_infinity(&in[i])) {
      memset(&out[i], 0, sizeof out[i]);
      out[i].infinity = 1;
      continue;
    }
    ld_fp_t zinv, zinv2;
    ld_fp_mul(&zinv, &inv, &scratch[i]);
    ld_fp_mul(&inv, &inv, &in[i].z);
    ld_fp_sqr(&zinv2, &zinv);
    ld_fp_mul(&out[i].x, &in[i].x, &zinv2);
    ld_fp_mul(&zinv2, &zinv2, &zinv);
    ld_fp_mul(&out[i].y, &in[i].y, &zinv2);
    out[i].infinity = 0;
  }
}

static int build_fixed_base(fixed_base_t *table, const ld_g1_affine_t *p) {
  ld_g1_t *jac = malloc(WINDOWS * 15 * sizeof *jac);
  ld_fp_t *scratch = malloc(WINDOWS * 15 * sizeof *scratch);
  if (jac == NULL || scratch == NULL) {
    free(jac);
    free(scratch);
    return LD_ERR_NOMEM;
  }
  ld_g1_t base;
  ld_g1_from_affine(&base, p);
  for (int w = 0; w < WINDOWS; w++) {
    jac[w * 15] = base;
    for (int j = 1; j < 15; j++) {
      ld_g1_add(&jac[w * 15 + j], &jac[w * 15 + j - 1], &base);
    }
    for (int d = 0; d < 4; d++) {
      ld_g1_dbl(&base, &base);
    }
  }
  batch_to_affine(&table->t[0][0], jac, WINDOWS * 15, scratch);
  free(jac);
  free(scratch);
  return 0;
}

/* IC[0] + sum_i inputs[i] IC[i+1] from the fixed-base tables. */
static void linear_combination(ld_g1_affine_t *out, const ld_groth16_vk_t *vk,
                               const ld_fr_t *inputs) {
  ld_g1_t acc;
  ld_g1_from_affine(&acc, &vk->ic[0]);
  for (size_t i = 0; i < vk->n_public; i++) {
    uint64_t k[4];
    ld_fr_to_limbs(k, &inputs[i]);
    for (int w = 0; w < WINDOWS; w++) {
      unsigned nib = (unsigned)(k[w / 16] >> (4 * (w % 16))) & 15;
      if (nib) {
        ld_g1_add_affine(&acc, &acc, &vk->tables[i].t[w][nib - 1]);
      }
    }
  }
  ld_g1_to_affine(out, &acc);
}

static void prepare_negated(ld_g2_prepared_t *out, const ld_g2_affine_t *q) {
  ld_g2_affine_t neg = *q;
  ld_fp2_neg(&neg.y, &q->y);
  ld_g2_prepare(out, &neg);
}

static int vk_fill(ld_groth16_vk_t *vk, json_t *root) {
  if (!json_is_object(root) || !json_is(json_object_get(root, "protocol"), "groth16") ||
      !json_is(json_object_get(root, "curve"), "bn128")) {
    return LD_ERR_MALFORMED;
  }
  json_t *ic = json_object_get(root, "IC");
  json_t *npub = json_object_get(root, "nPublic");
  if (!json_is_array(ic) || !json_is_integer(npub) || json_integer_value(npub) < 0 ||
      json_integer_value(npub) > MAX_PUBLIC ||
      json_array_size(ic) != (size_t)json_integer_value(npub) + 1) {
    return LD_ERR_MALFORMED;
  }
  vk->n_public = (size_t)json_integer_value(npub);
  vk->ic = calloc(vk->n_public + 1, sizeof *vk->ic);
  if (vk->ic == NULL) {
    return LD_ERR_NOMEM;
  }
  for (size_t i = 0; i <= vk->n_public; i++) {
    int rc = json_g1(&vk->ic[i], json_array_get(ic, i));
    if (rc != 0) {
      return rc;
    }
  }
  ld_g1_affine_t alpha;
  ld_g2_affine_t beta, gamma, delta;
  int rc = json_g1(&alpha, json_object_get(root, "vk_alpha_1"));
  if (rc == 0) {
    rc = json_g2(&beta, json_object_get(root, "vk_beta_2"));
  }
  if (rc == 0) {
    rc = json_g2(&gamma, json_object_get(root, "vk_gamma_2"));
  }
  if (rc == 0) {
    rc = json_g2(&delta, json_object_get(root, "vk_delta_2"));
  }
  if (rc != 0) {
    return rc;
  }
  ld_pairing(&vk->alpha_beta, &alpha, &beta);
  vk->alpha = alpha;
  ld_g2_prepare(&vk->beta, &beta);
  prepare_negated(&vk->neg_gamma, &gamma);
  prepare_negated(&vk->neg_delta, &delta);
  vk->tables = calloc(vk->n_public ? vk->n_public : 1, sizeof *vk->tables);
  if (vk->tables == NULL) {
    return LD_ERR_NOMEM;
  }
  for (size_t i = 0; i < vk->n_public; i++) {
    if ((rc = build_fixed_base(&vk->tables[i], &vk->ic[i + 1])) != 0) {
      return rc;
    }
  }
  return 0;
}

int ld_groth16_vk_from_json(ld_groth16_vk_t **out, const char *json, size_t len) {
  json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, NULL);
  if (root == NULL) {
    return LD_ERR_MALFORMED;
  }
  ld_groth16_vk_t *vk = calloc(1, sizeof *vk);
  int rc = vk == NULL ? LD_ERR_NOMEM : vk_fill(vk, root);
  json_decref(root);
  if (rc != 0) {
    ld_groth16_vk_free(vk);
    return rc;
  }
  *out = vk;
  return 0;
}

void ld_groth16_vk_free(ld_groth16_vk_t *vk) {
  if (vk != NULL) {
    free(vk->ic);
    free(vk->tables);
    free(vk);
  }
}

size_t ld_groth16_vk_num_public(const ld_groth16_vk_t *vk) {
  return vk->n_public;
}

int ld_groth16_verify(const ld_groth16_vk_t *vk, const ld_groth16_proof_t *proof,
                      const ld_fr_t *inputs, size_t n) {
  if (n != vk->n_public) {
    return LD_ERR_INVALID_ARG;
  }
  ld_g1_affine_t l;
  linear_combination(&l, vk, inputs);

  ld_g2_prepared_t *b = malloc(sizeof *b);
  if (b == NULL) {
    return LD_ERR_NOMEM;
  }
  ld_g2_prepare(b, &proof->b);
  const ld_g1_affine_t *ps[3] = {&proof->a, &l, &proof->c};
  const ld_g2_prepared_t *qs[3] = {b, &vk->neg_gamma, &vk->neg_delta};
  ld_fp12_t f;
  ld_pairing_miller_loop_ptrs(&f, ps, qs, 3);
  free(b);
  ld_pairing_final_exp(&f, &f);
  return ld_fp12_equal(&f, &vk->alpha_beta) ? 0 : LD_ERR_BAD_PROOF;
}

/* ---- batches -------------------------------------------------------------------------------- */

/* The randomiser r_i: 128 random bits as limbs and as a field element (never zero). */
typedef struct {
  uint64_t k[2];
  ld_fr_t fr;
} randomiser_t;

static void draw_randomisers(randomiser_t *r, size_t count) {
  ld_fr_t two64;
  ld_fr_from_u64(&two64, 1ull << 32);
  ld_fr_sqr(&two64, &two64);
  for (size_t i = 0; i < count; i++) {
    ld_random_bytes(r[i].k, sizeof r[i].k);
    r[i].k[0] |= 1;
    ld_fr_t lo, hi;
    ld_fr_from_u64(&lo, r[i].k[0]);
    ld_fr_from_u64(&hi, r[i].k[1]);
    ld_fr_mul(&hi, &hi, &two64);
    ld_fr_add(&r[i].fr, &lo, &hi);
  }
}

/* sum_i r_i (IC[0] + sum_j x_ij IC[j+1]) = R IC[0] + sum_j (sum_i r_i x_ij) IC[j+1], and -R. */
static void combined_inputs(ld_g1_affine_t *out, ld_fr_t *neg_r, const ld_groth16_vk_t *vk,
                            const randomiser_t *r, const ld_fr_t *inputs, size_t count) {
  ld_fr_t sums[MAX_PUBLIC], total;
  ld_fr_set_zero(&total);
  for (size_t j = 0; j < vk->n_public; j++) {
    ld_fr_set_zero(&sums[j]);
  }
  for (size_t i = 0; i < count; i++) {
    ld_fr_add(&total, &total, &r[i].fr);
    for (size_t j = 0; j < vk->n_public; j++) {
      ld_fr_t t;
      ld_fr_mul(&t, &r[i].fr, &inputs[i * vk->n_public + j]);
      ld_fr_add(&sums[j], &sums[j], &t);
    }
  }
  ld_g1_t acc, ic0;
  ld_g1_from_affine(&ic0, &vk->ic[0]);
  ld_g1_mul_fr_vartime(&acc, &ic0, &total);
  for (size_t j = 0; j < vk->n_public; j++) {
    uint64_t k[4];
    ld_fr_to_limbs(k, &sums[j]);
    for (int w = 0; w < WINDOWS; w++) {
      unsigned nib = (unsigned)(k[w / 16] >> (4 * (w % 16))) & 15;
      if (nib) {
        ld_g1_add_affine(&acc, &acc, &vk->tables[j].t[w][nib - 1]);
      }
    }
  }
  ld_g1_to_affine(out, &acc);
  ld_fr_neg(neg_r, &total);
}

typedef struct {
  randomiser_t *r;
  ld_g1_t *jac;              /* r_i A_i, then sum r_i C_i and -R alpha */
  ld_g1_affine_t *aff;       /* count + 3 */
  ld_fp_t *scratch;          /* count + 2 */
  ld_fr_t *r_fr;             /* count */
  ld_g1_affine_t *c;         /* count */
  ld_g2_prepared_t *b;       /* count */
  const ld_g1_affine_t **ps; /* count + 3 */
  const ld_g2_prepared_t **qs;
} batch_t;

static void batch_free(batch_t *b) {
  free(b->r);
  free(b->jac);
  free(b->aff);
  free(b->scratch);
  free(b->r_fr);
  free(b->c);
  free(b->b);
  free(b->ps);
  free(b->qs);
}

static int batch_alloc(batch_t *b, size_t count) {
  memset(b, 0, sizeof *b);
  b->r = malloc(count * sizeof *b->r);
  b->jac = malloc((count + 2) * sizeof *b->jac);
  b->aff = malloc((count + 3) * sizeof *b->aff);
  b->scratch = malloc((count + 2) * sizeof *b->scratch);
  b->r_fr = malloc(count * sizeof *b->r_fr);
  b->c = malloc(count * sizeof *b->c);
  b->b = malloc(count * sizeof *b->b);
  b->ps = malloc((count + 3) * sizeof *b->ps);
  b->qs = malloc((count + 3) * sizeof *b->qs);
  if (b->r == NULL || b->jac == NULL || b->aff == NULL || b->scratch == NULL || b->r_fr == NULL ||
      b->c == NULL || b->b == NULL || b->ps == NULL || b->qs == NULL) {
    batch_free(b);
    return LD_ERR_NOMEM;
  }
  return 0;
}

/* One product of count + 3 pairings with random weights (see groth16.h). */
static int verify_combined(const ld_groth16_vk_t *vk, const ld_groth16_proof_t *proofs,
                           const ld_fr_t *inputs, size_t count, batch_t *b) {
  draw_randomisers(b->r, count);
  ld_fr_t neg_r;
  combined_inputs(&b->aff[count], &neg_r, vk, b->r, inputs, count);
  for (size_t i = 0; i < count; i++) {
    ld_g1_t a;
    ld_g1_from_affine(&a, &proofs[i].a);
    ld_g1_mul_vartime(&b->jac[i], &a, b->r[i].k, 2);
    b->r_fr[i] = b->r[i].fr;
    b->c[i] = proofs[i].c;
    ld_g2_prepare(&b->b[i], &proofs[i].b);
  }
  ld_g1_msm_vartime(&b->jac[count], b->c, b->r_fr, count);
  ld_g1_t alpha;
  ld_g1_from_affine(&alpha, &vk->alpha);
  ld_g1_mul_fr_vartime(&b->jac[count + 1], &alpha, &neg_r);
  /* affine: r_i A_i at 0..count-1, then sum r_i C_i and -R alpha after the combined inputs */
  ld_g1_affine_t *tail = &b->aff[count + 1];
  batch_to_affine(b->aff, b->jac, count, b->scratch);
  batch_to_affine(tail, &b->jac[count], 2, b->scratch);
  for (size_t i = 0; i < count; i++) {
    b->ps[i] = &b->aff[i];
    b->qs[i] = &b->b[i];
  }
  b->ps[count] = &b->aff[count];
  b->qs[count] = &vk->neg_gamma;
  b->ps[count + 1] = &tail[0];
  b->qs[count + 1] = &vk->neg_delta;
  b->ps[count + 2] = &tail[1];
  b->qs[count + 2] = &vk->beta;
  ld_fp12_t f;
  ld_pairing_miller_loop_ptrs(&f, b->ps, b->qs, count + 3);
  ld_pairing_final_exp(&f, &f);
  return ld_fp12_is_one(&f) ? 0 : LD_ERR_BAD_PROOF;
}

int ld_groth16_verify_batch(const ld_groth16_vk_t *vk, const ld_groth16_proof_t *proofs,
                            const ld_fr_t *inputs, size_t n, size_t count) {
  if (n != vk->n_public) {
    return LD_ERR_INVALID_ARG;
  }
  if (count <= 1) {
    return count == 0 ? 0 : ld_groth16_verify(vk, proofs, inputs, n);
  }
  batch_t b;
  int rc = batch_alloc(&b, count);
  if (rc == 0) {
    rc = verify_combined(vk, proofs, inputs, count, &b);
    batch_free(&b);
  }
  return rc;
}
