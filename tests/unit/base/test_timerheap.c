#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "base/timerheap.h"

typedef struct item {
  int id;
  ld_timer_t timer;
} item_t;

#define ITEM_OF(t) ((item_t *)((char *)(t)-offsetof(item_t, timer)))

static void pops_in_deadline_order(void **state) {
  (void)state;
  ld_timerheap_t h;
  ld_timerheap_init(&h);
  item_t items[5] = {{0, LD_TIMER_INIT},
                     {1, LD_TIMER_INIT},
                     {2, LD_TIMER_INIT},
                     {3, LD_TIMER_INIT},
                     {4, LD_TIMER_INIT}};
  const uint64_t deadlines[5] = {50, 10, 40, 20, 30};
  for (int i = 0; i < 5; i++) {
    assert_false(ld_timer_armed(&items[i].timer));
    assert_int_equal(ld_timerheap_add(&h, &items[i].timer, deadlines[i]), 0);
    assert_true(ld_timer_armed(&items[i].timer));
  }
  assert_int_equal(ld_timerheap_len(&h), 5);
  assert_ptr_equal(ld_timerheap_peek(&h), &items[1].timer);
  assert_true(ld_timerheap_next_deadline(&h) == 10);
  assert_null(ld_timerheap_pop_expired(&h, 9));
  const int order[5] = {1, 3, 4, 2, 0};
  for (int i = 0; i < 5; i++) {
    ld_timer_t *t = ld_timerheap_pop_expired(&h, 1000);
    assert_non_null(t);
    assert_int_equal(ITEM_OF(t)->id, order[i]);
    assert_false(ld_timer_armed(t));
  }
  assert_null(ld_timerheap_pop_expired(&h, UINT64_MAX));
  assert_null(ld_timerheap_peek(&h));
  assert_true(ld_timerheap_next_deadline(&h) == UINT64_MAX);
  ld_timerheap_clear(&h);
}

static void equal_deadlines_fire_in_arming_order(void **state) {
  (void)state;
  ld_timerheap_t h;
  ld_timerheap_init(&h);
  enum { N = 100 };
  item_t items[N];
  memset(items, 0, sizeof items); /* zeroed timers are unarmed */
  for (int i = 0; i < N; i++) {
    items[i].id = i;
    assert_int_equal(ld_timerheap_add(&h, &items[i].timer, (uint64_t)(i % 3)), 0);
  }
  /* re-arming moves a timer behind the others with the same deadline */
  assert_int_equal(ld_timerheap_update(&h, &items[0].timer, 0), 0);
  int expected[N], n = 0;
  for (int d = 0; d < 3; d++) {
    for (int i = d == 0 ? 3 : d; i < N; i += 3)
      expected[n++] = i;
    if (d == 0)
      expected[n++] = 0;
  }
  assert_int_equal(n, N);
  for (int i = 0; i < N; i++) {
    ld_timer_t *t = ld_timerheap_pop_expired(&h, 5);
    assert_non_null(t);
    assert_int_equal(ITEM_OF(t)->id, expected[i]);
  }
  ld_timerheap_clear(&h);
}

static void remove_update_and_clear(void **state) {
  (void)state;
  ld_timerheap_t h;
  ld_timerheap_init(&h);
  item_t a = {1, LD_TIMER_INIT}, b = {2, LD_TIMER_INIT}, c = {3, LD_TIMER_INIT};
  ld_timerheap_remove(&h, &a.timer); /* not armed: no-op */
  assert_int_equal(ld_timerheap_add(&h, &a.timer, 100), 0);
  assert_int_equal(ld_timerheap_add(&h, &b.timer, 200), 0);
  assert_int_equal(ld_timerheap_add(&h, &c.timer, 300), 0);
  assert_int_equal(ld_timerheap_update(&h, &c.timer, 50), 0);
  assert_ptr_equal(ld_timerheap_peek(&h), &c.timer);
  assert_int_equal(ld_timerheap_add(&h, &c.timer, 400), 0); /* add on an armed timer re-arms */
  assert_int_equal(ld_timerheap_len(&h), 3);
  assert_ptr_equal(ld_timerheap_peek(&h), &a.timer);
  ld_timerheap_remove(&h, &a.timer);
  assert_false(ld_timer_armed(&a.timer));
  ld_timerheap_remove(&h, &a.timer);
  assert_int_equal(ld_timerheap_len(&h), 2);
  assert_ptr_equal(ld_timerheap_pop_expired(&h, 200), &b.timer);
  assert_null(ld_timerheap_pop_expired(&h, 399));
  ld_timerheap_clear(&h);
  assert_false(ld_timer_armed(&c.timer));
  assert_int_equal(ld_timerheap_len(&h), 0);
  assert_int_equal(ld_timerheap_update(&h, &c.timer, 7), 0); /* update arms an unarmed timer */
  assert_ptr_equal(ld_timerheap_pop_expired(&h, 7), &c.timer);
  ld_timerheap_clear(&h);
}

