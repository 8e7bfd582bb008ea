/* discv5 engine figures on an in-process network: N engines (default 200) on the in-memory
 * network of the engine tests (tests/unit/waku/discovery/discv5_sim.h: datagrams handed over in
 * order, no latency, no loss, a simulated clock), every one started from one bootstrap record;
 * with --udp, the same N engines behind the libuv adapter, each on its own UDP socket on
 * 127.0.0.1, in one loop (what tests/interop/bench/discv5.mjs measures of @chainsafe/discv5).
 *
 *   bench_discv5 [--nodes N] [--lookups L] [--sessions S] [--seed X] [--udp]
 *
 * With --udp every engine sees all the others at 127.0.0.1: the per-IP rate limits are raised
 * out of the way (a real network has one IP per node), loopback is exempt from the IP limits.
 *
 * Phases: (1) join: every node adds node 0 and the network runs its populate lookups, ping-backs
 * and rounds of random lookups until the tables stop growing; (2) L random lookups, one at a
 * time from random nodes, with sessions cached (the steady state); (3) the same with session
 * caches of S entries per node, so that most requests need a handshake first; (4) a node that
 * joins late, from one bootstrap record, running the Waku search loop: lookups until it knows 20
 * nodes of its cluster (a third of the network).
 *
 * Per phase: lookups per second of wall time, CPU per lookup (process CPU time: the whole
 * network's work for the lookup, asking and answering, is in this process), datagrams and
 * handshakes per lookup, nodes asked. Never fails on a time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_clock.h"

#include "../tests/unit/waku/discovery/discv5_sim.h"
#include "base/log.h"
#include "waku/discovery/discv5_uv.h"
#include "waku/discovery/waku_discv5.h"

static double cpu_ms(void) {
  return bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID);
}

typedef struct totals {
  uint64_t packets, handshakes, lookups, asked;
} totals_t;

static size_t g_asked;

static void count_asked(sim_node_t *n, ld_discv5_event_t *ev) {
  (void)n;
  if (ev->type == LD_DISCV5_EV_LOOKUP_DONE)
    g_asked += ev->asked;
}

static totals_t totals(sim_t *s) {
  totals_t t = {0};
  for (size_t i = 0; i < s->n; i++) {
    ld_discv5_stats_t st;
    ld_discv5_get_stats(s->nodes[i].d, &st);
    t.packets += st.packets_out;
    t.handshakes += st.handshakes_ok;
    t.lookups += st.lookups_done;
  }
  t.asked = g_asked;
  return t;
}

static size_t table_total(sim_t *s, size_t *min) {
  size_t total = 0;
  *min = SIZE_MAX;
  for (size_t i = 0; i < s->n; i++) {
    size_t n = ld_discv5_table_size(ld_discv5_table(s->nodes[i].d));
    total += n;
    if (n < *min)
      *min = n;
  }
  return total;
}

static uint64_t g_rng = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

static void join(sim_t *s) {
  double w0 = bench_clock_ms(CLOCK_MONOTONIC), c0 = cpu_ms();
  for (size_t i = 1; i < s->n; i++)
    ld_discv5_add_enr(s->nodes[i].d, &s->nodes[0].enr, true, s->now);
  sim_run(s, 6000);
  size_t before = 0, min = 0, rounds = 0;
  for (; rounds < 20; rounds++) {
    for (size_t i = 0; i < s->n; i++)
      ld_discv5_lookup(s->nodes[i].d, NULL, s->now, NULL);
    sim_run(s, 5000);
    size_t now = table_total(s, &min);
    if (now == before)
      break;
    before = now;
  }
  totals_t t = totals(s);
  printf("join: %zu nodes, %zu rounds of lookups, %.0f ms wall, %.0f ms CPU; tables: %.1f nodes "
         "on average, %zu at least; %llu handshakes, %llu datagrams; RSS %ld KiB (%.1f KiB per "
         "node)\n",
         s->n, rounds + 1, bench_clock_ms(CLOCK_MONOTONIC) - w0, cpu_ms() - c0,
         (double)before / (double)s->n, min, (unsigned long long)t.handshakes,
         (unsigned long long)t.packets, bench_rss_kib(), (double)bench_rss_kib() / (double)s->n);
}

static void lookups(sim_t *s, size_t count, const char *label) {
  totals_t t0 = totals(s);
  double w0 = bench_clock_ms(CLOCK_MONOTONIC), c0 = cpu_ms();
  for (size_t i = 0; i < count; i++) {
    ld_discv5_lookup(s->nodes[rnd() % s->n].d, NULL, s->now, NULL);
    sim_deliver(s);
    s->now += 10; /* keeps the maintenance timers moving */
    for (size_t j = 0; j < s->n; j++)
      if (ld_discv5_next_deadline(s->nodes[j].d) <= s->now)
        ld_discv5_handle_timeout(s->nodes[j].d, s->now);
  }
  sim_deliver(s);
  double wall = bench_clock_ms(CLOCK_MONOTONIC) - w0, cpu = cpu_ms() - c0;
  totals_t t = totals(s);
  double n = (double)(t.lookups - t0.lookups);
  printf("%s: %.0f lookups in %.0f ms wall, %.0f ms CPU: %.0f lookups/s, %.3f ms CPU per lookup; "
         "per lookup %.1f nodes asked, %.1f datagrams, %.2f handshakes\n",
         label, n, wall, cpu, n / (wall / 1e3), cpu / n, (double)(t.asked - t0.asked) / n,
         (double)(t.packets - t0.packets) / n, (double)(t.handshakes - t0.handshakes) / n);
}

