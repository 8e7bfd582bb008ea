#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <secp256k1.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "testhex.h"

#define SECRET LD_SECP256K1_SECRET_LEN
#define PUB LD_SECP256K1_PUBLIC_LEN
#define UNCOMPRESSED LD_SECP256K1_UNCOMPRESSED_LEN

/* peer-ids spec secp256k1 test key and its public key. */
#define TEST_SECRET "53DADF1D5A164D6B4ACDB15E24AA4C5B1D3461BDBD42ABEDB0A4404D56CED8FB"
#define TEST_PUBLIC "037777e994e452c21604f91de093ce415f5432f701dd8cd1a7a6fea0e630bfca99"
/* go-libp2p core/crypto/test_data, deterministic signature. */
#define GO_SECRET "3141bd606a504c44f23494d8f3174ef25b1fb9b52daa07d058be83b6e046b158"
#define GO_PUBLIC "023540ad842af8a43551a94d8383a555a99226506b88f953d2e70316a3a1b3d6a2"
#define GO_MESSAGE "Libp2p is the _best_!"
#define GO_SIG                                                                                     \
  "3044022031a7d633c2f3e45a16128d43751afaa8dc9ba24092c5f5b3cad2c8fe4cf388f2022049ea8d219f458683d2" \
  "4775d543ea8fb290704347fb35493c403bc2c259b29d9e"
/* The Noise static-key payload signed with the test key (libp2p Noise handshake vector). */
#define NOISE_MESSAGE                                                                              \
  "6e6f6973652d6c69627032702d7374617469632d6b65793a"                                               \
  "8f40c5adb68f25624ae5b214ea767a6ec94d829d3d7b5e1ad1ba6f3e2138285f"
#define NOISE_SIG                                                                                  \
  "3045022100a0fdecadd695ef4ddd425c0e9f7a55d18d145bf61e88ed920e0a2c99665f17a002204b7c7c57b6b3a640" \
  "ceaef2e77c66b8d468574cd6b611ad396fd0b741f2bb19eb"
/* The generator G, uncompressed and compressed; it is the public key of the secret 1. */
#define G_UNCOMPRESSED                                                                             \
  "0479be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"                             \
  "483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8"
#define G_COMPRESSED "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
#define ORDER_N "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"

static void derives_published_public_keys(void **state) {
  (void)state;
  uint8_t secret[SECRET], pub[PUB], want[PUB];
  testhex(TEST_SECRET, secret);
  assert_int_equal(ld_secp256k1_public(secret, pub), 0);
  testhex(TEST_PUBLIC, want);
  assert_memory_equal(pub, want, PUB);
  testhex(GO_SECRET, secret);
  assert_int_equal(ld_secp256k1_public(secret, pub), 0);
  testhex(GO_PUBLIC, want);
  assert_memory_equal(pub, want, PUB);
  memset(secret, 0, SECRET);
  secret[SECRET - 1] = 1;
  assert_int_equal(ld_secp256k1_public(secret, pub), 0);
  testhex(G_COMPRESSED, want);
  assert_memory_equal(pub, want, PUB);
}

static void check_signature(const char *secret_hex, const void *msg, size_t len,
                            const char *sig_hex, const char *pub_hex) {
  uint8_t secret[SECRET], sig[LD_SECP256K1_DER_MAX], want[LD_SECP256K1_DER_MAX], pub[PUB];
  size_t siglen = 0;
  testhex(secret_hex, secret);
  assert_int_equal(ld_secp256k1_sign(secret, msg, len, sig, &siglen), 0);
  size_t wantlen = testhex(sig_hex, want);
  assert_int_equal(siglen, wantlen);
  assert_memory_equal(sig, want, wantlen);
  testhex(pub_hex, pub);
  assert_int_equal(ld_secp256k1_verify(pub, PUB, msg, len, want, wantlen), 0);
}

static void go_libp2p_deterministic_signature(void **state) {
  (void)state;
  check_signature(GO_SECRET, GO_MESSAGE, strlen(GO_MESSAGE), GO_SIG, GO_PUBLIC);
}

