/* DNS discovery (EIP-1459) for operators:
 *
 *   logosdelivery dns-tree --domain D --key HEX [--seq N] [--enr ENR]... [--enr-file F]
 *       [--link enrtree://…]... [--format zone|json|dnsmasq] [--ttl S]
 *     builds and signs the tree of the records and prints what a DNS operator publishes: zone
 *     file lines (the enrtree:// URL as a comment first), a JSON object, or dnsmasq txt-record
 *     lines.
 *
 *   logosdelivery dns-resolve <enrtree://…> [--dns-discovery-name-server IP[:PORT]]...
 *     syncs a tree as the node does and prints each record as a JSON line, then a summary line.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "base/error.h"
#include "base/hex.h"
#include "base/log.h"
#include "crypto/crypto.h"
#include "logosdelivery/app.h"
#include "logosdelivery/flags.h"
#include "waku/discovery/dns_resolver.h"
#include "waku/discovery/dns_tree.h"

/* A DNS character-string holds at most 255 bytes. */
#define TXT_CHUNK 255

typedef struct enr_list {
  ld_enr_t *items;
  size_t count, cap;
} enr_list_t;

static int add_enr_text(enr_list_t *l, const char *text) {
  if (l->count == l->cap) {
    size_t cap = l->cap == 0 ? 64 : l->cap * 2;
    ld_enr_t *items = realloc(l->items, cap * sizeof *items);
    if (items == NULL)
      return LD_ERR_NOMEM;
    l->items = items;
    l->cap = cap;
  }
  int rc = ld_enr_parse_text(&l->items[l->count], text);
  if (rc == 0)
    l->count++;
  return rc;
}

/* One record per line; blank lines and lines starting with '#' are skipped. */
static int read_enr_file(enr_list_t *l, const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    fprintf(stderr, "dns-tree: --enr-file %s: %s; check the path given to --enr-file\n", path,
            strerror(errno));
    return LD_ERR_IO;
  }
  char line[2048];
  unsigned lineno = 0;
  int rc = 0;
  while (rc == 0 && fgets(line, sizeof line, f) != NULL) {
    lineno++;
    line[strcspn(line, "\r\n")] = '\0';
    char *p = line + strspn(line, " \t");
    if (*p == '\0' || *p == '#')
      continue;
    rc = add_enr_text(l, p);
    if (rc != 0)
      fprintf(stderr,
              "dns-tree: %s:%u: not a valid record (%s); give one enr:… record per line ('#' "
              "starts a comment)\n",
              path, lineno, ld_errname(rc));
  }
  fclose(f);
  return rc;
}

/* "chunk" "chunk" …: the text as quoted character-strings of at most 255 bytes. */
static void print_quoted(const char *text, const char *sep) {
  size_t len = strlen(text);
  for (size_t off = 0; off < len || off == 0; off += TXT_CHUNK) {
    size_t n = len - off < TXT_CHUNK ? len - off : TXT_CHUNK;
    printf("%s\"%.*s\"", off > 0 ? sep : "", (int)n, text + off);
    if (len == 0)
      break;
  }
}

static void print_tree(const ld_dns_built_t *b, const char *domain, const char *format,
                       int64_t ttl) {
  if (strcmp(format, "json") == 0) {
    json_t *entries = json_array();
    for (size_t i = 0; i < b->count; i++) {
      char fqdn[LD_DNS_NAME_MAX + LD_DNS_LABEL_MAX + 2];
      if (i == 0)
        snprintf(fqdn, sizeof fqdn, "%s", domain);
      else
        snprintf(fqdn, sizeof fqdn, "%s.%s", b->entries[i].name, domain);
      json_array_append_new(entries, json_pack("{s:s,s:s,s:s}", "name", b->entries[i].name, "fqdn",
                                               fqdn, "text", b->entries[i].text));
    }
    json_t *obj = json_pack("{s:s,s:s,s:o}", "url", b->url, "domain", domain, "entries", entries);
    char *text = json_dumps(obj, JSON_COMPACT);
    printf("%s\n", text);
    free(text);
    json_decref(obj);
    return;
  }
  if (strcmp(format, "dnsmasq") == 0) {
    printf("# %s\n", b->url);
    for (size_t i = 0; i < b->count; i++) {
      if (i == 0)
        printf("txt-record=%s,", domain);
      else
        printf("txt-record=%s.%s,", b->entries[i].name, domain);
      print_quoted(b->entries[i].text, ",");
      printf("\n");
    }
    return;
  }
  printf("; %s\n", b->url);
  for (size_t i = 0; i < b->count; i++) {
    printf("%-26s %lld IN TXT ", b->entries[i].name, (long long)ttl);
    print_quoted(b->entries[i].text, " ");
    printf("\n");
  }
}

