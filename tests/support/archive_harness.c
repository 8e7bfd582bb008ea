#include "archive_harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

typedef struct counted {
  bool done;
  int err;
  uint64_t n;
} counted_t;

static void count_cb(int err, uint64_t n, void *ud) {
  counted_t *c = ud;
  c->done = true;
  c->err = err;
  c->n = n;
}

uint64_t ah_count(ld_archive_t *a, ah_wait_fn wait) {
  counted_t c = {0};
  assert_int_equal(ld_archive_count(a, count_cb, &c), 0);
  wait(&c.done);
  assert_int_equal(c.err, 0);
  return c.n;
}

static void closed(void *ud) {
  *(bool *)ud = true;
}

void ah_close(ld_archive_t *a, ah_wait_fn wait) {
  bool done = false;
  ld_archive_close(a, closed, &done);
  wait(&done);
}
