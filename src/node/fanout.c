#include "node/fanout.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "base/error.h"

typedef struct handler {
  int handle; /* 0 = free slot */
  ld_fanout_stage_t stage;
  uint64_t order; /* insertion order */
  ld_fanout_fn fn;
  void *user_data;
} handler_t;

struct ld_fanout {
  handler_t handlers[LD_FANOUT_MAX_HANDLERS];
  int next_handle;
  uint64_t next_order;
  bool dispatching;
};

ld_fanout_t *ld_fanout_new(void) {
  ld_fanout_t *f = calloc(1, sizeof *f);
  if (f != NULL)
    f->next_handle = 1;
  return f;
}

void ld_fanout_free(ld_fanout_t *f) {
  free(f);
}

int ld_fanout_add(ld_fanout_t *f, ld_fanout_stage_t stage, ld_fanout_fn fn, void *user_data) {
  if ((unsigned)stage >= LD_FANOUT_STAGES || fn == NULL)
    return LD_ERR_INVALID_ARG;
  for (size_t i = 0; i < LD_FANOUT_MAX_HANDLERS; i++) {
    handler_t *h = &f->handlers[i];
    if (h->handle != 0)
      continue;
    h->handle = f->next_handle++;
    h->stage = stage;
    h->order = f->next_order++;
    h->fn = fn;
    h->user_data = user_data;
    return h->handle;
  }
  return LD_ERR_LIMIT;
}

int ld_fanout_remove(ld_fanout_t *f, int handle) {
  for (size_t i = 0; i < LD_FANOUT_MAX_HANDLERS; i++)
    if (handle > 0 && f->handlers[i].handle == handle) {
      f->handlers[i].handle = 0;
      return 0;
    }
  return LD_ERR_NOT_FOUND;
}

/* The live handler of `stage` with the smallest order above `after` that existed when the
 * dispatch began (order < limit), or NULL. */
static handler_t *next_handler(ld_fanout_t *f, ld_fanout_stage_t stage, uint64_t after, bool first,
                               uint64_t limit) {
  handler_t *best = NULL;
  for (size_t i = 0; i < LD_FANOUT_MAX_HANDLERS; i++) {
    handler_t *h = &f->handlers[i];
    if (h->handle == 0 || h->stage != stage || h->order >= limit || (!first && h->order <= after))
      continue;
    if (best == NULL || h->order < best->order)
      best = h;
  }
  return best;
}

/* ---- test loss ------------------------------------------------------------------------------ */

static _Atomic uint32_t g_loss_permille;
static _Atomic uint64_t g_loss_seed, g_loss_draws, g_loss_dropped;

void ld_fanout_set_test_loss(uint32_t permille, uint64_t seed) {
  atomic_store(&g_loss_seed, seed);
  atomic_store(&g_loss_draws, 0);
  atomic_store(&g_loss_dropped, 0);
  atomic_store(&g_loss_permille, permille > 1000 ? 1000 : permille);
}

/* splitmix64 over the process's draw counter: reproducible per seed when one thread draws. */
static bool test_loss_drops(const ld_fanout_message_t *m) {
  uint32_t permille = atomic_load_explicit(&g_loss_permille, memory_order_relaxed);
  if (permille == 0 || m->own)
    return false;
  uint64_t z =
      atomic_load(&g_loss_seed) + 0x9e3779b97f4a7c15u * (atomic_fetch_add(&g_loss_draws, 1) + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  z ^= z >> 31;
  bool drop = z % 1000 < permille;
  if (drop)
    atomic_fetch_add(&g_loss_dropped, 1);
  return drop;
}

static _Atomic uint64_t g_drop_min_len;
static _Atomic int64_t g_drop_left;

void ld_fanout_set_test_drop_large(size_t min_payload_len, uint32_t count) {
  atomic_store(&g_drop_min_len, (uint64_t)min_payload_len);
  atomic_store(&g_drop_left, (int64_t)count);
}

/* One of the next `count` messages from peers with a payload of at least `min_payload_len`. */
static bool test_drop_large(const ld_fanout_message_t *m) {
  if (atomic_load_explicit(&g_drop_left, memory_order_relaxed) <= 0 || m->own ||
      m->msg->payload_len < atomic_load(&g_drop_min_len))
    return false;
  if (atomic_fetch_sub(&g_drop_left, 1) <= 0)
    return false;
  atomic_fetch_add(&g_loss_dropped, 1);
  return true;
}

uint64_t ld_fanout_test_loss_dropped(void) {
  return atomic_load(&g_loss_dropped);
}

int ld_fanout_dispatch(ld_fanout_t *f, const ld_fanout_message_t *m) {
  if (f->dispatching)
    return LD_ERR_STATE;
  if (test_loss_drops(m) || test_drop_large(m))
    return 0;
  f->dispatching = true;
  uint64_t limit = f->next_order;
  int called = 0;
  for (int s = 0; s < LD_FANOUT_STAGES; s++) {
    uint64_t after = 0;
    bool first = true;
    handler_t *h;
    while ((h = next_handler(f, (ld_fanout_stage_t)s, after, first, limit)) != NULL) {
      after = h->order;
      first = false;
      ld_fanout_fn fn = h->fn;
      void *ud = h->user_data;
      fn(m, ud);
      called++;
    }
  }
  f->dispatching = false;
  return called;
}

size_t ld_fanout_count(const ld_fanout_t *f, ld_fanout_stage_t stage) {
  size_t n = 0;
  for (size_t i = 0; i < LD_FANOUT_MAX_HANDLERS; i++)
    n += f->handlers[i].handle != 0 && f->handlers[i].stage == stage;
  return n;
}
