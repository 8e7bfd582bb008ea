/* Internal: Pippenger's MSM with batch-affine bucket sums, instantiated by msm.c for G1 and G2.
 * Before including, define MSM_NAME (the function), MSM_P / MSM_A (Jacobian / affine point
 * types), MSM_F (the coordinate field), MSM_CURVE_(x) (the curve's operation x, e.g. ld_g1_##x),
 * MSM_(x) (a name for the helpers of this instance) and
 * MSM_F_(x) (the field's operation x: add, sub, dbl, neg, mul, sqr, inv, equal, is_zero,
 * set_one). Optionally MSM_PAIR_ADD_BATCH (a batch of general affine additions, denominators
 * inverted inside, as ld_g1_affine_add_batch) and MSM_PAIR_ADD_BATCH_AVAILABLE (whether it may be
 * called now): the bucket sums' rounds then go through it.
 *
 * Every (point, window) pair with a non-zero digit becomes an entry ±P filed under its window's
 * bucket |digit| (a counting sort); then each bucket's entries are summed pairwise in rounds,
 * every round's slope denominators inverted together (Montgomery's trick: one inversion and
 * about six multiplications per affine addition instead of eleven for a mixed Jacobian one);
 * then each window's buckets are weighted (weigh_buckets: two more batch-affine sums of the
 * buckets and short running sums) and the windows combined by doublings. */

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

/* In place: den[i] = 1 / den[i] (all non-zero), prod as scratch. Montgomery's trick over four
 * interleaved lanes (i mod 4), so that the running products form four independent chains of
 * multiplications instead of one; the lanes' four totals are inverted with one inversion. */
static void MSM_(batch_invert)(MSM_F *den, MSM_F *prod, size_t n) {
  if (n == 0) {
    return;
  }
  enum { LANES = 4 };
  size_t lanes = n < LANES ? n : LANES;
  for (size_t i = 0; i < lanes; i++) {
    prod[i] = den[i];
  }
  for (size_t i = lanes; i < n; i++) {
    MSM_F_(mul)(&prod[i], &prod[i - lanes], &den[i]);
  }
  /* total[l] = the product of lane l; inv[l] = 1 / total[l] from one inversion of their
   * product. */
  MSM_F total[LANES], acc[LANES], inv[LANES], all, t;
  memset(total, 0, sizeof total);
  for (size_t l = 0; l < lanes; l++) {
    total[l] = prod[n - 1 - ((n - 1 - l) % lanes)];
  }
  acc[0] = total[0];
  for (size_t l = 1; l < lanes; l++) {
    MSM_F_(mul)(&acc[l], &acc[l - 1], &total[l]);
  }
  MSM_F_(inv)(&all, &acc[lanes - 1]);
  for (size_t l = lanes; l-- > 1;) {
    MSM_F_(mul)(&inv[l], &all, &acc[l - 1]);
    MSM_F_(mul)(&all, &all, &total[l]);
  }
  inv[0] = all;
  /* Walking back, inv[i mod lanes] is 1 / prod[i] when step i begins. */
  for (size_t i = n; i-- > 0;) {
    size_t l = i % lanes;
    if (i >= lanes) {
      MSM_F_(mul)(&t, &inv[l], &prod[i - lanes]);
      MSM_F_(mul)(&inv[l], &inv[l], &den[i]);
      den[i] = t;
    } else {
      den[i] = inv[l];
    }
  }
}

static inline void MSM_(prefetch)(const MSM_A *p) {
  const char *c = (const char *)p;
  for (size_t at = 0; at < sizeof *p; at += 64) {
    __builtin_prefetch(c + at);
  }
  __builtin_prefetch(c + sizeof *p - 1);
}

/* The end of a round of sum_buckets: each bucket's odd last entry (from src when given) moves
 * behind its pairs' sums, and the bucket's length halves. */
