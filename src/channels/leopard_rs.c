/* Leopard-RS over GF(2^8) (channels/leopard_rs.h). Scalar: one table lookup per byte.
 *
 * Field elements are bytes in Leopard's Cantor-basis representation; addition is XOR and a
 * product is taken through logarithms (log_of, exp_of). FFT and IFFT work on shards: a butterfly
 * on shards x, y with skew logarithm `lg` is, for the IFFT, y ^= x then x ^= y·e^lg, and for the
 * FFT, x ^= y·e^lg then y ^= x; a skew of zero (logarithm MODULUS) leaves out the product. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "channels/leopard_rs.h"

#define ORDER 256u
#define MODULUS 255u
#define POLYNOMIAL 0x11Du

static const uint8_t cantor_basis[8] = {1, 214, 152, 146, 86, 200, 88, 230};

static uint8_t log_of[ORDER], exp_of[ORDER];
static uint8_t fft_skew[MODULUS];    /* logarithms of the FFT skew factors */
static uint8_t log_walsh[ORDER];     /* Walsh–Hadamard transform of the logarithms */
static uint8_t mul_by[ORDER][ORDER]; /* mul_by[lg][x] = x · e^lg */
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

/* ---- field ---------------------------------------------------------------------------------- */

/* a + b modulo 255, with 255 standing for 0 as Leopard allows. */
static uint8_t add_mod(unsigned a, unsigned b) {
  unsigned sum = a + b;
  return (uint8_t)(sum + (sum >> 8));
}

static uint8_t sub_mod(unsigned a, unsigned b) {
  return (uint8_t)(a >= b ? a - b : a + MODULUS - b);
}

/* a · e^log_b. */
static uint8_t mul_log(uint8_t a, uint8_t log_b) {
  return a == 0 ? 0 : exp_of[add_mod(log_of[a], log_b)];
}

static void build_logarithms(void) {
  unsigned state = 1;
  for (unsigned i = 0; i < MODULUS; i++) {
    exp_of[state] = (uint8_t)i;
    state <<= 1;
    if (state >= ORDER)
      state ^= POLYNOMIAL;
  }
  exp_of[0] = MODULUS;
  /* element of each Cantor-basis byte, then its logarithm */
  log_of[0] = 0;
  for (unsigned bit = 0; bit < 8; bit++) {
    unsigned width = 1u << bit;
    for (unsigned j = 0; j < width; j++)
      log_of[j + width] = log_of[j] ^ cantor_basis[bit];
  }
  for (unsigned i = 0; i < ORDER; i++)
    log_of[i] = exp_of[log_of[i]];
  for (unsigned i = 0; i < ORDER; i++)
    exp_of[log_of[i]] = (uint8_t)i;
  exp_of[MODULUS] = exp_of[0];
}

/* In-place Walsh–Hadamard transform modulo 255 of n values. */
static void fwht(uint8_t *v, unsigned n) {
  for (unsigned w = 1; w < n; w <<= 1)
    for (unsigned r = 0; r < n; r += 2 * w)
      for (unsigned i = r; i < r + w; i++) {
        uint8_t a = v[i], b = v[i + w];
        v[i] = add_mod(a, b);
        v[i + w] = sub_mod(a, b);
      }
}

static void build_skews(void) {
  uint8_t basis[7];
  for (unsigned i = 1; i < 8; i++)
    basis[i - 1] = (uint8_t)(1u << i);
  for (unsigned level = 0; level < 7; level++) {
    unsigned step = 1u << (level + 1);
    fft_skew[(1u << level) - 1] = 0;
    for (unsigned i = level; i < 7; i++) {
      unsigned span = 1u << (i + 1);
      for (unsigned j = (1u << level) - 1; j < span; j += step)
        fft_skew[j + span] = fft_skew[j] ^ basis[i];
    }
    basis[level] = (uint8_t)(MODULUS - log_of[mul_log(basis[level], log_of[basis[level] ^ 1])]);
    for (unsigned i = level + 1; i < 7; i++)
      basis[i] = mul_log(basis[i], add_mod(log_of[basis[i] ^ 1], basis[level]));
  }
  for (unsigned i = 0; i < MODULUS; i++)
    fft_skew[i] = log_of[fft_skew[i]];
  memcpy(log_walsh, log_of, sizeof log_walsh);
  log_walsh[0] = 0;
  fwht(log_walsh, ORDER);
}

static void build_tables(void) {
  build_logarithms();
  for (unsigned lg = 0; lg < ORDER; lg++)
    for (unsigned x = 0; x < ORDER; x++)
      mul_by[lg][x] = mul_log((uint8_t)x, (uint8_t)lg);
  build_skews();
}

