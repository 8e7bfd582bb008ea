#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "base/hex.h"
#include "p2p/key.h"

/* libp2p/specs peer-ids test vectors (protobuf encodings). */
#define ED25519_PRIV                                                                               \
  "080112407e0830617c4a7de83925dfb2694556b12936c477a0e1feb2e148ec9da60fee7d1ed1e8fae2c4a144b8be8f" \
  "d4b47bf3d3b34b871c3cacf6010f0e42d474fce27e"
#define ED25519_PUB "080112201ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d474fce27e"
#define SECP_PRIV "0802122053DADF1D5A164D6B4ACDB15E24AA4C5B1D3461BDBD42ABEDB0A4404D56CED8FB"
#define SECP_PUB "08021221037777e994e452c21604f91de093ce415f5432f701dd8cd1a7a6fea0e630bfca99"
#define SECP_UNCOMPRESSED                                                                          \
  "047777e994e452c21604f91de093ce415f5432f701dd8cd1a7a6fea0e630bfca991b41b30efa52b659e9db235c31f9" \
  "975578a17e2b356a6b84837b5b45c555cfb1"
#define ECDSA_PRIV                                                                                 \
  "08031279307702010104203E5B1FE9712E6C314942A750BD67485DE3C1EFE85B1BFB520AE8F9AE3DFA4A4CA00A0608" \
  "2A8648CE3D030107A14403420004DE3D300FA36AE0E8F5D530899D83ABAB44ABF3161F162A4BC901D8E6ECDA020E8B" \
  "6D5F8DA30525E71D6851510C098E5C47C646A597FB4DCEC034E9F77C409E62"
#define ECDSA_PUB                                                                                  \
  "0803125b3059301306072a8648ce3d020106082a8648ce3d03010703420004de3d300fa36ae0e8f5d530899d83abab" \
  "44abf3161f162a4bc901d8e6ecda020e8b6d5f8da30525e71d6851510c098e5c47c646a597fb4dcec034e9f77c409e" \
  "62"
/* An RSA-2048 PublicKey as printed by go-ipfs `ipfs id` (peer QmUk11oukR2Fp8TSX1RLQZAivyo96Jvyd…).
 */
#define RSA_PUB                                                                                    \
  "080012a60230820122300d06092a864886f70d01010105000382010f003082010a0282010100e3207c194068956d34" \
  "2c36022fd2bda927c19bcd98b309e206ff3a98335a80c1361c6df594d8b6b92210c79ab92017aca1ee0acd5ed93e6b" \
  "cab2a53347c33bb3ff7463cdcf999fd4c336e3986a95fc1ae136163fb56b254a160e2219f0aea4fbc6719685b92ead" \
  "7210d56863f0d03bb24d4aee9bb36564e5f893c81a28cc9f6089aa0c9d150bafd64693128eedd84ad7e18c7375fabf" \
  "ca6d1fbef0e89650690bcec500ebd0a472a7782c0233df21930b4c0a223e484d8da1cebfda9f61b5afb6878cbeaa8a" \
  "ab074f358614c75de522057e65a5ebd901dfe139e87f835266e0ca95b6e68da8f9a4279b7cbacd248e8d4539d00485" \
  "0affbc0f4c126a5df152076f0203010001"

/* go-libp2p core/crypto/test_data: secp256k1 key, message and deterministic signature. */
#define GO_SECP_PRIV "080212203141bd606a504c44f23494d8f3174ef25b1fb9b52daa07d058be83b6e046b158"
#define GO_SECP_PUB "08021221023540ad842af8a43551a94d8383a555a99226506b88f953d2e70316a3a1b3d6a2"
#define GO_SECP_SIG                                                                                \
  "3044022031a7d633c2f3e45a16128d43751afaa8dc9ba24092c5f5b3cad2c8fe4cf388f2022049ea8d219f458683d2" \
  "4775d543ea8fb290704347fb35493c403bc2c259b29d9e"

