/* State shared by the files of src/crypto; not part of the crypto interface.
 *
 * The objects below are created once by ld_crypto_init and live until the process exits. */
#ifndef LD_CRYPTO_INTERNAL_H
#define LD_CRYPTO_INTERNAL_H

#include <openssl/evp.h>
#include <secp256k1.h>

/* Runs ld_crypto_init and aborts the process if it failed: for the functions that cannot
 * report an error. */
void ld_crypto_require(void);

/* The randomised secp256k1 context. Only valid after a successful ld_crypto_init. */
const secp256k1_context *ld_crypto_secp256k1(void);

/* OpenSSL's SHA-256 digest and HMAC implementations, fetched at the first call of either (the
 * process aborts if OpenSSL cannot provide them). */
const EVP_MD *ld_crypto_sha256_md(void);
EVP_MAC *ld_crypto_hmac_mac(void);

#endif
