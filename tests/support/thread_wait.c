#include "thread_wait.h"

#include <time.h>

void tw_cond_wait_ms(pthread_cond_t *cv, pthread_mutex_t *mu, unsigned ms) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_nsec += (long)ms * 1000000;
  if (ts.tv_nsec >= 1000000000) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000;
  }
  pthread_cond_timedwait(cv, mu, &ts);
}