/* Signatures over "noise-libp2p-static-key:" ‖ NOISE_STATIC by the spec's test keys. */
#define NOISE_STATIC "8f40c5adb68f25624ae5b214ea767a6ec94d829d3d7b5e1ad1ba6f3e2138285f"
#define NOISE_SIG_ED25519                                                                          \
  "a0381ec5f8954ac607c1059e453ca7d6bf2456009e8b7c262b06a418f3685dfc951b443e04084e41bbc282b6387462" \
  "059ee65bc28d5b286d804a25f5c0916507"
#define NOISE_SIG_SECP                                                                             \
  "3045022100a0fdecadd695ef4ddd425c0e9f7a55d18d145bf61e88ed920e0a2c99665f17a002204b7c7c57b6b3a640" \
  "ceaef2e77c66b8d468574cd6b611ad396fd0b741f2bb19eb"

typedef struct {
  uint8_t b[1200];
  size_t n;
} bytes_t;

static bytes_t hex(const char *text) {
  bytes_t out;
  assert_int_equal(ld_hex_decode(text, strlen(text), out.b, sizeof out.b, &out.n), 0);
  return out;
}

static void decode_pub(ld_pubkey_t *pub, const char *text) {
  bytes_t b = hex(text);
  assert_int_equal(ld_pubkey_decode(pub, b.b, b.n), 0);
}

static void decode_priv(ld_privkey_t *key, const char *text) {
  bytes_t b = hex(text);
  assert_int_equal(ld_privkey_decode(key, b.b, b.n), 0);
}

static void assert_pub_proto(const ld_pubkey_t *pub, const char *text) {
  bytes_t b = hex(text);
  assert_int_equal(pub->proto_len, b.n);
  assert_memory_equal(pub->proto, b.b, b.n);
}

static void assert_privkey_encodes_to(const ld_privkey_t *key, const char *text) {
  bytes_t b = hex(text);
  ld_buf_t out;
  ld_buf_init(&out);
  assert_int_equal(ld_privkey_encode(key, &out), 0);
  assert_int_equal(out.len, b.n);
  assert_memory_equal(out.data, b.b, b.n);
  ld_buf_clear(&out);
}

static void ed25519_private_vector_round_trips(void **state) {
  (void)state;
  ld_privkey_t key;
  ld_pubkey_t pub;
  decode_priv(&key, ED25519_PRIV);
  assert_int_equal(key.type, LD_KEY_ED25519);
  ld_privkey_public(&key, &pub);
  assert_int_equal(pub.type, LD_KEY_ED25519);
  assert_int_equal(pub.data_len, 32);
  assert_pub_proto(&pub, ED25519_PUB);
  assert_privkey_encodes_to(&key, ED25519_PRIV);
}

static void secp256k1_private_vector_round_trips(void **state) {
  (void)state;
  ld_privkey_t key;
  ld_pubkey_t pub;
  decode_priv(&key, SECP_PRIV);
  assert_int_equal(key.type, LD_KEY_SECP256K1);
  ld_privkey_public(&key, &pub);
  assert_int_equal(pub.type, LD_KEY_SECP256K1);
  assert_int_equal(pub.data_len, 33);
  assert_pub_proto(&pub, SECP_PUB);
  assert_privkey_encodes_to(&key, SECP_PRIV);

  ld_privkey_t direct;
  bytes_t b = hex(SECP_PRIV);
  assert_int_equal(ld_privkey_from_secp256k1(&direct, b.b + 4), 0);
  assert_memory_equal(direct.pub, key.pub, 33);
}

static void public_vectors_decode_canonically(void **state) {
  (void)state;
  static const struct {
    const char *hex;
    ld_key_type_t type;
    size_t data_len;
  } cases[] = {
      {ED25519_PUB, LD_KEY_ED25519, 32},
      {SECP_PUB, LD_KEY_SECP256K1, 33},
      {ECDSA_PUB, LD_KEY_ECDSA, 91},
      {RSA_PUB, LD_KEY_RSA, 294},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ld_pubkey_t pub;
    decode_pub(&pub, cases[i].hex);
    assert_int_equal(pub.type, cases[i].type);
    assert_int_equal(pub.data_len, cases[i].data_len);
    assert_pub_proto(&pub, cases[i].hex);
    bytes_t b = hex(cases[i].hex);
    assert_memory_equal(ld_pubkey_data(&pub), b.b + (b.n - cases[i].data_len), cases[i].data_len);
  }
}

