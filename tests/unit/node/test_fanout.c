#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "node/fanout.h"

typedef struct probe {
  char log[256];
  ld_fanout_t *f;
  int victim;
  const char *name;
} probe_t;

typedef struct stage_probe {
  probe_t *shared;
  const char *name;
  int self;
} stage_probe_t;

static void record(const ld_fanout_message_t *m, void *ud) {
  stage_probe_t *p = ud;
  size_t n = strlen(p->shared->log);
  snprintf(p->shared->log + n, sizeof p->shared->log - n, "%s%s:%s", n > 0 ? "," : "", p->name,
           m->pubsub_topic);
}

static ld_fanout_message_t message(const char *topic) {
  ld_fanout_message_t m;
  memset(&m, 0, sizeof m);
  m.pubsub_topic = topic;
  return m;
}

static void stages_run_in_nwakus_order(void **state) {
  (void)state;
  ld_fanout_t *f = ld_fanout_new();
  probe_t shared = {0};
  /* added out of order on purpose */
  stage_probe_t broker = {&shared, "broker", 0}, sync = {&shared, "sync", 0},
                archive = {&shared, "archive", 0}, filter1 = {&shared, "filter1", 0},
                filter2 = {&shared, "filter2", 0};
  assert_true(ld_fanout_add(f, LD_FANOUT_BROKER, record, &broker) > 0);
  assert_true(ld_fanout_add(f, LD_FANOUT_SYNC, record, &sync) > 0);
  assert_true(ld_fanout_add(f, LD_FANOUT_FILTER, record, &filter1) > 0);
  assert_true(ld_fanout_add(f, LD_FANOUT_ARCHIVE, record, &archive) > 0);
  assert_true(ld_fanout_add(f, LD_FANOUT_FILTER, record, &filter2) > 0);
  assert_int_equal(ld_fanout_count(f, LD_FANOUT_FILTER), 2);
  ld_fanout_message_t m = message("/waku/2/rs/0/1");
  assert_int_equal(ld_fanout_dispatch(f, &m), 5);
  assert_string_equal(shared.log, "filter1:/waku/2/rs/0/1,filter2:/waku/2/rs/0/1,"
                                  "archive:/waku/2/rs/0/1,sync:/waku/2/rs/0/1,"
                                  "broker:/waku/2/rs/0/1");
  assert_int_equal(ld_fanout_add(f, LD_FANOUT_STAGES, record, &broker), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_fanout_add(f, LD_FANOUT_FILTER, NULL, &broker), LD_ERR_INVALID_ARG);
  ld_fanout_free(f);
}

typedef struct mutator {
  ld_fanout_t *f;
  int victim; /* handle removed from inside the call */
  int self;   /* own handle, removed too */
  stage_probe_t *added;
  int calls;
} mutator_t;

static void mutate(const ld_fanout_message_t *m, void *ud) {
  (void)m;
  mutator_t *mu = ud;
  mu->calls++;
  ld_fanout_remove(mu->f, mu->victim);
  ld_fanout_remove(mu->f, mu->self);
  ld_fanout_add(mu->f, LD_FANOUT_FILTER, record, mu->added);
  assert_int_equal(ld_fanout_dispatch(mu->f, m), LD_ERR_STATE);
}

static void handlers_may_change_the_registry_while_it_runs(void **state) {
  (void)state;
  ld_fanout_t *f = ld_fanout_new();
  probe_t shared = {0};
  stage_probe_t victim = {&shared, "victim", 0}, late = {&shared, "late", 0},
                added = {&shared, "added", 0};
  mutator_t mu = {f, 0, 0, &added, 0};
  mu.self = ld_fanout_add(f, LD_FANOUT_FILTER, mutate, &mu);
  mu.victim = ld_fanout_add(f, LD_FANOUT_ARCHIVE, record, &victim);
  ld_fanout_add(f, LD_FANOUT_BROKER, record, &late);
  ld_fanout_message_t m = message("t");
  assert_int_equal(ld_fanout_dispatch(f, &m), 2); /* mutate, late */
  assert_string_equal(shared.log, "late:t");
  shared.log[0] = '\0';
  assert_int_equal(ld_fanout_dispatch(f, &m), 2); /* added (filter), late */
  assert_string_equal(shared.log, "added:t,late:t");
  assert_int_equal(mu.calls, 1);
  assert_int_equal(ld_fanout_remove(f, mu.self), LD_ERR_NOT_FOUND);
  assert_int_equal(ld_fanout_remove(f, 0), LD_ERR_NOT_FOUND);
  ld_fanout_free(f);
}

static void handlers_are_capped_and_slots_reused(void **state) {
  (void)state;
  ld_fanout_t *f = ld_fanout_new();
  probe_t shared = {0};
  stage_probe_t p = {&shared, "p", 0};
  int first = 0;
  for (int i = 0; i < LD_FANOUT_MAX_HANDLERS; i++) {
    int h = ld_fanout_add(f, (ld_fanout_stage_t)(i % LD_FANOUT_STAGES), record, &p);
    assert_true(h > 0);
    if (i == 0)
      first = h;
  }
  assert_int_equal(ld_fanout_add(f, LD_FANOUT_SYNC, record, &p), LD_ERR_LIMIT);
  assert_int_equal(ld_fanout_remove(f, first), 0);
  int again = ld_fanout_add(f, LD_FANOUT_SYNC, record, &p);
  assert_true(again > 0 && again != first); /* handles are never reused */
  ld_fanout_free(f);
  ld_fanout_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(stages_run_in_nwakus_order),
      cmocka_unit_test(handlers_may_change_the_registry_while_it_runs),
      cmocka_unit_test(handlers_are_capped_and_slots_reused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
