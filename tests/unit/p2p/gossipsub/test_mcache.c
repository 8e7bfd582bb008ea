#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "p2p/gossipsub/mcache.h"

static void make_id(uint8_t id[32], uint32_t n) {
  memset(id, 0, 32);
  memcpy(id, &n, sizeof n);
}

typedef struct seen {
  uint32_t ids[64];
  size_t n;
  const char *topic;
} seen_t;

static void collect(void *ctx, ld_gs_cmsg_t *m) {
  seen_t *s = ctx;
  if (s->topic == NULL || strcmp(s->topic, m->topic) == 0) {
    memcpy(&s->ids[s->n++], m->id, sizeof(uint32_t));
  }
}

static void keeps_len_windows_and_gossips_the_newest(void **state) {
  (void)state;
  ld_gs_mcache_t mc;
  ld_gs_mcache_init(&mc, 5, 3);
  uint8_t id[32];
  /* window w holds messages 10w and 10w+1 (topics a, b) */
  for (uint32_t w = 0; w < 7; w++) {
    make_id(id, 10 * w);
    assert_int_equal(ld_gs_mcache_put(&mc, id, "a", (const uint8_t *)"x", 1, NULL), 0);
    make_id(id, 10 * w + 1);
    assert_int_equal(ld_gs_mcache_put(&mc, id, "b", (const uint8_t *)"yy", 2, NULL), 0);
    if (w < 6) {
      ld_gs_mcache_shift(&mc);
    }
  }
  /* 6 shifts: windows 0 and 1 are gone; 2..6 remain */
  assert_int_equal(ld_gs_mcache_size(&mc), 10);
  make_id(id, 10);
  assert_null(ld_gs_mcache_get(&mc, id, 32));
  make_id(id, 21);
  ld_gs_cmsg_t *m = ld_gs_mcache_get(&mc, id, 32);
  assert_non_null(m);
  assert_string_equal(m->topic, "b");
  assert_int_equal(m->len, 2);
  assert_memory_equal(m->data, "yy", 2);
  seen_t s = {.topic = "a"};
  ld_gs_mcache_gossip_each(&mc, collect, &s);
  assert_int_equal(s.n, 3);
  assert_int_equal(s.ids[0], 60); /* newest first */
  assert_int_equal(s.ids[1], 50);
  assert_int_equal(s.ids[2], 40);
  make_id(id, 60);
  assert_int_equal(ld_gs_mcache_put(&mc, id, "a", NULL, 0, NULL), LD_ERR_EXISTS);
  ld_gs_mcache_clear(&mc);
}

static void counts_iwant_answers_per_peer(void **state) {
  (void)state;
  ld_gs_mcache_t mc;
  ld_gs_mcache_init(&mc, 2, 1);
  uint8_t id[32];
  make_id(id, 1);
  ld_gs_cmsg_t *m = NULL;
  assert_int_equal(ld_gs_mcache_put(&mc, id, "t", (const uint8_t *)"d", 1, &m), 0);
  assert_int_equal(ld_gs_mcache_count_tx(m, 7), 1);
  assert_int_equal(ld_gs_mcache_count_tx(m, 7), 2);
  assert_int_equal(ld_gs_mcache_count_tx(m, 8), 1);
  assert_int_equal(ld_gs_mcache_count_tx(m, 7), 3);
  for (uint64_t p = 100; p < 100 + LD_GS_MCACHE_MAX_TX_PEERS - 2; p++) {
    assert_int_equal(ld_gs_mcache_count_tx(m, p), 1);
  }
  assert_int_equal(ld_gs_mcache_count_tx(m, 99999), UINT32_MAX); /* table full */
  ld_gs_mcache_shift(&mc);
  ld_gs_mcache_shift(&mc);
  assert_int_equal(ld_gs_mcache_size(&mc), 0);
  ld_gs_mcache_clear(&mc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(keeps_len_windows_and_gossips_the_newest),
      cmocka_unit_test(counts_iwant_answers_per_peer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
