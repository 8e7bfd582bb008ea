/* Store-sync engine figures: one reconciliation session between two in-memory item sets (the
 * B+tree of src/waku/sync/tree.h), both sides in this process, frames handed over in memory.
 * Prints, per case and policy pairing: frames, round trips (replies the initiator waits for),
 * bytes on the wire (frame bodies and their length prefixes; no yamux/Noise overhead), CPU ms
 * spent in each side's engine calls (thread CPU time), and the differences found; first the item
 * set at ten million items: insert rate, memory per item, range queries, prune, one session.
 * Never fails on a time.
 *
 *   bench_sync [--items N] [--diffs D] [--big N] [--grid] [--skip-big]
 *   bench_sync --routine N [--routine-diffs D]
 *
 * --routine: only the routine of a store node at N items (default D 10): both sets built in time
 * order (wall time, memory per item from the trees' count and from the RSS growth), then one
 * session of this engine's policy and one of nwaku's on both sides (round trips, bytes, CPU per
 * side, wall time), and the differences found.
 *
 * Items: N timestamps spread evenly over nwaku's default window (one hour ending 20 s before
 * "now"), random 32-byte hashes. A difference is an item one side lacks; half of them are
 * missing on each side. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_clock.h"

#include "base/buf.h"
#include "base/error.h"
#include "waku/sync/session.h"
#include "waku/sync/tree.h"

#define SEC 1000000000ll
static const int64_t NOW = 1750000000000000000ll;

static uint64_t g_rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

static double cpu_ms(void) {
  return bench_clock_ms(CLOCK_THREAD_CPUTIME_ID);
}

/* ---- the two sets -----------------------------------------------------------------------------
 */

typedef struct pair {
  ld_sync_tree_t *a, *b;
  uint64_t n, diffs;
} pair_t;

static ld_sync_id_t make_item(uint64_t i, uint64_t n) {
  ld_sync_id_t id;
  int64_t start = NOW - 20 * SEC - 3600 * SEC;
  id.time = start + 1 + (int64_t)((__int128)i * (3600 * SEC - 2) / (__int128)n);
  for (int k = 0; k < 4; k++) {
    uint64_t w = rnd();
    memcpy(id.hash + 8 * k, &w, 8);
  }
  return id;
}

/* n items, `diffs` of them missing from one side (alternately a and b), spread evenly. */
static void pair_build(pair_t *p, uint64_t n, uint64_t diffs) {
  p->n = n;
  p->diffs = diffs;
  if (ld_sync_tree_new(&p->a) != 0 || ld_sync_tree_new(&p->b) != 0)
    exit(1);
  uint64_t step = diffs > 0 ? n / diffs : n + 1, k = 0;
  for (uint64_t i = 0; i < n; i++) {
    ld_sync_id_t id = make_item(i, n);
    bool missing = diffs > 0 && i % step == step / 2 && k < diffs;
    bool from_a = missing && k % 2 == 0;
    bool from_b = missing && k % 2 == 1;
    k += missing;
    if (!from_a && ld_sync_tree_insert(p->a, &id) != 0)
      exit(1);
    if (!from_b && ld_sync_tree_insert(p->b, &id) != 0)
      exit(1);
  }
}

static void pair_free(pair_t *p) {
  ld_sync_tree_free(p->a);
  ld_sync_tree_free(p->b);
}

/* ---- one session ------------------------------------------------------------------------------
 */

typedef struct config {
  bool nwaku;
  uint32_t partitions, threshold; /* 0: the policy's own */
  bool uncapped;
} config_t;

typedef struct result {
  int rc;
  size_t frames, round_trips;
  uint64_t bytes;
  double cpu_a, cpu_b;
  size_t found;
  bool complete;
} result_t;

/* nwaku reads reconciliation frames without a cap: a pairing of two nwaku policies runs with one
 * far above what it sends, so that it shows what nwaku itself does. */
#define UNCAPPED (1024u * 1024 * 1024)