static void MSM_(carry_odd_entries)(MSM_A *entries, const MSM_A *const *src, const uint32_t *start,
                                    uint32_t base, uint32_t *len, size_t nb) {
  for (size_t b = 0; b < nb; b++) {
    size_t off = start[b] - base;
    if (len[b] % 2 != 0) {
      entries[off + len[b] / 2] = src != NULL ? *src[off + len[b] - 1] : entries[off + len[b] - 1];
    }
    len[b] = (len[b] + 1) / 2;
  }
}

#ifdef MSM_PAIR_ADD_BATCH
/* The first round of sum_round over the points themselves, none at infinity (window_sum's live
 * points): every pair goes to MSM_PAIR_ADD_BATCH without being looked at here, and the batch
 * refuses (writing nothing) when a pair's two points share their x (a doubling or a
 * cancellation: rare), so that the points are read once, by the lanes. 1 when the round's sums
 * are made (the odd entries still to carry), 0 when it must be made the checked way. */
static int MSM_(first_round_wide)(MSM_A *entries, const MSM_A *const *src, const uint32_t *start,
                                  uint32_t base, const uint32_t *len, size_t nb, size_t pairs,
                                  msm_scratch_t *s) {
  if (!MSM_PAIR_ADD_BATCH_AVAILABLE()) {
    return 0;
  }
  MSM_A **r = (MSM_A **)s->pair_r;
  const MSM_A **a = (const MSM_A **)s->pair_a, **b2 = (const MSM_A **)s->pair_b;
  size_t i = 0;
  for (size_t b = 0; b < nb; b++) {
    size_t off = start[b] - base;
    for (uint32_t k = 0; k + 1 < len[b]; k += 2, i++) {
      r[i] = &entries[off + k / 2];
      a[i] = src[off + k];
      b2[i] = src[off + k + 1];
    }
  }
  return MSM_PAIR_ADD_BATCH((MSM_A *const *)r, (const MSM_A *const *)a, (const MSM_A *const *)b2,
                            pairs) == 0;
}
#endif

/* One round of sum_buckets' pairwise additions: in each bucket b, entries k and k + 1 (k even)
 * are added into entry k / 2, and an odd last entry moves to the end of the sums. Inputs come
 * from src (pointers, bucket by bucket as the entries) when it is not NULL, else from the
 * entries themselves. The general pairs (neither at infinity, distinct x) go through
 * MSM_PAIR_ADD_BATCH when it is available (their denominators inverted and their sums made in
 * eight lanes), else through pair_add after one batch inversion; the others (doublings,
 * cancellations, infinities: rare) by pair_add into s->special first. Every input is read before
 * an output it could alias is written. */
static void MSM_(sum_round)(MSM_A *entries, const MSM_A *const *src, const uint32_t *start,
                            uint32_t base, uint32_t *len, size_t nb, size_t pairs,
                            msm_scratch_t *s) {
#ifdef MSM_PAIR_ADD_BATCH
  if (src != NULL && MSM_(first_round_wide)(entries, src, start, base, len, nb, pairs, s)) {
    MSM_(carry_odd_entries)(entries, src, start, base, len, nb);
    return;
  }
#endif
  MSM_A **r = (MSM_A **)s->pair_r, *special_sum = s->special;
  const MSM_A **a = (const MSM_A **)s->pair_a, **b2 = (const MSM_A **)s->pair_b;
  MSM_F *den = s->den, *prod = s->prod;
  /* general pairs from the front of r/a/b2, the others from the back */
  size_t general = 0, special = 0, total = start[nb] - base;
  for (size_t b = 0; b < nb; b++) {
    size_t off = start[b] - base;
    MSM_A *e = &entries[off];
    for (uint32_t k = 0; k + 1 < len[b]; k += 2) {
      /* the points lie at random: ask for the pair 16 entries ahead */
      if (src != NULL && off + k + 17 < total) {
        MSM_(prefetch)(src[off + k + 16]);
        MSM_(prefetch)(src[off + k + 17]);
      }
      const MSM_A *p = src != NULL ? src[off + k] : &e[k];
      const MSM_A *q = src != NULL ? src[off + k + 1] : &e[k + 1];
      size_t slot = general;
      if (p->infinity || q->infinity || MSM_F_(equal)(&p->x, &q->x)) {
        MSM_(pair_denominator)(&den[special++], p, q);
        slot = pairs - special;
      } else {
        general++;
      }
      r[slot] = &e[k / 2];
      a[slot] = p;
      b2[slot] = q;
    }
  }
  MSM_(batch_invert)(den, prod, special);
  for (size_t i = 0; i < special; i++) {
    MSM_(pair_add)(&special_sum[i], a[pairs - 1 - i], b2[pairs - 1 - i], &den[i]);
  }
  int wide = 0;
#ifdef MSM_PAIR_ADD_BATCH
  wide = MSM_PAIR_ADD_BATCH_AVAILABLE() &&
         MSM_PAIR_ADD_BATCH((MSM_A *const *)r, (const MSM_A *const *)a, (const MSM_A *const *)b2,
                            general) == 0;
#endif
  if (!wide) {
    /* in order: pair k of a bucket writes entry k / 2 <= k, read by no later pair */
    for (size_t i = 0; i < general; i++) {
      MSM_(pair_denominator)(&den[i], a[i], b2[i]);
    }
    MSM_(batch_invert)(den, prod, general);
    for (size_t i = 0; i < general; i++) {
      MSM_(pair_add)(r[i], a[i], b2[i], &den[i]);
    }
  }
  for (size_t i = 0; i < special; i++) {
    *r[pairs - 1 - i] = special_sum[i];
  }
  MSM_(carry_odd_entries)(entries, src, start, base, len, nb);
}

