#include "p2p/gossipsub/idset.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hashmap.h"

#define IDSET_MIN_RING 16
#define IDSET_MIN_INDEX 32

void ld_gs_idset_init(ld_gs_idset_t *s, size_t max) {
  memset(s, 0, sizeof *s);
  s->max = max;
}

void ld_gs_idset_clear(ld_gs_idset_t *s) {
  size_t max = s->max;
  free(s->ring);
  free(s->index);
  ld_gs_idset_init(s, max);
}

uint64_t ld_gs_idset_hash(const uint8_t id[LD_GS_IDSET_ID_LEN]) {
  return ld_hash_bytes(id, LD_GS_IDSET_ID_LEN);
}

static inline ld_gs_idset_entry_t *entry_of(const ld_gs_idset_t *s, uint64_t seq) {
  return &s->ring[seq & (s->ring_cap - 1)];
}

/* Index slots: the hash tag lets a probe skip other IDs without touching the ring. The ring never
 * holds 2^32 entries, so the low 32 bits of a sequence identify it. */
static inline uint64_t slot_make(uint64_t h, uint64_t seq) {
  return ((h >> 32) | 1) << 32 | (uint32_t)(seq + 1);
}

static inline uint64_t slot_seq(const ld_gs_idset_t *s, uint64_t slot) {
  uint32_t low = (uint32_t)slot - 1;
  return s->head + (uint32_t)(low - (uint32_t)s->head);
}

static inline bool slot_tag_is(uint64_t slot, uint64_t h) {
  return (slot >> 32) == ((h >> 32) | 1);
}

/* Slot holding `id`, or the index capacity when absent. */
static size_t find_slot(const ld_gs_idset_t *s, const uint8_t *id, uint64_t h) {
  if (s->index_cap == 0) {
    return 0;
  }
  size_t mask = s->index_cap - 1;
  for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
    uint64_t v = s->index[i];
    if (v == 0) {
      return s->index_cap;
    }
    if (slot_tag_is(v, h) && memcmp(entry_of(s, slot_seq(s, v))->id, id, LD_GS_IDSET_ID_LEN) == 0) {
      return i;
    }
  }
}

static void index_insert(ld_gs_idset_t *s, uint64_t slot, uint64_t h) {
  size_t mask = s->index_cap - 1;
  size_t i = (size_t)h & mask;
  while (s->index[i] != 0) {
    i = (i + 1) & mask;
  }
  s->index[i] = slot;
}

static size_t home_of(const ld_gs_idset_t *s, uint64_t slot) {
  return (size_t)ld_gs_idset_hash(entry_of(s, slot_seq(s, slot))->id) & (s->index_cap - 1);
}

/* Linear-probing deletion by backward shift: no tombstones. */
static void index_delete(ld_gs_idset_t *s, size_t i) {
  size_t mask = s->index_cap - 1;
  size_t j = i;
  for (;;) {
    j = (j + 1) & mask;
    if (s->index[j] == 0) {
      break;
    }
    size_t k = home_of(s, s->index[j]);
    bool movable = (i <= j) ? (k <= i || k > j) : (k <= i && k > j);
    if (movable) {
      s->index[i] = s->index[j];
      i = j;
    }
  }
  s->index[i] = 0;
}

static int resize_index(ld_gs_idset_t *s, size_t ncap) {
  uint64_t *old = s->index;
  size_t ocap = s->index_cap;
  s->index = calloc(ncap, sizeof *s->index);
  if (s->index == NULL) {
    s->index = old;
    return LD_ERR_NOMEM;
  }
  s->index_cap = ncap;
  for (size_t i = 0; i < ocap; i++) {
    if (old[i] != 0) {
      index_insert(s, old[i], ld_gs_idset_hash(entry_of(s, slot_seq(s, old[i]))->id));
    }
  }
  free(old);
  return 0;
}

static int resize_ring(ld_gs_idset_t *s, size_t ncap) {
  ld_gs_idset_entry_t *nring = malloc(ncap * sizeof *nring);
  if (nring == NULL) {
    return LD_ERR_NOMEM;
  }
  for (uint64_t q = s->head; q < s->tail; q++) {
    nring[q & (ncap - 1)] = *entry_of(s, q);
  }
  free(s->ring);
  s->ring = nring;
  s->ring_cap = ncap;
  return 0;
}