static void configure(ld_sync_session_config_t *cfg, ld_sync_tree_t *t, const config_t *c) {
  ld_sync_session_config_init(cfg, ld_sync_tree_set(t), NOW);
  if (c->nwaku)
    ld_sync_session_config_nwaku(cfg);
  if (c->uncapped) {
    cfg->limits.max_payload = UNCAPPED;
    cfg->limits.max_items = UNCAPPED / LD_SYNC_MIN_ITEM_WIRE_LEN;
    cfg->limits.max_ranges = UNCAPPED / 2;
    cfg->max_diffs = UNCAPPED;
  }
  if (c->partitions > 0)
    cfg->policy.partitions = c->partitions;
  if (c->threshold > 0)
    cfg->policy.item_set_threshold = c->threshold;
}

static result_t run(pair_t *p, const config_t *ca, const config_t *cb) {
  result_t res = {0};
  ld_sync_session_config_t cfg_a, cfg_b;
  configure(&cfg_a, p->a, ca);
  configure(&cfg_b, p->b, cb);
  ld_sync_session_t a, b;
  if (ld_sync_session_init(&a, &cfg_a, true) != 0 || ld_sync_session_init(&b, &cfg_b, false) != 0)
    exit(1);
  ld_buf_t frame, reply;
  ld_buf_init(&frame);
  ld_buf_init(&reply);
  double t0 = cpu_ms();
  res.rc = ld_sync_session_start(&a, &frame);
  res.cpu_a += cpu_ms() - t0;
  ld_sync_session_t *to = &b, *from = &a;
  while (res.rc == 0) {
    bool more;
    ld_buf_reset(&reply);
    t0 = cpu_ms();
    res.rc = ld_sync_session_receive(to, frame.data, frame.len, &reply, &more);
    *(to == &a ? &res.cpu_a : &res.cpu_b) += cpu_ms() - t0;
    if (res.rc != 0 || !more)
      break;
    ld_buf_t t = frame;
    frame = reply;
    reply = t;
    ld_sync_session_t *s = to;
    to = from;
    from = s;
  }
  res.frames = a.frames_out + b.frames_out;
  res.round_trips = a.frames_in;
  res.bytes = a.bytes_out + b.bytes_out;
  res.found = a.ranges.have.n + b.ranges.have.n;
  res.complete = ld_sync_session_complete(&a) && ld_sync_session_complete(&b);
  ld_buf_clear(&frame);
  ld_buf_clear(&reply);
  ld_sync_session_clear(&a);
  ld_sync_session_clear(&b);
  return res;
}

static void print_row(const char *name, const pair_t *p, const result_t *r) {
  char extra[96] = "";
  if (p->diffs > 1)
    snprintf(extra, sizeof extra, "  %.0f B/diff = %.1f× 32-B hashes, %.1f× 40-B items",
             (double)r->bytes / (double)p->diffs, (double)r->bytes / (32.0 * (double)p->diffs),
             (double)r->bytes / (40.0 * (double)p->diffs));
  printf("  %-12s frames %2zu  round trips %2zu  bytes %9llu  cpu ms %7.1f / %7.1f  found "
         "%llu/%llu%s%s%s\n",
         name, r->frames, r->round_trips, (unsigned long long)r->bytes, r->cpu_a, r->cpu_b,
         (unsigned long long)r->found, (unsigned long long)p->diffs,
         r->complete ? "" : "  INCOMPLETE", r->rc != 0 ? "  ERROR " : "",
         r->rc != 0 ? ld_errname(r->rc) : "");
  if (extra[0] != '\0')
    printf("  %-12s %s\n", "", extra);
}

static const struct {
  const char *name;
  bool a_nwaku, b_nwaku, uncapped;
} k_pairs[] = {
    {"ours/ours", false, false, false}, {"nwaku/nwaku", true, true, true},
    {"ours/nwaku", false, true, false}, {"nwaku/ours", true, false, false},
    {"ours/nwaku*", false, true, true}, {"nwaku/ours*", true, false, true},
};

/* The pairings; the starred ones run without caps (as nwaku does), shown when the capped run
 * gave ranges up. */