/* Sums each bucket's entries (entries[start[b] - base .. start[b] - base + len[b]), or the points
 * src[...] at the same places when src is not NULL) into its first entry; len[b] ends as 1 for
 * a bucket that had entries, 0 for an empty one. */
static void MSM_(sum_buckets)(MSM_A *entries, const MSM_A *const *src, const uint32_t *start,
                              uint32_t base, uint32_t *len, size_t nb, msm_scratch_t *s) {
  for (;;) {
    size_t pairs = 0;
    for (size_t b = 0; b < nb; b++) {
      pairs += len[b] / 2;
    }
    if (pairs == 0 && src == NULL) {
      return;
    }
    MSM_(sum_round)(entries, src, start, base, len, nb, pairs, s);
    src = NULL;
  }
}

/* Files the m (point, digit) pairs under their buckets (a counting sort): s->start[b] is where
 * bucket b (digit +-(b + 1)) begins in s->order, which lists the pairs bucket by bucket; s->len
 * holds the buckets' sizes. */
static void MSM_(sort_by_bucket)(const int32_t *digits, size_t m, size_t half, msm_scratch_t *s) {
  memset(s->len, 0, half * sizeof *s->len);
  for (size_t j = 0; j < m; j++) {
    int32_t d = digits[j];
    if (d != 0) {
      s->len[(size_t)abs(d) - 1]++;
    }
  }
  s->start[0] = 0;
  for (size_t b = 0; b < half; b++) {
    s->start[b + 1] = s->start[b] + s->len[b];
    s->len[b] = 0;
  }
  for (size_t j = 0; j < m; j++) {
    int32_t d = digits[j];
    if (d != 0) {
      size_t b = (size_t)abs(d) - 1;
      s->order[s->start[b] + s->len[b]++] = (uint32_t)j;
    }
  }
}

/* acc = sum_{i < n} (i + 1) e[start[i]] over the groups i with len[i] != 0, by running sums in
 * Jacobian coordinates (two additions per group). */
static void MSM_(weighted_sum)(MSM_P *acc, const MSM_A *e, const uint32_t *start,
                               const uint32_t *len, size_t n) {
  MSM_P running;
  MSM_CURVE_(set_infinity)(&running);
  MSM_CURVE_(set_infinity)(acc);
  for (size_t i = n; i-- > 0;) {
    if (len[i] != 0) {
      MSM_CURVE_(add_affine)(&running, &running, &e[start[i]]);
    }
    MSM_CURVE_(add)(acc, acc, &running);
  }
}

