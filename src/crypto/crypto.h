/* The narrow crypto interface of liblogosdelivery. Everything here comes from packaged
 * libraries: libsodium (X25519, Ed25519, randomness), libsecp256k1 (secp256k1 keys, ECDSA, ECDH)
 * and OpenSSL (SHA-256, HMAC-SHA256, HKDF-SHA256, ChaCha20-Poly1305, AES-128-CTR/GCM).
 * ChaCha20-Poly1305 comes from OpenSSL for speed: its assembly seals 64 KiB frames about 2.5 times
 * as fast as libsodium's.
 *
 * All functions are thread-safe once ld_crypto_init has returned. Functions returning int give
 * 0 on success or a negative LD_ERR_* code. Functions returning void cannot fail on valid
 * arguments; if the libraries cannot be initialised or run out of memory they abort the process
 * rather than return unhashed, unencrypted or non-random output.
 *
 * SHA-256, HMAC-SHA256, ChaCha20-Poly1305 and AES keep reusable OpenSSL contexts per calling thread
 * (created on first use, freed when the thread exits), so the one-shot hashes and the AEAD do
 * not set up a context per call. */
#ifndef LD_CRYPTO_CRYPTO_H
#define LD_CRYPTO_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LD_SHA256_LEN 32
#define LD_X25519_KEY_LEN 32
#define LD_CHACHAPOLY_KEY_LEN 32
#define LD_CHACHAPOLY_TAG_LEN 16
#define LD_ED25519_SEED_LEN 32
#define LD_ED25519_PUBLIC_LEN 32
#define LD_ED25519_SECRET_LEN 64 /* seed ‖ public, as libsodium and libp2p keep it */
#define LD_ED25519_SIG_LEN 64
#define LD_SECP256K1_SECRET_LEN 32
#define LD_SECP256K1_PUBLIC_LEN 33 /* compressed SEC1 */
#define LD_SECP256K1_UNCOMPRESSED_LEN 65
#define LD_SECP256K1_DER_MAX 72
#define LD_SECP256K1_COMPACT_LEN 64 /* r ‖ s */
#define LD_AES128_KEY_LEN 16
#define LD_AES_BLOCK_LEN 16
#define LD_AES_GCM_NONCE_LEN 12
#define LD_AES_GCM_TAG_LEN 16
/* Longest AES-GCM plaintext or additional data taken here (OpenSSL's int lengths). */
#define LD_AES_GCM_MAX_LEN ((size_t)1 << 30)

/* Initialises the libraries (sodium_init, the secp256k1 context). Idempotent and safe to call
 * from several threads; every other function calls it on first use as well. */
int ld_crypto_init(void);

/* ---- hashing ---------------------------------------------------------------------------- */

void ld_sha256(const void *data, size_t len, uint8_t out[LD_SHA256_LEN]);

/* SHA-256 of the concatenation a ‖ b (either may be empty). */
void ld_sha256_2(const void *a, size_t alen, const void *b, size_t blen,
                 uint8_t out[LD_SHA256_LEN]);

/* Incremental SHA-256. The context is caller storage; ld_sha256_final ends it.
 * begin: LD_ERR_NOMEM when the context cannot be allocated (nothing to release then).
 * update/final: LD_ERR_STATE on a context not begun (or already ended), LD_ERR_CRYPTO when
 * OpenSSL fails; a failing update releases the context, and final always ends it. A context is
 * used by one thread at a time. */
typedef struct ld_sha256_ctx {
  void *impl;
} ld_sha256_ctx_t;
int ld_sha256_begin(ld_sha256_ctx_t *ctx);
int ld_sha256_update(ld_sha256_ctx_t *ctx, const void *data, size_t len);
int ld_sha256_final(ld_sha256_ctx_t *ctx, uint8_t out[LD_SHA256_LEN]);

/* Releases a context that will not be finished (an abandoned stream). Safe on a context that was
 * already ended, and on a zero-initialised one that was never begun. */
void ld_sha256_clear(ld_sha256_ctx_t *ctx);

/* HMAC-SHA256 (RFC 2104). `key` may be NULL when keylen is 0; keys longer than 64 bytes are
 * hashed first, as the RFC says. */
void ld_hmac_sha256(const void *key, size_t keylen, const void *data, size_t len,
                    uint8_t out[LD_SHA256_LEN]);

/* HKDF-SHA256 (RFC 5869): Extract(salt, ikm) then Expand(prk, info) into out[0..outlen).
 * `salt`, `ikm` and `info` may be NULL when their length is 0. LD_ERR_INVALID_ARG when outlen
 * is 0 or above 255 × 32; LD_ERR_NOMEM or LD_ERR_CRYPTO when OpenSSL fails. */
int ld_hkdf_sha256(const uint8_t *salt, size_t saltlen, const uint8_t *ikm, size_t ikmlen,
                   const uint8_t *info, size_t infolen, uint8_t *out, size_t outlen);