static void uncompressed_secp256k1_is_reencoded_compressed(void **state) {
  (void)state;
  bytes_t point = hex(SECP_UNCOMPRESSED);
  uint8_t proto[80] = {0x08, 0x02, 0x12, 65};
  memcpy(proto + 4, point.b, point.n);
  ld_pubkey_t pub, compressed;
  assert_int_equal(ld_pubkey_decode(&pub, proto, 4 + point.n), 0);
  assert_int_equal(pub.data_len, 33);
  assert_pub_proto(&pub, SECP_PUB);
  decode_pub(&compressed, SECP_PUB);
  assert_true(ld_pubkey_equal(&pub, &compressed));
  proto[4] = 0x07; /* hybrid encoding of the same point */
  assert_int_equal(ld_pubkey_decode(&pub, proto, 4 + point.n), LD_ERR_BAD_KEY);
}

static void reordered_or_extended_fields_reencode_canonically(void **state) {
  (void)state;
  bytes_t canon = hex(ED25519_PUB);
  uint8_t swapped[64];
  memcpy(swapped, canon.b + 2, canon.n - 2); /* 12 20 <key> */
  memcpy(swapped + canon.n - 2, canon.b, 2); /* 08 01 */
  ld_pubkey_t pub;
  assert_int_equal(ld_pubkey_decode(&pub, swapped, canon.n), 0);
  assert_pub_proto(&pub, ED25519_PUB);

  uint8_t extra[64];
  memcpy(extra, canon.b, canon.n);
  extra[canon.n] = 0x18; /* field 3, varint */
  extra[canon.n + 1] = 0x05;
  assert_int_equal(ld_pubkey_decode(&pub, extra, canon.n + 2), 0);
  assert_pub_proto(&pub, ED25519_PUB);
}

static void malformed_public_keys_are_rejected(void **state) {
  (void)state;
  static const struct {
    const char *hex;
    int err;
  } cases[] = {
      {"", LD_ERR_BAD_PROTOBUF},
      {"0801", LD_ERR_BAD_PROTOBUF}, /* no Data */
      {"12201ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d474fce27e",
       LD_ERR_BAD_PROTOBUF}, /* no Type */
      {"080112201ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d4", LD_ERR_BAD_PROTOBUF},
      {"080412201ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d474fce27e",
       LD_ERR_BAD_KEY}, /* unknown type */
      {"0801121f1ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d474fce2",
       LD_ERR_BAD_KEY}, /* 31-byte Ed25519 */
      {"08021220037777e994e452c21604f91de093ce415f5432f701dd8cd1a7a6fea0e630bfca",
       LD_ERR_BAD_KEY}, /* 32-byte secp256k1 */
      {"08021221057777e994e452c21604f91de093ce415f5432f701dd8cd1a7a6fea0e630bfca99",
       LD_ERR_BAD_KEY},                     /* bad SEC1 prefix */
      {"08031203010203", LD_ERR_BAD_KEY},   /* ECDSA Data is not a DER SEQUENCE */
      {"08001204300300aa", LD_ERR_BAD_KEY}, /* RSA DER length disagrees with Data */
      {"08001200", LD_ERR_BAD_KEY},         /* empty RSA key */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    bytes_t b = hex(cases[i].hex);
    ld_pubkey_t pub;
    assert_int_equal(ld_pubkey_decode(&pub, b.b, b.n), cases[i].err);
  }
  uint8_t big[LD_PUBKEY_PROTO_MAX + 1] = {0};
  ld_pubkey_t pub;
  assert_int_equal(ld_pubkey_decode(&pub, big, sizeof big), LD_ERR_TOO_LARGE);
}

