/* nwaku's RLN keystore: a keystore nwaku wrote (the vector js-waku's keystore tests carry,
 * password "sup3rsecure"), the credential key, wrong passwords, our own files read back, and
 * refusals of keyfiles beyond the caps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/error.h"
#include "waku/rln/keystore.h"
#include "zk/rln.h"

/* Two of the four credentials of js-waku's NWAKU_KEYSTORE (packages/rln keystore.spec.ts). */
static const char k_nwaku_keystore[] =
    "{\"application\":\"waku-rln-relay\",\"appIdentifier\":\"01234567890abcdef\",\"version\":\"0."
    "2\",\"crede"
    "ntials\":{\"9DB2B4718A97485B9F70F68D1CC19F4E10F0B4CE943418838E94956CB8E57548\":{\"crypto\":{"
    "\"ci"
    "pher\":\"aes-128-ctr\",\"cipherparams\":{\"iv\":\"fd6b39eb71d44c59f6bf5ff3d8945c80\"},"
    "\"ciphertext\":"
    "\"9c72f47ce95de03ed34502d0288e7576b66b51b9e7d5ae882c27bd89f94e6a03c2c44c2ddf0c982e72003d672"
    "12105f1b64614f57cabb0ceadab7e07be165eee1121ad6b81951368a9f3be2dd99ea294515f6013d5f2bd4702a"
    "40e36cfde2ea298b23b31e5ce719d8040c3331f73d6bf44f88bca39bac0e917d8bf545500e4f40d321c235426a"
    "80f315ac70666acbd3bdf803fbc1e7e7103fed466525ed332b25d72b2dbedf6fa383b2305987c1fe276b029570"
    "519b3e79930edf08c1029868d05c2c08ab61d7c64f63c054b4f6a5a12d43cdc79751b6fe58d3ed26b69443eb7c"
    "9f7efce27912340129c91b6b813ac94efd5776a40b1dda896d61357de208c7c47a14af911cc231355c8093ee66"
    "26e89c07e1037f9e0b22c690e3e049014399ca0212c509cb04c71c7860d1b17a0c47711c490c27bad282592614"
    "8a1f15a507f36ba2cdaa04897fce2914e53caed0beaf1bebd2a83af76511cc15bff2165ff0860ad6eca1f30022"
    "d7739b2a6b6a72f2feeef0f5941183cda015b4631469e1f4cf27003cab9a90920301cb30d95e4554686922dc5a"
    "05c13dfb575cdf113c700d607896011970e6ee7d6edb61210ab28ac8f0c84c606c097e3e300f0a5f5341edfd15"
    "432bef6225a498726b62a98283829ad51023b2987f30686cfb4ea3951f3957654035ec291f9b0964a3a8665d81"
    "b16cec20fb40f944d5f9bf03ac1e444ad45bae3fa85e7465ce620c0966d8148d6e2856f676c4fbbe3ebe470453"
    "efb4bbda1866680037917e37765f680e3da96ef3991f3fe5cda80c523996c2234758bf5f7b6d052dc6942f5a92"
    "c8b8eec5d2d8940203bbb6b1cba7b7ebc1334334ca69cdb509a5ea58ec6b2ebaea52307589eaae9430eb15ad23"
    "4c0c39c83accdf3b77e52a616e345209c5bc9b442f9f0fa96836d9342f983a7\",\"kdf\":\"pbkdf2\","
    "\"kdfparams"
    "\":{\"dklen\":32,\"c\":1000000,\"prf\":\"hmac-sha256\",\"salt\":"
    "\"60f0aa92fbf63a8356dfdbed2ab18058\"},\""
    "mac\":\"51a227ac6db7f2797c63925880b3db664e034231a4c68daa919ab42d8df38bc6\"}},\"263335559F0578F"
    "D785F9CDFEDBB45CFF276799A27580B8F580CDFDCB990257C\":{\"crypto\":{\"cipher\":\"aes-128-ctr\","
    "\"ciph"
    "erparams\":{\"iv\":\"69f95461f811ac35a21987b1fdaa605e\"},\"ciphertext\":"
    "\"edfe844f8e2aedd62f26753e"
    "7247554920352b6b167f54ea4f728cd715577e9d2b7192b782471914870794205e77c2708b6db2d0ada19fec6b"
    "3533098cb2b7350bbaf81526d6bde7f1d0e83c366e3a2ddcced942cfb09a3c7704db7041132c3b511fed2f6d85"
    "99e6cddf649250b240687c2c335bf0aa75c892bc97f81c537898aefed20d1488e816d54eec72572acf36f140dc"
    "98cba0430cdeb8a00b8e8c8edf9b1292ca0e9c9a606acec51ea3dbe46438cb74b95d708cec18f8f126aecabbff"
    "11dd068d9194b25803f959f0bb62d49785dbc694486754f46bfe084cfa780cae27eca48cdcc88f4083d166d174"
    "7b8e2e637619e5d3848b9b6cdf7c7161eda8e476edfc083d417691d47b84fb224bfd26bf7713958893b934388e"
    "50783e49c5c84999971538ccda14c54b48b0d4aa37503e2a40212e9a1407d5a1ea4e96760de3d87e1b2287465a"
    "4e51cf330b7f1d14e3f2fb6521d10d32c798856464927b1e0286086a78f07a8f6f436d8c0c7b530f585320515e"
    "276d82c7b1f244702fa9ca6e6ad164fd2b1d9badcbdc17e01e95abf58e6825d8eeba5bc22db3a66dd41c64887d"
    "4c862298e921b3bae17d9fb7be1f619c60c82bd60dee351b77514d36e25d4092d6cde8ab613c40a117f7b784c8"
    "0d65310e5b9cf1a31ba555f848e6984cc0c2d48315167d60131f3ffaaca5c81e359134bbfc81fa217f29b53386"
    "8604ced4a2c5da8c89bd1238147b9f348168864ebea40c36a6abbf3d59d43086f26777104ce0a9f60cbf350058"
    "a337bc66abd5e4976950e5908192f98a9a8c1913abbc0d918479aeaa99e89a0e5cd65fd84a347d73df1d9c8298"
    "63728a6fcd90150e52ecdec48bd07802110384f6c0aff0ca05ad42feb521223b58719fd4fc4ae88df8225ea58e"
    "303e4c61e8288e80f854bf0b\",\"kdf\":\"pbkdf2\",\"kdfparams\":{\"dklen\":32,\"c\":1000000,"
    "\"prf\":\"hmac-s"
    "ha256\",\"salt\":\"3cf796e4857f296bef3bdb9ca844b1bf\"},\"mac\":"
    "\"3d6cb0492afcf89c891365f097ae8989d"
    "c50038010c419b18228be6816c24c32\"}}}}";