/* acc = sum_j (j + 1) sums[j] over the buckets with len[j] != 0 (bucket j holds digit j + 1).
 * With d = j + 1 = q L + r (0 <= r < L, L about the square root of half):
 *   sum_d d S_d = L sum_q q T_q + sum_r r U_r,  T_q = sum_r S_(qL+r),  U_r = sum_q S_(qL+r),
 * and the T and U are plain sums of the buckets, made by the batch-affine additions of
 * sum_buckets (two per bucket), so that only the short weighted sums over them run in Jacobian
 * coordinates: about 4 sqrt(half) Jacobian additions instead of 2 half. */
static void MSM_(weigh_buckets)(MSM_P *acc, const MSM_A *sums, const uint32_t *len, size_t half,
                                msm_scratch_t *s) {
  unsigned lbits = weighting_split_bits(half);
  size_t l = (size_t)1 << lbits, q_count = half >> lbits, groups = q_count + l - 1;
  /* groups 0 .. q_count - 1: T_1 .. T_q_count; then U_1 .. U_(l-1) */
  uint32_t *start = s->group_start, *glen = s->group_len;
  memset(glen, 0, groups * sizeof *glen);
  for (size_t j = 0; j < half; j++) {
    size_t q = (j + 1) >> lbits, r = (j + 1) & (l - 1);
    if (len[j] != 0 && q != 0) {
      glen[q - 1]++;
    }
    if (len[j] != 0 && r != 0) {
      glen[q_count + r - 1]++;
    }
  }
  start[0] = 0;
  for (size_t g = 0; g < groups; g++) {
    start[g + 1] = start[g] + glen[g];
    glen[g] = 0;
  }
  MSM_A *e = s->entries;
  for (size_t j = 0; j < half; j++) {
    size_t q = (j + 1) >> lbits, r = (j + 1) & (l - 1);
    if (len[j] != 0 && q != 0) {
      e[start[q - 1] + glen[q - 1]++] = sums[j];
    }
    if (len[j] != 0 && r != 0) {
      size_t g = q_count + r - 1;
      e[start[g] + glen[g]++] = sums[j];
    }
  }
  MSM_(sum_buckets)(e, NULL, start, 0, glen, groups, s);
  MSM_P t_part, u_part;
  MSM_(weighted_sum)(&t_part, e, start, glen, q_count);
  MSM_(weighted_sum)(&u_part, e, &start[q_count], &glen[q_count], l - 1);
  for (unsigned k = 0; k < lbits && !MSM_CURVE_(is_infinity)(&t_part); k++) {
    MSM_CURVE_(dbl)(&t_part, &t_part);
  }
  MSM_CURVE_(add)(acc, &t_part, &u_part);
}

/* Sums window w's points into its buckets, then weights the buckets: acc = sum_j (j + 1)
 * bucket_j. `digits` holds this window's digit of every live point. The buckets are summed a
 * segment at a time (consecutive buckets with up to MSM_SEGMENT_ENTRIES entries between them,
 * or one larger bucket), so that a large window's entries (a fixed-base table's window holds
 * every (point, window) pair) stay in cache through their rounds. `negated` (or NULL) holds the
 * points' negations at the same indices: then the first round reads the points where they lie
 * instead of copying them into bucket order, and none of points[live[j]] may be at infinity. */
