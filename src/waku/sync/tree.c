/* Counted B+tree with XOR aggregates (see tree.h). */
#include "waku/sync/tree.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

#define LEAF_CAP 100
#define LEAF_MIN (LEAF_CAP / 4)
#define NODE_CAP 64
#define NODE_MIN (NODE_CAP / 4)
/* An overflowing node that takes the new entry at or after this fraction of its capacity splits
 * there (ascending inserts), anywhere else in the middle. */
#define TAIL_SPLIT(cap) ((cap)*3 / 4)

typedef struct leaf {
  struct leaf *next; /* leaf chain in item order */
  uint32_t n;
  ld_sync_id_t item[LEAF_CAP];
} leaf_t;

/* Entry i: child[i], the count and XOR of its subtree, and key[i], a lower bound of the child's
 * items and above every item of child i−1 (key[0] matters only once the entry moves). */
typedef struct inode {
  uint32_t n;
  uint64_t count[NODE_CAP];
  ld_sync_fp_t fp[NODE_CAP];
  ld_sync_id_t key[NODE_CAP];
  void *child[NODE_CAP];
} inode_t;

/* Spare nodes: an insert first makes sure it holds what the worst split needs (one leaf, one
 * inner node per level and a new root), so that it never fails halfway. */
#define POOL_MAX 16

struct ld_sync_tree {
  void *root;
  int height; /* 0: the root is a leaf */
  uint64_t count;
  ld_sync_fp_t fp;
  size_t n_leaves, n_inodes; /* allocated, the spares included */
  leaf_t *spare_leaf;
  inode_t *spare_inode[POOL_MAX];
  int n_spare_inodes;
};

/* What a node that split hands its parent: the new right sibling and its aggregates. */
typedef struct split {
  void *right;
  ld_sync_id_t key;
  uint64_t count;
  ld_sync_fp_t fp;
} split_t;

/* ---- small helpers --------------------------------------------------------------------------- */

/* Tops the spares up; LD_ERR_NOMEM leaves the tree as it was (spares are kept). */
static int reserve(ld_sync_tree_t *t) {
  if (t->spare_leaf == NULL) {
    t->spare_leaf = malloc(sizeof *t->spare_leaf);
    if (t->spare_leaf == NULL)
      return LD_ERR_NOMEM;
    t->n_leaves++;
  }
  while (t->n_spare_inodes < t->height + 1) {
    if (t->n_spare_inodes == POOL_MAX)
      return LD_ERR_INTERNAL;
    inode_t *in = malloc(sizeof *in);
    if (in == NULL)
      return LD_ERR_NOMEM;
    t->spare_inode[t->n_spare_inodes++] = in;
    t->n_inodes++;
  }
  return 0;
}

/* Takes a spare (reserve() made sure there is one). */
static leaf_t *leaf_new(ld_sync_tree_t *t) {
  leaf_t *l = t->spare_leaf;
  t->spare_leaf = NULL;
  l->next = NULL;
  l->n = 0;
  return l;
}

static inode_t *inode_new(ld_sync_tree_t *t) {
  inode_t *in = t->spare_inode[--t->n_spare_inodes];
  in->n = 0;
  return in;
}

static void leaf_free(ld_sync_tree_t *t, leaf_t *l) {
  free(l);
  t->n_leaves--;
}

static void inode_free(ld_sync_tree_t *t, inode_t *in) {
  free(in);
  t->n_inodes--;
}

static void subtree_free(ld_sync_tree_t *t, void *node, int height) {
  if (height == 0) {
    leaf_free(t, node);
    return;
  }
  inode_t *in = node;
  for (uint32_t i = 0; i < in->n; i++)
    subtree_free(t, in->child[i], height - 1);
  inode_free(t, in);
}