#define VECTOR_KEY "9DB2B4718A97485B9F70F68D1CC19F4E10F0B4CE943418838E94956CB8E57548"
#define VECTOR_ADDRESS "0x8e1F3742B987d8BA376c0CBbD7357fE1F003ED71"

static const uint8_t k_trapdoor[32] = {211, 23,  66,  42,  179, 130, 131, 111, 201, 205, 244,
                                       34,  27,  238, 244, 216, 131, 240, 188, 45,  193, 172,
                                       4,   168, 225, 225, 43,  197, 114, 176, 126, 9};
static const uint8_t k_commitment[32] = {112, 216, 27,  89,  188, 135, 203, 19,  168, 211, 117,
                                         13,  231, 135, 229, 58,  94,  20,  246, 8,   33,  65,
                                         238, 37,  112, 97,  65,  241, 255, 93,  171, 15};

static json_t *vector(void) {
  json_t *ks = json_loads(k_nwaku_keystore, 0, NULL);
  assert_non_null(ks);
  assert_true(ld_rln_keystore_detect(ks));
  return ks;
}

static void key_is_nwaku_hash(void **state) {
  (void)state;
  char key[65];
  ld_rln_keystore_key("0xAA36A7", VECTOR_ADDRESS, 8, key);
  assert_string_equal(key, VECTOR_KEY);
}