int ld_app_dns_tree(int argc, char **argv) {
  char domain[LD_FLAG_STRING_MAX] = "", key[LD_FLAG_STRING_MAX] = "", file[LD_FLAG_STRING_MAX] = "";
  char format[LD_FLAG_STRING_MAX] = "zone";
  int64_t seq = 1, ttl = 3600;
  ld_strlist_t enrs = {0}, links = {0};
  const ld_flag_t flags[] = {
      {"domain", LD_FLAG_STRING, domain, 0, 0, "the tree's domain (required)"},
      {"key", LD_FLAG_STRING, key, 0, 0, "secp256k1 secret that signs the root, 64 hex digits"},
      {"seq", LD_FLAG_INT, &seq, 0, INT64_MAX, "root sequence number (default 1)"},
      {"enr", LD_FLAG_LIST, &enrs, 0, 0, "a record to publish (repeatable)"},
      {"enr-file", LD_FLAG_STRING, file, 0, 0, "a file of records, one per line"},
      {"link", LD_FLAG_LIST, &links, 0, 0, "an enrtree:// URL to link to (repeatable)"},
      {"format", LD_FLAG_STRING, format, 0, 0, "zone (default), json or dnsmasq"},
      {"ttl", LD_FLAG_INT, &ttl, 0, 2147483647, "TTL of the zone file lines (default 3600)"},
  };
  size_t n_flags = sizeof flags / sizeof flags[0];
  ld_flags_result_t res;
  memset(&res, 0, sizeof res);
  enr_list_t list = {0};
  uint8_t secret[LD_SECP256K1_SECRET_LEN];
  size_t secret_len = 0;
  int code = LD_EXIT_USAGE;
  const char *hex = strncmp(key, "0x", 2) == 0 ? key + 2 : key;
  if (argc > 0 && strcmp(argv[0], "--help") == 0) {
    printf("usage: logosdelivery dns-tree --domain D --key HEX [flags]\n");
    ld_flags_print_help(flags, n_flags, stdout);
    code = LD_EXIT_OK;
    goto out;
  }
  if (ld_flags_parse(flags, n_flags, argc, argv, &res) != 0) {
    fprintf(stderr, "dns-tree: %s\n", res.error);
    goto out;
  }
  hex = strncmp(key, "0x", 2) == 0 ? key + 2 : key;
  if (domain[0] == '\0' || res.n_positional != 0 ||
      (strcmp(format, "zone") != 0 && strcmp(format, "json") != 0 &&
       strcmp(format, "dnsmasq") != 0)) {
    if (domain[0] == '\0')
      fprintf(stderr, "dns-tree: --domain is required; give the domain the tree is published "
                      "under, e.g. --domain nodes.example.org\n");
    else if (res.n_positional != 0)
      fprintf(stderr, "dns-tree: unexpected argument '%s'; records go in --enr or --enr-file\n",
              res.positional[0]);
    else
      fprintf(stderr, "dns-tree: --format '%s' is not known; write zone, json or dnsmasq\n",
              format);
    fprintf(stderr, "usage: logosdelivery dns-tree --domain D --key HEX [flags] (--help)\n");
    goto out;
  }
  if (ld_hex_decode(hex, strlen(hex), secret, sizeof secret, &secret_len) != 0 ||
      secret_len != sizeof secret || ld_secp256k1_secret_check(secret) != 0) {
    fprintf(stderr,
            "dns-tree: --key '%.12s%s' is not a secp256k1 secret of 64 hex digits; give "
            "the tree's signing key (e.g. from `openssl rand -hex 32`, kept for every "
            "later update)\n",
            key, strlen(key) > 12 ? "…" : "");
    goto out;
  }
  for (size_t i = 0; i < enrs.count; i++) {
    int rc = add_enr_text(&list, enrs.items[i]);
    if (rc != 0) {
      fprintf(stderr,
              "dns-tree: --enr %s: not a valid record (%s); give a node record as text, "
              "enr:…, as /debug/v1/info shows it (enrUri)\n",
              enrs.items[i], ld_errname(rc));
      goto out;
    }
  }
  if (file[0] != '\0' && read_enr_file(&list, file) != 0)
    goto out;
  ld_dns_built_t built;
  int rc = ld_dns_tree_build(list.items, list.count, (const char *const *)links.items, links.count,
                             domain, (uint64_t)seq, secret, &built);
  if (rc != 0) {
    fprintf(stderr,
            "dns-tree: cannot build the tree: %s (%s); check --domain and --link, and give "
            "fewer records when the tree is too large\n",
            ld_strerror(rc), ld_errname(rc));
    code = LD_CANARY_EXIT_OTHER;
    goto out;
  }
  print_tree(&built, built.url + strlen(built.url) - strlen(domain), format, ttl);
  ld_dns_built_clear(&built);
  code = LD_EXIT_OK;
out:
  ld_strlist_clear(&enrs);
  ld_strlist_clear(&links);
  free(list.items);
  return code;
}

/* ---- dns-resolve ---------------------------------------------------------------------------- */

typedef struct resolve_app {
  uint64_t started_ns;
  int code;
  const char *url;
} resolve_app_t;

