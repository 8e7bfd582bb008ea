#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>
#include <time.h>

#include <cmocka.h>

#include "base/clock.h"

static void monotonic_never_goes_back(void **state) {
  (void)state;
  uint64_t prev = ld_now_ns();
  for (int i = 0; i < 10000; i++) {
    uint64_t now = ld_now_ns();
    assert_true(now >= prev);
    prev = now;
  }
}

static void milliseconds_agree_with_nanoseconds(void **state) {
  (void)state;
  uint64_t ns0 = ld_now_ns();
  uint64_t ms = ld_now_ms();
  uint64_t ns1 = ld_now_ns();
  assert_true(ms >= ns0 / 1000000ULL);
  assert_true(ms <= ns1 / 1000000ULL);
}

static void monotonic_advances_with_sleep(void **state) {
  (void)state;
  uint64_t t0 = ld_now_ns();
  struct timespec ts = {0, 20 * 1000000L};
  nanosleep(&ts, NULL);
  uint64_t elapsed = ld_now_ns() - t0;
  assert_true(elapsed >= 20 * 1000000ULL);
  assert_true(elapsed < 5ULL * 1000000000ULL);
}

/* Read against gettimeofday(), not time(): glibc's time() reads the coarse clock, which can be
 * a tick behind the precise one, so a wall time read after it may already be in its next second. */
static void wall_clock_is_unix_time(void **state) {
  (void)state;
  struct timeval before, after;
  assert_int_equal(gettimeofday(&before, NULL), 0);
  uint64_t wall = ld_wall_ns();
  assert_int_equal(gettimeofday(&after, NULL), 0);
  uint64_t before_us = (uint64_t)before.tv_sec * 1000000ULL + (uint64_t)before.tv_usec;
  uint64_t after_us = (uint64_t)after.tv_sec * 1000000ULL + (uint64_t)after.tv_usec;
  assert_true(wall / 1000ULL >= before_us);
  assert_true(wall / 1000ULL <= after_us);
  assert_true(wall > 1600000000ULL * 1000000000ULL); /* after September 2020 */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(monotonic_never_goes_back),
      cmocka_unit_test(milliseconds_agree_with_nanoseconds),
      cmocka_unit_test(monotonic_advances_with_sleep),
      cmocka_unit_test(wall_clock_is_unix_time),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
