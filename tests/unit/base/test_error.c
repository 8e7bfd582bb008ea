#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"

static void fmt_writes_reason_and_returns_code(void **state) {
  (void)state;
  char err[64] = "stale";
  assert_int_equal(ld_error_fmt(err, sizeof err, LD_ERR_MALFORMED, "field `%s` at %d", "x", 7),
                   LD_ERR_MALFORMED);
  assert_string_equal(err, "field `x` at 7");
}

static void fmt_truncates_and_terminates(void **state) {
  (void)state;
  char err[6];
  memset(err, 'z', sizeof err);
  assert_int_equal(ld_error_fmt(err, sizeof err, LD_ERR_LIMIT, "%s", "too many entries"),
                   LD_ERR_LIMIT);
  assert_string_equal(err, "too m");
}

static void fmt_without_buffer_only_returns_code(void **state) {
  (void)state;
  assert_int_equal(ld_error_fmt(NULL, 16, LD_ERR_NOMEM, "%s", "ignored"), LD_ERR_NOMEM);
  char err[4] = "abc";
  assert_int_equal(ld_error_fmt(err, 0, LD_ERR_IO, "%s", "ignored"), LD_ERR_IO);
  assert_string_equal(err, "abc");
  assert_int_equal(ld_error_fmt(err, sizeof err, 0, "%s", ""), 0);
  assert_string_equal(err, "");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fmt_writes_reason_and_returns_code),
      cmocka_unit_test(fmt_truncates_and_terminates),
      cmocka_unit_test(fmt_without_buffer_only_returns_code),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
