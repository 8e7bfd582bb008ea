#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "testhex.h"

#define TAG LD_CHACHAPOLY_TAG_LEN

/* RFC 8439 Appendix A.5. Its nonce 00000000 0102030405060708 is our form: four zero bytes then
 * the counter in little-endian, i.e. counter 0x0807060504030201. */
#define A5_KEY "1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0"
#define A5_COUNTER 0x0807060504030201ULL
#define A5_AAD "f33388860000000000004e91"
#define A5_PLAINTEXT                                                                               \
  "496e7465726e65742d4472616674732061726520647261667420646f63756d65"                               \
  "6e74732076616c696420666f722061206d6178696d756d206f6620736978206d"                               \
  "6f6e74687320616e64206d617920626520757064617465642c207265706c6163"                               \
  "65642c206f72206f62736f6c65746564206279206f7468657220646f63756d65"                               \
  "6e747320617420616e792074696d652e20497420697320696e617070726f7072"                               \
  "6961746520746f2075736520496e7465726e65742d4472616674732061732072"                               \
  "65666572656e6365206d6174657269616c206f7220746f206369746520746865"                               \
  "6d206f74686572207468616e206173202fe2809c776f726b20696e2070726f67"                               \
  "726573732e2fe2809d"
#define A5_CIPHERTEXT                                                                              \
  "64a0861575861af460f062c79be643bd5e805cfd345cf389f108670ac76c8cb2"                               \
  "4c6cfc18755d43eea09ee94e382d26b0bdb7b73c321b0100d4f03b7f355894cf"                               \
  "332f830e710b97ce98c8a84abd0b948114ad176e008d33bd60f982b1ff37c855"                               \
  "9797a06ef4f0ef61c186324e2b3506383606907b6a7c02b0f9f6157b53c867e4"                               \
  "b9166c767b804d46a59b5216cde7a4e99040c5a40433225ee282a1b0a06c523e"                               \
  "af4534d7f83fa1155b0047718cbc546a0d072b04b3564eea1b422273f548271a"                               \
  "0bb2316053fa76991955ebd63159434ecebb4e466dae5a1073a6727627097a10"                               \
  "49e617d91d361094fa68f0ff77987130305beaba2eda04df997b714d6c6f2c29"                               \
  "a6ad5cb4022b02709b"
#define A5_TAG "eead9d67890cbb22392336fea1851f38"

typedef struct {
  uint8_t key[32];
  uint8_t aad[12];
  uint8_t plain[265];
  uint8_t sealed[265 + TAG];
  size_t len;
} a5_t;

static void a5_load(a5_t *v) {
  testhex(A5_KEY, v->key);
  testhex(A5_AAD, v->aad);
  v->len = testhex(A5_PLAINTEXT, v->plain);
  assert_int_equal(v->len, 265);
  assert_int_equal(testhex(A5_CIPHERTEXT, v->sealed), 265);
  testhex(A5_TAG, v->sealed + 265);
}

static void rfc8439_a5_decrypts(void **state) {
  (void)state;
  a5_t v;
  a5_load(&v);
  uint8_t out[265];
  assert_int_equal(
      ld_chachapoly_decrypt(v.key, A5_COUNTER, v.aad, sizeof v.aad, v.sealed, sizeof v.sealed, out),
      0);
  assert_memory_equal(out, v.plain, v.len);
}

static void rfc8439_a5_encrypts(void **state) {
  (void)state;
  a5_t v;
  a5_load(&v);
  uint8_t out[265 + TAG];
  ld_chachapoly_encrypt(v.key, A5_COUNTER, v.aad, sizeof v.aad, v.plain, v.len, out);
  assert_memory_equal(out, v.sealed, sizeof out);
}

static void rfc8439_a5_in_place(void **state) {
  (void)state;
  a5_t v;
  a5_load(&v);
  uint8_t buf[265 + TAG];
  memcpy(buf, v.plain, v.len);
  ld_chachapoly_encrypt(v.key, A5_COUNTER, v.aad, sizeof v.aad, buf, v.len, buf);
  assert_memory_equal(buf, v.sealed, sizeof buf);
  assert_int_equal(
      ld_chachapoly_decrypt(v.key, A5_COUNTER, v.aad, sizeof v.aad, buf, sizeof buf, buf), 0);
  assert_memory_equal(buf, v.plain, v.len);
}

