#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "p2p/reqresp.h"

static void reads_a_whole_frame(void **state) {
  (void)state;
  const uint8_t data[] = {0x03, 'a', 'b', 'c', 0xff};
  const uint8_t *body = NULL;
  size_t n = 0;
  assert_int_equal(ld_reqresp_read_frame(data, sizeof data, 16, &body, &n), 4);
  assert_int_equal(n, 3);
  assert_memory_equal(body, "abc", 3);
  assert_int_equal(ld_reqresp_read_frame(data, 4, 3, NULL, NULL), 4);
}

static void reads_an_empty_frame(void **state) {
  (void)state;
  const uint8_t data[] = {0x00};
  size_t n = 99;
  assert_int_equal(ld_reqresp_read_frame(data, 1, 0, NULL, &n), 1);
  assert_int_equal(n, 0);
}

static void incomplete_frames_are_truncated(void **state) {
  (void)state;
  const uint8_t data[] = {0x80, 0x01, 'x'}; /* prefix 128, one byte of body */
  assert_int_equal(ld_reqresp_read_frame(data, 0, 1024, NULL, NULL), LD_ERR_TRUNCATED);
  assert_int_equal(ld_reqresp_read_frame(data, 1, 1024, NULL, NULL), LD_ERR_TRUNCATED);
  assert_int_equal(ld_reqresp_read_frame(data, 3, 1024, NULL, NULL), LD_ERR_TRUNCATED);
}

static void oversized_frames_are_refused_from_the_prefix(void **state) {
  (void)state;
  const uint8_t data[] = {0x80, 0x01};
  assert_int_equal(ld_reqresp_read_frame(data, sizeof data, 127, NULL, NULL), LD_ERR_TOO_LARGE);
  assert_int_equal(ld_reqresp_read_frame(data, sizeof data, 128, NULL, NULL), LD_ERR_TRUNCATED);
}

static void malformed_prefixes_are_named(void **state) {
  (void)state;
  const uint8_t nonminimal[] = {0x81, 0x00, 'x'};
  assert_int_equal(ld_reqresp_read_frame(nonminimal, sizeof nonminimal, 1024, NULL, NULL),
                   LD_ERR_VARINT_NONMINIMAL);
  const uint8_t too_long[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  assert_int_equal(ld_reqresp_read_frame(too_long, sizeof too_long, 1024, NULL, NULL),
                   LD_ERR_VARINT_TOO_LONG);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reads_a_whole_frame),
      cmocka_unit_test(reads_an_empty_frame),
      cmocka_unit_test(incomplete_frames_are_truncated),
      cmocka_unit_test(oversized_frames_are_refused_from_the_prefix),
      cmocka_unit_test(malformed_prefixes_are_named),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
