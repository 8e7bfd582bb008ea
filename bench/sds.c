/* SDS engine figures (src/channels/sds*.c), two engines in one process exchanging bytes in memory
 * (no transport): the engine's own cost, not a channel's. Prints figures; never fails on a time.
 *
 *   bench_sds [--messages N] [--payload BYTES] [--sync-every N] [--log N]
 *
 * 1. throughput: A sends N messages to B; B answers with a sync message every --sync-every
 *    deliveries (acknowledging through its causal history and bloom filter), A processes them;
 *    messages per second, bytes on the wire per message (js-waku's default bloom filter is
 *    18 752 bytes in every message), and how many of A's messages ended acknowledged.
 * 2. memory: heap bytes of an engine holding --log delivered messages in its log (with the
 *    repair cache at its default of 1 000 messages).
 * 3. causal delivery: --log messages received newest first, then the oldest: time to deliver the
 *    whole cascade. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "channels/sds.h"

#define T0 1763000000000ull

static size_t g_messages = 20000, g_payload = 100, g_sync_every = 8, g_log = 10000;

typedef struct totals {
  size_t sends, wire_bytes, acked, possibly, delivered;
} totals_t;

static void drain(ld_sds_t *from, ld_sds_t *to, uint64_t now, totals_t *t) {
  ld_sds_event_t ev;
  while (ld_sds_next_event(from, &ev)) {
    if (ev.type == LD_SDS_EV_SEND) {
      t->sends++;
      t->wire_bytes += ev.len;
      if (to != NULL)
        ld_sds_receive(to, now, ev.data, ev.len, NULL, 0, NULL, NULL, 0);
    }
    t->acked += ev.type == LD_SDS_EV_ACKNOWLEDGED;
    t->possibly += ev.type == LD_SDS_EV_POSSIBLY_ACKNOWLEDGED;
    t->delivered += ev.type == LD_SDS_EV_DELIVERED;
    ld_sds_event_clear(&ev);
  }
}

static ld_sds_t *engine(const char *name) {
  ld_sds_config_t c;
  ld_sds_config_default(&c);
  c.random_seed = 1;
  c.sync_interval_ms = 0;
  c.max_outgoing = 100000;
  ld_sds_t *s;
  if (ld_sds_new(&c, "bench", name, T0, &s) != 0)
    exit(1);
  return s;
}

static void throughput(void) {
  ld_sds_t *a = engine("alice"), *b = engine("bob");
  uint8_t *payload = calloc(1, g_payload);
  totals_t ta = {0}, tb = {0};
  uint64_t start = ld_now_ns();
  for (size_t i = 0; i < g_messages; i++) {
    char id[32];
    snprintf(id, sizeof id, "m%zu", i);
    memcpy(payload, &i, sizeof i < g_payload ? sizeof i : g_payload);
    uint64_t now = T0 + i / 10;
    ld_sds_send(a, now, id, payload, g_payload);
    drain(a, b, now, &ta);
    if ((i + 1) % g_sync_every == 0)
      ld_sds_sync_now(b, now);
    drain(b, a, now, &tb);
  }
  double secs = (double)(ld_now_ns() - start) / 1e9;
  ld_sds_stats_t st;
  ld_sds_get_stats(a, &st);
  printf("throughput: %zu messages of %zu bytes, a sync every %zu: %.0f messages/s "
         "(%.2f s)\n",
         g_messages, g_payload, g_sync_every, (double)g_messages / secs, secs);
  printf("  wire: %.0f bytes per content message, %.0f per sync; %zu delivered at B\n",
         (double)ta.wire_bytes / (double)ta.sends, (double)tb.wire_bytes / (double)tb.sends,
         tb.delivered);
  printf("  acknowledged: %zu of %zu (by history %llu, by bloom %llu), %zu still outgoing\n",
         ta.acked, g_messages, (unsigned long long)st.acked_by_history,
         (unsigned long long)st.acked_by_bloom, st.outgoing_len);
  free(payload);
  ld_sds_free(a);
  ld_sds_free(b);
}

static size_t heap_in_use(void) {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

/* The wire bytes of `n` messages from one sender (IDs as long as js-waku's and the LIP's). */
static uint8_t **make_wires(size_t n, size_t **lens) {
  ld_sds_t *a = engine("alice");
  uint8_t **wire = calloc(n, sizeof *wire);
  *lens = calloc(n, sizeof **lens);
  uint8_t payload[100] = {0};
  ld_sds_event_t ev;
  for (size_t i = 0; i < n; i++) {
    char id[80];
    snprintf(id, sizeof id, "%064zx", i);
    ld_sds_send(a, T0 + i, id, payload, sizeof payload);
    while (ld_sds_next_event(a, &ev)) {
      if (ev.type == LD_SDS_EV_SEND) {
        wire[i] = ev.data;
        (*lens)[i] = ev.len;
        ev.data = NULL;
      }
      ld_sds_event_clear(&ev);
    }
  }
  ld_sds_free(a);
  return wire;
}

