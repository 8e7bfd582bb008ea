/* REST JSON: request bodies, nwaku's RelayWakuMessage (int64 nanosecond timestamps beyond 2^53,
 * base64 fields, the 400 cases), and strings from arbitrary bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "rest/json.h"

#define NOW 1700000000000000000LL

static json_t *parse(const char *text) {
  json_t *j = NULL;
  char err[LD_REST_ERR_MAX];
  assert_int_equal(ld_rest_json_parse((const uint8_t *)text, strlen(text), "application/json", &j,
                                      err, sizeof err),
                   0);
  return j;
}

static int message_err(const char *text, char *err, size_t cap) {
  json_t *j = parse(text);
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  int rc = ld_rest_message_from_json(j, NOW, true, 0, &m, err, cap);
  ld_waku_message_clear(&m);
  json_decref(j);
  return rc;
}

static void body_checks_follow_nwaku(void **state) {
  (void)state;
  json_t *j = NULL;
  char err[LD_REST_ERR_MAX];
  assert_int_equal(ld_rest_json_parse(NULL, 0, "application/json", &j, err, sizeof err),
                   LD_ERR_INVALID_ARG);
  assert_string_equal(err, "Missing content body");
  const uint8_t body[] = "[]";
  assert_int_equal(
      ld_rest_json_parse(body, 2, "application/x-www-form-urlencoded", &j, err, sizeof err),
      LD_ERR_UNSUPPORTED);
  assert_string_equal(err, "Wrong Content-Type, expected application/json or text/plain");
  assert_int_equal(
      ld_rest_json_parse(body, 2, " Application/JSON ; charset=utf-8", &j, err, sizeof err), 0);
  json_decref(j);
  assert_int_equal(ld_rest_json_parse(body, 2, "text/plain", &j, err, sizeof err), 0);
  json_decref(j);
  assert_int_equal(ld_rest_json_parse(body, 2, NULL, &j, err, sizeof err), 0);
  json_decref(j);
  const uint8_t broken[] = "[\"a\",";
  assert_int_equal(ld_rest_json_parse(broken, 5, NULL, &j, err, sizeof err), LD_ERR_MALFORMED);
  assert_non_null(strstr(err, "Invalid content body, could not decode: "));
  const uint8_t dup[] = "{\"payload\":\"AA==\",\"payload\":\"AQ==\"}";
  assert_int_equal(ld_rest_json_parse(dup, sizeof dup - 1, NULL, &j, err, sizeof err),
                   LD_ERR_MALFORMED);
  const uint8_t nul[] = "[\"a\\u0000b\"]";
  assert_int_equal(ld_rest_json_parse(nul, sizeof nul - 1, NULL, &j, err, sizeof err),
                   LD_ERR_MALFORMED);
}

static void timestamps_keep_all_64_bits(void **state) {
  (void)state;
  /* 2^53 + 1 and INT64_MAX: a double would lose the last digits */
  const char *text = "{\"payload\":\"aGk=\",\"contentTopic\":\"/app/1/chat/proto\","
                     "\"timestamp\":9007199254740993}";
  json_t *j = parse(text);
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  char err[LD_REST_ERR_MAX];
  assert_int_equal(ld_rest_message_from_json(j, NOW, true, 0, &m, err, sizeof err), 0);
  assert_true(m.timestamp == 9007199254740993LL);
  json_decref(j);
  j = parse(
      "{\"payload\":\"aGk=\",\"contentTopic\":\"/a/1/c/p\",\"timestamp\":9223372036854775807}");
  assert_int_equal(ld_rest_message_from_json(j, NOW, true, 0, &m, err, sizeof err), 0);
  assert_true(m.timestamp == INT64_MAX);
  json_decref(j);
  /* negative values are int64 too */
  j = parse("{\"payload\":\"aGk=\",\"contentTopic\":\"/a/1/c/p\",\"timestamp\":-5}");
  assert_int_equal(ld_rest_message_from_json(j, NOW, true, 0, &m, err, sizeof err), 0);
  assert_true(m.timestamp == -5);
  json_decref(j);
  /* and they go out the same way */
  m.timestamp = 1712345678901234567LL;
  json_t *out = ld_rest_message_to_json(&m);
  char *dumped = json_dumps(out, JSON_COMPACT);
  assert_non_null(strstr(dumped, "\"timestamp\":1712345678901234567"));
  free(dumped);
  json_decref(out);
  ld_waku_message_clear(&m);
}

