/* EIP-1459 DNS trees: URLs, entries, the root signature against the EIP's example tree, the
 * walker on the example and on built trees served from an in-memory zone, and bad trees (loops,
 * huge branches, bad signatures, hash mismatches, depth and size limits). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "base/error.h"
#include "crypto/keccak.h"
#include "waku/discovery/dns_tree.h"

/* The EIP-1459 example tree (https://eips.ethereum.org/EIPS/eip-1459) under example.org. */
#define EX_DOMAIN "example.org"
static const char *const EX[][2] = {
    {EX_DOMAIN, "enrtree-root:v1 e=JWXYDBPXYWG6FX3GMDIBFA6CJ4 l=C7HRFPF3BLGF3YR4DY5KX3SMBE seq=1 "
                "sig=o908WmNp7LibOfPsr4btQwatZJ5URBr2ZAuxvK4UWHlsB9sUOTJQaGAlLPVAhM__"
                "XJesCHxLISo94z5Z2a463gA"},
    {"C7HRFPF3BLGF3YR4DY5KX3SMBE." EX_DOMAIN,
     "enrtree://AM5FCQLWIZX2QFPNJAP7VUERCCRNGRHWZG3YYHIUV7BVDQ5FDPRT2@morenodes.example.org"},
    {"JWXYDBPXYWG6FX3GMDIBFA6CJ4." EX_DOMAIN,
     "enrtree-branch:2XS2367YHAXJFGLZHVAWLQD4ZY,H4FHT4B454P6UXFD7JCYQ5PWDY,"
     "MHTDO6TMUBRIA2XWG5LUDACK24"},
    {"2XS2367YHAXJFGLZHVAWLQD4ZY." EX_DOMAIN,
     "enr:-"
     "HW4QOFzoVLaFJnNhbgMoDXPnOvcdVuj7pDpqRvh6BRDO68aVi5ZcjB3vzQRZH2IcLBGHzo8uUN3snqmgTiE56CH3AM"
     "BgmlkgnY0iXNlY3AyNTZrMaECC2_24YYkYHEgdzxlSNKQEnHhuNAbNlMlWJxrJxbAFvA"},
    {"H4FHT4B454P6UXFD7JCYQ5PWDY." EX_DOMAIN,
     "enr:-"
     "HW4QAggRauloj2SDLtIHN1XBkvhFZ1vtf1raYQp9TBW2RD5EEawDzbtSmlXUfnaHcvwOizhVYLtr7e6vw7NAf6mTuo"
     "CgmlkgnY0iXNlY3AyNTZrMaECjrXI8TLNXU0f8cthpAMxEshUyQlK-AM0PW2wfrnacNI"},
    {"MHTDO6TMUBRIA2XWG5LUDACK24." EX_DOMAIN,
     "enr:-HW4QLAYqmrwllBEnzWWs7I5Ev2IAs7x_dZlbYdRdMUx5EyKHDXp7AV5CkuPGUPdvbv1_"
     "Ms1CPfhcGCvSElSosZmyoq"
     "AgmlkgnY0iXNlY3AyNTZrMaECriawHKWdDRk2xeZkrOXBQ0dfMFLHY4eENZwdufn1S1o"},
};
/* The key that signed the example root (the EIP's example URL carries another key). */
#define EX_URL "enrtree://AKPYQIUQIL7PSIACI32J7FGZW56E5FKHEFCCOFHILBIMW3M6LWXS2@" EX_DOMAIN

/* ---- an in-memory zone ---------------------------------------------------------------------- */

#define ZONE_MAX 4096
typedef struct zone {
  size_t n;
  char *name[ZONE_MAX];
  char *text[ZONE_MAX];
} zone_t;

static void zone_add(zone_t *z, const char *name, const char *text) {
  assert_true(z->n < ZONE_MAX);
  z->name[z->n] = strdup(name);
  z->text[z->n] = strdup(text);
  z->n++;
}

static void zone_add_built(zone_t *z, const ld_dns_built_t *b, const char *domain) {
  for (size_t i = 0; i < b->count; i++) {
    char name[LD_DNS_NAME_MAX + 1];
    if (strcmp(b->entries[i].name, "@") == 0)
      snprintf(name, sizeof name, "%s", domain);
    else
      snprintf(name, sizeof name, "%s.%s", b->entries[i].name, domain);
    zone_add(z, name, b->entries[i].text);
  }
}

static void zone_clear(zone_t *z) {
  for (size_t i = 0; i < z->n; i++) {
    free(z->name[i]);
    free(z->text[i]);
  }
  z->n = 0;
}

