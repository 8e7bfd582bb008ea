#include <stdlib.h>

#include <sodium.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "crypto/internal.h"

void ld_x25519_public(uint8_t pub[LD_X25519_KEY_LEN], const uint8_t priv[LD_X25519_KEY_LEN]) {
  ld_crypto_require();
  /* A clamped scalar is never zero modulo the group order, so the result is never zero. */
  if (crypto_scalarmult_base(pub, priv) != 0) {
    abort();
  }
}

void ld_x25519_keypair(uint8_t pub[LD_X25519_KEY_LEN], uint8_t priv[LD_X25519_KEY_LEN]) {
  ld_crypto_require();
  randombytes_buf(priv, LD_X25519_KEY_LEN);
  ld_x25519_public(pub, priv);
}

int ld_x25519(uint8_t shared[LD_X25519_KEY_LEN], const uint8_t priv[LD_X25519_KEY_LEN],
              const uint8_t pub[LD_X25519_KEY_LEN]) {
  int rc = ld_crypto_init();
  if (rc != 0) {
    return rc;
  }
  /* libsodium fails on small-order points and on an all-zero result. */
  if (crypto_scalarmult(shared, priv, pub) != 0) {
    sodium_memzero(shared, LD_X25519_KEY_LEN);
    return LD_ERR_CRYPTO;
  }
  return 0;
}
