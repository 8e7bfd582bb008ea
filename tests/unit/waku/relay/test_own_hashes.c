/* The relay's FIFO of own messages' hashes (waku/relay/own_hashes): matched by gossipsub ID and
 * topic, in publish order, bounded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "waku/relay/own_hashes.h"

static void id_of(int k, uint8_t id[LD_GS_MSG_ID_LEN]) {
  memset(id, 0, LD_GS_MSG_ID_LEN);
  memcpy(id, &k, sizeof k);
}

static void hash_of(int k, uint8_t hash[LD_WAKU_HASH_LEN]) {
  memset(hash, 0xA5, LD_WAKU_HASH_LEN);
  memcpy(hash, &k, sizeof k);
}

static void push(ld_relay_own_hashes_t *q, const char *topic, int k) {
  uint8_t id[LD_GS_MSG_ID_LEN], hash[LD_WAKU_HASH_LEN];
  id_of(k, id);
  hash_of(k, hash);
  ld_relay_own_hashes_push(q, topic, id, hash);
}

/* true when `k` on `topic` is recorded, and its hash is the one pushed */
static bool take(ld_relay_own_hashes_t *q, const char *topic, int k) {
  uint8_t id[LD_GS_MSG_ID_LEN], got[LD_WAKU_HASH_LEN], want[LD_WAKU_HASH_LEN];
  id_of(k, id);
  hash_of(k, want);
  memset(got, 0, sizeof got);
  if (!ld_relay_own_hashes_take(q, topic, id, got))
    return false;
  assert_memory_equal(got, want, LD_WAKU_HASH_LEN);
  return true;
}

static void taken_in_order_once(void **state) {
  (void)state;
  ld_relay_own_hashes_t q = {0};
  assert_false(take(&q, "/waku/2/rs/1/0", 1)); /* empty */
  for (int k = 1; k <= 3; k++)
    push(&q, "/waku/2/rs/1/0", k);
  assert_true(take(&q, "/waku/2/rs/1/0", 1));
  assert_false(take(&q, "/waku/2/rs/1/0", 1)); /* taken once */
  assert_true(take(&q, "/waku/2/rs/1/0", 2));
  assert_true(take(&q, "/waku/2/rs/1/0", 3));
  assert_int_equal(q.n, 0);
  ld_relay_own_hashes_clear(&q);
}

static void same_id_on_another_topic_is_another_entry(void **state) {
  (void)state;
  ld_relay_own_hashes_t q = {0};
  push(&q, "/waku/2/rs/1/0", 7);
  assert_false(take(&q, "/waku/2/rs/1/1", 7));
  assert_int_equal(q.n, 1); /* a miss removes nothing */
  assert_true(take(&q, "/waku/2/rs/1/0", 7));
  ld_relay_own_hashes_clear(&q);
}

static void a_later_delivery_drops_the_undelivered_before_it(void **state) {
  (void)state;
  ld_relay_own_hashes_t q = {0};
  for (int k = 1; k <= 4; k++)
    push(&q, "t", k);
  assert_true(take(&q, "t", 3)); /* 1 and 2 were never delivered back */
  assert_int_equal(q.n, 1);
  assert_false(take(&q, "t", 1));
  assert_true(take(&q, "t", 4));
  ld_relay_own_hashes_clear(&q);
}

static void bounded_oldest_dropped(void **state) {
  (void)state;
  ld_relay_own_hashes_t q = {0};
  for (int k = 0; k < LD_RELAY_OWN_HASHES_MAX + 10; k++)
    push(&q, "t", k);
  assert_int_equal(q.n, LD_RELAY_OWN_HASHES_MAX);
  assert_false(take(&q, "t", 9)); /* dropped */
  assert_true(take(&q, "t", 10));
  assert_true(take(&q, "t", LD_RELAY_OWN_HASHES_MAX + 9)); /* wrapped around the ring */
  assert_int_equal(q.n, 0);
  push(&q, "t", 1); /* usable after emptying, and after clear */
  ld_relay_own_hashes_clear(&q);
  assert_int_equal(q.n, 0);
  push(&q, "t", 2);
  assert_true(take(&q, "t", 2));
  ld_relay_own_hashes_clear(&q);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(taken_in_order_once),
      cmocka_unit_test(same_id_on_another_topic_is_another_entry),
      cmocka_unit_test(a_later_delivery_drops_the_undelivered_before_it),
      cmocka_unit_test(bounded_oldest_dropped),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