/* Answers every name the walker asks from the zone (names are case-insensitive; a missing name
 * fails as NXDOMAIN would) until it is done. Returns the walker's error. */
static int walk(ld_dns_walker_t *w, const zone_t *z) {
  char name[LD_DNS_NAME_MAX + 1];
  while (!ld_dns_walker_done(w)) {
    assert_int_equal(ld_dns_walker_next(w, name, sizeof name), 1);
    const char *recs[ZONE_MAX];
    size_t lens[ZONE_MAX], n = 0;
    for (size_t i = 0; i < z->n; i++) {
      if (strcasecmp(z->name[i], name) == 0) {
        recs[n] = z->text[i];
        lens[n++] = strlen(z->text[i]);
      }
    }
    if (n == 0)
      assert_int_equal(ld_dns_walker_fail(w, name, LD_ERR_NOT_FOUND, "NXDOMAIN"), 0);
    else
      assert_int_equal(ld_dns_walker_answer(w, name, recs, lens, n), 0);
  }
  return ld_dns_walker_error(w, NULL);
}

static zone_t g_zone;

static void example_zone(zone_t *z) {
  for (size_t i = 0; i < sizeof EX / sizeof EX[0]; i++)
    zone_add(z, EX[i][0], EX[i][1]);
}

static ld_dns_url_t url_of(const char *text) {
  ld_dns_url_t url;
  assert_int_equal(ld_dns_url_parse(text, strlen(text), &url), 0);
  return url;
}

/* ---- test records --------------------------------------------------------------------------- */

static uint8_t g_secret[32], g_other[32];
static ld_enr_t g_enrs[200];

static void make_enr(ld_enr_t *out, uint32_t i) {
  uint8_t secret[32] = {0};
  secret[0] = 1;
  secret[28] = (uint8_t)(i >> 24), secret[29] = (uint8_t)(i >> 16);
  secret[30] = (uint8_t)(i >> 8), secret[31] = (uint8_t)(i + 1);
  ld_privkey_t key;
  assert_int_equal(ld_privkey_from_secp256k1(&key, secret), 0);
  ld_enr_builder_t b;
  ld_enr_builder_init(&b, 1);
  uint8_t ip[4] = {127, 0, 0, 1};
  assert_int_equal(ld_enr_builder_set_ip4(&b, ip), 0);
  assert_int_equal(ld_enr_builder_set_uint(&b, "tcp", 60000 + (i % 5000)), 0);
  assert_int_equal(ld_enr_builder_set_waku2(&b, LD_ENR_RELAY), 0);
  assert_int_equal(ld_enr_builder_sign(&b, &key, out), 0);
}

static int setup(void **state) {
  (void)state;
  memset(g_secret, 0x11, sizeof g_secret);
  memset(g_other, 0x22, sizeof g_other);
  for (uint32_t i = 0; i < 200; i++)
    make_enr(&g_enrs[i], i);
  return 0;
}

static int teardown_each(void **state) {
  (void)state;
  zone_clear(&g_zone);
  return 0;
}

/* ---- URLs and entries ----------------------------------------------------------------------- */

static void urls(void **state) {
  (void)state;
  const char *status =
      "enrtree://"
      "AMOJVZX4V6EXP7NTJPMAYJYST2QP6AJXYW76IU6VGJS7UVSNDYZG4@boot.prod.status.nodes.status.im";
  ld_dns_url_t url = url_of(status);
  assert_string_equal(url.domain, "boot.prod.status.nodes.status.im");
  char text[LD_DNS_URL_MAX + 1];
  assert_int_equal(ld_dns_url_format(&url, text, sizeof text), (int)strlen(status));
  assert_string_equal(text, status);
  /* Upper-case domains are lower-cased. */
  url = url_of("enrtree://AKPYQIUQIL7PSIACI32J7FGZW56E5FKHEFCCOFHILBIMW3M6LWXS2@Example.ORG");
  assert_string_equal(url.domain, "example.org");

  const char *bad[] = {
      "",
      "enrtree:/AKPYQIUQIL7PSIACI32J7FGZW56E5FKHEFCCOFHILBIMW3M6LWXS2@example.org",
      "enrtree://AKPYQIUQIL7PSIACI32J7FGZW56E5FKHEFCCOFHILBIMW3M6LWXS2",
      "enrtree://AKPYQIUQIL7PSIACI32J7FGZW56E5FKHEFCCOFHILBIMW3M6LWXS2@",
      "enrtree://AKPYQIUQIL7PSIACI32J7FGZW56E5FKHEFCCOFHILBIMW3M6LWXS@example.org", /* 32 bytes */
      "enrtree://AKPYQIUQIL7PSIACI32J7FGZW56E5FKHEFCCOFHILBIMW3M6LWXS2@exa..mple.org",
      "enrtree://AKPYQIUQIL7PSIACI32J7FGZW56E5FKHEFCCOFHILBIMW3M6LWXS2@example.org.",
      "enrtree://AKPYQIUQIL7PSIACI32J7FGZW56E5FKHEFCCOFHILBIMW3M6LWXS2@exa mple.org",
      "enrtree://AKPYQIUQIL7PSIACI32J7FGZW56E5FKHEFCCOFHILBIMW3M6LWXS1@example.org", /* bits */
      "enrtree://1KPYQIUQIL7PSIACI32J7FGZW56E5FKHEFCCOFHILBIMW3M6LWXS2@example.org",
      /* base32 of 33 bytes that are not a compressed point (prefix 0x05) */
      "enrtree://AUAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQC@example.org",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ld_dns_url_t u;
    assert_int_equal(ld_dns_url_parse(bad[i], strlen(bad[i]), &u), LD_ERR_DNS_BAD_URL);
  }
}