static void run_pairings(pair_t *p) {
  bool gave_up = false;
  for (size_t i = 0; i < sizeof k_pairs / sizeof k_pairs[0]; i++) {
    if (k_pairs[i].uncapped && k_pairs[i].a_nwaku != k_pairs[i].b_nwaku && !gave_up)
      continue;
    config_t ca = {k_pairs[i].a_nwaku, 0, 0, k_pairs[i].uncapped};
    config_t cb = {k_pairs[i].b_nwaku, 0, 0, k_pairs[i].uncapped};
    result_t r = run(p, &ca, &cb);
    gave_up |= !r.complete;
    print_row(k_pairs[i].name, p, &r);
  }
}

/* Both sides with this engine's policy at other partition counts and thresholds. */
static void run_grid(pair_t *p) {
  static const uint32_t parts[] = {8, 12, 16, 24, 32, 64};
  static const uint32_t thresholds[] = {1, 2, 4, 8, 16, 100};
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
    for (size_t j = 0; j < sizeof thresholds / sizeof thresholds[0]; j++) {
      config_t c = {false, parts[i], thresholds[j], false};
      result_t r = run(p, &c, &c);
      char name[32];
      snprintf(name, sizeof name, "b=%u t=%u", parts[i], thresholds[j]);
      print_row(name, p, &r);
    }
  }
}

/* ---- ten million items ------------------------------------------------------------------------
 */

static void big(uint64_t n) {
  printf("%llu items: one set built in time order, then the pair\n", (unsigned long long)n);
  long rss0 = bench_rss_kib();
  ld_sync_tree_t *t;
  if (ld_sync_tree_new(&t) != 0)
    exit(1);
  double w0 = bench_clock_ms(CLOCK_MONOTONIC);
  for (uint64_t i = 0; i < n; i++) {
    ld_sync_id_t id = make_item(i, n);
    if (ld_sync_tree_insert(t, &id) != 0)
      exit(1);
  }
  double w1 = bench_clock_ms(CLOCK_MONOTONIC);
  long rss1 = bench_rss_kib();
  printf("  insert (ascending)     %.0f ms, %.2f M items/s\n", w1 - w0,
         (double)n / (w1 - w0) / 1e3);
  printf("  memory per item        %.1f bytes (tree's count), %.1f bytes (RSS growth)\n",
         (double)ld_sync_tree_memory(t) / (double)n, (double)(rss1 - rss0) * 1024.0 / (double)n);
  ld_sync_id_t lo = ld_sync_id_bound(NOW - 3000 * SEC), hi = ld_sync_id_bound(NOW - 100 * SEC);
  double c0 = cpu_ms();
  ld_sync_summary_t s;
  for (int i = 0; i < 100000; i++) {
    lo.time += 1000;
    ld_sync_tree_summary(t, &lo, &hi, &s);
  }
  printf("  range count + fingerprint  %.2f µs each\n", (cpu_ms() - c0) * 1e3 / 100000);
  ld_sync_tree_t *r;
  if (ld_sync_tree_new(&r) != 0)
    exit(1);
  g_rng = 99;
  for (uint64_t i = 0; i < n / 10; i++) {
    ld_sync_id_t id = make_item(rnd() % n, n);
    ld_sync_tree_insert(r, &id);
  }
  w0 = bench_clock_ms(CLOCK_MONOTONIC);
  for (uint64_t i = 0; i < n / 10; i++) {
    ld_sync_id_t id = make_item(rnd() % n, n);
    ld_sync_tree_insert(r, &id);
  }
  printf("  insert (random order, at %llu items)  %.2f µs each; %.1f bytes per item\n",
         (unsigned long long)(n / 5),
         (bench_clock_ms(CLOCK_MONOTONIC) - w0) * 1e3 / (double)(n / 10),
         (double)ld_sync_tree_memory(r) / (double)ld_sync_tree_size(r));
  ld_sync_tree_free(r);
  w0 = bench_clock_ms(CLOCK_MONOTONIC);
  uint64_t pruned = ld_sync_tree_prune(t, NOW - 20 * SEC - 3240 * SEC);
  printf("  prune the oldest 10 %%  %llu items in %.1f ms\n", (unsigned long long)pruned,
         bench_clock_ms(CLOCK_MONOTONIC) - w0);
  ld_sync_tree_free(t);

  pair_t p;
  w0 = bench_clock_ms(CLOCK_MONOTONIC);
  pair_build(&p, n, 1);
  printf("  pair with 1 difference built in %.0f ms\n", bench_clock_ms(CLOCK_MONOTONIC) - w0);
  run_pairings(&p);
  pair_free(&p);
}

