/* Leopard-RS over GF(2^8) (channels/leopard_rs.h): parity byte for byte equal to catid/leopard's
 * (leopard_vectors.h), recovery from the reference's parity, every erasure pattern of small codes,
 * and the arguments refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "channels/leopard_rs.h"
#include "leopard_vectors.h"

static unsigned hex_nibble(char c) {
  return c <= '9' ? (unsigned)(c - '0') : (unsigned)(c - 'a' + 10);
}

/* The n bytes of `hex` (2n digits) into a new buffer. */
static uint8_t *from_hex(const char *hex, size_t n) {
  assert_int_equal(strlen(hex), 2 * n);
  uint8_t *out = malloc(n);
  assert_non_null(out);
  for (size_t i = 0; i < n; i++)
    out[i] = (uint8_t)(hex_nibble(hex[2 * i]) << 4 | hex_nibble(hex[2 * i + 1]));
  return out;
}

typedef struct shards {
  uint8_t *bytes;
  uint8_t *ptr[LD_RS_MAX_SHARDS];
} shards_t;

static void shards_view(shards_t *s, uint8_t *bytes, unsigned n, size_t len) {
  s->bytes = bytes;
  for (unsigned i = 0; i < n; i++)
    s->ptr[i] = bytes + (size_t)i * len;
}

static void shards_alloc(shards_t *s, unsigned n, size_t len) {
  uint8_t *b = calloc(n, len);
  assert_non_null(b);
  shards_view(s, b, n, len);
}

static void vectors_encode_as_the_reference(void **state) {
  (void)state;
  for (size_t v = 0; v < sizeof leopard_vectors / sizeof *leopard_vectors; v++) {
    const leopard_vector_t *t = &leopard_vectors[v];
    shards_t data, want, got;
    shards_view(&data, from_hex(t->data, (size_t)t->k * t->len), t->k, t->len);
    shards_view(&want, from_hex(t->parity, (size_t)t->m * t->len), t->m, t->len);
    shards_alloc(&got, t->m, t->len);
    assert_true(ld_rs_supported(t->k, t->m));
    assert_int_equal(ld_rs_encode(t->len, t->k, t->m, (const uint8_t *const *)data.ptr, got.ptr),
                     0);
    assert_memory_equal(got.bytes, want.bytes, (size_t)t->m * t->len);
    free(data.bytes);
    free(want.bytes);
    free(got.bytes);
  }
}

static void vectors_recover_from_the_reference_parity(void **state) {
  (void)state;
  for (size_t v = 0; v < sizeof leopard_vectors / sizeof *leopard_vectors; v++) {
    const leopard_vector_t *t = &leopard_vectors[v];
    shards_t data, parity, out;
    shards_view(&data, from_hex(t->data, (size_t)t->k * t->len), t->k, t->len);
    shards_view(&parity, from_hex(t->parity, (size_t)t->m * t->len), t->m, t->len);
    shards_alloc(&out, t->k, t->len);
    const uint8_t *have_d[LD_RS_MAX_SHARDS], *have_p[LD_RS_MAX_SHARDS];
    memcpy(have_d, data.ptr, t->k * sizeof *have_d);
    memcpy(have_p, parity.ptr, t->m * sizeof *have_p);
    for (unsigned i = 0; i < t->n_erased_data; i++)
      have_d[t->erased_data[i]] = NULL;
    for (unsigned i = 0; i < t->n_erased_parity; i++)
      have_p[t->erased_parity[i]] = NULL;
    assert_true(t->n_erased_data > 0);
    assert_int_equal(ld_rs_decode(t->len, t->k, t->m, have_d, have_p, out.ptr), 0);
    assert_memory_equal(out.bytes, data.bytes, (size_t)t->k * t->len);
    free(data.bytes);
    free(parity.bytes);
    free(out.bytes);
  }
}

