/* PBKDF2 and scrypt against published vectors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "base/hex.h"
#include "crypto/kdf.h"

static void assert_hex(const uint8_t *b, size_t n, const char *hex) {
  char text[2 * 64 + 1];
  ld_hex_encode(b, n, text);
  assert_string_equal(text, hex);
}

/* RFC 7914 §11, PBKDF2-HMAC-SHA256 with one iteration */
static void pbkdf2_sha256_rfc7914(void **state) {
  (void)state;
  uint8_t out[64];
  assert_int_equal(ld_pbkdf2_hmac("sha256", "passwd", 6, "salt", 4, 1, out, 64), 0);
  assert_hex(
      out, 64,
      "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b"
      "39d77ef317c71b845b1e30bd509112041d3a19783");
  assert_int_equal(ld_pbkdf2_hmac("keccak256", "p", 1, "s", 1, 1, out, 32), LD_ERR_UNSUPPORTED);
  assert_int_equal(ld_pbkdf2_hmac("sha256", "p", 1, "s", 1, 0, out, 32), LD_ERR_INVALID_ARG);
}

/* RFC 7914 §12, the second vector */
static void scrypt_rfc7914(void **state) {
  (void)state;
  uint8_t out[64];
  assert_int_equal(ld_scrypt("password", 8, "NaCl", 4, 1024, 8, 16, 64u << 20, out, 64), 0);
  assert_hex(
      out, 64,
      "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff1092"
      "79d9830dac727afb94a83ee6d8360cbdfa2cc0640");
  assert_int_equal(ld_scrypt("p", 1, "s", 1, 1000, 8, 1, 64u << 20, out, 32), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_scrypt("p", 1, "s", 1, 1u << 20, 8, 1, 64u << 20, out, 32), LD_ERR_LIMIT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(pbkdf2_sha256_rfc7914),
      cmocka_unit_test(scrypt_rfc7914),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
