#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "p2p/gossipsub/idset.h"

static void make_id(uint8_t id[32], uint32_t n) {
  memset(id, 0xa5, 32);
  memcpy(id, &n, sizeof n);
}

static void adds_finds_and_rejects_duplicates(void **state) {
  (void)state;
  ld_gs_idset_t s;
  ld_gs_idset_init(&s, 1000);
  uint8_t id[32];
  for (uint32_t i = 0; i < 500; i++) {
    make_id(id, i);
    assert_int_equal(ld_gs_idset_add(&s, id, 100 + i, i * 7), 0);
  }
  assert_int_equal(ld_gs_idset_size(&s), 500);
  for (uint32_t i = 0; i < 500; i++) {
    make_id(id, i);
    ld_gs_idset_entry_t *e = ld_gs_idset_find(&s, id, 32);
    assert_non_null(e);
    assert_int_equal(e->value, i * 7);
    assert_int_equal(ld_gs_idset_add(&s, id, 1000, 0), LD_ERR_EXISTS);
  }
  make_id(id, 9999);
  assert_null(ld_gs_idset_find(&s, id, 32));
  assert_null(ld_gs_idset_find(&s, id, 31)); /* wrong length never matches */
  ld_gs_idset_clear(&s);
}

typedef struct counter {
  size_t n;
  uint64_t last_value;
} counter_t;

static void count(void *ctx, const ld_gs_idset_entry_t *e) {
  counter_t *c = ctx;
  c->n++;
  c->last_value = e->value;
}

static void expires_in_order_and_skips_removed(void **state) {
  (void)state;
  ld_gs_idset_t s;
  ld_gs_idset_init(&s, 100);
  uint8_t id[32];
  for (uint32_t i = 0; i < 50; i++) {
    make_id(id, i);
    assert_int_equal(ld_gs_idset_add(&s, id, i, i), 0);
  }
  make_id(id, 10);
  assert_true(ld_gs_idset_remove(&s, id, 32));
  assert_false(ld_gs_idset_remove(&s, id, 32));
  counter_t c = {0};
  assert_int_equal(ld_gs_idset_expire(&s, 19, count, &c), 19); /* 0..19 minus the removed 10 */
  assert_int_equal(c.n, 19);
  assert_int_equal(c.last_value, 19);
  assert_int_equal(ld_gs_idset_size(&s), 30);
  make_id(id, 5);
  assert_null(ld_gs_idset_find(&s, id, 32));
  assert_int_equal(ld_gs_idset_add(&s, id, 100, 1), 0); /* re-added after expiry */
  make_id(id, 20);
  assert_non_null(ld_gs_idset_find(&s, id, 32));
  ld_gs_idset_clear(&s);
}

static void honours_the_cap(void **state) {
  (void)state;
  ld_gs_idset_t s;
  ld_gs_idset_init(&s, 8);
  uint8_t id[32];
  for (uint32_t i = 0; i < 8; i++) {
    make_id(id, i);
    assert_int_equal(ld_gs_idset_add(&s, id, 1, 0), 0);
  }
  make_id(id, 8);
  assert_int_equal(ld_gs_idset_add(&s, id, 1, 0), LD_ERR_LIMIT);
  ld_gs_idset_expire(&s, 1, NULL, NULL);
  assert_int_equal(ld_gs_idset_add(&s, id, 2, 0), 0);
  ld_gs_idset_clear(&s);
}

/* Ring growth with a wrapped head and many removals (backward-shift deletion), against a model. */
static void survives_growth_and_churn(void **state) {
  (void)state;
  enum { TOTAL = 20000 };
  static bool model[TOTAL];
  memset(model, 0, sizeof model);
  ld_gs_idset_t s;
  ld_gs_idset_init(&s, 1u << 20);
  uint8_t id[32];
  uint32_t next = 0;
  uint64_t now = 0;
  while (next < TOTAL) {
    for (uint32_t k = 0; k < 100; k++, next++) {
      make_id(id, next);
      assert_int_equal(ld_gs_idset_add(&s, id, next, next), 0);
      model[next] = true;
    }
    for (uint32_t k = (uint32_t)now; k < next; k += 7) {
      make_id(id, k);
      assert_int_equal(ld_gs_idset_remove(&s, id, 32), model[k]);
      model[k] = false;
    }
    now += 60;
    ld_gs_idset_expire(&s, now - 1, NULL, NULL);
    for (uint32_t k = 0; k < now && k < next; k++) {
      model[k] = false;
    }
    size_t live = 0;
    for (uint32_t k = 0; k < next; k++) {
      make_id(id, k);
      ld_gs_idset_entry_t *e = ld_gs_idset_find(&s, id, 32);
      assert_int_equal(e != NULL, model[k]);
      if (e != NULL) {
        assert_int_equal(e->value, k);
        live++;
      }
    }
    assert_int_equal(live, ld_gs_idset_size(&s));
    if (next > 2000) {
      break;
    }
  }
  ld_gs_idset_clear(&s);
}

static void compacts_after_a_burst(void **state) {
  (void)state;
  ld_gs_idset_t s;
  ld_gs_idset_init(&s, 1u << 20);
  uint8_t id[32];
  for (uint32_t i = 0; i < 100000; i++) {
    make_id(id, i);
    assert_int_equal(ld_gs_idset_add(&s, id, i, i), 0);
  }
  size_t big_ring = s.ring_cap, big_index = s.index_cap;
  ld_gs_idset_expire(&s, 99989, NULL, NULL); /* ten left */
  ld_gs_idset_compact(&s);
  assert_true(s.ring_cap * 64 < big_ring);
  assert_true(s.index_cap * 64 < big_index);
  for (uint32_t i = 99990; i < 100000; i++) {
    make_id(id, i);
    ld_gs_idset_entry_t *e = ld_gs_idset_find(&s, id, 32);
    assert_non_null(e);
    assert_int_equal(e->value, i);
  }
  make_id(id, 5);
  assert_int_equal(ld_gs_idset_add(&s, id, 200000, 5), 0);
  assert_int_equal(ld_gs_idset_size(&s), 11);
  ld_gs_idset_clear(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(adds_finds_and_rejects_duplicates),
      cmocka_unit_test(expires_in_order_and_skips_removed),
      cmocka_unit_test(honours_the_cap),
      cmocka_unit_test(survives_growth_and_churn),
      cmocka_unit_test(compacts_after_a_burst),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