/* First position in the leaf whose item is ≥ key (inclusive: > key). */
static uint32_t leaf_search(const leaf_t *l, const ld_sync_id_t *key, bool inclusive) {
  uint32_t lo = 0, hi = l->n;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    int c = ld_sync_id_cmp(&l->item[mid], key);
    if (c < 0 || (inclusive && c == 0))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The child a key belongs to: the last i ≥ 1 with key[i] ≤ key, else 0. */
static uint32_t inode_route(const inode_t *in, const ld_sync_id_t *key) {
  uint32_t lo = 1, hi = in->n;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (ld_sync_id_cmp(&in->key[mid], key) <= 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo - 1;
}

static void leaf_xor(const leaf_t *l, uint32_t from, uint32_t to, ld_sync_fp_t *fp) {
  for (uint32_t i = from; i < to; i++)
    ld_sync_fp_xor_hash(fp, l->item[i].hash);
}

static void inode_sum(const inode_t *in, uint32_t from, uint32_t to, uint64_t *count,
                      ld_sync_fp_t *fp) {
  for (uint32_t i = from; i < to; i++) {
    *count += in->count[i];
    ld_sync_fp_xor(fp, &in->fp[i]);
  }
}

/* Count and fingerprint of a whole node. */
static void node_total(const void *node, int height, uint64_t *count, ld_sync_fp_t *fp) {
  *count = 0;
  ld_sync_fp_zero(fp);
  if (height == 0) {
    const leaf_t *l = node;
    *count = l->n;
    leaf_xor(l, 0, l->n, fp);
  } else {
    const inode_t *in = node;
    inode_sum(in, 0, in->n, count, fp);
  }
}

static uint32_t node_fill(const void *node, int height) {
  return height == 0 ? ((const leaf_t *)node)->n : ((const inode_t *)node)->n;
}

/* The smallest key a node's items can have, for the separator in front of it. */
static ld_sync_id_t node_first_key(const void *node, int height) {
  return height == 0 ? ((const leaf_t *)node)->item[0] : ((const inode_t *)node)->key[0];
}

/* ---- insert ---------------------------------------------------------------------------------- */

static void split_fill(split_t *sp, void *right, int height) {
  sp->right = right;
  sp->key = node_first_key(right, height);
  node_total(right, height, &sp->count, &sp->fp);
}

static int leaf_insert(ld_sync_tree_t *t, leaf_t *l, const ld_sync_id_t *x, split_t *sp) {
  uint32_t pos = leaf_search(l, x, false);
  if (pos < l->n && ld_sync_id_cmp(&l->item[pos], x) == 0)
    return LD_ERR_EXISTS;
  if (l->n < LEAF_CAP) {
    memmove(&l->item[pos + 1], &l->item[pos], (l->n - pos) * sizeof l->item[0]);
    l->item[pos] = *x;
    l->n++;
    return 0;
  }
  leaf_t *r = leaf_new(t);
  uint32_t cut = pos >= TAIL_SPLIT(LEAF_CAP) ? pos : LEAF_CAP / 2;
  r->n = l->n - cut;
  memcpy(r->item, &l->item[cut], r->n * sizeof l->item[0]);
  l->n = cut;
  leaf_t *into = pos < cut ? l : r;
  uint32_t at = pos < cut ? pos : pos - cut;
  memmove(&into->item[at + 1], &into->item[at], (into->n - at) * sizeof l->item[0]);
  into->item[at] = *x;
  into->n++;
  r->next = l->next;
  l->next = r;
  split_fill(sp, r, 0);
  return 1;
}

/* Puts entry (child, count, fp, key) at position `at` of a node with room. */
static void inode_put(inode_t *in, uint32_t at, const split_t *e) {
  uint32_t k = in->n - at;
  memmove(&in->child[at + 1], &in->child[at], k * sizeof in->child[0]);
  memmove(&in->count[at + 1], &in->count[at], k * sizeof in->count[0]);
  memmove(&in->fp[at + 1], &in->fp[at], k * sizeof in->fp[0]);
  memmove(&in->key[at + 1], &in->key[at], k * sizeof in->key[0]);
  in->child[at] = e->right;
  in->count[at] = e->count;
  in->fp[at] = e->fp;
  in->key[at] = e->key;
  in->n++;
}

/* Moves entries [from, from + k) of `src` to position `at` of `dst` (which has room). */
static void inode_move(inode_t *dst, uint32_t at, inode_t *src, uint32_t from, uint32_t k) {
  uint32_t tail = dst->n - at;
  memmove(&dst->child[at + k], &dst->child[at], tail * sizeof dst->child[0]);
  memmove(&dst->count[at + k], &dst->count[at], tail * sizeof dst->count[0]);
  memmove(&dst->fp[at + k], &dst->fp[at], tail * sizeof dst->fp[0]);
  memmove(&dst->key[at + k], &dst->key[at], tail * sizeof dst->key[0]);
  memcpy(&dst->child[at], &src->child[from], k * sizeof dst->child[0]);
  memcpy(&dst->count[at], &src->count[from], k * sizeof dst->count[0]);
  memcpy(&dst->fp[at], &src->fp[from], k * sizeof dst->fp[0]);
  memcpy(&dst->key[at], &src->key[from], k * sizeof dst->key[0]);
  dst->n += k;
  uint32_t rest = src->n - from - k;
  memmove(&src->child[from], &src->child[from + k], rest * sizeof src->child[0]);
  memmove(&src->count[from], &src->count[from + k], rest * sizeof src->count[0]);
  memmove(&src->fp[from], &src->fp[from + k], rest * sizeof src->fp[0]);
  memmove(&src->key[from], &src->key[from + k], rest * sizeof src->key[0]);
  src->n -= k;
}

/* Adds entry `e` at position `at` of a full node: splits it, `sp` describes the new right one. */
static void inode_split_put(ld_sync_tree_t *t, inode_t *in, uint32_t at, const split_t *e,
                            int height, split_t *sp) {
  inode_t *r = inode_new(t);
  uint32_t cut = at >= TAIL_SPLIT(NODE_CAP) ? at : NODE_CAP / 2;
  inode_move(r, 0, in, cut, in->n - cut);
  if (at < cut)
    inode_put(in, at, e);
  else
    inode_put(r, at - cut, e);
  split_fill(sp, r, height);
}

/* Moves the last k items of leaf i to the front of leaf i + 1, or (to_left) the first k items
 * of leaf i + 1 to the end of leaf i, keeping the entries' aggregates and separator right. */
static void leaf_shift(inode_t *in, uint32_t i, uint32_t k, bool to_left) {
  leaf_t *l = in->child[i], *r = in->child[i + 1];
  const ld_sync_id_t *moved = to_left ? r->item : &l->item[l->n - k];
  ld_sync_fp_t fp;
  ld_sync_fp_zero(&fp);
  for (uint32_t j = 0; j < k; j++)
    ld_sync_fp_xor_hash(&fp, moved[j].hash);
  if (to_left) {
    memcpy(&l->item[l->n], r->item, k * sizeof r->item[0]);
    memmove(r->item, &r->item[k], (r->n - k) * sizeof r->item[0]);
    l->n += k;
    r->n -= k;
  } else {
    memmove(&r->item[k], r->item, r->n * sizeof r->item[0]);
    memcpy(r->item, &l->item[l->n - k], k * sizeof r->item[0]);
    l->n -= k;
    r->n += k;
  }
  in->count[i] += to_left ? k : -(uint64_t)k;
  in->count[i + 1] += to_left ? -(uint64_t)k : k;
  ld_sync_fp_xor(&in->fp[i], &fp);
  ld_sync_fp_xor(&in->fp[i + 1], &fp);
  in->key[i + 1] = r->item[0];
}

/* Leaf i is full: hand half of a neighbour's free room over to it instead of splitting (leaves
 * then stay about 80 % full under random inserts, not 70 %). False when both neighbours are
 * full too. */
static bool leaf_make_room(inode_t *in, uint32_t i) {
  if (i + 1 < in->n) {
    const leaf_t *r = in->child[i + 1];
    if (r->n < LEAF_CAP) {
      leaf_shift(in, i, (LEAF_CAP - r->n + 1) / 2, false);
      return true;
    }
  }
  if (i > 0) {
    const leaf_t *l = in->child[i - 1];
    if (l->n < LEAF_CAP) {
      leaf_shift(in, i - 1, (LEAF_CAP - l->n + 1) / 2, true);
      return true;
    }
  }
  return false;
}

/* Returns 0 (inserted), 1 (inserted and `node` split: see sp) or an error. */
static int node_insert(ld_sync_tree_t *t, void *node, int height, const ld_sync_id_t *x,
                       split_t *sp) {
  if (height == 0)
    return leaf_insert(t, node, x, sp);
  inode_t *in = node;
  uint32_t i = inode_route(in, x);
  if (height == 1 && ((leaf_t *)in->child[i])->n == LEAF_CAP && leaf_make_room(in, i))
    i = inode_route(in, x);
  split_t child_sp;
  int rc = node_insert(t, in->child[i], height - 1, x, &child_sp);
  if (rc < 0)
    return rc;
  in->count[i]++;
  ld_sync_fp_xor_hash(&in->fp[i], x->hash);
  if (rc == 0)
    return 0;
  in->count[i] -= child_sp.count;
  ld_sync_fp_xor(&in->fp[i], &child_sp.fp);
  if (in->n < NODE_CAP) {
    inode_put(in, i + 1, &child_sp);
    return 0;
  }
  inode_split_put(t, in, i + 1, &child_sp, height, sp);
  return 1;
}

static void grow_root(ld_sync_tree_t *t, const split_t *sp) {
  inode_t *root = inode_new(t);
  split_t left = {t->root, node_first_key(t->root, t->height), t->count - sp->count, t->fp};
  ld_sync_fp_xor(&left.fp, &sp->fp);
  inode_put(root, 0, &left);
  inode_put(root, 1, sp);
  t->root = root;
  t->height++;
}

int ld_sync_tree_insert(ld_sync_tree_t *t, const ld_sync_id_t *id) {
  int rc = reserve(t);
  if (rc != 0)
    return rc;
  split_t sp;
  rc = node_insert(t, t->root, t->height, id, &sp);
  if (rc < 0)
    return rc;
  t->count++;
  ld_sync_fp_xor_hash(&t->fp, id->hash);
  if (rc == 1)
    grow_root(t, &sp);
  return 0;
}

/* ---- remove and rebalance -------------------------------------------------------------------- */

static bool underfull(const void *node, int height) {
  return node_fill(node, height) < (height == 0 ? LEAF_MIN : NODE_MIN);
}

static void entry_refresh(inode_t *in, uint32_t i, int height) {
  node_total(in->child[i], height, &in->count[i], &in->fp[i]);
}

/* Removes entry `at` of a node (its child is already gone). */
static void inode_drop(inode_t *in, uint32_t at) {
  uint32_t k = in->n - at - 1;
  memmove(&in->child[at], &in->child[at + 1], k * sizeof in->child[0]);
  memmove(&in->count[at], &in->count[at + 1], k * sizeof in->count[0]);
  memmove(&in->fp[at], &in->fp[at + 1], k * sizeof in->fp[0]);
  memmove(&in->key[at], &in->key[at + 1], k * sizeof in->key[0]);
  in->n--;
}

/* Leaves a and b = a + 1 of `in`: b's items move into a when they fit, else both end up even. */
static void leaves_balance(ld_sync_tree_t *t, inode_t *in, uint32_t a) {
  leaf_t *l = in->child[a], *r = in->child[a + 1];
  uint32_t total = l->n + r->n;
  if (total <= LEAF_CAP) {
    memcpy(&l->item[l->n], r->item, r->n * sizeof r->item[0]);
    l->n = total;
    l->next = r->next;
    in->count[a] += in->count[a + 1];
    ld_sync_fp_xor(&in->fp[a], &in->fp[a + 1]);
    leaf_free(t, r);
    inode_drop(in, a + 1);
    return;
  }
  uint32_t want = total / 2;
  if (l->n < want) {
    uint32_t k = want - l->n;
    memcpy(&l->item[l->n], r->item, k * sizeof r->item[0]);
    memmove(r->item, &r->item[k], (r->n - k) * sizeof r->item[0]);
    l->n += k;
    r->n -= k;
  } else {
    uint32_t k = l->n - want;
    memmove(&r->item[k], r->item, r->n * sizeof r->item[0]);
    memcpy(r->item, &l->item[want], k * sizeof r->item[0]);
    l->n -= k;
    r->n += k;
  }
  in->key[a + 1] = r->item[0];
  entry_refresh(in, a, 0);
  entry_refresh(in, a + 1, 0);
}

/* Inner children a and b = a + 1 of `in`: merge when they fit, else even them out. */
static void inodes_balance(ld_sync_tree_t *t, inode_t *in, uint32_t a, int child_height) {
  inode_t *l = in->child[a], *r = in->child[a + 1];
  r->key[0] = in->key[a + 1]; /* the separator in front of r's first child */
  uint32_t total = l->n + r->n;
  if (total <= NODE_CAP) {
    inode_move(l, l->n, r, 0, r->n);
    in->count[a] += in->count[a + 1];
    ld_sync_fp_xor(&in->fp[a], &in->fp[a + 1]);
    inode_free(t, r);
    inode_drop(in, a + 1);
    return;
  }
  uint32_t want = total / 2;
  if (l->n < want)
    inode_move(l, l->n, r, 0, want - l->n);
  else
    inode_move(r, 0, l, want, l->n - want);
  in->key[a + 1] = r->key[0];
  entry_refresh(in, a, child_height);
  entry_refresh(in, a + 1, child_height);
}

/* Child i of `in` may be underfull: merge it with, or borrow from, a neighbour. */
static void fix_child(ld_sync_tree_t *t, inode_t *in, uint32_t i, int child_height) {
  if (in->n < 2 || !underfull(in->child[i], child_height))
    return;
  uint32_t a = i + 1 < in->n ? i : i - 1;
  if (child_height == 0)
    leaves_balance(t, in, a);
  else
    inodes_balance(t, in, a, child_height);
}

static int node_remove(ld_sync_tree_t *t, void *node, int height, const ld_sync_id_t *x) {
  if (height == 0) {
    leaf_t *l = node;
    uint32_t pos = leaf_search(l, x, false);
    if (pos >= l->n || ld_sync_id_cmp(&l->item[pos], x) != 0)
      return LD_ERR_NOT_FOUND;
    memmove(&l->item[pos], &l->item[pos + 1], (l->n - pos - 1) * sizeof l->item[0]);
    l->n--;
    return 0;
  }
  inode_t *in = node;
  uint32_t i = inode_route(in, x);
  int rc = node_remove(t, in->child[i], height - 1, x);
  if (rc != 0)
    return rc;
  in->count[i]--;
  ld_sync_fp_xor_hash(&in->fp[i], x->hash);
  fix_child(t, in, i, height - 1);
  return 0;
}

/* An inner root with a single child gives way to it. */
static void shrink_root(ld_sync_tree_t *t) {
  while (t->height > 0 && ((inode_t *)t->root)->n == 1) {
    inode_t *old = t->root;
    t->root = old->child[0];
    t->height--;
    inode_free(t, old);
  }
}

int ld_sync_tree_remove(ld_sync_tree_t *t, const ld_sync_id_t *id) {
  int rc = node_remove(t, t->root, t->height, id);
  if (rc != 0)
    return rc;
  t->count--;
  ld_sync_fp_xor_hash(&t->fp, id->hash);
  shrink_root(t);
  return 0;
}

/* ---- prune ----------------------------------------------------------------------------------- */

/* Removes every item < key under `node`; returns how many. */
static uint64_t drop_prefix(ld_sync_tree_t *t, void *node, int height, const ld_sync_id_t *key) {
  if (height == 0) {
    leaf_t *l = node;
    uint32_t pos = leaf_search(l, key, false);
    memmove(l->item, &l->item[pos], (l->n - pos) * sizeof l->item[0]);
    l->n -= pos;
    return pos;
  }
  inode_t *in = node;
  uint32_t i = inode_route(in, key);
  uint64_t removed = 0;
  for (uint32_t j = 0; j < i; j++) {
    removed += in->count[j];
    subtree_free(t, in->child[j], height - 1);
  }
  if (i > 0) {
    in->key[i] = in->key[0]; /* keeps key[0] a bound of the (new) first child */
    memmove(&in->child[0], &in->child[i], (in->n - i) * sizeof in->child[0]);
    memmove(&in->count[0], &in->count[i], (in->n - i) * sizeof in->count[0]);
    memmove(&in->fp[0], &in->fp[i], (in->n - i) * sizeof in->fp[0]);
    memmove(&in->key[0], &in->key[i], (in->n - i) * sizeof in->key[0]);
    in->n -= i;
  }
  uint64_t below = drop_prefix(t, in->child[0], height - 1, key);
  if (below > 0) {
    removed += below;
    entry_refresh(in, 0, height - 1);
  }
  if (in->count[0] == 0 && in->n > 1) {
    subtree_free(t, in->child[0], height - 1);
    inode_drop(in, 0);
  }
  return removed;
}

/* After a prune only the left spine can be underfull; fixed top-down, each spine node borrows
 * from or merges with its untouched right sibling. */
static void fix_left_spine(ld_sync_tree_t *t) {
  inode_t *in = t->root;
  for (int h = t->height; h > 0; h--) {
    fix_child(t, in, 0, h - 1);
    in = in->child[0];
  }
}

uint64_t ld_sync_tree_prune(ld_sync_tree_t *t, int64_t before) {
  ld_sync_id_t key = ld_sync_id_bound(before);
  uint64_t removed = drop_prefix(t, t->root, t->height, &key);
  if (removed == 0)
    return 0;
  shrink_root(t);
  fix_left_spine(t);
  shrink_root(t);
  t->count -= removed;
  uint64_t count;
  node_total(t->root, t->height, &count, &t->fp);
  return removed;
}

/* ---- queries --------------------------------------------------------------------------------- */

/* Count and XOR of the items < key (inclusive: ≤ key). At each level the shorter side of the
 * node is summed and the node's known total gives the other. */
static void prefix(const ld_sync_tree_t *t, const ld_sync_id_t *key, bool inclusive,
                   uint64_t *count, ld_sync_fp_t *fp) {
  const void *node = t->root;
  uint64_t node_count = t->count;
  ld_sync_fp_t node_fp = t->fp;
  *count = 0;
  ld_sync_fp_zero(fp);
  for (int h = t->height; h > 0; h--) {
    const inode_t *in = node;
    uint32_t i = inode_route(in, key);
    if (i <= in->n / 2) {
      inode_sum(in, 0, i, count, fp);
    } else { /* left = total − (entries i..n−1) */
      uint64_t c = 0;
      ld_sync_fp_t f;
      ld_sync_fp_zero(&f);
      inode_sum(in, i, in->n, &c, &f);
      *count += node_count - c;
      ld_sync_fp_xor(fp, &node_fp);
      ld_sync_fp_xor(fp, &f);
    }
    node_count = in->count[i];
    node_fp = in->fp[i];
    node = in->child[i];
  }
  const leaf_t *l = node;
  uint32_t pos = leaf_search(l, key, inclusive);
  *count += pos;
  if (pos <= l->n / 2) {
    leaf_xor(l, 0, pos, fp);
  } else {
    ld_sync_fp_xor(fp, &node_fp);
    leaf_xor(l, pos, l->n, fp);
  }
}

void ld_sync_tree_summary(const ld_sync_tree_t *t, const ld_sync_id_t *lo, const ld_sync_id_t *hi,
                          ld_sync_summary_t *out) {
  out->count = 0;
  ld_sync_fp_zero(&out->fp);
  if (ld_sync_id_cmp(hi, lo) < 0)
    return;
  uint64_t below;
  ld_sync_fp_t below_fp;
  prefix(t, hi, true, &out->count, &out->fp);
  prefix(t, lo, false, &below, &below_fp);
  out->count -= below;
  ld_sync_fp_xor(&out->fp, &below_fp);
}

uint64_t ld_sync_tree_rank(const ld_sync_tree_t *t, const ld_sync_id_t *key, bool inclusive) {
  const void *node = t->root;
  uint64_t rank = 0;
  for (int h = t->height; h > 0; h--) {
    const inode_t *in = node;
    uint32_t i = inode_route(in, key);
    for (uint32_t j = 0; j < i; j++)
      rank += in->count[j];
    node = in->child[i];
  }
  return rank + leaf_search(node, key, inclusive);
}

int ld_sync_tree_at(const ld_sync_tree_t *t, uint64_t rank, ld_sync_id_t *out) {
  if (rank >= t->count)
    return LD_ERR_NOT_FOUND;
  const void *node = t->root;
  for (int h = t->height; h > 0; h--) {
    const inode_t *in = node;
    uint32_t i = 0;
    while (i + 1 < in->n && rank >= in->count[i])
      rank -= in->count[i++];
    node = in->child[i];
  }
  *out = ((const leaf_t *)node)->item[rank];
  return 0;
}

bool ld_sync_tree_contains(const ld_sync_tree_t *t, const ld_sync_id_t *id) {
  const void *node = t->root;
  for (int h = t->height; h > 0; h--)
    node = ((const inode_t *)node)->child[inode_route(node, id)];
  const leaf_t *l = node;
  uint32_t pos = leaf_search(l, id, false);
  return pos < l->n && ld_sync_id_cmp(&l->item[pos], id) == 0;
}

int ld_sync_tree_each(const ld_sync_tree_t *t, const ld_sync_id_t *lo, const ld_sync_id_t *hi,
                      ld_sync_item_fn fn, void *user) {
  const void *node = t->root;
  for (int h = t->height; h > 0; h--)
    node = ((const inode_t *)node)->child[inode_route(node, lo)];
  const leaf_t *l = node;
  uint32_t pos = leaf_search(l, lo, false);
  for (; l != NULL; l = l->next, pos = 0) {
    for (; pos < l->n; pos++) {
      if (ld_sync_id_cmp(&l->item[pos], hi) > 0)
        return 0;
      int rc = fn(user, &l->item[pos]);
      if (rc != 0)
        return rc;
    }
  }
  return 0;
}

uint64_t ld_sync_tree_size(const ld_sync_tree_t *t) {
  return t->count;
}

size_t ld_sync_tree_memory(const ld_sync_tree_t *t) {
  return sizeof *t + t->n_leaves * sizeof(leaf_t) + t->n_inodes * sizeof(inode_t);
}

/* ---- life cycle and the set interface -------------------------------------------------------- */

int ld_sync_tree_new(ld_sync_tree_t **out) {
  ld_sync_tree_t *t = calloc(1, sizeof *t);
  if (t == NULL)
    return LD_ERR_NOMEM;
  if (reserve(t) != 0) {
    free(t);
    return LD_ERR_NOMEM;
  }
  t->root = leaf_new(t);
  *out = t;
  return 0;
}

void ld_sync_tree_free(ld_sync_tree_t *t) {
  if (t == NULL)
    return;
  subtree_free(t, t->root, t->height);
  free(t->spare_leaf);
  for (int i = 0; i < t->n_spare_inodes; i++)
    free(t->spare_inode[i]);
  free(t);
}

static void set_summary(void *self, const ld_sync_id_t *lo, const ld_sync_id_t *hi,
                        ld_sync_summary_t *out) {
  ld_sync_tree_summary(self, lo, hi, out);
}

static int set_each(void *self, const ld_sync_id_t *lo, const ld_sync_id_t *hi, ld_sync_item_fn fn,
                    void *user) {
  return ld_sync_tree_each(self, lo, hi, fn, user);
}

static int set_nth(void *self, const ld_sync_id_t *lo, uint64_t k, ld_sync_id_t *out) {
  return ld_sync_tree_at(self, ld_sync_tree_rank(self, lo, false) + k, out);
}

static const ld_sync_set_ops_t k_tree_ops = {set_summary, set_each, set_nth};

ld_sync_set_t ld_sync_tree_set(ld_sync_tree_t *t) {
  ld_sync_set_t s = {&k_tree_ops, t};
  return s;
}

/* ---- invariants (tests) ---------------------------------------------------------------------- */

typedef struct check {
  const leaf_t *expect_leaf; /* the next leaf in chain order */
  const ld_sync_id_t *last;  /* the previous item */
  bool ok;
} check_t;

static void check_node(check_t *c, const void *node, int height, bool is_root,
                       const ld_sync_id_t *low, const ld_sync_id_t *high, uint64_t *count,
                       ld_sync_fp_t *fp) {
  if (!is_root && node_fill(node, height) == 0)
    c->ok = false;
  if (height == 0) {
    const leaf_t *l = node;
    if (l != c->expect_leaf)
      c->ok = false;
    c->expect_leaf = l->next;
    for (uint32_t i = 0; i < l->n; i++) {
      if ((c->last != NULL && ld_sync_id_cmp(c->last, &l->item[i]) >= 0) ||
          (low != NULL && ld_sync_id_cmp(&l->item[i], low) < 0) ||
          (high != NULL && ld_sync_id_cmp(&l->item[i], high) >= 0))
        c->ok = false;
      c->last = &l->item[i];
    }
    node_total(l, 0, count, fp);
    return;
  }
  const inode_t *in = node;
  if (in->n == 0 || (is_root && in->n < 2))
    c->ok = false;
  *count = 0;
  ld_sync_fp_zero(fp);
  for (uint32_t i = 0; i < in->n; i++) {
    uint64_t cc;
    ld_sync_fp_t cf;
    const ld_sync_id_t *lo = i == 0 ? low : &in->key[i];
    const ld_sync_id_t *hi = i + 1 < in->n ? &in->key[i + 1] : high;
    check_node(c, in->child[i], height - 1, false, lo, hi, &cc, &cf);
    if (cc != in->count[i] || !ld_sync_fp_equal(&cf, &in->fp[i]))
      c->ok = false;
    *count += cc;
    ld_sync_fp_xor(fp, &cf);
  }
}

int ld_sync_tree_check(const ld_sync_tree_t *t) {
  const void *first = t->root;
  for (int h = t->height; h > 0; h--)
    first = ((const inode_t *)first)->child[0];
  check_t c = {first, NULL, true};
  uint64_t count;
  ld_sync_fp_t fp;
  check_node(&c, t->root, t->height, true, NULL, NULL, &count, &fp);
  if (c.expect_leaf != NULL || count != t->count || !ld_sync_fp_equal(&fp, &t->fp))
    c.ok = false;
  return c.ok ? 0 : LD_ERR_INTERNAL;
}
