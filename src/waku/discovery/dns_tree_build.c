/* Building and signing an EIP-1459 tree (dns_tree.h), the shape go-ethereum's builder gives it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "base/error.h"
#include "base/hashmap.h"
#include "crypto/keccak.h"
#include "waku/discovery/dns_tree.h"

typedef struct builder {
  ld_dns_built_t *out;
  size_t cap;
  ld_hashmap_t *names; /* labels already in out */
} builder_t;

/* Adds `text` (taken over) under its hash label, once. */
static int add_entry(builder_t *b, const char *name, char *text) {
  if (text == NULL)
    return LD_ERR_NOMEM;
  if (ld_hashmap_contains(b->names, name, strlen(name))) {
    free(text);
    return 0;
  }
  if (b->out->count == b->cap) {
    size_t cap = b->cap == 0 ? 64 : b->cap * 2;
    ld_dns_built_entry_t *e = realloc(b->out->entries, cap * sizeof *e);
    if (e == NULL) {
      free(text);
      return LD_ERR_NOMEM;
    }
    b->out->entries = e;
    b->cap = cap;
  }
  char *copy = strdup(name);
  if (copy == NULL || ld_hashmap_put(b->names, name, strlen(name), NULL, NULL) != 0) {
    free(copy);
    free(text);
    return LD_ERR_NOMEM;
  }
  b->out->entries[b->out->count++] = (ld_dns_built_entry_t){.name = copy, .text = text};
  return 0;
}

static int add_hashed(builder_t *b, char *text) {
  ld_dns_label_t label;
  ld_dns_hash_label(text, strlen(text), &label);
  return add_entry(b, label.text, text);
}

/* A branch over texts[0..n) (n ≤ the width), the children published; *out is the heap text. */
static int make_branch(builder_t *b, char **texts, size_t n, char **out) {
  size_t cap = sizeof "enrtree-branch:" + n * (LD_DNS_LABEL_MAX + 1);
  char *branch = malloc(cap);
  if (branch == NULL)
    return LD_ERR_NOMEM;
  size_t len = (size_t)snprintf(branch, cap, "enrtree-branch:");
  for (size_t i = 0; i < n; i++) {
    ld_dns_label_t label;
    ld_dns_hash_label(texts[i], strlen(texts[i]), &label);
    len += (size_t)snprintf(branch + len, cap - len, "%s%s", i > 0 ? "," : "", label.text);
    int rc = add_hashed(b, texts[i]);
    texts[i] = NULL;
    if (rc != 0) {
      free(branch);
      return rc;
    }
  }
  *out = branch;
  return 0;
}

/* go-ethereum's Tree.build: one entry stays itself, up to the width make one branch, more are cut
 * into branches of the width whose list is built again. Takes the texts over. */
static int build(builder_t *b, char **texts, size_t n, char **out) {
  if (n == 1) {
    *out = texts[0];
    texts[0] = NULL;
    return 0;
  }
  if (n <= LD_DNS_BUILD_BRANCH_WIDTH)
    return make_branch(b, texts, n, out);
  size_t n_sub = (n + LD_DNS_BUILD_BRANCH_WIDTH - 1) / LD_DNS_BUILD_BRANCH_WIDTH;
  char **subs = calloc(n_sub, sizeof *subs);
  if (subs == NULL)
    return LD_ERR_NOMEM;
  int rc = 0;
  for (size_t i = 0; i < n_sub && rc == 0; i++) {
    size_t start = i * LD_DNS_BUILD_BRANCH_WIDTH;
    size_t count = n - start < LD_DNS_BUILD_BRANCH_WIDTH ? n - start : LD_DNS_BUILD_BRANCH_WIDTH;
    rc = build(b, texts + start, count, &subs[i]);
  }
  if (rc == 0)
    rc = build(b, subs, n_sub, out);
  for (size_t i = 0; i < n_sub; i++)
    free(subs[i]);
  free(subs);
  return rc;
}

/* Builds the subtree of texts and publishes its top entry; its label goes to `label`. */
static int build_subtree(builder_t *b, char **texts, size_t n, ld_dns_label_t *label) {
  char *top = NULL;
  int rc = build(b, texts, n, &top);
  if (rc != 0)
    return rc;
  ld_dns_hash_label(top, strlen(top), label);
  return add_hashed(b, top);
}

typedef struct keyed_enr {
  uint8_t id[LD_ENR_NODE_ID_LEN];
  const ld_enr_t *enr;
} keyed_enr_t;

static int by_node_id(const void *a, const void *b) {
  return memcmp(((const keyed_enr_t *)a)->id, ((const keyed_enr_t *)b)->id, LD_ENR_NODE_ID_LEN);
}

/* The records' texts sorted by node ID, duplicates (same node ID and text) once. */
static int record_texts(const ld_enr_t *enrs, size_t n, char ***out, size_t *n_out) {
  keyed_enr_t *keyed = calloc(n + 1, sizeof *keyed);
  char **texts = calloc(n + 1, sizeof *texts);
  int rc = keyed == NULL || texts == NULL ? LD_ERR_NOMEM : 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    keyed[i].enr = &enrs[i];
    rc = ld_enr_node_id(&enrs[i], keyed[i].id);
  }
  if (rc == 0)
    qsort(keyed, n, sizeof *keyed, by_node_id);
  size_t count = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    char text[LD_ENR_TEXT_MAX];
    if (ld_enr_to_text(keyed[i].enr, text, sizeof text) < 0) {
      rc = LD_ERR_LIMIT;
      break;
    }
    if (count > 0 && strcmp(texts[count - 1], text) == 0)
      continue;
    texts[count] = strdup(text);
    rc = texts[count] == NULL ? LD_ERR_NOMEM : 0;
    count++;
  }
  free(keyed);
  if (rc != 0) {
    for (size_t i = 0; i < count; i++)
      free(texts[i]);
    free(texts);
    return rc;
  }
  *out = texts;
  *n_out = count;
  return 0;
}

