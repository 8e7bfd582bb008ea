#include "waku/discovery/discv5_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hashmap.h"

/* ---- addresses and distances ---------------------------------------------------------------- */

int ld_discv5_addr_from_enr(const ld_enr_t *enr, ld_discv5_addr_t *out) {
  uint16_t port;
  memset(out, 0, sizeof *out);
  if (ld_enr_ip4(enr, out->ip) == 0 && ld_enr_port(enr, "udp", &port) == 0) {
    out->ip_len = 4;
    out->port = port;
    return 0;
  }
  if (ld_enr_ip6(enr, out->ip) == 0 &&
      (ld_enr_port(enr, "udp6", &port) == 0 || ld_enr_port(enr, "udp", &port) == 0)) {
    out->ip_len = 16;
    out->port = port;
    return 0;
  }
  memset(out, 0, sizeof *out);
  return LD_ERR_NOT_FOUND;
}

bool ld_discv5_addr_equal(const ld_discv5_addr_t *a, const ld_discv5_addr_t *b) {
  return a->ip_len == b->ip_len && a->port == b->port && memcmp(a->ip, b->ip, a->ip_len) == 0;
}

static bool ip6_all_zero(const uint8_t *ip, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (ip[i] != 0)
      return false;
  return true;
}

bool ld_discv5_addr_is_loopback(const ld_discv5_addr_t *a) {
  if (a->ip_len == 4)
    return a->ip[0] == 127;
  return ip6_all_zero(a->ip, 15) && a->ip[15] == 1;
}

bool ld_discv5_addr_is_site_local(const ld_discv5_addr_t *a) {
  const uint8_t *ip = a->ip;
  if (a->ip_len == 4)
    return ip[0] == 10 || (ip[0] == 172 && (ip[1] & 0xf0) == 16) ||
           (ip[0] == 192 && ip[1] == 168) || (ip[0] == 100 && (ip[1] & 0xc0) == 64);
  return (ip[0] & 0xfe) == 0xfc;
}

static bool is_link_local(const ld_discv5_addr_t *a) {
  if (a->ip_len == 4)
    return a->ip[0] == 169 && a->ip[1] == 254;
  return a->ip[0] == 0xfe && (a->ip[1] & 0xc0) == 0x80;
}

bool ld_discv5_addr_is_public(const ld_discv5_addr_t *a) {
  bool unspecified_or_multicast = a->ip_len == 4 ? (a->ip[0] == 0 || a->ip[0] >= 224)
                                                 : (ip6_all_zero(a->ip, 16) || a->ip[0] == 0xff);
  return !unspecified_or_multicast && !ld_discv5_addr_is_loopback(a) &&
         !ld_discv5_addr_is_site_local(a) && !is_link_local(a);
}

char *ld_discv5_addr_text(const ld_discv5_addr_t *a, char *out, size_t cap) {
  if (a->ip_len == 4) {
    snprintf(out, cap, "%u.%u.%u.%u:%u", a->ip[0], a->ip[1], a->ip[2], a->ip[3], a->port);
    return out;
  }
  size_t n = 0;
  n += (size_t)snprintf(out, cap, "[");
  for (int i = 0; i < 16 && n < cap; i += 2)
    n += (size_t)snprintf(out + n, cap - n, "%s%x", i ? ":" : "", a->ip[i] << 8 | a->ip[i + 1]);
  if (n < cap)
    snprintf(out + n, cap - n, "]:%u", a->port);
  return out;
}

int ld_discv5_log_distance(const uint8_t a[LD_DISCV5_NODE_ID_LEN],
                           const uint8_t b[LD_DISCV5_NODE_ID_LEN]) {
  for (int i = 0; i < LD_DISCV5_NODE_ID_LEN; i++) {
    uint8_t x = a[i] ^ b[i];
    if (x != 0)
      return (LD_DISCV5_NODE_ID_LEN - i) * 8 - __builtin_clz(x) + 24;
  }
  return 0;
}

