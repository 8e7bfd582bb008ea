#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/cursor.h"
#include "base/error.h"

static void fixed_width_fetches_are_big_endian_and_bounded(void **state) {
  (void)state;
  const uint8_t in[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07};
  ld_cursor_t c;
  ld_cursor_init(&c, in, sizeof in);
  uint16_t a;
  uint32_t b;
  uint64_t d;
  assert_int_equal(ld_cursor_be16(&c, &a), 0);
  assert_int_equal(a, 0x0102);
  assert_int_equal(ld_cursor_be32(&c, &b), 0);
  assert_int_equal(b, 0x03040506);
  assert_int_equal(ld_cursor_be64(&c, &d), LD_ERR_TRUNCATED);
  assert_int_equal(ld_cursor_remaining(&c), 1); /* a failed fetch does not move */
  uint8_t last;
  assert_int_equal(ld_cursor_u8(&c, &last), 0);
  assert_int_equal(last, 0x07);
  assert_true(ld_cursor_empty(&c));
}

static void length_prefixed_rolls_back_on_failure(void **state) {
  (void)state;
  const uint8_t in[] = {0x05, 'a', 'b'};
  ld_cursor_t c;
  ld_cursor_init(&c, in, sizeof in);
  const uint8_t *p;
  size_t n;
  assert_int_equal(ld_cursor_lp_bytes(&c, 100, &p, &n), LD_ERR_TRUNCATED);
  assert_int_equal(c.pos, 0);
  assert_int_equal(ld_cursor_lp_bytes(&c, 4, &p, &n), LD_ERR_TOO_LARGE);
  assert_int_equal(c.pos, 0);
  const uint8_t ok[] = {0x02, 'h', 'i', 0xff};
  ld_cursor_init(&c, ok, sizeof ok);
  assert_int_equal(ld_cursor_lp_bytes(&c, 4, &p, &n), 0);
  assert_int_equal(n, 2);
  assert_memory_equal(p, "hi", 2);
  assert_int_equal(ld_cursor_remaining(&c), 1);
}

static void buffer_builds_and_consumes(void **state) {
  (void)state;
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_buf_be16(&b, 0xabcd), 0);
  assert_int_equal(ld_buf_lp(&b, "hello", 5), 0);
  assert_int_equal(ld_buf_varint(&b, 300), 0);
  const uint8_t want[] = {0xab, 0xcd, 0x05, 'h', 'e', 'l', 'l', 'o', 0xac, 0x02};
  assert_int_equal(b.len, sizeof want);
  assert_memory_equal(b.data, want, sizeof want);
  ld_buf_consume(&b, 3);
  assert_int_equal(b.len, sizeof want - 3);
  assert_memory_equal(b.data, want + 3, b.len);
  for (int i = 0; i < 100000; i++)
    assert_int_equal(ld_buf_u8(&b, (uint8_t)i), 0);
  assert_int_equal(b.len, sizeof want - 3 + 100000);
  ld_buf_clear(&b);
  assert_null(b.data);
  assert_int_equal(b.len, 0);
}

static void every_error_is_named(void **state) {
  (void)state;
  assert_string_equal(ld_strerror(LD_ERR_TRUNCATED), "input truncated");
  assert_string_equal(ld_errname(LD_ERR_PEER_ID_MISMATCH), "PEER_ID_MISMATCH");
  assert_string_equal(ld_strerror(12345), "unknown error");
  assert_string_equal(ld_errname(0), "OK");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fixed_width_fetches_are_big_endian_and_bounded),
      cmocka_unit_test(length_prefixed_rolls_back_on_failure),
      cmocka_unit_test(buffer_builds_and_consumes),
      cmocka_unit_test(every_error_is_named),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
