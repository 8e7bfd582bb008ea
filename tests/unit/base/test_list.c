#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/list.h"

typedef struct item {
  int value;
  ld_link_t link;
} item_t;

static int value_of(const ld_link_t *l) {
  return LD_CONTAINER_OF(l, item_t, link)->value;
}

/* Asserts that the list `head` holds `want[0..n)` in order, walked both ways. */
static void assert_order(const ld_link_t *head, const int *want, size_t n) {
  size_t i = 0;
  for (const ld_link_t *l = head->next; l != head; l = l->next, i++) {
    assert_true(i < n);
    assert_int_equal(value_of(l), want[i]);
  }
  assert_int_equal(i, n);
  for (const ld_link_t *l = head->prev; l != head; l = l->prev)
    assert_int_equal(value_of(l), want[--i]);
  assert_int_equal(i, 0);
}

static void empty_list(void **state) {
  (void)state;
  ld_link_t head;
  ld_list_init(&head);
  assert_true(ld_list_empty(&head));
  assert_null(ld_list_first(&head));
  assert_null(ld_list_last(&head));
  assert_order(&head, NULL, 0);
}

static void push_and_push_front(void **state) {
  (void)state;
  ld_link_t head;
  ld_list_init(&head);
  item_t a = {.value = 1}, b = {.value = 2}, c = {.value = 3};
  assert_false(ld_link_linked(&a.link)); /* zeroed: unlinked */
  ld_list_push(&head, &a.link);
  ld_list_push(&head, &b.link);
  ld_list_push_front(&head, &c.link);
  assert_false(ld_list_empty(&head));
  assert_true(ld_link_linked(&a.link));
  assert_order(&head, (const int[]){3, 1, 2}, 3);
  assert_ptr_equal(ld_list_first(&head), &c.link);
  assert_ptr_equal(ld_list_last(&head), &b.link);
}

static void remove_and_move_front(void **state) {
  (void)state;
  ld_link_t head;
  ld_list_init(&head);
  item_t it[4];
  memset(it, 0, sizeof it);
  for (int i = 0; i < 4; i++) {
    it[i].value = i;
    ld_list_push(&head, &it[i].link);
  }
  ld_list_move_front(&head, &it[2].link);
  assert_order(&head, (const int[]){2, 0, 1, 3}, 4);
  ld_list_move_front(&head, &it[2].link); /* already first */
  assert_order(&head, (const int[]){2, 0, 1, 3}, 4);
  ld_list_move_front(&head, &it[3].link); /* the last */
  assert_order(&head, (const int[]){3, 2, 0, 1}, 4);
  ld_link_remove(&it[0].link);
  assert_false(ld_link_linked(&it[0].link));
  ld_link_remove(&it[0].link); /* unlinked: a no-op */
  assert_order(&head, (const int[]){3, 2, 1}, 3);
  ld_link_remove(&it[3].link);
  ld_link_remove(&it[1].link);
  assert_order(&head, (const int[]){2}, 1);
  assert_ptr_equal(ld_list_first(&head), ld_list_last(&head));
  ld_link_remove(&it[2].link);
  assert_true(ld_list_empty(&head));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(empty_list),
      cmocka_unit_test(push_and_push_front),
      cmocka_unit_test(remove_and_move_front),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
