/* The answer of one C library request. */
#include "lib_reply.h"

#include <setjmp.h>
#include <stdarg.h>
#include <string.h>

#include <cmocka.h>

#include "base/clock.h"
#include "thread_wait.h"

void reply_init(reply_t *r) {
  memset(r, 0, sizeof *r);
  pthread_mutex_init(&r->mu, NULL);
  pthread_cond_init(&r->cv, NULL);
}

void on_reply(int ret, const char *msg, size_t len, void *ud) {
  reply_t *r = ud;
  pthread_mutex_lock(&r->mu);
  r->n++;
  r->ret = ret;
  size_t n = msg == NULL ? 0 : len < sizeof r->msg - 1 ? len : sizeof r->msg - 1;
  if (n > 0)
    memcpy(r->msg, msg, n);
  r->msg[n] = '\0';
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
}

void reply_wait(reply_t *r, uint64_t wait_ms) {
  uint64_t deadline = ld_now_ms() + wait_ms;
  pthread_mutex_lock(&r->mu);
  while (r->n == 0 && ld_now_ms() < deadline)
    tw_cond_wait_ms(&r->cv, &r->mu, 50);
  pthread_mutex_unlock(&r->mu);
  assert_int_equal(r->n, 1);
  pthread_mutex_destroy(&r->mu);
  pthread_cond_destroy(&r->cv);
}
