#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "base/varint.h"

typedef struct {
  uint64_t value;
  uint8_t bytes[10];
  size_t len;
} vector_t;

/* multiformats/unsigned-varint README vectors */
static const vector_t vectors[] = {
    {1, {0x01}, 1},
    {127, {0x7f}, 1},
    {128, {0x80, 0x01}, 2},
    {255, {0xff, 0x01}, 2},
    {300, {0xac, 0x02}, 2},
    {16384, {0x80, 0x80, 0x01}, 3},
    {0x7fffffffffffffffULL, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, 9},
};

static void encodes_published_vectors(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
    uint8_t out[10];
    size_t n = ld_varint_encode(vectors[i].value, out);
    assert_int_equal(n, vectors[i].len);
    assert_int_equal(ld_varint_len(vectors[i].value), vectors[i].len);
    assert_memory_equal(out, vectors[i].bytes, n);
  }
}

static void decodes_published_vectors(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
    uint64_t v = 0;
    size_t used = 0;
    assert_int_equal(ld_uvarint_decode(vectors[i].bytes, vectors[i].len, &v, &used), 0);
    assert_true(v == vectors[i].value);
    assert_int_equal(used, vectors[i].len);
  }
}

static void rejects_nonminimal_long_and_truncated(void **state) {
  (void)state;
  uint64_t v;
  size_t used;
  const uint8_t nonminimal[] = {0x81, 0x00};
  assert_int_equal(ld_uvarint_decode(nonminimal, 2, &v, &used), LD_ERR_VARINT_NONMINIMAL);
  const uint8_t zero[] = {0x00};
  assert_int_equal(ld_uvarint_decode(zero, 1, &v, &used), 0);
  assert_true(v == 0);
  const uint8_t ten[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
  assert_int_equal(ld_uvarint_decode(ten, 10, &v, &used), LD_ERR_VARINT_TOO_LONG);
  const uint8_t cut[] = {0x80, 0x80};
  assert_int_equal(ld_uvarint_decode(cut, 2, &v, &used), LD_ERR_TRUNCATED);
  assert_int_equal(ld_uvarint_decode(cut, 0, &v, &used), LD_ERR_TRUNCATED);
}

static void protobuf_dialect_accepts_ten_bytes_and_nonminimal(void **state) {
  (void)state;
  uint64_t v;
  size_t used;
  const uint8_t max[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  assert_int_equal(ld_pbvarint_decode(max, 10, &v, &used), 0);
  assert_true(v == UINT64_MAX);
  assert_int_equal(used, 10);
  uint8_t out[10];
  assert_int_equal(ld_varint_encode(UINT64_MAX, out), 10);
  assert_memory_equal(out, max, 10);
  const uint8_t nonminimal[] = {0x81, 0x00};
  assert_int_equal(ld_pbvarint_decode(nonminimal, 2, &v, &used), 0);
  assert_true(v == 1);
  const uint8_t too_big[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
  assert_int_equal(ld_pbvarint_decode(too_big, 10, &v, &used), LD_ERR_VARINT_TOO_LONG);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(encodes_published_vectors),
      cmocka_unit_test(decodes_published_vectors),
      cmocka_unit_test(rejects_nonminimal_long_and_truncated),
      cmocka_unit_test(protobuf_dialect_accepts_ten_bytes_and_nonminimal),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
