/* BN254 Fp and Fr: the out-of-line operations (exponentiation, inversion, square roots,
 * encodings). */
#include "zk/field.h"

#include "base/error.h"

#ifdef LD_MONT_X86
#include <cpuid.h>
#endif

int ld_mont_have_adx = 0;

#ifdef LD_MONT_X86
/* CPUID leaf 7: EBX bit 8 is BMI2 (mulx), bit 19 is ADX (adcx, adox). */
__attribute__((constructor)) static void detect_adx(void) {
  unsigned a, b, c, d;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    ld_mont_have_adx = ((b >> 8) & 1) && ((b >> 19) & 1);
  }
}
#endif

static const uint64_t P_MINUS_2[4] = LD_BN254_P_MINUS_2;
static const uint64_t R_MINUS_2[4] = LD_BN254_R_MINUS_2;
static const uint64_t P_PLUS_1_DIV_4[4] = LD_BN254_P_PLUS_1_DIV_4;
static const uint64_t P_MINUS_1_DIV_2[4] = LD_BN254_P_MINUS_1_DIV_2;

/* ---- shared helpers ---------------------------------------------------------------------------
 */

static void to_mont(uint64_t r[4], const uint64_t plain[4], const ld_mont_t *f) {
  mont_mul(r, plain, f->r2, f);
}

static void from_mont(uint64_t r[4], const uint64_t a[4], const ld_mont_t *f) {
  static const uint64_t one[4] = {1, 0, 0, 0};
  mont_mul(r, a, one, f);
}

static int from_bytes(uint64_t r[4], const uint8_t in[32], const ld_mont_t *f) {
  uint64_t plain[4];
  mont_limbs_from_le(plain, in);
  if (!mont_is_canonical(plain, f)) {
    return LD_ERR_OVERFLOW;
  }
  to_mont(r, plain, f);
  return 0;
}

static void to_bytes(uint8_t out[32], const uint64_t a[4], const ld_mont_t *f) {
  uint64_t plain[4];
  from_mont(plain, a, f);
  mont_limbs_to_le(out, plain);
}

/* plain = plain * 10 + digit; returns nonzero on overflow of 256 bits. */
static int mul10_add(uint64_t plain[4], unsigned digit) {
  ld_u128_t carry = digit;
  for (int i = 0; i < 4; i++) {
    ld_u128_t v = (ld_u128_t)plain[i] * 10 + carry;
    plain[i] = (uint64_t)v;
    carry = v >> 64;
  }
  return carry != 0;
}

static int from_decimal(uint64_t r[4], const char *s, size_t len, const ld_mont_t *f) {
  if (len == 0 || len > 80) {
    return len == 0 ? LD_ERR_MALFORMED : LD_ERR_OVERFLOW;
  }
  uint64_t plain[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9') {
      return LD_ERR_MALFORMED;
    }
    if (mul10_add(plain, (unsigned)(s[i] - '0'))) {
      return LD_ERR_OVERFLOW;
    }
  }
  if (!mont_is_canonical(plain, f)) {
    return LD_ERR_OVERFLOW;
  }
  to_mont(r, plain, f);
  return 0;
}

static void from_u64(uint64_t r[4], uint64_t v, const ld_mont_t *f) {
  const uint64_t plain[4] = {v, 0, 0, 0};
  to_mont(r, plain, f);
}

/* ---- Fp ---------------------------------------------------------------------------------------
 */

void ld_fp_pow(ld_fp_t *r, const ld_fp_t *a, const uint64_t e[4]) {
  mont_pow(r->l, a->l, e, &LD_FP_MONT);
}

void ld_fp_inv(ld_fp_t *r, const ld_fp_t *a) {
  mont_pow(r->l, a->l, P_MINUS_2, &LD_FP_MONT);
}

int ld_fp_sqrt(ld_fp_t *r, const ld_fp_t *a) {
  ld_fp_t s, check;
  ld_fp_pow(&s, a, P_PLUS_1_DIV_4);
  ld_fp_sqr(&check, &s);
  *r = s;
  return ld_fp_equal(&check, a);
}

int ld_fp_is_square(const ld_fp_t *a) {
  ld_fp_t e, one;
  ld_fp_pow(&e, a, P_MINUS_1_DIV_2);
  ld_fp_set_one(&one);
  return ld_fp_equal(&e, &one);
}

void ld_fp_from_u64(ld_fp_t *r, uint64_t v) {
  from_u64(r->l, v, &LD_FP_MONT);
}

int ld_fp_from_bytes(ld_fp_t *r, const uint8_t in[LD_FP_BYTES]) {
  return from_bytes(r->l, in, &LD_FP_MONT);
}

void ld_fp_to_bytes(uint8_t out[LD_FP_BYTES], const ld_fp_t *a) {
  to_bytes(out, a->l, &LD_FP_MONT);
}

void ld_fp_to_limbs(uint64_t out[4], const ld_fp_t *a) {
  from_mont(out, a->l, &LD_FP_MONT);
}

int ld_fp_from_decimal(ld_fp_t *r, const char *s, size_t len) {
  return from_decimal(r->l, s, len, &LD_FP_MONT);
}

int ld_fp_is_lexicographically_largest(const ld_fp_t *a) {
  /* a > (p-1)/2  <=>  (p-1)/2 - a borrows. */
  uint64_t plain[4], t[4];
  from_mont(plain, a->l, &LD_FP_MONT);
  return (int)mont_sub_raw(t, P_MINUS_1_DIV_2, plain);
}

