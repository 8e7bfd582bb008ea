#include <sodium.h>

#include "crypto/crypto.h"
#include "crypto/internal.h"

void ld_random_bytes(void *out, size_t len) {
  ld_crypto_require();
  if (len > 0) {
    randombytes_buf(out, len);
  }
}

uint32_t ld_random_uniform(uint32_t upper) {
  ld_crypto_require();
  return randombytes_uniform(upper);
}
