/* The driver shared by the stream-muxer fuzz targets. Arbitrary bytes go into one engine in
 * pieces of varying sizes (or all at once) with an advancing fake clock, whatever it sends goes
 * into a mirror engine of the opposite role, and the callbacks act on the streams from a small
 * seeded generator: write (small and big), close, reset, open and go away. Each target describes
 * its muxer in an mf_target_t and calls mf_fuzz_one from LLVMFuzzerTestOneInput.
 *
 * Checks common to every muxer, each an abort(): reads fail only with the target's expected
 * codes, delivered bytes are never empty and consumed() of them succeeds, a reset stream is gone,
 * the stream count stays within MF_MAX_STREAMS, take_output drains the pending output. */
#ifndef LD_FUZZ_MUXER_FUZZ_H
#define LD_FUZZ_MUXER_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/buf.h"
#include "base/error.h"
#include "p2p/muxer.h"

#define MF_MAX_STREAMS 16

typedef struct mf_engine mf_engine_t;

/* What differs between the muxers. Lives for the whole process (static storage). */
typedef struct mf_target {
  const ld_muxer_ops_t *ops;
  const ld_muxer_callbacks_t *callbacks; /* their user_data is the mf_engine_t */
  const uint8_t *big;                    /* payload of the big writes */
  size_t big_len;
  int big_writes;                            /* per engine and run, to bound the work per input */
  void (*configure)(ld_muxer_config_t *cfg); /* after the defaults and max_streams; may be NULL */
  bool (*expected_error)(int rc);            /* the documented failures of read */
  /* Called after each piece is read, with the clock already advanced; returns the result the
   * run goes on with (a negative one ends it). */
  int (*after_read)(mf_engine_t *f, int rc, uint64_t now);
} mf_target_t;

struct mf_engine {
  const mf_target_t *t;
  ld_muxer_t *m;
  uint32_t rng;
  int big_writes; /* left in this run */
};

static inline uint32_t mf_next_rand(uint32_t *s) {
  *s = *s * 1103515245u + 12345u;
  return *s >> 8;
}

static inline void mf_act(mf_engine_t *f, uint64_t sid, uint32_t sel) {
  const ld_muxer_ops_t *ops = f->t->ops;
  uint64_t other;
  switch (sel % 9) {
  case 0:
    ops->write(f->m, sid, (const uint8_t *)"hello", 5);
    break;
  case 1:
    if (f->big_writes > 0) {
      f->big_writes--;
      ops->write(f->m, sid, f->t->big, f->t->big_len);
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

static inline int mf_on_open(void *ud, uint64_t sid) {
  mf_engine_t *f = ud;
  mf_act(f, sid, mf_next_rand(&f->rng));
  return 0;
}

static inline int mf_on_data(void *ud, uint64_t sid, const uint8_t *data, size_t len) {
  mf_engine_t *f = ud;
  if (len == 0 || f->t->ops->consumed(f->m, sid, len) != 0)
    abort(); /* delivered bytes are never empty and can always be consumed */
  mf_act(f, sid, data[0] ^ mf_next_rand(&f->rng));
  return 0;
}

static inline int mf_on_eof(void *ud, uint64_t sid) {
  mf_engine_t *f = ud;
  if (mf_next_rand(&f->rng) % 2 == 0)
    f->t->ops->close_write(f->m, sid);
  return 0;
}

static inline int mf_on_reset(void *ud, uint64_t sid) {
  mf_engine_t *f = ud;
  if (f->t->ops->write(f->m, sid, (const uint8_t *)"x", 1) != LD_ERR_NOT_FOUND)
    abort(); /* a reset stream is gone */
  return 0;
}

static inline void mf_check(mf_engine_t *f, int rc) {
  if (rc < 0 && !f->t->expected_error(rc))
    abort();
  if (f->t->ops->stream_count(f->m) > MF_MAX_STREAMS)
    abort();
}

static inline void mf_drain(mf_engine_t *f, mf_engine_t *mirror, ld_buf_t *out, uint64_t now) {
  const ld_muxer_ops_t *ops = f->t->ops;
  ld_buf_reset(out);
  if (ops->take_output(f->m, out) != 0 || ops->pending_output(f->m) != 0)
    abort();
  if (mirror != NULL && out->len > 0) {
    mf_check(mirror, ops->read(mirror->m, out->data, out->len, now));
    ld_buf_reset(out);
    ops->take_output(mirror->m, out);
  }
}

static inline void mf_feed(mf_engine_t *f, mf_engine_t *mirror, const uint8_t *data, size_t size,
                           bool whole) {
  ld_buf_t out;
  ld_buf_init(&out);
  uint64_t now = 0;
  for (size_t pos = 0; pos < size;) {
    size_t n = whole ? size : 1 + mf_next_rand(&f->rng) % 97;
    if (n > size - pos)
      n = size - pos;
    int rc = f->t->ops->read(f->m, data + pos, n, now);
    mf_check(f, rc);
    pos += n;
    now += 7;
    rc = f->t->after_read(f, rc, now);
    mf_drain(f, mirror, &out, now);
    if (rc < 0)
      break;
  }
  ld_buf_clear(&out);
}

static inline void mf_run(const mf_target_t *t, bool initiator, const uint8_t *data, size_t size,
                          uint32_t seed, bool whole) {
  ld_muxer_config_t cfg;
  ld_muxer_config_default(&cfg);
  cfg.max_streams = MF_MAX_STREAMS;
  if (t->configure != NULL)
    t->configure(&cfg);
  mf_engine_t f = {.t = t, .rng = seed, .big_writes = t->big_writes};
  mf_engine_t mirror = {.t = t, .rng = seed + 1, .big_writes = t->big_writes};
  f.m = t->ops->create(initiator, &cfg, t->callbacks, &f);
  mirror.m = t->ops->create(!initiator, &cfg, t->callbacks, &mirror);
  if (f.m == NULL || mirror.m == NULL)
    abort();
  mf_feed(&f, &mirror, data, size, whole);
  t->ops->destroy(f.m);
  t->ops->destroy(mirror.m);
}

/* Three runs per input: dialer-side in pieces, listener-side in pieces, listener-side whole. */
static inline int mf_fuzz_one(const mf_target_t *t, const uint8_t *data, size_t size) {
  uint32_t seed = (uint32_t)size * 2654435761u;
  mf_run(t, true, data, size, seed, false);
  mf_run(t, false, data, size, seed ^ 0x5bd1e995u, false);
  mf_run(t, false, data, size, seed, true);
  return 0;
}

#endif