static void private_key_forms_and_errors(void **state) {
  (void)state;
  bytes_t priv = hex(ED25519_PRIV);
  uint8_t legacy[100] = {0x08, 0x01, 0x12, 96};
  memcpy(legacy + 4, priv.b + 4, 64);
  memcpy(legacy + 68, priv.b + 36, 32);
  ld_privkey_t key, ref;
  decode_priv(&ref, ED25519_PRIV);
  assert_int_equal(ld_privkey_decode(&key, legacy, sizeof legacy), 0);
  assert_memory_equal(key.secret, ref.secret, 64);
  assert_memory_equal(key.pub, ref.pub, 32);

  legacy[99] ^= 1; /* the two public copies differ */
  assert_int_equal(ld_privkey_decode(&key, legacy, sizeof legacy), LD_ERR_BAD_KEY);
  priv.b[priv.n - 1] ^= 1; /* the public half does not belong to the seed */
  assert_int_equal(ld_privkey_decode(&key, priv.b, priv.n), LD_ERR_BAD_KEY);

  bytes_t ecdsa = hex(ECDSA_PRIV);
  assert_int_equal(ld_privkey_decode(&key, ecdsa.b, ecdsa.n), LD_ERR_UNSUPPORTED);
  bytes_t zero = hex("080212200000000000000000000000000000000000000000000000000000000000000000");
  assert_int_equal(ld_privkey_decode(&key, zero.b, zero.n), LD_ERR_BAD_KEY);
  bytes_t shortk = hex("0802121f53DADF1D5A164D6B4ACDB15E24AA4C5B1D3461BDBD42ABEDB0A4404D56CED8");
  assert_int_equal(ld_privkey_decode(&key, shortk.b, shortk.n), LD_ERR_BAD_KEY);
  bytes_t notype = hex("122053DADF1D5A164D6B4ACDB15E24AA4C5B1D3461BDBD42ABEDB0A4404D56CED8FB");
  assert_int_equal(ld_privkey_decode(&key, notype.b, notype.n), LD_ERR_BAD_PROTOBUF);
  uint8_t order[32];
  memset(order, 0xff, sizeof order); /* above the group order */
  assert_int_equal(ld_privkey_from_secp256k1(&key, order), LD_ERR_BAD_KEY);
}

static void assert_signature(const char *priv, const void *msg, size_t len, const char *sig) {
  ld_privkey_t key;
  ld_pubkey_t pub;
  decode_priv(&key, priv);
  ld_privkey_public(&key, &pub);
  uint8_t out[LD_SIG_MAX];
  size_t outlen = 0;
  assert_int_equal(ld_privkey_sign(&key, msg, len, out, &outlen), 0);
  bytes_t want = hex(sig);
  assert_int_equal(outlen, want.n);
  assert_memory_equal(out, want.b, want.n);
  assert_int_equal(ld_pubkey_verify(&pub, msg, len, want.b, want.n), 0);
  want.b[want.n - 1] ^= 0x01;
  assert_int_equal(ld_pubkey_verify(&pub, msg, len, want.b, want.n), LD_ERR_BAD_SIGNATURE);
  assert_int_equal(ld_pubkey_verify(&pub, "other", 5, out, outlen), LD_ERR_BAD_SIGNATURE);
}

static void go_secp256k1_signature_vector(void **state) {
  (void)state;
  const char *msg = "Libp2p is the _best_!";
  assert_signature(GO_SECP_PRIV, msg, strlen(msg), GO_SECP_SIG);
  ld_pubkey_t pub;
  decode_pub(&pub, GO_SECP_PUB);
  bytes_t sig = hex(GO_SECP_SIG);
  assert_int_equal(ld_pubkey_verify(&pub, msg, strlen(msg), sig.b, sig.n), 0);
}

static void noise_static_key_signature_vectors(void **state) {
  (void)state;
  const char *prefix = "noise-libp2p-static-key:";
  uint8_t msg[64];
  size_t plen = strlen(prefix), n;
  memcpy(msg, prefix, plen);
  assert_int_equal(ld_hex_decode(NOISE_STATIC, 64, msg + plen, 32, &n), 0);
  assert_signature(ED25519_PRIV, msg, plen + 32, NOISE_SIG_ED25519);
  assert_signature(SECP_PRIV, msg, plen + 32, NOISE_SIG_SECP);
}

