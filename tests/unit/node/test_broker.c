#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "node/broker.h"

typedef struct recorder {
  char log[256];
  ld_broker_t *b;
  int64_t handle;       /* a handle to act on from inside a call */
  int64_t other_handle; /* another handle to remove */
  int depth;
} recorder_t;

static void note(recorder_t *r, const char *what) {
  size_t n = strlen(r->log);
  snprintf(r->log + n, sizeof r->log - n, "%s%s", n > 0 ? "," : "", what);
}

static void listener_a(int kind, const void *payload, void *ud) {
  char buf[32];
  snprintf(buf, sizeof buf, "a%d:%s", kind, (const char *)payload);
  note(ud, buf);
}

static void listener_b(int kind, const void *payload, void *ud) {
  (void)payload;
  char buf[16];
  snprintf(buf, sizeof buf, "b%d", kind);
  note(ud, buf);
}

static void events_reach_listeners_of_their_kind_in_order(void **state) {
  (void)state;
  ld_broker_t *b = ld_broker_new();
  recorder_t r = {0};
  int64_t h1 = ld_broker_subscribe(b, 1, listener_a, &r);
  int64_t h2 = ld_broker_subscribe(b, 2, listener_b, &r);
  int64_t h3 = ld_broker_subscribe(b, 1, listener_b, &r);
  assert_true(h1 > 0 && h2 > h1 && h3 > h2);
  assert_int_equal(ld_broker_listener_count(b, 1), 2);
  assert_int_equal(ld_broker_publish(b, 1, "x"), 2);
  assert_int_equal(ld_broker_publish(b, 2, "y"), 1);
  assert_int_equal(ld_broker_publish(b, 3, "z"), 0);
  assert_string_equal(r.log, "a1:x,b1,b2");
  assert_int_equal(ld_broker_unsubscribe(b, h1), 0);
  assert_int_equal(ld_broker_unsubscribe(b, h1), LD_ERR_NOT_FOUND);
  r.log[0] = '\0';
  assert_int_equal(ld_broker_publish(b, 1, "x"), 1);
  assert_string_equal(r.log, "b1");
  assert_int_equal(ld_broker_subscribe(b, 0, listener_a, &r), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_broker_subscribe(b, 1, NULL, &r), LD_ERR_INVALID_ARG);
  ld_broker_free(b);
}

static void remove_other(int kind, const void *payload, void *ud) {
  recorder_t *r = ud;
  note(r, "remover");
  ld_broker_unsubscribe(r->b, r->other_handle);
  ld_broker_unsubscribe(r->b, r->handle); /* itself */
  (void)kind;
  (void)payload;
}

static void add_more(int kind, const void *payload, void *ud) {
  recorder_t *r = ud;
  note(r, "adder");
  ld_broker_subscribe(r->b, kind, listener_b, r);
  (void)payload;
}

static void listeners_may_change_the_list_during_a_dispatch(void **state) {
  (void)state;
  ld_broker_t *b = ld_broker_new();
  recorder_t r = {.b = b};
  r.handle = ld_broker_subscribe(b, 5, remove_other, &r);
  r.other_handle = ld_broker_subscribe(b, 5, listener_a, &r); /* removed before its turn */
  ld_broker_subscribe(b, 5, add_more, &r);
  assert_int_equal(ld_broker_publish(b, 5, "p"), 2);
  assert_string_equal(r.log, "remover,adder");
  r.log[0] = '\0';
  /* the remover and its victim are gone; the adder runs and adds another; the added one runs */
  assert_int_equal(ld_broker_publish(b, 5, "p"), 2);
  assert_string_equal(r.log, "adder,b5");
  assert_int_equal(ld_broker_listener_count(b, 5), 3);
  ld_broker_free(b);
}

static void republish(int kind, const void *payload, void *ud) {
  recorder_t *r = ud;
  r->depth++;
  int rc = ld_broker_publish(r->b, kind, payload);
  if (rc == LD_ERR_LIMIT)
    note(r, "limit");
}

