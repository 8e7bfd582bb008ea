/* The message JSON of the C API: logosdelivery_send's messageJson and the kernel tier's
 * jsonWakuMessage, their leniency, their caps and their exact error texts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "base/buf.h"
#include "lib/message_json.h"

#define MAX_PAYLOAD 1024

static int send_parse(const char *json, ld_lib_send_message_t *m, char *err, size_t cap) {
  return ld_lib_send_message_parse(json, strlen(json), MAX_PAYLOAD, m, err, cap);
}

static void send_expect_error(const char *json, int rc, const char *text) {
  ld_lib_send_message_t m;
  char err[256] = "";
  assert_int_equal(send_parse(json, &m, err, sizeof err), rc);
  assert_string_equal(err, text);
  assert_null(m.content_topic);
  assert_null(m.payload);
}

static void send_reads_topic_payload_and_ephemeral(void **state) {
  (void)state;
  ld_lib_send_message_t m;
  char err[256];
  const char *json =
      "{\"contentTopic\":\"/app/1/chat/proto\",\"payload\":\"aGVsbG8=\",\"ephemeral\":true,"
      "\"other\":[1,2]}";
  assert_int_equal(send_parse(json, &m, err, sizeof err), 0);
  assert_string_equal(m.content_topic, "/app/1/chat/proto");
  assert_int_equal(m.payload_len, 5);
  assert_memory_equal(m.payload, "hello", 5);
  assert_true(m.ephemeral);
  ld_lib_send_message_clear(&m);
  assert_null(m.content_topic);

  assert_int_equal(
      send_parse("{\"contentTopic\":\"/a/1/b/c\",\"payload\":\"\"}", &m, err, sizeof err), 0);
  assert_null(m.payload);
  assert_int_equal(m.payload_len, 0);
  assert_false(m.ephemeral);
  ld_lib_send_message_clear(&m);
}

/* A field of the wrong JSON type reads as empty or false, as the Nim library reads it. */
static void send_is_lenient_about_types(void **state) {
  (void)state;
  ld_lib_send_message_t m;
  char err[256];
  assert_int_equal(send_parse("{\"contentTopic\":42,\"payload\":null,\"ephemeral\":\"yes\"}", &m,
                              err, sizeof err),
                   0);
  assert_string_equal(m.content_topic, "");
  assert_int_equal(m.payload_len, 0);
  assert_false(m.ephemeral);
  ld_lib_send_message_clear(&m);
}

static void send_errors_are_exact(void **state) {
  (void)state;
  send_expect_error("{\"payload\":\"aGk=\"}", LD_ERR_MISSING_FIELD, "Missing contentTopic field");
  send_expect_error("{}", LD_ERR_MISSING_FIELD, "Missing contentTopic field");
  send_expect_error("{\"contentTopic\":\"/a/1/b/c\"}", LD_ERR_MISSING_FIELD,
                    "Missing payload field");
  send_expect_error("[1,2]", LD_ERR_MALFORMED, "Failed to parse message JSON: not a JSON object");
  send_expect_error("{\"contentTopic\":\"/a/1/b/c\",\"payload\":\"@@@@\"}", LD_ERR_BAD_ENCODING,
                    "invalid payload format: invalid base64 encoding");
  send_expect_error("{\"contentTopic\":\"/a/1/b/c\",\"payload\":\"aGVsb\"}", LD_ERR_BAD_ENCODING,
                    "invalid payload format: invalid base64 encoding");
  send_expect_error("{\"contentTopic\":\"/a/1/b/c\",\"payload\":\"aGk=aGk\"}", LD_ERR_BAD_ENCODING,
                    "invalid payload format: invalid base64 encoding");

  ld_lib_send_message_t m;
  char err[256];
  assert_int_equal(send_parse("{\"contentTopic\":", &m, err, sizeof err), LD_ERR_MALFORMED);
  assert_non_null(strstr(err, "Failed to parse message JSON: "));
  assert_int_equal(send_parse("", &m, err, sizeof err), LD_ERR_MALFORMED);
  assert_int_equal(strncmp(err, "Failed to parse message JSON: ", 30), 0);
  /* jansson refuses \u0000 in strings: a C string could not carry it anyway */
  assert_int_equal(
      send_parse("{\"contentTopic\":\"a\\u0000b\",\"payload\":\"\"}", &m, err, sizeof err),
      LD_ERR_MALFORMED);
}

