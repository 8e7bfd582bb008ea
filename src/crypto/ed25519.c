#include <stdlib.h>

#include <sodium.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "crypto/internal.h"

_Static_assert(LD_ED25519_SECRET_LEN == crypto_sign_SECRETKEYBYTES, "secret key length");
_Static_assert(LD_ED25519_SIG_LEN == crypto_sign_BYTES, "signature length");

void ld_ed25519_from_seed(const uint8_t seed[LD_ED25519_SEED_LEN],
                          uint8_t pub[LD_ED25519_PUBLIC_LEN],
                          uint8_t secret[LD_ED25519_SECRET_LEN]) {
  ld_crypto_require();
  if (crypto_sign_seed_keypair(pub, secret, seed) != 0) {
    abort();
  }
}

void ld_ed25519_generate(uint8_t pub[LD_ED25519_PUBLIC_LEN],
                         uint8_t secret[LD_ED25519_SECRET_LEN]) {
  ld_crypto_require();
  if (crypto_sign_keypair(pub, secret) != 0) {
    abort();
  }
}

void ld_ed25519_sign(const uint8_t secret[LD_ED25519_SECRET_LEN], const void *msg, size_t len,
                     uint8_t sig[LD_ED25519_SIG_LEN]) {
  ld_crypto_require();
  if (crypto_sign_detached(sig, NULL, msg, len, secret) != 0) {
    abort();
  }
}

int ld_ed25519_verify(const uint8_t pub[LD_ED25519_PUBLIC_LEN], const void *msg, size_t len,
                      const uint8_t sig[LD_ED25519_SIG_LEN]) {
  int rc = ld_crypto_init();
  if (rc != 0) {
    return rc;
  }
  return crypto_sign_verify_detached(sig, msg, len, pub) == 0 ? 0 : LD_ERR_BAD_SIGNATURE;
}
