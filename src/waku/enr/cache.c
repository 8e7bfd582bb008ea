#include "waku/enr/cache.h"

#include <stdlib.h>

#include "base/error.h"
#include "base/hashmap.h"
#include "crypto/crypto.h"

/* An entry, linked in put order: head is the most recent. */
typedef struct entry {
  struct entry *prev, *next;
  ld_peerid_t peer;
  ld_enr_t enr;
} entry_t;

struct ld_enr_cache {
  ld_hashmap_t *map; /* peer ID bytes → entry_t */
  entry_t *head, *tail;
  size_t max;
};

ld_enr_cache_t *ld_enr_cache_new(size_t max_entries) {
  ld_enr_cache_t *c = calloc(1, sizeof *c);
  if (c == NULL)
    return NULL;
  c->max = max_entries != 0 ? max_entries : LD_ENR_CACHE_DEFAULT_MAX;
  if ((c->map = ld_hashmap_new(16)) == NULL) {
    free(c);
    return NULL;
  }
  return c;
}

void ld_enr_cache_free(ld_enr_cache_t *c) {
  if (c == NULL)
    return;
  ld_hashmap_free(c->map, free);
  free(c);
}

static void unlink_entry(ld_enr_cache_t *c, entry_t *e) {
  if (e->prev != NULL)
    e->prev->next = e->next;
  else
    c->head = e->next;
  if (e->next != NULL)
    e->next->prev = e->prev;
  else
    c->tail = e->prev;
  e->prev = e->next = NULL;
}

static void push_front(ld_enr_cache_t *c, entry_t *e) {
  e->prev = NULL;
  e->next = c->head;
  if (c->head != NULL)
    c->head->prev = e;
  c->head = e;
  if (c->tail == NULL)
    c->tail = e;
}

static void drop(ld_enr_cache_t *c, entry_t *e) {
  unlink_entry(c, e);
  ld_hashmap_remove(c->map, e->peer.bytes, e->peer.len);
  free(e);
}

int ld_enr_cache_put(ld_enr_cache_t *c, const ld_enr_t *enr) {
  ld_peerid_t peer;
  int rc = ld_enr_peer_id(enr, &peer);
  if (rc != 0)
    return rc;
  entry_t *e = ld_hashmap_get(c->map, peer.bytes, peer.len);
  if (e != NULL) {
    if (e->enr.seq > enr->seq)
      return LD_ERR_EXISTS;
    e->enr = *enr;
    unlink_entry(c, e);
    push_front(c, e);
    return 0;
  }
  if ((e = malloc(sizeof *e)) == NULL)
    return LD_ERR_NOMEM;
  e->peer = peer;
  e->enr = *enr;
  if (ld_hashmap_put(c->map, peer.bytes, peer.len, e, NULL) != 0) {
    free(e);
    return LD_ERR_NOMEM;
  }
  push_front(c, e);
  while (ld_hashmap_size(c->map) > c->max)
    drop(c, c->tail);
  return 0;
}

const ld_enr_t *ld_enr_cache_get(const ld_enr_cache_t *c, const ld_peerid_t *peer) {
  const entry_t *e = ld_hashmap_get(c->map, peer->bytes, peer->len);
  return e != NULL ? &e->enr : NULL;
}

int ld_enr_cache_remove(ld_enr_cache_t *c, const ld_peerid_t *peer) {
  entry_t *e = ld_hashmap_get(c->map, peer->bytes, peer->len);
  if (e == NULL)
    return LD_ERR_NOT_FOUND;
  drop(c, e);
  return 0;
}

size_t ld_enr_cache_size(const ld_enr_cache_t *c) {
  return ld_hashmap_size(c->map);
}

size_t ld_enr_cache_sample(const ld_enr_cache_t *c, ld_enr_filter_fn filter, void *user_data,
                           const ld_enr_t **out, size_t max) {
  size_t seen = 0;
  for (const entry_t *e = c->head; e != NULL && max > 0; e = e->next) {
    if (filter != NULL && !filter(&e->enr, &e->peer, user_data))
      continue;
    if (seen < max) {
      out[seen] = &e->enr;
    } else {
      uint32_t j = ld_random_uniform(seen + 1 > UINT32_MAX ? UINT32_MAX : (uint32_t)(seen + 1));
      if (j < max)
        out[j] = &e->enr;
    }
    seen++;
  }
  return seen < max ? seen : max;
}

void ld_enr_cache_foreach(const ld_enr_cache_t *c,
                          bool (*fn)(const ld_enr_t *enr, const ld_peerid_t *peer, void *ud),
                          void *user_data) {
  for (const entry_t *e = c->head; e != NULL;) {
    const entry_t *next = e->next;
    if (!fn(&e->enr, &e->peer, user_data))
      return;
    e = next;
  }
}