/* What to do when syncing a tree ended with `err`. */
static const char *resolve_hint(int err) {
  switch (err) {
  case LD_ERR_DNS_QUERY:
    return "check that the domain exists and that the name server answers (dig TXT <domain>; "
           "--dns-discovery-name-server chooses the server)";
  case LD_ERR_DNS_NO_ROOT:
    return "publish the tree's enrtree-root TXT record at the domain (logosdelivery dns-tree)";
  case LD_ERR_BAD_SIGNATURE:
    return "the tree is signed by another key: check the key part of the enrtree:// URL, or "
           "republish the tree with the URL's key";
  case LD_ERR_DNS_BAD_URL:
    return "write enrtree://<public key>@<domain>, as dns-tree prints it";
  default:
    break;
  }
  return "the published tree is broken: build and publish it again with logosdelivery dns-tree";
}

static void on_resolved(void *arg, int err, const char *reason, const ld_enr_t *enrs, size_t n,
                        const ld_dns_walker_stats_t *stats) {
  resolve_app_t *app = arg;
  double ms = (double)(uv_hrtime() - app->started_ns) / 1e6;
  for (size_t i = 0; i < n; i++) {
    char text[LD_ENR_TEXT_MAX];
    ld_peerid_t peer;
    char peer_text[LD_PEERID_TEXT_MAX];
    ld_enr_to_text(&enrs[i], text, sizeof text);
    peer_text[0] = '\0';
    if (ld_enr_peer_id(&enrs[i], &peer) == 0)
      ld_peerid_to_text(&peer, peer_text, sizeof peer_text);
    json_t *obj = json_pack("{s:s,s:s}", "enr", text, "peerId", peer_text);
    char *line = json_dumps(obj, JSON_COMPACT);
    printf("%s\n", line);
    free(line);
    json_decref(obj);
  }
  json_t *done = json_pack("{s:s,s:i,s:f,s:I,s:i,s:i,s:i}", "event", "done", "count", (int)n, "ms",
                           ms, "seq", (json_int_t)stats->seq, "queries", (int)stats->queries,
                           "trees", (int)stats->trees, "linksSkipped", (int)stats->links_skipped);
  if (err != 0) {
    json_object_set_new(done, "error", json_string(ld_errname(err)));
    json_object_set_new(done, "reason", json_string(reason));
    fprintf(stderr, "dns-resolve: %s: %s (%s); %s\n", app->url, reason != NULL ? reason : "",
            ld_errname(err), resolve_hint(err));
  }
  char *line = json_dumps(done, JSON_COMPACT);
  printf("%s\n", line);
  fflush(stdout);
  free(line);
  json_decref(done);
  app->code = err == 0 ? LD_EXIT_OK : LD_CANARY_EXIT_OTHER;
}

int ld_app_dns_resolve(int argc, char **argv) {
  ld_strlist_t servers = {0};
  int64_t parallel = LD_DNS_DEFAULT_PARALLEL;
  const ld_flag_t flags[] = {
      {"dns-discovery-name-server", LD_FLAG_LIST, &servers, 0, 0,
       "DNS server, IP or IP:PORT (repeatable; default: the system's)"},
      {"parallel", LD_FLAG_INT, &parallel, 1, 256, "lookups in flight (default 16)"},
  };
  size_t n_flags = sizeof flags / sizeof flags[0];
  ld_flags_result_t res;
  memset(&res, 0, sizeof res);
  int code = LD_EXIT_USAGE;
  if (argc > 0 && strcmp(argv[0], "--help") == 0) {
    printf("usage: logosdelivery dns-resolve <enrtree://KEY@DOMAIN> [flags]\n");
    ld_flags_print_help(flags, n_flags, stdout);
    ld_strlist_clear(&servers);
    return LD_EXIT_OK;
  }
  if (ld_flags_parse(flags, n_flags, argc, argv, &res) != 0) {
    fprintf(stderr, "dns-resolve: %s\n", res.error);
  } else if (res.n_positional != 1) {
    fprintf(stderr,
            "dns-resolve: %s; give the tree's enrtree:// URL as the one argument\n"
            "usage: logosdelivery dns-resolve <enrtree://KEY@DOMAIN> [flags]\n",
            res.n_positional == 0 ? "no URL" : "more than one argument");
  } else {
    uv_loop_t loop;
    uv_loop_init(&loop);
    resolve_app_t app = {
        .started_ns = uv_hrtime(), .code = LD_CANARY_EXIT_OTHER, .url = res.positional[0]};
    int rc = ld_dns_discovery_start(&loop, res.positional[0], (const char *const *)servers.items,
                                    servers.count, NULL, (size_t)parallel, on_resolved, &app, NULL);
    if (rc != 0) {
      fprintf(stderr, "dns-resolve: '%s': %s (%s); %s\n", res.positional[0], ld_strerror(rc),
              ld_errname(rc), resolve_hint(rc));
      code = rc == LD_ERR_DNS_BAD_URL ? LD_EXIT_USAGE : LD_CANARY_EXIT_OTHER;
    } else {
      uv_run(&loop, UV_RUN_DEFAULT);
      code = app.code;
    }
    uv_loop_close(&loop);
  }
  ld_strlist_clear(&servers);
  return code;
}