static void opens_nwaku_keystore(void **state) {
  (void)state;
  json_t *ks = vector();
  ld_rln_keystore_query_t q = {"0xAA36A7", VECTOR_ADDRESS, 8};
  ld_rln_credential_t c;
  char err[256] = "";
  assert_int_equal(ld_rln_keystore_open(ks, "sup3rsecure", &q, &c, err, sizeof err), 0);
  assert_memory_equal(c.id_trapdoor, k_trapdoor, 32);
  assert_memory_equal(c.id_commitment, k_commitment, 32);
  assert_int_equal(c.tree_index, 8);
  assert_int_equal(c.user_message_limit, 0);
  assert_string_equal(c.chain_id, "0xAA36A7");
  assert_string_equal(c.contract_address, VECTOR_ADDRESS);
  /* the other credential is picked by its own key */
  q.contract_address = "0xF471d71E9b1455bBF4b85d475afb9BB0954A29c4";
  q.tree_index = 1;
  assert_int_equal(ld_rln_keystore_open(ks, "sup3rsecure", &q, &c, err, sizeof err), 0);
  assert_int_equal(c.tree_index, 1);
  json_decref(ks);
}

static void wrong_password_and_query(void **state) {
  (void)state;
  json_t *ks = vector();
  ld_rln_keystore_query_t q = {"0xAA36A7", VECTOR_ADDRESS, 8};
  ld_rln_credential_t c;
  char err[256] = "";
  assert_int_equal(ld_rln_keystore_open(ks, "wrong-password", &q, &c, err, sizeof err),
                   LD_ERR_DECRYPT);
  assert_non_null(strstr(err, "wrong password"));
  q.tree_index = 9; /* two credentials: the query must name one */
  assert_int_equal(ld_rln_keystore_open(ks, "sup3rsecure", &q, &c, err, sizeof err),
                   LD_ERR_NOT_FOUND);
  json_object_set_new(ks, "application", json_string("other"));
  assert_int_equal(ld_rln_keystore_open(ks, "sup3rsecure", &q, &c, err, sizeof err),
                   LD_ERR_MALFORMED);
  assert_non_null(strstr(err, "application"));
  json_decref(ks);
}

static void make_credential(ld_rln_credential_t *c, uint64_t index) {
  memset(c, 0, sizeof *c);
  ld_fr_t secret, commitment;
  ld_fr_from_u64(&secret, 1234567 + index);
  ld_rln_id_commitment(&commitment, &secret);
  ld_fr_to_bytes(c->id_secret_hash, &secret);
  ld_fr_to_bytes(c->id_commitment, &commitment);
  c->id_trapdoor[0] = 7;
  c->id_nullifier[0] = 9;
  c->tree_index = index;
  c->user_message_limit = 100;
  snprintf(c->chain_id, sizeof c->chain_id, "1337");
  snprintf(c->contract_address, sizeof c->contract_address, "0x%040d", 42);
}

static void our_files_read_back(void **state) {
  (void)state;
  char path[] = "/tmp/ld_keystore_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  unlink(path);
  ld_rln_credential_t a, b, got;
  make_credential(&a, 3);
  make_credential(&b, 5);
  char err[256] = "";
  assert_int_equal(ld_rln_keystore_add(path, &a, "pw", 1000, err, sizeof err), 0);
  assert_int_equal(ld_rln_keystore_add(path, &b, "pw", 1000, err, sizeof err), 0);
  assert_int_equal(ld_rln_keystore_add(path, &a, "other", 1000, err, sizeof err), 0); /* no-op */
  json_t *ks = json_load_file(path, 0, NULL);
  assert_non_null(ks);
  assert_int_equal(json_object_size(json_object_get(ks, "credentials")), 2);
  ld_rln_keystore_query_t q = {"1337", a.contract_address, 5};
  assert_int_equal(ld_rln_keystore_open(ks, "pw", &q, &got, err, sizeof err), 0);
  assert_memory_equal(&got, &b, sizeof got);
  q.tree_index = 3;
  assert_int_equal(ld_rln_keystore_open(ks, "pw", &q, &got, err, sizeof err), 0);
  assert_memory_equal(&got, &a, sizeof got);
  json_decref(ks);
  unlink(path);
}

