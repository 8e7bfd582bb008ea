#include "waku/archive/sqlite/keymap.h"

#include <stdlib.h>

#include "base/error.h"
#include "base/hashmap.h"

#define TAG_BITS 28
#define ROWID_BITS 36
#define MIN_SLOTS 1024
/* Slots past which a table doubles: 3/4 of them in use. */
#define FULL_AT(slots) ((slots) / 4 * 3)

static uint32_t tag_of(const uint8_t hash[LD_WAKU_HASH_LEN]) {
  return ((uint32_t)hash[0] << 20 | (uint32_t)hash[1] << 12 | (uint32_t)hash[2] << 4 |
          (uint32_t)hash[3] >> 4);
}

static uint32_t entry_tag(uint64_t e) {
  return (uint32_t)(e >> ROWID_BITS);
}

static int64_t entry_rowid(uint64_t e) {
  return (int64_t)(e & (uint64_t)LD_SQ_KEYMAP_MAX_ROWID);
}

/* The first slot to try for a tag: keyed, so that tags cannot be chosen to collide. */
static size_t home_slot(const ld_sq_keytab_t *t, uint32_t tag) {
  return (size_t)ld_hash_bytes(&tag, sizeof tag) & t->mask;
}

/* Adds an entry to a table with room for it (an equal entry is not added twice). */
static void place(ld_sq_keytab_t *t, uint64_t e) {
  size_t i = home_slot(t, entry_tag(e));
  while (t->slots[i] != 0) {
    if (t->slots[i] == e)
      return;
    i = (i + 1) & t->mask;
  }
  t->slots[i] = e;
  t->used++;
}

/* Slots for `expected` entries with room to grow: at most half of them in use. */
static size_t slots_for(size_t expected) {
  size_t n = MIN_SLOTS;
  while (n / 2 < expected)
    n *= 2;
  return n;
}

int ld_sq_keytab_init(ld_sq_keytab_t *t, size_t expected) {
  *t = (ld_sq_keytab_t){0};
  if (expected > LD_SQ_KEYMAP_MAX_ENTRIES)
    return LD_ERR_LIMIT;
  size_t n = slots_for(expected);
  t->slots = calloc(n, sizeof *t->slots);
  t->mask = n - 1;
  t->used = 0;
  return t->slots != NULL ? 0 : LD_ERR_NOMEM;
}

void ld_sq_keytab_free(ld_sq_keytab_t *t) {
  free(t->slots);
  *t = (ld_sq_keytab_t){0};
}

/* A copy of `t` with twice its slots (or more, to hold `extra` entries more without growing). */
static int grown(const ld_sq_keytab_t *t, size_t extra, ld_sq_keytab_t *out) {
  int rc = ld_sq_keytab_init(out, t->used + extra);
  if (rc != 0)
    return rc;
  for (size_t i = 0; i <= t->mask; i++)
    if (t->slots[i] != 0)
      place(out, t->slots[i]);
  return 0;
}

static int make_entry(const uint8_t hash[LD_WAKU_HASH_LEN], int64_t rowid, uint64_t *e) {
  if (rowid < 1 || rowid > LD_SQ_KEYMAP_MAX_ROWID)
    return LD_ERR_INVALID_ARG;
  *e = (uint64_t)tag_of(hash) << ROWID_BITS | (uint64_t)rowid;
  return 0;
}

int ld_sq_keytab_put(ld_sq_keytab_t *t, const uint8_t hash[LD_WAKU_HASH_LEN], int64_t rowid) {
  uint64_t e;
  if (make_entry(hash, rowid, &e) != 0)
    return LD_ERR_INVALID_ARG;
  if (t->used + 1 > FULL_AT(t->mask + 1)) {
    ld_sq_keytab_t bigger;
    int rc = grown(t, 1, &bigger);
    if (rc != 0)
      return rc;
    ld_sq_keytab_free(t);
    *t = bigger;
  }
  place(t, e);
  return 0;
}

