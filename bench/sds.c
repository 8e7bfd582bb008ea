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
 *    whole cascade.
 * 4. loss (--loss permille, 300; --loss-messages N, 300; --only-loss 1 runs only this): three
 *    engines broadcasting to each other, each copy lost at random; SDS bytes on the wire per
 *    payload byte until every message is delivered everywhere and acknowledged (--ack-sync MS,
 *    100 as the channel layer; 0 = js-waku's timing: only the periodic sync). */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "channels/sds.h"

#define T0 1763000000000ull

static size_t g_messages = 20000, g_payload = 100, g_sync_every = 8, g_log = 10000;
static size_t g_loss_messages = 300;
static unsigned g_loss_permille = 300;
static bool g_only_loss;
static uint64_t g_ack_sync_ms = 100;

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

/* ---- 4. with loss: bytes on the wire per payload byte ---------------------------------------- */

#define LOSS_PEERS 3

typedef struct lossy_net {
  ld_sds_t *e[LOSS_PEERS];
  size_t delivered[LOSS_PEERS], acked[LOSS_PEERS], failed;
  size_t bytes[6], count[6]; /* by send kind */
  uint64_t rng;
} lossy_net_t;

static uint64_t lossy_rand(lossy_net_t *n) {
  n->rng ^= n->rng << 13;
  n->rng ^= n->rng >> 7;
  n->rng ^= n->rng << 17;
  return n->rng;
}

/* Broadcasts every SEND of engine `i` (each copy lost with g_loss_permille), until all queues
 * are empty. */
static void lossy_drain(lossy_net_t *n, uint64_t now) {
  bool more = true;
  while (more) {
    more = false;
    for (int i = 0; i < LOSS_PEERS; i++) {
      ld_sds_event_t ev;
      while (ld_sds_next_event(n->e[i], &ev)) {
        more = true;
        if (ev.type == LD_SDS_EV_SEND) {
          n->bytes[ev.send_kind] += ev.len;
          n->count[ev.send_kind]++;
          for (int j = 0; j < LOSS_PEERS; j++)
            if (j != i && lossy_rand(n) % 1000 >= g_loss_permille)
              ld_sds_receive(n->e[j], now, ev.data, ev.len, NULL, 0, NULL, NULL, 0);
        }
        n->delivered[i] += ev.type == LD_SDS_EV_DELIVERED;
        n->acked[i] += ev.type == LD_SDS_EV_ACKNOWLEDGED;
        n->failed += ev.type == LD_SDS_EV_SEND_FAILED;
        ld_sds_event_clear(&ev);
      }
    }
  }
}

static bool lossy_done(const lossy_net_t *n, size_t per_peer) {
  for (int i = 0; i < LOSS_PEERS; i++)
    if (n->delivered[i] < per_peer * (LOSS_PEERS - 1) || n->acked[i] + n->failed < per_peer)
      return false;
  return true;
}

/* Three participants each send --loss-messages / 3 messages of --payload bytes, one every
 * 100 ms in turn, with the channel layer's settings (LIP defaults, acknowledgement syncs after
 * --ack-sync ms, periodic sync 30 s, SDS-R T_min 30 s / T_max 120 s, repair requested up to 20
 * times and nothing declared lost, as no store backs it); every copy of every broadcast is lost
 * with --loss permille. Simulated time runs until every message is delivered everywhere and
 * acknowledged. */
static void lossy(void) {
  lossy_net_t n = {.rng = 0x9e3779b97f4a7c15ull};
  static const char *names[LOSS_PEERS] = {"alice", "bob", "carol"};
  for (int i = 0; i < LOSS_PEERS; i++) {
    ld_sds_config_t c;
    ld_sds_config_default(&c);
    c.random_seed = (uint64_t)i + 1;
    c.ack_sync_delay_ms = g_ack_sync_ms;
    c.max_outgoing = 100000;
    c.repair_max_requests = 20; /* no store to fall back to: peers repair until done */
    c.lost_timeout_ms = 0;
    if (ld_sds_new(&c, "bench", names[i], T0, &n.e[i]) != 0)
      exit(1);
  }
  size_t per_peer = g_loss_messages / LOSS_PEERS, sent = 0;
  uint8_t *payload = calloc(1, g_payload);
  uint64_t now = T0, end = T0 + 3600u * 1000u;
  while (now < end && !(sent == per_peer * LOSS_PEERS && lossy_done(&n, per_peer))) {
    if (sent < per_peer * LOSS_PEERS && now >= T0 + sent * 100u) {
      char id[32];
      snprintf(id, sizeof id, "m%zu", sent);
      memcpy(payload, &sent, sizeof sent < g_payload ? sizeof sent : g_payload);
      ld_sds_send(n.e[sent % LOSS_PEERS], now, id, payload, g_payload);
      sent++;
    }
    for (int i = 0; i < LOSS_PEERS; i++)
      if (ld_sds_next_deadline(n.e[i]) <= now)
        ld_sds_handle_timeout(n.e[i], now);
    lossy_drain(&n, now);
    now += 10;
  }
  size_t payload_bytes = sent * g_payload, wire = 0;
  for (int k = 1; k < 6; k++)
    wire += n.bytes[k];
  size_t delivered = 0;
  for (int i = 0; i < LOSS_PEERS; i++)
    delivered += n.delivered[i];
  printf("ack syncs after %llu ms; ", (unsigned long long)g_ack_sync_ms);
  printf("loss %u/1000 per copy, %d participants, %zu messages of %zu bytes: %s after %.1f s "
         "(simulated); %zu of %zu deliveries, %zu given up\n",
         g_loss_permille, LOSS_PEERS, sent, g_payload,
         lossy_done(&n, per_peer) ? "complete" : "INCOMPLETE", (double)(now - T0) / 1000.0,
         delivered, sent * (LOSS_PEERS - 1), n.failed);
  printf("  wire bytes / payload bytes: %.1f (%zu / %zu; each broadcast counted once)\n",
         (double)wire / (double)payload_bytes, wire, payload_bytes);
  size_t bloom = 18752 * (n.count[LD_SDS_SEND_CONTENT] + n.count[LD_SDS_SEND_RETRANSMISSION] +
                          n.count[LD_SDS_SEND_SYNC]);
  printf("  of which js-waku's bloom filter in every message: %zu bytes; without it %.2f\n", bloom,
         (double)(wire > bloom ? wire - bloom : 0) / (double)payload_bytes);
  for (int k = 1; k < 6; k++)
    printf("  %-15s %6zu sends, %10zu bytes\n", ld_sds_send_kind_name((ld_sds_send_kind_t)k),
           n.count[k], n.bytes[k]);
  free(payload);
  for (int i = 0; i < LOSS_PEERS; i++)
    ld_sds_free(n.e[i]);
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
    else if (strcmp(argv[i], "--loss-messages") == 0)
      g_loss_messages = v >= 3 ? v : 3;
    else if (strcmp(argv[i], "--loss") == 0)
      g_loss_permille = v < 1000 ? (unsigned)v : 999;
    else if (strcmp(argv[i], "--ack-sync") == 0)
      g_ack_sync_ms = v;
    else if (strcmp(argv[i], "--only-loss") == 0)
      g_only_loss = v != 0;
  }
  if (g_only_loss) {
    lossy();
    return 0;
  }
  throughput();
  memory();
  cascade();
  lossy();
  return 0;
}
