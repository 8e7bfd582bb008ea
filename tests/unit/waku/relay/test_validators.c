/* Relay validators: size and decodability (nwaku's required fields, js-waku's non-empty rule),
 * --protected-shard parsing, the signed-shard digest, signature and time window (vectors signed
 * independently with Python's `cryptography`), and the topic health rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/hex.h"
#include "waku/relay/validators.h"

static size_t unhex(const char *text, uint8_t *out, size_t cap) {
  size_t n = 0;
  assert_int_equal(ld_hex_decode(text, strlen(text), out, cap, &n), 0);
  return n;
}

/* ---- size and decodability ------------------------------------------------------------------ */

/* waku.md §1.4: nwaku-style encoding, 77 bytes. */
#define NWAKU_77                                                                                   \
  "0a0c010203045445535405060708121d2f77616b752f322f64656661756c742d636f6e74656e742f70726f746f18"   \
  "00508090fca3f4efc4d72e5a0c73757065722d736563726574aa0100f80100"

static void accepts_a_valid_message(void **state) {
  (void)state;
  uint8_t data[128];
  size_t n = unhex(NWAKU_77, data, sizeof data);
  assert_int_equal(n, 77);
  ld_waku_message_t msg;
  ld_waku_message_init(&msg);
  assert_int_equal(ld_relay_check_message(data, n, 0, true, &msg), LD_RELAY_OK);
  assert_int_equal(msg.payload_len, 12);
  assert_int_equal(msg.content_topic_len, strlen("/waku/2/default-content/proto"));
  assert_true(msg.timestamp == 1681964442000000000LL);
  assert_int_equal(msg.meta_len, 12);
  ld_waku_message_clear(&msg);
  /* exactly at the cap is fine, one byte less of cap is not */
  assert_int_equal(ld_relay_check_message(data, n, 77, true, &msg), LD_RELAY_OK);
  ld_waku_message_clear(&msg);
  assert_int_equal(ld_relay_check_message(data, n, 76, true, &msg), LD_RELAY_TOO_LARGE);
  assert_int_equal(msg.payload_len, 0);
}

static void rejects_oversized_by_default_cap(void **state) {
  (void)state;
  size_t big = LD_WAKU_DEFAULT_MAX_MSG_SIZE - 16;
  uint8_t *payload = calloc(1, big);
  assert_non_null(payload);
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = payload;
  m.payload_len = big;
  m.content_topic = "/a/1/b/c";
  m.content_topic_len = 8;
  ld_buf_t out;
  ld_buf_init(&out);
  assert_int_equal(ld_waku_message_encode(&m, SIZE_MAX, &out), 0);
  assert_true(out.len > LD_WAKU_DEFAULT_MAX_MSG_SIZE);
  ld_waku_message_t dec;
  ld_waku_message_init(&dec);
  assert_int_equal(ld_relay_check_message(out.data, out.len, 0, false, &dec), LD_RELAY_TOO_LARGE);
  assert_int_equal(ld_relay_check_message(out.data, out.len, out.len, false, &dec), LD_RELAY_OK);
  ld_waku_message_clear(&dec);
  ld_buf_clear(&out);
  free(payload);
}

static ld_relay_reason_t check_hex(const char *hex, bool js_rules) {
  uint8_t data[256];
  size_t n = unhex(hex, data, sizeof data);
  ld_waku_message_t msg;
  ld_waku_message_init(&msg);
  ld_relay_reason_t why = ld_relay_check_message(data, n, 0, js_rules, &msg);
  ld_waku_message_clear(&msg);
  return why;
}

static void rejects_undecodable_messages(void **state) {
  (void)state;
  /* not a protobuf: wire type 7 */
  assert_int_equal(check_hex("0f0102", false), LD_RELAY_UNDECODABLE);
  /* truncated payload field */
  assert_int_equal(check_hex("0a05010203", false), LD_RELAY_UNDECODABLE);
  /* content topic missing (nwaku requires it) */
  assert_int_equal(check_hex("0a0101", false), LD_RELAY_UNDECODABLE);
  /* payload missing (nwaku requires it) */
  assert_int_equal(check_hex("12082f612f312f622f63", false), LD_RELAY_UNDECODABLE);
  /* meta of 65 bytes, then of 64 */
  char hex[400] = "0a0101"
                  "12082f612f312f622f63"
                  "5a41";
  for (int i = 0; i < 65; i++)
    strcat(hex, "ab");
  assert_int_equal(check_hex(hex, false), LD_RELAY_UNDECODABLE);
  strcpy(hex, "0a0101"
              "12082f612f312f622f63"
              "5a40");
  for (int i = 0; i < 64; i++)
    strcat(hex, "ab");
  assert_int_equal(check_hex(hex, false), LD_RELAY_OK);
  /* empty input: both required fields missing */
  ld_waku_message_t msg;
  ld_waku_message_init(&msg);
  assert_int_equal(ld_relay_check_message(NULL, 0, 0, false, &msg), LD_RELAY_UNDECODABLE);
}

