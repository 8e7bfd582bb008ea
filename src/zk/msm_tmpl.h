/* Internal: Pippenger's MSM, instantiated by msm.c for G1 and G2. Before including, define
 *   MSM_NAME (the function), MSM_P / MSM_A (Jacobian / affine point types), MSM_(x) (the
 *   curve's operation x, e.g. ld_g1_##x) and MSM_NEG_Y(r, a) (field negation). */

int MSM_NAME(MSM_P *r, const MSM_A *points, const ld_fr_t *scalars, size_t n) {
  MSM_(set_infinity)(r);
  if (n == 0) {
    return 0;
  }
  unsigned c = msm_window_bits(n);
  unsigned windows = (255 + c - 1) / c;
  size_t nbuckets = (size_t)1 << (c - 1);
  MSM_P *buckets = malloc((nbuckets + 1) * sizeof *buckets);
  int32_t *digits = malloc(n * windows * sizeof *digits);
  if (buckets == NULL || digits == NULL) {
    free(buckets);
    free(digits);
    return LD_ERR_NOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    uint64_t k[4];
    ld_fr_to_limbs(k, &scalars[i]);
    msm_signed_digits(&digits[i * windows], k, c, windows);
  }
  for (unsigned w = windows; w-- > 0;) {
    for (unsigned d = 0; d < c && !MSM_(is_infinity)(r); d++) {
      MSM_(dbl)(r, r);
    }
    for (size_t b = 0; b <= nbuckets; b++) {
      MSM_(set_infinity)(&buckets[b]);
    }
    for (size_t i = 0; i < n; i++) {
      int32_t d = digits[i * windows + w];
      if (d > 0) {
        MSM_(add_affine)(&buckets[d], &buckets[d], &points[i]);
      } else if (d < 0) {
        MSM_A neg = points[i];
        MSM_NEG_Y(&neg.y, &neg.y);
        MSM_(add_affine)(&buckets[-d], &buckets[-d], &neg);
      }
    }
    /* sum_b b * bucket[b] as a running sum from the top */
    MSM_P running, acc;
    MSM_(set_infinity)(&running);
    MSM_(set_infinity)(&acc);
    for (size_t b = nbuckets; b >= 1; b--) {
      MSM_(add)(&running, &running, &buckets[b]);
      MSM_(add)(&acc, &acc, &running);
    }
    MSM_(add)(r, r, &acc);
  }
  free(buckets);
  free(digits);
  return 0;
}
