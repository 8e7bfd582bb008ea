/* The relay REST cache: nwaku's MessageCache semantics (topics, cross-indexing, idempotence,
 * capacity with oldest-timestamp eviction, take-and-clear, unsubscribe). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "rest/message_cache.h"

#define P0 "/waku/2/rs/0/0"
#define P1 "/waku/2/rs/0/1"
#define C1 "/app/1/one/proto"
#define C2 "/app/1/two/proto"

static ld_waku_message_t msg(const char *payload, const char *ct, int64_t ts) {
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = (const uint8_t *)payload;
  m.payload_len = strlen(payload);
  m.content_topic = ct;
  m.content_topic_len = strlen(ct);
  m.timestamp = ts;
  return m;
}

static int sub(ld_rest_cache_t *c, ld_rest_topic_kind_t k, const char *t) {
  return ld_rest_cache_subscribe(c, k, t, strlen(t));
}

static size_t take(ld_rest_cache_t *c, ld_rest_topic_kind_t k, const char *t, int *rc,
                   char payloads[][16]) {
  ld_waku_message_t *out = NULL;
  size_t n = 0;
  *rc = ld_rest_cache_take(c, k, t, strlen(t), &out, &n);
  for (size_t i = 0; i < n; i++) {
    if (payloads != NULL)
      snprintf(payloads[i], 16, "%.*s", (int)out[i].payload_len, (const char *)out[i].payload);
    ld_waku_message_clear(&out[i]);
  }
  free(out);
  return n;
}

static int add(ld_rest_cache_t *c, const char *pubsub, const char *payload, const char *ct,
               int64_t ts) {
  ld_waku_message_t m = msg(payload, ct, ts);
  return ld_rest_cache_add(c, pubsub, &m);
}

static void keeps_only_cached_topics(void **state) {
  (void)state;
  ld_rest_cache_t *c = ld_rest_cache_new(0);
  int rc;
  assert_int_equal(take(c, LD_REST_PUBSUB_TOPIC, P0, &rc, NULL), 0);
  assert_int_equal(rc, LD_ERR_NOT_FOUND);
  assert_int_equal(add(c, P0, "a", C1, 1), 0);
  assert_int_equal(sub(c, LD_REST_PUBSUB_TOPIC, P0), 0);
  assert_int_equal(sub(c, LD_REST_PUBSUB_TOPIC, P0), 0);
  assert_int_equal(add(c, P0, "a", C1, 1), 1);
  assert_int_equal(add(c, P1, "b", C2, 2), 0);
  char p[4][16];
  assert_int_equal(take(c, LD_REST_PUBSUB_TOPIC, P0, &rc, p), 1);
  assert_int_equal(rc, 0);
  assert_string_equal(p[0], "a");
  /* cleared: a second GET is an empty list, not a 404 */
  assert_int_equal(take(c, LD_REST_PUBSUB_TOPIC, P0, &rc, p), 0);
  assert_int_equal(rc, 0);
  ld_rest_cache_free(c);
}

static void a_message_makes_its_other_topic_cached(void **state) {
  (void)state;
  ld_rest_cache_t *c = ld_rest_cache_new(0);
  int rc;
  sub(c, LD_REST_PUBSUB_TOPIC, P0);
  assert_false(ld_rest_cache_cached(c, LD_REST_CONTENT_TOPIC, C1, strlen(C1)));
  assert_int_equal(add(c, P0, "a", C1, 1), 1);
  assert_true(ld_rest_cache_cached(c, LD_REST_CONTENT_TOPIC, C1, strlen(C1)));
  char p[4][16];
  /* reading through the content topic removes it for the pubsub topic too */
  assert_int_equal(take(c, LD_REST_CONTENT_TOPIC, C1, &rc, p), 1);
  assert_int_equal(take(c, LD_REST_PUBSUB_TOPIC, P0, &rc, p), 0);
  /* and the other way round */
  sub(c, LD_REST_CONTENT_TOPIC, C2);
  assert_int_equal(add(c, P1, "b", C2, 2), 1);
  assert_true(ld_rest_cache_cached(c, LD_REST_PUBSUB_TOPIC, P1, strlen(P1)));
  assert_int_equal(take(c, LD_REST_PUBSUB_TOPIC, P1, &rc, p), 1);
  assert_string_equal(p[0], "b");
  ld_rest_cache_free(c);
}