static void tampering_is_detected(void **state) {
  (void)state;
  a5_t v;
  a5_load(&v);
  uint8_t out[265], buf[265 + TAG], aad[12];
  for (size_t i = 0; i < sizeof buf; i++) {
    memcpy(buf, v.sealed, sizeof buf);
    buf[i] ^= 0x01;
    assert_int_equal(
        ld_chachapoly_decrypt(v.key, A5_COUNTER, v.aad, sizeof aad, buf, sizeof buf, out),
        LD_ERR_DECRYPT);
  }
  for (size_t i = 0; i < sizeof aad; i++) {
    memcpy(aad, v.aad, sizeof aad);
    aad[i] ^= 0x80;
    assert_int_equal(
        ld_chachapoly_decrypt(v.key, A5_COUNTER, aad, sizeof aad, v.sealed, sizeof v.sealed, out),
        LD_ERR_DECRYPT);
  }
  assert_int_equal(ld_chachapoly_decrypt(v.key, A5_COUNTER, v.aad, sizeof aad - 1, v.sealed,
                                         sizeof v.sealed, out),
                   LD_ERR_DECRYPT);
  assert_int_equal(ld_chachapoly_decrypt(v.key, A5_COUNTER + 1, v.aad, sizeof aad, v.sealed,
                                         sizeof v.sealed, out),
                   LD_ERR_DECRYPT);
  assert_int_equal(ld_chachapoly_decrypt(v.key, A5_COUNTER, v.aad, sizeof aad, v.sealed,
                                         sizeof v.sealed - 1, out),
                   LD_ERR_DECRYPT);
  v.key[31] ^= 0x01;
  assert_int_equal(
      ld_chachapoly_decrypt(v.key, A5_COUNTER, v.aad, sizeof aad, v.sealed, sizeof v.sealed, out),
      LD_ERR_DECRYPT);
}

static void short_input_rejected(void **state) {
  (void)state;
  uint8_t key[32] = {0}, in[TAG] = {0}, out[TAG];
  for (size_t len = 0; len < TAG; len++) {
    assert_int_equal(ld_chachapoly_decrypt(key, 0, NULL, 0, in, len, out), LD_ERR_DECRYPT);
  }
}

static void empty_plaintext_round_trip(void **state) {
  (void)state;
  uint8_t key[32], tag[TAG], other[TAG];
  ld_random_bytes(key, sizeof key);
  ld_chachapoly_encrypt(key, 7, NULL, 0, NULL, 0, tag);
  assert_int_equal(ld_chachapoly_decrypt(key, 7, NULL, 0, tag, TAG, NULL), 0);
  assert_int_equal(ld_chachapoly_decrypt(key, 8, NULL, 0, tag, TAG, NULL), LD_ERR_DECRYPT);
  ld_chachapoly_encrypt(key, 8, NULL, 0, NULL, 0, other);
  assert_memory_not_equal(tag, other, TAG);
}

/* Noise transport frame sizes, in place, with the counters Noise uses. */
static void round_trips_in_place(void **state) {
  (void)state;
  static const size_t sizes[] = {1, 15, 16, 17, 63, 64, 65, 255, 256, 1000, 4096, 65519};
  static const uint64_t nonces[] = {0, 1, 0xffffffffULL, 0x100000000ULL, UINT64_MAX - 1};
  uint8_t key[32];
  ld_random_bytes(key, sizeof key);
  uint8_t *plain = malloc(65519), *buf = malloc(65519 + TAG);
  assert_non_null(plain);
  assert_non_null(buf);
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    for (size_t n = 0; n < sizeof nonces / sizeof nonces[0]; n++) {
      size_t len = sizes[s];
      ld_random_bytes(plain, len);
      memcpy(buf, plain, len);
      ld_chachapoly_encrypt(key, nonces[n], NULL, 0, buf, len, buf);
      /* a short ciphertext equals its plaintext by chance (1 byte: 1 in 256), so the check
       * that encryption changed the bytes needs a length where that cannot happen */
      if (len >= 16)
        assert_memory_not_equal(buf, plain, len);
      assert_int_equal(ld_chachapoly_decrypt(key, nonces[n], NULL, 0, buf, len + TAG, buf), 0);
      assert_memory_equal(buf, plain, len);
    }
  }
  free(plain);
  free(buf);
}

/* Counters that differ only in their high 32 bits must give different keystreams. */
static void all_counter_bytes_matter(void **state) {
  (void)state;
  uint8_t key[32] = {1}, zero[64] = {0}, a[64 + TAG], b[64 + TAG];
  for (int byte = 0; byte < 8; byte++) {
    ld_chachapoly_encrypt(key, 0, NULL, 0, zero, 64, a);
    ld_chachapoly_encrypt(key, 1ULL << (8 * byte), NULL, 0, zero, 64, b);
    assert_memory_not_equal(a, b, 64);
  }
}