static void noise_static_key_signature(void **state) {
  (void)state;
  uint8_t msg[64];
  size_t len = testhex(NOISE_MESSAGE, msg);
  check_signature(TEST_SECRET, msg, len, NOISE_SIG, TEST_PUBLIC);
}

/* s' = n − s, big-endian, for s < n. */
static void negate_scalar(uint8_t s[32]) {
  uint8_t n[32];
  testhex(ORDER_N, n);
  int borrow = 0;
  for (int i = 31; i >= 0; i--) {
    int d = n[i] - s[i] - borrow;
    borrow = d < 0;
    s[i] = (uint8_t)(d + (borrow ? 256 : 0));
  }
}

/* Rewrites a DER signature with s replaced by n − s. */
static size_t to_high_s(const uint8_t *der, size_t len, uint8_t out[LD_SECP256K1_DER_MAX]) {
  const secp256k1_context *ctx = secp256k1_context_static;
  secp256k1_ecdsa_signature sig;
  uint8_t compact[64];
  assert_true(secp256k1_ecdsa_signature_parse_der(ctx, &sig, der, len));
  assert_true(secp256k1_ecdsa_signature_serialize_compact(ctx, compact, &sig));
  negate_scalar(compact + 32);
  assert_true(secp256k1_ecdsa_signature_parse_compact(ctx, &sig, compact));
  size_t outlen = LD_SECP256K1_DER_MAX;
  assert_true(secp256k1_ecdsa_signature_serialize_der(ctx, out, &outlen, &sig));
  return outlen;
}

static void high_s_signature_accepted(void **state) {
  (void)state;
  uint8_t sig[LD_SECP256K1_DER_MAX], high[LD_SECP256K1_DER_MAX], pub[PUB];
  size_t len = testhex(GO_SIG, sig);
  size_t highlen = to_high_s(sig, len, high);
  assert_memory_not_equal(high, sig, 8);
  /* libsecp256k1 alone refuses it: the normalisation is ours. */
  const secp256k1_context *ctx = secp256k1_context_static;
  secp256k1_ecdsa_signature parsed;
  assert_true(secp256k1_ecdsa_signature_parse_der(ctx, &parsed, high, highlen));
  assert_true(secp256k1_ecdsa_signature_normalize(ctx, NULL, &parsed));
  testhex(GO_PUBLIC, pub);
  assert_int_equal(ld_secp256k1_verify(pub, PUB, GO_MESSAGE, strlen(GO_MESSAGE), high, highlen), 0);
  assert_int_equal(ld_secp256k1_verify(pub, PUB, GO_MESSAGE, 5, high, highlen),
                   LD_ERR_BAD_SIGNATURE);
}

static void signatures_are_low_s_and_deterministic(void **state) {
  (void)state;
  const secp256k1_context *ctx = secp256k1_context_static;
  for (int i = 0; i < 32; i++) {
    uint8_t secret[SECRET], msg[32], a[LD_SECP256K1_DER_MAX], b[LD_SECP256K1_DER_MAX];
    size_t alen = 0, blen = 0;
    ld_secp256k1_generate(secret);
    ld_random_bytes(msg, sizeof msg);
    assert_int_equal(ld_secp256k1_sign(secret, msg, sizeof msg, a, &alen), 0);
    assert_int_equal(ld_secp256k1_sign(secret, msg, sizeof msg, b, &blen), 0);
    assert_int_equal(alen, blen);
    assert_memory_equal(a, b, alen);
    assert_true(alen >= 8 && alen <= LD_SECP256K1_DER_MAX);
    secp256k1_ecdsa_signature parsed;
    assert_true(secp256k1_ecdsa_signature_parse_der(ctx, &parsed, a, alen));
    assert_false(secp256k1_ecdsa_signature_normalize(ctx, NULL, &parsed));
  }
}