static void js_waku_rules_reject_empty_fields(void **state) {
  (void)state;
  /* payload present but empty, content topic "/a/1/b/c" */
  const char *empty_payload = "0a0012082f612f312f622f63";
  assert_int_equal(check_hex(empty_payload, false), LD_RELAY_OK);
  assert_int_equal(check_hex(empty_payload, true), LD_RELAY_EMPTY_PAYLOAD);
  const char *empty_topic = "0a01011200";
  assert_int_equal(check_hex(empty_topic, false), LD_RELAY_OK);
  assert_int_equal(check_hex(empty_topic, true), LD_RELAY_EMPTY_CONTENT_TOPIC);
}

/* ---- protected shards ----------------------------------------------------------------------- */

#define PUB "031b84c5567b126440995d3ed5aaba0565d71e1834604819ff9c17f5e9d5dd078f"
#define PUB_U                                                                                      \
  "041b84c5567b126440995d3ed5aaba0565d71e1834604819ff9c17f5e9d5dd078f70beaf8f588b541507fed6a642c"  \
  "5ab42dfdf8120a7f639de5122d47a69a8e8d1"
#define SIG                                                                                        \
  "087af5cdf82e91850c80117038e9c3482d18be3f9db98923e16cd1e1446e10bf4fc5b5acef35241d0cf1337ac6770"  \
  "112272024046b65275e0c5644544ceadc12"
#define SIG_HIGH_S                                                                                 \
  "087af5cdf82e91850c80117038e9c3482d18be3f9db98923e16cd1e1446e10bfb03a4a5310cadbe2f30ecc853988f"  \
  "eec938eb8e243e378ddb37c1a38834b652f"
#define TS 1700000000000000000LL
#define TOPIC "/waku/2/rs/1/0"

static void parses_protected_shards(void **state) {
  (void)state;
  uint8_t pub[33];
  unhex(PUB, pub, sizeof pub);
  ld_relay_protected_shard_t ps;
  assert_int_equal(ld_relay_protected_shard_parse("7:" PUB, &ps), 0);
  assert_int_equal(ps.shard, 7);
  assert_memory_equal(ps.pubkey, pub, 33);
  assert_int_equal(ld_relay_protected_shard_parse("65535:0x" PUB_U, &ps), 0);
  assert_int_equal(ps.shard, 65535);
  assert_memory_equal(ps.pubkey, pub, 33);
  /* 64 raw bytes: uncompressed without the 04 prefix */
  char raw64[200] = "3:";
  strcat(raw64, &PUB_U[2]);
  assert_int_equal(ld_relay_protected_shard_parse(raw64, &ps), 0);
  assert_int_equal(ps.shard, 3);
  assert_memory_equal(ps.pubkey, pub, 33);
  assert_int_equal(ld_relay_protected_shard_parse("/waku/2/rs/16/32:" PUB, &ps), 0);
  assert_int_equal(ps.shard, 32);

  ps.shard = 999;
  assert_int_equal(ld_relay_protected_shard_parse(PUB, &ps), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_relay_protected_shard_parse("1:2:" PUB, &ps), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_relay_protected_shard_parse("x:" PUB, &ps), LD_ERR_OVERFLOW);
  assert_int_equal(ld_relay_protected_shard_parse(":" PUB, &ps), LD_ERR_OVERFLOW);
  assert_int_equal(ld_relay_protected_shard_parse("65536:" PUB, &ps), LD_ERR_OVERFLOW);
  assert_int_equal(ld_relay_protected_shard_parse("/waku/2/rs/1:" PUB, &ps),
                   LD_ERR_BAD_PUBSUB_TOPIC);
  assert_int_equal(ld_relay_protected_shard_parse("1:zz", &ps), LD_ERR_BAD_ENCODING);
  assert_int_equal(ld_relay_protected_shard_parse("1:0201", &ps), LD_ERR_BAD_KEY);
  /* x = 5 has no point on the curve */
  assert_int_equal(ld_relay_protected_shard_parse(
                       "1:020000000000000000000000000000000000000000000000000000000000000005", &ps),
                   LD_ERR_BAD_KEY);
  assert_int_equal(ps.shard, 999);
}

