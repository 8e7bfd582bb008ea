/* Hex decoding for the crypto test vectors. */
#ifndef LD_TESTS_CRYPTO_TESTHEX_H
#define LD_TESTS_CRYPTO_TESTHEX_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"

/* Decodes `hex` into `out` (room for strlen(hex) / 2 bytes) and returns the byte count. Aborts
 * on a malformed vector, which is a bug in the test. */
static inline size_t testhex(const char *hex, uint8_t *out) {
  size_t n = 0;
  if (ld_hex_decode(hex, strlen(hex), out, strlen(hex) / 2, &n) != 0) {
    abort();
  }
  return n;
}

#endif
