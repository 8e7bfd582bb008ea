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

/* ---- constant-time inversion by safegcd ---------------------------------------------------------
 * Bernstein and Yang's divsteps ("Fast constant-time gcd computation and modular inversion",
 * 2019), in the form of batches of 62 steps whose transition matrix is applied to the full
 * values at once. Numbers are held in five signed limbs of 62 bits (value = sum v[i] 2^(62 i),
 * limbs 0..3 in [0, 2^62), limb 4 signed). Starting from f = m, g = x, d = 0, e = 1, every batch
 * keeps f = d x and g = e x (mod m); when g reaches 0, f = ±1 (or m when x = 0) and ±d is 1/x.
 * For a modulus below 2^254, ⌊(49 · 254 + 57) / 17⌋ = 735 divsteps always suffice (the paper's
 * bound), so 12 batches of 62 run for every input: no branch and no count depends on x. */

#define SAFEGCD_MASK62 ((uint64_t)0x3fffffffffffffff)
#define SAFEGCD_BATCHES 12

typedef struct {
  int64_t m[5];     /* the modulus in signed 62-bit limbs */
  uint64_t m_inv62; /* m^-1 mod 2^62 */
} safegcd_modulus_t;

static const safegcd_modulus_t SAFEGCD_FP = {
    {0x3c208c16d87cfd47, 0x1e05aa45a1c72a34, 0x05045b68181585d9, 0x19139cb84c680a6e, 0x30},
    0x382df87d1b799c77};

typedef struct {
  int64_t u, v, q, r;
} safegcd_matrix_t;

static void safegcd_from_limbs(int64_t out[5], const uint64_t a[4]) {
  out[0] = (int64_t)(a[0] & SAFEGCD_MASK62);
  out[1] = (int64_t)(((a[0] >> 62) | (a[1] << 2)) & SAFEGCD_MASK62);
  out[2] = (int64_t)(((a[1] >> 60) | (a[2] << 4)) & SAFEGCD_MASK62);
  out[3] = (int64_t)(((a[2] >> 58) | (a[3] << 6)) & SAFEGCD_MASK62);
  out[4] = (int64_t)(a[3] >> 56);
}

/* a = v for 0 <= v < 2^256 with limbs 0..3 in [0, 2^62). */
static void safegcd_to_limbs(uint64_t a[4], const int64_t v[5]) {
  uint64_t w[5];
  for (int i = 0; i < 5; i++) {
    w[i] = (uint64_t)v[i];
  }
  a[0] = w[0] | (w[1] << 62);
  a[1] = (w[1] >> 2) | (w[2] << 60);
  a[2] = (w[2] >> 4) | (w[3] << 58);
  a[3] = (w[3] >> 6) | (w[4] << 56);
}

/* 62 divsteps on the low bits of f and g (f odd): returns the new delta and sets t so that
 * 2^62 (f', g') = t (f, g). Branch-free: every choice is a mask. */
static int64_t safegcd_divsteps_62(int64_t delta, uint64_t f, uint64_t g, safegcd_matrix_t *t) {
  uint64_t u = 1, v = 0, q = 0, r = 1;
  for (int i = 0; i < 62; i++) {
    /* c1: all ones when delta > 0; c2: all ones when g is odd. */
    uint64_t c1 = (uint64_t)0 - ((uint64_t)(-delta) >> 63);
    uint64_t c2 = (uint64_t)0 - (g & 1);
    uint64_t x = (f ^ c1) - c1, y = (u ^ c1) - c1, z = (v ^ c1) - c1;
    g += x & c2;
    q += y & c2;
    r += z & c2;
    c1 &= c2; /* swap: delta > 0 and g odd */
    delta = (int64_t)((((uint64_t)delta ^ c1) - c1) + 1);
    f += g & c1;
    u += q & c1;
    v += r & c1;
    g >>= 1;
    u <<= 1;
    v <<= 1;
  }
  t->u = (int64_t)u;
  t->v = (int64_t)v;
  t->q = (int64_t)q;
  t->r = (int64_t)r;
  return delta;
}

/* (f, g) = t (f, g) / 2^62, exactly. */
static void safegcd_update_fg(int64_t f[5], int64_t g[5], const safegcd_matrix_t *t) {
  __int128 cf = (__int128)t->u * f[0] + (__int128)t->v * g[0];
  __int128 cg = (__int128)t->q * f[0] + (__int128)t->r * g[0];
  cf >>= 62;
  cg >>= 62;
  for (int i = 1; i < 5; i++) {
    cf += (__int128)t->u * f[i] + (__int128)t->v * g[i];
    cg += (__int128)t->q * f[i] + (__int128)t->r * g[i];
    f[i - 1] = (int64_t)((uint64_t)cf & SAFEGCD_MASK62);
    g[i - 1] = (int64_t)((uint64_t)cg & SAFEGCD_MASK62);
    cf >>= 62;
    cg >>= 62;
  }
  f[4] = (int64_t)cf;
  g[4] = (int64_t)cg;
}