static void MSM_(window_sum)(MSM_P *acc, const MSM_A *points, const MSM_A *negated,
                             const uint32_t *live, const int32_t *digits, size_t m, size_t half,
                             msm_scratch_t *s) {
  MSM_(sort_by_bucket)(digits, m, half, s);
  MSM_A *entries = s->entries, *sums = s->sums;
  const MSM_A **src = (const MSM_A **)s->src;
  const uint32_t *start = s->start;
  for (size_t b0 = 0, b1; b0 < half; b0 = b1) {
    b1 = b0 + 1;
    while (b1 < half && start[b1 + 1] - start[b0] <= MSM_SEGMENT_ENTRIES) {
      b1++;
    }
    uint32_t base = start[b0];
    if (negated != NULL) { /* the first round reads the points where they are */
      for (uint32_t k = base; k < start[b1]; k++) {
        uint32_t j = s->order[k];
        src[k - base] = digits[j] < 0 ? &negated[live[j]] : &points[live[j]];
      }
    } else {
      for (uint32_t k = base; k < start[b1]; k++) {
        /* the points are read in bucket order, i.e. at random: ask for one 16 entries ahead */
        if (k + 16 < start[b1]) {
          const char *ahead = (const char *)&points[live[s->order[k + 16]]];
          __builtin_prefetch(ahead);
          __builtin_prefetch(ahead + sizeof(MSM_A) - 1);
        }
        uint32_t j = s->order[k];
        MSM_A *e = &entries[k - base];
        *e = points[live[j]];
        if (digits[j] < 0) {
          MSM_F_(neg)(&e->y, &e->y);
        }
      }
    }
    MSM_(sum_buckets)
    (entries, negated != NULL ? src : NULL, &start[b0], base, &s->len[b0], b1 - b0, s);
    for (size_t b = b0; b < b1; b++) {
      if (s->len[b] != 0) {
        sums[b] = entries[start[b] - base];
      }
    }
  }
  MSM_(weigh_buckets)(acc, sums, s->len, half, s);
}

/* The points that contribute: neither at infinity nor under a zero scalar. Their indices to
 * live; returns their count. */
static size_t MSM_(live_points)(uint32_t *live, const MSM_A *points, const ld_fr_t *scalars,
                                size_t n) {
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    if (!points[i].infinity && !ld_fr_is_zero(&scalars[i])) {
      live[m++] = (uint32_t)i;
    }
  }
  return m;
}

/* Allocates the bucket sums' working memory for up to `entries` entries over `half` buckets:
 * 0, or LD_ERR_NOMEM (then msm_scratch_free is still due). */
static int MSM_(scratch_new)(msm_scratch_t *s, size_t entries, size_t half) {
  memset(s, 0, sizeof *s);
  if (entries < 2 * half) { /* weigh_buckets files every bucket sum twice */
    entries = 2 * half;
  }
  size_t pairs = entries / 2 + 1;
  s->group_start = calloc(2 * half + 2, sizeof *s->group_start);
  s->group_len = calloc(2 * half + 1, sizeof *s->group_len);
  s->start = calloc(half + 1, sizeof *s->start);
  s->len = calloc(half, sizeof *s->len);
  s->entries = malloc((entries + 1) * sizeof(MSM_A));
  s->src = malloc((entries + 1) * sizeof *s->src);
  s->den = malloc(pairs * sizeof(MSM_F));
  s->prod = malloc(pairs * sizeof(MSM_F));
  s->special = malloc(pairs * sizeof(MSM_A));
  s->pair_r = malloc(pairs * sizeof *s->pair_r);
  s->pair_a = malloc(pairs * sizeof *s->pair_a);
  s->pair_b = malloc(pairs * sizeof *s->pair_b);
  s->order = malloc((entries + 1) * sizeof *s->order);
  s->sums = malloc((half + 1) * sizeof(MSM_A));
  return s->group_start == NULL || s->group_len == NULL || s->start == NULL || s->len == NULL ||
                 s->entries == NULL || s->src == NULL || s->den == NULL || s->prod == NULL ||
                 s->special == NULL || s->pair_r == NULL || s->pair_a == NULL ||
                 s->pair_b == NULL || s->order == NULL || s->sums == NULL
             ? LD_ERR_NOMEM
             : 0;
}

