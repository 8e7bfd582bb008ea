/* Per-topic item sets and views over them (see shards.h). */
#include "waku/sync/shards.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

typedef struct shard {
  char *topic;
  size_t len;
  ld_sync_tree_t *tree;
} shard_t;

struct ld_sync_shards {
  shard_t *v;
  size_t n, cap;
};

/* ---- the trees ------------------------------------------------------------------------------- */

void ld_sync_shards_free(ld_sync_shards_t *s) {
  if (s == NULL)
    return;
  for (size_t i = 0; i < s->n; i++) {
    free(s->v[i].topic);
    ld_sync_tree_free(s->v[i].tree);
  }
  free(s->v);
  free(s);
}

int ld_sync_shards_find(const ld_sync_shards_t *s, const char *topic, size_t len) {
  for (size_t i = 0; i < s->n; i++)
    if (s->v[i].len == len && memcmp(s->v[i].topic, topic, len) == 0)
      return (int)i;
  return -1;
}

static int add_shard(ld_sync_shards_t *s, const char *topic) {
  size_t len = strlen(topic);
  if (ld_sync_shards_find(s, topic, len) >= 0)
    return 0;
  shard_t *sh = &s->v[s->n];
  sh->topic = malloc(len + 1);
  if (sh->topic == NULL || ld_sync_tree_new(&sh->tree) != 0) {
    free(sh->topic);
    return LD_ERR_NOMEM;
  }
  memcpy(sh->topic, topic, len + 1);
  sh->len = len;
  s->n++;
  return 0;
}

int ld_sync_shards_new(const char *const *topics, size_t n, ld_sync_shards_t **out) {
  if (topics == NULL || n == 0 || n > LD_SYNC_MAX_SHARDS)
    return LD_ERR_INVALID_ARG;
  for (size_t i = 0; i < n; i++)
    if (topics[i] == NULL || topics[i][0] == '\0')
      return LD_ERR_INVALID_ARG;
  ld_sync_shards_t *s = calloc(1, sizeof *s);
  if (s == NULL || (s->v = calloc(n, sizeof *s->v)) == NULL) {
    free(s);
    return LD_ERR_NOMEM;
  }
  s->cap = n;
  for (size_t i = 0; i < n; i++) {
    if (add_shard(s, topics[i]) != 0) {
      ld_sync_shards_free(s);
      return LD_ERR_NOMEM;
    }
  }
  *out = s;
  return 0;
}

int ld_sync_shards_new_empty(ld_sync_shards_t **out) {
  ld_sync_shards_t *s = calloc(1, sizeof *s);
  if (s == NULL)
    return LD_ERR_NOMEM;
  *out = s;
  return 0;
}

int ld_sync_shards_ensure(ld_sync_shards_t *s, const char *topic, size_t len) {
  int i = ld_sync_shards_find(s, topic, len);
  if (i >= 0)
    return i;
  if (len == 0 || memchr(topic, '\0', len) != NULL)
    return LD_ERR_INVALID_ARG;
  if (s->n >= LD_SYNC_MAX_SHARDS)
    return LD_ERR_LIMIT;
  if (s->n == s->cap) {
    size_t cap = s->cap == 0 ? 8 : s->cap * 2;
    shard_t *v = realloc(s->v, cap * sizeof *v);
    if (v == NULL)
      return LD_ERR_NOMEM;
    s->v = v;
    s->cap = cap;
  }
  shard_t *sh = &s->v[s->n];
  sh->topic = malloc(len + 1);
  if (sh->topic == NULL || ld_sync_tree_new(&sh->tree) != 0) {
    free(sh->topic);
    return LD_ERR_NOMEM;
  }
  memcpy(sh->topic, topic, len);
  sh->topic[len] = '\0';
  sh->len = len;
  return (int)s->n++;
}

size_t ld_sync_shards_count(const ld_sync_shards_t *s) {
  return s->n;
}

const char *ld_sync_shards_topic(const ld_sync_shards_t *s, size_t i) {
  return i < s->n ? s->v[i].topic : NULL;
}

int ld_sync_shards_insert(ld_sync_shards_t *s, const char *topic, const ld_sync_id_t *id) {
  int i = ld_sync_shards_find(s, topic, strlen(topic));
  if (i < 0)
    return LD_ERR_NOT_FOUND;
  return ld_sync_tree_insert(s->v[i].tree, id);
}

int ld_sync_shards_remove(ld_sync_shards_t *s, const char *topic, const ld_sync_id_t *id) {
  int i = ld_sync_shards_find(s, topic, strlen(topic));
  return i < 0 ? LD_ERR_NOT_FOUND : ld_sync_tree_remove(s->v[i].tree, id);
}

bool ld_sync_shards_contains(const ld_sync_shards_t *s, const ld_sync_id_t *id) {
  for (size_t i = 0; i < s->n; i++)
    if (ld_sync_tree_contains(s->v[i].tree, id))
      return true;
  return false;
}

