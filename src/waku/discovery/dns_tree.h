/* DNS node discovery (EIP-1459): the tree's text entries and a sans-I/O walker that syncs a whole
 * tree. No sockets and no clock here: the walker names the TXT records it wants, the caller
 * resolves them (dns_resolver.h does it with c-ares on libuv) and hands the answers back.
 *
 * A tree is published under a domain:
 *   <domain>           enrtree-root:v1 e=<enr-root> l=<link-root> seq=<n> sig=<base64url r‖s‖v>
 *   <hash>.<domain>    enrtree-branch:<hash>,<hash>,…   an interior node
 *                      enr:<base64url RLP>              a record (in the e= subtree)
 *                      enrtree://<key>@<domain>         a link to another tree (in the l= subtree)
 * where <hash> is base32 (RFC 4648, no padding) of a prefix (12 to 32 bytes, 16 as published) of
 * keccak256 of the entry's text, and the root's signature is secp256k1 ECDSA over keccak256 of
 * the root text before " sig=", checked against the key of the enrtree:// URL.
 *
 * Every failure is a named error of base/error.h: DNS_BAD_URL, DNS_BAD_ENTRY, DNS_HASH_MISMATCH,
 * DNS_LOOP, DNS_TOO_DEEP, DNS_TOO_WIDE, DNS_TOO_MANY, DNS_TXT_TOO_LONG, DNS_NO_ROOT, DNS_QUERY,
 * BAD_SIGNATURE. Pure functions and caller-owned walkers; one thread at a time per walker. */
#ifndef LD_WAKU_DISCOVERY_DNS_TREE_H
#define LD_WAKU_DISCOVERY_DNS_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crypto/crypto.h"
#include "waku/enr/enr.h"

#define LD_DNS_NAME_MAX 253      /* a DNS name in text form, without the NUL */
#define LD_DNS_HASH_MIN_BYTES 12 /* shortest hash prefix a label may carry (as go-ethereum) */
#define LD_DNS_HASH_MAX_BYTES 32
#define LD_DNS_HASH_BYTES 16 /* what publishers use: 26 base32 characters */
#define LD_DNS_LABEL_MAX 52  /* base32 of 32 bytes */
#define LD_DNS_ROOT_SIG_LEN 65
/* "enrtree://" + base32 of the 33-byte key + "@" + domain. */
#define LD_DNS_URL_MAX (10 + 53 + 1 + LD_DNS_NAME_MAX)

/* Defaults of ld_dns_limits_t. An entry must fit a 512-byte UDP DNS answer; published branches
 * hold 13 hashes (go-ethereum's builder), so 32 leaves room; a 1,000-record tree is 3 levels
 * deep and has about 1,100 entries. */
#define LD_DNS_DEFAULT_MAX_TXT 512
#define LD_DNS_DEFAULT_MAX_BRANCH 32
#define LD_DNS_DEFAULT_MAX_DEPTH 16
#define LD_DNS_DEFAULT_MAX_ENTRIES 20000
#define LD_DNS_DEFAULT_MAX_TREES 4
/* Children a built branch holds: as many 26-character hashes and commas as fit 370 bytes. */
#define LD_DNS_BUILD_BRANCH_WIDTH 13

/* ---- URLs and entries ----------------------------------------------------------------------- */

typedef struct ld_dns_url {
  uint8_t key[LD_SECP256K1_PUBLIC_LEN]; /* compressed secp256k1 key that signs the root */
  char domain[LD_DNS_NAME_MAX + 1];     /* lower-case, without a trailing dot */
} ld_dns_url_t;

/* Parses "enrtree://<base32 key>@<domain>" (`len` bytes of `text`). The key must be a valid
 * compressed secp256k1 point; the domain 1..253 characters of letters, digits, '-', '_' and
 * dots, no empty label. LD_ERR_DNS_BAD_URL otherwise. */
int ld_dns_url_parse(const char *text, size_t len, ld_dns_url_t *out);

