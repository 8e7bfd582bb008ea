/* An intrusive binary min-heap of deadlines.
 *
 * Embed an ld_timer_t in your own struct, arm it with ld_timerheap_add and recover your struct
 * from the returned pointer with a container-of cast. The heap stores pointers only; it never
 * allocates or frees the timers. Timers with equal deadlines come out in the order they were
 * armed (or last re-armed by ld_timerheap_update). Not thread-safe. */
#ifndef LD_BASE_TIMERHEAP_H
#define LD_BASE_TIMERHEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A zero-initialised timer (memset, calloc, = {0}) is valid and unarmed. */
typedef struct ld_timer {
  uint64_t deadline; /* read-only while armed */
  size_t index;      /* heap position + 1 while armed, 0 when not armed (internal) */
  uint64_t seq;      /* arming order, for stable ties (internal) */
} ld_timer_t;

typedef struct ld_timerheap {
  ld_timer_t **items;
  size_t len;
  size_t cap;
  uint64_t next_seq;
} ld_timerheap_t;

/* Initialises an unarmed timer (equivalent to zeroing it). */
#define LD_TIMER_INIT                                                                              \
  { 0, 0, 0 }
static inline void ld_timer_init(ld_timer_t *t) {
  t->deadline = 0;
  t->index = 0;
  t->seq = 0;
}

static inline bool ld_timer_armed(const ld_timer_t *t) {
  return t->index != 0;
}

void ld_timerheap_init(ld_timerheap_t *h);

/* Disarms every timer still in the heap and frees the heap's array; the heap stays usable. */
void ld_timerheap_clear(ld_timerheap_t *h);

/* Arms `t` (zeroed or unarmed, or armed in this heap) for `deadline`; when already armed in this
 * heap it is re-armed as by ld_timerheap_update. Returns 0 or LD_ERR_NOMEM (t stays unarmed). */
int ld_timerheap_add(ld_timerheap_t *h, ld_timer_t *t, uint64_t deadline);

/* Disarms `t`; a no-op when it is not armed. */
void ld_timerheap_remove(ld_timerheap_t *h, ld_timer_t *t);

/* Moves an armed timer to a new deadline, or arms an unarmed one. Returns 0 or LD_ERR_NOMEM. */
int ld_timerheap_update(ld_timerheap_t *h, ld_timer_t *t, uint64_t deadline);

/* The timer with the earliest deadline, or NULL when the heap is empty. It stays armed. */
ld_timer_t *ld_timerheap_peek(const ld_timerheap_t *h);

/* Earliest deadline, or UINT64_MAX when empty. */
uint64_t ld_timerheap_next_deadline(const ld_timerheap_t *h);

/* When the earliest timer's deadline is <= now, disarms and returns it; else returns NULL.
 * Call in a loop to drain every expired timer. */
ld_timer_t *ld_timerheap_pop_expired(ld_timerheap_t *h, uint64_t now);

static inline size_t ld_timerheap_len(const ld_timerheap_t *h) {
  return h->len;
}

#endif