static void set_session_caps(sim_t *s, const ld_discv5_config_t *base, size_t sessions) {
  ld_discv5_callbacks_t cb = {sim_send, sim_event};
  for (size_t i = 0; i < s->n; i++) {
    /* The same node with an emptier memory: its table is copied over. */
    ld_discv5_config_t cfg = *base;
    cfg.max_sessions = sessions;
    cfg.key = &s->nodes[i].key;
    cfg.enr = &s->nodes[i].enr;
    cfg.seed = i;
    ld_discv5_t *d = ld_discv5_new(&cfg, &cb, &s->nodes[i], s->now);
    ld_discv5_node_t *all[6144];
    uint64_t r = i + 1;
    size_t n = ld_discv5_table_random(ld_discv5_table(s->nodes[i].d), &r, all, 6144);
    for (size_t j = 0; j < n; j++) {
      ld_discv5_node_t copy = *all[j];
      ld_discv5_table_add(ld_discv5_table(d), &copy);
    }
    ld_discv5_free(s->nodes[i].d);
    s->nodes[i].d = d;
  }
}

/* ---- a late node's search ------------------------------------------------------------------- */

static size_t g_matches;

static void on_match(void *ud, const ld_enr_t *enr) {
  (void)ud;
  (void)enr;
  g_matches++;
}

static ld_waku_discv5_t *g_search;
static size_t g_searcher;

static void route(sim_node_t *n, ld_discv5_event_t *ev) {
  count_asked(n, ev);
  if (g_search != NULL && n->idx == g_searcher)
    ld_waku_discv5_on_event(g_search, ev, n->sim->now);
}

static void waku_fields(size_t i, ld_enr_builder_t *b) {
  uint16_t shard = (uint16_t)(i % 8);
  ld_enr_builder_set_uint(b, "tcp", 60000);
  ld_enr_builder_set_waku2(b, LD_ENR_RELAY);
  ld_enr_builder_set_shards(b, i % 3 == 0 ? 42 : 7, &shard, 1);
}

static void late_joiner(sim_t *s) {
  g_searcher = s->n - 1;
  sim_node_t *me = &s->nodes[g_searcher];
  /* The last node forgets everything but node 0. */
  ld_discv5_callbacks_t cb = {sim_send, sim_event};
  ld_discv5_config_t cfg;
  ld_discv5_config_default(&cfg);
  cfg.key = &me->key;
  cfg.enr = &me->enr;
  ld_discv5_free(me->d);
  me->d = ld_discv5_new(&cfg, &cb, me, s->now);
  ld_discv5_add_enr(me->d, &s->nodes[0].enr, true, s->now);
  ld_waku_discv5_config_t wcfg;
  ld_waku_discv5_config_default(&wcfg);
  ld_waku_discv5_config_set_shards(&wcfg, 42, NULL, 0);
  g_search = ld_waku_discv5_new(me->d, &wcfg, on_match, NULL, s->now);
  uint64_t start = s->now;
  double c0 = cpu_ms();
  totals_t t0 = totals(s);
  ld_waku_discv5_stats_t st = {0};
  while (g_matches < 20 && s->now < start + 600000) {
    uint64_t next = ld_waku_discv5_next_deadline(g_search);
    sim_run_until(s, next < s->now + 1000 ? next : s->now + 1000);
    ld_waku_discv5_handle_timeout(g_search, s->now);
    ld_waku_discv5_get_stats(g_search, &st);
  }
  totals_t t = totals(s);
  printf("late joiner (Waku search, cluster 42 = a third of the network, 5 s between lookups): "
         "20 matching peers after %llu lookups, %.1f s of simulated time (the pauses; no "
         "network latency), %.1f ms CPU for the whole network, %llu datagrams\n",
         (unsigned long long)st.lookups, (double)(s->now - start) / 1e3, cpu_ms() - c0,
         (unsigned long long)(t.packets - t0.packets));
  ld_waku_discv5_free(g_search);
  g_search = NULL;
}

