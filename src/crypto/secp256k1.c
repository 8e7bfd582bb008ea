#include <secp256k1.h>
#include <secp256k1_ecdh.h>
#include <secp256k1_recovery.h>
#include <sodium.h>
#include <string.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "crypto/internal.h"

int ld_crypto_secp256k1_parse(const uint8_t *pub, size_t len, const secp256k1_context **ctx,
                              secp256k1_pubkey *pk) {
  int rc = ld_crypto_secp256k1_ready(ctx);
  if (rc != 0) {
    return rc;
  }
  bool compressed = len == LD_SECP256K1_PUBLIC_LEN && (pub[0] == 0x02 || pub[0] == 0x03);
  bool uncompressed = len == LD_SECP256K1_UNCOMPRESSED_LEN && pub[0] == 0x04;
  if (!compressed && !uncompressed) {
    return LD_ERR_BAD_KEY;
  }
  return secp256k1_ec_pubkey_parse(*ctx, pk, pub, len) ? 0 : LD_ERR_BAD_KEY;
}

static void serialize_compressed(const secp256k1_context *ctx, const secp256k1_pubkey *pk,
                                 uint8_t out[LD_SECP256K1_PUBLIC_LEN]) {
  size_t outlen = LD_SECP256K1_PUBLIC_LEN;
  secp256k1_ec_pubkey_serialize(ctx, out, &outlen, pk, SECP256K1_EC_COMPRESSED);
}

int ld_secp256k1_secret_check(const uint8_t secret[LD_SECP256K1_SECRET_LEN]) {
  int rc = ld_crypto_init();
  if (rc != 0) {
    return rc;
  }
  return secp256k1_ec_seckey_verify(ld_crypto_secp256k1(), secret) ? 0 : LD_ERR_BAD_KEY;
}

void ld_secp256k1_generate(uint8_t secret[LD_SECP256K1_SECRET_LEN]) {
  ld_crypto_require();
  do {
    randombytes_buf(secret, LD_SECP256K1_SECRET_LEN);
  } while (!secp256k1_ec_seckey_verify(ld_crypto_secp256k1(), secret));
}

int ld_secp256k1_public(const uint8_t secret[LD_SECP256K1_SECRET_LEN],
                        uint8_t pub[LD_SECP256K1_PUBLIC_LEN]) {
  secp256k1_pubkey pk;
  const secp256k1_context *ctx = NULL;
  int rc = ld_crypto_secp256k1_ready(&ctx);
  if (rc != 0) {
    return rc;
  }
  if (!secp256k1_ec_pubkey_create(ctx, &pk, secret)) {
    return LD_ERR_BAD_KEY;
  }
  serialize_compressed(ctx, &pk, pub);
  return 0;
}

int ld_secp256k1_compress(const uint8_t *pub, size_t len, uint8_t out[LD_SECP256K1_PUBLIC_LEN]) {
  secp256k1_pubkey pk;
  const secp256k1_context *ctx = NULL;
  int rc = ld_crypto_secp256k1_parse(pub, len, &ctx, &pk);
  if (rc != 0) {
    return rc;
  }
  serialize_compressed(ctx, &pk, out);
  return 0;
}

int ld_secp256k1_sign(const uint8_t secret[LD_SECP256K1_SECRET_LEN], const void *msg, size_t len,
                      uint8_t sig[LD_SECP256K1_DER_MAX], size_t *siglen) {
  secp256k1_ecdsa_signature s;
  uint8_t digest[LD_SHA256_LEN];
  const secp256k1_context *ctx = NULL;
  int rc = ld_crypto_secp256k1_ready(&ctx);
  if (rc != 0) {
    return rc;
  }
  ld_sha256(msg, len, digest);
  /* The default nonce function is RFC 6979; libsecp256k1 always emits low-S. */
  if (!secp256k1_ecdsa_sign(ctx, &s, digest, secret, NULL, NULL)) {
    return LD_ERR_BAD_KEY;
  }
  *siglen = LD_SECP256K1_DER_MAX;
  if (!secp256k1_ecdsa_signature_serialize_der(ctx, sig, siglen, &s)) {
    return LD_ERR_INTERNAL;
  }
  return 0;
}

