/* The query string of GET /store/v3/messages: nwaku's defaults, its parsing of booleans,
 * integers, hashes and peer addresses, the caps, and the 400 reasons. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "rest/json.h"
#include "rest/store_query.h"

#define PEER "16Uiu2HAmAc9H4ckpNyweSv1f4Jk3A6kvyd6UT4bH26XLy2pr2paP"
#define HASH_HEX "9e0ea917677a3d2b8610b0126986d89824b6acf76008b5fb9aa8b99ac906c1a7"
/* base64 of the 32 bytes 0x00, 0x01, …, 0x1f */
#define HASH_B64 "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

static char g_err[LD_REST_ERR_MAX];

static int parse(const ld_rest_store_params_t *p, ld_rest_store_request_t *r) {
  g_err[0] = '\0';
  return ld_rest_store_query_parse(p, r, g_err, sizeof g_err);
}

/* Expects `p` to fail with `code` and exactly `text`. */
static void expect_error(const ld_rest_store_params_t *p, int code, const char *text) {
  ld_rest_store_request_t r;
  assert_int_equal(parse(p, &r), code);
  assert_string_equal(g_err, text);
}

static void defaults_follow_nwaku(void **state) {
  (void)state;
  ld_rest_store_params_t p = {0};
  ld_rest_store_request_t r;
  assert_int_equal(parse(&p, &r), 0);
  const ld_rest_store_query_t *q = &r.query;
  assert_false(q->include_data);
  assert_null(q->pubsub_topic);
  assert_int_equal(q->n_content_topics, 0);
  assert_false(q->has_start_time);
  assert_false(q->has_end_time);
  assert_int_equal(q->n_hashes, 0);
  assert_false(q->has_cursor);
  assert_true(q->forward);
  assert_int_equal(q->page_size, LD_REST_STORE_DEFAULT_PAGE_SIZE);
  assert_null(q->peer_addr);
  assert_null(q->peer_id);
  ld_rest_store_request_clear(&r);
  /* empty values count as absent */
  p = (ld_rest_store_params_t){"", "", "", "", "", "", "", "", "", ""};
  assert_int_equal(parse(&p, &r), 0);
  assert_true(r.query.forward);
  assert_null(r.query.pubsub_topic);
  assert_int_equal(r.query.page_size, 20);
  ld_rest_store_request_clear(&r);
}

static void every_parameter_is_read(void **state) {
  (void)state;
  ld_rest_store_params_t p = {
      .peer_addr = "/ip4/127.0.0.1/tcp/60001/p2p/" PEER,
      .include_data = "true",
      .pubsub_topic = "/waku/2/rs/0/0",
      .content_topics = "/a/1/b/proto,,/c/1/d/proto,",
      .start_time = "1712345678901234567",
      .end_time = "+1712345678901234999",
      .hashes = "0x" HASH_HEX "," HASH_B64,
      .cursor = "0X9E0EA917677A3D2B8610B0126986D89824B6ACF76008B5FB9AA8B99AC906C1A7",
      .ascending = "false",
      .page_size = "5",
  };
  ld_rest_store_request_t r;
  assert_int_equal(parse(&p, &r), 0);
  const ld_rest_store_query_t *q = &r.query;
  assert_true(q->include_data);
  assert_string_equal(q->pubsub_topic, "/waku/2/rs/0/0");
  assert_int_equal(q->n_content_topics, 2);
  assert_string_equal(q->content_topics[0], "/a/1/b/proto");
  assert_string_equal(q->content_topics[1], "/c/1/d/proto");
  assert_true(q->has_start_time);
  assert_true(q->start_time == 1712345678901234567LL);
  assert_true(q->has_end_time);
  assert_true(q->end_time == 1712345678901234999LL);
  assert_int_equal(q->n_hashes, 2);
  assert_int_equal(q->hashes[0][0], 0x9e);
  assert_int_equal(q->hashes[0][31], 0xa7);
  for (int i = 0; i < 32; i++)
    assert_int_equal(q->hashes[1][i], i);
  assert_true(q->has_cursor);
  assert_memory_equal(q->cursor, q->hashes[0], 32);
  assert_false(q->forward);
  assert_int_equal(q->page_size, 5);
  assert_non_null(q->peer_addr);
  assert_non_null(q->peer_id);
  char text[LD_PEERID_TEXT_MAX];
  assert_true(ld_peerid_to_text(q->peer_id, text, sizeof text) > 0);
  assert_string_equal(text, PEER);
  ld_rest_store_request_clear(&r);
}

