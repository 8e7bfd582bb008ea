/* Keccak-256 (legacy padding) and the secp256k1 operations of EIP-778 records built on it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "crypto/keccak.h"
#include "testhex.h"

static void check(const void *msg, size_t len, const char *hex) {
  uint8_t want[32], got[32];
  testhex(hex, want);
  ld_keccak256(msg, len, got);
  assert_memory_equal(got, want, 32);
}

static void published_vectors(void **state) {
  (void)state;
  check("", 0, "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
  check(NULL, 0, "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
  check("abc", 3, "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45");
  const char *fox = "The quick brown fox jumps over the lazy dog";
  check(fox, strlen(fox), "4d741b6f1eb29cb2a9b9911c82f56fa8d73b04959d3d9d222895df6c0b28aa15");
  /* Keccak KAT: 1600 bits of 0xa3, crossing the 136-byte rate. */
  uint8_t a3[200];
  memset(a3, 0xa3, sizeof a3);
  check(a3, sizeof a3, "3a57666b048777f2c953dc4456f45a2588e1cb6f2da760122d530ac2ce607d4a");
}

static void not_sha3(void **state) {
  (void)state;
  /* SHA3-256("") is a7ffc6f8…; the legacy padding must give another digest. */
  uint8_t sha3_empty[32], got[32];
  testhex("a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a", sha3_empty);
  ld_keccak256("", 0, got);
  assert_memory_not_equal(got, sha3_empty, 32);
}

static void rate_boundaries(void **state) {
  (void)state;
  uint8_t a[136];
  memset(a, 'a', sizeof a);
  /* One byte short of a block (padding bytes 0x01 and 0x80 meet in one byte) and a full one. */
  check(a, 135, "34367dc248bbd832f4e3e69dfaac2f92638bd0bbd18f2912ba4ef454919cf446");
  check(a, 136, "a6c4d403279fe3e0af03729caada8374b5ca54d8065329a3ebcaeb4b60aa386e");
}

static void incremental_matches_one_shot(void **state) {
  (void)state;
  uint8_t data[700], want[32], got[32];
  for (size_t i = 0; i < sizeof data; i++)
    data[i] = (uint8_t)(i * 31 + 7);
  ld_keccak256(data, sizeof data, want);
  const size_t steps[] = {1, 7, 135, 136, 137, 300};
  for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
    ld_keccak256_ctx_t ctx;
    ld_keccak256_init(&ctx);
    for (size_t off = 0; off < sizeof data; off += steps[s]) {
      size_t n = sizeof data - off < steps[s] ? sizeof data - off : steps[s];
      ld_keccak256_update(&ctx, data + off, n);
    }
    ld_keccak256_final(&ctx, got);
    assert_memory_equal(got, want, 32);
  }
}

/* EIP-778 example record: private key, content, digest, signature, key, node ID. */
static const char *EIP_SECRET = "b71c71a67e1177ad4e901695e1b4b9ee17ae16c6668d313eac2f96dbcda3f291";
static const char *EIP_CONTENT =
    "f84201826964827634826970847f00000189736563703235366b31a103ca634cae0d49acb401d8a4c6b6fe8c55b7"
    "0d115bf400769cc1400f3258cd31388375647082765f";
static const char *EIP_DIGEST = "bc218268b018aecb5d4c5afd5feeb3b920f56eddf09bdf83df9d3de868e1cb95";
static const char *EIP_SIG = "7098ad865b00a582051940cb9cf36836572411a47278783077011599ed5cd16b"
                             "76f2635f4e234738f30813a89eb9137e3e3df5266e3a1f11df72ecf1145ccb9c";
static const char *EIP_PUB = "03ca634cae0d49acb401d8a4c6b6fe8c55b70d115bf400769cc1400f3258cd3138";
static const char *EIP_NODE_ID = "a448f24c6d18e575453db13171562b71999873db5b286df957af199ec94617f7";