static void example_hashes(void **state) {
  (void)state;
  for (size_t i = 1; i < sizeof EX / sizeof EX[0]; i++) {
    char label[64];
    snprintf(label, sizeof label, "%.*s", (int)(strchr(EX[i][0], '.') - EX[i][0]), EX[i][0]);
    assert_true(ld_dns_hash_matches(label, EX[i][1], strlen(EX[i][1])));
    ld_dns_label_t computed;
    ld_dns_hash_label(EX[i][1], strlen(EX[i][1]), &computed);
    assert_string_equal(computed.text, label);
    /* lower-case labels are the same hash; a changed text is not */
    for (char *p = label; *p; p++)
      *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
    assert_true(ld_dns_hash_matches(label, EX[i][1], strlen(EX[i][1])));
    assert_false(ld_dns_hash_matches(label, EX[i][1], strlen(EX[i][1]) - 1));
  }
  assert_int_equal(ld_dns_entry_kind(EX[0][1], strlen(EX[0][1])), LD_DNS_ENTRY_ROOT);
  assert_int_equal(ld_dns_entry_kind(EX[1][1], strlen(EX[1][1])), LD_DNS_ENTRY_LINK);
  assert_int_equal(ld_dns_entry_kind(EX[2][1], strlen(EX[2][1])), LD_DNS_ENTRY_BRANCH);
  assert_int_equal(ld_dns_entry_kind(EX[3][1], strlen(EX[3][1])), LD_DNS_ENTRY_ENR);
  assert_int_equal(ld_dns_entry_kind("v=spf1 -all", 11), LD_DNS_ENTRY_UNKNOWN);
}

