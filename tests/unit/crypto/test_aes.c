/* AES-128-CTR (NIST SP 800-38A F.5.1), AES-128-GCM (the GCM specification's test cases 2 and 4)
 * and HKDF-SHA256 (RFC 5869 A.1 and A.3). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "testhex.h"

static void ctr_sp800_38a(void **state) {
  (void)state;
  uint8_t key[16], iv[16], pt[64], ct[64], out[64];
  testhex("2b7e151628aed2a6abf7158809cf4f3c", key);
  testhex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", iv);
  testhex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
          "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
          pt);
  testhex("874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff"
          "5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee",
          ct);
  ld_aes128_ctr(key, iv, pt, sizeof pt, out);
  assert_memory_equal(out, ct, sizeof ct);
  /* In place, and decryption is the same operation. */
  ld_aes128_ctr(key, iv, out, sizeof out, out);
  assert_memory_equal(out, pt, sizeof pt);
  /* A prefix gives the keystream's prefix: the engine unmasks a header in two parts. */
  ld_aes128_ctr(key, iv, pt, 23, out);
  assert_memory_equal(out, ct, 23);
}

static void gcm_zero_key(void **state) {
  (void)state;
  uint8_t key[16] = {0}, nonce[12] = {0}, pt[16] = {0}, want[32], out[32], back[16];
  testhex("0388dace60b6a392f328c2b971b2fe78ab6e47d42cec13bdf53a67b21257bddf", want);
  ld_aes128_gcm_encrypt(key, nonce, NULL, 0, pt, sizeof pt, out);
  assert_memory_equal(out, want, sizeof want);
  assert_int_equal(ld_aes128_gcm_decrypt(key, nonce, NULL, 0, out, sizeof out, back), 0);
  assert_memory_equal(back, pt, sizeof pt);
}

static void gcm_with_ad(void **state) {
  (void)state;
  uint8_t key[16], nonce[12], ad[20], pt[60], want[76], out[76], back[60];
  testhex("feffe9928665731c6d6a8f9467308308", key);
  testhex("cafebabefacedbaddecaf888", nonce);
  testhex("feedfacedeadbeeffeedfacedeadbeefabaddad2", ad);
  testhex("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
          "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
          pt);
  testhex("42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
          "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091"
          "5bc94fbc3221a5db94fae95ae7121a47",
          want);
  ld_aes128_gcm_encrypt(key, nonce, ad, sizeof ad, pt, sizeof pt, out);
  assert_memory_equal(out, want, sizeof want);
  assert_int_equal(ld_aes128_gcm_decrypt(key, nonce, ad, sizeof ad, out, sizeof out, back), 0);
  assert_memory_equal(back, pt, sizeof pt);
  /* A flipped bit anywhere (text, tag, additional data) fails and releases nothing. */
  out[3] ^= 1;
  memset(back, 0xaa, sizeof back);
  assert_int_equal(ld_aes128_gcm_decrypt(key, nonce, ad, sizeof ad, out, sizeof out, back),
                   LD_ERR_DECRYPT);
  for (size_t i = 0; i < sizeof back; i++)
    assert_int_equal(back[i], 0);
  out[3] ^= 1;
  out[75] ^= 0x80;
  assert_int_equal(ld_aes128_gcm_decrypt(key, nonce, ad, sizeof ad, out, sizeof out, back),
                   LD_ERR_DECRYPT);
  out[75] ^= 0x80;
  ad[0] ^= 1;
  assert_int_equal(ld_aes128_gcm_decrypt(key, nonce, ad, sizeof ad, out, sizeof out, back),
                   LD_ERR_DECRYPT);
  ad[0] ^= 1;
  assert_int_equal(ld_aes128_gcm_decrypt(key, nonce, ad, sizeof ad, out, 15, back), LD_ERR_DECRYPT);
  /* In place. */
  assert_int_equal(ld_aes128_gcm_decrypt(key, nonce, ad, sizeof ad, out, sizeof out, out), 0);
  assert_memory_equal(out, pt, sizeof pt);
}

static void hkdf_rfc5869(void **state) {
  (void)state;
  uint8_t ikm[22], salt[13], info[10], want[42], out[42];
  memset(ikm, 0x0b, sizeof ikm);
  testhex("000102030405060708090a0b0c", salt);
  testhex("f0f1f2f3f4f5f6f7f8f9", info);
  testhex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"
          "34007208d5b887185865",
          want);
  assert_int_equal(
      ld_hkdf_sha256(salt, sizeof salt, ikm, sizeof ikm, info, sizeof info, out, sizeof out), 0);
  assert_memory_equal(out, want, sizeof want);
  /* A.3: no salt, no info. */
  testhex("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d"
          "9d201395faa4b61a96c8",
          want);
  assert_int_equal(ld_hkdf_sha256(NULL, 0, ikm, sizeof ikm, NULL, 0, out, sizeof out), 0);
  assert_memory_equal(out, want, sizeof want);
  assert_int_equal(ld_hkdf_sha256(NULL, 0, ikm, sizeof ikm, NULL, 0, out, 0), LD_ERR_INVALID_ARG);
}

static void secp256k1_digest_signatures(void **state) {
  (void)state;
  uint8_t secret[32], pub[33], digest[32], sig[64];
  ld_secp256k1_generate(secret);
  assert_int_equal(ld_secp256k1_public(secret, pub), 0);
  ld_sha256("discv5", 6, digest);
  assert_int_equal(ld_secp256k1_sign_digest(secret, digest, sig), 0);
  assert_int_equal(ld_secp256k1_verify_digest(pub, sizeof pub, digest, sig), 0);
  digest[0] ^= 1;
  assert_int_equal(ld_secp256k1_verify_digest(pub, sizeof pub, digest, sig), LD_ERR_BAD_SIGNATURE);
  digest[0] ^= 1;
  /* The same signature with s replaced by n − s (high S) is refused. */
  static const uint8_t n[32] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                0xff, 0xff, 0xff, 0xff, 0xfe, 0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48,
                                0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c, 0xd0, 0x36, 0x41, 0x41};
  uint8_t high[64];
  memcpy(high, sig, 32);
  int borrow = 0;
  for (int i = 31; i >= 0; i--) {
    int v = n[i] - sig[32 + i] - borrow;
    borrow = v < 0;
    high[32 + i] = (uint8_t)(v + (borrow ? 256 : 0));
  }
  assert_int_equal(ld_secp256k1_verify_digest(pub, sizeof pub, digest, high), LD_ERR_BAD_SIGNATURE);
  uint8_t bad_pub[33] = {0x05};
  assert_int_equal(ld_secp256k1_verify_digest(bad_pub, sizeof bad_pub, digest, sig),
                   LD_ERR_BAD_KEY);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ctr_sp800_38a),
      cmocka_unit_test(gcm_zero_key),
      cmocka_unit_test(gcm_with_ad),
      cmocka_unit_test(hkdf_rfc5869),
      cmocka_unit_test(secp256k1_digest_signatures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