/* ---- shard operations ----------------------------------------------------------------------- */

static void xor_into(uint8_t *restrict x, const uint8_t *restrict y, size_t len) {
  for (size_t i = 0; i < len; i++)
    x[i] ^= y[i];
}

/* x = y · e^lg */
static void mul_shard(uint8_t *restrict x, const uint8_t *restrict y, uint8_t lg, size_t len) {
  const uint8_t *t = mul_by[lg];
  for (size_t i = 0; i < len; i++)
    x[i] = t[y[i]];
}

/* x ^= y · e^lg */
static void muladd_shard(uint8_t *restrict x, const uint8_t *restrict y, uint8_t lg, size_t len) {
  const uint8_t *t = mul_by[lg];
  for (size_t i = 0; i < len; i++)
    x[i] ^= t[y[i]];
}

/* Inverse FFT of the n shards of `work` (n a power of two); fft_skew[at + r + w - 1] is the factor
 * of the butterflies at distance w in the block starting at r. */
static void ifft(uint8_t **work, unsigned n, unsigned at, size_t len) {
  const uint8_t *skew = fft_skew + at;
  for (unsigned w = 1; w < n; w <<= 1)
    for (unsigned r = 0; r < n; r += 2 * w) {
      uint8_t lg = skew[r + w - 1];
      for (unsigned i = r; i < r + w; i++) {
        xor_into(work[i + w], work[i], len);
        if (lg != MODULUS)
          muladd_shard(work[i], work[i + w], lg, len);
      }
    }
}

static void fft(uint8_t **work, unsigned n, unsigned at, size_t len) {
  const uint8_t *skew = fft_skew + at;
  for (unsigned w = n >> 1; w >= 1; w >>= 1)
    for (unsigned r = 0; r < n; r += 2 * w) {
      uint8_t lg = skew[r + w - 1];
      for (unsigned i = r; i < r + w; i++) {
        if (lg != MODULUS)
          muladd_shard(work[i], work[i + w], lg, len);
        xor_into(work[i + w], work[i], len);
      }
    }
}

/* ---- counts and buffers --------------------------------------------------------------------- */

static unsigned next_pow2(unsigned v) {
  unsigned p = 1;
  while (p < v)
    p <<= 1;
  return p;
}

bool ld_rs_supported(unsigned k, unsigned m) {
  return m >= 1 && m <= k && (m == 1 || next_pow2(m) + k <= ORDER);
}

static int check_args(size_t shard_len, unsigned k, unsigned m, const void *a, const void *b) {
  if (shard_len == 0 || shard_len % LD_RS_SHARD_ALIGN != 0 || m == 0 || m > k || a == NULL ||
      b == NULL)
    return LD_ERR_INVALID_ARG;
  if (!ld_rs_supported(k, m))
    return LD_ERR_UNSUPPORTED;
  pthread_once(&tables_once, build_tables);
  return 0;
}

/* n zeroed shards behind one allocation: *ptrs[n] then the bytes. */
static uint8_t **shards_new(unsigned n, size_t len) {
  uint8_t **ptrs = calloc(1, n * sizeof *ptrs + (size_t)n * len);
  if (ptrs == NULL)
    return NULL;
  uint8_t *bytes = (uint8_t *)(ptrs + n);
  for (unsigned i = 0; i < n; i++)
    ptrs[i] = bytes + (size_t)i * len;
  return ptrs;
}

/* ---- encode --------------------------------------------------------------------------------- */

/* work ^= IFFT of data[first .. first+count-1] (zero beyond) in the m2-shard window at `first`. */
static void encode_window(uint8_t **work, uint8_t **tmp, unsigned m2, const uint8_t *const data[],
                          unsigned first, unsigned count, size_t len) {
  uint8_t **dst = first == 0 ? work : tmp;
  for (unsigned i = 0; i < m2; i++) {
    if (i < count)
      memcpy(dst[i], data[first + i], len);
    else
      memset(dst[i], 0, len);
  }
  ifft(dst, m2, m2 + first, len);
  if (first != 0)
    for (unsigned i = 0; i < m2; i++)
      xor_into(work[i], tmp[i], len);
}