int ld_secp256k1_verify(const uint8_t *pub, size_t publen, const void *msg, size_t len,
                        const uint8_t *sig, size_t siglen) {
  secp256k1_pubkey pk;
  secp256k1_ecdsa_signature s;
  uint8_t digest[LD_SHA256_LEN];
  const secp256k1_context *ctx = NULL;
  int rc = ld_crypto_secp256k1_parse(pub, publen, &ctx, &pk);
  if (rc != 0) {
    return rc;
  }
  if (!secp256k1_ecdsa_signature_parse_der(ctx, &s, sig, siglen)) {
    return LD_ERR_BAD_SIGNATURE;
  }
  secp256k1_ecdsa_signature_normalize(ctx, &s, &s);
  ld_sha256(msg, len, digest);
  return secp256k1_ecdsa_verify(ctx, &s, digest, &pk) ? 0 : LD_ERR_BAD_SIGNATURE;
}

/* ECDH of `secret` and the parsed `pub`, the output shaped by libsecp256k1's hash callback
 * `hashfp` (NULL: its default, SHA-256 of the compressed point). */
static int ecdh_with(const uint8_t secret[LD_SECP256K1_SECRET_LEN], const uint8_t *pub,
                     size_t publen, uint8_t *out, secp256k1_ecdh_hash_function hashfp) {
  secp256k1_pubkey pk;
  const secp256k1_context *ctx = NULL;
  int rc = ld_crypto_secp256k1_parse(pub, publen, &ctx, &pk);
  if (rc != 0) {
    return rc;
  }
  if (!secp256k1_ecdh(ctx, out, &pk, secret, hashfp, NULL)) {
    return LD_ERR_BAD_KEY;
  }
  return 0;
}

int ld_secp256k1_ecdh(const uint8_t secret[LD_SECP256K1_SECRET_LEN], const uint8_t *pub,
                      size_t publen, uint8_t out[32]) {
  return ecdh_with(secret, pub, publen, out, NULL);
}

/* secp256k1_ecdh hash callback that keeps the shared point itself, compressed: 02/03 ‖ X. */
static int copy_compressed_point(unsigned char *out, const unsigned char *x32,
                                 const unsigned char *y32, void *data) {
  (void)data;
  out[0] = (unsigned char)(0x02 | (y32[31] & 1));
  memcpy(out + 1, x32, 32);
  return 1;
}

int ld_secp256k1_ecdh_point(const uint8_t secret[LD_SECP256K1_SECRET_LEN], const uint8_t *pub,
                            size_t publen, uint8_t out[LD_SECP256K1_PUBLIC_LEN]) {
  return ecdh_with(secret, pub, publen, out, copy_compressed_point);
}

int ld_secp256k1_sign_digest(const uint8_t secret[LD_SECP256K1_SECRET_LEN],
                             const uint8_t digest[32], uint8_t sig[64]) {
  secp256k1_ecdsa_signature s;
  const secp256k1_context *ctx = NULL;
  int rc = ld_crypto_secp256k1_ready(&ctx);
  if (rc != 0) {
    return rc;
  }
  if (!secp256k1_ecdsa_sign(ctx, &s, digest, secret, NULL, NULL)) {
    return LD_ERR_BAD_KEY;
  }
  secp256k1_ecdsa_signature_serialize_compact(ctx, sig, &s);
  return 0;
}

int ld_secp256k1_verify_digest(const uint8_t *pub, size_t publen, const uint8_t digest[32],
                               const uint8_t sig[64]) {
  secp256k1_pubkey pk;
  secp256k1_ecdsa_signature s;
  const secp256k1_context *ctx = NULL;
  int rc = ld_crypto_secp256k1_parse(pub, publen, &ctx, &pk);
  if (rc != 0) {
    return rc;
  }
  if (!secp256k1_ecdsa_signature_parse_compact(ctx, &s, sig)) {
    return LD_ERR_BAD_SIGNATURE;
  }
  return secp256k1_ecdsa_verify(ctx, &s, digest, &pk) ? 0 : LD_ERR_BAD_SIGNATURE;
}

int ld_secp256k1_sign_digest_recoverable(const uint8_t secret[LD_SECP256K1_SECRET_LEN],
                                         const uint8_t digest[32],
                                         uint8_t sig[LD_SECP256K1_COMPACT_LEN + 1]) {
  secp256k1_ecdsa_recoverable_signature s;
  int recid = 0;
  const secp256k1_context *ctx = NULL;
  int rc = ld_crypto_secp256k1_ready(&ctx);
  if (rc != 0) {
    return rc;
  }
  if (!secp256k1_ecdsa_sign_recoverable(ctx, &s, digest, secret, NULL, NULL)) {
    return LD_ERR_BAD_KEY;
  }
  secp256k1_ecdsa_recoverable_signature_serialize_compact(ctx, sig, &recid, &s);
  sig[LD_SECP256K1_COMPACT_LEN] = (uint8_t)recid;
  return 0;
}