static int link_texts(const char *const *links, size_t n, char ***out) {
  char **texts = calloc(n + 1, sizeof *texts);
  if (texts == NULL)
    return LD_ERR_NOMEM;
  for (size_t i = 0; i < n; i++) {
    ld_dns_url_t url;
    char text[LD_DNS_URL_MAX + 1];
    int rc = ld_dns_url_parse(links[i], strlen(links[i]), &url);
    if (rc == 0)
      rc = ld_dns_url_format(&url, text, sizeof text) < 0 ? LD_ERR_DNS_BAD_URL : 0;
    if (rc == 0 && (texts[i] = strdup(text)) == NULL)
      rc = LD_ERR_NOMEM;
    if (rc != 0) {
      for (size_t k = 0; k < i; k++)
        free(texts[k]);
      free(texts);
      return rc;
    }
  }
  *out = texts;
  return 0;
}

static int sign_root(const ld_dns_label_t *eroot, const ld_dns_label_t *lroot, uint64_t seq,
                     const uint8_t secret[LD_SECP256K1_SECRET_LEN], char **out) {
  char body[256], sig_text[LD_BASE64URL_ENCODED_LEN(LD_DNS_ROOT_SIG_LEN) + 1];
  uint8_t digest[LD_KECCAK256_LEN], sig[LD_DNS_ROOT_SIG_LEN];
  int len = snprintf(body, sizeof body, "enrtree-root:v1 e=%s l=%s seq=%llu", eroot->text,
                     lroot->text, (unsigned long long)seq);
  ld_keccak256(body, (size_t)len, digest);
  int rc = ld_secp256k1_sign_digest_recoverable(secret, digest, sig);
  if (rc != 0)
    return rc;
  ld_base64url_encode(sig, sizeof sig, sig_text, sizeof sig_text);
  size_t sig_len = strlen(sig_text);
  char *root = malloc((size_t)len + 5 + sig_len + 1);
  if (root == NULL)
    return LD_ERR_NOMEM;
  memcpy(root, body, (size_t)len);
  memcpy(root + len, " sig=", 5);
  memcpy(root + len + 5, sig_text, sig_len + 1);
  *out = root;
  return 0;
}

static void free_texts(char **texts, size_t n) {
  if (texts == NULL)
    return;
  for (size_t i = 0; i < n; i++)
    free(texts[i]);
  free(texts);
}

int ld_dns_tree_build(const ld_enr_t *enrs, size_t n_enrs, const char *const *links, size_t n_links,
                      const char *domain, uint64_t seq,
                      const uint8_t secret[LD_SECP256K1_SECRET_LEN], ld_dns_built_t *out) {
  memset(out, 0, sizeof *out);
  ld_dns_url_t url;
  int rc = ld_secp256k1_public(secret, url.key);
  if (rc != 0)
    return rc;
  /* The domain is checked (and lower-cased) by a round trip through the URL form. */
  char tmp[LD_DNS_URL_MAX + 1];
  if (strlen(domain) > LD_DNS_NAME_MAX)
    return LD_ERR_DNS_BAD_URL;
  snprintf(url.domain, sizeof url.domain, "%s", domain);
  if (ld_dns_url_format(&url, tmp, sizeof tmp) < 0 || ld_dns_url_parse(tmp, strlen(tmp), &url) != 0)
    return LD_ERR_DNS_BAD_URL;

  builder_t b = {.out = out, .names = ld_hashmap_new(2 * n_enrs + 16)};
  char **records = NULL, **link_list = NULL;
  size_t n_records = 0;
  ld_dns_label_t eroot, lroot;
  char *root = NULL;
  /* The root goes first: a slot kept for it. */
  rc = b.names == NULL ? LD_ERR_NOMEM : add_entry(&b, "@", strdup(""));
  if (rc == 0)
    rc = record_texts(enrs, n_enrs, &records, &n_records);
  if (rc == 0)
    rc = link_texts(links, n_links, &link_list);
  if (rc == 0)
    rc = build_subtree(&b, records, n_records, &eroot);
  if (rc == 0)
    rc = build_subtree(&b, link_list, n_links, &lroot);
  if (rc == 0)
    rc = sign_root(&eroot, &lroot, seq, secret, &root);
  if (rc == 0) {
    free(out->entries[0].text);
    out->entries[0].text = root;
    rc = ld_dns_url_format(&url, out->url, sizeof out->url) < 0 ? LD_ERR_LIMIT : 0;
  }
  free_texts(records, n_records);
  free_texts(link_list, n_links);
  ld_hashmap_free(b.names, NULL);
  if (rc != 0)
    ld_dns_built_clear(out);
  return rc;
}

void ld_dns_built_clear(ld_dns_built_t *b) {
  for (size_t i = 0; i < b->count; i++) {
    free(b->entries[i].name);
    free(b->entries[i].text);
  }
  free(b->entries);
  memset(b, 0, sizeof *b);
}
