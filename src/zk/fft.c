/* Radix-2 NTTs over Fr: bit-reversal then iterative Cooley-Tukey butterflies with precomputed
 * twiddles. */
#include "zk/fft.h"

#include <stdlib.h>

#include "base/error.h"
#include "zk/fp_ifma.h"

struct ld_fr_domain {
  unsigned log2;
  size_t n;
  ld_fr_t *twiddles;     /* w^i, i < n/2 */
  ld_fr_t *inv_twiddles; /* w^-i, i < n/2 */
  ld_fr_t *coset;        /* g^i, i < n */
  ld_fr_t *inv_coset;    /* g^-i / n, i < n (the ifft's scaling folded in) */
  ld_fr_t n_inv;
  ld_fr_t w;
};

void ld_fr_two_adic_root(ld_fr_t *out) {
  static const uint64_t r[4] = LD_BN254_R_LIMBS;
  uint64_t e[4];
  /* (r - 1) >> 28 */
  uint64_t m[4] = {r[0] - 1, r[1], r[2], r[3]};
  for (int i = 0; i < 4; i++) {
    e[i] = m[i] >> LD_FR_TWO_ADICITY;
    if (i + 1 < 4) {
      e[i] |= m[i + 1] << (64 - LD_FR_TWO_ADICITY);
    }
  }
  ld_fr_t g;
  ld_fr_from_u64(&g, 5);
  ld_fr_pow(out, &g, e);
}

/* A primitive 2^log2-th root of unity. */
static void root_of_unity(ld_fr_t *out, unsigned log2) {
  ld_fr_two_adic_root(out);
  for (unsigned i = log2; i < LD_FR_TWO_ADICITY; i++) {
    ld_fr_sqr(out, out);
  }
}

static void powers(ld_fr_t *out, const ld_fr_t *base, const ld_fr_t *first, size_t n) {
  ld_fr_t acc = *first;
  for (size_t i = 0; i < n; i++) {
    out[i] = acc;
    ld_fr_mul(&acc, &acc, base);
  }
}

int ld_fr_domain_new(ld_fr_domain_t **out, unsigned log2) {
  *out = NULL;
  if (log2 < 1 || log2 >= LD_FR_TWO_ADICITY) {
    return LD_ERR_INVALID_ARG;
  }
  ld_fr_domain_t *d = calloc(1, sizeof *d);
  if (d == NULL) {
    return LD_ERR_NOMEM;
  }
  d->log2 = log2;
  d->n = (size_t)1 << log2;
  d->twiddles = malloc(d->n / 2 * sizeof *d->twiddles);
  d->inv_twiddles = malloc(d->n / 2 * sizeof *d->inv_twiddles);
  d->coset = malloc(d->n * sizeof *d->coset);
  d->inv_coset = malloc(d->n * sizeof *d->inv_coset);
  if (d->twiddles == NULL || d->inv_twiddles == NULL || d->coset == NULL || d->inv_coset == NULL) {
    ld_fr_domain_free(d);
    return LD_ERR_NOMEM;
  }
  ld_fr_t one, w_inv, g, g_inv, n_fr;
  ld_fr_set_one(&one);
  root_of_unity(&d->w, log2);
  ld_fr_inv_vartime(&w_inv, &d->w);
  powers(d->twiddles, &d->w, &one, d->n / 2);
  powers(d->inv_twiddles, &w_inv, &one, d->n / 2);
  root_of_unity(&g, log2 + 1);
  ld_fr_inv_vartime(&g_inv, &g);
  ld_fr_from_u64(&n_fr, d->n);
  ld_fr_inv_vartime(&d->n_inv, &n_fr);
  powers(d->coset, &g, &one, d->n);
  powers(d->inv_coset, &g_inv, &d->n_inv, d->n);
  *out = d;
  return 0;
}

void ld_fr_domain_free(ld_fr_domain_t *d) {
  if (d == NULL) {
    return;
  }
  free(d->twiddles);
  free(d->inv_twiddles);
  free(d->coset);
  free(d->inv_coset);
  free(d);
}

size_t ld_fr_domain_size(const ld_fr_domain_t *d) {
  return d->n;
}

void ld_fr_domain_generator(const ld_fr_domain_t *d, ld_fr_t *w) {
  *w = d->w;
}

static size_t bit_reverse(size_t i, unsigned bits) {
  size_t r = 0;
  for (unsigned b = 0; b < bits; b++) {
    r = (r << 1) | ((i >> b) & 1);
  }
  return r;
}

static void transform(const ld_fr_domain_t *d, ld_fr_t *a, const ld_fr_t *twiddles) {
  size_t n = d->n;
  for (size_t i = 0; i < n; i++) {
    size_t j = bit_reverse(i, d->log2);
    if (i < j) {
      ld_fr_t t = a[i];
      a[i] = a[j];
      a[j] = t;
    }
  }
  int lanes = ld_fp8_available();
  for (size_t half = 1; half < n; half <<= 1) {
    size_t step = n / (2 * half);
    if (lanes && half % LD_FP8_LANES == 0) { /* eight butterflies at a time in IFMA lanes */
      ld_fr8_fft_stage(a, n, half, twiddles, step);
      continue;
    }
    for (size_t start = 0; start < n; start += 2 * half) {
      for (size_t k = 0; k < half; k++) {
        ld_fr_t t = a[start + k + half];
        if (k != 0) { /* twiddles[0] = 1: the first butterfly of a block needs no product */
          ld_fr_mul(&t, &t, &twiddles[k * step]);
        }
        ld_fr_sub(&a[start + k + half], &a[start + k], &t);
        ld_fr_add(&a[start + k], &a[start + k], &t);
      }
    }
  }
}

void ld_fr_fft(const ld_fr_domain_t *d, ld_fr_t *a) {
  transform(d, a, d->twiddles);
}

/* a[i] *= b[i] for i < n, eight at a time in IFMA lanes where available. */
static void mul_pointwise(ld_fr_t *a, const ld_fr_t *b, size_t n) {
  size_t i = 0;
  if (ld_fp8_available()) {
    i = n - n % LD_FP8_LANES;
    ld_fr8_mul_pointwise(a, b, i);
  }
  for (; i < n; i++) {
    ld_fr_mul(&a[i], &a[i], &b[i]);
  }
}

void ld_fr_ifft(const ld_fr_domain_t *d, ld_fr_t *a) {
  transform(d, a, d->inv_twiddles);
  size_t i = 0;
  if (ld_fp8_available()) {
    i = d->n - d->n % LD_FP8_LANES;
    ld_fr8_scale(a, &d->n_inv, i);
  }
  for (; i < d->n; i++) {
    ld_fr_mul(&a[i], &a[i], &d->n_inv);
  }
}

void ld_fr_coset_fft(const ld_fr_domain_t *d, ld_fr_t *a) {
  mul_pointwise(a, d->coset, d->n);
  transform(d, a, d->twiddles);
}

void ld_fr_coset_ifft(const ld_fr_domain_t *d, ld_fr_t *a) {
  transform(d, a, d->inv_twiddles);
  mul_pointwise(a, d->inv_coset, d->n);
}