/* Writes the URL text and a NUL (cap ≥ LD_DNS_URL_MAX + 1 suffices). Returns its length or
 * LD_ERR_LIMIT. */
int ld_dns_url_format(const ld_dns_url_t *url, char *out, size_t cap);

typedef enum ld_dns_entry_kind {
  LD_DNS_ENTRY_UNKNOWN = 0,
  LD_DNS_ENTRY_ROOT,   /* "enrtree-root:" */
  LD_DNS_ENTRY_BRANCH, /* "enrtree-branch:" */
  LD_DNS_ENTRY_ENR,    /* "enr:" */
  LD_DNS_ENTRY_LINK,   /* "enrtree://" */
} ld_dns_entry_kind_t;

/* The kind of an entry from its prefix. */
ld_dns_entry_kind_t ld_dns_entry_kind(const char *text, size_t len);

/* A subdomain label: base32 text of a hash prefix. */
typedef struct ld_dns_label {
  char text[LD_DNS_LABEL_MAX + 1];
} ld_dns_label_t;

typedef struct ld_dns_root {
  ld_dns_label_t eroot, lroot;
  uint64_t seq;
  uint8_t sig[LD_DNS_ROOT_SIG_LEN];
  size_t signed_len; /* the signature covers text[0..signed_len) */
} ld_dns_root_t;

/* Parses "enrtree-root:v1 e=<label> l=<label> seq=<decimal> sig=<base64url 65 bytes>" exactly
 * (single spaces). LD_ERR_DNS_BAD_ENTRY otherwise. Does not check the signature. */
int ld_dns_root_parse(const char *text, size_t len, ld_dns_root_t *out);

/* Checks the root's signature (r ‖ s; v is not needed with the key known) over the signed part of
 * `text`, the text `root` was parsed from. 0, LD_ERR_BAD_SIGNATURE or LD_ERR_BAD_KEY. */
int ld_dns_root_verify(const ld_dns_root_t *root, const char *text,
                       const uint8_t key[LD_SECP256K1_PUBLIC_LEN]);

/* Parses "enrtree-branch:<label>,<label>,…" (no children is valid) into out[0..max) and stores
 * the count in *n. LD_ERR_DNS_BAD_ENTRY for an invalid label or an empty element,
 * LD_ERR_DNS_TOO_WIDE for more than `max` children. */
int ld_dns_branch_parse(const char *text, size_t len, ld_dns_label_t *out, size_t max, size_t *n);

/* True when `label` is base32 (either case, no padding) of 12..32 bytes that begin
 * keccak256(text[0..len)). */
bool ld_dns_hash_matches(const char *label, const char *text, size_t len);

/* The published label of an entry: base32 upper-case of the first 16 bytes of its keccak256. */
void ld_dns_hash_label(const char *text, size_t len, ld_dns_label_t *out);

/* ---- the walker ----------------------------------------------------------------------------- */

typedef struct ld_dns_limits {
  size_t max_txt;     /* longest entry text accepted (joined TXT strings) */
  size_t max_branch;  /* children of one branch */
  size_t max_depth;   /* branches between a root and a leaf, plus one */
  size_t max_entries; /* entries fetched and queued over all trees, roots included */
  size_t max_trees;   /* trees synced: the URL's and the ones its links lead to */
} ld_dns_limits_t;

/* Fills `l` with the LD_DNS_DEFAULT_* values. */
void ld_dns_limits_default(ld_dns_limits_t *l);

typedef struct ld_dns_walker ld_dns_walker_t;

typedef struct ld_dns_walker_stats {
  size_t queries;       /* names handed out */
  size_t branches;      /* branch entries read */
  size_t enrs;          /* records collected */
  size_t trees;         /* trees whose root verified */
  size_t links_skipped; /* links to a tree already synced (loops) or beyond max_trees */
  uint64_t seq;         /* the first tree's root seq */
} ld_dns_walker_stats_t;

