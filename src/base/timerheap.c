#include "base/timerheap.h"

#include <stdlib.h>

#include "base/error.h"

#define TIMERHEAP_MIN_CAP 16

static bool before(const ld_timer_t *a, const ld_timer_t *b) {
  return a->deadline < b->deadline || (a->deadline == b->deadline && a->seq < b->seq);
}

static void place(ld_timerheap_t *h, size_t i, ld_timer_t *t) {
  h->items[i] = t;
  t->index = i + 1;
}

static void sift_up(ld_timerheap_t *h, size_t i) {
  ld_timer_t *t = h->items[i];
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!before(t, h->items[parent]))
      break;
    place(h, i, h->items[parent]);
    i = parent;
  }
  place(h, i, t);
}

static void sift_down(ld_timerheap_t *h, size_t i) {
  ld_timer_t *t = h->items[i];
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= h->len)
      break;
    if (child + 1 < h->len && before(h->items[child + 1], h->items[child]))
      child++;
    if (!before(h->items[child], t))
      break;
    place(h, i, h->items[child]);
    i = child;
  }
  place(h, i, t);
}

void ld_timerheap_init(ld_timerheap_t *h) {
  h->items = NULL;
  h->len = 0;
  h->cap = 0;
  h->next_seq = 0;
}

void ld_timerheap_clear(ld_timerheap_t *h) {
  for (size_t i = 0; i < h->len; i++)
    h->items[i]->index = 0;
  free(h->items);
  ld_timerheap_init(h);
}

static int reserve_one(ld_timerheap_t *h) {
  if (h->len < h->cap)
    return 0;
  size_t cap = h->cap ? h->cap * 2 : TIMERHEAP_MIN_CAP;
  if (cap > SIZE_MAX / sizeof *h->items)
    return LD_ERR_NOMEM;
  ld_timer_t **items = realloc(h->items, cap * sizeof *items);
  if (items == NULL)
    return LD_ERR_NOMEM;
  h->items = items;
  h->cap = cap;
  return 0;
}

int ld_timerheap_add(ld_timerheap_t *h, ld_timer_t *t, uint64_t deadline) {
  if (ld_timer_armed(t))
    return ld_timerheap_update(h, t, deadline);
  int rc = reserve_one(h);
  if (rc != 0)
    return rc;
  t->deadline = deadline;
  t->seq = h->next_seq++;
  place(h, h->len++, t);
  sift_up(h, h->len - 1);
  return 0;
}

void ld_timerheap_remove(ld_timerheap_t *h, ld_timer_t *t) {
  if (!ld_timer_armed(t))
    return;
  size_t i = t->index - 1;
  t->index = 0;
  ld_timer_t *last = h->items[--h->len];
  if (i == h->len)
    return;
  place(h, i, last);
  if (i > 0 && before(last, h->items[(i - 1) / 2]))
    sift_up(h, i);
  else
    sift_down(h, i);
}

int ld_timerheap_update(ld_timerheap_t *h, ld_timer_t *t, uint64_t deadline) {
  if (!ld_timer_armed(t))
    return ld_timerheap_add(h, t, deadline);
  ld_timerheap_remove(h, t);
  return ld_timerheap_add(h, t, deadline); /* cannot fail: the slot was just freed */
}

ld_timer_t *ld_timerheap_peek(const ld_timerheap_t *h) {
  return h->len > 0 ? h->items[0] : NULL;
}

uint64_t ld_timerheap_next_deadline(const ld_timerheap_t *h) {
  return h->len > 0 ? h->items[0]->deadline : UINT64_MAX;
}

ld_timer_t *ld_timerheap_pop_expired(ld_timerheap_t *h, uint64_t now) {
  ld_timer_t *t = ld_timerheap_peek(h);
  if (t == NULL || t->deadline > now)
    return NULL;
  ld_timerheap_remove(h, t);
  return t;
}
