#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "base/hex.h"

/* RFC 4648 §10 BASE16 vectors */
static const struct {
  const char *raw;
  const char *upper;
  const char *lower;
} rfc4648[] = {
    {"", "", ""},
    {"f", "66", "66"},
    {"fo", "666F", "666f"},
    {"foo", "666F6F", "666f6f"},
    {"foob", "666F6F62", "666f6f62"},
    {"fooba", "666F6F6261", "666f6f6261"},
    {"foobar", "666F6F626172", "666f6f626172"},
};

static void encodes_rfc4648_vectors_lowercase(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof rfc4648 / sizeof rfc4648[0]; i++) {
    char out[32];
    memset(out, 'X', sizeof out);
    size_t n = ld_hex_encode((const uint8_t *)rfc4648[i].raw, strlen(rfc4648[i].raw), out);
    assert_int_equal(n, strlen(rfc4648[i].lower));
    assert_string_equal(out, rfc4648[i].lower);
  }
}

static void decodes_either_case(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof rfc4648 / sizeof rfc4648[0]; i++) {
    const char *texts[2] = {rfc4648[i].upper, rfc4648[i].lower};
    for (int k = 0; k < 2; k++) {
      uint8_t out[16];
      size_t n = 99;
      assert_int_equal(ld_hex_decode(texts[k], strlen(texts[k]), out, sizeof out, &n), 0);
      assert_int_equal(n, strlen(rfc4648[i].raw));
      assert_memory_equal(out, rfc4648[i].raw, n);
    }
  }
}

static void accepts_0x_prefix(void **state) {
  (void)state;
  uint8_t out[4];
  size_t n;
  assert_int_equal(ld_hex_decode("0xDEADbeef", 10, out, sizeof out, &n), 0);
  assert_int_equal(n, 4);
  assert_memory_equal(out, "\xde\xad\xbe\xef", 4);
  assert_int_equal(ld_hex_decode("0X00", 4, out, sizeof out, &n), 0);
  assert_int_equal(n, 1);
  assert_int_equal(out[0], 0);
  assert_int_equal(ld_hex_decode("0x", 2, out, sizeof out, &n), 0);
  assert_int_equal(n, 0);
}

static void rejects_bad_text(void **state) {
  (void)state;
  uint8_t out[8];
  size_t n;
  assert_int_equal(ld_hex_decode("abc", 3, out, sizeof out, &n), LD_ERR_BAD_ENCODING);
  assert_int_equal(ld_hex_decode("0g", 2, out, sizeof out, &n), LD_ERR_BAD_ENCODING);
  assert_int_equal(ld_hex_decode("g0", 2, out, sizeof out, &n), LD_ERR_BAD_ENCODING);
  assert_int_equal(ld_hex_decode("0x0x00", 6, out, sizeof out, &n), LD_ERR_BAD_ENCODING);
  assert_int_equal(ld_hex_decode(" 00", 3, out, sizeof out, &n), LD_ERR_BAD_ENCODING);
  assert_int_equal(ld_hex_decode("00\0"
                                 "0",
                                 4, out, sizeof out, &n),
                   LD_ERR_BAD_ENCODING);
  assert_int_equal(ld_hex_decode("x0", 2, out, sizeof out, &n), LD_ERR_BAD_ENCODING);
  /* every character that is not a hex digit, in either place */
  for (int c = 0; c < 256; c++) {
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))
      continue;
    char pair[2] = {(char)c, '0'};
    assert_int_equal(ld_hex_decode(pair, 2, out, sizeof out, &n), LD_ERR_BAD_ENCODING);
    if (c == 'x' || c == 'X')
      continue; /* "0x" is the prefix */
    pair[0] = '0';
    pair[1] = (char)c;
    assert_int_equal(ld_hex_decode(pair, 2, out, sizeof out, &n), LD_ERR_BAD_ENCODING);
  }
}

static void respects_capacity(void **state) {
  (void)state;
  uint8_t out[3];
  size_t n;
  assert_int_equal(ld_hex_decode("00112233", 8, out, 3, &n), LD_ERR_LIMIT);
  assert_int_equal(ld_hex_decode("001122", 6, out, 3, &n), 0);
  assert_int_equal(n, 3);
  assert_int_equal(ld_hex_decode("", 0, NULL, 0, &n), 0);
  assert_int_equal(n, 0);
}

static void round_trips_all_byte_values(void **state) {
  (void)state;
  uint8_t in[256], back[256];
  char text[513];
  for (int i = 0; i < 256; i++)
    in[i] = (uint8_t)i;
  assert_int_equal(ld_hex_encode(in, 256, text), 512);
  assert_int_equal(strlen(text), 512);
  assert_memory_equal(text, "000102", 6);
  assert_memory_equal(text + 506, "fdfeff", 6);
  size_t n;
  assert_int_equal(ld_hex_decode(text, 512, back, sizeof back, &n), 0);
  assert_int_equal(n, 256);
  assert_memory_equal(back, in, 256);
}

static void digit_value_of_every_char(void **state) {
  (void)state;
  assert_int_equal(ld_hex_digit_value('0'), 0);
  assert_int_equal(ld_hex_digit_value('9'), 9);
  assert_int_equal(ld_hex_digit_value('a'), 10);
  assert_int_equal(ld_hex_digit_value('F'), 15);
  for (int c = 0; c < 256; c++) {
    int want = -1;
    if (c >= '0' && c <= '9')
      want = c - '0';
    else if (c >= 'a' && c <= 'f')
      want = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      want = c - 'A' + 10;
    assert_int_equal(ld_hex_digit_value(c), want);
  }
  /* a negative plain char (a byte >= 0x80) and EOF are no digits */
  assert_int_equal(ld_hex_digit_value(-1), -1);
  assert_int_equal(ld_hex_digit_value((char)0xe6), -1);
  assert_int_equal(ld_hex_digit_value(256 + '0'), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(encodes_rfc4648_vectors_lowercase),
      cmocka_unit_test(decodes_either_case),
      cmocka_unit_test(accepts_0x_prefix),
      cmocka_unit_test(rejects_bad_text),
      cmocka_unit_test(respects_capacity),
      cmocka_unit_test(round_trips_all_byte_values),
      cmocka_unit_test(digit_value_of_every_char),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