int ld_discv5_distance_cmp(const uint8_t target[LD_DISCV5_NODE_ID_LEN],
                           const uint8_t a[LD_DISCV5_NODE_ID_LEN],
                           const uint8_t b[LD_DISCV5_NODE_ID_LEN]) {
  for (int i = 0; i < LD_DISCV5_NODE_ID_LEN; i++) {
    uint8_t da = a[i] ^ target[i], db = b[i] ^ target[i];
    if (da != db)
      return da < db ? -1 : 1;
  }
  return 0;
}

int ld_discv5_node_from_enr(ld_discv5_node_t *n, const ld_enr_t *enr) {
  memset(n, 0, offsetof(ld_discv5_node_t, enr));
  int rc = ld_discv5_addr_from_enr(enr, &n->addr);
  if (rc == 0)
    rc = ld_enr_node_id(enr, n->id);
  if (rc != 0)
    return rc;
  memcpy(n->pubkey, enr->pubkey, sizeof n->pubkey);
  n->seq = enr->seq;
  n->enr_len = (uint16_t)enr->len;
  memcpy(n->enr, enr->raw, enr->len);
  return 0;
}

/* ---- the table ------------------------------------------------------------------------------ */

typedef struct entry {
  ld_discv5_node_t node; /* first: a node pointer is its entry's */
  bool replacement;
} entry_t;

typedef struct kbucket {
  entry_t *nodes[LD_DISCV5_BUCKET_SIZE]; /* head (most recently seen) first */
  entry_t *repl[LD_DISCV5_REPLACEMENTS]; /* oldest first */
  uint8_t n, n_repl;
} kbucket_t;

struct ld_discv5_table {
  uint8_t local[LD_DISCV5_NODE_ID_LEN];
  ld_discv5_table_config_t cfg;
  uint8_t extra_bits[LD_DISCV5_BUCKETS]; /* sub-buckets of distance d: 2^extra_bits[d - 1] */
  kbucket_t *buckets[LD_DISCV5_BUCKETS]; /* allocated on first use */
  ld_hashmap_t *by_id;                   /* node ID → entry_t */
  ld_hashmap_t *by_record;               /* the record's bytes → entry_t */
  ld_hashmap_t *ip_counts;               /* public IP → entries (uintptr_t) */
  size_t n_members, n_repl;
};

void ld_discv5_table_config_default(ld_discv5_table_config_t *cfg) {
  cfg->bits_per_hop = 1;
  cfg->bucket_ip_limit = LD_DISCV5_DEFAULT_BUCKET_IP_LIMIT;
  cfg->table_ip_limit = LD_DISCV5_DEFAULT_TABLE_IP_LIMIT;
  cfg->max_nodes = LD_DISCV5_DEFAULT_TABLE_MAX_NODES;
}

/* Bits that take the prefix length of distance d's range (257 − d) to a multiple of b. */
static uint8_t extra_bits_for(int d, int b) {
  int prefix = 257 - d, r = prefix % b;
  int x = r == 0 ? 0 : b - r;
  if (prefix + x > 256)
    x = 256 - prefix;
  return (uint8_t)x;
}

ld_discv5_table_t *ld_discv5_table_new(const uint8_t local_id[LD_DISCV5_NODE_ID_LEN],
                                       const ld_discv5_table_config_t *cfg) {
  if (cfg->bits_per_hop < 1 || cfg->bits_per_hop > LD_DISCV5_BITS_PER_HOP_MAX ||
      cfg->max_nodes == 0)
    return NULL;
  ld_discv5_table_t *t = calloc(1, sizeof *t);
  if (t == NULL)
    return NULL;
  memcpy(t->local, local_id, LD_DISCV5_NODE_ID_LEN);
  t->cfg = *cfg;
  for (int d = 1; d <= LD_DISCV5_BUCKETS; d++)
    t->extra_bits[d - 1] = extra_bits_for(d, cfg->bits_per_hop);
  t->by_id = ld_hashmap_new(64);
  t->by_record = ld_hashmap_new(64);
  t->ip_counts = ld_hashmap_new(16);
  if (t->by_id == NULL || t->by_record == NULL || t->ip_counts == NULL) {
    ld_discv5_table_free(t);
    return NULL;
  }
  return t;
}

