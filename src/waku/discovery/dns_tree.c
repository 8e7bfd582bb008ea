#include "waku/discovery/dns_tree.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base32.h"
#include "base/base64.h"
#include "base/error.h"
#include "base/hashmap.h"
#include "crypto/keccak.h"

#define ROOT_PREFIX "enrtree-root:"
#define ROOT_V1 "enrtree-root:v1 "
#define BRANCH_PREFIX "enrtree-branch:"
#define ENR_PREFIX "enr:"
#define LINK_PREFIX "enrtree://"
#define PREFIX_LEN(p) (sizeof(p) - 1)

static bool has_prefix(const char *text, size_t len, const char *prefix, size_t plen) {
  return len >= plen && memcmp(text, prefix, plen) == 0;
}

/* ---- URLs ----------------------------------------------------------------------------------- */

static bool valid_domain(const char *d, size_t len) {
  if (len == 0 || len > LD_DNS_NAME_MAX || d[0] == '.' || d[len - 1] == '.')
    return false;
  for (size_t i = 0; i < len; i++) {
    char c = d[i];
    if (c == '.' && i + 1 < len && d[i + 1] == '.')
      return false;
    if (!isalnum((unsigned char)c) && c != '-' && c != '_' && c != '.')
      return false;
  }
  return true;
}

int ld_dns_url_parse(const char *text, size_t len, ld_dns_url_t *out) {
  if (text == NULL || out == NULL || !has_prefix(text, len, LINK_PREFIX, PREFIX_LEN(LINK_PREFIX)))
    return LD_ERR_DNS_BAD_URL;
  const char *key = text + PREFIX_LEN(LINK_PREFIX);
  const char *end = text + len;
  const char *at = memchr(key, '@', (size_t)(end - key));
  if (at == NULL)
    return LD_ERR_DNS_BAD_URL;
  size_t keylen = 0;
  uint8_t pub[LD_SECP256K1_PUBLIC_LEN + 1];
  if (ld_base32_decode(key, (size_t)(at - key), pub, sizeof pub, &keylen) != 0 ||
      keylen != LD_SECP256K1_PUBLIC_LEN || ld_secp256k1_compress(pub, keylen, out->key) != 0)
    return LD_ERR_DNS_BAD_URL;
  const char *domain = at + 1;
  size_t dlen = (size_t)(end - domain);
  if (!valid_domain(domain, dlen))
    return LD_ERR_DNS_BAD_URL;
  for (size_t i = 0; i < dlen; i++)
    out->domain[i] = (char)tolower((unsigned char)domain[i]);
  out->domain[dlen] = '\0';
  return 0;
}

int ld_dns_url_format(const ld_dns_url_t *url, char *out, size_t cap) {
  char key[LD_BASE32_ENCODED_LEN(LD_SECP256K1_PUBLIC_LEN) + 1];
  if (ld_base32_encode(url->key, sizeof url->key, key, sizeof key) < 0)
    return LD_ERR_LIMIT;
  for (char *p = key; *p != '\0'; p++)
    *p = (char)toupper((unsigned char)*p);
  int n = snprintf(out, cap, LINK_PREFIX "%s@%s", key, url->domain);
  return n < 0 || (size_t)n >= cap ? LD_ERR_LIMIT : n;
}

/* ---- entries -------------------------------------------------------------------------------- */

ld_dns_entry_kind_t ld_dns_entry_kind(const char *text, size_t len) {
  if (has_prefix(text, len, ROOT_PREFIX, PREFIX_LEN(ROOT_PREFIX)))
    return LD_DNS_ENTRY_ROOT;
  if (has_prefix(text, len, BRANCH_PREFIX, PREFIX_LEN(BRANCH_PREFIX)))
    return LD_DNS_ENTRY_BRANCH;
  if (has_prefix(text, len, ENR_PREFIX, PREFIX_LEN(ENR_PREFIX)))
    return LD_DNS_ENTRY_ENR;
  if (has_prefix(text, len, LINK_PREFIX, PREFIX_LEN(LINK_PREFIX)))
    return LD_DNS_ENTRY_LINK;
  return LD_DNS_ENTRY_UNKNOWN;
}

