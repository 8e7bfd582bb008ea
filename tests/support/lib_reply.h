/* The answer of one C library request (the FFICallBack of liblogosdelivery.h), which comes on the
 * library's thread: pass on_reply with a reply_t as the callback and its user data, then wait
 * for it on the test's thread. */
#ifndef LD_TESTS_LIB_REPLY_H
#define LD_TESTS_LIB_REPLY_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct reply {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int n, ret;
  char msg[1024]; /* the answer's text, cut to fit, NUL-terminated */
} reply_t;

/* Zeroes `r` and sets up its lock. */
void reply_init(reply_t *r);

/* The FFICallBack: records the code and the text of the answer in the reply_t `ud`. */
void on_reply(int ret, const char *msg, size_t len, void *ud);

/* Waits up to `wait_ms` for the answer, asserts (cmocka) that exactly one came, and releases the
 * lock; r->ret and r->msg then hold it. */
void reply_wait(reply_t *r, uint64_t wait_ms);

#endif