uint64_t ld_sync_shards_prune(ld_sync_shards_t *s, int64_t before) {
  uint64_t n = 0;
  for (size_t i = 0; i < s->n; i++)
    n += ld_sync_tree_prune(s->v[i].tree, before);
  return n;
}

uint64_t ld_sync_shards_size(const ld_sync_shards_t *s) {
  uint64_t n = 0;
  for (size_t i = 0; i < s->n; i++)
    n += ld_sync_tree_size(s->v[i].tree);
  return n;
}

size_t ld_sync_shards_memory(const ld_sync_shards_t *s) {
  size_t n = sizeof *s + s->n * sizeof *s->v;
  for (size_t i = 0; i < s->n; i++)
    n += ld_sync_tree_memory(s->v[i].tree) + s->v[i].len + 1;
  return n;
}

/* ---- views ----------------------------------------------------------------------------------- */

void ld_sync_view_init(ld_sync_view_t *v) {
  memset(v, 0, sizeof *v);
}

void ld_sync_view_clear(ld_sync_view_t *v) {
  free(v->trees);
  free(v->walk);
  memset(v, 0, sizeof *v);
}

/* One tree's position in a merged walk: the next item, the rank past the range, and whether an
 * item is left. */
typedef struct cursor {
  uint64_t at, end;
  ld_sync_id_t head;
  bool live;
} cursor_t;

static int view_reserve(ld_sync_view_t *v, size_t n) {
  if (n <= v->cap)
    return 0;
  ld_sync_tree_t **t = realloc(v->trees, n * sizeof *t);
  if (t == NULL)
    return LD_ERR_NOMEM;
  v->trees = t;
  cursor_t *c = realloc(v->walk, n * sizeof *c);
  if (c == NULL)
    return LD_ERR_NOMEM;
  v->walk = c;
  v->cap = n;
  return 0;
}

int ld_sync_view_select(ld_sync_view_t *v, const ld_sync_shards_t *s, const ld_sync_topic_t *topics,
                        size_t n) {
  v->shards = s;
  v->n = 0;
  if (view_reserve(v, s->n) != 0)
    return LD_ERR_NOMEM;
  bool taken[LD_SYNC_MAX_SHARDS] = {false};
  for (size_t i = 0; i < (n > 0 ? n : s->n); i++) {
    int k = n > 0 ? ld_sync_shards_find(s, topics[i].data, topics[i].len) : (int)i;
    if (k < 0 || taken[k])
      continue;
    taken[k] = true;
    v->trees[v->n++] = s->v[k].tree;
  }
  return v->n > 0 ? 0 : LD_ERR_NOT_FOUND;
}

static void merged_summary(void *self, const ld_sync_id_t *lo, const ld_sync_id_t *hi,
                           ld_sync_summary_t *out) {
  const ld_sync_view_t *v = self;
  out->count = 0;
  ld_sync_fp_zero(&out->fp);
  for (size_t i = 0; i < v->n; i++) {
    ld_sync_summary_t one;
    ld_sync_tree_summary(v->trees[i], lo, hi, &one);
    out->count += one.count;
    ld_sync_fp_xor(&out->fp, &one.fp);
  }
}

static void cursor_next(const ld_sync_tree_t *t, cursor_t *c) {
  c->live = c->at < c->end && ld_sync_tree_at(t, c->at, &c->head) == 0;
}

/* The k-way merge of the trees' items in [lo, hi]; the set does not change during the walk, so
 * the cursors kept in the view are not disturbed. */
static int merged_each(void *self, const ld_sync_id_t *lo, const ld_sync_id_t *hi,
                       ld_sync_item_fn fn, void *user) {
  const ld_sync_view_t *v = self;
  if (ld_sync_id_cmp(hi, lo) < 0)
    return 0;
  cursor_t *c = v->walk;
  for (size_t i = 0; i < v->n; i++) {
    c[i].at = ld_sync_tree_rank(v->trees[i], lo, false);
    c[i].end = ld_sync_tree_rank(v->trees[i], hi, true);
    cursor_next(v->trees[i], &c[i]);
  }
  for (;;) {
    size_t best = v->n;
    for (size_t i = 0; i < v->n; i++)
      if (c[i].live && (best == v->n || ld_sync_id_cmp(&c[i].head, &c[best].head) < 0))
        best = i;
    if (best == v->n)
      return 0;
    int rc = fn(user, &c[best].head);
    if (rc != 0)
      return rc;
    c[best].at++;
    cursor_next(v->trees[best], &c[best]);
  }
}

static const ld_sync_set_ops_t k_merged_ops = {merged_summary, merged_each, NULL};

ld_sync_set_t ld_sync_view_set(ld_sync_view_t *v) {
  if (v->n == 1)
    return ld_sync_tree_set(v->trees[0]);
  ld_sync_set_t set = {&k_merged_ops, v};
  return set;
}