void ld_discv5_table_free(ld_discv5_table_t *t) {
  if (t == NULL)
    return;
  ld_hashmap_free(t->by_id, free);
  ld_hashmap_free(t->by_record, NULL);
  ld_hashmap_free(t->ip_counts, NULL);
  for (int i = 0; i < LD_DISCV5_BUCKETS; i++)
    free(t->buckets[i]);
  free(t);
}

static int bit_at(const uint8_t *x, int pos) {
  return x[pos / 8] >> (7 - pos % 8) & 1;
}

/* The (sub-)bucket of `id` (not our own ID); allocates its distance's array when `create`. */
static kbucket_t *bucket_of(ld_discv5_table_t *t, const uint8_t *id, bool create) {
  int d = ld_discv5_log_distance(t->local, id);
  int extra = t->extra_bits[d - 1];
  if (t->buckets[d - 1] == NULL) {
    if (!create)
      return NULL;
    t->buckets[d - 1] = calloc((size_t)1 << extra, sizeof(kbucket_t));
    if (t->buckets[d - 1] == NULL)
      return NULL;
  }
  uint8_t x[LD_DISCV5_NODE_ID_LEN];
  for (int i = 0; i < LD_DISCV5_NODE_ID_LEN; i++)
    x[i] = t->local[i] ^ id[i];
  size_t sub = 0;
  for (int i = 1; i <= extra; i++)
    sub = sub << 1 | (size_t)bit_at(x, 256 - d + i);
  return &t->buckets[d - 1][sub];
}

/* ---- IP limits ---- */

static size_t ip_count(const ld_discv5_table_t *t, const ld_discv5_addr_t *a) {
  return (uintptr_t)ld_hashmap_get(t->ip_counts, a->ip, a->ip_len);
}

static void ip_adjust(ld_discv5_table_t *t, const ld_discv5_addr_t *a, int delta) {
  if (!ld_discv5_addr_is_public(a))
    return;
  size_t n = ip_count(t, a);
  n = delta > 0 ? n + 1 : n - 1;
  if (n == 0)
    ld_hashmap_remove(t->ip_counts, a->ip, a->ip_len);
  else if (ld_hashmap_put(t->ip_counts, a->ip, a->ip_len, (void *)(uintptr_t)n, NULL) != 0)
    return; /* out of memory: the count only errs towards allowing */
}

static size_t bucket_ip_count(const kbucket_t *b, const ld_discv5_addr_t *a, const entry_t *skip) {
  size_t n = 0;
  for (int i = 0; i < b->n; i++)
    if (b->nodes[i] != skip && b->nodes[i]->node.addr.ip_len == a->ip_len &&
        memcmp(b->nodes[i]->node.addr.ip, a->ip, a->ip_len) == 0)
      n++;
  for (int i = 0; i < b->n_repl; i++)
    if (b->repl[i] != skip && b->repl[i]->node.addr.ip_len == a->ip_len &&
        memcmp(b->repl[i]->node.addr.ip, a->ip, a->ip_len) == 0)
      n++;
  return n;
}

/* Whether one more entry of `a` fits the limits (`skip`: an entry about to leave that IP). */
static bool ip_allowed(const ld_discv5_table_t *t, const kbucket_t *b, const ld_discv5_addr_t *a,
                       const entry_t *skip) {
  if (!ld_discv5_addr_is_public(a))
    return true;
  size_t in_table = ip_count(t, a);
  if (skip != NULL && skip->node.addr.ip_len == a->ip_len &&
      memcmp(skip->node.addr.ip, a->ip, a->ip_len) == 0)
    in_table--;
  return bucket_ip_count(b, a, skip) < t->cfg.bucket_ip_limit && in_table < t->cfg.table_ip_limit;
}

/* ---- entries ---- */

/* Indexes e's record bytes (a failure only costs a later verification). */
static void index_record(ld_discv5_table_t *t, entry_t *e) {
  if (e->node.enr_len > 0)
    ld_hashmap_put(t->by_record, e->node.enr, e->node.enr_len, e, NULL);
}

static void unindex_record(ld_discv5_table_t *t, const entry_t *e) {
  if (e->node.enr_len > 0 && ld_hashmap_get(t->by_record, e->node.enr, e->node.enr_len) == e)
    ld_hashmap_remove(t->by_record, e->node.enr, e->node.enr_len);
}