static void nesting_is_capped(void **state) {
  (void)state;
  ld_broker_t *b = ld_broker_new();
  recorder_t r = {.b = b};
  ld_broker_subscribe(b, 9, republish, &r);
  assert_int_equal(ld_broker_publish(b, 9, NULL), 1);
  assert_int_equal(r.depth, LD_BROKER_MAX_DEPTH);
  assert_string_equal(r.log, "limit");
  ld_broker_free(b);
}

static int provide_sum(const void *request, void *response, void *ud) {
  const int *in = request;
  int *out = response;
  *out = in[0] + in[1] + *(int *)ud;
  return 0;
}

static int provide_fail(const void *request, void *response, void *ud) {
  (void)request;
  (void)response;
  (void)ud;
  return LD_ERR_UNSUPPORTED;
}

static void providers_answer_requests_by_name(void **state) {
  (void)state;
  ld_broker_t *b = ld_broker_new();
  int bias = 100, in[2] = {2, 3}, out = 0;
  assert_int_equal(ld_broker_request(b, "sum", in, &out), LD_ERR_NOT_FOUND);
  assert_int_equal(ld_broker_set_provider(b, "sum", provide_sum, &bias), 0);
  assert_int_equal(ld_broker_set_provider(b, "sum", provide_sum, &bias), LD_ERR_EXISTS);
  assert_int_equal(ld_broker_set_provider(b, "fail", provide_fail, NULL), 0);
  assert_int_equal(ld_broker_request(b, "sum", in, &out), 0);
  assert_int_equal(out, 105);
  assert_int_equal(ld_broker_request(b, "fail", NULL, NULL), LD_ERR_UNSUPPORTED);
  assert_int_equal(ld_broker_remove_provider(b, "sum"), 0);
  assert_int_equal(ld_broker_remove_provider(b, "sum"), LD_ERR_NOT_FOUND);
  assert_int_equal(ld_broker_request(b, "sum", in, &out), LD_ERR_NOT_FOUND);
  assert_int_equal(ld_broker_request(b, "fail", NULL, NULL), LD_ERR_UNSUPPORTED);

  char long_name[LD_BROKER_MAX_NAME + 2];
  memset(long_name, 'n', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  assert_int_equal(ld_broker_set_provider(b, long_name, provide_sum, NULL), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_broker_set_provider(b, "", provide_sum, NULL), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_broker_set_provider(b, "x", NULL, NULL), LD_ERR_INVALID_ARG);
  for (int i = 0; i < LD_BROKER_MAX_PROVIDERS - 1; i++) {
    char name[16];
    snprintf(name, sizeof name, "p%d", i);
    assert_int_equal(ld_broker_set_provider(b, name, provide_sum, NULL), 0);
  }
  assert_int_equal(ld_broker_set_provider(b, "one-too-many", provide_sum, NULL), LD_ERR_LIMIT);
  ld_broker_free(b);
}

static void listeners_are_capped(void **state) {
  (void)state;
  ld_broker_t *b = ld_broker_new();
  recorder_t r = {0};
  int64_t first = 0;
  for (int i = 0; i < LD_BROKER_MAX_LISTENERS; i++) {
    int64_t h = ld_broker_subscribe(b, 1 + i % 3, listener_b, &r);
    assert_true(h > 0);
    if (i == 0)
      first = h;
  }
  assert_int_equal(ld_broker_subscribe(b, 1, listener_b, &r), LD_ERR_LIMIT);
  assert_int_equal(ld_broker_unsubscribe(b, first), 0);
  assert_true(ld_broker_subscribe(b, 1, listener_b, &r) > 0);
  ld_broker_free(b);
  ld_broker_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(events_reach_listeners_of_their_kind_in_order),
      cmocka_unit_test(listeners_may_change_the_list_during_a_dispatch),
      cmocka_unit_test(nesting_is_capped),
      cmocka_unit_test(providers_answer_requests_by_name),
      cmocka_unit_test(listeners_are_capped),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
