/* Password-based key derivation from OpenSSL, as Ethereum's "Web3 Secret Storage" keyfiles (and
 * nwaku's RLN keystore, which uses that format) need it: PBKDF2 with an HMAC over a named digest,
 * and scrypt. Pure functions on caller storage; thread-safe; the work is done on the calling
 * thread and takes as long as the parameters say (callers bound them). */
#ifndef LD_CRYPTO_KDF_H
#define LD_CRYPTO_KDF_H

#include <stddef.h>
#include <stdint.h>

/* PBKDF2-HMAC-<digest> (RFC 8018) into out[0..outlen). `digest` is OpenSSL's name of a SHA-2 or
 * SHA-3 digest ("sha256", "sha512", "sha3-256", …). iterations >= 1. LD_ERR_UNSUPPORTED for an
 * unknown digest (OpenSSL 3.0 has no legacy Keccak), LD_ERR_INVALID_ARG, LD_ERR_CRYPTO. */
int ld_pbkdf2_hmac(const char *digest, const void *password, size_t password_len, const void *salt,
                   size_t salt_len, uint32_t iterations, uint8_t *out, size_t outlen);

/* scrypt (RFC 7914) with cost n (a power of two > 1), block size r and parallelism p, using at most
 * max_memory bytes (LD_ERR_LIMIT beyond). LD_ERR_INVALID_ARG for bad parameters, LD_ERR_CRYPTO. */
int ld_scrypt(const void *password, size_t password_len, const void *salt, size_t salt_len,
              uint64_t n, uint64_t r, uint64_t p, uint64_t max_memory, uint8_t *out, size_t outlen);

#endif
