#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/utf8.h"

static size_t len_of(const char *bytes, size_t n) {
  return ld_utf8_char_len((const uint8_t *)bytes, n);
}

static void accepts_every_length(void **state) {
  (void)state;
  assert_int_equal(len_of("A", 1), 1);
  assert_int_equal(len_of("\x7f", 1), 1);
  assert_int_equal(len_of("\xc2\x80", 2), 2);         /* U+0080 */
  assert_int_equal(len_of("\xdf\xbf", 2), 2);         /* U+07FF */
  assert_int_equal(len_of("\xe0\xa0\x80", 3), 3);     /* U+0800 */
  assert_int_equal(len_of("\xef\xbf\xbd", 3), 3);     /* U+FFFD */
  assert_int_equal(len_of("\xf0\x90\x80\x80", 4), 4); /* U+10000 */
  assert_int_equal(len_of("\xf4\x8f\xbf\xbf", 4), 4); /* U+10FFFF */
  assert_int_equal(len_of("\xe2\x82\xac"
                          "rest",
                          7),
                   3); /* only the first character counts */
}

static void rejects_malformed_sequences(void **state) {
  (void)state;
  assert_int_equal(len_of("\x80", 1), 0);                 /* stray continuation */
  assert_int_equal(len_of("\xc2", 1), 0);                 /* truncated */
  assert_int_equal(len_of("\xe0\xa0", 2), 0);             /* truncated */
  assert_int_equal(len_of("\xc2\x41", 2), 0);             /* bad continuation */
  assert_int_equal(len_of("\xc0\xaf", 2), 0);             /* overlong '/' */
  assert_int_equal(len_of("\xe0\x80\xaf", 3), 0);         /* overlong */
  assert_int_equal(len_of("\xf0\x80\x80\xaf", 4), 0);     /* overlong */
  assert_int_equal(len_of("\xed\xa0\x80", 3), 0);         /* surrogate U+D800 */
  assert_int_equal(len_of("\xed\xbf\xbf", 3), 0);         /* surrogate U+DFFF */
  assert_int_equal(len_of("\xf4\x90\x80\x80", 4), 0);     /* above U+10FFFF */
  assert_int_equal(len_of("\xf8\x88\x80\x80\x80", 5), 0); /* 5-byte form */
  assert_int_equal(len_of("\xff", 1), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(accepts_every_length),
      cmocka_unit_test(rejects_malformed_sequences),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
