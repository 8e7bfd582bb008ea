/* DNS discovery (EIP-1459): time to sync a tree of 1,000 records (ld_dns_discovery_start: c-ares
 * on libuv, root signature, every entry's hash and record signature checked) from a local dnsmasq
 * on 127.0.0.1, with 1, 16 and 64 lookups in flight; also the time to build and sign the tree.
 *
 *   bench_dns_discovery [records (default 1000)] [runs per setting (default 5)]
 *
 * Needs dnsmasq (Debian's dnsmasq-base). Prints one line per setting: median and best time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "../tests/support/dnsmasq_child.h"
#include "base/error.h"
#include "p2p/key.h"
#include "waku/discovery/dns_resolver.h"

#define DOMAIN "bench.dnsdisc.test"

typedef struct run_state {
  int err;
  size_t n;
  size_t queries;
  bool done;
} run_state_t;

static void on_done(void *arg, int err, const char *reason, const ld_enr_t *enrs, size_t n,
                    const ld_dns_walker_stats_t *stats) {
  (void)enrs;
  run_state_t *s = arg;
  s->err = err;
  s->n = n;
  s->queries = stats->queries;
  s->done = true;
  if (err != 0)
    fprintf(stderr, "discovery failed: %s (%s)\n", ld_errname(err), reason);
}

static int by_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void make_records(ld_enr_t *out, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint8_t secret[32] = {1};
    secret[30] = (uint8_t)(i >> 8), secret[31] = (uint8_t)i;
    ld_privkey_t key;
    ld_enr_builder_t b;
    uint8_t ip[4] = {10, (uint8_t)(i >> 8), (uint8_t)i, 1};
    ld_privkey_from_secp256k1(&key, secret);
    ld_enr_builder_init(&b, 1);
    ld_enr_builder_set_ip4(&b, ip);
    ld_enr_builder_set_uint(&b, "tcp", 60000);
    ld_enr_builder_set_uint(&b, "udp", 9000);
    ld_enr_builder_set_waku2(&b, LD_ENR_RELAY | LD_ENR_STORE);
    uint16_t shards[] = {0, 1, 2, 3, 4, 5, 6, 7};
    ld_enr_builder_set_shards(&b, 1, shards, 8);
    if (ld_enr_builder_sign(&b, &key, &out[i]) != 0)
      abort();
  }
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? (size_t)atoi(argv[1]) : 1000;
  int runs = argc > 2 ? atoi(argv[2]) : 5;
  ld_enr_t *records = calloc(n, sizeof *records);
  make_records(records, n);

  uint8_t tree_key[32];
  memset(tree_key, 0x42, sizeof tree_key);
  ld_dns_built_t tree;
  uint64_t t0 = uv_hrtime();
  if (ld_dns_tree_build(records, n, NULL, 0, DOMAIN, 1, tree_key, &tree) != 0)
    return 1;
  double build_ms = (double)(uv_hrtime() - t0) / 1e6;
  printf("tree: %zu records, %zu TXT entries, built and signed in %.1f ms\n", n, tree.count,
         build_ms);

  const char *domains[] = {DOMAIN};
  dnsmasq_child_t dns;
  if (dnsmasq_start(&dns, &tree, domains, 1) != 0)
    return 1;
  const char *servers[] = {dns.server};
  const size_t parallel[] = {1, 16, 64};
  for (size_t p = 0; p < sizeof parallel / sizeof parallel[0]; p++) {
    double ms[64];
    int done = 0;
    size_t queries = 0;
    for (int r = 0; r < runs && r < 64; r++) {
      uv_loop_t loop;
      uv_loop_init(&loop);
      run_state_t s = {0};
      uint64_t start = uv_hrtime();
      if (ld_dns_discovery_start(&loop, tree.url, servers, 1, NULL, parallel[p], on_done, &s,
                                 NULL) != 0)
        return 1;
      uv_run(&loop, UV_RUN_DEFAULT);
      ms[done] = (double)(uv_hrtime() - start) / 1e6;
      uv_loop_close(&loop);
      if (!s.done || s.err != 0 || s.n != n) {
        fprintf(stderr, "run failed: %zu records\n", s.n);
        dnsmasq_stop(&dns);
        return 1;
      }
      queries = s.queries;
      done++;
    }
    qsort(ms, (size_t)done, sizeof ms[0], by_double);
    printf("sync %zu records (%zu lookups), %2zu in flight: median %.1f ms, best %.1f ms "
           "(%d runs)\n",
           n, queries, parallel[p], ms[done / 2], ms[0], done);
  }
  dnsmasq_stop(&dns);
  ld_dns_built_clear(&tree);
  free(records);
  return 0;
}