int ld_fp_cmp_vartime(const ld_fp_t *a, const ld_fp_t *b) {
  uint64_t x[4], y[4];
  from_mont(x, a->l, &LD_FP_MONT);
  from_mont(y, b->l, &LD_FP_MONT);
  for (int i = 3; i >= 0; i--) {
    if (x[i] != y[i]) {
      return x[i] < y[i] ? -1 : 1;
    }
  }
  return 0;
}

/* ---- Fr ---------------------------------------------------------------------------------------
 */

void ld_fr_pow(ld_fr_t *r, const ld_fr_t *a, const uint64_t e[4]) {
  mont_pow(r->l, a->l, e, &LD_FR_MONT);
}

void ld_fr_inv(ld_fr_t *r, const ld_fr_t *a) {
  mont_pow(r->l, a->l, R_MINUS_2, &LD_FR_MONT);
}

static int is_even(const uint64_t a[4]) {
  return (a[0] & 1) == 0;
}

static void shift_right1(uint64_t a[4]) {
  for (int i = 0; i < 3; i++) {
    a[i] = (a[i] >> 1) | (a[i + 1] << 63);
  }
  a[3] >>= 1;
}

static int geq(const uint64_t a[4], const uint64_t b[4]) {
  uint64_t t[4];
  return mont_sub_raw(t, a, b) == 0;
}

/* x = x / 2 mod r (plain values). */
static void halve_mod(uint64_t x[4], const ld_mont_t *f) {
  if (!is_even(x)) {
    uint64_t carry = mont_add_raw(x, x, f->m);
    shift_right1(x);
    x[3] |= carry << 63;
  } else {
    shift_right1(x);
  }
}

void ld_fr_inv_vartime(ld_fr_t *r, const ld_fr_t *a) {
  /* Binary extended Euclid on the Montgomery value aR: returns (aR)^-1 = a^-1 R^-1, which two
   * multiplications by R^2 bring to a^-1 R. */
  const ld_mont_t *f = &LD_FR_MONT;
  if (ld_fr_is_zero(a)) {
    ld_fr_set_zero(r);
    return;
  }
  uint64_t u[4], v[4], x1[4] = {1, 0, 0, 0}, x2[4] = {0, 0, 0, 0};
  memcpy(u, a->l, sizeof u);
  memcpy(v, f->m, sizeof v);
  static const uint64_t one[4] = {1, 0, 0, 0};
  while (!mont_equal(u, one) && !mont_equal(v, one)) {
    while (is_even(u)) {
      shift_right1(u);
      halve_mod(x1, f);
    }
    while (is_even(v)) {
      shift_right1(v);
      halve_mod(x2, f);
    }
    if (geq(u, v)) {
      mont_sub_raw(u, u, v);
      mont_sub(x1, x1, x2, f);
    } else {
      mont_sub_raw(v, v, u);
      mont_sub(x2, x2, x1, f);
    }
  }
  uint64_t *inv = mont_equal(u, one) ? x1 : x2;
  mont_mul(inv, inv, f->r2, f);
  mont_mul(r->l, inv, f->r2, f);
}

void ld_fr_batch_inv(ld_fr_t *a, size_t n, ld_fr_t *scratch, int vartime) {
  ld_fr_t acc, inv, one;
  ld_fr_set_one(&one);
  acc = one;
  for (size_t i = 0; i < n; i++) {
    scratch[i] = acc; /* product of the non-zero a[0..i) */
    ld_fr_t factor;
    mont_select(factor.l, (uint64_t)0 - (uint64_t)ld_fr_is_zero(&a[i]), one.l, a[i].l);
    ld_fr_mul(&acc, &acc, &factor);
  }
  if (vartime) {
    ld_fr_inv_vartime(&inv, &acc);
  } else {
    ld_fr_inv(&inv, &acc);
  }
  for (size_t i = n; i-- > 0;) {
    int zero = ld_fr_is_zero(&a[i]);
    ld_fr_t ai_inv, next;
    ld_fr_mul(&ai_inv, &inv, &scratch[i]);
    ld_fr_mul(&next, &inv, &a[i]);
    mont_select(inv.l, (uint64_t)0 - (uint64_t)zero, inv.l, next.l);
    mont_select(a[i].l, (uint64_t)0 - (uint64_t)zero, a[i].l, ai_inv.l);
  }
}

void ld_fr_from_u64(ld_fr_t *r, uint64_t v) {
  from_u64(r->l, v, &LD_FR_MONT);
}

int ld_fr_from_bytes(ld_fr_t *r, const uint8_t in[LD_FR_BYTES]) {
  return from_bytes(r->l, in, &LD_FR_MONT);
}

void ld_fr_from_bytes_reduce(ld_fr_t *r, const uint8_t in[LD_FR_BYTES]) {
  /* in < 2^256 < 6r: conditionally subtract 4r, 2r, then r. */
  const ld_mont_t *f = &LD_FR_MONT;
  uint64_t x[4], m2[4], m4[4], t[4];
  mont_limbs_from_le(x, in);
  mont_add_raw(m2, f->m, f->m);
  mont_add_raw(m4, m2, m2);
  const uint64_t *steps[3] = {m4, m2, f->m};
  for (int s = 0; s < 3; s++) {
    uint64_t borrow = mont_sub_raw(t, x, steps[s]);
    mont_select(x, (uint64_t)0 - borrow, x, t);
  }
  to_mont(r->l, x, f);
}

void ld_fr_to_bytes(uint8_t out[LD_FR_BYTES], const ld_fr_t *a) {
  to_bytes(out, a->l, &LD_FR_MONT);
}

void ld_fr_to_limbs(uint64_t out[4], const ld_fr_t *a) {
  from_mont(out, a->l, &LD_FR_MONT);
}

int ld_fr_from_decimal(ld_fr_t *r, const char *s, size_t len) {
  return from_decimal(r->l, s, len, &LD_FR_MONT);
}
