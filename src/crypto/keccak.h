/* Keccak-256 as Ethereum uses it (the original Keccak padding 0x01…0x80, not the SHA3-256
 * padding 0x06), and the secp256k1 operations of Ethereum node records (EIP-778 "v4" identity
 * scheme) built on it: ECDSA over a Keccak-256 digest with 64-byte r ‖ s signatures, and the
 * node ID keccak256(X ‖ Y).
 *
 * The Keccak-f[1600] permutation comes from nettle (nettle_sha3_permute, public in nettle's
 * sha3.h; link with pkg-config "nettle"): OpenSSL 3.0 has no legacy Keccak-256 digest, and
 * neither libsodium, libsecp256k1, RHash nor libtomcrypt 1.18 expose one. Only the sponge
 * (absorb, pad, squeeze) is written here.
 *
 * Pure functions on caller storage; thread-safe. */
#ifndef LD_CRYPTO_KECCAK_H
#define LD_CRYPTO_KECCAK_H

#include <stddef.h>
#include <stdint.h>

#include "crypto/crypto.h"

#define LD_KECCAK256_LEN 32
#define LD_KECCAK256_RATE 136 /* bytes absorbed per permutation */
#define LD_SECP256K1_COMPACT_SIG_LEN 64

/* Incremental Keccak-256. Caller storage; init before use, final ends it (init again to reuse).
 * No heap memory, nothing to release. */
typedef struct ld_keccak256_ctx {
  uint64_t lanes[25];
  size_t pos; /* bytes absorbed into the current block */
} ld_keccak256_ctx_t;

void ld_keccak256_init(ld_keccak256_ctx_t *ctx);
/* `data` may be NULL when len is 0. */
void ld_keccak256_update(ld_keccak256_ctx_t *ctx, const void *data, size_t len);
void ld_keccak256_final(ld_keccak256_ctx_t *ctx, uint8_t out[LD_KECCAK256_LEN]);

/* One-shot Keccak-256 of data[0..len) (`data` may be NULL when len is 0). */
void ld_keccak256(const void *data, size_t len, uint8_t out[LD_KECCAK256_LEN]);

/* ECDSA over keccak256(msg) with RFC 6979 nonces (libsecp256k1's default, as go-ethereum and
 * nim-eth sign, so records are reproducible byte for byte), low S, written as the 64-byte
 * compact r ‖ s without recovery ID. LD_ERR_BAD_KEY for an invalid secret. */
int ld_secp256k1_sign_keccak(const uint8_t secret[LD_SECP256K1_SECRET_LEN], const void *msg,
                             size_t len, uint8_t sig[LD_SECP256K1_COMPACT_SIG_LEN]);

/* Verifies a compact r ‖ s signature over keccak256(msg) with a 33- or 65-byte SEC1 public key.
 * High-S signatures are refused, as go-ethereum and nim-eth refuse them. 0 when valid,
 * LD_ERR_BAD_SIGNATURE (including an r or s out of range) or LD_ERR_BAD_KEY. */
int ld_secp256k1_verify_keccak(const uint8_t *pub, size_t publen, const void *msg, size_t len,
                               const uint8_t sig[LD_SECP256K1_COMPACT_SIG_LEN]);

/* The EIP-778 node ID of a public key: keccak256 of the 64-byte uncompressed X ‖ Y.
 * LD_ERR_BAD_KEY when `pub` is not a valid 33- or 65-byte SEC1 key. */
int ld_secp256k1_keccak_id(const uint8_t *pub, size_t publen, uint8_t out[LD_KECCAK256_LEN]);

#endif