static void invalid_secrets_rejected(void **state) {
  (void)state;
  static const char *bad[] = {
      "0000000000000000000000000000000000000000000000000000000000000000",
      ORDER_N,
      "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364142",
      "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
  };
  uint8_t secret[SECRET], pub[PUB], sig[LD_SECP256K1_DER_MAX], shared[32], g[PUB];
  size_t siglen;
  testhex(G_COMPRESSED, g);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    testhex(bad[i], secret);
    assert_int_equal(ld_secp256k1_secret_check(secret), LD_ERR_BAD_KEY);
    assert_int_equal(ld_secp256k1_public(secret, pub), LD_ERR_BAD_KEY);
    assert_int_equal(ld_secp256k1_sign(secret, "m", 1, sig, &siglen), LD_ERR_BAD_KEY);
    assert_int_equal(ld_secp256k1_ecdh(secret, g, PUB, shared), LD_ERR_BAD_KEY);
  }
  testhex("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364140", secret);
  assert_int_equal(ld_secp256k1_secret_check(secret), 0);
  testhex(TEST_SECRET, secret);
  assert_int_equal(ld_secp256k1_secret_check(secret), 0);
}

static void compress_uncompressed_equals_compressed(void **state) {
  (void)state;
  uint8_t u[UNCOMPRESSED], c[PUB], out[PUB];
  testhex(G_UNCOMPRESSED, u);
  testhex(G_COMPRESSED, c);
  assert_int_equal(ld_secp256k1_compress(u, UNCOMPRESSED, out), 0);
  assert_memory_equal(out, c, PUB);
  assert_int_equal(ld_secp256k1_compress(c, PUB, out), 0);
  assert_memory_equal(out, c, PUB);
  /* A random key: uncompress it with libsecp256k1, compress it back with ours. */
  uint8_t secret[SECRET], pub[PUB];
  ld_secp256k1_generate(secret);
  assert_int_equal(ld_secp256k1_public(secret, pub), 0);
  const secp256k1_context *ctx = secp256k1_context_static;
  secp256k1_pubkey pk;
  assert_true(secp256k1_ec_pubkey_parse(ctx, &pk, pub, PUB));
  size_t ulen = UNCOMPRESSED;
  assert_true(secp256k1_ec_pubkey_serialize(ctx, u, &ulen, &pk, SECP256K1_EC_UNCOMPRESSED));
  assert_int_equal(ld_secp256k1_compress(u, UNCOMPRESSED, out), 0);
  assert_memory_equal(out, pub, PUB);
}

static void malformed_public_keys_rejected(void **state) {
  (void)state;
  uint8_t u[UNCOMPRESSED], c[PUB], key[UNCOMPRESSED + 1], out[PUB];
  testhex(G_UNCOMPRESSED, u);
  testhex(G_COMPRESSED, c);
  static const size_t lens[] = {0, 1, 32, 34, 64, 66};
  memcpy(key, u, UNCOMPRESSED);
  key[UNCOMPRESSED] = 0;
  for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
    assert_int_equal(ld_secp256k1_compress(key, lens[i], out), LD_ERR_BAD_KEY);
  }
  /* The hybrid forms 06/07 that libsecp256k1 would accept. */
  memcpy(key, u, UNCOMPRESSED);
  key[0] = 0x06;
  assert_int_equal(ld_secp256k1_compress(key, UNCOMPRESSED, out), LD_ERR_BAD_KEY);
  key[0] = 0x07;
  assert_int_equal(ld_secp256k1_compress(key, UNCOMPRESSED, out), LD_ERR_BAD_KEY);
  /* Wrong prefixes. */
  memcpy(key, c, PUB);
  key[0] = 0x04;
  assert_int_equal(ld_secp256k1_compress(key, PUB, out), LD_ERR_BAD_KEY);
  memcpy(key, u, UNCOMPRESSED);
  key[0] = 0x02;
  assert_int_equal(ld_secp256k1_compress(key, UNCOMPRESSED, out), LD_ERR_BAD_KEY);
  /* Not on the curve: G with y + 1, and x = p. */
  memcpy(key, u, UNCOMPRESSED);
  key[UNCOMPRESSED - 1] ^= 0x01;
  assert_int_equal(ld_secp256k1_compress(key, UNCOMPRESSED, out), LD_ERR_BAD_KEY);
  testhex("02fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f", key);
  assert_int_equal(ld_secp256k1_compress(key, PUB, out), LD_ERR_BAD_KEY);
}