/* (d, e) = t (d, e) / 2^62 mod m, for d, e in (-2m, m) on entry and on exit: multiples of m
 * make the low 62 bits of both sums zero before the shift (and d, e non-negative in effect). */
static void safegcd_update_de(int64_t d[5], int64_t e[5], const safegcd_matrix_t *t,
                              const safegcd_modulus_t *mod) {
  int64_t sd = (int64_t)((uint64_t)0 - ((uint64_t)d[4] >> 63));
  int64_t se = (int64_t)((uint64_t)0 - ((uint64_t)e[4] >> 63));
  int64_t md = (t->u & sd) + (t->v & se);
  int64_t me = (t->q & sd) + (t->r & se);
  __int128 cd = (__int128)t->u * d[0] + (__int128)t->v * e[0];
  __int128 ce = (__int128)t->q * d[0] + (__int128)t->r * e[0];
  md -= (int64_t)((mod->m_inv62 * (uint64_t)cd + (uint64_t)md) & SAFEGCD_MASK62);
  me -= (int64_t)((mod->m_inv62 * (uint64_t)ce + (uint64_t)me) & SAFEGCD_MASK62);
  cd += (__int128)mod->m[0] * md;
  ce += (__int128)mod->m[0] * me;
  cd >>= 62;
  ce >>= 62;
  for (int i = 1; i < 5; i++) {
    cd += (__int128)t->u * d[i] + (__int128)t->v * e[i] + (__int128)mod->m[i] * md;
    ce += (__int128)t->q * d[i] + (__int128)t->r * e[i] + (__int128)mod->m[i] * me;
    d[i - 1] = (int64_t)((uint64_t)cd & SAFEGCD_MASK62);
    e[i - 1] = (int64_t)((uint64_t)ce & SAFEGCD_MASK62);
    cd >>= 62;
    ce >>= 62;
  }
  d[4] = (int64_t)cd;
  e[4] = (int64_t)ce;
}

/* Carries limbs 0..3 into [0, 2^62), the sign into limb 4. */
static void safegcd_carry(int64_t v[5]) {
  for (int i = 0; i < 4; i++) {
    int64_t carry = v[i] >> 62;
    v[i] = (int64_t)((uint64_t)v[i] & SAFEGCD_MASK62);
    v[i + 1] += carry;
  }
}

/* d in (-2m, m) to sign · d mod m in [0, m), sign = -1 when `negative` is all ones, else 1. */
static void safegcd_normalize(int64_t d[5], int64_t negative, const safegcd_modulus_t *mod) {
  int64_t below = (int64_t)((uint64_t)0 - ((uint64_t)d[4] >> 63));
  for (int i = 0; i < 5; i++) {
    d[i] += mod->m[i] & below;
  }
  for (int i = 0; i < 5; i++) {
    d[i] = (d[i] ^ negative) - negative;
  }
  safegcd_carry(d);
  below = (int64_t)((uint64_t)0 - ((uint64_t)d[4] >> 63));
  for (int i = 0; i < 5; i++) {
    d[i] += mod->m[i] & below;
  }
  safegcd_carry(d);
}

/* r = x^-1 mod m for plain limbs x < m (constant-time); x = 0 gives 0. */
static void safegcd_invert(uint64_t r[4], const uint64_t x[4], const safegcd_modulus_t *mod) {
  int64_t f[5], g[5], d[5] = {0, 0, 0, 0, 0}, e[5] = {1, 0, 0, 0, 0}, delta = 1;
  memcpy(f, mod->m, sizeof f);
  safegcd_from_limbs(g, x);
  for (int i = 0; i < SAFEGCD_BATCHES; i++) {
    safegcd_matrix_t t;
    delta = safegcd_divsteps_62(delta, (uint64_t)f[0], (uint64_t)g[0], &t);
    safegcd_update_de(d, e, &t, mod);
    safegcd_update_fg(f, g, &t);
  }
  safegcd_normalize(d, (int64_t)((uint64_t)0 - ((uint64_t)f[4] >> 63)), mod);
  safegcd_to_limbs(r, d);
}

/* ---- Fp ---------------------------------------------------------------------------------------
 */

void ld_fp_pow(ld_fp_t *r, const ld_fp_t *a, const uint64_t e[4]) {
  mont_pow(r->l, a->l, e, &LD_FP_MONT);
}

void ld_fp_inv(ld_fp_t *r, const ld_fp_t *a) {
  /* safegcd inverts the Montgomery value aR: (aR)^-1 = a^-1 R^-1, which two multiplications by
   * R^2 bring to a^-1 R. */
  uint64_t inv[4];
  safegcd_invert(inv, a->l, &SAFEGCD_FP);
  mont_mul(inv, inv, LD_FP_MONT.r2, &LD_FP_MONT);
  mont_mul(r->l, inv, LD_FP_MONT.r2, &LD_FP_MONT);
}

void ld_fp_inv_fermat(ld_fp_t *r, const ld_fp_t *a) {
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
