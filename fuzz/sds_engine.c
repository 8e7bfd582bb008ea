/* Fuzz target: the SDS engine (src/channels/sds*.c) driven by a script. The input is a sequence
 * of records `op ‖ len ‖ len bytes` (len one byte); per op (modulo 5):
 *   0  receive the bytes as an SDS message
 *   1  receive a message built from the bytes: [index, n, dep indices...] names message "m<i>"
 *      from "peer" with its dependencies "m<dep>" (reaches buffering, cascades, cycles, expiry
 *      without having to produce protobuf)
 *   2  send the bytes as content (ID from a counter)
 *   3  advance the clock by (first byte · 37) ms and run the timers
 *   4  a sync message now
 * with small limits, so that every bound is hit. After each step the queue is drained and the
 * sizes must stay within the configured limits. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "channels/sds.h"

static ld_sds_config_t small_config(void) {
  ld_sds_config_t c;
  ld_sds_config_default(&c);
  c.random_seed = 1;
  c.causal_history_size = 3;
  c.ack_timeout_ms = 40;
  c.possibly_acked_timeout_ms = 80;
  c.max_retransmissions = 2;
  c.lost_timeout_ms = 900;
  c.fetch_delay_ms = 100;
  c.fetch_interval_ms = 50;
  c.sync_interval_ms = 300;
  c.repair_t_min_ms = 10;
  c.repair_t_max_ms = 200;
  c.repair_sync_gap_ms = 5;
  c.bloom_capacity = 16;
  c.bloom_error_rate = 0.05;
  c.max_log = 16;
  c.repair_cache_max = 4;
  c.max_outgoing = 4;
  c.max_incoming = 8;
  c.max_incoming_bytes = 4096;
  c.max_missing = 8;
  c.max_repair_responses = 4;
  c.max_lost = 4;
  c.max_events = 256;
  return c;
}

static void built_message(ld_sds_t *s, uint64_t now, const uint8_t *p, size_t n) {
  if (n < 2)
    return;
  char id[8], deps[32][8];
  ld_sds_history_entry_t hist[32];
  snprintf(id, sizeof id, "m%u", p[0] % 64);
  size_t nd = (size_t)p[1] % 32;
  if (nd > n - 2)
    nd = n - 2;
  for (size_t i = 0; i < nd; i++) {
    snprintf(deps[i], sizeof deps[i], "m%u", p[2 + i] % 64);
    memset(&hist[i], 0, sizeof hist[i]);
    hist[i].message_id = deps[i];
    hist[i].message_id_len = strlen(deps[i]);
    hist[i].has_sender_id = true;
    hist[i].sender_id = "peer";
    hist[i].sender_id_len = 4;
    hist[i].has_retrieval_hint = i % 2 == 0;
    hist[i].retrieval_hint = p;
    hist[i].retrieval_hint_len = 1;
  }
  ld_sds_message_t m;
  ld_sds_message_init(&m);
  m.sender_id = p[1] & 0x80 ? "other" : "peer";
  m.sender_id_len = strlen(m.sender_id);
  m.message_id = id;
  m.message_id_len = strlen(id);
  m.channel_id = "chan";
  m.channel_id_len = 4;
  m.has_lamport = true;
  m.lamport = now + p[0];
  m.causal_history = hist;
  m.causal_history_len = nd;
  m.has_content = (p[0] & 0x40) == 0;
  m.content = (const uint8_t *)"x";
  m.content_len = 1;
  ld_buf_t b;
  ld_buf_init(&b);
  if (ld_sds_message_encode(&m, &b) == 0)
    ld_sds_receive(s, now, b.data, b.len, p, 1, NULL, NULL, 0);
  ld_buf_clear(&b);
}

static void check(ld_sds_t *s, const ld_sds_config_t *c) {
  ld_sds_event_t ev;
  while (ld_sds_next_event(s, &ev))
    ld_sds_event_clear(&ev);
  ld_sds_stats_t st;
  ld_sds_get_stats(s, &st);
  if (st.log_len > c->max_log || st.outgoing_len > c->max_outgoing ||
      st.incoming_len > c->max_incoming || st.incoming_bytes > c->max_incoming_bytes ||
      st.missing_len > c->max_missing || st.responses_len > c->max_repair_responses ||
      st.lost_len > c->max_lost || st.repair_cache_len > c->repair_cache_max)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ld_sds_config_t c = small_config();
  ld_sds_t *s;
  uint64_t now = 1763000000000ull;
  if (ld_sds_new(&c, "chan", "me", now, &s) != 0)
    abort();
  unsigned sent = 0;
  for (size_t at = 0; at + 2 <= size;) {
    uint8_t op = data[at] % 5;
    size_t len = data[at + 1];
    const uint8_t *p = data + at + 2;
    if (len > size - at - 2)
      len = size - at - 2;
    at += 2 + len;
    if (op == 0) {
      ld_sds_receive(s, now, p, len, NULL, 0, NULL, NULL, 0);
    } else if (op == 1) {
      built_message(s, now, p, len);
    } else if (op == 2 && len > 0) {
      char id[16];
      snprintf(id, sizeof id, "own%u", sent++);
      ld_sds_send(s, now, id, p, len);
    } else if (op == 3) {
      now += (uint64_t)(len > 0 ? p[0] : 1) * 37;
      while (ld_sds_next_deadline(s) <= now) {
        if (ld_sds_handle_timeout(s, now) != 0)
          break;
        check(s, &c);
      }
    } else if (op == 4) {
      ld_sds_sync_now(s, now);
    }
    check(s, &c);
  }
  ld_sds_free(s);
  return 0;
}