static void timestamp_beyond_int64_or_real_is_refused(void **state) {
  (void)state;
  json_t *j = NULL;
  char err[LD_REST_ERR_MAX];
  const char *big = "{\"payload\":\"aGk=\",\"contentTopic\":\"/a/1/c/p\","
                    "\"timestamp\":9223372036854775808}";
  assert_int_equal(ld_rest_json_parse((const uint8_t *)big, strlen(big), NULL, &j, err, sizeof err),
                   LD_ERR_MALFORMED);
  assert_int_equal(message_err("{\"payload\":\"aGk=\",\"contentTopic\":\"/a/1/c/p\","
                               "\"timestamp\":1.5e18}",
                               err, sizeof err),
                   LD_ERR_MALFORMED);
  assert_string_equal(err, "Field `timestamp` must be an int64");
  assert_int_equal(message_err("{\"payload\":\"aGk=\",\"contentTopic\":\"/a/1/c/p\","
                               "\"timestamp\":\"17\"}",
                               err, sizeof err),
                   LD_ERR_MALFORMED);
  assert_int_equal(message_err("{\"payload\":\"aGk=\",\"contentTopic\":\"/a/1/c/p\","
                               "\"timestamp\":null}",
                               err, sizeof err),
                   LD_ERR_MALFORMED);
}

static void missing_or_zero_timestamp_becomes_now(void **state) {
  (void)state;
  char err[LD_REST_ERR_MAX];
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  json_t *j = parse("{\"payload\":\"aGk=\",\"contentTopic\":\"/a/1/c/p\"}");
  assert_int_equal(ld_rest_message_from_json(j, NOW, true, 0, &m, err, sizeof err), 0);
  assert_true(m.timestamp == NOW);
  json_decref(j);
  j = parse("{\"payload\":\"aGk=\",\"contentTopic\":\"/a/1/c/p\",\"timestamp\":0}");
  assert_int_equal(ld_rest_message_from_json(j, NOW, true, 0, &m, err, sizeof err), 0);
  assert_true(m.timestamp == NOW);
  json_decref(j);
  ld_waku_message_clear(&m);
}

static void reads_every_field(void **state) {
  (void)state;
  char err[LD_REST_ERR_MAX];
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  json_t *j = parse("{\"payload\":\"AAEC/w==\",\"contentTopic\":\"/toy/2/x/json\",\"version\":1,"
                    "\"timestamp\":5,\"meta\":\"bWV0YQ==\",\"ephemeral\":true,\"proof\":\"cHI=\","
                    "\"unknown\":[1,2]}");
  assert_int_equal(ld_rest_message_from_json(j, NOW, true, 0, &m, err, sizeof err), 0);
  json_decref(j);
  const uint8_t payload[] = {0, 1, 2, 0xff};
  assert_int_equal(m.payload_len, 4);
  assert_memory_equal(m.payload, payload, 4);
  assert_int_equal(m.content_topic_len, strlen("/toy/2/x/json"));
  assert_memory_equal(m.content_topic, "/toy/2/x/json", m.content_topic_len);
  assert_int_equal(m.version, 1);
  assert_true(m.timestamp == 5);
  assert_int_equal(m.meta_len, 4);
  assert_memory_equal(m.meta, "meta", 4);
  assert_true(m.ephemeral);
  assert_int_equal(m.proof_len, 2);
  /* unpadded base64 is tolerated */
  j = parse("{\"payload\":\"aGk\",\"contentTopic\":\"/a/1/c/p\"}");
  assert_int_equal(ld_rest_message_from_json(j, NOW, true, 0, &m, err, sizeof err), 0);
  assert_int_equal(m.payload_len, 2);
  assert_memory_equal(m.payload, "hi", 2);
  json_decref(j);
  /* without the content-topic requirement the default topic fills in */
  j = parse("{\"payload\":\"aGk=\"}");
  assert_int_equal(ld_rest_message_from_json(j, NOW, false, 0, &m, err, sizeof err), 0);
  assert_int_equal(m.content_topic_len, strlen("/waku/2/default-content/proto"));
  json_decref(j);
  ld_waku_message_clear(&m);
}