/* ---- over UDP on 127.0.0.1 ------------------------------------------------------------------- */

typedef struct unode {
  ld_discv5_uv_t *u;
  ld_privkey_t key;
  ld_enr_t enr;
  size_t idx;
  size_t pending; /* lookups of ours running */
} unode_t;

static unode_t *g_unodes;
static size_t g_running;

static void udp_event(void *ud, ld_discv5_event_t *ev) {
  unode_t *n = ud;
  if (ev->type == LD_DISCV5_EV_LOOKUP_DONE && n->pending > 0) {
    n->pending--;
    g_running--;
    g_asked += ev->asked;
  }
}

static void udp_start(uv_loop_t *loop, unode_t *n, size_t i, uint64_t seed) {
  ld_discv5_addr_t announce = {.ip_len = 4, .ip = {127, 0, 0, 1}};
  if (ld_discv5_uv_open(loop, "127.0.0.1", 0, &n->u) != 0)
    abort();
  announce.port = ld_discv5_uv_port(n->u);
  if (sim_make_enr(i, seed, &announce, &n->key, &n->enr) != 0)
    abort();
  n->idx = i;
  ld_discv5_config_t cfg;
  ld_discv5_config_default(&cfg);
  cfg.key = &n->key;
  cfg.enr = &n->enr;
  cfg.seed = seed * 1000003u + i;
  cfg.whoareyou_rate = cfg.findnode_rate = 1000000;
  cfg.whoareyou_burst = cfg.findnode_burst = 1000000;
  ld_discv5_uv_callbacks_t cb = {udp_event, NULL};
  if (ld_discv5_uv_start(n->u, &cfg, NULL, &cb, n) != 0)
    abort();
}

static void udp_lookup(uv_loop_t *loop, unode_t *n) {
  n->pending++;
  g_running++;
  if (ld_discv5_lookup(ld_discv5_uv_engine(n->u), NULL, uv_now(loop), NULL) != 0) {
    n->pending--;
    g_running--;
  }
  ld_discv5_uv_update(n->u);
}

/* Runs the loop until no lookup of ours runs, or `ms` pass. */
static void udp_settle(uv_loop_t *loop, uint64_t ms) {
  uv_update_time(loop);
  uint64_t deadline = uv_now(loop) + ms;
  while (g_running > 0 && uv_now(loop) < deadline)
    uv_run(loop, UV_RUN_ONCE);
}

static void udp_pause(uv_loop_t *loop, uint64_t ms) {
  uv_update_time(loop);
  uint64_t deadline = uv_now(loop) + ms;
  while (uv_now(loop) < deadline)
    uv_run(loop, UV_RUN_ONCE);
}

static void udp_totals(size_t n, totals_t *t, size_t *table, size_t *min) {
  memset(t, 0, sizeof *t);
  *table = 0;
  *min = SIZE_MAX;
  for (size_t i = 0; i < n; i++) {
    ld_discv5_t *d = ld_discv5_uv_engine(g_unodes[i].u);
    ld_discv5_stats_t st;
    ld_discv5_get_stats(d, &st);
    t->packets += st.packets_out;
    t->handshakes += st.handshakes_ok;
    t->lookups += st.lookups_done;
    size_t size = ld_discv5_table_size(ld_discv5_table(d));
    *table += size;
    if (size < *min)
      *min = size;
  }
  t->asked = g_asked;
}

