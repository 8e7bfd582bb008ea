#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/dynlib.h"
#include "base/error.h"

static void resolves_every_symbol(void **state) {
  (void)state;
  size_t (*my_strlen)(const char *) = NULL;
  int (*my_abs)(int) = NULL;
  const ld_dynlib_sym_t syms[] = {{"strlen", (void **)&my_strlen}, {"abs", (void **)&my_abs}};
  assert_int_equal(ld_dynlib_load("libc.so.6", NULL, syms, 2, "test", "none"), 0);
  assert_non_null(my_strlen);
  assert_int_equal(my_strlen("four"), 4);
  assert_int_equal(my_abs(-3), 3);
}

static void falls_back_to_the_second_name(void **state) {
  (void)state;
  size_t (*my_strlen)(const char *) = NULL;
  const ld_dynlib_sym_t syms[] = {{"strlen", (void **)&my_strlen}};
  assert_int_equal(
      ld_dynlib_load("libld-no-such-library.so.9", "libc.so.6", syms, 1, "test", "none"), 0);
  assert_int_equal(my_strlen("abc"), 3);
}

static void missing_library_or_symbol_is_an_io_error(void **state) {
  (void)state;
  void *slot = NULL;
  const ld_dynlib_sym_t missing[] = {{"ld_no_such_function", &slot}};
  assert_int_equal(ld_dynlib_load("libld-no-such-library.so.9", NULL, missing, 1, "test", "none"),
                   LD_ERR_IO);
  assert_int_equal(ld_dynlib_load("libc.so.6", NULL, missing, 1, "test", "none"), LD_ERR_IO);
  assert_null(slot);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(resolves_every_symbol),
      cmocka_unit_test(falls_back_to_the_second_name),
      cmocka_unit_test(missing_library_or_symbol_is_an_io_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
