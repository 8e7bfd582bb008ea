/* Presence of our own items at peers (see presence.h). */
#include "waku/nrs/presence.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hashmap.h"

typedef struct entry {
  ld_sync_id_t id;
  uint64_t tracked_ms;
  size_t n_peers;
  uint64_t peers[]; /* digests of the peers that hold it, confirm_peers at most */
} entry_t;

struct ld_nrs_presence {
  ld_hashmap_t *by_hash; /* hash → entry_t (owned) */
  size_t confirm_peers;
  size_t max_tracked;
  int64_t skew_ns;
  size_t unconfirmed;
};

ld_nrs_presence_t *ld_nrs_presence_new(size_t confirm_peers, size_t max_tracked, int64_t skew_ns) {
  if (confirm_peers == 0 || confirm_peers > LD_NRS_MAX_CONFIRM_PEERS || skew_ns < 0)
    return NULL;
  ld_nrs_presence_t *p = calloc(1, sizeof *p);
  if (p == NULL)
    return NULL;
  p->by_hash = ld_hashmap_new(64);
  if (p->by_hash == NULL) {
    free(p);
    return NULL;
  }
  p->confirm_peers = confirm_peers;
  p->max_tracked = max_tracked != 0 ? max_tracked : LD_NRS_DEFAULT_MAX_TRACKED;
  p->skew_ns = skew_ns;
  return p;
}

void ld_nrs_presence_free(ld_nrs_presence_t *p) {
  if (p == NULL)
    return;
  ld_hashmap_free(p->by_hash, free);
  free(p);
}

static bool is_confirmed(const ld_nrs_presence_t *p, const entry_t *e) {
  return e->n_peers >= p->confirm_peers;
}

int ld_nrs_presence_track(ld_nrs_presence_t *p, const ld_sync_id_t *id, uint64_t now_ms) {
  if (ld_hashmap_contains(p->by_hash, id->hash, LD_WAKU_HASH_LEN))
    return LD_ERR_EXISTS;
  if (ld_hashmap_size(p->by_hash) >= p->max_tracked)
    return LD_ERR_LIMIT;
  entry_t *e = calloc(1, sizeof *e + p->confirm_peers * sizeof e->peers[0]);
  if (e == NULL)
    return LD_ERR_NOMEM;
  e->id = *id;
  e->tracked_ms = now_ms;
  if (ld_hashmap_put(p->by_hash, id->hash, LD_WAKU_HASH_LEN, e, NULL) != 0) {
    free(e);
    return LD_ERR_NOMEM;
  }
  p->unconfirmed++;
  return 0;
}

static bool was_lacked(const ld_sync_id_t *id, const ld_sync_id_t *lacked, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (ld_sync_id_cmp(id, &lacked[i]) == 0)
      return true;
  return false;
}

/* Adds the peer to the entry; true when this made it confirmed. */
static bool add_peer(ld_nrs_presence_t *p, entry_t *e, uint64_t digest) {
  if (is_confirmed(p, e))
    return false;
  for (size_t i = 0; i < e->n_peers; i++)
    if (e->peers[i] == digest)
      return false;
  e->peers[e->n_peers++] = digest;
  if (!is_confirmed(p, e))
    return false;
  p->unconfirmed--;
  return true;
}

size_t ld_nrs_presence_observe(ld_nrs_presence_t *p, const ld_peerid_t *peer, uint64_t started_ms,
                               int64_t window_start, const ld_sync_id_t *lacked, size_t n) {
  uint64_t digest = ld_hash_bytes(peer->bytes, peer->len);
  int64_t floor = window_start > INT64_MAX - p->skew_ns ? INT64_MAX : window_start + p->skew_ns;
  size_t confirmed = 0;
  ld_hashmap_iter_t it = {0};
  void *value;
  while (ld_hashmap_next(p->by_hash, &it, NULL, NULL, &value)) {
    entry_t *e = value;
    if (is_confirmed(p, e) || e->tracked_ms > started_ms || e->id.time <= floor ||
        was_lacked(&e->id, lacked, n))
      continue;
    confirmed += add_peer(p, e, digest);
  }
  return confirmed;
}

size_t ld_nrs_presence_count(const ld_nrs_presence_t *p, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  const entry_t *e = ld_hashmap_get(p->by_hash, hash, LD_WAKU_HASH_LEN);
  return e != NULL ? e->n_peers : 0;
}

bool ld_nrs_presence_confirmed(const ld_nrs_presence_t *p, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  const entry_t *e = ld_hashmap_get(p->by_hash, hash, LD_WAKU_HASH_LEN);
  return e != NULL && is_confirmed(p, e);
}

bool ld_nrs_presence_tracked(const ld_nrs_presence_t *p, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  return ld_hashmap_contains(p->by_hash, hash, LD_WAKU_HASH_LEN);
}

size_t ld_nrs_presence_unconfirmed(const ld_nrs_presence_t *p) {
  return p->unconfirmed;
}

size_t ld_nrs_presence_size(const ld_nrs_presence_t *p) {
  return ld_hashmap_size(p->by_hash);
}

int ld_nrs_presence_forget(ld_nrs_presence_t *p, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  entry_t *e = ld_hashmap_remove(p->by_hash, hash, LD_WAKU_HASH_LEN);
  if (e == NULL)
    return LD_ERR_NOT_FOUND;
  if (!is_confirmed(p, e))
    p->unconfirmed--;
  free(e);
  return 0;
}

size_t ld_nrs_presence_expire(ld_nrs_presence_t *p, int64_t before) {
  size_t removed = 0;
  for (;;) { /* the map cannot change under its iterator: collect a batch, then remove it */
    uint8_t batch[64][LD_WAKU_HASH_LEN];
    size_t n = 0;
    ld_hashmap_iter_t it = {0};
    void *value;
    while (n < 64 && ld_hashmap_next(p->by_hash, &it, NULL, NULL, &value)) {
      const entry_t *e = value;
      if (e->id.time < before)
        memcpy(batch[n++], e->id.hash, LD_WAKU_HASH_LEN);
    }
    for (size_t i = 0; i < n; i++)
      removed += ld_nrs_presence_forget(p, batch[i]) == 0;
    if (n < 64)
      return removed;
  }
}
