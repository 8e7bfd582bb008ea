/* Internal: Pippenger's MSM with batch-affine bucket sums, instantiated by msm.c for G1 and G2.
 * Before including, define MSM_NAME (the function), MSM_P / MSM_A (Jacobian / affine point
 * types), MSM_F (the coordinate field), MSM_CURVE_(x) (the curve's operation x, e.g. ld_g1_##x),
 * MSM_(x) (a name for the helpers of this instance) and
 * MSM_F_(x) (the field's operation x: add, sub, dbl, neg, mul, sqr, inv, equal, is_zero,
 * set_one).
 *
 * Every (point, window) pair with a non-zero digit becomes an entry ±P filed under its window's
 * bucket |digit| (a counting sort); then each bucket's entries are summed pairwise in rounds,
 * every round's slope denominators inverted together (Montgomery's trick: one inversion and
 * about six multiplications per affine addition instead of eleven for a mixed Jacobian one);
 * then each window's buckets are weighted by running sums and the windows combined by
 * doublings. */

/* den = what the affine sum a + b divides by: x_b - x_a, or 2 y_a when doubling; 1 (and no
 * division) when either is infinity or they cancel. */
static void MSM_(pair_denominator)(MSM_F *den, const MSM_A *a, const MSM_A *b) {
  if (a->infinity || b->infinity || MSM_F_(equal)(&a->x, &b->x)) {
    if (!a->infinity && !b->infinity && MSM_F_(equal)(&a->y, &b->y) && !MSM_F_(is_zero)(&a->y)) {
      MSM_F_(dbl)(den, &a->y);
    } else {
      MSM_F_(set_one)(den);
    }
    return;
  }
  MSM_F_(sub)(den, &b->x, &a->x);
}

/* r = a + b given inv = 1 / pair_denominator(a, b). r may alias a or b. */
static void MSM_(pair_add)(MSM_A *r, const MSM_A *a, const MSM_A *b, const MSM_F *inv) {
  if (a->infinity) {
    *r = *b;
    return;
  }
  if (b->infinity) {
    *r = *a;
    return;
  }
  MSM_F lambda, t, x3;
  if (MSM_F_(equal)(&a->x, &b->x)) {
    if (!MSM_F_(equal)(&a->y, &b->y) || MSM_F_(is_zero)(&a->y)) {
      MSM_F_(set_zero)(&r->x);
      MSM_F_(set_zero)(&r->y);
      r->infinity = 1;
      return;
    }
    MSM_F_(sqr)(&t, &a->x); /* doubling: lambda = 3 x^2 / 2y */
    MSM_F_(dbl)(&lambda, &t);
    MSM_F_(add)(&t, &lambda, &t);
    MSM_F_(mul)(&lambda, &t, inv);
  } else {
    MSM_F_(sub)(&t, &b->y, &a->y);
    MSM_F_(mul)(&lambda, &t, inv);
  }
  MSM_F_(sqr)(&x3, &lambda);
  MSM_F_(sub)(&x3, &x3, &a->x);
  MSM_F_(sub)(&x3, &x3, &b->x);
  MSM_F_(sub)(&t, &a->x, &x3);
  MSM_F_(mul)(&t, &t, &lambda);
  MSM_F_(sub)(&r->y, &t, &a->y);
  r->x = x3;
  r->infinity = 0;
}

/* In place: den[i] = 1 / den[i] (all non-zero), prod as scratch. */
static void MSM_(batch_invert)(MSM_F *den, MSM_F *prod, size_t n) {
  if (n == 0) {
    return;
  }
  prod[0] = den[0];
  for (size_t i = 1; i < n; i++) {
    MSM_F_(mul)(&prod[i], &prod[i - 1], &den[i]);
  }
  MSM_F inv, t;
  MSM_F_(inv)(&inv, &prod[n - 1]);
  for (size_t i = n; i-- > 1;) {
    MSM_F_(mul)(&t, &inv, &prod[i - 1]);
    MSM_F_(mul)(&inv, &inv, &den[i]);
    den[i] = t;
  }
  den[0] = inv;
}