/* Decodes a label into its hash prefix; 0 or LD_ERR_DNS_BAD_ENTRY. */
static int decode_label(const char *label, size_t len, uint8_t out[LD_DNS_HASH_MAX_BYTES],
                        size_t *outlen) {
  if (len == 0 || len > LD_DNS_LABEL_MAX ||
      ld_base32_decode(label, len, out, LD_DNS_HASH_MAX_BYTES, outlen) != 0 ||
      *outlen < LD_DNS_HASH_MIN_BYTES)
    return LD_ERR_DNS_BAD_ENTRY;
  return 0;
}

static int copy_label(const char *text, size_t len, ld_dns_label_t *out) {
  uint8_t hash[LD_DNS_HASH_MAX_BYTES];
  size_t hlen = 0;
  if (decode_label(text, len, hash, &hlen) != 0)
    return LD_ERR_DNS_BAD_ENTRY;
  memcpy(out->text, text, len);
  out->text[len] = '\0';
  return 0;
}

bool ld_dns_hash_matches(const char *label, const char *text, size_t len) {
  uint8_t want[LD_DNS_HASH_MAX_BYTES], got[LD_KECCAK256_LEN];
  size_t wlen = 0;
  if (decode_label(label, strlen(label), want, &wlen) != 0)
    return false;
  ld_keccak256(text, len, got);
  return memcmp(want, got, wlen) == 0;
}

void ld_dns_hash_label(const char *text, size_t len, ld_dns_label_t *out) {
  uint8_t hash[LD_KECCAK256_LEN];
  ld_keccak256(text, len, hash);
  ld_base32_encode(hash, LD_DNS_HASH_BYTES, out->text, sizeof out->text);
  for (char *p = out->text; *p != '\0'; p++)
    *p = (char)toupper((unsigned char)*p);
}

/* Reads "<name>=<value>" ending at a space or the end; value bounds into val and vlen. */
static bool take_field(const char **p, const char *end, const char *name, const char **val,
                       size_t *vlen) {
  size_t nlen = strlen(name);
  if ((size_t)(end - *p) < nlen || memcmp(*p, name, nlen) != 0)
    return false;
  *val = *p + nlen;
  const char *stop = memchr(*val, ' ', (size_t)(end - *val));
  if (stop == NULL)
    stop = end;
  *vlen = (size_t)(stop - *val);
  *p = stop < end ? stop + 1 : end;
  return *vlen > 0;
}