static entry_t *new_entry(ld_discv5_table_t *t, const ld_discv5_node_t *n, bool replacement) {
  entry_t *e = malloc(sizeof *e);
  if (e == NULL)
    return NULL;
  e->node = *n;
  e->replacement = replacement;
  if (ld_hashmap_put(t->by_id, n->id, LD_DISCV5_NODE_ID_LEN, e, NULL) != 0) {
    free(e);
    return NULL;
  }
  index_record(t, e);
  ip_adjust(t, &n->addr, 1);
  if (replacement)
    t->n_repl++;
  else
    t->n_members++;
  return e;
}

static void drop_entry(ld_discv5_table_t *t, entry_t *e) {
  ld_hashmap_remove(t->by_id, e->node.id, LD_DISCV5_NODE_ID_LEN);
  unindex_record(t, e);
  ip_adjust(t, &e->node.addr, -1);
  if (e->replacement)
    t->n_repl--;
  else
    t->n_members--;
  free(e);
}

static void unlink_at(entry_t **arr, uint8_t *n, int i) {
  memmove(&arr[i], &arr[i + 1], (size_t)(*n - i - 1) * sizeof arr[0]);
  (*n)--;
}

static int index_in(entry_t *const *arr, int n, const entry_t *e) {
  for (int i = 0; i < n; i++)
    if (arr[i] == e)
      return i;
  return -1;
}

/* A newer record of a known node: same place, new fields, `seen` kept. */
static int update_entry(ld_discv5_table_t *t, entry_t *e, const ld_discv5_node_t *n) {
  if (n->bootstrap)
    e->node.bootstrap = true;
  if (n->seq <= e->node.seq)
    return LD_DISCV5_EXISTING;
  bool ip_changed = e->node.addr.ip_len != n->addr.ip_len ||
                    memcmp(e->node.addr.ip, n->addr.ip, n->addr.ip_len) != 0;
  if (ip_changed && !ip_allowed(t, bucket_of(t, n->id, false), &n->addr, e))
    return LD_DISCV5_IP_LIMIT;
  bool seen = e->node.seen, bootstrap = e->node.bootstrap;
  ip_adjust(t, &e->node.addr, -1);
  unindex_record(t, e);
  e->node = *n;
  e->node.seen = seen;
  e->node.bootstrap = bootstrap;
  ip_adjust(t, &e->node.addr, 1);
  index_record(t, e);
  return LD_DISCV5_UPDATED;
}

static int add_replacement(ld_discv5_table_t *t, kbucket_t *b, const ld_discv5_node_t *n) {
  if (!ip_allowed(t, b, &n->addr, b->n_repl == LD_DISCV5_REPLACEMENTS ? b->repl[0] : NULL))
    return LD_DISCV5_IP_LIMIT;
  if (b->n_repl == LD_DISCV5_REPLACEMENTS) {
    entry_t *oldest = b->repl[0];
    unlink_at(b->repl, &b->n_repl, 0);
    drop_entry(t, oldest);
  } else if (t->n_members + t->n_repl >= t->cfg.max_nodes) {
    return LD_ERR_LIMIT;
  }
  entry_t *e = new_entry(t, n, true);
  if (e == NULL)
    return LD_ERR_NOMEM;
  b->repl[b->n_repl++] = e;
  return LD_DISCV5_REPLACEMENT;
}

int ld_discv5_table_add(ld_discv5_table_t *t, const ld_discv5_node_t *n) {
  if (memcmp(n->id, t->local, LD_DISCV5_NODE_ID_LEN) == 0)
    return LD_DISCV5_LOCAL;
  entry_t *e = ld_hashmap_get(t->by_id, n->id, LD_DISCV5_NODE_ID_LEN);
  if (e != NULL)
    return update_entry(t, e, n);
  kbucket_t *b = bucket_of(t, n->id, true);
  if (b == NULL)
    return LD_ERR_NOMEM;
  if (b->n == LD_DISCV5_BUCKET_SIZE)
    return add_replacement(t, b, n);
  if (!ip_allowed(t, b, &n->addr, NULL))
    return LD_DISCV5_IP_LIMIT;
  if (t->n_members + t->n_repl >= t->cfg.max_nodes)
    return LD_ERR_LIMIT;
  e = new_entry(t, n, false);
  if (e == NULL)
    return LD_ERR_NOMEM;
  b->nodes[b->n++] = e;
  return LD_DISCV5_ADDED;
}