/* Every subset of the k + m shards: recovered when at most m are missing, LD_ERR_LIMIT when
 * more data shards are missing than parity shards are present. */
static void check_every_pattern(unsigned k, unsigned m, size_t len) {
  shards_t data, parity, out;
  shards_alloc(&data, k, len);
  shards_alloc(&parity, m, len);
  shards_alloc(&out, k, len);
  for (size_t i = 0; i < (size_t)k * len; i++)
    data.bytes[i] = (uint8_t)(i * 131 + k * 7 + m);
  assert_int_equal(ld_rs_encode(len, k, m, (const uint8_t *const *)data.ptr, parity.ptr), 0);
  for (unsigned mask = 0; mask < 1u << (k + m); mask++) {
    const uint8_t *have_d[16], *have_p[16];
    unsigned lost_d = 0, got_p = 0;
    for (unsigned i = 0; i < k; i++) {
      have_d[i] = mask >> i & 1 ? NULL : data.ptr[i];
      lost_d += have_d[i] == NULL;
    }
    for (unsigned j = 0; j < m; j++) {
      have_p[j] = mask >> (k + j) & 1 ? NULL : parity.ptr[j];
      got_p += have_p[j] != NULL;
    }
    memset(out.bytes, 0xAA, (size_t)k * len);
    int rc = ld_rs_decode(len, k, m, have_d, have_p, out.ptr);
    if (lost_d > got_p) {
      assert_int_equal(rc, LD_ERR_LIMIT);
      continue;
    }
    assert_int_equal(rc, 0);
    assert_memory_equal(out.bytes, data.bytes, (size_t)k * len);
  }
  free(data.bytes);
  free(parity.bytes);
  free(out.bytes);
}

static void every_erasure_pattern_of_small_codes(void **state) {
  (void)state;
  for (unsigned k = 1; k <= 7; k++)
    for (unsigned m = 1; m <= k && k + m <= 11; m++)
      check_every_pattern(k, m, 128);
}

static void bad_arguments_refused(void **state) {
  (void)state;
  uint8_t a[128] = {1}, b[128] = {2}, p[128], q[128];
  const uint8_t *data[2] = {a, b};
  uint8_t *parity[2] = {p, q};
  uint8_t *out[2] = {p, q};
  assert_int_equal(ld_rs_encode(0, 2, 1, data, parity), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_rs_encode(63, 2, 1, data, parity), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_rs_encode(65, 2, 1, data, parity), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_rs_encode(64, 2, 0, data, parity), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_rs_encode(64, 2, 3, data, parity), LD_ERR_INVALID_ARG); /* m > k */
  assert_int_equal(ld_rs_encode(64, 2, 1, NULL, parity), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_rs_encode(64, 2, 1, data, NULL), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_rs_decode(64, 2, 1, data, (const uint8_t *const *)parity, NULL),
                   LD_ERR_INVALID_ARG);
  /* GF(2^16) counts: NextPow2(m) + k > 256 */
  assert_true(ld_rs_supported(224, 32));
  assert_false(ld_rs_supported(225, 32));
  assert_false(ld_rs_supported(227, 29));
  assert_true(ld_rs_supported(255, 1)); /* m = 1 is the XOR of the data shards */
  assert_false(ld_rs_supported(3, 0));
  static uint8_t big[227][64];
  const uint8_t *many[227];
  uint8_t *many_out[29];
  for (unsigned i = 0; i < 227; i++)
    many[i] = big[i];
  for (unsigned i = 0; i < 29; i++)
    many_out[i] = big[i];
  assert_int_equal(ld_rs_encode(64, 227, 29, many, many_out), LD_ERR_UNSUPPORTED);
  (void)out;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(vectors_encode_as_the_reference),
      cmocka_unit_test(vectors_recover_from_the_reference_parity),
      cmocka_unit_test(every_erasure_pattern_of_small_codes),
      cmocka_unit_test(bad_arguments_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