static void eip778_signature(void **state) {
  (void)state;
  uint8_t secret[32], content[80], digest[32], want_sig[64], sig[64], pub[33], got_pub[33];
  testhex(EIP_SECRET, secret);
  size_t clen = testhex(EIP_CONTENT, content);
  testhex(EIP_DIGEST, digest);
  testhex(EIP_SIG, want_sig);
  testhex(EIP_PUB, pub);
  uint8_t d[32];
  ld_keccak256(content, clen, d);
  assert_memory_equal(d, digest, 32);
  assert_int_equal(ld_secp256k1_public(secret, got_pub), 0);
  assert_memory_equal(got_pub, pub, 33);
  /* RFC 6979 nonces reproduce the published signature exactly. */
  assert_int_equal(ld_secp256k1_sign_keccak(secret, content, clen, sig), 0);
  assert_memory_equal(sig, want_sig, 64);
  assert_int_equal(ld_secp256k1_verify_keccak(pub, 33, content, clen, want_sig), 0);
  content[5] ^= 1;
  assert_int_equal(ld_secp256k1_verify_keccak(pub, 33, content, clen, want_sig),
                   LD_ERR_BAD_SIGNATURE);
}

static void rejects_high_s_and_bad_input(void **state) {
  (void)state;
  uint8_t content[80], sig[64], pub[33];
  size_t clen = testhex(EIP_CONTENT, content);
  testhex(EIP_SIG, sig);
  testhex(EIP_PUB, pub);
  /* s' = n - s verifies mathematically but is the malleable high-S twin. */
  uint8_t n[32];
  testhex("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141", n);
  uint8_t high[64];
  memcpy(high, sig, 32);
  int borrow = 0;
  for (int i = 31; i >= 0; i--) {
    int v = n[i] - sig[32 + i] - borrow;
    borrow = v < 0;
    high[32 + i] = (uint8_t)(v + (borrow ? 256 : 0));
  }
  assert_int_equal(ld_secp256k1_verify_keccak(pub, 33, content, clen, high), LD_ERR_BAD_SIGNATURE);
  /* r = 0 and r ≥ n are not signatures. */
  uint8_t zero[64] = {0};
  assert_int_equal(ld_secp256k1_verify_keccak(pub, 33, content, clen, zero), LD_ERR_BAD_SIGNATURE);
  uint8_t big[64];
  memset(big, 0xff, sizeof big);
  assert_int_equal(ld_secp256k1_verify_keccak(pub, 33, content, clen, big), LD_ERR_BAD_SIGNATURE);
  /* Keys: wrong length, hybrid prefix, not on the curve. */
  assert_int_equal(ld_secp256k1_verify_keccak(pub, 32, content, clen, sig), LD_ERR_BAD_KEY);
  uint8_t hybrid[33];
  memcpy(hybrid, pub, 33);
  hybrid[0] = 0x06;
  assert_int_equal(ld_secp256k1_verify_keccak(hybrid, 33, content, clen, sig), LD_ERR_BAD_KEY);
  uint8_t off_curve[33] = {0x02};
  memset(off_curve + 1, 0xff, 32);
  assert_int_equal(ld_secp256k1_verify_keccak(off_curve, 33, content, clen, sig), LD_ERR_BAD_KEY);
  uint8_t zero_secret[32] = {0};
  assert_int_equal(ld_secp256k1_sign_keccak(zero_secret, content, clen, sig), LD_ERR_BAD_KEY);
}

static void node_id(void **state) {
  (void)state;
  uint8_t pub[33], want[32], got[32];
  testhex(EIP_PUB, pub);
  testhex(EIP_NODE_ID, want);
  assert_int_equal(ld_secp256k1_keccak_id(pub, 33, got), 0);
  assert_memory_equal(got, want, 32);
  /* The uncompressed form of the same key gives the same ID. */
  uint8_t full[65];
  testhex("04ca634cae0d49acb401d8a4c6b6fe8c55b70d115bf400769cc1400f3258cd3138"
          "7574077f301b421bc84df7266c44e9e6d569fc56be00812904767bf5ccd1fc7f",
          full);
  assert_int_equal(ld_secp256k1_keccak_id(full, 65, got), 0);
  assert_memory_equal(got, want, 32);
  assert_int_equal(ld_secp256k1_keccak_id(pub, 5, got), LD_ERR_BAD_KEY);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(published_vectors), cmocka_unit_test(not_sha3),
      cmocka_unit_test(rate_boundaries),   cmocka_unit_test(incremental_matches_one_shot),
      cmocka_unit_test(eip778_signature),  cmocka_unit_test(rejects_high_s_and_bad_input),
      cmocka_unit_test(node_id),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