static void rsa_and_ecdsa_verification_is_unsupported(void **state) {
  (void)state;
  ld_pubkey_t pub;
  bytes_t sig = hex(NOISE_SIG_SECP);
  decode_pub(&pub, ECDSA_PUB);
  assert_int_equal(ld_pubkey_verify(&pub, "m", 1, sig.b, sig.n), LD_ERR_UNSUPPORTED);
  decode_pub(&pub, RSA_PUB);
  assert_int_equal(ld_pubkey_verify(&pub, "m", 1, sig.b, sig.n), LD_ERR_UNSUPPORTED);
}

static void ed25519_signature_length_is_checked(void **state) {
  (void)state;
  ld_pubkey_t pub;
  decode_pub(&pub, ED25519_PUB);
  bytes_t sig = hex(NOISE_SIG_ED25519);
  assert_int_equal(ld_pubkey_verify(&pub, "m", 1, sig.b, 63), LD_ERR_BAD_SIGNATURE);
  assert_int_equal(ld_pubkey_verify(&pub, "m", 1, NULL, 0), LD_ERR_BAD_SIGNATURE);
}

static void generated_keys_sign_and_verify(void **state) {
  (void)state;
  const ld_key_type_t types[] = {LD_KEY_SECP256K1, LD_KEY_ED25519};
  for (size_t i = 0; i < 2; i++) {
    ld_privkey_t key, again;
    ld_pubkey_t pub, pub2;
    assert_int_equal(ld_privkey_generate(&key, types[i]), 0);
    ld_privkey_public(&key, &pub);
    uint8_t sig[LD_SIG_MAX];
    size_t siglen;
    assert_int_equal(ld_privkey_sign(&key, "hello", 5, sig, &siglen), 0);
    assert_int_equal(ld_pubkey_verify(&pub, "hello", 5, sig, siglen), 0);

    ld_buf_t enc;
    ld_buf_init(&enc);
    assert_int_equal(ld_privkey_encode(&key, &enc), 0);
    assert_int_equal(ld_privkey_decode(&again, enc.data, enc.len), 0);
    ld_buf_clear(&enc);
    ld_privkey_public(&again, &pub2);
    assert_true(ld_pubkey_equal(&pub, &pub2));
  }
  ld_privkey_t key;
  assert_int_equal(ld_privkey_generate(&key, LD_KEY_RSA), LD_ERR_UNSUPPORTED);
  ld_pubkey_t a, b;
  decode_pub(&a, ED25519_PUB);
  decode_pub(&b, SECP_PUB);
  assert_false(ld_pubkey_equal(&a, &b));
}

static void ed25519_seed_constructor_matches_vector(void **state) {
  (void)state;
  bytes_t priv = hex(ED25519_PRIV);
  ld_privkey_t key;
  ld_pubkey_t pub;
  assert_int_equal(ld_privkey_from_ed25519_seed(&key, priv.b + 4), 0);
  ld_privkey_public(&key, &pub);
  assert_pub_proto(&pub, ED25519_PUB);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ed25519_private_vector_round_trips),
      cmocka_unit_test(secp256k1_private_vector_round_trips),
      cmocka_unit_test(public_vectors_decode_canonically),
      cmocka_unit_test(uncompressed_secp256k1_is_reencoded_compressed),
      cmocka_unit_test(reordered_or_extended_fields_reencode_canonically),
      cmocka_unit_test(malformed_public_keys_are_rejected),
      cmocka_unit_test(private_key_forms_and_errors),
      cmocka_unit_test(go_secp256k1_signature_vector),
      cmocka_unit_test(noise_static_key_signature_vectors),
      cmocka_unit_test(rsa_and_ecdsa_verification_is_unsupported),
      cmocka_unit_test(ed25519_signature_length_is_checked),
      cmocka_unit_test(generated_keys_sign_and_verify),
      cmocka_unit_test(ed25519_seed_constructor_matches_vector),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
