/* State shared by the files of src/crypto; not part of the crypto interface.
 *
 * The objects below are created once by ld_crypto_init and live until the process exits. */
#ifndef LD_CRYPTO_INTERNAL_H
#define LD_CRYPTO_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>
#include <secp256k1.h>

/* Runs ld_crypto_init and aborts the process if it failed: for the functions that cannot
 * report an error. */
void ld_crypto_require(void);

/* The randomised secp256k1 context. Only valid after a successful ld_crypto_init. */
const secp256k1_context *ld_crypto_secp256k1(void);

/* Runs ld_crypto_init and, when it succeeded, stores the randomised secp256k1 context in *ctx.
 * Returns ld_crypto_init's result. */
int ld_crypto_secp256k1_ready(const secp256k1_context **ctx);

/* ld_crypto_secp256k1_ready, then parses the public key `pub` into *pk. Accepts only the SEC1
 * forms libp2p peers send: 02/03 ‖ X and 04 ‖ X ‖ Y (no hybrid 06/07). Returns 0, ld_crypto_init's
 * error or LD_ERR_BAD_KEY. */
int ld_crypto_secp256k1_parse(const uint8_t *pub, size_t len, const secp256k1_context **ctx,
                              secp256k1_pubkey *pk);

/* OpenSSL's SHA-256 digest and HMAC implementations, fetched at the first call of either (the
 * process aborts if OpenSSL cannot provide them). */
const EVP_MD *ld_crypto_sha256_md(void);
EVP_MAC *ld_crypto_hmac_mac(void);

#endif
