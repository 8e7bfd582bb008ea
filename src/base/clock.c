#include "base/clock.h"

#include <time.h>

static uint64_t clock_ns(clockid_t id) {
  struct timespec ts;
  if (clock_gettime(id, &ts) != 0)
    return 0;
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t ld_now_ns(void) {
  return clock_ns(CLOCK_MONOTONIC);
}

uint64_t ld_now_ms(void) {
  return ld_now_ns() / 1000000ULL;
}

uint64_t ld_wall_ns(void) {
  return clock_ns(CLOCK_REALTIME);
}
