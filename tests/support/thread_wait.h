/* Waiting on a condition variable with a short timeout, for tests whose callbacks arrive on
 * another thread (the C library's worker): the caller loops on its own predicate and deadline. */
#ifndef LD_TESTS_THREAD_WAIT_H
#define LD_TESTS_THREAD_WAIT_H

#include <pthread.h>

/* pthread_cond_timedwait on `cv` (with `mu` held by the caller) for at most `ms` milliseconds
 * (ms < 1000) of CLOCK_REALTIME; returns when signalled, on timeout, or spuriously. */
void tw_cond_wait_ms(pthread_cond_t *cv, pthread_mutex_t *mu, unsigned ms);

#endif
