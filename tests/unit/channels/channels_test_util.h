/* Helpers shared by the tests of src/channels/ (header only: every tests/unit .c file is a test
 * program). Include after <cmocka.h>. */
#ifndef LD_TESTS_CHANNELS_TEST_UTIL_H
#define LD_TESTS_CHANNELS_TEST_UTIL_H

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/hex.h"
#include "sds_js_vectors.h"

/* The js-waku vectors (sds_js_vectors.h), parsed once per test program; never freed. */
static inline json_t *js_vectors(void) {
  static json_t *doc;
  if (doc == NULL) {
    json_error_t err;
    doc = json_loads(k_sds_js_vectors, 0, &err);
    if (doc == NULL)
      fail_msg("sds_js_vectors.h: %s at %d", err.text, err.position);
  }
  return doc;
}

/* Heap copy of the bytes of hex text (caller frees); *n gets the length. */
static inline uint8_t *unhex_alloc(const char *hex, size_t *n) {
  size_t len = strlen(hex);
  uint8_t *out = malloc(len / 2 + 1);
  assert_non_null(out);
  assert_int_equal(ld_hex_decode(hex, len, out, len / 2 + 1, n), 0);
  return out;
}

/* Lowercase hex of bytes (caller frees). */
static inline char *hex_alloc(const uint8_t *data, size_t n) {
  char *out = malloc(2 * n + 1);
  assert_non_null(out);
  ld_hex_encode(data, n, out);
  out[2 * n] = '\0';
  return out;
}

static inline void assert_hex_equal(const uint8_t *data, size_t n, const char *hex) {
  char *got = hex_alloc(data, n);
  assert_string_equal(got, hex);
  free(got);
}

static inline const char *jstr(const json_t *obj, const char *key) {
  const json_t *v = json_object_get(obj, key);
  assert_non_null(v);
  return json_string_value(v);
}

#endif