static ld_waku_message_t make_signed(uint8_t *sig_storage, const char *sig_hex) {
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = (const uint8_t *)"hello";
  m.payload_len = 5;
  m.content_topic = "/myapp/1/chat/proto";
  m.content_topic_len = strlen(m.content_topic);
  m.timestamp = TS;
  if (sig_hex != NULL) {
    m.meta_len = unhex(sig_hex, sig_storage, 64);
    m.meta = sig_storage;
  }
  return m;
}

static void signed_digest_matches_nwaku_layout(void **state) {
  (void)state;
  ld_waku_message_t m = make_signed(NULL, NULL);
  uint8_t digest[32], want[32];
  assert_int_equal(ld_relay_signed_digest(TOPIC, &m, digest), 0);
  unhex("3282ae7037d3a3889c71475ae435e58352dc52a8227c77d4d6994065fcb815e2", want, 32);
  assert_memory_equal(digest, want, 32);
  /* meta is not covered; ephemeral is */
  m.meta = (const uint8_t *)"xyz";
  m.meta_len = 3;
  assert_int_equal(ld_relay_signed_digest(TOPIC, &m, digest), 0);
  assert_memory_equal(digest, want, 32);
  m.ephemeral = true;
  assert_int_equal(ld_relay_signed_digest(TOPIC, &m, digest), 0);
  unhex("2564273bed64e7110ef8bc1c578d6c1a59028c9a4ca5cd269e74244cea368c47", want, 32);
  assert_memory_equal(digest, want, 32);
}

static void verifies_an_independent_signature(void **state) {
  (void)state;
  uint8_t pub[33], sig[64];
  unhex(PUB, pub, sizeof pub);
  ld_waku_message_t m = make_signed(sig, SIG);
  assert_int_equal(ld_relay_verify_signed(pub, TOPIC, &m, TS), LD_RELAY_OK);
  assert_int_equal(ld_relay_verify_signed(pub, TOPIC, &m, TS + 1000), LD_RELAY_OK);
  /* another topic, payload, timestamp or ephemeral flag breaks it */
  assert_int_equal(ld_relay_verify_signed(pub, "/waku/2/rs/1/1", &m, TS), LD_RELAY_BAD_SIGNATURE);
  m.payload_len = 4;
  assert_int_equal(ld_relay_verify_signed(pub, TOPIC, &m, TS), LD_RELAY_BAD_SIGNATURE);
  m.payload_len = 5;
  m.timestamp = TS + 1;
  assert_int_equal(ld_relay_verify_signed(pub, TOPIC, &m, TS), LD_RELAY_BAD_SIGNATURE);
  m.timestamp = TS;
  m.ephemeral = true;
  assert_int_equal(ld_relay_verify_signed(pub, TOPIC, &m, TS), LD_RELAY_BAD_SIGNATURE);
  m.ephemeral = false;
  /* the same signature with a high S: libsecp256k1 (nwaku) refuses it */
  uint8_t high[64];
  ld_waku_message_t mh = make_signed(high, SIG_HIGH_S);
  assert_int_equal(ld_relay_verify_signed(pub, TOPIC, &mh, TS), LD_RELAY_BAD_SIGNATURE);
  /* meta of another length, or r = 0 */
  m.meta_len = 63;
  assert_int_equal(ld_relay_verify_signed(pub, TOPIC, &m, TS), LD_RELAY_BAD_SIGNATURE);
  m.meta_len = 64;
  memset(sig, 0, 32);
  assert_int_equal(ld_relay_verify_signed(pub, TOPIC, &m, TS), LD_RELAY_BAD_SIGNATURE);
}

static void time_window_is_five_minutes(void **state) {
  (void)state;
  uint8_t pub[33], sig[64];
  unhex(PUB, pub, sizeof pub);
  ld_waku_message_t m = make_signed(sig, SIG);
  const int64_t w = LD_RELAY_PROTECTED_WINDOW_NS;
  assert_int_equal(ld_relay_verify_signed(pub, TOPIC, &m, TS + w - 1), LD_RELAY_OK);
  assert_int_equal(ld_relay_verify_signed(pub, TOPIC, &m, TS - w + 1), LD_RELAY_OK);
  assert_int_equal(ld_relay_verify_signed(pub, TOPIC, &m, TS + w), LD_RELAY_OUT_OF_WINDOW);
  assert_int_equal(ld_relay_verify_signed(pub, TOPIC, &m, TS - w), LD_RELAY_OUT_OF_WINDOW);
  assert_int_equal(ld_relay_verify_signed(pub, TOPIC, &m, INT64_MIN), LD_RELAY_OUT_OF_WINDOW);
  m.timestamp = INT64_MIN;
  assert_int_equal(ld_relay_verify_signed(pub, TOPIC, &m, INT64_MAX), LD_RELAY_OUT_OF_WINDOW);
  m.timestamp = 0;
  assert_int_equal(ld_relay_verify_signed(pub, TOPIC, &m, 0), LD_RELAY_NO_TIMESTAMP);
}

