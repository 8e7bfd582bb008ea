/* Clocks: monotonic time for timers and deadlines, wall time for timestamps. */
#ifndef LD_BASE_CLOCK_H
#define LD_BASE_CLOCK_H

#include <stdint.h>

/* Monotonic milliseconds since an arbitrary origin (CLOCK_MONOTONIC). */
uint64_t ld_now_ms(void);

/* Monotonic nanoseconds since an arbitrary origin. */
uint64_t ld_now_ns(void);

/* Wall-clock nanoseconds since the Unix epoch (CLOCK_REALTIME). */
uint64_t ld_wall_ns(void);

#endif
