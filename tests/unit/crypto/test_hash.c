#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "testhex.h"

static void assert_digest(const uint8_t got[LD_SHA256_LEN], const char *hex) {
  uint8_t want[LD_SHA256_LEN];
  assert_int_equal(testhex(hex, want), LD_SHA256_LEN);
  assert_memory_equal(got, want, LD_SHA256_LEN);
}

/* FIPS 180-2 Appendix B */
#define ABC "abc"
#define ABC_HASH "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define EMPTY_HASH "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define MSG448 "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
#define MSG448_HASH "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
#define MILLION_A_HASH "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"

static void sha256_fips_vectors(void **state) {
  (void)state;
  uint8_t out[LD_SHA256_LEN];
  ld_sha256(ABC, 3, out);
  assert_digest(out, ABC_HASH);
  ld_sha256("", 0, out);
  assert_digest(out, EMPTY_HASH);
  ld_sha256(NULL, 0, out);
  assert_digest(out, EMPTY_HASH);
  ld_sha256(MSG448, strlen(MSG448), out);
  assert_digest(out, MSG448_HASH);
}

static void sha256_2_matches_every_split(void **state) {
  (void)state;
  const char *msg = MSG448;
  size_t len = strlen(msg);
  uint8_t out[LD_SHA256_LEN];
  for (size_t cut = 0; cut <= len; cut++) {
    ld_sha256_2(msg, cut, msg + cut, len - cut, out);
    assert_digest(out, MSG448_HASH);
  }
  ld_sha256_2(NULL, 0, NULL, 0, out);
  assert_digest(out, EMPTY_HASH);
}

static void sha256_incremental_million_a(void **state) {
  (void)state;
  uint8_t chunk[1000];
  memset(chunk, 'a', sizeof chunk);
  ld_sha256_ctx_t ctx = {0};
  assert_int_equal(ld_sha256_begin(&ctx), 0);
  for (int i = 0; i < 1000; i++) {
    assert_int_equal(ld_sha256_update(&ctx, chunk, sizeof chunk), 0);
  }
  uint8_t out[LD_SHA256_LEN];
  assert_int_equal(ld_sha256_final(&ctx, out), 0);
  assert_digest(out, MILLION_A_HASH);
  assert_null(ctx.impl);
}

static void sha256_incremental_byte_by_byte(void **state) {
  (void)state;
  ld_sha256_ctx_t ctx;
  assert_int_equal(ld_sha256_begin(&ctx), 0);
  for (size_t i = 0; i < strlen(MSG448); i++) {
    assert_int_equal(ld_sha256_update(&ctx, &MSG448[i], 1), 0);
  }
  assert_int_equal(ld_sha256_update(&ctx, NULL, 0), 0);
  uint8_t out[LD_SHA256_LEN];
  assert_int_equal(ld_sha256_final(&ctx, out), 0);
  assert_digest(out, MSG448_HASH);
}

static void sha256_incremental_state_errors(void **state) {
  (void)state;
  uint8_t out[LD_SHA256_LEN];
  ld_sha256_ctx_t ctx = {0};
  assert_int_equal(ld_sha256_update(&ctx, ABC, 3), LD_ERR_STATE);
  assert_int_equal(ld_sha256_final(&ctx, out), LD_ERR_STATE);
  ld_sha256_clear(&ctx);
  assert_int_equal(ld_sha256_begin(&ctx), 0);
  assert_int_equal(ld_sha256_update(&ctx, ABC, 3), 0);
  assert_int_equal(ld_sha256_final(&ctx, out), 0);
  assert_digest(out, ABC_HASH);
  assert_int_equal(ld_sha256_update(&ctx, ABC, 3), LD_ERR_STATE);
  assert_int_equal(ld_sha256_final(&ctx, out), LD_ERR_STATE);
  ld_sha256_clear(&ctx);
  /* An abandoned context is released by clear (the sanitizer checks for the leak). */
  assert_int_equal(ld_sha256_begin(&ctx), 0);
  assert_int_equal(ld_sha256_update(&ctx, ABC, 3), 0);
  ld_sha256_clear(&ctx);
  assert_null(ctx.impl);
}

typedef struct {
  const char *key_hex;
  const char *data_hex;
  const char *mac_hex;
} hmac_vector_t;

/* RFC 4231 §4.2–4.5 (test cases 1–4) and §4.7 (test case 6, key longer than a block). */
static const hmac_vector_t hmac_vectors[] = {
    {"0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265",
     "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
    {"4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
     "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
    {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
     "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
     "dddddddd",
     "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
    {"0102030405060708090a0b0c0d0e0f10111213141516171819",
     "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"
     "cdcdcdcd",
     "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
    {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
     "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048617368204b"
     "6579204669727374",
     "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
};

static void hmac_rfc4231_vectors(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof hmac_vectors / sizeof hmac_vectors[0]; i++) {
    uint8_t key[256], data[256], out[LD_SHA256_LEN];
    size_t keylen = testhex(hmac_vectors[i].key_hex, key);
    size_t datalen = testhex(hmac_vectors[i].data_hex, data);
    ld_hmac_sha256(key, keylen, data, datalen, out);
    assert_digest(out, hmac_vectors[i].mac_hex);
  }
}

static void hmac_empty_key_does_not_reuse_previous_key(void **state) {
  (void)state;
  uint8_t out[LD_SHA256_LEN];
  const char *empty_mac = "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad";
  ld_hmac_sha256("Jefe", 4, "x", 1, out);
  ld_hmac_sha256(NULL, 0, NULL, 0, out);
  assert_digest(out, empty_mac);
  ld_hmac_sha256("Jefe", 4, "x", 1, out);
  ld_hmac_sha256("", 0, "", 0, out);
  assert_digest(out, empty_mac);
}

static void *hash_thread(void *arg) {
  int *ok = arg;
  uint8_t out[LD_SHA256_LEN], want[LD_SHA256_LEN];
  *ok = 1;
  for (int i = 0; i < 200; i++) {
    ld_sha256(ABC, 3, out);
    testhex(ABC_HASH, want);
    *ok &= memcmp(out, want, sizeof out) == 0;
    ld_hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, out);
    testhex(hmac_vectors[1].mac_hex, want);
    *ok &= memcmp(out, want, sizeof out) == 0;
  }
  return NULL;
}

static void hashes_from_many_threads(void **state) {
  (void)state;
  enum { THREADS = 6 };
  pthread_t threads[THREADS];
  int ok[THREADS];
  for (int i = 0; i < THREADS; i++) {
    assert_int_equal(pthread_create(&threads[i], NULL, hash_thread, &ok[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) {
    assert_int_equal(pthread_join(threads[i], NULL), 0);
    assert_true(ok[i]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sha256_fips_vectors),
      cmocka_unit_test(sha256_2_matches_every_split),
      cmocka_unit_test(sha256_incremental_million_a),
      cmocka_unit_test(sha256_incremental_byte_by_byte),
      cmocka_unit_test(sha256_incremental_state_errors),
      cmocka_unit_test(hmac_rfc4231_vectors),
      cmocka_unit_test(hmac_empty_key_does_not_reuse_previous_key),
      cmocka_unit_test(hashes_from_many_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