static void send_accepts_unpadded_base64(void **state) {
  (void)state;
  ld_lib_send_message_t m;
  char err[256];
  assert_int_equal(
      send_parse("{\"contentTopic\":\"/a/1/b/c\",\"payload\":\"aGVsbG8\"}", &m, err, sizeof err),
      0);
  assert_int_equal(m.payload_len, 5);
  assert_memory_equal(m.payload, "hello", 5);
  ld_lib_send_message_clear(&m);
  assert_int_equal(
      send_parse("{\"contentTopic\":\"/a/1/b/c\",\"payload\":\"aGk\"}", &m, err, sizeof err), 0);
  assert_int_equal(m.payload_len, 2);
  assert_memory_equal(m.payload, "hi", 2);
  ld_lib_send_message_clear(&m);
}

static void send_caps_payload_topic_and_input(void **state) {
  (void)state;
  ld_lib_send_message_t m;
  char err[256];
  /* 4 base64 characters decode to 3 bytes: over a cap of 2 */
  assert_int_equal(ld_lib_send_message_parse("{\"contentTopic\":\"/a/1/b/c\",\"payload\":\"aGVs\"}",
                                             44, 2, &m, err, sizeof err),
                   LD_ERR_TOO_LARGE);
  assert_string_equal(err, "invalid payload format: payload larger than 2 bytes");
  assert_int_equal(ld_lib_send_message_parse("{\"contentTopic\":\"/a/1/b/c\",\"payload\":\"aGVs\"}",
                                             44, 3, &m, err, sizeof err),
                   0);
  ld_lib_send_message_clear(&m);

  char json[600];
  char topic[257];
  memset(topic, 'x', 256);
  topic[256] = '\0';
  snprintf(json, sizeof json, "{\"contentTopic\":\"%s\",\"payload\":\"\"}", topic);
  assert_int_equal(send_parse(json, &m, err, sizeof err), LD_ERR_MALFORMED);
  assert_string_equal(err, "Failed to parse message JSON: contentTopic longer than 255 bytes");
  topic[255] = '\0';
  snprintf(json, sizeof json, "{\"contentTopic\":\"%s\",\"payload\":\"\"}", topic);
  assert_int_equal(send_parse(json, &m, err, sizeof err), 0);
  ld_lib_send_message_clear(&m);

  size_t big = LD_LIB_MESSAGE_JSON_MAX + 1;
  char *huge = malloc(big);
  assert_non_null(huge);
  memset(huge, ' ', big);
  assert_int_equal(ld_lib_send_message_parse(huge, big, MAX_PAYLOAD, &m, err, sizeof err),
                   LD_ERR_MALFORMED);
  assert_string_equal(err, "Failed to parse message JSON: input longer than 8388608 bytes");
  free(huge);
}

/* Only `len` bytes are read: the input need not be NUL-terminated. */
static void send_reads_only_len_bytes(void **state) {
  (void)state;
  const char text[] = "{\"contentTopic\":\"/a/1/b/c\",\"payload\":\"aGk=\"}garbage";
  ld_lib_send_message_t m;
  char err[256];
  assert_int_equal(
      ld_lib_send_message_parse(text, sizeof text - 1 - 7, MAX_PAYLOAD, &m, err, sizeof err), 0);
  ld_lib_send_message_clear(&m);
  assert_int_equal(
      ld_lib_send_message_parse(text, sizeof text - 1, MAX_PAYLOAD, &m, err, sizeof err),
      LD_ERR_MALFORMED);
}

/* ---- kernel jsonWakuMessage ----------------------------------------------------------------- */

static int kparse(const char *json, ld_lib_json_message_t *m, char *err, size_t cap) {
  return ld_lib_json_message_parse(json, strlen(json), MAX_PAYLOAD, m, err, cap);
}

static void kernel_expect_error(const char *json, int rc, const char *text) {
  ld_lib_json_message_t m;
  char err[256] = "";
  assert_int_equal(kparse(json, &m, err, sizeof err), rc);
  assert_string_equal(err, text);
  assert_null(m.content_topic);
  assert_int_equal(m.msg.payload_len, 0);
}