static void adding_is_idempotent_and_ordered(void **state) {
  (void)state;
  ld_rest_cache_t *c = ld_rest_cache_new(0);
  int rc;
  sub(c, LD_REST_PUBSUB_TOPIC, P0);
  assert_int_equal(add(c, P0, "x", C1, 7), 1);
  assert_int_equal(add(c, P0, "x", C1, 7), 0);
  assert_int_equal(add(c, P0, "y", C1, 3), 1);
  assert_int_equal(add(c, P0, "x", C1, 8), 1); /* another timestamp: another message */
  char p[4][16];
  assert_int_equal(take(c, LD_REST_PUBSUB_TOPIC, P0, &rc, p), 3);
  assert_string_equal(p[0], "x");
  assert_string_equal(p[1], "y");
  assert_string_equal(p[2], "x");
  ld_rest_cache_free(c);
}

static void evicts_the_oldest_timestamp_when_full(void **state) {
  (void)state;
  ld_rest_cache_t *c = ld_rest_cache_new(3);
  int rc;
  sub(c, LD_REST_PUBSUB_TOPIC, P0);
  add(c, P0, "t30", C1, 30);
  add(c, P0, "t10", C1, 10);
  add(c, P0, "t20", C1, 20);
  assert_int_equal(ld_rest_cache_count(c), 3);
  add(c, P0, "t40", C1, 40);
  assert_int_equal(ld_rest_cache_count(c), 3);
  char p[4][16];
  assert_int_equal(take(c, LD_REST_PUBSUB_TOPIC, P0, &rc, p), 3);
  assert_string_equal(p[0], "t30");
  assert_string_equal(p[1], "t20");
  assert_string_equal(p[2], "t40");
  ld_rest_cache_free(c);
}

static void unsubscribing_drops_orphaned_messages(void **state) {
  (void)state;
  ld_rest_cache_t *c = ld_rest_cache_new(0);
  int rc;
  sub(c, LD_REST_PUBSUB_TOPIC, P0);
  sub(c, LD_REST_PUBSUB_TOPIC, P1);
  add(c, P0, "a", C1, 1); /* C1 becomes cached */
  add(c, P1, "b", C2, 2); /* C2 becomes cached */
  ld_rest_cache_unsubscribe(c, LD_REST_PUBSUB_TOPIC, P0, strlen(P0));
  /* still reachable through C1 */
  assert_int_equal(ld_rest_cache_count(c), 2);
  ld_rest_cache_unsubscribe(c, LD_REST_CONTENT_TOPIC, C1, strlen(C1));
  assert_int_equal(ld_rest_cache_count(c), 1);
  assert_int_equal(take(c, LD_REST_PUBSUB_TOPIC, P0, &rc, NULL), 0);
  assert_int_equal(rc, LD_ERR_NOT_FOUND);
  ld_rest_cache_unsubscribe(c, LD_REST_PUBSUB_TOPIC, "/nope", 5);
  ld_rest_cache_free(c);
}

static void topics_are_capped(void **state) {
  (void)state;
  ld_rest_cache_t *c = ld_rest_cache_new(0);
  char t[32];
  for (int i = 0; i < LD_REST_CACHE_MAX_TOPICS; i++) {
    snprintf(t, sizeof t, "/t/%d", i);
    assert_int_equal(sub(c, LD_REST_CONTENT_TOPIC, t), 0);
  }
  assert_int_equal(sub(c, LD_REST_CONTENT_TOPIC, "/one/more"), LD_ERR_LIMIT);
  assert_int_equal(sub(c, LD_REST_CONTENT_TOPIC, "/t/5"), 0);
  char *big = malloc(LD_REST_CACHE_MAX_TOPIC_LEN + 2);
  memset(big, 'x', LD_REST_CACHE_MAX_TOPIC_LEN + 1);
  big[LD_REST_CACHE_MAX_TOPIC_LEN + 1] = '\0';
  assert_int_equal(sub(c, LD_REST_PUBSUB_TOPIC, big), LD_ERR_LIMIT);
  free(big);
  ld_rest_cache_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(keeps_only_cached_topics),
      cmocka_unit_test(a_message_makes_its_other_topic_cached),
      cmocka_unit_test(adding_is_idempotent_and_ordered),
      cmocka_unit_test(evicts_the_oldest_timestamp_when_full),
      cmocka_unit_test(unsubscribing_drops_orphaned_messages),
      cmocka_unit_test(topics_are_capped),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
