#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base64.h"
#include "base/error.h"

/* RFC 4648 §10 BASE64 vectors; the URL-safe form is the same text without padding. */
static const struct {
  const char *raw;
  const char *std;
  const char *url;
} rfc4648[] = {
    {"", "", ""},
    {"f", "Zg==", "Zg"},
    {"fo", "Zm8=", "Zm8"},
    {"foo", "Zm9v", "Zm9v"},
    {"foob", "Zm9vYg==", "Zm9vYg"},
    {"fooba", "Zm9vYmE=", "Zm9vYmE"},
    {"foobar", "Zm9vYmFy", "Zm9vYmFy"},
};

static void encodes_rfc4648_vectors(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof rfc4648 / sizeof rfc4648[0]; i++) {
    char out[16];
    size_t len = strlen(rfc4648[i].raw);
    const uint8_t *raw = (const uint8_t *)rfc4648[i].raw;
    assert_int_equal(ld_base64_encode(raw, len, out, sizeof out), (int)strlen(rfc4648[i].std));
    assert_string_equal(out, rfc4648[i].std);
    assert_int_equal(ld_base64url_encode(raw, len, out, sizeof out), (int)strlen(rfc4648[i].url));
    assert_string_equal(out, rfc4648[i].url);
  }
}

static void decodes_rfc4648_vectors(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof rfc4648 / sizeof rfc4648[0]; i++) {
    uint8_t out[8];
    size_t n = 99, want = strlen(rfc4648[i].raw);
    const char *std = rfc4648[i].std, *url = rfc4648[i].url;
    assert_int_equal(ld_base64_decode(std, strlen(std), out, sizeof out, &n), 0);
    assert_int_equal(n, want);
    assert_memory_equal(out, rfc4648[i].raw, n);
    assert_int_equal(ld_base64url_decode(url, strlen(url), out, sizeof out, &n), 0);
    assert_int_equal(n, want);
    assert_memory_equal(out, rfc4648[i].raw, n);
    /* URL-safe decoding also takes the padded form */
    assert_int_equal(ld_base64url_decode(std, strlen(std), out, sizeof out, &n), 0);
    assert_int_equal(n, want);
    assert_memory_equal(out, rfc4648[i].raw, n);
  }
}

static void alphabets_differ_in_62_and_63(void **state) {
  (void)state;
  const uint8_t raw[] = {0xfb, 0xff, 0xbf, 0xfb, 0xff};
  char out[16];
  uint8_t back[8];
  size_t n;
  assert_int_equal(ld_base64_encode(raw, 5, out, sizeof out), 8);
  assert_string_equal(out, "+/+/+/8=");
  assert_int_equal(ld_base64url_encode(raw, 5, out, sizeof out), 7);
  assert_string_equal(out, "-_-_-_8");
  assert_int_equal(ld_base64url_decode("-_-_-_8", 7, back, sizeof back, &n), 0);
  assert_int_equal(n, 5);
  assert_memory_equal(back, raw, 5);
  assert_int_equal(ld_base64_decode("-_-_-_8=", 8, back, sizeof back, &n), LD_ERR_BAD_ENCODING);
  assert_int_equal(ld_base64url_decode("+/+/+/8", 7, back, sizeof back, &n), LD_ERR_BAD_ENCODING);
}

static void standard_requires_correct_padding(void **state) {
  (void)state;
  uint8_t out[16];
  size_t n;
  const char *bad[] = {
      "Zg",       /* missing padding */
      "Zg=",      /* short padding */
      "Zg===",    /* too much padding */
      "Z===",     /* three pad chars */
      "Zm9v====", /* a whole group of padding */
      "Zg==Zm8=", /* padding in the middle */
      "Z=g=",     /* '=' inside a group */
      "Zh==",     /* nonzero trailing bits ("Zg==" is canonical) */
      "Zm9=",     /* nonzero trailing bits ("Zm8=" is canonical) */
      "Zm9v\n",   /* whitespace */
      "Zm 9v",    /* whitespace */
      "Zm9*",     /* outside the alphabet */
      "=",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(ld_base64_decode(bad[i], strlen(bad[i]), out, sizeof out, &n),
                     LD_ERR_BAD_ENCODING);
}

static void url_safe_rejects_bad_text(void **state) {
  (void)state;
  uint8_t out[16];
  size_t n;
  const char *bad[] = {"Z", "Zm9vY", "Zg=", "Zg===", "Zh", "Zm9", "Zm9v=", "=", "Zg==Zg", "Zm+8"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(ld_base64url_decode(bad[i], strlen(bad[i]), out, sizeof out, &n),
                     LD_ERR_BAD_ENCODING);
}

static void respects_capacities(void **state) {
  (void)state;
  uint8_t out[6];
  size_t n;
  char text[9];
  assert_int_equal(ld_base64_decode("Zm9vYmFy", 8, out, 5, &n), LD_ERR_LIMIT);
  assert_int_equal(ld_base64_decode("Zm9vYmFy", 8, out, 6, &n), 0);
  assert_int_equal(ld_base64url_decode("Zm9vYmE", 7, out, 4, &n), LD_ERR_LIMIT);
  assert_int_equal(ld_base64_encode(out, 6, text, 8), LD_ERR_LIMIT);
  assert_int_equal(ld_base64_encode(out, 6, text, 9), 8);
  assert_int_equal(ld_base64url_encode(out, 5, text, 7), LD_ERR_LIMIT);
  assert_int_equal(ld_base64url_encode(out, 5, text, 8), 7);
  assert_int_equal(ld_base64_encode(NULL, 0, text, 0), LD_ERR_LIMIT);
}

static void round_trips_random_bytes(void **state) {
  (void)state;
  srand(64);
  for (int iter = 0; iter < 500; iter++) {
    uint8_t in[100], back[100];
    char text[LD_BASE64_ENCODED_LEN(100) + 1];
    size_t len = (size_t)(rand() % 100), n;
    for (size_t i = 0; i < len; i++)
      in[i] = (uint8_t)rand();
    int tl = ld_base64_encode(in, len, text, sizeof text);
    assert_int_equal(tl, (int)LD_BASE64_ENCODED_LEN(len));
    assert_int_equal(ld_base64_decode(text, (size_t)tl, back, sizeof back, &n), 0);
    assert_int_equal(n, len);
    if (len > 0)
      assert_memory_equal(back, in, len);
    tl = ld_base64url_encode(in, len, text, sizeof text);
    assert_int_equal(tl, (int)LD_BASE64URL_ENCODED_LEN(len));
    assert_int_equal(ld_base64url_decode(text, (size_t)tl, back, sizeof back, &n), 0);
    assert_int_equal(n, len);
    if (len > 0)
      assert_memory_equal(back, in, len);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(encodes_rfc4648_vectors),
      cmocka_unit_test(decodes_rfc4648_vectors),
      cmocka_unit_test(alphabets_differ_in_62_and_63),
      cmocka_unit_test(standard_requires_correct_padding),
      cmocka_unit_test(url_safe_rejects_bad_text),
      cmocka_unit_test(respects_capacities),
      cmocka_unit_test(round_trips_random_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