/* ---- cross-check against libsodium ------------------------------------------------------- */

#define MAX_PLAIN 65519
#define MAX_AD 1000

static const size_t g_sizes[] = {0, 1, 15, 16, 17, 1000, MAX_PLAIN};
static const size_t g_adlens[] = {0, 1, 17, MAX_AD};

typedef struct {
  uint8_t key[32];
  uint64_t counter;
  uint8_t ad[MAX_AD];
  uint8_t plain[MAX_PLAIN];
  uint8_t ours[MAX_PLAIN + TAG];
  uint8_t theirs[MAX_PLAIN + TAG];
  uint8_t opened[MAX_PLAIN];
} xcheck_t;

/* Deterministic pseudo-random bytes: libsodium's seeded generator, one seed per use. */
static void fill(void *buf, size_t len, uint32_t tag, uint32_t round) {
  uint8_t seed[randombytes_SEEDBYTES] = {0};
  memcpy(seed, &tag, sizeof tag);
  memcpy(seed + 4, &round, sizeof round);
  randombytes_buf_deterministic(buf, len, seed);
}

/* The nonce built independently of the code under test: 4 zero bytes ‖ LE64 counter. */
static void sodium_nonce(uint8_t n[12], uint64_t counter) {
  memset(n, 0, 12);
  for (int i = 0; i < 8; i++) {
    n[4 + i] = (uint8_t)(counter >> (8 * i));
  }
}

/* Seals one message with both libraries; 1 when the outputs are equal and each library opens the
 * other's output. Free of cmocka asserts so that threads can call it. */
static int xcheck_one(xcheck_t *x, size_t len, size_t adlen, uint32_t round) {
  uint8_t n[12];
  unsigned long long outlen = 0;
  fill(x->key, sizeof x->key, 1, round);
  fill(&x->counter, sizeof x->counter, 2, round);
  fill(x->ad, adlen, 3, round);
  fill(x->plain, len, 4, round);
  const uint8_t *ad = adlen ? x->ad : NULL;
  sodium_nonce(n, x->counter);

  ld_chachapoly_encrypt(x->key, x->counter, ad, adlen, x->plain, len, x->ours);
  if (crypto_aead_chacha20poly1305_ietf_encrypt(x->theirs, &outlen, x->plain, len, ad, adlen, NULL,
                                                n, x->key) != 0 ||
      outlen != len + TAG || memcmp(x->ours, x->theirs, len + TAG) != 0) {
    return 0;
  }
  memset(x->opened, 0xaa, len);
  if (ld_chachapoly_decrypt(x->key, x->counter, ad, adlen, x->theirs, len + TAG, x->opened) != 0 ||
      memcmp(x->opened, x->plain, len) != 0) {
    return 0;
  }
  memset(x->opened, 0xaa, len);
  return crypto_aead_chacha20poly1305_ietf_decrypt(x->opened, &outlen, NULL, x->ours, len + TAG, ad,
                                                   adlen, n, x->key) == 0 &&
         outlen == len && memcmp(x->opened, x->plain, len) == 0;
}

static void xcheck(xcheck_t *x, size_t len, size_t adlen, uint32_t round) {
  if (!xcheck_one(x, len, adlen, round)) {
    fail_msg("libraries differ: %zu bytes, %zu bytes of AD, round %u", len, adlen, (unsigned)round);
  }
}

static void matches_libsodium(void **state) {
  (void)state;
  xcheck_t *x = malloc(sizeof *x);
  assert_non_null(x);
  uint32_t round = 0;
  for (size_t s = 0; s < sizeof g_sizes / sizeof g_sizes[0]; s++) {
    for (size_t a = 0; a < sizeof g_adlens / sizeof g_adlens[0]; a++) {
      for (int rep = 0; rep < 3; rep++) {
        xcheck(x, g_sizes[s], g_adlens[a], round++);
      }
    }
  }
  free(x);
}

/* The same cross-check, in place: ld_chachapoly_* with out == in against libsodium. */
static void matches_libsodium_in_place(void **state) {
  (void)state;
  xcheck_t *x = malloc(sizeof *x);
  assert_non_null(x);
  for (size_t s = 0; s < sizeof g_sizes / sizeof g_sizes[0]; s++) {
    size_t len = g_sizes[s], adlen = 17;
    uint8_t n[12];
    xcheck(x, len, adlen, 1000 + (uint32_t)s);
    memcpy(x->ours, x->plain, len);
    ld_chachapoly_encrypt(x->key, x->counter, x->ad, adlen, x->ours, len, x->ours);
    sodium_nonce(n, x->counter);
    crypto_aead_chacha20poly1305_ietf_encrypt(x->theirs, NULL, x->plain, len, x->ad, adlen, NULL, n,
                                              x->key);
    assert_memory_equal(x->ours, x->theirs, len + TAG);
    assert_int_equal(
        ld_chachapoly_decrypt(x->key, x->counter, x->ad, adlen, x->ours, len + TAG, x->ours), 0);
    assert_memory_equal(x->ours, x->plain, len);
  }
  free(x);
}