/* ---- the routine of a store node at n items -------------------------------------------------- */

static void routine_session(const char *name, pair_t *p, bool nwaku) {
  config_t c = {nwaku, 0, 0, nwaku};
  double w0 = bench_clock_ms(CLOCK_MONOTONIC);
  result_t r = run(p, &c, &c);
  double w1 = bench_clock_ms(CLOCK_MONOTONIC);
  print_row(name, p, &r);
  printf("  %-12s session wall %.1f ms\n", "", w1 - w0);
}

static void routine(uint64_t n, uint64_t diffs) {
  printf("routine: two sets of %llu items, %llu differences (half missing on each side)\n",
         (unsigned long long)n, (unsigned long long)diffs);
  long rss0 = bench_rss_kib();
  double w0 = bench_clock_ms(CLOCK_MONOTONIC), c0 = cpu_ms();
  pair_t p;
  pair_build(&p, n, diffs);
  double w1 = bench_clock_ms(CLOCK_MONOTONIC), c1 = cpu_ms();
  long rss1 = bench_rss_kib();
  uint64_t items = ld_sync_tree_size(p.a) + ld_sync_tree_size(p.b);
  printf("  build both (time order)  %.0f ms wall, %.0f ms CPU (page faults included), %.2f M "
         "items per CPU second\n",
         w1 - w0, c1 - c0, (double)items / (c1 - c0) / 1e3);
  printf("  memory per item          %.1f bytes (trees' count), %.1f bytes (RSS growth), RSS "
         "%.0f MiB\n",
         (double)(ld_sync_tree_memory(p.a) + ld_sync_tree_memory(p.b)) / (double)items,
         (double)(rss1 - rss0) * 1024.0 / (double)items, (double)rss1 / 1024.0);
  routine_session("ours/ours", &p, false);
  routine_session("nwaku/nwaku", &p, true);
  w0 = bench_clock_ms(CLOCK_MONOTONIC);
  pair_free(&p);
  printf("  free both                %.0f ms\n", bench_clock_ms(CLOCK_MONOTONIC) - w0);
}

int main(int argc, char **argv) {
  uint64_t items = 1000000, diffs = 1000, big_n = 10000000;
  uint64_t routine_n = 0, routine_diffs = 10;
  bool grid = false, skip_big = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--routine") == 0 && i + 1 < argc)
      routine_n = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--routine-diffs") == 0 && i + 1 < argc)
      routine_diffs = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--items") == 0 && i + 1 < argc)
      items = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--diffs") == 0 && i + 1 < argc)
      diffs = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--big") == 0 && i + 1 < argc)
      big_n = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--grid") == 0)
      grid = true;
    else if (strcmp(argv[i], "--skip-big") == 0)
      skip_big = true;
  }
  printf("store-sync engine: policies initiator/responder; cpu ms initiator / responder\n");
  if (routine_n > 0) {
    routine(routine_n, routine_diffs);
    return 0;
  }
  if (!skip_big)
    big(big_n); /* first, so that the RSS growth is the tree's */
  pair_t p;
  pair_build(&p, items, 1);
  printf("\n%llu items, 1 difference (the responder lacks it)\n", (unsigned long long)items);
  run_pairings(&p);
  ld_sync_tree_t *swap = p.a;
  p.a = p.b;
  p.b = swap;
  printf("\n%llu items, 1 difference (the initiator lacks it)\n", (unsigned long long)items);
  run_pairings(&p);
  if (grid) {
    printf("\nthis engine's policy, partitions b and item-set threshold t (1 difference)\n");
    run_grid(&p);
  }
  pair_free(&p);
  pair_build(&p, items, diffs);
  printf("\n%llu items, %llu differences (half missing on each side)\n", (unsigned long long)items,
         (unsigned long long)diffs);
  run_pairings(&p);
  if (grid) {
    printf("\nthis engine's policy, partitions b and item-set threshold t (%llu differences)\n",
           (unsigned long long)diffs);
    run_grid(&p);
  }
  pair_free(&p);
  return 0;
}