/* r = sum_j k[j] points[live[j]] for m scalars given as plain limbs below 2^(bits - 1). */
static int MSM_(pippenger_limbs)(MSM_P *r, const MSM_A *points, const MSM_A *negated,
                                 const uint32_t *live, const uint64_t (*k)[4], size_t m,
                                 unsigned bits) {
  MSM_CURVE_(set_infinity)(r);
  if (m == 0) {
    return 0;
  }
  unsigned c = msm_window_bits(m, bits);
  unsigned windows = (bits + c - 1) / c;
  size_t half = (size_t)1 << (c - 1);
  int32_t *digits = malloc(m * windows * sizeof *digits); /* window-major: digits[w * m + j] */
  msm_scratch_t s;
  int rc = MSM_(scratch_new)(&s, m, half);
  if (rc == 0 && digits == NULL) {
    rc = LD_ERR_NOMEM;
  }
  if (rc == 0) {
    msm_scalar_digits(digits, k, m, c, windows);
    for (unsigned w = windows; w-- > 0;) {
      for (unsigned d = 0; d < c && !MSM_CURVE_(is_infinity)(r); d++) {
        MSM_CURVE_(dbl)(r, r);
      }
      MSM_P acc;
      MSM_(window_sum)(&acc, points, negated, live, &digits[(size_t)w * m], m, half, &s);
      MSM_CURVE_(add)(r, r, &acc);
    }
    explicit_bzero(digits, m * windows * sizeof *digits);
  }
  free(digits);
  msm_scratch_free(&s);
  return rc;
}

/* The MSM over full scalars (windows over 255 bits). */
static int MSM_(pippenger_full)(MSM_P *r, const MSM_A *points, const ld_fr_t *scalars, size_t n) {
  MSM_CURVE_(set_infinity)(r);
  if (n == 0) {
    return 0;
  }
  uint32_t *live = malloc(n * sizeof *live);
  uint64_t(*k)[4] = malloc(n * sizeof *k);
  if (live == NULL || k == NULL) {
    free(live);
    free(k);
    return LD_ERR_NOMEM;
  }
  size_t m = MSM_(live_points)(live, points, scalars, n);
  for (size_t j = 0; j < m; j++) {
    ld_fr_to_limbs(k[j], &scalars[live[j]]);
  }
  int rc = MSM_(pippenger_limbs)(r, points, NULL, live, (const uint64_t(*)[4])k, m, 255);
  explicit_bzero(k, m * sizeof *k);
  free(live);
  free(k);
  return rc;
}

/* The MSM over an endomorphism endo(P) = [lambda] P: split(k) gives k = (-1)^neg1 k1 +
 * lambda (-1)^neg2 k2 (mod r) with k1, k2 below 2^127, and every live point P becomes (+-P, k1)
 * and (+-endo(P), k2), so the windows cover 128 bits instead of 255: the same number of bucket
 * additions over twice the points, half the bucket reductions and doublings. */
static int MSM_(pippenger_endo)(MSM_P *r, const MSM_A *points, const ld_fr_t *scalars, size_t n,
                                void (*split)(const ld_fr_t *k, uint64_t k1[4], int *neg1,
                                              uint64_t k2[4], int *neg2),
                                void (*endo)(MSM_A *r, const MSM_A *p)) {
  MSM_CURVE_(set_infinity)(r);
  if (n == 0) {
    return 0;
  }
  uint32_t *live = malloc(n * sizeof *live), *idx = malloc(2 * n * sizeof *idx);
  MSM_A *pts = malloc(2 * n * sizeof *pts), *neg = malloc(2 * n * sizeof *neg);
  uint64_t(*k)[4] = malloc(2 * n * sizeof *k);
  int rc = LD_ERR_NOMEM;
  if (live != NULL && idx != NULL && pts != NULL && neg != NULL && k != NULL) {
    size_t m = MSM_(live_points)(live, points, scalars, n), h = 0;
    for (size_t j = 0; j < m; j++) {
      const MSM_A *p = &points[live[j]];
      int neg1, neg2;
      split(&scalars[live[j]], k[h], &neg1, k[h + 1], &neg2);
      pts[h] = *p;
      if (neg1) {
        MSM_F_(neg)(&pts[h].y, &pts[h].y);
      }
      endo(&pts[h + 1], p);
      if (neg2) {
        MSM_F_(neg)(&pts[h + 1].y, &pts[h + 1].y);
      }
      h += 2;
    }
    for (size_t j = 0; j < h; j++) {
      idx[j] = (uint32_t)j;
      neg[j] = pts[j];
      MSM_F_(neg)(&neg[j].y, &neg[j].y);
    }
    rc = MSM_(pippenger_limbs)(r, pts, neg, idx, (const uint64_t(*)[4])k, h, 128);
    explicit_bzero(k, h * sizeof *k);
  }
  free(live);
  free(idx);
  free(pts);
  free(neg);
  free(k);
  return rc;
}

