#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "testhex.h"

#define NOISE_PREFIX "noise-libp2p-static-key:"

typedef struct {
  const char *seed;
  const char *pub;
  const char *msg;
  const char *sig;
} vector_t;

static const vector_t vectors[] = {
    /* RFC 8032 §7.1 TEST 1 (empty message) */
    {"9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
     "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"},
    /* RFC 8032 §7.1 TEST 2 (one byte) */
    {"4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
     "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
     "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"},
    /* libp2p Ed25519 test key (peer-ids spec) signing the Noise static-key payload of the
     * initiator's static key 8f40c5ad…, as js @libp2p/crypto does. */
    {"7e0830617c4a7de83925dfb2694556b12936c477a0e1feb2e148ec9da60fee7d",
     "1ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d474fce27e",
     "6e6f6973652d6c69627032702d7374617469632d6b65793a"
     "8f40c5adb68f25624ae5b214ea767a6ec94d829d3d7b5e1ad1ba6f3e2138285f",
     "a0381ec5f8954ac607c1059e453ca7d6bf2456009e8b7c262b06a418f3685dfc"
     "951b443e04084e41bbc282b6387462059ee65bc28d5b286d804a25f5c0916507"},
    /* The same key in the libp2p Noise handshake vector: the responder's identity_sig over its
     * static key 07a37cbc…, taken from the responder payload. */
    {"7e0830617c4a7de83925dfb2694556b12936c477a0e1feb2e148ec9da60fee7d",
     "1ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d474fce27e",
     "6e6f6973652d6c69627032702d7374617469632d6b65793a"
     "07a37cbc142093c8b755dc1b10e86cb426374ad16aa853ed0bdfc0b2b86d1c7c",
     "e50bee9de7af956f6f42ff71195b76f47ea095d2f4c6a57cf588887bed31f783"
     "46151ce5458182eb7fae8111ad60cf76d4303391165284ff683988e1c7843304"},
};

typedef struct {
  uint8_t seed[LD_ED25519_SEED_LEN];
  uint8_t pub[LD_ED25519_PUBLIC_LEN];
  uint8_t msg[128];
  size_t msglen;
  uint8_t sig[LD_ED25519_SIG_LEN];
} loaded_t;

static void load(const vector_t *v, loaded_t *l) {
  testhex(v->seed, l->seed);
  testhex(v->pub, l->pub);
  l->msglen = testhex(v->msg, l->msg);
  testhex(v->sig, l->sig);
}

static void published_vectors_sign_and_verify(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
    loaded_t v;
    load(&vectors[i], &v);
    uint8_t pub[LD_ED25519_PUBLIC_LEN], secret[LD_ED25519_SECRET_LEN], sig[LD_ED25519_SIG_LEN];
    ld_ed25519_from_seed(v.seed, pub, secret);
    assert_memory_equal(pub, v.pub, sizeof pub);
    assert_memory_equal(secret, v.seed, LD_ED25519_SEED_LEN);
    assert_memory_equal(secret + LD_ED25519_SEED_LEN, v.pub, LD_ED25519_PUBLIC_LEN);
    ld_ed25519_sign(secret, v.msg, v.msglen, sig);
    assert_memory_equal(sig, v.sig, sizeof sig);
    assert_int_equal(ld_ed25519_verify(v.pub, v.msg, v.msglen, v.sig), 0);
  }
}

static void libp2p_private_key_layout(void **state) {
  (void)state;
  /* The peer-ids spec's Ed25519 PrivateKey Data is seed ‖ public, our secret layout. */
  uint8_t want[LD_ED25519_SECRET_LEN], pub[LD_ED25519_PUBLIC_LEN], secret[LD_ED25519_SECRET_LEN];
  testhex("7e0830617c4a7de83925dfb2694556b12936c477a0e1feb2e148ec9da60fee7d"
          "1ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d474fce27e",
          want);
  ld_ed25519_from_seed(want, pub, secret);
  assert_memory_equal(secret, want, sizeof want);
}

static void tampering_rejected(void **state) {
  (void)state;
  loaded_t v;
  load(&vectors[2], &v);
  uint8_t sig[LD_ED25519_SIG_LEN], pub[LD_ED25519_PUBLIC_LEN], msg[128];
  for (size_t i = 0; i < sizeof sig; i++) {
    memcpy(sig, v.sig, sizeof sig);
    sig[i] ^= 0x04;
    assert_int_equal(ld_ed25519_verify(v.pub, v.msg, v.msglen, sig), LD_ERR_BAD_SIGNATURE);
  }
  for (size_t i = 0; i < v.msglen; i++) {
    memcpy(msg, v.msg, v.msglen);
    msg[i] ^= 0x01;
    assert_int_equal(ld_ed25519_verify(v.pub, msg, v.msglen, v.sig), LD_ERR_BAD_SIGNATURE);
  }
  assert_int_equal(ld_ed25519_verify(v.pub, v.msg, v.msglen - 1, v.sig), LD_ERR_BAD_SIGNATURE);
  memcpy(pub, v.pub, sizeof pub);
  pub[0] ^= 0x01;
  assert_int_equal(ld_ed25519_verify(pub, v.msg, v.msglen, v.sig), LD_ERR_BAD_SIGNATURE);
  loaded_t other;
  load(&vectors[0], &other);
  assert_int_equal(ld_ed25519_verify(other.pub, v.msg, v.msglen, v.sig), LD_ERR_BAD_SIGNATURE);
}

static void generated_keys_round_trip(void **state) {
  (void)state;
  uint8_t pub[LD_ED25519_PUBLIC_LEN], secret[LD_ED25519_SECRET_LEN], sig[LD_ED25519_SIG_LEN];
  uint8_t pub2[LD_ED25519_PUBLIC_LEN], secret2[LD_ED25519_SECRET_LEN];
  ld_ed25519_generate(pub, secret);
  ld_ed25519_from_seed(secret, pub2, secret2);
  assert_memory_equal(pub2, pub, sizeof pub);
  assert_memory_equal(secret2, secret, sizeof secret);
  ld_ed25519_sign(secret, NOISE_PREFIX, strlen(NOISE_PREFIX), sig);
  assert_int_equal(ld_ed25519_verify(pub, NOISE_PREFIX, strlen(NOISE_PREFIX), sig), 0);
  ld_ed25519_generate(pub2, secret2);
  assert_memory_not_equal(pub2, pub, sizeof pub);
  assert_int_equal(ld_ed25519_verify(pub2, NOISE_PREFIX, strlen(NOISE_PREFIX), sig),
                   LD_ERR_BAD_SIGNATURE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(published_vectors_sign_and_verify),
      cmocka_unit_test(libp2p_private_key_layout),
      cmocka_unit_test(tampering_rejected),
      cmocka_unit_test(generated_keys_round_trip),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