/* Reference model: the armed timers with their (deadline, arming sequence), scanned linearly. */
typedef struct ref {
  bool armed;
  uint64_t deadline;
  uint64_t seq;
} ref_t;

static int ref_min(const ref_t *ref, int n) {
  int best = -1;
  for (int i = 0; i < n; i++) {
    if (!ref[i].armed)
      continue;
    if (best < 0 || ref[i].deadline < ref[best].deadline ||
        (ref[i].deadline == ref[best].deadline && ref[i].seq < ref[best].seq))
      best = i;
  }
  return best;
}

static void random_operations_match_reference(void **state) {
  (void)state;
  enum { N = 300, OPS = 60000 };
  static item_t items[N];
  static ref_t ref[N];
  memset(items, 0, sizeof items);
  memset(ref, 0, sizeof ref);
  for (int i = 0; i < N; i++)
    items[i].id = i;
  ld_timerheap_t h;
  ld_timerheap_init(&h);
  uint64_t seq = 0, now = 0;
  size_t armed = 0;
  srand(12345);
  for (int op = 0; op < OPS; op++) {
    int i = rand() % N;
    int kind = rand() % 10;
    uint64_t deadline = now + (uint64_t)(rand() % 50); /* small range: many ties */
    if (kind < 4) {
      armed += !ref[i].armed;
      assert_int_equal(ld_timerheap_add(&h, &items[i].timer, deadline), 0);
      ref[i] = (ref_t){true, deadline, seq++};
    } else if (kind < 6) {
      armed -= ref[i].armed;
      ld_timerheap_remove(&h, &items[i].timer);
      ref[i].armed = false;
    } else if (kind < 8) {
      armed += !ref[i].armed;
      assert_int_equal(ld_timerheap_update(&h, &items[i].timer, deadline), 0);
      ref[i] = (ref_t){true, deadline, seq++};
    } else {
      now += (uint64_t)(rand() % 5);
      for (;;) {
        int want = ref_min(ref, N);
        ld_timer_t *t = ld_timerheap_pop_expired(&h, now);
        if (want < 0 || ref[want].deadline > now) {
          assert_null(t);
          break;
        }
        assert_non_null(t);
        assert_int_equal(ITEM_OF(t)->id, want);
        ref[want].armed = false;
        armed--;
      }
    }
    assert_int_equal(ld_timerheap_len(&h), armed);
    int want = ref_min(ref, N);
    ld_timer_t *top = ld_timerheap_peek(&h);
    if (want < 0)
      assert_null(top);
    else
      assert_int_equal(ITEM_OF(top)->id, want);
    for (int k = 0; k < 3; k++) {
      int j = rand() % N;
      assert_int_equal(ld_timer_armed(&items[j].timer), ref[j].armed);
    }
  }
  ld_timerheap_clear(&h);
  for (int i = 0; i < N; i++)
    assert_false(ld_timer_armed(&items[i].timer));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(pops_in_deadline_order),
      cmocka_unit_test(equal_deadlines_fire_in_arming_order),
      cmocka_unit_test(remove_update_and_clear),
      cmocka_unit_test(random_operations_match_reference),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
