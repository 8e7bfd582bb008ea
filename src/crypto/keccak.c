#include "crypto/keccak.h"

#include <string.h>

#include <nettle/sha3.h>
#include <secp256k1.h>

#include "base/error.h"
#include "crypto/internal.h"

_Static_assert(sizeof(struct sha3_state) == sizeof(((ld_keccak256_ctx_t *)0)->lanes),
               "nettle's Keccak state is 25 lanes");

static void permute(ld_keccak256_ctx_t *ctx) {
  struct sha3_state st;
  memcpy(st.a, ctx->lanes, sizeof st.a);
  sha3_permute(&st);
  memcpy(ctx->lanes, st.a, sizeof st.a);
}

/* Lane bytes are little-endian: byte i of the state is bits 8*(i%8).. of lane i/8. */
static void xor_byte(ld_keccak256_ctx_t *ctx, size_t i, uint8_t b) {
  ctx->lanes[i / 8] ^= (uint64_t)b << (8 * (i % 8));
}

void ld_keccak256_init(ld_keccak256_ctx_t *ctx) {
  memset(ctx, 0, sizeof *ctx);
}

void ld_keccak256_update(ld_keccak256_ctx_t *ctx, const void *data, size_t len) {
  const uint8_t *p = data;
  for (size_t i = 0; i < len; i++) {
    xor_byte(ctx, ctx->pos++, p[i]);
    if (ctx->pos == LD_KECCAK256_RATE) {
      permute(ctx);
      ctx->pos = 0;
    }
  }
}

void ld_keccak256_final(ld_keccak256_ctx_t *ctx, uint8_t out[LD_KECCAK256_LEN]) {
  xor_byte(ctx, ctx->pos, 0x01);
  xor_byte(ctx, LD_KECCAK256_RATE - 1, 0x80);
  permute(ctx);
  for (size_t i = 0; i < LD_KECCAK256_LEN; i++)
    out[i] = (uint8_t)(ctx->lanes[i / 8] >> (8 * (i % 8)));
  memset(ctx, 0, sizeof *ctx);
}

void ld_keccak256(const void *data, size_t len, uint8_t out[LD_KECCAK256_LEN]) {
  ld_keccak256_ctx_t ctx;
  ld_keccak256_init(&ctx);
  ld_keccak256_update(&ctx, data, len);
  ld_keccak256_final(&ctx, out);
}

/* ---- secp256k1 over Keccak-256 ------------------------------------------------------------- */

int ld_secp256k1_sign_keccak(const uint8_t secret[LD_SECP256K1_SECRET_LEN], const void *msg,
                             size_t len, uint8_t sig[LD_SECP256K1_COMPACT_SIG_LEN]) {
  secp256k1_ecdsa_signature s;
  uint8_t digest[LD_KECCAK256_LEN];
  const secp256k1_context *ctx = NULL;
  int rc = ld_crypto_secp256k1_ready(&ctx);
  if (rc != 0)
    return rc;
  ld_keccak256(msg, len, digest);
  if (!secp256k1_ecdsa_sign(ctx, &s, digest, secret, NULL, NULL))
    return LD_ERR_BAD_KEY;
  secp256k1_ecdsa_signature_serialize_compact(ctx, sig, &s);
  return 0;
}

int ld_secp256k1_verify_keccak(const uint8_t *pub, size_t publen, const void *msg, size_t len,
                               const uint8_t sig[LD_SECP256K1_COMPACT_SIG_LEN]) {
  secp256k1_pubkey pk;
  secp256k1_ecdsa_signature s;
  uint8_t digest[LD_KECCAK256_LEN];
  const secp256k1_context *ctx = NULL;
  int rc = ld_crypto_secp256k1_parse(pub, publen, &ctx, &pk);
  if (rc != 0)
    return rc;
  if (!secp256k1_ecdsa_signature_parse_compact(ctx, &s, sig))
    return LD_ERR_BAD_SIGNATURE;
  ld_keccak256(msg, len, digest);
  return secp256k1_ecdsa_verify(ctx, &s, digest, &pk) ? 0 : LD_ERR_BAD_SIGNATURE;
}

int ld_secp256k1_keccak_id(const uint8_t *pub, size_t publen, uint8_t out[LD_KECCAK256_LEN]) {
  secp256k1_pubkey pk;
  uint8_t full[LD_SECP256K1_UNCOMPRESSED_LEN];
  size_t full_len = sizeof full;
  const secp256k1_context *ctx = NULL;
  int rc = ld_crypto_secp256k1_parse(pub, publen, &ctx, &pk);
  if (rc != 0)
    return rc;
  secp256k1_ec_pubkey_serialize(ctx, full, &full_len, &pk, SECP256K1_EC_UNCOMPRESSED);
  ld_keccak256(full + 1, full_len - 1, out);
  return 0;
}
