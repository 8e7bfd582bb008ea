/* Fuzz target: arbitrary bytes into a client-side and a server-side yamux engine, fed in pieces
 * of varying sizes with an advancing fake clock. The callbacks consume, write, close, reset and
 * open streams so that every stream state is reachable. Whatever the engines send is fed into a
 * mirror engine of the opposite role. Checks: reads fail only with the documented codes,
 * consumed() of delivered bytes always succeeds, the stream count stays within max_streams,
 * writable streams accept bytes, open_stream refuses after GO_AWAY, take_output drains. */
#include <stdint.h>
#include <stdlib.h>

#include "base/error.h"
#include "p2p/muxer.h"

#include "muxer_fuzz.h"

static uint8_t big[300000];

static int on_writable(void *ud, uint64_t sid) {
  mf_engine_t *f = ud;
  if (f->t->ops->write(f->m, sid, big, 100) <= 0)
    abort(); /* a stream reported writable takes bytes */
  return 0;
}

static int on_go_away(void *ud, uint32_t code) {
  (void)code;
  mf_engine_t *f = ud;
  uint64_t sid;
  if (f->t->ops->open_stream(f->m, &sid) != LD_ERR_GOAWAY)
    abort();
  return 0;
}

static const ld_muxer_callbacks_t callbacks = {mf_on_open,  mf_on_data,  mf_on_eof,
                                               mf_on_reset, on_writable, on_go_away};

static bool expected_error(int rc) {
  return rc == LD_ERR_PROTOCOL || rc == LD_ERR_WINDOW_EXCEEDED || rc == LD_ERR_TIMEOUT ||
         rc == LD_ERR_NOMEM;
}

static void configure(ld_muxer_config_t *cfg) {
  cfg->keepalive_ms = 50;
  cfg->max_recv_window = 1u << 20;
}

static int after_read(mf_engine_t *f, int rc, uint64_t now) {
  if (rc == 0 && f->t->ops->next_deadline(f->m) <= now)
    rc = f->t->ops->handle_timeout(f->m, now);
  mf_check(f, rc);
  return rc;
}

static const mf_target_t target = {
    .ops = &ld_yamux_ops,
    .callbacks = &callbacks,
    .big = big,
    .big_len = sizeof big,
    .big_writes = 8,
    .configure = configure,
    .expected_error = expected_error,
    .after_read = after_read,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return mf_fuzz_one(&target, data, size);
}