static int udp_main(size_t n, size_t count, uint64_t seed) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  g_unodes = calloc(n, sizeof *g_unodes);
  for (size_t i = 0; i < n; i++)
    udp_start(&loop, &g_unodes[i], i, seed);
  double w0 = bench_clock_ms(CLOCK_MONOTONIC), c0 = cpu_ms();
  for (size_t i = 1; i < n; i++) {
    ld_discv5_add_enr(ld_discv5_uv_engine(g_unodes[i].u), &g_unodes[0].enr, true, uv_now(&loop));
    ld_discv5_uv_update(g_unodes[i].u);
  }
  udp_pause(&loop, 6000);
  totals_t t;
  size_t before = 0, table = 0, min = 0, rounds = 0;
  for (; rounds < 20; rounds++) {
    for (size_t i = 0; i < n; i++)
      udp_lookup(&loop, &g_unodes[i]);
    udp_settle(&loop, 20000);
    udp_totals(n, &t, &table, &min);
    if (table == before)
      break;
    before = table;
  }
  printf("udp join: %zu nodes on 127.0.0.1, %zu rounds of lookups, %.0f ms wall (6 s of it "
         "waiting for ping-backs), %.0f ms CPU; tables: %.1f nodes on average, %zu at least; %llu "
         "handshakes; RSS %ld KiB\n",
         n, rounds + 1, bench_clock_ms(CLOCK_MONOTONIC) - w0, cpu_ms() - c0,
         (double)table / (double)n, min, (unsigned long long)t.handshakes, bench_rss_kib());
  totals_t t0 = t;
  w0 = bench_clock_ms(CLOCK_MONOTONIC);
  c0 = cpu_ms();
  for (size_t i = 0; i < count; i++) {
    udp_lookup(&loop, &g_unodes[rnd() % n]);
    udp_settle(&loop, 60000);
  }
  double wall = bench_clock_ms(CLOCK_MONOTONIC) - w0, cpu = cpu_ms() - c0;
  udp_totals(n, &t, &table, &min);
  double done = (double)(t.lookups - t0.lookups);
  printf("udp lookups, one at a time: %.0f lookups in %.0f ms wall, %.0f ms CPU: %.0f lookups/s, "
         "%.3f ms CPU per lookup; per lookup %.1f nodes asked, %.1f datagrams, %.2f handshakes\n",
         done, wall, cpu, done / (wall / 1e3), cpu / done, (double)(t.asked - t0.asked) / done,
         (double)(t.packets - t0.packets) / done, (double)(t.handshakes - t0.handshakes) / done);
  for (size_t i = 0; i < n; i++)
    ld_discv5_uv_close(g_unodes[i].u);
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  free(g_unodes);
  return 0;
}

int main(int argc, char **argv) {
  size_t nodes = 200, count = 2000, sessions = 16;
  uint64_t seed = 1;
  bool udp = false;
  for (int i = 1; i < argc; i++) {
    const char *value = i + 1 < argc ? argv[i + 1] : "0";
    if (strcmp(argv[i], "--udp") == 0)
      udp = true;
    else if (strcmp(argv[i], "--nodes") == 0 && ++i)
      nodes = strtoul(value, NULL, 10);
    else if (strcmp(argv[i], "--lookups") == 0 && ++i)
      count = strtoul(value, NULL, 10);
    else if (strcmp(argv[i], "--sessions") == 0 && ++i)
      sessions = strtoul(value, NULL, 10);
    else if (strcmp(argv[i], "--seed") == 0 && ++i)
      seed = strtoull(value, NULL, 10);
  }
  ld_log_set_level(LD_LOG_ERROR);
  g_rng ^= seed;
  if (udp)
    return udp_main(nodes, count, seed);
  ld_discv5_config_t cfg;
  ld_discv5_config_default(&cfg);
  g_sim_enr_fields = waku_fields;
  sim_t *s = sim_new(nodes, &cfg, seed);
  if (s == NULL) {
    fprintf(stderr, "cannot build the network\n");
    return 1;
  }
  s->on_event = route;
  g_rng ^= seed;
  join(s);
  lookups(s, count, "lookups, sessions cached");
  set_session_caps(s, &cfg, sessions);
  char label[96];
  snprintf(label, sizeof label, "lookups, %zu sessions per node", sessions);
  lookups(s, count, label);
  set_session_caps(s, &cfg, cfg.max_sessions);
  sim_run(s, 20000);
  late_joiner(s);
  sim_free(s);
  return 0;
}