int ld_sq_keymap_init(ld_sq_keymap_t *m) {
  *m = (ld_sq_keymap_t){0};
  return uv_rwlock_init(&m->lock) == 0 ? 0 : LD_ERR_NOMEM;
}

void ld_sq_keymap_destroy(ld_sq_keymap_t *m) {
  ld_sq_keytab_free(&m->tab);
  uv_rwlock_destroy(&m->lock);
}

/* Puts `t` in place of the map's table; returns the old one for the caller to free. */
static ld_sq_keytab_t swap_table(ld_sq_keymap_t *m, ld_sq_keytab_t *t, bool complete) {
  uv_rwlock_wrlock(&m->lock);
  ld_sq_keytab_t old = m->tab;
  m->tab = *t;
  m->complete = complete;
  uv_rwlock_wrunlock(&m->lock);
  *t = (ld_sq_keytab_t){0};
  return old;
}

void ld_sq_keymap_replace(ld_sq_keymap_t *m, ld_sq_keytab_t *t) {
  ld_sq_keytab_t old = swap_table(m, t, true);
  m->stale = 0;
  ld_sq_keytab_free(&old);
}

void ld_sq_keymap_invalidate(ld_sq_keymap_t *m) {
  ld_sq_keytab_t none = {0};
  ld_sq_keytab_t old = swap_table(m, &none, false);
  m->stale = 0;
  ld_sq_keytab_free(&old);
}

int ld_sq_keymap_put(ld_sq_keymap_t *m, const ld_sq_keyrow_t *rows, size_t n) {
  if (!m->complete || n == 0)
    return 0; /* nothing to add, or nothing to keep up to date until the writer rebuilds it */
  /* only this thread changes the table, so it may read it without the lock */
  if (m->tab.used + n > FULL_AT(m->tab.mask + 1)) {
    ld_sq_keytab_t bigger;
    int rc = grown(&m->tab, n, &bigger);
    if (rc != 0) {
      ld_sq_keymap_invalidate(m);
      return rc;
    }
    ld_sq_keytab_t old = swap_table(m, &bigger, true);
    ld_sq_keytab_free(&old);
  }
  int rc = 0;
  uv_rwlock_wrlock(&m->lock);
  for (size_t i = 0; i < n && rc == 0; i++) {
    uint64_t e;
    rc = make_entry(rows[i].hash, rows[i].rowid, &e);
    if (rc == 0)
      place(&m->tab, e);
  }
  uv_rwlock_wrunlock(&m->lock);
  if (rc != 0)
    ld_sq_keymap_invalidate(m);
  return rc;
}

bool ld_sq_keymap_note_deleted(ld_sq_keymap_t *m, uint64_t n) {
  if (!m->complete || n == 0)
    return false;
  m->stale = n > m->tab.used - m->stale ? m->tab.used : m->stale + (size_t)n;
  return m->stale > m->tab.used / 4;
}

int ld_sq_keymap_find(ld_sq_keymap_t *m, const uint8_t (*hashes)[LD_WAKU_HASH_LEN], size_t n,
                      ld_sq_candidate_t *out, size_t max, size_t *n_out) {
  size_t k = 0;
  int rc = 0;
  uv_rwlock_rdlock(&m->lock);
  if (!m->complete)
    rc = LD_ERR_UNSUPPORTED;
  for (size_t h = 0; h < n && rc == 0; h++) {
    uint32_t tag = tag_of(hashes[h]);
    for (size_t i = home_slot(&m->tab, tag); m->tab.slots[i] != 0 && rc == 0;
         i = (i + 1) & m->tab.mask) {
      if (entry_tag(m->tab.slots[i]) != tag)
        continue;
      if (k == max)
        rc = LD_ERR_LIMIT;
      else
        out[k++] = (ld_sq_candidate_t){entry_rowid(m->tab.slots[i]), h};
    }
  }
  uv_rwlock_rdunlock(&m->lock);
  *n_out = k;
  return rc;
}