static void credential_must_be_consistent(void **state) {
  (void)state;
  ld_rln_credential_t c, got;
  make_credential(&c, 0);
  c.id_commitment[0] ^= 1;
  char *text = ld_rln_credential_to_json(&c);
  char err[256] = "";
  assert_int_equal(ld_rln_credential_from_json(text, strlen(text), &got, err, sizeof err),
                   LD_ERR_MALFORMED);
  assert_non_null(strstr(err, "idCommitment"));
  free(text);
  assert_int_equal(ld_rln_credential_from_json("[]", 2, &got, err, sizeof err), LD_ERR_MALFORMED);
}

static int parse_text(const char *text, ld_rln_keyfile_t *kf) {
  json_t *j = json_loads(text, 0, NULL);
  assert_non_null(j);
  char err[256];
  int rc = ld_rln_keyfile_parse(j, kf, err, sizeof err);
  json_decref(j);
  return rc;
}

#define KF(cipher, kdf, params)                                                                    \
  "{\"crypto\":{\"cipher\":\"" cipher "\",\"cipherparams\":{\"iv\":\"00112233445566778899aabbccd"  \
  "deeff\"},\"ciphertext\":\"00\",\"kdf\":\"" kdf "\",\"kdfparams\":" params ",\"mac\":\""         \
  "0000000000000000000000000000000000000000000000000000000000000000\"}}"

static void keyfile_caps_and_kinds(void **state) {
  (void)state;
  ld_rln_keyfile_t kf;
  assert_int_equal(parse_text(KF("aes-128-ctr", "pbkdf2",
                                 "{\"dklen\":32,\"c\":10,\"prf\":\"hmac-sha256\",\"salt\":\"ab\"}"),
                              &kf),
                   0);
  assert_int_equal(kf.iterations, 10);
  assert_string_equal(kf.prf_digest, "sha256");
  uint8_t key[32] = {0};
  char *plain = NULL;
  size_t len = 0;
  assert_int_equal(ld_rln_keyfile_open(&kf, key, &plain, &len), LD_ERR_DECRYPT);
  ld_rln_keyfile_clear(&kf);
  assert_int_equal(parse_text(KF("aes-128-ctr", "pbkdf2",
                                 "{\"dklen\":32,\"c\":999999999,\"prf\":\"hmac-sha256\","
                                 "\"salt\":\"ab\"}"),
                              &kf),
                   LD_ERR_LIMIT);
  assert_int_equal(parse_text(KF("aes-128-ctr", "scrypt",
                                 "{\"dklen\":32,\"n\":1073741824,\"r\":8,\"p\":1,\"salt\":\"ab\"}"),
                              &kf),
                   LD_ERR_LIMIT);
  assert_int_equal(parse_text(KF("aes-128-ctr", "scrypt",
                                 "{\"dklen\":32,\"n\":1000,\"r\":8,\"p\":1,\"salt\":\"ab\"}"),
                              &kf),
                   LD_ERR_MALFORMED);
  assert_int_equal(parse_text(KF("aes-256-gcm", "pbkdf2",
                                 "{\"dklen\":32,\"c\":1,\"prf\":\"hmac-sha256\",\"salt\":\"ab\"}"),
                              &kf),
                   LD_ERR_UNSUPPORTED);
  assert_int_equal(
      parse_text(KF("aes-128-ctr", "pbkdf2",
                    "{\"dklen\":32,\"c\":1,\"prf\":\"hmac-keccak256\",\"salt\":\"ab\"}"),
                 &kf),
      LD_ERR_UNSUPPORTED);
  assert_int_equal(parse_text(KF("aes-128-ctr", "argon2", "{\"dklen\":32,\"salt\":\"ab\"}"), &kf),
                   LD_ERR_UNSUPPORTED);
  assert_int_equal(parse_text("{\"crypto\":1}", &kf), LD_ERR_MALFORMED);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(key_is_nwaku_hash),
      cmocka_unit_test(opens_nwaku_keystore),
      cmocka_unit_test(wrong_password_and_query),
      cmocka_unit_test(our_files_read_back),
      cmocka_unit_test(credential_must_be_consistent),
      cmocka_unit_test(keyfile_caps_and_kinds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