/* ---- randomness ------------------------------------------------------------------------- */

/* Fills `out` with cryptographically secure random bytes. */
void ld_random_bytes(void *out, size_t len);

/* Uniform random integer in [0, upper) (upper > 0). */
uint32_t ld_random_uniform(uint32_t upper);

/* ---- X25519 ----------------------------------------------------------------------------- */

/* Generates a fresh key pair. */
void ld_x25519_keypair(uint8_t pub[LD_X25519_KEY_LEN], uint8_t priv[LD_X25519_KEY_LEN]);

/* Derives the public key of `priv`. */
void ld_x25519_public(uint8_t pub[LD_X25519_KEY_LEN], const uint8_t priv[LD_X25519_KEY_LEN]);

/* shared = X25519(priv, pub). LD_ERR_CRYPTO when the result is all zero (low-order point). */
int ld_x25519(uint8_t shared[LD_X25519_KEY_LEN], const uint8_t priv[LD_X25519_KEY_LEN],
              const uint8_t pub[LD_X25519_KEY_LEN]);

/* ---- ChaCha20-Poly1305 (IETF, RFC 8439) -------------------------------------------------- */

/* The 12-byte nonce is 4 zero bytes followed by `nonce` in little-endian, as Noise uses it.
 * `out` receives len + 16 bytes (ciphertext ‖ tag); it may equal `in`. `ad` and `in` may be NULL
 * when their length is 0. len is at most 2^38 − 64 bytes (RFC 8439); more aborts. */
void ld_chachapoly_encrypt(const uint8_t key[LD_CHACHAPOLY_KEY_LEN], uint64_t nonce,
                           const uint8_t *ad, size_t adlen, const uint8_t *in, size_t len,
                           uint8_t *out);

/* Opens `in[0..len)` (ciphertext ‖ tag, len ≥ 16) into `out` (len − 16 bytes; may equal `in`;
 * may be NULL when len is 16). LD_ERR_DECRYPT when the tag does not verify: the len − 16 bytes
 * of `out` are then zeroed, so no unauthenticated plaintext is released. LD_ERR_DECRYPT also when
 * len < 16 or the ciphertext exceeds the RFC 8439 limit, and LD_ERR_NOMEM (or ld_crypto_init's
 * error) when the calling thread's context cannot be created; `out` is untouched in those cases. */
int ld_chachapoly_decrypt(const uint8_t key[LD_CHACHAPOLY_KEY_LEN], uint64_t nonce,
                          const uint8_t *ad, size_t adlen, const uint8_t *in, size_t len,
                          uint8_t *out);

/* ---- AES-128 ----------------------------------------------------------------------------- */

/* AES-128 in counter mode (the 16-byte `iv` is the initial counter block, incremented as a
 * 128-bit big-endian integer, as OpenSSL and NIST SP 800-38A do): out = in XOR keystream.
 * Encryption and decryption are the same operation. `out` may equal `in`; len ≤ INT_MAX. */
void ld_aes128_ctr(const uint8_t key[LD_AES128_KEY_LEN], const uint8_t iv[LD_AES_BLOCK_LEN],
                   const uint8_t *in, size_t len, uint8_t *out);

/* AES-128-GCM with a 12-byte nonce and a 16-byte tag. `out` receives len + 16 bytes
 * (ciphertext ‖ tag) and may equal `in`. `ad` and `in` may be NULL when their length is 0;
 * len and adlen are at most LD_AES_GCM_MAX_LEN (more aborts). */
void ld_aes128_gcm_encrypt(const uint8_t key[LD_AES128_KEY_LEN],
                           const uint8_t nonce[LD_AES_GCM_NONCE_LEN], const uint8_t *ad,
                           size_t adlen, const uint8_t *in, size_t len, uint8_t *out);

/* Opens `in[0..len)` (ciphertext ‖ tag) into `out` (len − 16 bytes, may equal `in`, may be NULL
 * when len is 16). LD_ERR_DECRYPT when len < 16, a length exceeds LD_AES_GCM_MAX_LEN or the tag
 * does not verify (the len − 16 bytes of `out` are then zeroed); LD_ERR_NOMEM (or
 * ld_crypto_init's error) when the thread's context cannot be created. */
int ld_aes128_gcm_decrypt(const uint8_t key[LD_AES128_KEY_LEN],
                          const uint8_t nonce[LD_AES_GCM_NONCE_LEN], const uint8_t *ad,
                          size_t adlen, const uint8_t *in, size_t len, uint8_t *out);

/* ---- Ed25519 ---------------------------------------------------------------------------- */

void ld_ed25519_from_seed(const uint8_t seed[LD_ED25519_SEED_LEN],
                          uint8_t pub[LD_ED25519_PUBLIC_LEN],
                          uint8_t secret[LD_ED25519_SECRET_LEN]);