/* ---- failure handling -------------------------------------------------------------------- */

static int all_zero(const uint8_t *p, size_t len) {
  for (size_t i = 0; i < len; i++) {
    if (p[i] != 0) {
      return 0;
    }
  }
  return 1;
}

/* A message that fails to authenticate leaves no plaintext behind, in `out` or in place. */
static void failed_decrypt_wipes_output(void **state) {
  (void)state;
  a5_t v;
  a5_load(&v);
  uint8_t out[265], buf[265 + TAG];
  memcpy(buf, v.sealed, sizeof buf);
  buf[265] ^= 0x01; /* the tag */
  memset(out, 0xaa, sizeof out);
  assert_int_equal(
      ld_chachapoly_decrypt(v.key, A5_COUNTER, v.aad, sizeof v.aad, buf, sizeof buf, out),
      LD_ERR_DECRYPT);
  assert_true(all_zero(out, sizeof out));
  assert_int_equal(
      ld_chachapoly_decrypt(v.key, A5_COUNTER, v.aad, sizeof v.aad, buf, sizeof buf, buf),
      LD_ERR_DECRYPT);
  assert_true(all_zero(buf, 265));
}

/* A failed open does not disturb the next operations on the same thread. */
static void failure_does_not_poison_later_calls(void **state) {
  (void)state;
  a5_t v;
  a5_load(&v);
  uint8_t out[265], sealed[265 + TAG], bad[265 + TAG];
  memcpy(bad, v.sealed, sizeof bad);
  bad[0] ^= 0x01;
  for (int i = 0; i < 3; i++) {
    assert_int_equal(
        ld_chachapoly_decrypt(v.key, A5_COUNTER, v.aad, sizeof v.aad, bad, sizeof bad, out),
        LD_ERR_DECRYPT);
    assert_int_equal(ld_chachapoly_decrypt(v.key, A5_COUNTER, v.aad, sizeof v.aad, v.sealed,
                                           sizeof v.sealed, out),
                     0);
    assert_memory_equal(out, v.plain, v.len);
    ld_chachapoly_encrypt(v.key, A5_COUNTER, v.aad, sizeof v.aad, v.plain, v.len, sealed);
    assert_memory_equal(sealed, v.sealed, sizeof sealed);
  }
}

/* ---- threads ----------------------------------------------------------------------------- */

#define THREADS 4

typedef struct {
  xcheck_t x;
  int ok;
} thread_job_t;

static void *aead_thread(void *arg) {
  thread_job_t *job = arg;
  job->ok = 1;
  for (uint32_t round = 0; round < 8; round++) {
    job->ok &= xcheck_one(&job->x, 1000, 17, 2000 + round);
    job->ok &= xcheck_one(&job->x, 17, 0, 3000 + round);
  }
  return NULL;
}

/* Each thread gets its own contexts (freed when it exits, which LeakSanitizer checks). */
static void threads_get_their_own_contexts(void **state) {
  (void)state;
  pthread_t threads[THREADS];
  thread_job_t *jobs = calloc(THREADS, sizeof *jobs);
  assert_non_null(jobs);
  for (int i = 0; i < THREADS; i++) {
    assert_int_equal(pthread_create(&threads[i], NULL, aead_thread, &jobs[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) {
    assert_int_equal(pthread_join(threads[i], NULL), 0);
    assert_true(jobs[i].ok);
  }
  free(jobs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(rfc8439_a5_decrypts),
      cmocka_unit_test(rfc8439_a5_encrypts),
      cmocka_unit_test(rfc8439_a5_in_place),
      cmocka_unit_test(tampering_is_detected),
      cmocka_unit_test(short_input_rejected),
      cmocka_unit_test(empty_plaintext_round_trip),
      cmocka_unit_test(round_trips_in_place),
      cmocka_unit_test(all_counter_bytes_matter),
      cmocka_unit_test(matches_libsodium),
      cmocka_unit_test(matches_libsodium_in_place),
      cmocka_unit_test(failed_decrypt_wipes_output),
      cmocka_unit_test(failure_does_not_poison_later_calls),
      cmocka_unit_test(threads_get_their_own_contexts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