static void kernel_reads_every_field(void **state) {
  (void)state;
  ld_lib_json_message_t m;
  char err[256];
  const char *json = "{\"payload\":\"aGVsbG8=\",\"contentTopic\":\"/app/1/t/proto\",\"version\":2,"
                     "\"timestamp\":1700000000000000000,\"ephemeral\":true,\"meta\":\"AQID\","
                     "\"proof\":\"BAUG\"}";
  assert_int_equal(kparse(json, &m, err, sizeof err), 0);
  assert_int_equal(m.msg.payload_len, 5);
  assert_memory_equal(m.msg.payload, "hello", 5);
  assert_int_equal(m.msg.content_topic_len, strlen("/app/1/t/proto"));
  assert_memory_equal(m.msg.content_topic, "/app/1/t/proto", m.msg.content_topic_len);
  assert_int_equal(m.msg.version, 2);
  assert_true(m.msg.timestamp == 1700000000000000000LL);
  assert_true(m.msg.ephemeral);
  assert_int_equal(m.msg.meta_len, 3);
  assert_memory_equal(m.msg.meta, "\x01\x02\x03", 3);
  assert_int_equal(m.msg.proof_len, 3);
  assert_memory_equal(m.msg.proof, "\x04\x05\x06", 3);
  /* the views make an encodable message */
  ld_buf_t out;
  ld_buf_init(&out);
  assert_int_equal(ld_waku_message_encode(&m.msg, 0, &out), 0);
  ld_waku_message_t back;
  ld_waku_message_init(&back);
  assert_int_equal(ld_waku_message_decode(out.data, out.len, 0, 0, &back), 0);
  assert_true(ld_waku_message_equal(&back, &m.msg));
  ld_waku_message_clear(&back);
  ld_buf_clear(&out);
  ld_lib_json_message_clear(&m);
  assert_null(m.content_topic);
}

static void kernel_optional_fields_default(void **state) {
  (void)state;
  ld_lib_json_message_t m;
  char err[256];
  assert_int_equal(kparse("{\"payload\":\"\",\"contentTopic\":\"/a/1/b/c\",\"timestamp\":null,"
                          "\"version\":\"7\",\"ephemeral\":1}",
                          &m, err, sizeof err),
                   0);
  assert_int_equal(m.msg.payload_len, 0);
  assert_int_equal(m.msg.version, 0);
  assert_true(m.msg.timestamp == 0);
  assert_false(m.msg.ephemeral);
  assert_int_equal(m.msg.meta_len, 0);
  assert_int_equal(m.msg.proof_len, 0);
  ld_lib_json_message_clear(&m);
}

static void kernel_timestamp_as_number_or_decimal_string(void **state) {
  (void)state;
  ld_lib_json_message_t m;
  char err[256];
  assert_int_equal(kparse("{\"payload\":\"\",\"contentTopic\":\"/a/1/b/c\",\"timestamp\":"
                          "\"1700000000000000001\"}",
                          &m, err, sizeof err),
                   0);
  assert_true(m.msg.timestamp == 1700000000000000001LL);
  ld_lib_json_message_clear(&m);
  assert_int_equal(kparse("{\"payload\":\"\",\"contentTopic\":\"/a/1/b/c\",\"timestamp\":\"-5\"}",
                          &m, err, sizeof err),
                   0);
  assert_true(m.msg.timestamp == -5);
  ld_lib_json_message_clear(&m);
  const char *bad[] = {"\"12x\"", "\"\"", "\"99999999999999999999\"", "true", "1.5", "{}", "\"-\""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char json[128];
    snprintf(json, sizeof json, "{\"payload\":\"\",\"contentTopic\":\"/a/1/b/c\",\"timestamp\":%s}",
             bad[i]);
    kernel_expect_error(json, LD_ERR_MALFORMED,
                        "Error parsing json message: Invalid int64 value in `timestamp`");
  }
}