static void memory(void) {
  size_t *len;
  uint8_t **wire = make_wires(g_log, &len);
  size_t before = heap_in_use();
  ld_sds_t *r = engine("reader");
  size_t empty = heap_in_use() - before;
  ld_sds_event_t ev;
  for (size_t i = 0; i < g_log; i++) {
    ld_sds_receive(r, T0 + i, wire[i], len[i], NULL, 0, NULL, NULL, 0);
    while (ld_sds_next_event(r, &ev))
      ld_sds_event_clear(&ev);
  }
  size_t used = heap_in_use() - before;
  ld_sds_stats_t st;
  ld_sds_get_stats(r, &st);
  printf("memory: engine %zu bytes empty (its bloom filter: 18 752); with %zu messages in its log "
         "(%zu in the repair cache, %zu bytes): %zu bytes, %.0f bytes per logged message\n",
         empty, st.log_len, st.repair_cache_len, st.repair_cache_bytes, used,
         (double)(used - empty) / (double)st.log_len);
  ld_sds_free(r);
  for (size_t i = 0; i < g_log; i++)
    free(wire[i]);
  free(wire);
  free(len);
}

static void cascade(void) {
  ld_sds_config_t c;
  ld_sds_config_default(&c);
  c.sync_interval_ms = 0;
  c.random_seed = 1;
  c.max_incoming = g_log + 1;
  c.max_missing = g_log + 1;
  c.max_outgoing = g_log + 1;
  c.max_incoming_bytes = (size_t)1 << 31;
  ld_sds_t *r;
  if (ld_sds_new(&c, "bench", "r", T0, &r) != 0)
    exit(1);
  ld_sds_event_t ev;
  size_t *len;
  uint8_t **wire = make_wires(g_log, &len);
  uint64_t start = ld_now_ns();
  for (size_t i = g_log; i-- > 1;)
    ld_sds_receive(r, T0 + g_log, wire[i], len[i], NULL, 0, NULL, NULL, 0);
  uint64_t mid = ld_now_ns();
  ld_sds_receive(r, T0 + g_log, wire[0], len[0], NULL, 0, NULL, NULL, 0);
  uint64_t end = ld_now_ns();
  size_t delivered = 0;
  while (ld_sds_next_event(r, &ev)) {
    delivered += ev.type == LD_SDS_EV_DELIVERED;
    ld_sds_event_clear(&ev);
  }
  printf("causal delivery: %zu messages received newest first in %.1f ms (buffered), the oldest "
         "then delivers %zu in %.1f ms\n",
         g_log - 1, (double)(mid - start) / 1e6, delivered, (double)(end - mid) / 1e6);
  for (size_t i = 0; i < g_log; i++)
    free(wire[i]);
  free(wire);
  free(len);
  ld_sds_free(r);
}

int main(int argc, char **argv) {
  for (int i = 1; i + 1 < argc; i += 2) {
    size_t v = strtoull(argv[i + 1], NULL, 10);
    if (strcmp(argv[i], "--messages") == 0)
      g_messages = v;
    else if (strcmp(argv[i], "--payload") == 0)
      g_payload = v > 0 ? v : 1;
    else if (strcmp(argv[i], "--sync-every") == 0)
      g_sync_every = v > 0 ? v : 1;
    else if (strcmp(argv[i], "--log") == 0)
      g_log = v > 1 ? v : 2;
  }
  throughput();
  memory();
  cascade();
  return 0;
}
