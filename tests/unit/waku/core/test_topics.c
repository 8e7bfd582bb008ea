/* Content topics and static-shard pubsub topics (digest §2.1, §2.2). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "waku/core/topics.h"

static void assert_part(ld_topic_part_t p, const char *want) {
  assert_int_equal(p.len, strlen(want));
  assert_memory_equal(p.data, want, p.len);
}

static void parses_short_and_long_content_topics(void **state) {
  (void)state;
  ld_content_topic_t t;
  ld_topic_error_t why = LD_TOPIC_ERR_STRUCTURE;
  const char *s = "/toychat/2/huilong/proto";
  assert_int_equal(ld_content_topic_parse(s, strlen(s), &t, &why), 0);
  assert_int_equal(why, LD_TOPIC_OK);
  assert_false(t.has_generation);
  assert_part(t.application, "toychat");
  assert_part(t.version, "2");
  assert_part(t.name, "huilong");
  assert_part(t.encoding, "proto");
  assert_ptr_equal(t.application.data, s + 1); /* views into the text */

  s = "/0/statusim/1/community/cbor";
  assert_int_equal(ld_content_topic_parse(s, strlen(s), &t, NULL), 0);
  assert_true(t.has_generation);
  assert_int_equal(t.generation, 0);
  assert_part(t.application, "statusim");
  assert_part(t.version, "1");
  assert_part(t.name, "community");
  assert_part(t.encoding, "cbor");

  s = "/4294967295/a/b/c/d";
  assert_int_equal(ld_content_topic_parse(s, strlen(s), &t, NULL), 0);
  assert_int_equal(t.generation, 4294967295u);

  s = LD_WAKU_DEFAULT_CONTENT_TOPIC;
  assert_true(ld_content_topic_valid(s, strlen(s)));
  /* only the structure is checked: dots, dashes, spaces, UTF-8 pass */
  s = "/my app/1.0/näme/rfc-26";
  assert_true(ld_content_topic_valid(s, strlen(s)));
  /* the length is honoured: the text need not be NUL-terminated */
  s = "/a/b/c/dXXXX";
  assert_true(ld_content_topic_valid(s, 8));
  assert_int_equal(ld_content_topic_parse(s, 8, &t, NULL), 0);
  assert_part(t.encoding, "d");
}

static void content_topic_errors_are_named(void **state) {
  (void)state;
  const struct {
    const char *text;
    ld_topic_error_t why;
  } cases[] = {
      {"", LD_TOPIC_ERR_NO_LEADING_SLASH},
      {"invalid", LD_TOPIC_ERR_NO_LEADING_SLASH},
      {"toychat/2/huilong/proto", LD_TOPIC_ERR_NO_LEADING_SLASH},
      {"/", LD_TOPIC_ERR_STRUCTURE},
      {"/a/b/c", LD_TOPIC_ERR_STRUCTURE},
      {"/a/b/c/d/e/f", LD_TOPIC_ERR_STRUCTURE},
      {"/a/b/c/d/", LD_TOPIC_ERR_BAD_GENERATION}, /* a trailing slash makes 5 parts */
      {"//b/c/d", LD_TOPIC_ERR_MISSING_APPLICATION},
      {"/a//c/d", LD_TOPIC_ERR_MISSING_VERSION},
      {"/a/b//d", LD_TOPIC_ERR_MISSING_NAME},
      {"/a/b/c/", LD_TOPIC_ERR_MISSING_ENCODING},
      {"//a/b/c/d", LD_TOPIC_ERR_MISSING_GENERATION},
      {"/x/a/b/c/d", LD_TOPIC_ERR_BAD_GENERATION},
      {"/-1/a/b/c/d", LD_TOPIC_ERR_BAD_GENERATION},
      {"/4294967296/a/b/c/d", LD_TOPIC_ERR_BAD_GENERATION},
      {"/0//b/c/d", LD_TOPIC_ERR_MISSING_APPLICATION},
      {"/0/a//c/d", LD_TOPIC_ERR_MISSING_VERSION},
      {"/0/a/b//d", LD_TOPIC_ERR_MISSING_NAME},
      {"/0/a/b/c/", LD_TOPIC_ERR_MISSING_ENCODING},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ld_content_topic_t t;
    memset(&t, 0x5a, sizeof t);
    ld_topic_error_t why = LD_TOPIC_OK;
    int rc = ld_content_topic_parse(cases[i].text, strlen(cases[i].text), &t, &why);
    if (rc != LD_ERR_BAD_CONTENT_TOPIC || why != cases[i].why)
      fail_msg("'%s': %s / %s", cases[i].text, ld_errname(rc), ld_topic_errname(why));
    assert_false(ld_content_topic_valid(cases[i].text, strlen(cases[i].text)));
    assert_int_equal(t.generation, 0x5a5a5a5a); /* untouched on failure */
  }
  ld_content_topic_t t;
  assert_int_equal(ld_content_topic_parse(NULL, 3, &t, NULL), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_content_topic_parse("/a/b/c/d", 8, NULL, NULL), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_content_topic_parse(NULL, 0, &t, NULL), LD_ERR_BAD_CONTENT_TOPIC);
}

