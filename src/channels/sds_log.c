/* The local log: message IDs ordered by (Lamport, ID), indexed by ID, with a bounded cache of
 * repair copies for the newest messages. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "channels/sds_internal.h"

int sds_log_init(sds_log_t *l) {
  memset(l, 0, sizeof *l);
  l->by_id = ld_hashmap_new(256);
  return l->by_id != NULL ? 0 : LD_ERR_NOMEM;
}

static void entry_free(log_entry_t *e) {
  free(e->id);
  free(e->sender);
  free(e->hint);
  free(e->cached);
  free(e);
}

void sds_log_clear(sds_log_t *l) {
  for (size_t i = 0; i < l->len; i++)
    entry_free(l->items[i]);
  free(l->items);
  ld_hashmap_free(l->by_id, NULL);
  memset(l, 0, sizeof *l);
}

log_entry_t *sds_log_find(const sds_log_t *l, const char *id, size_t id_len) {
  return ld_hashmap_get(l->by_id, id, id_len);
}

/* (Lamport, ID) order; IDs compare as bytes, a prefix first. */
static int compare(uint64_t la, const char *ia, size_t na, const log_entry_t *b) {
  if (la != b->lamport)
    return la < b->lamport ? -1 : 1;
  size_t n = na < b->id_len ? na : b->id_len;
  int c = memcmp(ia, b->id, n);
  if (c != 0)
    return c;
  return na < b->id_len ? -1 : na > b->id_len;
}

/* Index of the first entry ordered after (lamport, id). */
static size_t position(const sds_log_t *l, uint64_t lamport, const char *id, size_t id_len) {
  size_t lo = 0, hi = l->len;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (compare(lamport, id, id_len, l->items[mid]) < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* ---- repair cache --------------------------------------------------------------------------- */

static void uncache(sds_log_t *l, log_entry_t *e) {
  if (e->cached == NULL)
    return;
  if (e->cache_prev != NULL)
    e->cache_prev->cache_next = e->cache_next;
  else
    l->cache_head = e->cache_next;
  if (e->cache_next != NULL)
    e->cache_next->cache_prev = e->cache_prev;
  else
    l->cache_tail = e->cache_prev;
  l->cache_len--;
  l->cache_bytes -= e->cached_len;
  free(e->cached);
  e->cached = NULL;
  e->cached_len = 0;
  e->cache_prev = e->cache_next = NULL;
}

static void cache(ld_sds_t *s, log_entry_t *e, uint8_t *bytes, size_t len) {
  sds_log_t *l = &s->log;
  if (len > s->cfg.repair_cache_bytes) {
    free(bytes);
    return;
  }
  e->cached = bytes;
  e->cached_len = len;
  e->cache_prev = l->cache_tail;
  e->cache_next = NULL;
  if (l->cache_tail != NULL)
    l->cache_tail->cache_next = e;
  else
    l->cache_head = e;
  l->cache_tail = e;
  l->cache_len++;
  l->cache_bytes += len;
  while (l->cache_len > s->cfg.repair_cache_max || l->cache_bytes > s->cfg.repair_cache_bytes)
    uncache(l, l->cache_head);
}

/* ---- insertion and eviction ----------------------------------------------------------------- */

static int grow(sds_log_t *l) {
  if (l->len < l->cap)
    return 0;
  size_t cap = l->cap ? 2 * l->cap : 64;
  log_entry_t **items = realloc(l->items, cap * sizeof *items);
  if (items == NULL)
    return LD_ERR_NOMEM;
  l->items = items;
  l->cap = cap;
  return 0;
}

/* Forgets the oldest entries beyond max_log, in one move. */
static void evict(ld_sds_t *s) {
  sds_log_t *l = &s->log;
  if (l->len <= s->cfg.max_log)
    return;
  size_t drop = l->len - s->cfg.max_log;
  for (size_t i = 0; i < drop; i++) {
    log_entry_t *e = l->items[i];
    ld_hashmap_remove(l->by_id, e->id, e->id_len);
    uncache(l, e);
    entry_free(e);
  }
  memmove(l->items, l->items + drop, (l->len - drop) * sizeof *l->items);
  l->len -= drop;
}

static log_entry_t *entry_new(uint64_t lamport, const char *id, size_t id_len, const char *sender,
                              size_t sender_len, const uint8_t *hint, size_t hint_len) {
  log_entry_t *e = calloc(1, sizeof *e);
  if (e == NULL)
    return NULL;
  e->lamport = lamport;
  e->id = sds_strndup(id, id_len);
  e->id_len = id_len;
  e->sender = sds_strndup(sender, sender_len);
  e->sender_len = sender_len;
  if (hint_len > 0) {
    e->hint = sds_memdup(hint, hint_len);
    e->hint_len = hint_len;
  }
  if (e->id == NULL || e->sender == NULL || (hint_len > 0 && e->hint == NULL)) {
    entry_free(e);
    return NULL;
  }
  return e;
}

int sds_log_insert(ld_sds_t *s, uint64_t lamport, const char *id, size_t id_len, const char *sender,
                   size_t sender_len, const uint8_t *hint, size_t hint_len, uint8_t *cached,
                   size_t cached_len) {
  sds_log_t *l = &s->log;
  log_entry_t *e = entry_new(lamport, id, id_len, sender, sender_len, hint, hint_len);
  if (e == NULL || grow(l) != 0 || ld_hashmap_put(l->by_id, id, id_len, e, NULL) != 0) {
    if (e != NULL)
      entry_free(e);
    free(cached);
    return LD_ERR_NOMEM;
  }
  size_t at = position(l, lamport, id, id_len);
  memmove(l->items + at + 1, l->items + at, (l->len - at) * sizeof *l->items);
  l->items[at] = e;
  l->len++;
  if (cached != NULL)
    cache(s, e, cached, cached_len);
  evict(s);
  return 0;
}

int sds_log_set_hint(log_entry_t *e, const uint8_t *hint, size_t hint_len) {
  uint8_t *copy = sds_memdup(hint, hint_len);
  if (copy == NULL)
    return LD_ERR_NOMEM;
  free(e->hint);
  e->hint = copy;
  e->hint_len = hint_len;
  return 0;
}

size_t sds_log_history(const sds_log_t *l, size_t n, ld_sds_history_entry_t *out) {
  size_t count = n < l->len ? n : l->len;
  for (size_t i = 0; i < count; i++) {
    const log_entry_t *e = l->items[l->len - count + i];
    memset(&out[i], 0, sizeof out[i]);
    out[i].message_id = e->id;
    out[i].message_id_len = e->id_len;
    out[i].has_retrieval_hint = e->hint != NULL;
    out[i].retrieval_hint = e->hint;
    out[i].retrieval_hint_len = e->hint_len;
    out[i].has_sender_id = true;
    out[i].sender_id = e->sender;
    out[i].sender_id_len = e->sender_len;
  }
  return count;
}