static void example_root_signature(void **state) {
  (void)state;
  const char *text = EX[0][1];
  ld_dns_root_t root;
  assert_int_equal(ld_dns_root_parse(text, strlen(text), &root), 0);
  assert_string_equal(root.eroot.text, "JWXYDBPXYWG6FX3GMDIBFA6CJ4");
  assert_string_equal(root.lroot.text, "C7HRFPF3BLGF3YR4DY5KX3SMBE");
  assert_int_equal(root.seq, 1);
  assert_int_equal(root.sig[64], 0);
  assert_int_equal(
      root.signed_len,
      strlen("enrtree-root:v1 e=JWXYDBPXYWG6FX3GMDIBFA6CJ4 l=C7HRFPF3BLGF3YR4DY5KX3SMBE "
             "seq=1"));
  ld_dns_url_t signer = url_of(EX_URL);
  assert_int_equal(ld_dns_root_verify(&root, text, signer.key), 0);
  /* The key of the EIP's own example URL did not sign it. */
  ld_dns_url_t eip = url_of(
      "enrtree://AM5FCQLWIZX2QFPNJAP7VUERCCRNGRHWZG3YYHIUV7BVDQ5FDPRT2@morenodes.example.org");
  assert_int_equal(ld_dns_root_verify(&root, text, eip.key), LD_ERR_BAD_SIGNATURE);
  /* A changed seq no longer verifies. */
  char changed[512];
  snprintf(changed, sizeof changed, "%s", text);
  strstr(changed, "seq=1")[4] = '2';
  assert_int_equal(ld_dns_root_parse(changed, strlen(changed), &root), 0);
  assert_int_equal(root.seq, 2);
  assert_int_equal(ld_dns_root_verify(&root, changed, signer.key), LD_ERR_BAD_SIGNATURE);

  const char *bad[] = {
      "enrtree-root:v2 e=JWXYDBPXYWG6FX3GMDIBFA6CJ4 l=C7HRFPF3BLGF3YR4DY5KX3SMBE seq=1 sig=AA",
      "enrtree-root:v1 l=C7HRFPF3BLGF3YR4DY5KX3SMBE e=JWXYDBPXYWG6FX3GMDIBFA6CJ4 seq=1 sig=AA",
      "enrtree-root:v1 e=JWXYDBPXYWG6FX3GMDIBFA6CJ4 l=C7HRFPF3BLGF3YR4DY5KX3SMBE seq=x sig=AA",
      "enrtree-root:v1 e=JWXYDBPXYWG6FX3GMDIBFA6CJ4 l=C7HRFPF3BLGF3YR4DY5KX3SMBE seq=1 sig=AA",
      "enrtree-root:v1 e=JW! l=C7HRFPF3BLGF3YR4DY5KX3SMBE seq=1 sig=AA",
      ("enrtree-root:v1 e=JWXYDBPXYWG6FX3GMDIBFA6CJ4 l=C7HRFPF3BLGF3YR4DY5KX3SMBE "
       "seq=99999999999999999999 sig=AA"),
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(ld_dns_root_parse(bad[i], strlen(bad[i]), &root), LD_ERR_DNS_BAD_ENTRY);
  /* a trailing field after sig= */
  snprintf(changed, sizeof changed, "%s x=1", text);
  assert_int_equal(ld_dns_root_parse(changed, strlen(changed), &root), LD_ERR_DNS_BAD_ENTRY);
}

static void branches(void **state) {
  (void)state;
  ld_dns_label_t labels[4];
  size_t n = 99;
  assert_int_equal(ld_dns_branch_parse("enrtree-branch:", 15, labels, 4, &n), 0);
  assert_int_equal(n, 0);
  const char *two = "enrtree-branch:2XS2367YHAXJFGLZHVAWLQD4ZY,H4FHT4B454P6UXFD7JCYQ5PWDY";
  assert_int_equal(ld_dns_branch_parse(two, strlen(two), labels, 4, &n), 0);
  assert_int_equal(n, 2);
  assert_string_equal(labels[1].text, "H4FHT4B454P6UXFD7JCYQ5PWDY");
  assert_int_equal(ld_dns_branch_parse(two, strlen(two), labels, 1, &n), LD_ERR_DNS_TOO_WIDE);
  const char *bad[] = {
      "enrtree-branch:2XS2367YHAXJFGLZHVAWLQD4ZY,",
      "enrtree-branch:,2XS2367YHAXJFGLZHVAWLQD4ZY",
      "enrtree-branch:2XS2367YHAXJFGLZHVAWLQD4ZY,,H4FHT4B454P6UXFD7JCYQ5PWDY",
      "enrtree-branch:2XS2367YHAX",                  /* shorter than 12 bytes */
      "enrtree-branch:2XS2367YHAXJFGLZHVAWLQD4Z!",   /* not base32 */
      "enrtree-branch:2XS2367YHAXJFGLZHVAWLQD4ZY 1", /* a space */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(ld_dns_branch_parse(bad[i], strlen(bad[i]), labels, 4, &n),
                     LD_ERR_DNS_BAD_ENTRY);
}

/* ---- the walker on the EIP example ---------------------------------------------------------- */

static void example_walk(void **state) {
  (void)state;
  example_zone(&g_zone);
  ld_dns_url_t url = url_of(EX_URL);
  ld_dns_limits_t limits;
  ld_dns_limits_default(&limits);
  limits.max_trees = 1; /* morenodes.example.org is not in the zone */
  ld_dns_walker_t *w = ld_dns_walker_new(&url, &limits);
  assert_non_null(w);
  assert_int_equal(walk(w, &g_zone), 0);
  assert_int_equal(ld_dns_walker_enr_count(w), 3);
  ld_dns_walker_stats_t st;
  ld_dns_walker_get_stats(w, &st);
  assert_int_equal(st.seq, 1);
  assert_int_equal(st.trees, 1);
  assert_int_equal(st.branches, 1);
  assert_int_equal(st.links_skipped, 1);
  assert_int_equal(st.queries, 6);
  /* the three leaves, each once */
  for (size_t k = 3; k < 6; k++) {
    ld_enr_t want;
    assert_int_equal(ld_enr_parse_text(&want, EX[k][1]), 0);
    size_t found = 0;
    for (size_t i = 0; i < 3; i++)
      found += ld_dns_walker_enr(w, i)->len == want.len &&
               memcmp(ld_dns_walker_enr(w, i)->raw, want.raw, want.len) == 0;
    assert_int_equal(found, 1);
  }
  ld_dns_walker_free(w);

  /* Following the link asks morenodes.example.org, which does not exist: a named failure. */
  w = ld_dns_walker_new(&url, NULL);
  assert_int_equal(walk(w, &g_zone), LD_ERR_DNS_QUERY);
  const char *reason = NULL;
  ld_dns_walker_error(w, &reason);
  assert_non_null(strstr(reason, "morenodes.example.org"));
  ld_dns_walker_free(w);

  /* The same tree checked against the EIP URL's key: the root does not verify. */
  ld_dns_url_t eip =
      url_of("enrtree://AM5FCQLWIZX2QFPNJAP7VUERCCRNGRHWZG3YYHIUV7BVDQ5FDPRT2@" EX_DOMAIN);
  w = ld_dns_walker_new(&eip, NULL);
  assert_int_equal(walk(w, &g_zone), LD_ERR_BAD_SIGNATURE);
  assert_int_equal(ld_dns_walker_enr_count(w), 0);
  ld_dns_walker_free(w);
}

/* An entry served under the wrong label, and a root among unrelated TXT records. */
static void example_tampered(void **state) {
  (void)state;
  ld_dns_url_t url = url_of(EX_URL);
  ld_dns_limits_t limits;
  ld_dns_limits_default(&limits);
  limits.max_trees = 1;
  zone_add(&g_zone, EX_DOMAIN, "v=spf1 -all");
  for (size_t i = 0; i < sizeof EX / sizeof EX[0]; i++)
    zone_add(&g_zone, EX[i][0], i == 4 ? EX[5][1] : EX[i][1]);
  ld_dns_walker_t *w = ld_dns_walker_new(&url, &limits);
  assert_int_equal(walk(w, &g_zone), LD_ERR_DNS_HASH_MISMATCH);
  const char *reason = NULL;
  ld_dns_walker_error(w, &reason);
  assert_non_null(strstr(reason, "h4fht4b454p6uxfd7jcyq5pwdy.example.org"));
  ld_dns_walker_free(w);
  zone_clear(&g_zone);

  /* no root at all */
  zone_add(&g_zone, EX_DOMAIN, "v=spf1 -all");
  w = ld_dns_walker_new(&url, &limits);
  assert_int_equal(walk(w, &g_zone), LD_ERR_DNS_NO_ROOT);
  ld_dns_walker_free(w);
}

/* ---- built trees ---------------------------------------------------------------------------- */

static ld_dns_url_t build_into(zone_t *z, const ld_enr_t *enrs, size_t n, const char *const *links,
                               size_t n_links, const char *domain, const uint8_t *secret) {
  ld_dns_built_t b;
  assert_int_equal(ld_dns_tree_build(enrs, n, links, n_links, domain, 7, secret, &b), 0);
  zone_add_built(z, &b, domain);
  ld_dns_url_t url = url_of(b.url);
  ld_dns_built_clear(&b);
  return url;
}

static void built_round_trip(void **state) {
  (void)state;
  ld_dns_built_t b;
  assert_int_equal(ld_dns_tree_build(g_enrs, 200, NULL, 0, "nodes.example.org", 42, g_secret, &b),
                   0);
  assert_string_equal(b.entries[0].name, "@");
  /* every entry under its hash, fits a UDP answer, branches of at most 13 */
  for (size_t i = 1; i < b.count; i++) {
    const char *t = b.entries[i].text;
    assert_true(ld_dns_hash_matches(b.entries[i].name, t, strlen(t)));
    assert_true(strlen(t) <= LD_DNS_DEFAULT_MAX_TXT);
    if (ld_dns_entry_kind(t, strlen(t)) == LD_DNS_ENTRY_BRANCH) {
      ld_dns_label_t labels[LD_DNS_BUILD_BRANCH_WIDTH];
      size_t n = 0;
      assert_int_equal(ld_dns_branch_parse(t, strlen(t), labels, LD_DNS_BUILD_BRANCH_WIDTH, &n), 0);
    }
  }
  /* 200 records + ceil(200/13)=16 branches + 2 over them + 1 top + the empty link branch */
  assert_int_equal(b.count, 1 + 200 + 16 + 2 + 1 + 1);
  ld_dns_root_t root;
  assert_int_equal(ld_dns_root_parse(b.entries[0].text, strlen(b.entries[0].text), &root), 0);
  assert_int_equal(root.seq, 42);
  ld_dns_url_t url = url_of(b.url);
  assert_int_equal(ld_dns_root_verify(&root, b.entries[0].text, url.key), 0);
  /* the recovery ID is right: v selects the signer's key */
  assert_true(root.sig[64] == 0 || root.sig[64] == 1);
  zone_add_built(&g_zone, &b, "nodes.example.org");
  ld_dns_built_clear(&b);

  ld_dns_walker_t *w = ld_dns_walker_new(&url, NULL);
  assert_int_equal(walk(w, &g_zone), 0);
  assert_int_equal(ld_dns_walker_enr_count(w), 200);
  for (size_t k = 0; k < 200; k++) {
    size_t found = 0;
    for (size_t i = 0; i < 200; i++)
      found += memcmp(ld_dns_walker_enr(w, i)->raw, g_enrs[k].raw, g_enrs[k].len) == 0;
    assert_int_equal(found, 1);
  }
  ld_dns_walker_stats_t st;
  ld_dns_walker_get_stats(w, &st);
  assert_int_equal(st.seq, 42);
  assert_int_equal(st.branches, 16 + 2 + 1 + 1);
  ld_dns_walker_free(w);
}

/* Two trees that link to each other: both are synced once, the loop is not followed. */
static void link_loop(void **state) {
  (void)state;
  uint8_t pub_a[33], pub_b[33];
  assert_int_equal(ld_secp256k1_public(g_secret, pub_a), 0);
  assert_int_equal(ld_secp256k1_public(g_other, pub_b), 0);
  ld_dns_url_t a = {0}, b = {0};
  memcpy(a.key, pub_a, 33), memcpy(b.key, pub_b, 33);
  strcpy(a.domain, "a.example.org"), strcpy(b.domain, "b.example.org");
  char url_a[LD_DNS_URL_MAX + 1], url_b[LD_DNS_URL_MAX + 1];
  ld_dns_url_format(&a, url_a, sizeof url_a);
  ld_dns_url_format(&b, url_b, sizeof url_b);
  const char *to_b[] = {url_b}, *to_a[] = {url_a};
  build_into(&g_zone, g_enrs, 5, to_b, 1, "a.example.org", g_secret);
  build_into(&g_zone, g_enrs + 5, 7, to_a, 1, "b.example.org", g_other);
  ld_dns_walker_t *w = ld_dns_walker_new(&a, NULL);
  assert_int_equal(walk(w, &g_zone), 0);
  assert_int_equal(ld_dns_walker_enr_count(w), 12);
  ld_dns_walker_stats_t st;
  ld_dns_walker_get_stats(w, &st);
  assert_int_equal(st.trees, 2);
  assert_int_equal(st.links_skipped, 1);
  ld_dns_walker_free(w);

  /* b's root signed by a's key: b's URL (in a's link) does not verify it */
  zone_clear(&g_zone);
  build_into(&g_zone, g_enrs, 5, to_b, 1, "a.example.org", g_secret);
  build_into(&g_zone, g_enrs + 5, 7, NULL, 0, "b.example.org", g_secret);
  w = ld_dns_walker_new(&a, NULL);
  assert_int_equal(walk(w, &g_zone), LD_ERR_BAD_SIGNATURE);
  const char *reason = NULL;
  ld_dns_walker_error(w, &reason);
  assert_non_null(strstr(reason, "b.example.org"));
  ld_dns_walker_free(w);
}

/* Publishes a hand-made branch (its text) and returns its label. */
static ld_dns_label_t put(zone_t *z, const char *domain, const char *text) {
  ld_dns_label_t l;
  ld_dns_hash_label(text, strlen(text), &l);
  char name[LD_DNS_NAME_MAX + 1];
  snprintf(name, sizeof name, "%s.%s", l.text, domain);
  zone_add(z, name, text);
  return l;
}

/* A signed root over the given e= and l= labels. */
static ld_dns_url_t put_root(zone_t *z, const char *domain, const ld_dns_label_t *e,
                             const ld_dns_label_t *l, const uint8_t *secret) {
  char body[256], text[512], sig_text[100];
  uint8_t digest[32], sig[65];
  snprintf(body, sizeof body, "enrtree-root:v1 e=%s l=%s seq=3", e->text, l->text);
  ld_keccak256(body, strlen(body), digest);
  assert_int_equal(ld_secp256k1_sign_digest_recoverable(secret, digest, sig), 0);
  ld_base64url_encode(sig, 65, sig_text, sizeof sig_text);
  snprintf(text, sizeof text, "%s sig=%s", body, sig_text);
  zone_add(z, domain, text);
  ld_dns_url_t url = {0};
  assert_int_equal(ld_secp256k1_public(secret, url.key), 0);
  snprintf(url.domain, sizeof url.domain, "%s", domain);
  return url;
}

static int walk_with(const zone_t *z, const ld_dns_url_t *url, const ld_dns_limits_t *limits,
                     size_t *enrs) {
  ld_dns_walker_t *w = ld_dns_walker_new(url, limits);
  assert_non_null(w);
  int rc = walk(w, z);
  if (enrs != NULL)
    *enrs = ld_dns_walker_enr_count(w);
  ld_dns_walker_free(w);
  return rc;
}

static void enr_text(const ld_enr_t *e, char *out) {
  assert_true(ld_enr_to_text(e, out, LD_ENR_TEXT_MAX) > 0);
}

static void bad_trees(void **state) {
  (void)state;
  const char *d = "bad.example.org";
  char t0[LD_ENR_TEXT_MAX], t1[LD_ENR_TEXT_MAX];
  enr_text(&g_enrs[0], t0);
  enr_text(&g_enrs[1], t1);
  ld_dns_label_t empty = put(&g_zone, d, "enrtree-branch:");
  ld_dns_label_t l0 = put(&g_zone, d, t0);
  put(&g_zone, d, t1);
  char text[8192];

  /* a branch naming the same child twice: a loop */
  snprintf(text, sizeof text, "enrtree-branch:%s,%s", l0.text, l0.text);
  ld_dns_label_t twice = put(&g_zone, d, text);
  ld_dns_url_t url = put_root(&g_zone, d, &twice, &empty, g_secret);
  assert_int_equal(walk_with(&g_zone, &url, NULL, NULL), LD_ERR_DNS_LOOP);
  zone_clear(&g_zone);

  /* a branch under itself one level down: the second visit is a loop */
  empty = put(&g_zone, d, "enrtree-branch:");
  l0 = put(&g_zone, d, t0);
  snprintf(text, sizeof text, "enrtree-branch:%s", l0.text);
  ld_dns_label_t inner = put(&g_zone, d, text);
  snprintf(text, sizeof text, "enrtree-branch:%s,%s", inner.text, l0.text);
  ld_dns_label_t outer = put(&g_zone, d, text);
  url = put_root(&g_zone, d, &outer, &empty, g_secret);
  assert_int_equal(walk_with(&g_zone, &url, NULL, NULL), LD_ERR_DNS_LOOP);
  zone_clear(&g_zone);

  /* a huge branch: 40 children (1,000+ bytes) */
  empty = put(&g_zone, d, "enrtree-branch:");
  size_t len = (size_t)snprintf(text, sizeof text, "enrtree-branch:");
  for (int i = 0; i < 40; i++) {
    char t[LD_ENR_TEXT_MAX];
    enr_text(&g_enrs[i], t);
    ld_dns_label_t l = put(&g_zone, d, t);
    len += (size_t)snprintf(text + len, sizeof text - len, "%s%s", i ? "," : "", l.text);
  }
  ld_dns_label_t huge = put(&g_zone, d, text);
  url = put_root(&g_zone, d, &huge, &empty, g_secret);
  assert_int_equal(walk_with(&g_zone, &url, NULL, NULL), LD_ERR_DNS_TXT_TOO_LONG);
  ld_dns_limits_t limits;
  ld_dns_limits_default(&limits);
  limits.max_txt = sizeof text;
  assert_int_equal(walk_with(&g_zone, &url, &limits, NULL), LD_ERR_DNS_TOO_WIDE);
  limits.max_branch = 40;
  size_t n = 0;
  assert_int_equal(walk_with(&g_zone, &url, &limits, &n), 0);
  assert_int_equal(n, 40);
  /* the entry limit: 40 records + 2 branches + the root do not fit 30 */
  limits.max_entries = 30;
  assert_int_equal(walk_with(&g_zone, &url, &limits, &n), LD_ERR_DNS_TOO_MANY);
  assert_true(n < 30);
  zone_clear(&g_zone);

  /* a chain of 20 branches: deeper than 16 */
  empty = put(&g_zone, d, "enrtree-branch:");
  ld_dns_label_t top = put(&g_zone, d, t0);
  for (int i = 0; i < 20; i++) {
    snprintf(text, sizeof text, "enrtree-branch:%s", top.text);
    top = put(&g_zone, d, text);
  }
  url = put_root(&g_zone, d, &top, &empty, g_secret);
  assert_int_equal(walk_with(&g_zone, &url, NULL, NULL), LD_ERR_DNS_TOO_DEEP);
  ld_dns_limits_default(&limits);
  limits.max_depth = 21;
  assert_int_equal(walk_with(&g_zone, &url, &limits, &n), 0);
  assert_int_equal(n, 1);
  zone_clear(&g_zone);

  /* a record in the link subtree, and a link in the record subtree */
  l0 = put(&g_zone, d, t0);
  url = put_root(&g_zone, d, &l0, &l0, g_secret);
  assert_int_equal(walk_with(&g_zone, &url, NULL, NULL), LD_ERR_DNS_LOOP);
  zone_clear(&g_zone);
  l0 = put(&g_zone, d, t0);
  ld_dns_label_t l1 = put(&g_zone, d, t1);
  url = put_root(&g_zone, d, &l0, &l1, g_secret);
  assert_int_equal(walk_with(&g_zone, &url, NULL, NULL), LD_ERR_DNS_BAD_ENTRY);
  zone_clear(&g_zone);
  empty = put(&g_zone, d, "enrtree-branch:");
  ld_dns_label_t link = put(&g_zone, d, EX[1][1]);
  url = put_root(&g_zone, d, &link, &empty, g_secret);
  assert_int_equal(walk_with(&g_zone, &url, NULL, NULL), LD_ERR_DNS_BAD_ENTRY);
  zone_clear(&g_zone);

  /* an invalid record (its signature broken) under its own hash */
  char broken[LD_ENR_TEXT_MAX];
  snprintf(broken, sizeof broken, "%s", t0);
  broken[10] = broken[10] == 'A' ? 'B' : 'A';
  empty = put(&g_zone, d, "enrtree-branch:");
  ld_dns_label_t lb = put(&g_zone, d, broken);
  url = put_root(&g_zone, d, &lb, &empty, g_secret);
  assert_int_equal(walk_with(&g_zone, &url, NULL, NULL), LD_ERR_DNS_BAD_ENTRY);
  zone_clear(&g_zone);

  /* a root whose signature is by another key */
  empty = put(&g_zone, d, "enrtree-branch:");
  l0 = put(&g_zone, d, t0);
  url = put_root(&g_zone, d, &l0, &empty, g_other);
  uint8_t pub[33];
  ld_secp256k1_public(g_secret, pub);
  memcpy(url.key, pub, 33);
  assert_int_equal(walk_with(&g_zone, &url, NULL, NULL), LD_ERR_BAD_SIGNATURE);
}

/* The walker hands out several names before any answer, accepts answers in any order and
 * ignores names it did not ask. */
static void concurrent_answers(void **state) {
  (void)state;
  ld_dns_url_t url = build_into(&g_zone, g_enrs, 30, NULL, 0, "c.example.org", g_secret);
  ld_dns_walker_t *w = ld_dns_walker_new(&url, NULL);
  char names[64][LD_DNS_NAME_MAX + 1];
  size_t asked = 0;
  const char *rec = "x";
  size_t one = 1;
  assert_int_equal(ld_dns_walker_answer(w, "nope.c.example.org", &rec, &one, 1), LD_ERR_NOT_FOUND);
  while (!ld_dns_walker_done(w)) {
    while (asked < 64 && ld_dns_walker_next(w, names[asked], sizeof names[0]) == 1)
      asked++;
    assert_true(asked > 0);
    /* answer the oldest first (the walker asks depth-first from its queue's end) */
    const char *name = names[0];
    const char *recs[4];
    size_t lens[4], n = 0;
    for (size_t i = 0; i < g_zone.n; i++)
      if (strcasecmp(g_zone.name[i], name) == 0)
        recs[n] = g_zone.text[i], lens[n++] = strlen(g_zone.text[i]);
    assert_int_equal(ld_dns_walker_answer(w, name, recs, lens, n), 0);
    memmove(names[0], names[1], (asked - 1) * sizeof names[0]);
    asked--;
  }
  assert_int_equal(ld_dns_walker_error(w, NULL), 0);
  assert_int_equal(ld_dns_walker_enr_count(w), 30);
  ld_dns_walker_free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(urls, teardown_each),
      cmocka_unit_test_teardown(example_hashes, teardown_each),
      cmocka_unit_test_teardown(example_root_signature, teardown_each),
      cmocka_unit_test_teardown(branches, teardown_each),
      cmocka_unit_test_teardown(example_walk, teardown_each),
      cmocka_unit_test_teardown(example_tampered, teardown_each),
      cmocka_unit_test_teardown(built_round_trip, teardown_each),
      cmocka_unit_test_teardown(link_loop, teardown_each),
      cmocka_unit_test_teardown(bad_trees, teardown_each),
      cmocka_unit_test_teardown(concurrent_answers, teardown_each),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