/* ---- fixed bases: every point's window multiples precomputed ---- */

/* table[j * windows + w] = 2^(c w) points[j]: window by window, c affine doublings of all the
 * points at once, each round's denominators inverted together. */
/* Rows [from, to) of the table of `points` (row j: 2^(c w) points[j] for each window w). Rows
 * depend on their own point alone, so a table may be built in slices. */
static int MSM_(table_build)(MSM_A *table, const MSM_A *points, size_t from, size_t to, unsigned c,
                             unsigned windows) {
  size_t n = to - from;
  MSM_A *cur = malloc((n + 1) * sizeof *cur);
  MSM_F *den = malloc((n + 1) * sizeof *den), *prod = malloc((n + 1) * sizeof *prod);
  if (cur == NULL || den == NULL || prod == NULL) {
    free(cur);
    free(den);
    free(prod);
    return LD_ERR_NOMEM;
  }
  memcpy(cur, points + from, n * sizeof *cur);
  for (unsigned w = 0; w < windows; w++) {
    for (size_t j = 0; j < n; j++) {
      table[(from + j) * windows + w] = cur[j];
    }
    for (unsigned d = 0; w + 1 < windows && d < c; d++) {
      for (size_t j = 0; j < n; j++) {
        MSM_(pair_denominator)(&den[j], &cur[j], &cur[j]);
      }
      MSM_(batch_invert)(den, prod, n);
      for (size_t j = 0; j < n; j++) {
        MSM_(pair_add)(&cur[j], &cur[j], &cur[j], &den[j]);
      }
    }
  }
  free(cur);
  free(den);
  free(prod);
  return 0;
}

/* sum_j scalars[j] points[j] from the table: all (point, window) pairs go into one set of
 * buckets by their digit, so one bucket reduction and no doublings. */
static int MSM_(table_msm)(MSM_P *r, const MSM_A *table, size_t n, unsigned c, unsigned windows,
                           const ld_fr_t *scalars) {
  MSM_CURVE_(set_infinity)(r);
  size_t total = n * windows, half = (size_t)1 << (c - 1);
  uint32_t *live = malloc((n + 1) * sizeof *live), *pairs = malloc((total + 1) * sizeof *pairs);
  int32_t *digits = malloc((total + 1) * sizeof *digits);
  msm_scratch_t s;
  int rc = MSM_(scratch_new)(&s, total, half);
  if (rc == 0 && (live == NULL || pairs == NULL || digits == NULL)) {
    rc = LD_ERR_NOMEM;
  }
  if (rc == 0) {
    size_t m = 0;
    for (size_t j = 0; j < n; j++) {
      if (!table[j * windows].infinity && !ld_fr_is_zero(&scalars[j])) {
        live[m++] = (uint32_t)j;
      }
    }
    int32_t d[256];
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
      uint64_t limbs[4];
      ld_fr_to_limbs(limbs, &scalars[live[i]]);
      msm_signed_digits(d, limbs, c, windows);
      for (unsigned w = 0; w < windows; w++) {
        if (d[w] != 0) {
          pairs[k] = live[i] * (uint32_t)windows + w;
          digits[k++] = d[w];
        }
      }
      explicit_bzero(limbs, sizeof limbs);
    }
    explicit_bzero(d, sizeof d);
    if (k > 0) {
      MSM_(window_sum)(r, table, NULL, pairs, digits, k, half, &s);
    }
    explicit_bzero(digits, (total + 1) * sizeof *digits);
  }
  free(live);
  free(pairs);
  free(digits);
  msm_scratch_free(&s);
  return rc;
}
