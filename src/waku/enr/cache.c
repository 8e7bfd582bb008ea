#include "waku/enr/cache.h"

#include <stdlib.h>

#include "base/error.h"
#include "base/hashmap.h"
#include "base/list.h"
#include "crypto/crypto.h"

/* An entry, linked in put order: first is the most recent. */
typedef struct entry {
  ld_link_t link;
  ld_peerid_t peer;
  ld_enr_t enr;
} entry_t;

struct ld_enr_cache {
  ld_hashmap_t *map; /* peer ID bytes → entry_t */
  ld_link_t entries;
  size_t max;
};

ld_enr_cache_t *ld_enr_cache_new(size_t max_entries) {
  ld_enr_cache_t *c = calloc(1, sizeof *c);
  if (c == NULL)
    return NULL;
  c->max = max_entries != 0 ? max_entries : LD_ENR_CACHE_DEFAULT_MAX;
  ld_list_init(&c->entries);
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

static entry_t *entry_of(const ld_link_t *l) {
  return LD_CONTAINER_OF(l, entry_t, link);
}

static void drop(ld_enr_cache_t *c, entry_t *e) {
  ld_link_remove(&e->link);
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
    ld_list_move_front(&c->entries, &e->link);
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
  ld_list_push_front(&c->entries, &e->link);
  while (ld_hashmap_size(c->map) > c->max)
    drop(c, entry_of(ld_list_last(&c->entries)));
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
  for (const ld_link_t *l = c->entries.next; l != &c->entries && max > 0; l = l->next) {
    const entry_t *e = entry_of(l);
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
  for (const ld_link_t *l = c->entries.next; l != &c->entries;) {
    const entry_t *e = entry_of(l);
    l = l->next;
    if (!fn(&e->enr, &e->peer, user_data))
      return;
  }
}