/* Sums each bucket's entries (entries[start[b] .. start[b] + len[b])) into its first entry. */
static void MSM_(sum_buckets)(MSM_A *entries, const uint32_t *start, uint32_t *len, size_t nb,
                              MSM_F *den, MSM_F *prod) {
  for (;;) {
    size_t pairs = 0;
    for (size_t b = 0; b < nb; b++) {
      const MSM_A *e = &entries[start[b]];
      for (uint32_t k = 0; k + 1 < len[b]; k += 2) {
        MSM_(pair_denominator)(&den[pairs++], &e[k], &e[k + 1]);
      }
    }
    if (pairs == 0) {
      return;
    }
    MSM_(batch_invert)(den, prod, pairs);
    pairs = 0;
    for (size_t b = 0; b < nb; b++) {
      MSM_A *e = &entries[start[b]];
      uint32_t k = 0;
      for (; k + 1 < len[b]; k += 2) {
        MSM_(pair_add)(&e[k / 2], &e[k], &e[k + 1], &den[pairs++]);
      }
      if (k < len[b]) {
        e[k / 2] = e[k];
      }
      len[b] = (len[b] + 1) / 2;
    }
  }
}

/* Sums window w's points into its buckets (entries sorted by bucket), then weights the buckets:
 * acc = sum_j (j + 1) bucket_j. */
static void MSM_(window_sum)(MSM_P *acc, const MSM_A *points, const int32_t *digits, size_t n,
                             unsigned w, unsigned windows, size_t half, msm_scratch_t *s) {
  memset(s->len, 0, half * sizeof *s->len);
  for (size_t i = 0; i < n; i++) {
    int32_t d = digits[i * windows + w];
    if (d != 0 && !points[i].infinity) {
      s->len[(size_t)abs(d) - 1]++;
    }
  }
  s->start[0] = 0;
  for (size_t b = 0; b < half; b++) {
    s->start[b + 1] = s->start[b] + s->len[b];
    s->len[b] = 0;
  }
  MSM_A *entries = s->entries;
  for (size_t i = 0; i < n; i++) {
    int32_t d = digits[i * windows + w];
    if (d != 0 && !points[i].infinity) {
      size_t b = (size_t)abs(d) - 1;
      MSM_A *e = &entries[s->start[b] + s->len[b]++];
      *e = points[i];
      if (d < 0) {
        MSM_F_(neg)(&e->y, &e->y);
      }
    }
  }
  MSM_(sum_buckets)(entries, s->start, s->len, half, s->den, s->prod);
  MSM_P running;
  MSM_CURVE_(set_infinity)(&running);
  MSM_CURVE_(set_infinity)(acc);
  for (size_t j = half; j-- > 0;) { /* bucket j holds digit j + 1 */
    if (s->len[j] != 0) {
      MSM_CURVE_(add_affine)(&running, &running, &entries[s->start[j]]);
    }
    MSM_CURVE_(add)(acc, acc, &running);
  }
}

int MSM_NAME(MSM_P *r, const MSM_A *points, const ld_fr_t *scalars, size_t n) {
  MSM_CURVE_(set_infinity)(r);
  if (n == 0) {
    return 0;
  }
  unsigned c = msm_window_bits(n);
  unsigned windows = (255 + c - 1) / c;
  size_t half = (size_t)1 << (c - 1);
  int32_t *digits = malloc(n * windows * sizeof *digits);
  MSM_A *entries = malloc(n * sizeof *entries);
  MSM_F *den = malloc((n / 2 + 1) * sizeof *den), *prod = malloc((n / 2 + 1) * sizeof *prod);
  msm_scratch_t s = {calloc(half + 1, sizeof *s.start), calloc(half, sizeof *s.len), entries, den,
                     prod};
  int rc = LD_ERR_NOMEM;
  if (digits != NULL && entries != NULL && den != NULL && prod != NULL && s.start != NULL &&
      s.len != NULL) {
    for (size_t i = 0; i < n; i++) {
      uint64_t k[4];
      ld_fr_to_limbs(k, &scalars[i]);
      msm_signed_digits(&digits[i * windows], k, c, windows);
    }
    for (unsigned w = windows; w-- > 0;) {
      for (unsigned d = 0; d < c && !MSM_CURVE_(is_infinity)(r); d++) {
        MSM_CURVE_(dbl)(r, r);
      }
      MSM_P acc;
      MSM_(window_sum)(&acc, points, digits, n, w, windows, half, &s);
      MSM_CURVE_(add)(r, r, &acc);
    }
    rc = 0;
  }
  free(digits);
  free(entries);
  free(den);
  free(prod);
  free(s.start);
  free(s.len);
  return rc;
}