const ld_discv5_node_t *ld_discv5_table_find_record(const ld_discv5_table_t *t, const uint8_t *raw,
                                                    size_t len) {
  entry_t *e = len > 0 ? ld_hashmap_get(t->by_record, raw, len) : NULL;
  return e != NULL ? &e->node : NULL;
}

static entry_t *member(ld_discv5_table_t *t, const uint8_t *id) {
  entry_t *e = ld_hashmap_get(t->by_id, id, LD_DISCV5_NODE_ID_LEN);
  return e != NULL && !e->replacement ? e : NULL;
}

ld_discv5_node_t *ld_discv5_table_get(ld_discv5_table_t *t,
                                      const uint8_t id[LD_DISCV5_NODE_ID_LEN]) {
  entry_t *e = member(t, id);
  return e != NULL ? &e->node : NULL;
}

void ld_discv5_table_set_seen(ld_discv5_table_t *t, const uint8_t id[LD_DISCV5_NODE_ID_LEN]) {
  entry_t *e = member(t, id);
  if (e == NULL)
    return;
  kbucket_t *b = bucket_of(t, id, false);
  int i = index_in(b->nodes, b->n, e);
  memmove(&b->nodes[1], &b->nodes[0], (size_t)i * sizeof b->nodes[0]);
  b->nodes[0] = e;
  e->node.seen = true;
}

bool ld_discv5_table_replace(ld_discv5_table_t *t, const uint8_t id[LD_DISCV5_NODE_ID_LEN]) {
  entry_t *e = member(t, id);
  if (e == NULL || e->node.bootstrap)
    return false;
  kbucket_t *b = bucket_of(t, id, false);
  unlink_at(b->nodes, &b->n, index_in(b->nodes, b->n, e));
  drop_entry(t, e);
  if (b->n_repl > 0) {
    entry_t *r = b->repl[--b->n_repl];
    r->replacement = false;
    t->n_repl--;
    t->n_members++;
    b->nodes[b->n++] = r;
  }
  return true;
}

int ld_discv5_table_remove(ld_discv5_table_t *t, const uint8_t id[LD_DISCV5_NODE_ID_LEN]) {
  entry_t *e = ld_hashmap_get(t->by_id, id, LD_DISCV5_NODE_ID_LEN);
  if (e == NULL)
    return LD_ERR_NOT_FOUND;
  kbucket_t *b = bucket_of(t, id, false);
  if (e->replacement)
    unlink_at(b->repl, &b->n_repl, index_in(b->repl, b->n_repl, e));
  else
    unlink_at(b->nodes, &b->n, index_in(b->nodes, b->n, e));
  drop_entry(t, e);
  return 0;
}

/* ---- queries -------------------------------------------------------------------------------- */

/* Calls fn on every member of every allocated (sub-)bucket until it returns false. */
static void walk(ld_discv5_table_t *t, bool (*fn)(entry_t *e, void *ud), void *ud) {
  for (int d = 0; d < LD_DISCV5_BUCKETS; d++) {
    if (t->buckets[d] == NULL)
      continue;
    size_t subs = (size_t)1 << t->extra_bits[d];
    for (size_t s = 0; s < subs; s++) {
      kbucket_t *b = &t->buckets[d][s];
      for (int i = 0; i < b->n; i++)
        if (!fn(b->nodes[i], ud))
          return;
    }
  }
}

typedef struct closest {
  const uint8_t *target;
  bool seen_only;
  size_t k, n;
  ld_discv5_node_t **out;
} closest_t;

static bool keep_closest(entry_t *e, void *ud) {
  closest_t *c = ud;
  if (c->seen_only && !e->node.seen)
    return true;
  size_t i = c->n;
  while (i > 0 && ld_discv5_distance_cmp(c->target, e->node.id, c->out[i - 1]->id) < 0)
    i--;
  if (i >= c->k)
    return true;
  size_t last = c->n < c->k ? c->n : c->k - 1;
  memmove(&c->out[i + 1], &c->out[i], (last - i) * sizeof c->out[0]);
  c->out[i] = &e->node;
  if (c->n < c->k)
    c->n++;
  return true;
}