static void bad_messages_get_nwaku_reasons(void **state) {
  (void)state;
  char err[LD_REST_ERR_MAX];
  static const struct {
    const char *json;
    int rc;
    const char *err;
  } cases[] = {
      {"{\"contentTopic\":\"/a/1/c/p\"}", LD_ERR_MALFORMED, "Field `payload` is missing or empty"},
      {"{\"payload\":\"\",\"contentTopic\":\"/a/1/c/p\"}", LD_ERR_MALFORMED,
       "Field `payload` is missing or empty"},
      {"{\"payload\":\"  \",\"contentTopic\":\"/a/1/c/p\"}", LD_ERR_MALFORMED,
       "Field `payload` is missing or empty"},
      {"{\"payload\":12,\"contentTopic\":\"/a/1/c/p\"}", LD_ERR_MALFORMED,
       "Field `payload` is missing or empty"},
      {"{\"payload\":\"aGk=\"}", LD_ERR_MALFORMED, "Field `contentTopic` is missing or empty"},
      {"{\"payload\":\"aGk=\",\"contentTopic\":\"\"}", LD_ERR_MALFORMED,
       "Field `contentTopic` is missing or empty"},
      {"{\"payload\":\"aGk=\",\"contentTopic\":\" \\t\"}", LD_ERR_MALFORMED,
       "Field `contentTopic` is missing or empty"},
      {"{\"payload\":\"a$k=\",\"contentTopic\":\"/a/1/c/p\"}", LD_ERR_BAD_ENCODING,
       "Incorrect base64 string in field `payload`"},
      {"{\"payload\":\"aGk=\",\"contentTopic\":\"/a/1/c/p\",\"meta\":\"@@\"}", LD_ERR_BAD_ENCODING,
       "Incorrect base64 string in field `meta`"},
      {"{\"payload\":\"aGk=\",\"contentTopic\":\"/a/1/c/p\",\"version\":-1}", LD_ERR_MALFORMED,
       "Field `version` must be an unsigned 32-bit integer"},
      {"{\"payload\":\"aGk=\",\"contentTopic\":\"/a/1/c/p\",\"version\":4294967296}",
       LD_ERR_MALFORMED, "Field `version` must be an unsigned 32-bit integer"},
      {"{\"payload\":\"aGk=\",\"contentTopic\":\"/a/1/c/p\",\"ephemeral\":1}", LD_ERR_MALFORMED,
       "Field `ephemeral` must be a boolean"},
      {"[1]", LD_ERR_MALFORMED, "Expected a JSON object"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    assert_int_equal(message_err(cases[i].json, err, sizeof err), cases[i].rc);
    assert_string_equal(err, cases[i].err);
  }
  /* meta of 65 bytes */
  char text[256];
  snprintf(
      text, sizeof text, "{\"payload\":\"aGk=\",\"contentTopic\":\"/a/1/c/p\",\"meta\":\"%s\"}",
      "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=");
  assert_int_equal(message_err(text, err, sizeof err), LD_ERR_MALFORMED);
  assert_string_equal(err, "Field `meta` is longer than 64 bytes");
  /* payload cap */
  json_t *j = parse("{\"payload\":\"AAAAAAAA\",\"contentTopic\":\"/a/1/c/p\"}");
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  assert_int_equal(ld_rest_message_from_json(j, NOW, true, 5, &m, err, sizeof err),
                   LD_ERR_TOO_LARGE);
  assert_int_equal(ld_rest_message_from_json(j, NOW, true, 6, &m, err, sizeof err), 0);
  ld_waku_message_clear(&m);
  json_decref(j);
}

/* Payload "hi" on /a/1/c/p, every other field at its default. */
static ld_waku_message_t hi_message(void) {
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = (const uint8_t *)"hi";
  m.payload_len = 2;
  m.content_topic = "/a/1/c/p";
  m.content_topic_len = 8;
  return m;
}

static void encodes_nwaku_field_order(void **state) {
  (void)state;
  ld_waku_message_t m = hi_message();
  m.version = 0;
  m.timestamp = 42;
  json_t *j = ld_rest_message_to_json(&m);
  char *text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
  assert_string_equal(text, "{\"payload\":\"aGk=\",\"contentTopic\":\"/a/1/c/p\",\"version\":0,"
                            "\"timestamp\":42,\"ephemeral\":false,\"proof\":\"\"}");
  free(text);
  json_decref(j);
  m.meta = (const uint8_t *)"m";
  m.meta_len = 1;
  m.ephemeral = true;
  j = ld_rest_message_to_json(&m);
  text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
  assert_string_equal(text,
                      "{\"payload\":\"aGk=\",\"contentTopic\":\"/a/1/c/p\",\"version\":0,"
                      "\"timestamp\":42,\"meta\":\"bQ==\",\"ephemeral\":true,\"proof\":\"\"}");
  free(text);
  json_decref(j);
}

static char *dump(json_t *j) {
  assert_non_null(j);
  char *text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
  json_decref(j);
  assert_non_null(text);
  return text;
}

static void sparse_form_leaves_out_unset_fields(void **state) {
  (void)state;
  ld_waku_message_t m = hi_message();
  char *text = dump(ld_rest_message_to_sparse_json(&m));
  assert_string_equal(text, "{\"payload\":\"aGk=\",\"contentTopic\":\"/a/1/c/p\"}");
  free(text);
  m.version = 1;
  m.timestamp = 42;
  m.meta = (const uint8_t *)"m";
  m.meta_len = 1;
  m.ephemeral = true;
  m.proof = (const uint8_t *)"p";
  m.proof_len = 1;
  text = dump(ld_rest_message_to_sparse_json(&m));
  assert_string_equal(text, "{\"payload\":\"aGk=\",\"contentTopic\":\"/a/1/c/p\",\"version\":1,"
                            "\"timestamp\":42,\"meta\":\"bQ==\",\"ephemeral\":true,"
                            "\"proof\":\"cA==\"}");
  free(text);
}

static void base64_with_or_without_padding(void **state) {
  (void)state;
  static const struct {
    const char *text;
    const char *bytes;
  } ok[] = {{"", ""},     {"aGk=", "hi"}, {"aGk", "hi"},       {"aA", "h"},
            {"aA=", "h"}, {"aA==", "h"},  {"aGVsbG8", "hello"}};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    uint8_t *out = NULL;
    size_t n = 99;
    assert_int_equal(ld_rest_base64_decode(ok[i].text, strlen(ok[i].text), &out, &n), 0);
    assert_non_null(out);
    assert_int_equal(n, strlen(ok[i].bytes));
    assert_memory_equal(out, ok[i].bytes, n);
    free(out);
  }
  static const char *const bad[] = {"a", "aGk=a", "a=Gk", "aG!k", "aGk==="};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    uint8_t *out = NULL;
    size_t n = 0;
    assert_int_equal(ld_rest_base64_decode(bad[i], strlen(bad[i]), &out, &n), LD_ERR_BAD_ENCODING);
    assert_null(out);
  }
}