static void booleans_and_direction(void **state) {
  (void)state;
  static const char *const yes[] = {"YES", "y", "True", "1", "o_n"};
  static const char *const no[] = {"no", "N", "FALSE", "0", "off"};
  ld_rest_store_request_t r;
  for (size_t i = 0; i < 5; i++) {
    ld_rest_store_params_t p = {.include_data = yes[i]};
    assert_int_equal(parse(&p, &r), 0);
    assert_true(r.query.include_data);
    ld_rest_store_request_clear(&r);
    p.include_data = no[i];
    assert_int_equal(parse(&p, &r), 0);
    assert_false(r.query.include_data);
    ld_rest_store_request_clear(&r);
  }
  ld_rest_store_params_t p = {.include_data = "maybe"};
  expect_error(&p, LD_ERR_MALFORMED,
               "include data parsing error: cannot interpret as a bool: maybe");
  p.include_data = "truetruetrue";
  assert_int_equal(parse(&p, &r), LD_ERR_MALFORMED);
  /* only the exact text "true" is ascending; anything else given is descending */
  static const char *const dirs[] = {"true", "TRUE", "1", "x"};
  for (size_t i = 0; i < 4; i++) {
    p = (ld_rest_store_params_t){.ascending = dirs[i]};
    assert_int_equal(parse(&p, &r), 0);
    assert_int_equal(r.query.forward, i == 0);
    ld_rest_store_request_clear(&r);
  }
}

static void times(void **state) {
  (void)state;
  ld_rest_store_request_t r;
  ld_rest_store_params_t p = {.start_time = "0", .end_time = "-5"};
  assert_int_equal(parse(&p, &r), 0);
  assert_false(r.query.has_start_time);
  assert_false(r.query.has_end_time);
  ld_rest_store_request_clear(&r);
  p = (ld_rest_store_params_t){.start_time = "9223372036854775807"};
  assert_int_equal(parse(&p, &r), 0);
  assert_true(r.query.start_time == INT64_MAX);
  ld_rest_store_request_clear(&r);
  p = (ld_rest_store_params_t){.start_time = "abc"};
  expect_error(&p, LD_ERR_MALFORMED, "time parsing error: invalid integer: abc");
  p = (ld_rest_store_params_t){.end_time = "1.5"};
  expect_error(&p, LD_ERR_MALFORMED, "time parsing error: invalid integer: 1.5");
  p = (ld_rest_store_params_t){.end_time = "-"};
  expect_error(&p, LD_ERR_MALFORMED, "time parsing error: invalid integer: -");
  p = (ld_rest_store_params_t){.start_time = "9223372036854775808"};
  expect_error(&p, LD_ERR_MALFORMED, "time parsing error: Parsed integer outside of valid range");
}

static void page_size(void **state) {
  (void)state;
  static const struct {
    const char *text;
    uint64_t expect;
  } ok[] = {{"1", 1}, {"0", 20}, {"100", 100}, {"101", 100}, {"99999999", 100}};
  ld_rest_store_request_t r;
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    ld_rest_store_params_t p = {.page_size = ok[i].text};
    assert_int_equal(parse(&p, &r), 0);
    assert_int_equal(r.query.page_size, ok[i].expect);
    ld_rest_store_request_clear(&r);
  }
  ld_rest_store_params_t p = {.page_size = "ten"};
  expect_error(&p, LD_ERR_MALFORMED, "page size parsing error: invalid integer: ten");
  p.page_size = "-1";
  expect_error(&p, LD_ERR_MALFORMED, "page size parsing error: page size must not be negative");
  p.page_size = "18446744073709551616";
  expect_error(&p, LD_ERR_MALFORMED,
               "page size parsing error: Parsed integer outside of valid range");
}