static void kernel_errors_are_exact(void **state) {
  (void)state;
  kernel_expect_error("{\"contentTopic\":\"/a/1/b/c\"}", LD_ERR_MISSING_FIELD,
                      "Error parsing json message: Missing required field in WakuMessage: payload");
  kernel_expect_error(
      "{\"payload\":\"\"}", LD_ERR_MISSING_FIELD,
      "Error parsing json message: Missing required field in WakuMessage: contentTopic");
  kernel_expect_error("\"text\"", LD_ERR_MALFORMED,
                      "Error parsing json message: not a JSON object");
  kernel_expect_error("{\"payload\":\"!!\",\"contentTopic\":\"/a/1/b/c\"}", LD_ERR_BAD_ENCODING,
                      "Problem building the WakuMessage: invalid payload format: invalid base64 "
                      "encoding");
  kernel_expect_error("{\"payload\":\"\",\"contentTopic\":\"/a/1/b/c\",\"meta\":\"A\"}",
                      LD_ERR_BAD_ENCODING,
                      "Problem building the WakuMessage: invalid meta format: invalid base64 "
                      "encoding");
  kernel_expect_error("{\"payload\":\"\",\"contentTopic\":\"/a/1/b/c\",\"proof\":\"*\"}",
                      LD_ERR_BAD_ENCODING,
                      "Problem building the WakuMessage: invalid proof format: invalid base64 "
                      "encoding");
  kernel_expect_error("{\"payload\":\"\",\"contentTopic\":\"/a/1/b/c\",\"version\":-1}",
                      LD_ERR_MALFORMED,
                      "Error parsing json message: Invalid uint32 value in `version`");
  kernel_expect_error("{\"payload\":\"\",\"contentTopic\":\"/a/1/b/c\",\"version\":4294967296}",
                      LD_ERR_MALFORMED,
                      "Error parsing json message: Invalid uint32 value in `version`");
  /* parse-level problems are reported before decoding ones */
  kernel_expect_error("{\"payload\":\"!!\",\"contentTopic\":\"/a/1/b/c\",\"timestamp\":\"x\"}",
                      LD_ERR_MALFORMED,
                      "Error parsing json message: Invalid int64 value in `timestamp`");
  ld_lib_json_message_t m;
  char err[256];
  assert_int_equal(kparse("{\"payload\":", &m, err, sizeof err), LD_ERR_MALFORMED);
  assert_int_equal(strncmp(err, "Error parsing json message: ", 28), 0);
}

static void kernel_caps_meta_payload_and_proof(void **state) {
  (void)state;
  /* 65 bytes of meta: 88 base64 characters with "=" padding */
  char meta[89];
  memset(meta, 'A', 87);
  meta[87] = '=';
  meta[88] = '\0';
  char json[256];
  snprintf(json, sizeof json, "{\"payload\":\"\",\"contentTopic\":\"/a/1/b/c\",\"meta\":\"%s\"}",
           meta);
  kernel_expect_error(json, LD_ERR_FIELD_TOO_LONG,
                      "Problem building the WakuMessage: invalid meta format: meta larger than "
                      "64 bytes");
  ld_lib_json_message_t m;
  char err[256];
  const char *p = "{\"payload\":\"aGVsbG8=\",\"contentTopic\":\"/a/1/b/c\"}";
  assert_int_equal(ld_lib_json_message_parse(p, strlen(p), 4, &m, err, sizeof err),
                   LD_ERR_TOO_LARGE);
  assert_string_equal(err, "Problem building the WakuMessage: invalid payload format: payload "
                           "larger than 4 bytes");
  const char *q = "{\"payload\":\"\",\"contentTopic\":\"/a/1/b/c\",\"proof\":\"aGVsbG8=\"}";
  assert_int_equal(ld_lib_json_message_parse(q, strlen(q), 4, &m, err, sizeof err),
                   LD_ERR_TOO_LARGE);
  assert_string_equal(err, "Problem building the WakuMessage: invalid proof format: proof larger "
                           "than 4 bytes");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(send_reads_topic_payload_and_ephemeral),
      cmocka_unit_test(send_is_lenient_about_types),
      cmocka_unit_test(send_errors_are_exact),
      cmocka_unit_test(send_accepts_unpadded_base64),
      cmocka_unit_test(send_caps_payload_topic_and_input),
      cmocka_unit_test(send_reads_only_len_bytes),
      cmocka_unit_test(kernel_reads_every_field),
      cmocka_unit_test(kernel_optional_fields_default),
      cmocka_unit_test(kernel_timestamp_as_number_or_decimal_string),
      cmocka_unit_test(kernel_errors_are_exact),
      cmocka_unit_test(kernel_caps_meta_payload_and_proof),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