int ld_rs_encode(size_t shard_len, unsigned k, unsigned m, const uint8_t *const data[],
                 uint8_t *const parity[]) {
  int rc = check_args(shard_len, k, m, data, parity);
  if (rc != 0)
    return rc;
  if (k == 1) {
    memcpy(parity[0], data[0], shard_len);
    return 0;
  }
  if (m == 1) {
    memcpy(parity[0], data[0], shard_len);
    for (unsigned i = 1; i < k; i++)
      xor_into(parity[0], data[i], shard_len);
    return 0;
  }
  unsigned m2 = next_pow2(m);
  uint8_t **work = shards_new(2 * m2, shard_len);
  if (work == NULL)
    return LD_ERR_NOMEM;
  for (unsigned first = 0; first < k; first += m2) {
    unsigned count = k - first < m2 ? k - first : m2;
    encode_window(work, work + m2, m2, data, first, count, shard_len);
  }
  fft(work, m2, 0, shard_len);
  for (unsigned i = 0; i < m; i++)
    memcpy(parity[i], work[i], shard_len);
  free(work);
  return 0;
}

/* ---- decode --------------------------------------------------------------------------------- */

/* Logarithms of the error locator's evaluations: positions 0..m2-1 parity, m2.. data. */
static void error_locator(uint8_t loc[ORDER], unsigned k, unsigned m, unsigned m2,
                          const uint8_t *const data[], const uint8_t *const parity[]) {
  memset(loc, 0, ORDER);
  for (unsigned i = 0; i < m2; i++)
    loc[i] = i >= m || parity[i] == NULL;
  for (unsigned i = 0; i < k; i++)
    loc[m2 + i] = data[i] == NULL;
  fwht(loc, ORDER);
  for (unsigned i = 0; i < ORDER; i++)
    loc[i] = (uint8_t)(((unsigned)loc[i] * log_walsh[i]) % MODULUS);
  fwht(loc, ORDER);
}

/* work[i] for i < n: each present shard times its locator value, zero elsewhere. */
static void load_shards(uint8_t **work, unsigned n, unsigned k, unsigned m, unsigned m2,
                        const uint8_t *const data[], const uint8_t *const parity[],
                        const uint8_t loc[ORDER], size_t len) {
  for (unsigned i = 0; i < n; i++) {
    const uint8_t *src = NULL;
    if (i < m)
      src = parity[i];
    else if (i >= m2 && i < m2 + k)
      src = data[i - m2];
    if (src != NULL)
      mul_shard(work[i], src, loc[i], len);
  }
}

static void formal_derivative(uint8_t **work, unsigned n, size_t len) {
  for (unsigned i = 1; i < n; i++) {
    unsigned width = ((i ^ (i - 1)) + 1) >> 1;
    for (unsigned j = 0; j < width; j++)
      xor_into(work[i - width + j], work[i + j], len);
  }
}

static int decode_fft(size_t len, unsigned k, unsigned m, const uint8_t *const data[],
                      const uint8_t *const parity[], uint8_t *const out[]) {
  unsigned m2 = next_pow2(m), n = next_pow2(m2 + k);
  uint8_t **work = shards_new(n, len);
  if (work == NULL)
    return LD_ERR_NOMEM;
  uint8_t loc[ORDER];
  error_locator(loc, k, m, m2, data, parity);
  load_shards(work, n, k, m, m2, data, parity, loc, len);
  ifft(work, n, 0, len);
  formal_derivative(work, n, len);
  fft(work, n, 0, len);
  for (unsigned i = 0; i < k; i++)
    if (data[i] == NULL)
      mul_shard(out[i], work[m2 + i], (uint8_t)(MODULUS - loc[m2 + i]), len);
  free(work);
  return 0;
}

int ld_rs_decode(size_t shard_len, unsigned k, unsigned m, const uint8_t *const data[],
                 const uint8_t *const parity[], uint8_t *const out[]) {
  int rc = check_args(shard_len, k, m, data, parity);
  if (rc != 0)
    return rc;
  if (out == NULL)
    return LD_ERR_INVALID_ARG;
  unsigned lost = 0, got = 0, lost_at = 0, got_at = 0;
  for (unsigned i = 0; i < k; i++)
    if (data[i] == NULL)
      lost++, lost_at = i;
    else
      memcpy(out[i], data[i], shard_len);
  for (unsigned j = 0; j < m; j++)
    if (parity[j] != NULL)
      got++, got_at = j;
  if (got < lost)
    return LD_ERR_LIMIT;
  if (lost == 0)
    return 0;
  if (k == 1) {
    memcpy(out[0], parity[got_at], shard_len);
    return 0;
  }
  if (m == 1) {
    memcpy(out[lost_at], parity[0], shard_len);
    for (unsigned i = 0; i < k; i++)
      if (data[i] != NULL)
        xor_into(out[lost_at], data[i], shard_len);
    return 0;
  }
  return decode_fft(shard_len, k, m, data, parity, out);
}