static void small_values(void **state) {
  (void)state;
  char *text = dump(ld_rest_json_base64((const uint8_t *)"hello", 5));
  assert_string_equal(text, "\"aGVsbG8=\"");
  free(text);
  text = dump(ld_rest_json_base64(NULL, 0));
  assert_string_equal(text, "\"\"");
  free(text);
  uint8_t hash[LD_WAKU_HASH_LEN];
  for (size_t i = 0; i < sizeof hash; i++)
    hash[i] = (uint8_t)i;
  text = dump(ld_rest_json_hash(hash));
  assert_string_equal(text,
                      "\"0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\"");
  free(text);
  json_t *o = json_object();
  assert_int_equal(ld_rest_json_set(o, "a", json_integer(1)), 0);
  assert_int_equal(ld_rest_json_set(o, "b", NULL), -1);
  assert_int_equal(json_object_size(o), 1);
  text = dump(o);
  assert_string_equal(text, "{\"a\":1}");
  free(text);
}

static void strings_from_any_bytes(void **state) {
  (void)state;
  json_t *j = ld_rest_json_string("a\xff"
                                  "b\xc3",
                                  4);
  assert_non_null(j);
  assert_string_equal(json_string_value(j), "a\xEF\xBF\xBD"
                                            "b\xEF\xBF\xBD");
  json_decref(j);
  j = ld_rest_json_string("\xed\xa0\x80", 3); /* a surrogate is not valid UTF-8 */
  assert_string_equal(json_string_value(j), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  json_decref(j);
  j = ld_rest_json_string("caf\xc3\xa9", 5);
  assert_string_equal(json_string_value(j), "caf\xc3\xa9");
  json_decref(j);
  j = ld_rest_json_string(NULL, 0);
  assert_string_equal(json_string_value(j), "");
  json_decref(j);
  j = ld_rest_json_string(NULL, 5); /* no text is "", whatever the length */
  assert_string_equal(json_string_value(j), "");
  json_decref(j);
}

static void string_lists(void **state) {
  (void)state;
  char err[LD_REST_ERR_MAX];
  const char **list = NULL;
  size_t n = 9;
  json_t *j = parse("[]");
  assert_int_equal(ld_rest_json_strings(j, &list, &n, err, sizeof err), 0);
  assert_int_equal(n, 0);
  assert_null(list);
  json_decref(j);
  j = parse("[\"/waku/2/rs/0/0\",\"x\"]");
  assert_int_equal(ld_rest_json_strings(j, &list, &n, err, sizeof err), 0);
  assert_int_equal(n, 2);
  assert_string_equal(list[0], "/waku/2/rs/0/0");
  free(list);
  json_decref(j);
  j = parse("[\"a\",1]");
  assert_int_equal(ld_rest_json_strings(j, &list, &n, err, sizeof err), LD_ERR_MALFORMED);
  json_decref(j);
  j = parse("{\"a\":1}");
  assert_int_equal(ld_rest_json_strings(j, &list, &n, err, sizeof err), LD_ERR_MALFORMED);
  json_decref(j);
  assert_true(ld_rest_is_blank(" \t\r\n", 4));
  assert_false(ld_rest_is_blank(" x", 2));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(body_checks_follow_nwaku),
      cmocka_unit_test(timestamps_keep_all_64_bits),
      cmocka_unit_test(timestamp_beyond_int64_or_real_is_refused),
      cmocka_unit_test(missing_or_zero_timestamp_becomes_now),
      cmocka_unit_test(reads_every_field),
      cmocka_unit_test(bad_messages_get_nwaku_reasons),
      cmocka_unit_test(encodes_nwaku_field_order),
      cmocka_unit_test(sparse_form_leaves_out_unset_fields),
      cmocka_unit_test(base64_with_or_without_padding),
      cmocka_unit_test(small_values),
      cmocka_unit_test(strings_from_any_bytes),
      cmocka_unit_test(string_lists),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
