/* The NRS recent-message cache: put and get by hash, duplicates, pruning by timestamp (also
 * entries that arrived out of order), and the byte cap evicting the oldest entries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "waku/nrs/cache.h"

#define SEC 1000000000ll
static const int64_t NOW = 1750000000000000000ll;
#define TOPIC "/waku/2/rs/0/0"

static void message(ld_waku_message_t *m, char *payload, uint64_t i, int64_t ts, uint8_t hash[32]) {
  ld_waku_message_init(m);
  snprintf(payload, 32, "payload %llu", (unsigned long long)i);
  m->payload = (const uint8_t *)payload;
  m->payload_len = strlen(payload);
  m->content_topic = "/app/1/chat/proto";
  m->content_topic_len = strlen(m->content_topic);
  m->timestamp = ts;
  assert_int_equal(ld_waku_message_hash(TOPIC, m, hash), 0);
}

static void put_get_prune(void **state) {
  (void)state;
  ld_nrs_cache_t *c = ld_nrs_cache_new(0);
  assert_non_null(c);
  uint8_t hashes[100][32];
  for (uint64_t i = 0; i < 100; i++) {
    char payload[32];
    ld_waku_message_t m;
    /* every 10th arrives 3 s late (out of timestamp order) */
    int64_t ts = NOW - (int64_t)(100 - i) * SEC - (i % 10 == 0 ? 3 * SEC : 0);
    message(&m, payload, i, ts, hashes[i]);
    assert_int_equal(ld_nrs_cache_put(c, TOPIC, &m, hashes[i]), 0);
    assert_int_equal(ld_nrs_cache_put(c, TOPIC, &m, hashes[i]), LD_ERR_EXISTS);
  }
  assert_int_equal(ld_nrs_cache_size(c), 100);
  const char *topic;
  const ld_waku_message_t *got;
  assert_true(ld_nrs_cache_get(c, hashes[42], &topic, &got));
  assert_string_equal(topic, TOPIC);
  assert_int_equal(got->payload_len, strlen("payload 42"));
  assert_memory_equal(got->payload, "payload 42", got->payload_len);
  /* older than NOW − 50 s: i < 50, and i = 50 (3 s late: NOW − 53 s) */
  assert_int_equal(ld_nrs_cache_prune(c, NOW - 50 * SEC), 51);
  assert_false(ld_nrs_cache_get(c, hashes[49], &topic, &got));
  assert_false(ld_nrs_cache_get(c, hashes[50], &topic, &got));
  assert_true(ld_nrs_cache_get(c, hashes[51], &topic, &got));
  assert_int_equal(ld_nrs_cache_size(c), 49);
  ld_nrs_cache_free(c);
}

static void the_byte_cap_evicts_the_oldest(void **state) {
  (void)state;
  ld_nrs_cache_t *c = ld_nrs_cache_new(4096);
  uint8_t hashes[200][32];
  for (uint64_t i = 0; i < 200; i++) {
    char payload[32];
    ld_waku_message_t m;
    message(&m, payload, i, NOW + (int64_t)i, hashes[i]);
    assert_int_equal(ld_nrs_cache_put(c, TOPIC, &m, hashes[i]), 0);
    assert_true(ld_nrs_cache_bytes(c) <= 4096);
  }
  const char *topic;
  const ld_waku_message_t *got;
  assert_true(ld_nrs_cache_get(c, hashes[199], &topic, &got));
  assert_false(ld_nrs_cache_get(c, hashes[0], &topic, &got));
  assert_true(ld_nrs_cache_size(c) < 200 && ld_nrs_cache_size(c) > 10);
  ld_nrs_cache_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(put_get_prune),
      cmocka_unit_test(the_byte_cap_evicts_the_oldest),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