int ld_gs_idset_add_h(ld_gs_idset_t *s, const uint8_t id[LD_GS_IDSET_ID_LEN], uint64_t h,
                      uint64_t expiry, uint64_t value) {
  if (find_slot(s, id, h) < s->index_cap) {
    return LD_ERR_EXISTS;
  }
  size_t used = (size_t)(s->tail - s->head);
  if (used >= s->max) {
    return LD_ERR_LIMIT;
  }
  if (used == s->ring_cap && resize_ring(s, s->ring_cap ? s->ring_cap * 2 : IDSET_MIN_RING)) {
    return LD_ERR_NOMEM;
  }
  if ((s->live + 1) * 2 > s->index_cap &&
      resize_index(s, s->index_cap ? s->index_cap * 2 : IDSET_MIN_INDEX) != 0) {
    return LD_ERR_NOMEM;
  }
  ld_gs_idset_entry_t *e = entry_of(s, s->tail);
  memcpy(e->id, id, LD_GS_IDSET_ID_LEN);
  e->expiry = expiry;
  e->value = value;
  e->live = true;
  index_insert(s, slot_make(h, s->tail), h);
  s->tail++;
  s->live++;
  return 0;
}

int ld_gs_idset_add(ld_gs_idset_t *s, const uint8_t id[LD_GS_IDSET_ID_LEN], uint64_t expiry,
                    uint64_t value) {
  return ld_gs_idset_add_h(s, id, ld_gs_idset_hash(id), expiry, value);
}

ld_gs_idset_entry_t *ld_gs_idset_find_h(const ld_gs_idset_t *s,
                                        const uint8_t id[LD_GS_IDSET_ID_LEN], uint64_t h) {
  if (s->live == 0) {
    return NULL;
  }
  size_t i = find_slot(s, id, h);
  return i < s->index_cap ? entry_of(s, slot_seq(s, s->index[i])) : NULL;
}

ld_gs_idset_entry_t *ld_gs_idset_find(const ld_gs_idset_t *s, const uint8_t *id, size_t id_len) {
  if (id_len != LD_GS_IDSET_ID_LEN || s->live == 0) {
    return NULL;
  }
  return ld_gs_idset_find_h(s, id, ld_gs_idset_hash(id));
}

bool ld_gs_idset_remove_h(ld_gs_idset_t *s, const uint8_t id[LD_GS_IDSET_ID_LEN], uint64_t h) {
  if (s->live == 0) {
    return false;
  }
  size_t i = find_slot(s, id, h);
  if (i >= s->index_cap) {
    return false;
  }
  entry_of(s, slot_seq(s, s->index[i]))->live = false;
  index_delete(s, i);
  s->live--;
  return true;
}

bool ld_gs_idset_remove(ld_gs_idset_t *s, const uint8_t *id, size_t id_len) {
  if (id_len != LD_GS_IDSET_ID_LEN || s->live == 0) {
    return false;
  }
  return ld_gs_idset_remove_h(s, id, ld_gs_idset_hash(id));
}

size_t ld_gs_idset_expire(ld_gs_idset_t *s, uint64_t now,
                          void (*fn)(void *ctx, const ld_gs_idset_entry_t *e), void *ctx) {
  size_t n = 0;
  while (s->head < s->tail) {
    ld_gs_idset_entry_t *e = entry_of(s, s->head);
    if (e->live && e->expiry > now) {
      break;
    }
    if (e->live) {
      if (fn != NULL) {
        fn(ctx, e);
      }
      index_delete(s, find_slot(s, e->id, ld_gs_idset_hash(e->id)));
      s->live--;
      n++;
    }
    s->head++;
  }
  return n;
}

ld_gs_idset_entry_t *ld_gs_idset_at(const ld_gs_idset_t *s, uint64_t seq) {
  if (seq < s->head || seq >= s->tail) {
    return NULL;
  }
  ld_gs_idset_entry_t *e = entry_of(s, seq);
  return e->live ? e : NULL;
}

void ld_gs_idset_compact(ld_gs_idset_t *s) {
  size_t used = (size_t)(s->tail - s->head);
  size_t rcap = s->ring_cap;
  while (rcap > IDSET_MIN_RING && used * 4 <= rcap) {
    rcap /= 2;
  }
  if (rcap < s->ring_cap) {
    resize_ring(s, rcap); /* on failure the old ring stays */
  }
  size_t icap = s->index_cap;
  while (icap > IDSET_MIN_INDEX && s->live * 8 <= icap) {
    icap /= 2;
  }
  if (icap < s->index_cap) {
    resize_index(s, icap);
  }
}