/* A walker that syncs the tree of `url` and, through its links, up to limits->max_trees trees
 * (limits NULL: defaults). NULL when out of memory. Free with ld_dns_walker_free. */
ld_dns_walker_t *ld_dns_walker_new(const ld_dns_url_t *url, const ld_dns_limits_t *limits);
void ld_dns_walker_free(ld_dns_walker_t *w);

/* The next name to resolve (TXT), written with a NUL into name[0..cap) (cap > LD_DNS_NAME_MAX
 * suffices). Returns 1 when a name was written, 0 when nothing is to be asked now (all asked
 * names are awaiting answers, or the walk is over). The caller answers each name it gets exactly
 * once, with ld_dns_walker_answer or ld_dns_walker_fail, in any order. */
int ld_dns_walker_next(ld_dns_walker_t *w, char *name, size_t cap);

/* The TXT records found at `name` (each record's strings joined; records[i] is lens[i] bytes,
 * need not be NUL-terminated). Follows the entry: verifies the root or the entry's hash, queues
 * the children, collects a record. A tree error ends the walk (ld_dns_walker_done, then
 * ld_dns_walker_error). Returns 0, or LD_ERR_NOT_FOUND when `name` was not asked (ignored). */
int ld_dns_walker_answer(ld_dns_walker_t *w, const char *name, const char *const *records,
                         const size_t *lens, size_t n);

/* The lookup of `name` failed (`err`, `reason` may be NULL): the walk ends with
 * LD_ERR_DNS_QUERY. Returns 0 or LD_ERR_NOT_FOUND as ld_dns_walker_answer. */
int ld_dns_walker_fail(ld_dns_walker_t *w, const char *name, int err, const char *reason);

/* True when the walk is over: every entry read, or an error. */
bool ld_dns_walker_done(const ld_dns_walker_t *w);

/* 0 while running or after a complete walk; the error that ended it otherwise, with its reason
 * ("<name>: …") in *reason when reason is not NULL (valid until the walker is freed). */
int ld_dns_walker_error(const ld_dns_walker_t *w, const char **reason);

/* The records collected so far, in the order they were read (valid until the walker is freed). */
size_t ld_dns_walker_enr_count(const ld_dns_walker_t *w);
const ld_enr_t *ld_dns_walker_enr(const ld_dns_walker_t *w, size_t i);

void ld_dns_walker_get_stats(const ld_dns_walker_t *w, ld_dns_walker_stats_t *out);

/* ---- building a tree ------------------------------------------------------------------------ */

/* One TXT record of a built tree: `name` is the label relative to the tree's domain ("@" for the
 * root), `text` the entry. Heap strings owned by the ld_dns_built_t. */
typedef struct ld_dns_built_entry {
  char *name;
  char *text;
} ld_dns_built_entry_t;

typedef struct ld_dns_built {
  size_t count;
  ld_dns_built_entry_t *entries; /* the root first, then the e= subtree, then the l= subtree */
  char url[LD_DNS_URL_MAX + 1];
} ld_dns_built_t;

/* Builds and signs the tree of `enrs` (records, n_enrs ≥ 0) and `links` (enrtree:// URLs text,
 * n_links ≥ 0) for `domain` with root sequence number `seq`, as go-ethereum's builder does:
 * records sorted by node ID, branches of LD_DNS_BUILD_BRANCH_WIDTH children, the root signed with
 * `secret` (r ‖ s ‖ v). Duplicate records are published once. Errors: LD_ERR_DNS_BAD_URL (a link
 * or the domain), LD_ERR_BAD_KEY, LD_ERR_NOMEM; `out` is empty on failure. Free with
 * ld_dns_built_clear. */
int ld_dns_tree_build(const ld_enr_t *enrs, size_t n_enrs, const char *const *links, size_t n_links,
                      const char *domain, uint64_t seq,
                      const uint8_t secret[LD_SECP256K1_SECRET_LEN], ld_dns_built_t *out);
void ld_dns_built_clear(ld_dns_built_t *b);

#endif