static void reasons_have_names_and_nwaku_texts(void **state) {
  (void)state;
  assert_string_equal(ld_topic_strerror(LD_TOPIC_ERR_MISSING_APPLICATION),
                      "missing part: application");
  assert_string_equal(ld_topic_strerror(LD_TOPIC_ERR_MISSING_NAME), "missing part: topic-name");
  assert_string_equal(ld_topic_strerror(LD_TOPIC_ERR_GENERATION_UNSUPPORTED),
                      "Generation > 0 are not supported yet");
  assert_string_equal(ld_topic_strerror(LD_TOPIC_ERR_NOT_STATIC_SHARD),
                      "invalid format: must start with /waku/2/rs");
  assert_string_equal(ld_topic_strerror(LD_TOPIC_ERR_MISSING_SHARD), "missing part: shard_number");
  assert_string_equal(ld_topic_errname(LD_TOPIC_ERR_BAD_GENERATION), "BAD_GENERATION");
  assert_string_equal(ld_topic_errname((ld_topic_error_t)999), "UNKNOWN");
  assert_non_null(ld_topic_strerror((ld_topic_error_t)999));
  for (int e = LD_TOPIC_OK; e <= LD_TOPIC_ERR_BAD_SHARD; e++) {
    assert_non_null(ld_topic_errname((ld_topic_error_t)e));
    assert_string_not_equal(ld_topic_errname((ld_topic_error_t)e), "UNKNOWN");
    assert_true(strlen(ld_topic_strerror((ld_topic_error_t)e)) > 0);
  }
  assert_string_equal(ld_errname(LD_ERR_BAD_CONTENT_TOPIC), "BAD_CONTENT_TOPIC");
  assert_string_equal(ld_errname(LD_ERR_BAD_PUBSUB_TOPIC), "BAD_PUBSUB_TOPIC");
}

static void formats_content_topics(void **state) {
  (void)state;
  const char *topics[] = {"/toychat/2/huilong/proto", "/0/toychat/2/huilong/proto", "/7/a/b/c/d",
                          LD_WAKU_DEFAULT_CONTENT_TOPIC};
  for (size_t i = 0; i < sizeof topics / sizeof topics[0]; i++) {
    ld_content_topic_t t;
    char out[64];
    assert_int_equal(ld_content_topic_parse(topics[i], strlen(topics[i]), &t, NULL), 0);
    assert_int_equal(ld_content_topic_format(&t, out, sizeof out), (int)strlen(topics[i]));
    assert_string_equal(out, topics[i]);
    /* exactly enough room, then one char short */
    assert_int_equal(ld_content_topic_format(&t, out, strlen(topics[i]) + 1),
                     (int)strlen(topics[i]));
    assert_int_equal(ld_content_topic_format(&t, out, strlen(topics[i])), LD_ERR_LIMIT);
  }
  /* the generation is a number: leading zeros are not kept (as nwaku prints it) */
  ld_content_topic_t t;
  char out[64];
  assert_int_equal(ld_content_topic_parse("/007/a/b/c/d", 12, &t, NULL), 0);
  assert_int_equal(t.generation, 7);
  assert_int_equal(ld_content_topic_format(&t, out, sizeof out), 10);
  assert_string_equal(out, "/7/a/b/c/d");
  /* built from parts */
  ld_content_topic_t built = {.has_generation = false,
                              .application = {"app", 3},
                              .version = {"1", 1},
                              .name = {"chat", 4},
                              .encoding = {"json", 4}};
  assert_int_equal(ld_content_topic_format(&built, out, sizeof out), 16);
  assert_string_equal(out, "/app/1/chat/json");
  built.name.data = NULL;
  assert_int_equal(ld_content_topic_format(&built, out, sizeof out), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_content_topic_format(NULL, out, sizeof out), LD_ERR_INVALID_ARG);
}

/* ---- pubsub topics -------------------------------------------------------------------------- */

static void parses_static_shard_topics(void **state) {
  (void)state;
  const struct {
    const char *text;
    uint16_t cluster, shard;
  } cases[] = {
      {"/waku/2/rs/0/1", 0, 1},
      {LD_WAKU_DEFAULT_PUBSUB_TOPIC, 0, 0},
      {"/waku/2/rs/1/3", 1, 3},
      {"/waku/2/rs/16/32", 16, 32},
      {"/waku/2/rs/65535/65535", 65535, 65535},
      {"/waku/2/rs/10/1023", 10, 1023},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ld_relay_shard_t s = {9, 9};
    ld_topic_error_t why = LD_TOPIC_ERR_STRUCTURE;
    assert_int_equal(ld_pubsub_topic_parse(cases[i].text, strlen(cases[i].text), &s, &why), 0);
    assert_int_equal(why, LD_TOPIC_OK);
    assert_int_equal(s.cluster_id, cases[i].cluster);
    assert_int_equal(s.shard_id, cases[i].shard);
    assert_true(ld_pubsub_topic_valid(cases[i].text, strlen(cases[i].text)));
    char out[LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1];
    assert_int_equal(ld_pubsub_topic_format(s, out, sizeof out), (int)strlen(cases[i].text));
    assert_string_equal(out, cases[i].text);
  }
  assert_int_equal(strlen("/waku/2/rs/65535/65535"), LD_WAKU_PUBSUB_TOPIC_MAX_LEN);
}