static void signs_what_verifies(void **state) {
  (void)state;
  uint8_t secret[32], pub[33], other[33];
  memset(secret, 0x01, sizeof secret);
  unhex(PUB, pub, sizeof pub);
  ld_waku_message_t m = make_signed(NULL, NULL);
  uint8_t sig[64];
  assert_int_equal(ld_relay_sign(secret, TOPIC, &m, sig), 0);
  m.meta = sig;
  m.meta_len = sizeof sig;
  assert_int_equal(ld_relay_verify_signed(pub, TOPIC, &m, TS), LD_RELAY_OK);
  /* low S, as nwaku needs */
  assert_true(sig[32] < 0x80);
  uint8_t secret2[32];
  memset(secret2, 0x02, sizeof secret2);
  assert_int_equal(ld_secp256k1_public(secret2, other), 0);
  assert_int_equal(ld_relay_verify_signed(other, TOPIC, &m, TS), LD_RELAY_BAD_SIGNATURE);
  uint8_t zero[32] = {0};
  assert_int_equal(ld_relay_sign(zero, TOPIC, &m, sig), LD_ERR_BAD_KEY);
}

static void finds_the_protected_entry(void **state) {
  (void)state;
  ld_relay_protected_shard_t list[2];
  assert_int_equal(ld_relay_protected_shard_parse("0:" PUB, &list[0]), 0);
  assert_int_equal(ld_relay_protected_shard_parse("5:" PUB, &list[1]), 0);
  assert_ptr_equal(ld_relay_protected_find(list, 2, 1, "/waku/2/rs/1/5"), &list[1]);
  assert_ptr_equal(ld_relay_protected_find(list, 2, 1, "/waku/2/rs/1/0"), &list[0]);
  assert_null(ld_relay_protected_find(list, 2, 2, "/waku/2/rs/1/5"));
  assert_null(ld_relay_protected_find(list, 2, 1, "/waku/2/rs/1/05"));
  assert_null(ld_relay_protected_find(list, 2, 1, "/waku/2/rs/1/6"));
  assert_null(ld_relay_protected_find(list, 2, 1, "/waku/2/default-waku/proto"));
  assert_null(ld_relay_protected_find(list, 0, 1, "/waku/2/rs/1/5"));
}

/* ---- health --------------------------------------------------------------------------------- */

static void health_follows_nwaku_thresholds(void **state) {
  (void)state;
  assert_int_equal(ld_relay_health_from_mesh(0, 4), LD_RELAY_UNHEALTHY);
  assert_int_equal(ld_relay_health_from_mesh(1, 4), LD_RELAY_MINIMALLY_HEALTHY);
  assert_int_equal(ld_relay_health_from_mesh(3, 4), LD_RELAY_MINIMALLY_HEALTHY);
  assert_int_equal(ld_relay_health_from_mesh(4, 4), LD_RELAY_SUFFICIENTLY_HEALTHY);
  assert_int_equal(ld_relay_health_from_mesh(12, 4), LD_RELAY_SUFFICIENTLY_HEALTHY);
  assert_int_equal(ld_relay_health_from_mesh(1, 1), LD_RELAY_SUFFICIENTLY_HEALTHY);
  assert_string_equal(ld_relay_health_name(LD_RELAY_UNHEALTHY), "UnHealthy");
  assert_string_equal(ld_relay_health_name(LD_RELAY_MINIMALLY_HEALTHY), "MinimallyHealthy");
  assert_string_equal(ld_relay_health_name(LD_RELAY_SUFFICIENTLY_HEALTHY), "SufficientlyHealthy");
  assert_string_equal(ld_relay_health_name(LD_RELAY_NOT_SUBSCRIBED), "NotSubscribed");
  assert_string_equal(ld_relay_reason_name(LD_RELAY_TOO_LARGE), "too_large");
  assert_string_equal(ld_relay_reason_name(LD_RELAY_REASON_COUNT), "unknown");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(accepts_a_valid_message),
      cmocka_unit_test(rejects_oversized_by_default_cap),
      cmocka_unit_test(rejects_undecodable_messages),
      cmocka_unit_test(js_waku_rules_reject_empty_fields),
      cmocka_unit_test(parses_protected_shards),
      cmocka_unit_test(signed_digest_matches_nwaku_layout),
      cmocka_unit_test(verifies_an_independent_signature),
      cmocka_unit_test(time_window_is_five_minutes),
      cmocka_unit_test(signs_what_verifies),
      cmocka_unit_test(finds_the_protected_entry),
      cmocka_unit_test(health_follows_nwaku_thresholds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