size_t ld_discv5_table_neighbours(ld_discv5_table_t *t, const uint8_t target[LD_DISCV5_NODE_ID_LEN],
                                  size_t k, bool seen_only, ld_discv5_node_t **out) {
  closest_t c = {target, seen_only, k, 0, out};
  if (k > 0)
    walk(t, keep_closest, &c);
  return c.n;
}

size_t ld_discv5_table_at_distances(ld_discv5_table_t *t, const uint16_t *distances, size_t n,
                                    size_t k, bool seen_only, ld_discv5_node_t **out) {
  bool done[LD_DISCV5_BUCKETS + 1] = {false};
  size_t found = 0;
  for (size_t i = 0; i < n && found < k; i++) {
    uint16_t d = distances[i];
    if (d == 0 || d > LD_DISCV5_BUCKETS || done[d] || t->buckets[d - 1] == NULL)
      continue;
    done[d] = true;
    size_t subs = (size_t)1 << t->extra_bits[d - 1];
    for (size_t s = 0; s < subs && found < k; s++) {
      kbucket_t *b = &t->buckets[d - 1][s];
      for (int j = 0; j < b->n && found < k; j++)
        if (!seen_only || b->nodes[j]->node.seen)
          out[found++] = &b->nodes[j]->node;
    }
  }
  return found;
}

ld_discv5_node_t *ld_discv5_table_revalidation_pick(ld_discv5_table_t *t, uint64_t rnd) {
  size_t non_empty = 0;
  for (int pass = 0; pass < 2; pass++) {
    size_t seen = 0, pick = non_empty > 0 ? (size_t)(rnd % non_empty) : 0;
    for (int d = 0; d < LD_DISCV5_BUCKETS; d++) {
      if (t->buckets[d] == NULL)
        continue;
      size_t subs = (size_t)1 << t->extra_bits[d];
      for (size_t s = 0; s < subs; s++) {
        kbucket_t *b = &t->buckets[d][s];
        if (b->n == 0)
          continue;
        if (pass == 1 && seen == pick)
          return &b->nodes[b->n - 1]->node;
        seen++;
      }
    }
    non_empty = seen;
    if (non_empty == 0)
      return NULL;
  }
  return NULL;
}

typedef struct sample {
  uint64_t *rnd;
  ld_discv5_node_t **out;
  size_t max, seen, n;
} sample_t;

static uint64_t xorshift(uint64_t *s) {
  uint64_t x = *s ? *s : 0x9e3779b97f4a7c15u;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  *s = x;
  return x;
}

/* Reservoir sampling over the members. */
static bool sample_one(entry_t *e, void *ud) {
  sample_t *s = ud;
  s->seen++;
  if (s->n < s->max) {
    s->out[s->n++] = &e->node;
  } else {
    uint64_t j = xorshift(s->rnd) % s->seen;
    if (j < s->max)
      s->out[j] = &e->node;
  }
  return true;
}

size_t ld_discv5_table_random(ld_discv5_table_t *t, uint64_t *rnd, ld_discv5_node_t **out,
                              size_t max) {
  sample_t s = {rnd, out, max, 0, 0};
  if (max > 0)
    walk(t, sample_one, &s);
  return s.n;
}

size_t ld_discv5_table_size(const ld_discv5_table_t *t) {
  return t->n_members;
}

size_t ld_discv5_table_replacements(const ld_discv5_table_t *t) {
  return t->n_repl;
}

typedef struct visit {
  bool (*fn)(ld_discv5_node_t *n, void *ud);
  void *ud;
} visit_t;

static bool visit_one(entry_t *e, void *ud) {
  visit_t *v = ud;
  return v->fn(&e->node, v->ud);
}

void ld_discv5_table_foreach(ld_discv5_table_t *t, bool (*fn)(ld_discv5_node_t *n, void *ud),
                             void *ud) {
  visit_t v = {fn, ud};
  walk(t, visit_one, &v);
}
