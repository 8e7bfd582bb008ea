/* Fuzz target: arbitrary bytes into a dialer-side and a listener-side mplex engine, fed in pieces
 * of varying sizes. The callbacks consume, write (including writes that split into several
 * 1 MiB messages), close, reset, open streams and go away, so that every stream state is
 * reachable. Whatever the engines send is fed into a mirror engine. Checks: reads fail only with
 * the documented codes, consumed() of delivered bytes always succeeds, the stream count stays
 * within max_streams, a reset stream is gone, take_output drains. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "p2p/muxer.h"

#define FUZZ_MAX_STREAMS 16

typedef struct fz {
  ld_muxer_t *m;
  uint32_t rng;
  int big_writes; /* left in this run, to bound the work per input */
} fz_t;

static const ld_muxer_ops_t *ops = &ld_mplex_ops;
static uint8_t big[(1u << 20) + 1000];

static uint32_t next_rand(uint32_t *s) {
  *s = *s * 1103515245u + 12345u;
  return *s >> 8;
}

static void act(fz_t *f, uint64_t sid, uint32_t sel) {
  uint64_t other;
  switch (sel % 9) {
  case 0:
    ops->write(f->m, sid, (const uint8_t *)"hello", 5);
    break;
  case 1:
    if (f->big_writes > 0) {
      f->big_writes--;
      ops->write(f->m, sid, big, sizeof big);
    }
    break;
  case 2:
    ops->close_write(f->m, sid);
    break;
  case 3:
    ops->reset(f->m, sid);
    break;
  case 4:
    if (ops->open_stream(f->m, &other) == 0)
      ops->write(f->m, other, (const uint8_t *)"x", 1);
    break;
  case 5:
    if (sel % 7 == 0)
      ops->go_away(f->m, 0);
    break;
  default:
    break;
  }
}

static int on_open(void *ud, uint64_t sid) {
  fz_t *f = ud;
  act(f, sid, next_rand(&f->rng));
  return 0;
}

static int on_data(void *ud, uint64_t sid, const uint8_t *data, size_t len) {
  fz_t *f = ud;
  if (len == 0 || ops->consumed(f->m, sid, len) != 0)
    abort(); /* delivered bytes are never empty and can always be consumed */
  act(f, sid, data[0] ^ next_rand(&f->rng));
  return 0;
}

static int on_eof(void *ud, uint64_t sid) {
  fz_t *f = ud;
  if (next_rand(&f->rng) % 2 == 0)
    ops->close_write(f->m, sid);
  return 0;
}

static int on_reset(void *ud, uint64_t sid) {
  fz_t *f = ud;
  if (ops->write(f->m, sid, (const uint8_t *)"x", 1) != LD_ERR_NOT_FOUND)
    abort(); /* a reset stream is gone */
  return 0;
}

static const ld_muxer_callbacks_t callbacks = {on_open, on_data, on_eof, on_reset, NULL, NULL};

static bool expected_error(int rc) {
  return rc == LD_ERR_PROTOCOL || rc == LD_ERR_MALFORMED || rc == LD_ERR_FRAME_TOO_LARGE ||
         rc == LD_ERR_NOMEM;
}

static void check(fz_t *f, int rc) {
  if (rc < 0 && !expected_error(rc))
    abort();
  if (ops->stream_count(f->m) > FUZZ_MAX_STREAMS)
    abort();
}

static void drain(fz_t *f, fz_t *mirror, ld_buf_t *out, uint64_t now) {
  ld_buf_reset(out);
  if (ops->take_output(f->m, out) != 0 || ops->pending_output(f->m) != 0)
    abort();
  if (mirror != NULL && out->len > 0) {
    check(mirror, ops->read(mirror->m, out->data, out->len, now));
    ld_buf_reset(out);
    ops->take_output(mirror->m, out);
  }
}

static void run(bool initiator, const uint8_t *data, size_t size, uint32_t seed, bool whole) {
  ld_muxer_config_t cfg;
  ld_muxer_config_default(&cfg);
  cfg.max_streams = FUZZ_MAX_STREAMS;
  fz_t f = {.rng = seed, .big_writes = 1}, mirror = {.rng = seed + 1, .big_writes = 1};
  f.m = ops->create(initiator, &cfg, &callbacks, &f);
  mirror.m = ops->create(!initiator, &cfg, &callbacks, &mirror);
  if (f.m == NULL || mirror.m == NULL)
    abort();
  ld_buf_t out;
  ld_buf_init(&out);
  uint64_t now = 0;
  for (size_t pos = 0; pos < size;) {
    size_t n = whole ? size : 1 + next_rand(&f.rng) % 97;
    if (n > size - pos)
      n = size - pos;
    int rc = ops->read(f.m, data + pos, n, now);
    check(&f, rc);
    pos += n;
    now += 7;
    if (ops->next_deadline(f.m) != UINT64_MAX)
      abort(); /* mplex has no timers */
    drain(&f, &mirror, &out, now);
    if (rc < 0)
      break;
  }
  ld_buf_clear(&out);
  ops->destroy(f.m);
  ops->destroy(mirror.m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint32_t seed = (uint32_t)size * 2654435761u;
  run(true, data, size, seed, false);
  run(false, data, size, seed ^ 0x5bd1e995u, false);
  run(false, data, size, seed, true);
  return 0;
}