static bool parse_seq(const char *s, size_t len, uint64_t *out) {
  uint64_t v = 0;
  if (len == 0 || len > 20 || (len > 1 && s[0] == '0'))
    return false;
  for (size_t i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9')
      return false;
    uint64_t d = (uint64_t)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10)
      return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

int ld_dns_root_parse(const char *text, size_t len, ld_dns_root_t *out) {
  if (text == NULL || out == NULL || !has_prefix(text, len, ROOT_V1, PREFIX_LEN(ROOT_V1)))
    return LD_ERR_DNS_BAD_ENTRY;
  const char *p = text + PREFIX_LEN(ROOT_V1), *end = text + len, *v = NULL, *sig_start = NULL;
  size_t vlen = 0, siglen = 0;
  if (!take_field(&p, end, "e=", &v, &vlen) || copy_label(v, vlen, &out->eroot) != 0)
    return LD_ERR_DNS_BAD_ENTRY;
  if (!take_field(&p, end, "l=", &v, &vlen) || copy_label(v, vlen, &out->lroot) != 0)
    return LD_ERR_DNS_BAD_ENTRY;
  if (!take_field(&p, end, "seq=", &v, &vlen) || !parse_seq(v, vlen, &out->seq))
    return LD_ERR_DNS_BAD_ENTRY;
  sig_start = p;
  if (!take_field(&p, end, "sig=", &v, &vlen) || p != end || v + vlen != end)
    return LD_ERR_DNS_BAD_ENTRY;
  if (ld_base64url_decode(v, vlen, out->sig, sizeof out->sig, &siglen) != 0 ||
      siglen != LD_DNS_ROOT_SIG_LEN)
    return LD_ERR_DNS_BAD_ENTRY;
  out->signed_len = (size_t)(sig_start - text) - 1; /* without the space before "sig=" */
  return 0;
}

int ld_dns_root_verify(const ld_dns_root_t *root, const char *text,
                       const uint8_t key[LD_SECP256K1_PUBLIC_LEN]) {
  uint8_t digest[LD_KECCAK256_LEN];
  ld_keccak256(text, root->signed_len, digest);
  return ld_secp256k1_verify_digest(key, LD_SECP256K1_PUBLIC_LEN, digest, root->sig);
}

int ld_dns_branch_parse(const char *text, size_t len, ld_dns_label_t *out, size_t max, size_t *n) {
  *n = 0;
  if (!has_prefix(text, len, BRANCH_PREFIX, PREFIX_LEN(BRANCH_PREFIX)))
    return LD_ERR_DNS_BAD_ENTRY;
  const char *p = text + PREFIX_LEN(BRANCH_PREFIX), *end = text + len;
  if (p == end)
    return 0;
  for (;;) {
    const char *comma = memchr(p, ',', (size_t)(end - p));
    const char *stop = comma != NULL ? comma : end;
    if (*n == max)
      return LD_ERR_DNS_TOO_WIDE;
    if (copy_label(p, (size_t)(stop - p), &out[*n]) != 0)
      return LD_ERR_DNS_BAD_ENTRY;
    (*n)++;
    if (comma == NULL)
      return 0;
    p = comma + 1;
  }
}

void ld_dns_limits_default(ld_dns_limits_t *l) {
  l->max_txt = LD_DNS_DEFAULT_MAX_TXT;
  l->max_branch = LD_DNS_DEFAULT_MAX_BRANCH;
  l->max_depth = LD_DNS_DEFAULT_MAX_DEPTH;
  l->max_entries = LD_DNS_DEFAULT_MAX_ENTRIES;
  l->max_trees = LD_DNS_DEFAULT_MAX_TREES;
}

/* ---- the walker ----------------------------------------------------------------------------- */

typedef enum job_kind { JOB_ROOT, JOB_ENR_TREE, JOB_LINK_TREE } job_kind_t;

typedef struct job {
  job_kind_t kind;
  size_t tree;  /* index in w->trees */
  size_t depth; /* 0 for a root, 1 for the subtree roots, … */
  ld_dns_label_t label;
  char name[LD_DNS_NAME_MAX + 1];
} job_t;

typedef struct job_list {
  job_t *items;
  size_t count, cap;
} job_list_t;

struct ld_dns_walker {
  ld_dns_limits_t limits;
  ld_dns_url_t *trees;
  size_t n_trees;
  job_list_t pending, inflight;
  ld_hashmap_t *seen; /* lower-case names queued so far (entries) and domains (trees) */
  size_t queued;      /* entries queued so far, roots included */
  ld_enr_t *enrs;
  size_t n_enrs, cap_enrs;
  ld_dns_walker_stats_t stats;
  int error;
  char reason[512];
  ld_dns_label_t branch_buf[]; /* limits.max_branch labels */
};

static int fail(ld_dns_walker_t *w, int err, const char *name, const char *what) {
  if (w->error == 0) {
    w->error = err;
    snprintf(w->reason, sizeof w->reason, "%.253s: %.200s", name, what);
  }
  return err;
}

static int push_job(job_list_t *l, const job_t *j) {
  if (l->count == l->cap) {
    size_t cap = l->cap == 0 ? 16 : l->cap * 2;
    job_t *items = realloc(l->items, cap * sizeof *items);
    if (items == NULL)
      return LD_ERR_NOMEM;
    l->items = items;
    l->cap = cap;
  }
  l->items[l->count++] = *j;
  return 0;
}

static void lower_copy(char *dst, const char *src, size_t cap) {
  size_t i = 0;
  for (; src[i] != '\0' && i + 1 < cap; i++)
    dst[i] = (char)tolower((unsigned char)src[i]);
  dst[i] = '\0';
}

/* Queues the lookup of `label` (or of the tree's root when kind is JOB_ROOT). */
static int queue(ld_dns_walker_t *w, job_kind_t kind, size_t tree, size_t depth,
                 const ld_dns_label_t *label, const char *from) {
  job_t j = {.kind = kind, .tree = tree, .depth = depth};
  const char *domain = w->trees[tree].domain;
  if (kind == JOB_ROOT) {
    snprintf(j.name, sizeof j.name, "%s", domain);
  } else {
    j.label = *label;
    if (strlen(label->text) + 1 + strlen(domain) > LD_DNS_NAME_MAX)
      return fail(w, LD_ERR_DNS_BAD_ENTRY, from, "subdomain name too long");
    char raw[LD_DNS_LABEL_MAX + 2 + LD_DNS_NAME_MAX];
    snprintf(raw, sizeof raw, "%s.%s", label->text, domain);
    lower_copy(j.name, raw, sizeof j.name);
  }
  if (depth > w->limits.max_depth)
    return fail(w, LD_ERR_DNS_TOO_DEEP, j.name, "deeper than the depth limit");
  if (kind != JOB_ROOT && ld_hashmap_contains(w->seen, j.name, strlen(j.name)))
    return fail(w, LD_ERR_DNS_LOOP, from, "refers to an entry already in the tree");
  if (w->queued >= w->limits.max_entries)
    return fail(w, LD_ERR_DNS_TOO_MANY, from, "more entries than the entry limit");
  if (ld_hashmap_put(w->seen, j.name, strlen(j.name), NULL, NULL) != 0 ||
      push_job(&w->pending, &j) != 0)
    return fail(w, LD_ERR_NOMEM, j.name, "out of memory");
  w->queued++;
  return 0;
}

ld_dns_walker_t *ld_dns_walker_new(const ld_dns_url_t *url, const ld_dns_limits_t *limits) {
  ld_dns_limits_t l;
  if (limits != NULL)
    l = *limits;
  else
    ld_dns_limits_default(&l);
  if (l.max_trees == 0)
    l.max_trees = 1;
  ld_dns_walker_t *w = calloc(1, sizeof *w + l.max_branch * sizeof(ld_dns_label_t));
  if (w == NULL)
    return NULL;
  w->limits = l;
  w->trees = calloc(l.max_trees, sizeof *w->trees);
  w->seen = ld_hashmap_new(64);
  if (w->trees == NULL || w->seen == NULL) {
    ld_dns_walker_free(w);
    return NULL;
  }
  w->trees[0] = *url;
  w->n_trees = 1;
  ld_hashmap_put(w->seen, url->domain, strlen(url->domain), NULL, NULL);
  if (queue(w, JOB_ROOT, 0, 0, NULL, url->domain) == LD_ERR_NOMEM) {
    ld_dns_walker_free(w);
    return NULL;
  }
  return w;
}

void ld_dns_walker_free(ld_dns_walker_t *w) {
  if (w == NULL)
    return;
  free(w->trees);
  free(w->pending.items);
  free(w->inflight.items);
  ld_hashmap_free(w->seen, NULL);
  free(w->enrs);
  free(w);
}

int ld_dns_walker_next(ld_dns_walker_t *w, char *name, size_t cap) {
  if (w->error != 0 || w->pending.count == 0)
    return 0;
  job_t j = w->pending.items[--w->pending.count];
  if (push_job(&w->inflight, &j) != 0) {
    fail(w, LD_ERR_NOMEM, j.name, "out of memory");
    return 0;
  }
  snprintf(name, cap, "%s", j.name);
  w->stats.queries++;
  return 1;
}

/* Removes the in-flight job asked under `name` into *out; false when there is none. */
static bool take_inflight(ld_dns_walker_t *w, const char *name, job_t *out) {
  char lower[LD_DNS_NAME_MAX + 1];
  lower_copy(lower, name, sizeof lower);
  size_t len = strlen(lower);
  if (len > 0 && lower[len - 1] == '.')
    lower[len - 1] = '\0';
  for (size_t i = 0; i < w->inflight.count; i++) {
    if (strcmp(w->inflight.items[i].name, lower) == 0) {
      *out = w->inflight.items[i];
      w->inflight.items[i] = w->inflight.items[--w->inflight.count];
      return true;
    }
  }
  return false;
}

static int on_root(ld_dns_walker_t *w, const job_t *j, const char *const *records,
                   const size_t *lens, size_t n) {
  int err = LD_ERR_DNS_NO_ROOT;
  const char *why = "no enrtree-root record";
  for (size_t i = 0; i < n; i++) {
    ld_dns_root_t root;
    if (ld_dns_entry_kind(records[i], lens[i]) != LD_DNS_ENTRY_ROOT)
      continue;
    if (lens[i] > w->limits.max_txt) {
      err = LD_ERR_DNS_TXT_TOO_LONG, why = "root record longer than the TXT limit";
      continue;
    }
    if (ld_dns_root_parse(records[i], lens[i], &root) != 0) {
      err = LD_ERR_DNS_BAD_ENTRY, why = "malformed enrtree-root record";
      continue;
    }
    if (ld_dns_root_verify(&root, records[i], w->trees[j->tree].key) != 0) {
      err = LD_ERR_BAD_SIGNATURE, why = "root signature does not match the URL's key";
      continue;
    }
    if (w->stats.trees == 0)
      w->stats.seq = root.seq;
    w->stats.trees++;
    int rc = queue(w, JOB_ENR_TREE, j->tree, 1, &root.eroot, j->name);
    if (rc == 0)
      rc = queue(w, JOB_LINK_TREE, j->tree, 1, &root.lroot, j->name);
    return rc;
  }
  return fail(w, err, j->name, why);
}

static int add_enr(ld_dns_walker_t *w, const job_t *j, const char *text, size_t len) {
  char buf[LD_ENR_TEXT_PARSE_MAX + 1];
  if (len >= sizeof buf)
    return fail(w, LD_ERR_DNS_BAD_ENTRY, j->name, "record text too long");
  memcpy(buf, text, len);
  buf[len] = '\0';
  if (w->n_enrs == w->cap_enrs) {
    size_t cap = w->cap_enrs == 0 ? 16 : w->cap_enrs * 2;
    ld_enr_t *enrs = realloc(w->enrs, cap * sizeof *enrs);
    if (enrs == NULL)
      return fail(w, LD_ERR_NOMEM, j->name, "out of memory");
    w->enrs = enrs;
    w->cap_enrs = cap;
  }
  int rc = ld_enr_parse_text(&w->enrs[w->n_enrs], buf);
  if (rc != 0) {
    char why[96];
    snprintf(why, sizeof why, "invalid record (%s)", ld_errname(rc));
    return fail(w, LD_ERR_DNS_BAD_ENTRY, j->name, why);
  }
  w->n_enrs++;
  w->stats.enrs++;
  return 0;
}

static int add_link(ld_dns_walker_t *w, const job_t *j, const char *text, size_t len) {
  ld_dns_url_t url;
  if (ld_dns_url_parse(text, len, &url) != 0)
    return fail(w, LD_ERR_DNS_BAD_ENTRY, j->name, "malformed enrtree:// link");
  if (ld_hashmap_contains(w->seen, url.domain, strlen(url.domain)) ||
      w->n_trees == w->limits.max_trees) {
    w->stats.links_skipped++; /* a tree already synced (a loop) or one tree too many */
    return 0;
  }
  w->trees[w->n_trees++] = url;
  if (ld_hashmap_put(w->seen, url.domain, strlen(url.domain), NULL, NULL) != 0)
    return fail(w, LD_ERR_NOMEM, j->name, "out of memory");
  return queue(w, JOB_ROOT, w->n_trees - 1, 0, NULL, j->name);
}

static int on_branch(ld_dns_walker_t *w, const job_t *j, const char *text, size_t len) {
  size_t n = 0;
  int rc = ld_dns_branch_parse(text, len, w->branch_buf, w->limits.max_branch, &n);
  if (rc == LD_ERR_DNS_TOO_WIDE)
    return fail(w, rc, j->name, "branch wider than the branch limit");
  if (rc != 0)
    return fail(w, rc, j->name, "malformed enrtree-branch entry");
  w->stats.branches++;
  for (size_t i = 0; i < n && rc == 0; i++)
    rc = queue(w, j->kind, j->tree, j->depth + 1, &w->branch_buf[i], j->name);
  return rc;
}

/* The record at a subtree position whose hash matches the label, or the reason there is none. */
static int pick_entry(ld_dns_walker_t *w, const job_t *j, const char *const *records,
                      const size_t *lens, size_t n, size_t *index) {
  int err = LD_ERR_DNS_BAD_ENTRY;
  const char *why = "no tree entry";
  for (size_t i = 0; i < n; i++) {
    if (ld_dns_entry_kind(records[i], lens[i]) == LD_DNS_ENTRY_UNKNOWN)
      continue;
    if (lens[i] > w->limits.max_txt) {
      err = LD_ERR_DNS_TXT_TOO_LONG, why = "entry longer than the TXT limit";
      continue;
    }
    if (!ld_dns_hash_matches(j->label.text, records[i], lens[i])) {
      if (err != LD_ERR_DNS_TXT_TOO_LONG)
        err = LD_ERR_DNS_HASH_MISMATCH, why = "entry does not match its hash";
      continue;
    }
    *index = i;
    return 0;
  }
  return fail(w, err, j->name, why);
}

static int on_entry(ld_dns_walker_t *w, const job_t *j, const char *const *records,
                    const size_t *lens, size_t n) {
  size_t i = 0;
  int rc = pick_entry(w, j, records, lens, n, &i);
  if (rc != 0)
    return rc;
  switch (ld_dns_entry_kind(records[i], lens[i])) {
  case LD_DNS_ENTRY_BRANCH:
    return on_branch(w, j, records[i], lens[i]);
  case LD_DNS_ENTRY_ENR:
    if (j->kind != JOB_ENR_TREE)
      return fail(w, LD_ERR_DNS_BAD_ENTRY, j->name, "record in the link subtree");
    return add_enr(w, j, records[i], lens[i]);
  case LD_DNS_ENTRY_LINK:
    if (j->kind != JOB_LINK_TREE)
      return fail(w, LD_ERR_DNS_BAD_ENTRY, j->name, "link in the record subtree");
    return add_link(w, j, records[i], lens[i]);
  default:
    return fail(w, LD_ERR_DNS_BAD_ENTRY, j->name, "root entry below a root");
  }
}

int ld_dns_walker_answer(ld_dns_walker_t *w, const char *name, const char *const *records,
                         const size_t *lens, size_t n) {
  job_t j;
  if (!take_inflight(w, name, &j))
    return LD_ERR_NOT_FOUND;
  if (w->error != 0)
    return 0;
  if (j.kind == JOB_ROOT)
    on_root(w, &j, records, lens, n);
  else
    on_entry(w, &j, records, lens, n);
  return 0;
}

int ld_dns_walker_fail(ld_dns_walker_t *w, const char *name, int err, const char *reason) {
  job_t j;
  if (!take_inflight(w, name, &j))
    return LD_ERR_NOT_FOUND;
  char why[160];
  snprintf(why, sizeof why, "lookup failed: %s", reason != NULL ? reason : ld_strerror(err));
  fail(w, LD_ERR_DNS_QUERY, j.name, why);
  return 0;
}

bool ld_dns_walker_done(const ld_dns_walker_t *w) {
  return w->error != 0 || (w->pending.count == 0 && w->inflight.count == 0);
}

int ld_dns_walker_error(const ld_dns_walker_t *w, const char **reason) {
  if (reason != NULL)
    *reason = w->error != 0 ? w->reason : "";
  return w->error;
}

size_t ld_dns_walker_enr_count(const ld_dns_walker_t *w) {
  return w->n_enrs;
}

const ld_enr_t *ld_dns_walker_enr(const ld_dns_walker_t *w, size_t i) {
  return i < w->n_enrs ? &w->enrs[i] : NULL;
}

void ld_dns_walker_get_stats(const ld_dns_walker_t *w, ld_dns_walker_stats_t *out) {
  *out = w->stats;
}
