/* Hex decoding for the crypto test vectors. */
#ifndef LD_TESTS_CRYPTO_TESTHEX_H
#define LD_TESTS_CRYPTO_TESTHEX_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline int testhex_nibble(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  abort();
}

/* Decodes `hex` into `out` (room for strlen(hex) / 2 bytes) and returns the byte count. Aborts
 * on a malformed vector, which is a bug in the test. */
static inline size_t testhex(const char *hex, uint8_t *out) {
  size_t n = strlen(hex);
  if (n % 2 != 0) {
    abort();
  }
  for (size_t i = 0; i < n / 2; i++) {
    out[i] = (uint8_t)(testhex_nibble(hex[2 * i]) << 4 | testhex_nibble(hex[2 * i + 1]));
  }
  return n / 2;
}

#endif
