/* Fuzz target: DNS discovery TXT entries (EIP-1459). Each line of the input is an entry; every
 * line goes through the entry parsers, then a walker syncs the "zone" the lines make: the first
 * line is the root of fuzz.example.org and every line is also served under its own hash label, so
 * that mutated trees keep reaching branches, records and links. The tree key is the public key of
 * the secret 0x11…11 (the corpus's trees are signed with it). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "waku/discovery/dns_tree.h"

#define DOMAIN "fuzz.example.org"
#define MAX_LINES 256

typedef struct line {
  const char *text;
  size_t len;
  ld_dns_label_t label;
} line_t;

static void parse_entry(const char *text, size_t len) {
  ld_dns_root_t root;
  ld_dns_label_t labels[LD_DNS_DEFAULT_MAX_BRANCH];
  ld_dns_url_t url;
  size_t n = 0;
  ld_dns_entry_kind(text, len);
  if (ld_dns_root_parse(text, len, &root) == 0) {
    if (root.signed_len >= len)
      abort();
    ld_dns_root_verify(&root, text,
                       (const uint8_t *)"\x02"
                                        "0123456789abcdef0123456789abcdef");
  }
  if (ld_dns_branch_parse(text, len, labels, LD_DNS_DEFAULT_MAX_BRANCH, &n) == 0 &&
      n > LD_DNS_DEFAULT_MAX_BRANCH)
    abort();
  if (ld_dns_url_parse(text, len, &url) == 0) {
    char again[LD_DNS_URL_MAX + 1];
    if (ld_dns_url_format(&url, again, sizeof again) < 0)
      abort();
  }
  for (size_t i = 0; i < n; i++)
    ld_dns_hash_matches(labels[i].text, text, len);
}

static void walk(const line_t *lines, size_t n_lines) {
  static const uint8_t secret[32] = {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
                                     0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
                                     0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
                                     0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11};
  ld_dns_url_t url = {.domain = DOMAIN};
  if (ld_secp256k1_public(secret, url.key) != 0)
    abort();
  ld_dns_limits_t limits;
  ld_dns_limits_default(&limits);
  limits.max_entries = 512;
  ld_dns_walker_t *w = ld_dns_walker_new(&url, &limits);
  if (w == NULL)
    return;
  char name[LD_DNS_NAME_MAX + 1];
  size_t rounds = 0;
  while (!ld_dns_walker_done(w) && rounds++ < 4 * limits.max_entries) {
    if (ld_dns_walker_next(w, name, sizeof name) != 1)
      abort(); /* not done, nothing in flight: it must have a name to ask */
    const char *recs[MAX_LINES];
    size_t lens[MAX_LINES], n = 0;
    bool is_root = strcasecmp(name, DOMAIN) == 0;
    for (size_t i = 0; i < n_lines; i++) {
      char own[LD_DNS_LABEL_MAX + sizeof DOMAIN + 1];
      memcpy(own, lines[i].label.text, strlen(lines[i].label.text));
      own[strlen(lines[i].label.text)] = '.';
      strcpy(own + strlen(lines[i].label.text) + 1, DOMAIN);
      if ((is_root && i == 0) || strcasecmp(own, name) == 0) {
        recs[n] = lines[i].text;
        lens[n++] = lines[i].len;
      }
    }
    if (n == 0)
      ld_dns_walker_fail(w, name, LD_ERR_NOT_FOUND, "NXDOMAIN");
    else
      ld_dns_walker_answer(w, name, recs, lens, n);
  }
  if (!ld_dns_walker_done(w))
    abort(); /* the entry limit bounds every walk */
  for (size_t i = 0; i < ld_dns_walker_enr_count(w); i++)
    if (ld_dns_walker_enr(w, i) == NULL)
      abort();
  ld_dns_walker_free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  line_t lines[MAX_LINES];
  size_t n = 0;
  const char *p = (const char *)data, *end = p + size;
  while (p < end && n < MAX_LINES) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *stop = nl != NULL ? nl : end;
    lines[n].text = p;
    lines[n].len = (size_t)(stop - p);
    ld_dns_hash_label(p, lines[n].len, &lines[n].label);
    parse_entry(p, lines[n].len);
    n++;
    p = stop + 1;
  }
  walk(lines, n);
  return 0;
}
