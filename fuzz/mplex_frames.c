/* Fuzz target: arbitrary bytes into a dialer-side and a listener-side mplex engine, fed in pieces
 * of varying sizes. The callbacks consume, write (including writes that split into several
 * 1 MiB messages), close, reset, open streams and go away, so that every stream state is
 * reachable. Whatever the engines send is fed into a mirror engine. Checks: reads fail only with
 * the documented codes, consumed() of delivered bytes always succeeds, the stream count stays
 * within max_streams, a reset stream is gone, take_output drains. */
#include <stdint.h>
#include <stdlib.h>

#include "base/error.h"
#include "p2p/muxer.h"

#include "muxer_fuzz.h"

static uint8_t big[(1u << 20) + 1000];

static const ld_muxer_callbacks_t callbacks = {mf_on_open,  mf_on_data, mf_on_eof,
                                               mf_on_reset, NULL,       NULL};

static bool expected_error(int rc) {
  return rc == LD_ERR_PROTOCOL || rc == LD_ERR_MALFORMED || rc == LD_ERR_FRAME_TOO_LARGE ||
         rc == LD_ERR_NOMEM;
}

static int after_read(mf_engine_t *f, int rc, uint64_t now) {
  (void)now;
  if (f->t->ops->next_deadline(f->m) != UINT64_MAX)
    abort(); /* mplex has no timers */
  return rc;
}

static const mf_target_t target = {
    .ops = &ld_mplex_ops,
    .callbacks = &callbacks,
    .big = big,
    .big_len = sizeof big,
    .big_writes = 1,
    .expected_error = expected_error,
    .after_read = after_read,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return mf_fuzz_one(&target, data, size);
}