static void verify_rejects_bad_input(void **state) {
  (void)state;
  uint8_t pub[PUB], sig[LD_SECP256K1_DER_MAX + 1], u[UNCOMPRESSED];
  size_t len = testhex(GO_SIG, sig);
  testhex(GO_PUBLIC, pub);
  const char *m = GO_MESSAGE;
  size_t mlen = strlen(m);
  assert_int_equal(ld_secp256k1_verify(pub, PUB, m, mlen, sig, len), 0);
  assert_int_equal(ld_secp256k1_verify(pub, PUB, m, mlen - 1, sig, len), LD_ERR_BAD_SIGNATURE);
  assert_int_equal(ld_secp256k1_verify(pub, PUB, m, mlen, sig, len - 1), LD_ERR_BAD_SIGNATURE);
  sig[len] = 0x00;
  assert_int_equal(ld_secp256k1_verify(pub, PUB, m, mlen, sig, len + 1), LD_ERR_BAD_SIGNATURE);
  assert_int_equal(ld_secp256k1_verify(pub, PUB, m, mlen, sig, 0), LD_ERR_BAD_SIGNATURE);
  sig[len - 1] ^= 0x01;
  assert_int_equal(ld_secp256k1_verify(pub, PUB, m, mlen, sig, len), LD_ERR_BAD_SIGNATURE);
  sig[len - 1] ^= 0x01;
  uint8_t other[PUB];
  testhex(TEST_PUBLIC, other);
  assert_int_equal(ld_secp256k1_verify(other, PUB, m, mlen, sig, len), LD_ERR_BAD_SIGNATURE);
  assert_int_equal(ld_secp256k1_verify(pub, PUB - 1, m, mlen, sig, len), LD_ERR_BAD_KEY);
  /* The same key uncompressed verifies too. */
  const secp256k1_context *ctx = secp256k1_context_static;
  secp256k1_pubkey pk;
  assert_true(secp256k1_ec_pubkey_parse(ctx, &pk, pub, PUB));
  size_t ulen = UNCOMPRESSED;
  assert_true(secp256k1_ec_pubkey_serialize(ctx, u, &ulen, &pk, SECP256K1_EC_UNCOMPRESSED));
  assert_int_equal(ld_secp256k1_verify(u, UNCOMPRESSED, m, mlen, sig, len), 0);
}

static void ecdh_agrees_and_hashes_compressed_point(void **state) {
  (void)state;
  uint8_t a[SECRET], b[SECRET], apub[PUB], bpub[PUB], s1[32], s2[32], want[32];
  ld_secp256k1_generate(a);
  ld_secp256k1_generate(b);
  assert_int_equal(ld_secp256k1_public(a, apub), 0);
  assert_int_equal(ld_secp256k1_public(b, bpub), 0);
  assert_int_equal(ld_secp256k1_ecdh(a, bpub, PUB, s1), 0);
  assert_int_equal(ld_secp256k1_ecdh(b, apub, PUB, s2), 0);
  assert_memory_equal(s1, s2, 32);
  /* With the secret 1 the shared point is the peer's key itself. */
  uint8_t one[SECRET] = {0};
  one[SECRET - 1] = 1;
  assert_int_equal(ld_secp256k1_ecdh(one, bpub, PUB, s1), 0);
  ld_sha256(bpub, PUB, want);
  assert_memory_equal(s1, want, 32);
  uint8_t bad[PUB];
  memcpy(bad, bpub, PUB);
  bad[0] = 0x05;
  assert_int_equal(ld_secp256k1_ecdh(a, bad, PUB, s1), LD_ERR_BAD_KEY);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(derives_published_public_keys),
      cmocka_unit_test(go_libp2p_deterministic_signature),
      cmocka_unit_test(noise_static_key_signature),
      cmocka_unit_test(high_s_signature_accepted),
      cmocka_unit_test(signatures_are_low_s_and_deterministic),
      cmocka_unit_test(invalid_secrets_rejected),
      cmocka_unit_test(compress_uncompressed_equals_compressed),
      cmocka_unit_test(malformed_public_keys_rejected),
      cmocka_unit_test(verify_rejects_bad_input),
      cmocka_unit_test(ecdh_agrees_and_hashes_compressed_point),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