static void bad_hashes(void **state) {
  (void)state;
  ld_rest_store_params_t p = {.hashes = "0xabcd"};
  expect_error(&p, LD_ERR_MALFORMED, "waku message hash parsing error: invalid hash length: 2");
  /* the interop suite's invalid hashes: base64 of "test", and "test" */
  p.hashes = "dGVzdA==";
  expect_error(&p, LD_ERR_MALFORMED, "waku message hash parsing error: invalid hash length: 4");
  p.hashes = "test";
  expect_error(&p, LD_ERR_MALFORMED, "waku message hash parsing error: invalid hash length: 3");
  p.hashes = HASH_HEX ",not a hash!";
  expect_error(&p, LD_ERR_MALFORMED,
               "Exception converting hex string to bytes: not a hex string: not a hash!");
  p = (ld_rest_store_params_t){.cursor = HASH_HEX "00"};
  expect_error(&p, LD_ERR_MALFORMED, "waku message hash parsing error: invalid hash length: 33");
  p = (ld_rest_store_params_t){.cursor = "@"};
  ld_rest_store_request_t r;
  assert_int_equal(parse(&p, &r), LD_ERR_MALFORMED);
}

/* "<item>,<item>,…" with `n` items. */
static char *repeat(const char *item, size_t n) {
  size_t len = strlen(item) + 1;
  char *s = malloc(len * n + 1);
  assert_non_null(s);
  s[0] = '\0';
  for (size_t i = 0; i < n; i++) {
    strcat(s, item);
    if (i + 1 < n)
      strcat(s, ",");
  }
  return s;
}

static void caps(void **state) {
  (void)state;
  ld_rest_store_request_t r;
  char *topics = repeat("/a/1/b/proto", LD_REST_STORE_MAX_CONTENT_TOPICS);
  ld_rest_store_params_t p = {.content_topics = topics};
  assert_int_equal(parse(&p, &r), 0);
  assert_int_equal(r.query.n_content_topics, LD_REST_STORE_MAX_CONTENT_TOPICS);
  ld_rest_store_request_clear(&r);
  free(topics);
  topics = repeat("/a/1/b/proto", LD_REST_STORE_MAX_CONTENT_TOPICS + 1);
  p.content_topics = topics;
  expect_error(&p, LD_ERR_LIMIT, "too many content topics: at most 100");
  free(topics);
  char *hashes = repeat(HASH_HEX, LD_REST_STORE_MAX_HASHES);
  p = (ld_rest_store_params_t){.hashes = hashes};
  assert_int_equal(parse(&p, &r), 0);
  assert_int_equal(r.query.n_hashes, LD_REST_STORE_MAX_HASHES);
  ld_rest_store_request_clear(&r);
  free(hashes);
  hashes = repeat(HASH_HEX, LD_REST_STORE_MAX_HASHES + 1);
  p.hashes = hashes;
  expect_error(&p, LD_ERR_LIMIT, "too many hashes: at most 100");
  free(hashes);
  char *huge = malloc(LD_REST_STORE_MAX_PARAM + 2);
  memset(huge, 'a', LD_REST_STORE_MAX_PARAM + 1);
  huge[LD_REST_STORE_MAX_PARAM + 1] = '\0';
  p = (ld_rest_store_params_t){.pubsub_topic = huge};
  expect_error(&p, LD_ERR_LIMIT, "query parameter too long");
  free(huge);
}

static void peer_addresses(void **state) {
  (void)state;
  ld_rest_store_params_t p = {.peer_addr = "incorrect multi address format"};
  expect_error(&p, LD_ERR_MALFORMED, "Failed parsing remote peer info: invalid multiaddress");
  p.peer_addr = "/ip4/127.0.0.1/tcp/60001";
  expect_error(&p, LD_ERR_MALFORMED,
               "Failed parsing remote peer info: multiaddress without /p2p/<peer id>");
  /* the query's errors come first, as with nwaku */
  p.page_size = "x";
  expect_error(&p, LD_ERR_MALFORMED, "page size parsing error: invalid integer: x");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(defaults_follow_nwaku),
      cmocka_unit_test(every_parameter_is_read),
      cmocka_unit_test(booleans_and_direction),
      cmocka_unit_test(times),
      cmocka_unit_test(page_size),
      cmocka_unit_test(bad_hashes),
      cmocka_unit_test(caps),
      cmocka_unit_test(peer_addresses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