static void pubsub_topic_errors_are_named(void **state) {
  (void)state;
  const struct {
    const char *text;
    ld_topic_error_t why;
  } cases[] = {
      {"", LD_TOPIC_ERR_NOT_STATIC_SHARD},
      {"/waku/2/default-waku/proto", LD_TOPIC_ERR_NOT_STATIC_SHARD},
      {"/waku/2/rs", LD_TOPIC_ERR_NOT_STATIC_SHARD},
      {"/waku/2/rsX1/2", LD_TOPIC_ERR_NOT_STATIC_SHARD},
      {"/WAKU/2/rs/1/2", LD_TOPIC_ERR_NOT_STATIC_SHARD},
      {"/waku/2/rs/", LD_TOPIC_ERR_PUBSUB_STRUCTURE},
      {"/waku/2/rs/1", LD_TOPIC_ERR_PUBSUB_STRUCTURE},
      {"/waku/2/rs/1/2/3", LD_TOPIC_ERR_PUBSUB_STRUCTURE},
      {"/waku/2/rs/1/2/", LD_TOPIC_ERR_PUBSUB_STRUCTURE},
      {"/waku/2/rs//2", LD_TOPIC_ERR_MISSING_CLUSTER},
      {"/waku/2/rs/1/", LD_TOPIC_ERR_MISSING_SHARD},
      {"/waku/2/rs/65536/0", LD_TOPIC_ERR_BAD_CLUSTER},
      {"/waku/2/rs/01/0", LD_TOPIC_ERR_BAD_CLUSTER},
      {"/waku/2/rs/-1/0", LD_TOPIC_ERR_BAD_CLUSTER},
      {"/waku/2/rs/+1/0", LD_TOPIC_ERR_BAD_CLUSTER},
      {"/waku/2/rs/ 1/0", LD_TOPIC_ERR_BAD_CLUSTER},
      {"/waku/2/rs/x/0", LD_TOPIC_ERR_BAD_CLUSTER},
      {"/waku/2/rs/1/x", LD_TOPIC_ERR_BAD_SHARD},
      {"/waku/2/rs/1/00", LD_TOPIC_ERR_BAD_SHARD},
      {"/waku/2/rs/1/65536", LD_TOPIC_ERR_BAD_SHARD},
      {"/waku/2/rs/1/99999999999999999999999", LD_TOPIC_ERR_BAD_SHARD},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ld_relay_shard_t s = {7, 7};
    ld_topic_error_t why = LD_TOPIC_OK;
    int rc = ld_pubsub_topic_parse(cases[i].text, strlen(cases[i].text), &s, &why);
    if (rc != LD_ERR_BAD_PUBSUB_TOPIC || why != cases[i].why)
      fail_msg("'%s': %s / %s", cases[i].text, ld_errname(rc), ld_topic_errname(why));
    assert_int_equal(s.cluster_id, 7);
    assert_int_equal(s.shard_id, 7);
    assert_false(ld_pubsub_topic_valid(cases[i].text, strlen(cases[i].text)));
  }
  /* the text is counted, not NUL-terminated */
  ld_relay_shard_t s;
  assert_int_equal(ld_pubsub_topic_parse("/waku/2/rs/1/23", 14, &s, NULL), 0);
  assert_int_equal(s.shard_id, 2);
  assert_int_equal(ld_pubsub_topic_parse(NULL, 1, &s, NULL), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_pubsub_topic_parse("/waku/2/rs/1/2", 14, NULL, NULL), LD_ERR_INVALID_ARG);
}

static void formats_pubsub_topics_within_the_room_given(void **state) {
  (void)state;
  char out[32];
  ld_relay_shard_t s = {1, 7};
  assert_int_equal(ld_pubsub_topic_format(s, out, 15), 14);
  assert_string_equal(out, "/waku/2/rs/1/7");
  assert_int_equal(ld_pubsub_topic_format(s, out, 14), LD_ERR_LIMIT);
  assert_int_equal(ld_pubsub_topic_format(s, out, 0), LD_ERR_LIMIT);
  assert_int_equal(ld_pubsub_topic_format(s, NULL, 10), LD_ERR_INVALID_ARG);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(parses_short_and_long_content_topics),
      cmocka_unit_test(content_topic_errors_are_named),
      cmocka_unit_test(reasons_have_names_and_nwaku_texts),
      cmocka_unit_test(formats_content_topics),
      cmocka_unit_test(parses_static_shard_topics),
      cmocka_unit_test(pubsub_topic_errors_are_named),
      cmocka_unit_test(formats_pubsub_topics_within_the_room_given),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