void ld_ed25519_generate(uint8_t pub[LD_ED25519_PUBLIC_LEN], uint8_t secret[LD_ED25519_SECRET_LEN]);
void ld_ed25519_sign(const uint8_t secret[LD_ED25519_SECRET_LEN], const void *msg, size_t len,
                     uint8_t sig[LD_ED25519_SIG_LEN]);
/* 0 when valid, LD_ERR_BAD_SIGNATURE otherwise. */
int ld_ed25519_verify(const uint8_t pub[LD_ED25519_PUBLIC_LEN], const void *msg, size_t len,
                      const uint8_t sig[LD_ED25519_SIG_LEN]);

/* ---- secp256k1 -------------------------------------------------------------------------- */

/* 0 when `secret` is a valid scalar (0 < s < n), LD_ERR_BAD_KEY otherwise. */
int ld_secp256k1_secret_check(const uint8_t secret[LD_SECP256K1_SECRET_LEN]);

/* Generates a random valid secret key. */
void ld_secp256k1_generate(uint8_t secret[LD_SECP256K1_SECRET_LEN]);

/* Compressed public key of `secret`. LD_ERR_BAD_KEY for an invalid scalar. */
int ld_secp256k1_public(const uint8_t secret[LD_SECP256K1_SECRET_LEN],
                        uint8_t pub[LD_SECP256K1_PUBLIC_LEN]);

/* Parses a compressed (33) or uncompressed (65) SEC1 public key and writes it compressed.
 * LD_ERR_BAD_KEY when it is not a point on the curve, or has any other length or prefix (the
 * hybrid 06/07 form is refused, as go and js refuse it). verify and ecdh parse keys alike. */
int ld_secp256k1_compress(const uint8_t *pub, size_t len, uint8_t out[LD_SECP256K1_PUBLIC_LEN]);

/* ECDSA over SHA-256(msg) with RFC 6979 nonces, normalised to low S, DER-encoded into `sig`
 * (LD_SECP256K1_DER_MAX bytes of room); *siglen receives the length. */
int ld_secp256k1_sign(const uint8_t secret[LD_SECP256K1_SECRET_LEN], const void *msg, size_t len,
                      uint8_t sig[LD_SECP256K1_DER_MAX], size_t *siglen);

/* Verifies a DER signature over SHA-256(msg) with a 33- or 65-byte public key. High-S
 * signatures are accepted (normalised first), as go-libp2p accepts them. 0 when valid,
 * LD_ERR_BAD_SIGNATURE or LD_ERR_BAD_KEY otherwise. */
int ld_secp256k1_verify(const uint8_t *pub, size_t publen, const void *msg, size_t len,
                        const uint8_t *sig, size_t siglen);

/* ECDH as libsecp256k1 defines it: SHA-256 of the compressed shared point. */
int ld_secp256k1_ecdh(const uint8_t secret[LD_SECP256K1_SECRET_LEN], const uint8_t *pub,
                      size_t publen, uint8_t out[32]);

/* ECDH as discv5 defines it: the shared point secret × pub itself, compressed (02/03 ‖ X,
 * 33 bytes), unhashed. Errors as ld_secp256k1_ecdh. */
int ld_secp256k1_ecdh_point(const uint8_t secret[LD_SECP256K1_SECRET_LEN], const uint8_t *pub,
                            size_t publen, uint8_t out[LD_SECP256K1_PUBLIC_LEN]);

/* ECDSA over a 32-byte digest the caller computed (RFC 6979 nonces, low S), written as the
 * 64-byte compact r ‖ s. LD_ERR_BAD_KEY for an invalid secret. */
int ld_secp256k1_sign_digest(const uint8_t secret[LD_SECP256K1_SECRET_LEN],
                             const uint8_t digest[32], uint8_t sig[LD_SECP256K1_COMPACT_LEN]);

/* As ld_secp256k1_sign_digest, followed by the recovery ID (0 or 1) as a 65th byte: the
 * r ‖ s ‖ v form of Ethereum signatures (EIP-1459 tree roots). */
int ld_secp256k1_sign_digest_recoverable(const uint8_t secret[LD_SECP256K1_SECRET_LEN],
                                         const uint8_t digest[32],
                                         uint8_t sig[LD_SECP256K1_COMPACT_LEN + 1]);

/* Verifies a compact r ‖ s signature over a 32-byte digest with a 33- or 65-byte SEC1 key.
 * High-S signatures are refused (as go-ethereum and nim-eth refuse them). 0 when valid,
 * LD_ERR_BAD_SIGNATURE (also for r or s out of range) or LD_ERR_BAD_KEY. */
int ld_secp256k1_verify_digest(const uint8_t *pub, size_t publen, const uint8_t digest[32],
                               const uint8_t sig[LD_SECP256K1_COMPACT_LEN]);

#endif
