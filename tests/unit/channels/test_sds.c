/* SDS engine, with a fake clock and in-memory participants: Lamport rules and limits, sending,
 * acknowledgement by causal history and by bloom filter, retransmission and give-up, receiving
 * (duplicates, own, foreign, ephemeral, causal delivery, buffer limits, loss), SDS-R repair with
 * its timing, fetches, sync messages, the event queue limit, large histories. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/error.h"
#include "channels/sds.h"
#include "channels/sds_internal.h"
#include "channels_test_util.h"

#define T0 1763000000000ull

/* ---- harness -------------------------------------------------------------------------------- */

static ld_sds_config_t test_cfg(void) {
  ld_sds_config_t c;
  ld_sds_config_default(&c);
  c.random_seed = 42;
  c.sync_interval_ms = 0; /* the sync tests turn it on */
  return c;
}

static ld_sds_t *make(const ld_sds_config_t *c, const char *sender, uint64_t now) {
  ld_sds_t *s = NULL;
  assert_int_equal(ld_sds_new(c, "chan", sender, now, &s), 0);
  return s;
}

typedef struct events {
  ld_sds_event_t *v;
  size_t n, cap;
} events_t;

static void drain(ld_sds_t *s, events_t *out) {
  ld_sds_event_t ev;
  while (ld_sds_next_event(s, &ev)) {
    if (out->n == out->cap) {
      out->cap = out->cap ? 2 * out->cap : 16;
      out->v = realloc(out->v, out->cap * sizeof *out->v);
      assert_non_null(out->v);
    }
    out->v[out->n++] = ev;
  }
}

static void events_free(events_t *e) {
  for (size_t i = 0; i < e->n; i++)
    ld_sds_event_clear(&e->v[i]);
  free(e->v);
  memset(e, 0, sizeof *e);
}

/* Drains `s` into a fresh list (previous content released). */
static void take(ld_sds_t *s, events_t *e) {
  events_free(e);
  drain(s, e);
}

static size_t count(const events_t *e, ld_sds_event_type_t type) {
  size_t n = 0;
  for (size_t i = 0; i < e->n; i++)
    n += e->v[i].type == type;
  return n;
}

static const ld_sds_event_t *nth(const events_t *e, ld_sds_event_type_t type, size_t k) {
  for (size_t i = 0; i < e->n; i++)
    if (e->v[i].type == type && k-- == 0)
      return &e->v[i];
  fail_msg("no %s event #%zu", ld_sds_event_name(type), k);
  return NULL;
}

static size_t count_sends(const events_t *e, ld_sds_send_kind_t kind) {
  size_t n = 0;
  for (size_t i = 0; i < e->n; i++)
    n += e->v[i].type == LD_SDS_EV_SEND && e->v[i].send_kind == kind;
  return n;
}

static const ld_sds_event_t *nth_send(const events_t *e, ld_sds_send_kind_t kind, size_t k) {
  for (size_t i = 0; i < e->n; i++)
    if (e->v[i].type == LD_SDS_EV_SEND && e->v[i].send_kind == kind && k-- == 0)
      return &e->v[i];
  fail_msg("no %s send #%zu", ld_sds_send_kind_name(kind), k);
  return NULL;
}

static void discard(ld_sds_t *s) {
  events_t e = {0};
  drain(s, &e);
  events_free(&e);
}

static const uint8_t *text(const char *t) {
  return (const uint8_t *)t;
}

/* Sends `body` as message `id`; returns the SEND event's bytes (caller frees) in *wire. */
static void decode(const uint8_t *wire, size_t len, ld_sds_message_t *m);

static uint8_t *send_msg(ld_sds_t *s, uint64_t now, const char *id, const char *body, size_t *len) {
  assert_int_equal(ld_sds_send(s, now, id, text(body), strlen(body)), 0);
  events_t e = {0};
  drain(s, &e);
  const ld_sds_event_t *send = nth(&e, LD_SDS_EV_SEND, 0);
  assert_int_equal(send->send_kind, LD_SDS_SEND_CONTENT);
  assert_string_equal(send->message_id, id);
  /* the event names the Lamport timestamp it carries (the channel layer persists it) */
  ld_sds_message_t m;
  decode(send->data, send->len, &m);
  assert_true(send->lamport == m.lamport);
  ld_sds_message_clear(&m);
  uint8_t *wire = sds_memdup(send->data, send->len);
  *len = send->len;
  events_free(&e);
  return wire;
}

static ld_sds_rx_t recv_bytes(ld_sds_t *s, uint64_t now, const uint8_t *wire, size_t len) {
  ld_sds_rx_t rx = 0;
  char why[128] = "";
  int rc = ld_sds_receive(s, now, wire, len, NULL, 0, &rx, why, sizeof why);
  if (rc != 0)
    fail_msg("receive: %s (%s)", ld_errname(rc), why);
  return rx;
}

/* A message built field by field (for what no well-behaved participant sends). */
static uint8_t *craft(const char *sender, const char *id, bool has_lamport, uint64_t lamport,
                      const char *const *deps, size_t n_deps, const char *body, size_t *len) {
  ld_sds_history_entry_t hist[LD_SDS_MAX_CAUSAL_HISTORY];
  assert_true(n_deps <= LD_SDS_MAX_CAUSAL_HISTORY);
  for (size_t i = 0; i < n_deps; i++) {
    memset(&hist[i], 0, sizeof hist[i]);
    hist[i].message_id = deps[i];
    hist[i].message_id_len = strlen(deps[i]);
    hist[i].has_sender_id = true;
    hist[i].sender_id = sender;
    hist[i].sender_id_len = strlen(sender);
  }
  ld_sds_message_t m;
  ld_sds_message_init(&m);
  m.sender_id = sender;
  m.sender_id_len = strlen(sender);
  m.message_id = id;
  m.message_id_len = strlen(id);
  m.channel_id = "chan";
  m.channel_id_len = 4;
  m.has_lamport = has_lamport;
  m.lamport = lamport;
  m.causal_history = hist;
  m.causal_history_len = n_deps;
  if (body != NULL) {
    m.has_content = true;
    m.content = text(body);
    m.content_len = strlen(body);
  }
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_sds_message_encode(&m, &b), 0);
  *len = b.len;
  return b.data;
}

static void decode(const uint8_t *wire, size_t len, ld_sds_message_t *m) {
  ld_sds_message_init(m);
  assert_int_equal(ld_sds_message_decode(wire, len, m, NULL, 0), 0);
}

static ld_sds_stats_t stats(const ld_sds_t *s) {
  ld_sds_stats_t st;
  ld_sds_get_stats(s, &st);
  return st;
}

/* Runs every timer due up to `until`, in time order, collecting the events. */
static void run_until(ld_sds_t *s, uint64_t until, events_t *out) {
  for (;;) {
    uint64_t d = ld_sds_next_deadline(s);
    if (d > until)
      break;
    assert_int_equal(ld_sds_handle_timeout(s, d), 0);
    drain(s, out);
  }
}

/* ---- configuration and creation ------------------------------------------------------------- */

static void config_checks(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  assert_int_equal(ld_sds_config_check(&c), 0);
  c.possible_acks_threshold = 0;
  assert_int_equal(ld_sds_config_check(&c), LD_ERR_INVALID_ARG);
  c = test_cfg();
  c.repair_t_min_ms = c.repair_t_max_ms;
  assert_int_equal(ld_sds_config_check(&c), LD_ERR_INVALID_ARG);
  c = test_cfg();
  c.repair_t_max_ms = 1ull << 32;
  assert_int_equal(ld_sds_config_check(&c), LD_ERR_INVALID_ARG);
  c = test_cfg();
  c.causal_history_size = LD_SDS_MAX_CAUSAL_HISTORY + 1;
  assert_int_equal(ld_sds_config_check(&c), LD_ERR_INVALID_ARG);
  c = test_cfg();
  c.max_outgoing = 0;
  assert_int_equal(ld_sds_config_check(&c), LD_ERR_INVALID_ARG);
  c = test_cfg();
  c.bloom_error_rate = 0;
  assert_int_equal(ld_sds_config_check(&c), LD_ERR_INVALID_ARG);
  ld_sds_t *s = NULL;
  c = test_cfg();
  assert_int_equal(ld_sds_new(&c, "chan", "", T0, &s), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_sds_new(&c, "ch\xff", "me", T0, &s), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_sds_new(&c, NULL, "me", T0, &s), LD_ERR_INVALID_ARG);
  c.max_log = 0;
  assert_int_equal(ld_sds_new(&c, "chan", "me", T0, &s), LD_ERR_INVALID_ARG);
  assert_null(s);
  assert_int_equal(ld_sds_new(NULL, "chan", "me", T0, &s), 0); /* defaults */
  ld_sds_free(s);
}

/* ---- Lamport clock -------------------------------------------------------------------------- */

static uint64_t sent_lamport(ld_sds_t *s, uint64_t now, const char *id) {
  size_t len;
  uint8_t *wire = send_msg(s, now, id, id, &len);
  ld_sds_message_t m;
  decode(wire, len, &m);
  uint64_t l = m.lamport;
  ld_sds_message_clear(&m);
  free(wire);
  return l;
}

static void lamport_rules(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  ld_sds_t *a = make(&c, "alice", T0);
  assert_true(stats(a).lamport == T0); /* starts at now, in milliseconds */
  assert_true(sent_lamport(a, T0, "m1") == T0 + 1);
  assert_true(sent_lamport(a, T0, "m2") == T0 + 2);
  assert_true(sent_lamport(a, T0 + 1000, "m3") == T0 + 1000); /* back to wall time */
  /* a clock going backwards is read as the latest time seen */
  assert_true(sent_lamport(a, T0, "m4") == T0 + 1001);
  /* delivering a later timestamp moves the clock; an earlier one does not */
  size_t len;
  uint8_t *w = craft("bob", "b1", true, T0 + 5000, NULL, 0, "hi", &len);
  assert_int_equal(recv_bytes(a, T0 + 1000, w, len), LD_SDS_RX_DELIVERED);
  free(w);
  assert_true(stats(a).lamport == T0 + 5000);
  w = craft("bob", "b0", true, T0 - 50000, NULL, 0, "old", &len);
  assert_int_equal(recv_bytes(a, T0 + 1000, w, len), LD_SDS_RX_DELIVERED);
  free(w);
  assert_true(stats(a).lamport == T0 + 5000);
  assert_true(sent_lamport(a, T0 + 1000, "m5") == T0 + 5001);
  /* the log is ordered by (Lamport, ID): b0 first, b1 after m4 */
  const sds_log_t *l = &a->log;
  assert_string_equal(l->items[0]->id, "b0");
  assert_string_equal(l->items[l->len - 2]->id, "b1");
  assert_string_equal(l->items[l->len - 1]->id, "m5");
  ld_sds_free(a);
}

/* Equal timestamps are ordered by ascending message ID. */
static void log_orders_ties_by_id(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  ld_sds_t *a = make(&c, "alice", T0);
  const char *ids[] = {"cc", "a", "b", "ab"};
  for (size_t i = 0; i < 4; i++) {
    size_t len;
    uint8_t *w = craft("bob", ids[i], true, T0 + 7, NULL, 0, "x", &len);
    assert_int_equal(recv_bytes(a, T0, w, len), LD_SDS_RX_DELIVERED);
    free(w);
  }
  assert_string_equal(a->log.items[0]->id, "a");
  assert_string_equal(a->log.items[1]->id, "ab");
  assert_string_equal(a->log.items[2]->id, "b");
  assert_string_equal(a->log.items[3]->id, "cc");
  ld_sds_free(a);
}

/* At the top of uint64 the clock saturates instead of wrapping; with the default check a
 * timestamp far ahead of now is refused with a named error and changes nothing. */
static void lamport_at_limits(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  ld_sds_t *a = make(&c, "alice", T0);
  size_t len;
  uint8_t *w = craft("bob", "far", true, T0 + 2 * 86400000ull, NULL, 0, "x", &len);
  ld_sds_rx_t rx = 0;
  char why[128];
  assert_int_equal(ld_sds_receive(a, T0, w, len, NULL, 0, &rx, why, sizeof why), LD_ERR_OVERFLOW);
  assert_non_null(strstr(why, "ahead"));
  free(w);
  assert_true(stats(a).lamport == T0);
  assert_int_equal(stats(a).log_len, 0);
  assert_int_equal(stats(a).events_len, 0);
  assert_false(ld_bloom_lookup(&a->bloom, "far", 3));
  ld_sds_free(a);

  c.max_lamport_ahead_ms = 0; /* no check */
  a = make(&c, "alice", T0);
  w = craft("bob", "top", true, UINT64_MAX - 1, NULL, 0, "x", &len);
  assert_int_equal(recv_bytes(a, T0, w, len), LD_SDS_RX_DELIVERED);
  free(w);
  assert_true(stats(a).lamport == UINT64_MAX - 1);
  assert_true(sent_lamport(a, T0, "m1") == UINT64_MAX);
  assert_true(sent_lamport(a, T0, "m2") == UINT64_MAX); /* saturated, not 0 */
  assert_string_equal(a->log.items[a->log.len - 1]->id, "m2");
  ld_sds_free(a);
}

/* ---- sending -------------------------------------------------------------------------------- */

static void send_builds_the_message(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  ld_sds_t *a = make(&c, "alice", T0);
  size_t len;
  free(send_msg(a, T0, "m1", "one", &len));
  uint8_t hint[32];
  memset(hint, 0xa1, sizeof hint);
  assert_int_equal(ld_sds_set_retrieval_hint(a, "m1", hint, sizeof hint), 0);
  assert_int_equal(ld_sds_set_retrieval_hint(a, "nope", hint, sizeof hint), LD_ERR_NOT_FOUND);
  free(send_msg(a, T0, "m2", "two", &len));
  uint8_t *wire = send_msg(a, T0, "m3", "three", &len);
  ld_sds_message_t m;
  decode(wire, len, &m);
  assert_int_equal(ld_sds_message_class(&m), LD_SDS_CLASS_CONTENT);
  assert_string_equal(m.sender_id, "alice");
  assert_string_equal(m.channel_id, "chan");
  assert_string_equal(m.message_id, "m3");
  assert_memory_equal(m.content, "three", 5);
  /* the last two log entries, oldest first, with hint (when known) and sender */
  assert_int_equal(m.causal_history_len, 2);
  assert_string_equal(m.causal_history[0].message_id, "m1");
  assert_true(m.causal_history[0].has_retrieval_hint);
  assert_memory_equal(m.causal_history[0].retrieval_hint, hint, 32);
  assert_string_equal(m.causal_history[0].sender_id, "alice");
  assert_string_equal(m.causal_history[1].message_id, "m2");
  assert_false(m.causal_history[1].has_retrieval_hint);
  /* the bloom filter of js-waku's size holds the earlier IDs (not yet this one) */
  assert_int_equal(m.bloom_len, 18752);
  ld_bloom_params_t p = a->bloom.params;
  assert_true(ld_bloom_lookup_bytes(&p, m.bloom, "m1", 2));
  assert_true(ld_bloom_lookup_bytes(&p, m.bloom, "m2", 2));
  assert_false(ld_bloom_lookup_bytes(&p, m.bloom, "m3", 2));
  assert_int_equal(m.repair_request_len, 0);
  ld_sds_message_clear(&m);
  free(wire);
  assert_true(ld_sds_in_log(a, "m3"));
  assert_true(ld_bloom_lookup(&a->bloom, "m3", 2));
  assert_int_equal(stats(a).outgoing_len, 3);
  /* refused sends change nothing */
  assert_int_equal(ld_sds_send(a, T0, "m3", text("again"), 5), LD_ERR_EXISTS);
  assert_int_equal(ld_sds_send(a, T0, "m4", text(""), 0), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_sds_send(a, T0, "", text("x"), 1), LD_ERR_INVALID_ARG);
  assert_int_equal(stats(a).events_len, 0);
  assert_int_equal(stats(a).outgoing_len, 3);
  ld_sds_free(a);
}

static void ephemeral_messages(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  ld_sds_t *a = make(&c, "alice", T0);
  ld_sds_t *b = make(&c, "bob", T0);
  assert_int_equal(ld_sds_send_ephemeral(a, T0, "typing", text("..."), 3), 0);
  events_t e = {0};
  take(a, &e);
  const ld_sds_event_t *send = nth(&e, LD_SDS_EV_SEND, 0);
  assert_int_equal(send->send_kind, LD_SDS_SEND_EPHEMERAL);
  ld_sds_message_t m;
  decode(send->data, send->len, &m);
  assert_int_equal(ld_sds_message_class(&m), LD_SDS_CLASS_EPHEMERAL);
  assert_false(m.has_bloom);
  assert_int_equal(m.causal_history_len, 0);
  ld_sds_message_clear(&m);
  assert_int_equal(stats(a).outgoing_len, 0);
  assert_int_equal(stats(a).log_len, 0);
  assert_int_equal(recv_bytes(b, T0, send->data, send->len), LD_SDS_RX_EPHEMERAL);
  take(b, &e);
  assert_int_equal(e.n, 1);
  assert_int_equal(e.v[0].type, LD_SDS_EV_EPHEMERAL);
  assert_string_equal(e.v[0].sender_id, "alice");
  assert_memory_equal(e.v[0].data, "...", 3);
  assert_int_equal(stats(b).log_len, 0);
  assert_false(ld_bloom_lookup(&b->bloom, "typing", 6));
  events_free(&e);
  ld_sds_free(a);
  ld_sds_free(b);
}

/* ---- acknowledgement ------------------------------------------------------------------------ */

static void ack_by_causal_history(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  ld_sds_t *a = make(&c, "alice", T0);
  ld_sds_t *b = make(&c, "bob", T0);
  size_t len;
  uint8_t *m1 = send_msg(a, T0, "m1", "hello", &len);
  assert_int_equal(recv_bytes(b, T0 + 10, m1, len), LD_SDS_RX_DELIVERED);
  free(m1);
  events_t e = {0};
  take(b, &e);
  assert_int_equal(e.n, 1);
  assert_int_equal(e.v[0].type, LD_SDS_EV_DELIVERED);
  assert_string_equal(e.v[0].message_id, "m1");
  assert_string_equal(e.v[0].sender_id, "alice");
  assert_memory_equal(e.v[0].data, "hello", 5);
  uint8_t *x1 = send_msg(b, T0 + 20, "x1", "reply", &len);
  assert_int_equal(recv_bytes(a, T0 + 30, x1, len), LD_SDS_RX_DELIVERED);
  free(x1);
  take(a, &e);
  assert_int_equal(count(&e, LD_SDS_EV_ACKNOWLEDGED), 1);
  const ld_sds_event_t *ack = nth(&e, LD_SDS_EV_ACKNOWLEDGED, 0);
  assert_string_equal(ack->message_id, "m1");
  assert_int_equal(ack->count, 0); /* by causal history */
  assert_int_equal(stats(a).outgoing_len, 0);
  assert_int_equal(stats(a).acked_by_history, 1);
  /* nothing left to retransmit */
  run_until(a, T0 + 600000, &e);
  assert_int_equal(count(&e, LD_SDS_EV_SEND), 0);
  events_free(&e);
  ld_sds_free(a);
  ld_sds_free(b);
}

/* Bloom hits count until the threshold; below it the message is possibly acknowledged and
 * resent on the longer period. */
static void ack_by_bloom_threshold(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  ld_sds_config_t quiet = c;
  quiet.causal_history_size = 0; /* bob acknowledges through his bloom filter only */
  c.possible_acks_threshold = 3;
  ld_sds_t *a = make(&c, "alice", T0);
  ld_sds_t *b = make(&quiet, "bob", T0);
  size_t len;
  uint8_t *m1 = send_msg(a, T0, "m1", "hello", &len);
  recv_bytes(b, T0, m1, len);
  free(m1);
  discard(b);
  events_t e = {0};
  for (int i = 1; i <= 3; i++) {
    char id[8];
    snprintf(id, sizeof id, "x%d", i);
    uint8_t *x = send_msg(b, T0 + 1000 * (uint64_t)i, id, "x", &len);
    recv_bytes(a, T0 + 1000 * (uint64_t)i, x, len);
    free(x);
    take(a, &e);
    if (i < 3) {
      const ld_sds_event_t *p = nth(&e, LD_SDS_EV_POSSIBLY_ACKNOWLEDGED, 0);
      assert_string_equal(p->message_id, "m1");
      assert_int_equal(p->count, i);
      assert_int_equal(count(&e, LD_SDS_EV_ACKNOWLEDGED), 0);
      /* resent after possibly_acked_timeout_ms from the last send, not ack_timeout_ms */
      assert_true(ld_sds_next_deadline(a) == T0 + c.possibly_acked_timeout_ms);
    } else {
      const ld_sds_event_t *ack = nth(&e, LD_SDS_EV_ACKNOWLEDGED, 0);
      assert_string_equal(ack->message_id, "m1");
      assert_int_equal(ack->count, 3);
    }
  }
  assert_int_equal(stats(a).outgoing_len, 0);
  assert_int_equal(stats(a).acked_by_bloom, 1);
  events_free(&e);
  ld_sds_free(a);
  ld_sds_free(b);
}

static bool carries_bloom(const uint8_t *wire, size_t len) {
  ld_sds_message_t m;
  decode(wire, len, &m);
  bool has = m.has_bloom;
  ld_sds_message_clear(&m);
  return has;
}

/* One sync from `s` now (its bytes, caller frees). */
static uint8_t *sync_msg(ld_sds_t *s, uint64_t now, size_t *len) {
  assert_int_equal(ld_sds_sync_now(s, now), 1);
  events_t e = {0};
  drain(s, &e);
  const ld_sds_event_t *sync = nth_send(&e, LD_SDS_SEND_SYNC, 0);
  uint8_t *wire = sds_memdup(sync->data, sync->len);
  *len = sync->len;
  events_free(&e);
  return wire;
}

/* bloom_interval_ms: content carries the bloom filter at most once per interval, a sync always;
 * a message without it is delivered, and bloom acknowledgements still come through the syncs. */
static void bloom_filter_at_most_once_per_interval(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  c.bloom_interval_ms = 1000;
  ld_sds_config_t terse = c;
  terse.causal_history_size = 1; /* bob's history names his last message only */
  ld_sds_t *a = make(&c, "alice", T0), *b = make(&terse, "bob", T0);
  size_t len, big;
  uint8_t *m1 = send_msg(a, T0, "m1", "hello", &big);
  assert_true(carries_bloom(m1, big));
  assert_int_equal(recv_bytes(b, T0, m1, big), LD_SDS_RX_DELIVERED);
  free(m1);
  discard(b);
  uint8_t *m2 = send_msg(a, T0 + 500, "m2", "hello", &len);
  assert_false(carries_bloom(m2, len));
  assert_true(big > b->bloom.params.bytes && len < 128); /* its 18,752 bytes at js-waku's size */
  assert_int_equal(recv_bytes(b, T0 + 500, m2, len), LD_SDS_RX_DELIVERED);
  free(m2);
  discard(b);
  uint8_t *s1 = sync_msg(a, T0 + 600, &len);
  assert_true(carries_bloom(s1, len));
  free(s1);
  uint8_t *m3 = send_msg(a, T0 + 1500, "m3", "x", &len); /* 900 ms after the sync's */
  assert_false(carries_bloom(m3, len));
  free(m3);
  uint8_t *m4 = send_msg(a, T0 + 1600, "m4", "x", &len);
  assert_true(carries_bloom(m4, len));
  free(m4);
  discard(a);
  /* bob's x1 names m2 and carries his filter (m1: one hit), x2 names x1 and carries no filter,
   * his sync names x2 and carries the filter: m1's second hit acknowledges it, by bloom only */
  events_t e = {0};
  uint8_t *x1 = send_msg(b, T0 + 2000, "x1", "x", &len);
  assert_true(carries_bloom(x1, len));
  recv_bytes(a, T0 + 2000, x1, len);
  free(x1);
  take(a, &e);
  assert_string_equal(nth(&e, LD_SDS_EV_ACKNOWLEDGED, 0)->message_id, "m2");
  assert_int_equal(count(&e, LD_SDS_EV_ACKNOWLEDGED), 1);
  assert_string_equal(nth(&e, LD_SDS_EV_POSSIBLY_ACKNOWLEDGED, 0)->message_id, "m1");
  assert_int_equal(count(&e, LD_SDS_EV_POSSIBLY_ACKNOWLEDGED), 1);
  uint8_t *x2 = send_msg(b, T0 + 2100, "x2", "x", &len);
  assert_false(carries_bloom(x2, len));
  recv_bytes(a, T0 + 2100, x2, len);
  free(x2);
  take(a, &e);
  assert_int_equal(count(&e, LD_SDS_EV_POSSIBLY_ACKNOWLEDGED) + count(&e, LD_SDS_EV_ACKNOWLEDGED),
                   0);
  uint8_t *y = sync_msg(b, T0 + 2200, &len);
  assert_int_equal(recv_bytes(a, T0 + 2200, y, len), LD_SDS_RX_SYNC);
  free(y);
  take(a, &e);
  assert_int_equal(count(&e, LD_SDS_EV_ACKNOWLEDGED), 1);
  assert_string_equal(nth(&e, LD_SDS_EV_ACKNOWLEDGED, 0)->message_id, "m1");
  assert_int_equal(nth(&e, LD_SDS_EV_ACKNOWLEDGED, 0)->count, 2);
  assert_int_equal(stats(a).acked_by_bloom, 1);
  events_free(&e);
  ld_sds_free(a);
  ld_sds_free(b);
}

/* The retrieval hint of a logged message: set, compared, replaced. */
static void retrieval_hint_known(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  ld_sds_t *a = make(&c, "alice", T0);
  const uint8_t h1[4] = {1, 2, 3, 4}, h2[4] = {1, 2, 3, 5};
  assert_int_equal(ld_sds_set_retrieval_hint(a, "m1", h1, sizeof h1), LD_ERR_NOT_FOUND);
  assert_false(ld_sds_has_retrieval_hint(a, "m1", h1, sizeof h1));
  size_t len;
  free(send_msg(a, T0, "m1", "hello", &len));
  assert_false(ld_sds_has_retrieval_hint(a, "m1", h1, sizeof h1)); /* none yet */
  assert_int_equal(ld_sds_set_retrieval_hint(a, "m1", h1, sizeof h1), 0);
  assert_true(ld_sds_has_retrieval_hint(a, "m1", h1, sizeof h1));
  assert_false(ld_sds_has_retrieval_hint(a, "m1", h2, sizeof h2));
  assert_false(ld_sds_has_retrieval_hint(a, "m1", h1, 3));
  assert_int_equal(ld_sds_set_retrieval_hint(a, "m1", h2, sizeof h2), 0);
  assert_true(ld_sds_has_retrieval_hint(a, "m1", h2, sizeof h2));
  assert_false(ld_sds_has_retrieval_hint(a, "m1", h1, sizeof h1));
  ld_sds_free(a);
}

/* A bloom filter of another size is ignored (counted); the message is processed otherwise. */
static void wrong_size_bloom_filter(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  c.possible_acks_threshold = 1;
  ld_sds_config_t small = c;
  small.bloom_capacity = 100;
  small.causal_history_size = 0;
  ld_sds_t *a = make(&c, "alice", T0);
  ld_sds_t *b = make(&small, "bob", T0);
  size_t len;
  uint8_t *m1 = send_msg(a, T0, "m1", "hello", &len);
  recv_bytes(b, T0, m1, len);
  free(m1);
  uint8_t *x = send_msg(b, T0, "x1", "x", &len);
  assert_int_equal(recv_bytes(a, T0, x, len), LD_SDS_RX_DELIVERED);
  free(x);
  assert_int_equal(stats(a).bloom_size_mismatch, 1);
  assert_int_equal(stats(a).outgoing_len, 1); /* not acknowledged by the unreadable filter */
  assert_true(ld_sds_in_log(a, "x1"));
  /* truncated and empty filters too */
  const uint8_t *bloom = a->bloom.data;
  ld_sds_message_t m;
  ld_sds_message_init(&m);
  m.sender_id = "carol";
  m.sender_id_len = 5;
  m.channel_id = "chan";
  m.channel_id_len = 4;
  m.message_id = "c1";
  m.message_id_len = 2;
  m.has_lamport = true;
  m.lamport = T0;
  m.has_bloom = true;
  m.bloom = bloom;
  m.bloom_len = a->bloom.params.bytes - 1;
  ld_buf_t w;
  ld_buf_init(&w);
  assert_int_equal(ld_sds_message_encode(&m, &w), 0);
  assert_int_equal(recv_bytes(a, T0, w.data, w.len), LD_SDS_RX_SYNC);
  ld_buf_reset(&w);
  m.bloom_len = 0;
  assert_int_equal(ld_sds_message_encode(&m, &w), 0);
  assert_int_equal(recv_bytes(a, T0, w.data, w.len), LD_SDS_RX_SYNC);
  ld_buf_clear(&w);
  assert_int_equal(stats(a).bloom_size_mismatch, 3);
  assert_int_equal(stats(a).outgoing_len, 1);
  ld_sds_free(a);
  ld_sds_free(b);
}

/* ---- retransmission ------------------------------------------------------------------------- */

static void retransmits_then_gives_up(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  ld_sds_t *a = make(&c, "alice", T0);
  size_t len;
  uint8_t *m1 = send_msg(a, T0, "m1", "hello", &len);
  events_t e = {0};
  for (uint32_t i = 1; i <= c.max_retransmissions; i++) {
    uint64_t due = T0 + i * c.ack_timeout_ms;
    assert_true(ld_sds_next_deadline(a) == due);
    assert_int_equal(ld_sds_handle_timeout(a, due - 1), 0); /* not yet */
    assert_int_equal(stats(a).events_len, 0);
    assert_int_equal(ld_sds_handle_timeout(a, due), 0);
    take(a, &e);
    assert_int_equal(e.n, 1);
    assert_int_equal(e.v[0].type, LD_SDS_EV_SEND);
    assert_int_equal(e.v[0].send_kind, LD_SDS_SEND_RETRANSMISSION);
    assert_int_equal(e.v[0].len, len);
    assert_memory_equal(e.v[0].data, m1, len); /* identical bytes */
  }
  uint64_t last = T0 + (c.max_retransmissions + 1) * c.ack_timeout_ms;
  assert_true(ld_sds_next_deadline(a) == last);
  assert_int_equal(ld_sds_handle_timeout(a, last), 0);
  take(a, &e);
  assert_int_equal(e.n, 1);
  assert_int_equal(e.v[0].type, LD_SDS_EV_SEND_FAILED);
  assert_string_equal(e.v[0].message_id, "m1");
  assert_int_equal(e.v[0].error, LD_ERR_TIMEOUT);
  assert_int_equal(stats(a).outgoing_len, 0);
  assert_int_equal(stats(a).retransmitted, c.max_retransmissions);
  assert_true(ld_sds_next_deadline(a) == UINT64_MAX);
  assert_true(ld_sds_in_log(a, "m1")); /* still part of the channel's history */
  events_free(&e);
  free(m1);
  ld_sds_free(a);
}

/* A participant alone (nobody ever acknowledges) sending far more than the outgoing buffer
 * holds: the buffer stays at its limit, the oldest are given up with LD_ERR_LIMIT, the rest
 * with LD_ERR_TIMEOUT; every message ends in exactly one SEND_FAILED. */
static void never_acknowledged_stays_bounded(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  c.max_outgoing = 100;
  c.max_log = 200;
  ld_sds_t *a = make(&c, "alice", T0);
  events_t e = {0};
  size_t limit = 0, timeout = 0;
  for (int i = 0; i < 1000; i++) {
    char id[16];
    snprintf(id, sizeof id, "m%d", i);
    assert_int_equal(ld_sds_send(a, T0 + (uint64_t)i, id, text("payload"), 7), 0);
    assert_true(stats(a).outgoing_len <= c.max_outgoing);
    take(a, &e);
    limit += count(&e, LD_SDS_EV_SEND_FAILED);
  }
  assert_int_equal(limit, 900);
  assert_int_equal(stats(a).outgoing_len, 100);
  assert_int_equal(stats(a).log_len, 200);
  events_free(&e);
  run_until(a, T0 + 3600000, &e);
  for (size_t i = 0; i < e.n; i++)
    if (e.v[i].type == LD_SDS_EV_SEND_FAILED) {
      assert_int_equal(e.v[i].error, LD_ERR_TIMEOUT);
      timeout++;
    }
  assert_int_equal(timeout, 100);
  assert_int_equal(stats(a).outgoing_len, 0);
  assert_int_equal(stats(a).send_failed, 1000);
  events_free(&e);
  ld_sds_free(a);
}

/* ---- receiving ------------------------------------------------------------------------------ */

static void receive_filters(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  ld_sds_t *a = make(&c, "alice", T0);
  size_t len;
  uint8_t *w = craft("bob", "b1", true, T0, NULL, 0, "hi", &len);
  assert_int_equal(recv_bytes(a, T0, w, len), LD_SDS_RX_DELIVERED);
  assert_int_equal(recv_bytes(a, T0, w, len), LD_SDS_RX_DUPLICATE);
  free(w);
  w = craft("alice", "a1", true, T0, NULL, 0, "mine", &len);
  assert_int_equal(recv_bytes(a, T0, w, len), LD_SDS_RX_OWN);
  free(w);
  /* another channel */
  ld_sds_message_t m;
  ld_sds_message_init(&m);
  m.sender_id = "bob";
  m.sender_id_len = 3;
  m.message_id = "o1";
  m.message_id_len = 2;
  m.channel_id = "other";
  m.channel_id_len = 5;
  m.has_lamport = true;
  m.lamport = T0;
  m.has_content = true;
  m.content = text("x");
  m.content_len = 1;
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_sds_message_encode(&m, &b), 0);
  assert_int_equal(recv_bytes(a, T0, b.data, b.len), LD_SDS_RX_FOREIGN);
  ld_buf_clear(&b);
  /* neither content, sync nor ephemeral; malformed bytes */
  w = craft("bob", "b2", false, 0, NULL, 0, NULL, &len);
  char why[128];
  assert_int_equal(ld_sds_receive(a, T0, w, len, NULL, 0, NULL, why, sizeof why), LD_ERR_MALFORMED);
  free(w);
  assert_int_equal(ld_sds_receive(a, T0, text("\x0a\x05"), 2, NULL, 0, NULL, why, sizeof why),
                   LD_ERR_BAD_PROTOBUF);
  events_t e = {0};
  take(a, &e);
  assert_int_equal(e.n, 1); /* b1 delivered once */
  assert_int_equal(stats(a).log_len, 1);
  assert_int_equal(stats(a).duplicates, 1);
  assert_int_equal(stats(a).own, 1);
  assert_int_equal(stats(a).foreign, 1);
  assert_int_equal(stats(a).refused, 2);
  events_free(&e);
  ld_sds_free(a);
}

/* m3 → m2 → m1 arrive in reverse: buffered, missing dependencies reported, then all delivered
 * in causal order when m1 arrives. */
static void causal_delivery_through_the_buffer(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  ld_sds_t *a = make(&c, "alice", T0);
  const char *d1[] = {"m1"}, *d2[] = {"m2"};
  size_t l1, l2, l3;
  uint8_t *m1 = craft("bob", "m1", true, T0 + 1, NULL, 0, "one", &l1);
  uint8_t *m2 = craft("bob", "m2", true, T0 + 2, d1, 1, "two", &l2);
  uint8_t *m3 = craft("bob", "m3", true, T0 + 3, d2, 1, "three", &l3);
  events_t e = {0};
  assert_int_equal(recv_bytes(a, T0, m3, l3), LD_SDS_RX_BUFFERED);
  take(a, &e);
  assert_int_equal(e.n, 1);
  assert_int_equal(e.v[0].type, LD_SDS_EV_MISSING);
  assert_string_equal(e.v[0].message_id, "m2");
  assert_string_equal(e.v[0].sender_id, "bob");
  assert_int_equal(recv_bytes(a, T0, m2, l2), LD_SDS_RX_BUFFERED);
  take(a, &e);
  assert_int_equal(e.n, 1);
  assert_string_equal(nth(&e, LD_SDS_EV_MISSING, 0)->message_id, "m1");
  assert_int_equal(stats(a).missing_len, 1); /* m2 arrived: only m1 is missing */
  assert_int_equal(stats(a).incoming_len, 2);
  /* the buffered IDs are in the bloom filter (received) but not in the log */
  assert_true(ld_bloom_lookup(&a->bloom, "m3", 2));
  assert_false(ld_sds_in_log(a, "m3"));
  assert_int_equal(recv_bytes(a, T0, m2, l2), LD_SDS_RX_DUPLICATE);
  assert_int_equal(ld_sds_send(a, T0, "m3", text("mine"), 4), LD_ERR_EXISTS); /* buffered ID */
  assert_int_equal(recv_bytes(a, T0, m1, l1), LD_SDS_RX_DELIVERED);
  take(a, &e);
  assert_int_equal(e.n, 3);
  assert_string_equal(e.v[0].message_id, "m1");
  assert_string_equal(e.v[1].message_id, "m2");
  assert_memory_equal(e.v[1].data, "two", 3);
  assert_string_equal(e.v[2].message_id, "m3");
  assert_int_equal(stats(a).incoming_len, 0);
  assert_int_equal(stats(a).incoming_bytes, 0);
  assert_int_equal(stats(a).missing_len, 0);
  assert_true(stats(a).lamport == T0 + 3);
  assert_true(ld_sds_next_deadline(a) == UINT64_MAX); /* no timer left behind */
  events_free(&e);
  free(m1);
  free(m2);
  free(m3);
  ld_sds_free(a);
}

/* The incoming buffer holds at most max_incoming messages (and bytes): the oldest go, reported. */
static void incoming_buffer_is_bounded(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  c.max_incoming = 10;
  ld_sds_t *a = make(&c, "alice", T0);
  events_t e = {0};
  for (int i = 0; i < 15; i++) {
    char id[16], dep[16];
    snprintf(id, sizeof id, "m%d", i);
    snprintf(dep, sizeof dep, "gap%d", i);
    const char *deps[] = {dep};
    size_t len;
    uint8_t *w = craft("bob", id, true, T0, deps, 1, "x", &len);
    assert_int_equal(recv_bytes(a, T0, w, len), LD_SDS_RX_BUFFERED);
    free(w);
    assert_true(stats(a).incoming_len <= 10);
  }
  take(a, &e);
  assert_int_equal(count(&e, LD_SDS_EV_DROPPED), 5);
  assert_string_equal(nth(&e, LD_SDS_EV_DROPPED, 0)->message_id, "m0");
  assert_int_equal(nth(&e, LD_SDS_EV_DROPPED, 0)->error, LD_ERR_LIMIT);
  assert_string_equal(nth(&e, LD_SDS_EV_DROPPED, 4)->message_id, "m4");
  assert_int_equal(stats(a).incoming_len, 10);
  ld_sds_free(a);
  /* by bytes: messages of ~10 KiB each in a 50 KiB buffer */
  c = test_cfg();
  c.max_incoming_bytes = 50 * 1024;
  a = make(&c, "alice", T0);
  char *big = malloc(10001);
  memset(big, 'z', 10000);
  big[10000] = '\0';
  for (int i = 0; i < 10; i++) {
    char id[16];
    snprintf(id, sizeof id, "big%d", i);
    const char *deps[] = {"gap"};
    size_t len;
    uint8_t *w = craft("bob", id, true, T0, deps, 1, big, &len);
    recv_bytes(a, T0, w, len);
    free(w);
    assert_true(stats(a).incoming_bytes <= c.max_incoming_bytes);
  }
  assert_int_equal(stats(a).incoming_len, 4);
  free(big);
  events_free(&e);
  ld_sds_free(a);
}

/* A dependency that never comes is declared lost after lost_timeout_ms, and the message that
 * waited for it is delivered. */
static void lost_after_timeout(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  c.repair = false;
  ld_sds_t *a = make(&c, "alice", T0);
  const char *deps[] = {"gone"};
  size_t len;
  uint8_t *w = craft("bob", "m2", true, T0, deps, 1, "two", &len);
  assert_int_equal(recv_bytes(a, T0, w, len), LD_SDS_RX_BUFFERED);
  free(w);
  events_t e = {0};
  run_until(a, T0 + c.lost_timeout_ms - 1, &e);
  assert_int_equal(count(&e, LD_SDS_EV_DELIVERED), 0);
  assert_int_equal(count(&e, LD_SDS_EV_LOST), 0);
  run_until(a, T0 + c.lost_timeout_ms, &e);
  assert_int_equal(count(&e, LD_SDS_EV_LOST), 1);
  assert_string_equal(nth(&e, LD_SDS_EV_LOST, 0)->message_id, "gone");
  assert_string_equal(nth(&e, LD_SDS_EV_DELIVERED, 0)->message_id, "m2");
  assert_int_equal(stats(a).incoming_len, 0);
  assert_int_equal(stats(a).missing_len, 0);
  assert_int_equal(stats(a).lost, 1);
  /* a later message naming the lost one does not wait again */
  const char *deps3[] = {"gone", "m2"};
  w = craft("bob", "m3", true, T0, deps3, 2, "three", &len);
  assert_int_equal(recv_bytes(a, T0 + c.lost_timeout_ms, w, len), LD_SDS_RX_DELIVERED);
  free(w);
  /* and if it turns up after all it is delivered */
  w = craft("bob", "gone", true, T0, NULL, 0, "late", &len);
  assert_int_equal(recv_bytes(a, T0 + c.lost_timeout_ms, w, len), LD_SDS_RX_DELIVERED);
  free(w);
  assert_true(ld_sds_next_deadline(a) == UINT64_MAX);
  events_free(&e);
  ld_sds_free(a);
}

/* A chain whose head waits longest: at the first expiry the whole group resolves in causal
 * order; a dependency cycle inside the buffer (crafted) is cut instead of waiting forever. */
static void expiry_resolves_chains_and_cycles(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  c.repair = false;
  ld_sds_t *a = make(&c, "alice", T0);
  const char *d3[] = {"m2"}, *d2[] = {"m1"};
  size_t len;
  uint8_t *w = craft("bob", "m3", true, T0 + 3, d3, 1, "3", &len);
  recv_bytes(a, T0, w, len);
  free(w);
  w = craft("bob", "m2", true, T0 + 2, d2, 1, "2", &len);
  recv_bytes(a, T0 + 1000, w, len);
  free(w);
  events_t e = {0};
  discard(a);
  run_until(a, T0 + c.lost_timeout_ms, &e);
  assert_int_equal(e.n, 3);
  assert_int_equal(e.v[0].type, LD_SDS_EV_LOST);
  assert_string_equal(e.v[0].message_id, "m1");
  assert_string_equal(e.v[1].message_id, "m2");
  assert_string_equal(e.v[2].message_id, "m3");
  /* cycle: x waits for y, y for x, and z for itself */
  const char *dx[] = {"y"}, *dy[] = {"x"}, *dz[] = {"z", "z"};
  w = craft("bob", "x", true, T0 + 10, dx, 1, "x", &len);
  recv_bytes(a, T0 + c.lost_timeout_ms, w, len);
  free(w);
  w = craft("bob", "y", true, T0 + 11, dy, 1, "y", &len);
  recv_bytes(a, T0 + c.lost_timeout_ms, w, len);
  free(w);
  w = craft("bob", "z", true, T0 + 12, dz, 2, "z", &len);
  recv_bytes(a, T0 + c.lost_timeout_ms, w, len);
  free(w);
  take(a, &e);
  assert_int_equal(stats(a).incoming_len, 3);
  run_until(a, T0 + 2 * c.lost_timeout_ms, &e);
  assert_int_equal(count(&e, LD_SDS_EV_DELIVERED), 3);
  assert_int_equal(count(&e, LD_SDS_EV_LOST), 0);
  assert_int_equal(stats(a).incoming_len, 0);
  assert_int_equal(ld_hashmap_size(a->waiting), 0);
  assert_true(ld_sds_next_deadline(a) == UINT64_MAX);
  events_free(&e);
  ld_sds_free(a);
}

/* A message declared lost turns up later naming itself and two unknown messages, and the set of
 * remembered lost IDs forgets it before its wait ends: the self-dependency it never waited on
 * must not count as one it did (found by fuzz/sds_engine.c: it freed the message while another
 * dependency's waiter list still held it). */
static void late_message_forgotten_as_lost(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  c.repair = false;
  c.max_lost = 1;
  c.max_missing = 1;
  ld_sds_t *a = make(&c, "alice", T0);
  const char *d3[] = {"m1"}, *d1[] = {"m1", "z1", "z2"};
  size_t len;
  uint8_t *w = craft("bob", "m3", true, T0 + 3, d3, 1, "3", &len);
  recv_bytes(a, T0, w, len);
  free(w);
  events_t e = {0};
  run_until(a, T0 + c.lost_timeout_ms, &e);
  assert_string_equal(nth(&e, LD_SDS_EV_LOST, 0)->message_id, "m1");
  w = craft("bob", "m1", true, T0 + 1, d1, 3, "1", &len);
  uint64_t now = T0 + c.lost_timeout_ms;
  assert_int_equal(recv_bytes(a, now, w, len), LD_SDS_RX_BUFFERED);
  free(w);
  events_free(&e);
  run_until(a, now + c.lost_timeout_ms, &e);
  assert_int_equal(count(&e, LD_SDS_EV_LOST), 2); /* z1 (tracked), z2 (not: max_missing) */
  assert_int_equal(count(&e, LD_SDS_EV_DELIVERED), 1);
  assert_string_equal(nth(&e, LD_SDS_EV_DELIVERED, 0)->message_id, "m1");
  assert_int_equal(stats(a).incoming_len, 0);
  assert_int_equal(ld_hashmap_size(a->waiting), 0);
  events_free(&e);
  ld_sds_free(a);
}

/* ---- SDS-R ---------------------------------------------------------------------------------- */

/* T_req, T_resp and the response group equal js-waku's RepairManager for the same inputs. */
static void repair_timing_equals_js_waku(void **state) {
  (void)state;
  const json_t *rs = json_object_get(js_vectors(), "repair");
  assert_true(json_array_size(rs) >= 6);
  for (size_t i = 0; i < json_array_size(rs); i++) {
    const json_t *r = json_array_get(rs, i);
    ld_sds_config_t c = test_cfg();
    c.repair_t_min_ms = (uint64_t)json_integer_value(json_object_get(r, "tMin"));
    c.repair_t_max_ms = (uint64_t)json_integer_value(json_object_get(r, "tMax"));
    c.repair_response_groups = (uint32_t)json_integer_value(json_object_get(r, "groups"));
    ld_sds_t *s = make(&c, jstr(r, "self"), 0);
    const json_t *cases = json_object_get(r, "cases");
    for (size_t j = 0; j < json_array_size(cases); j++) {
      const json_t *k = json_array_get(cases, j);
      const char *id = jstr(k, "messageId"), *sender = jstr(k, "senderId");
      assert_int_equal(sds_repair_t_req(s, id, strlen(id)),
                       json_integer_value(json_object_get(k, "tReq")));
      assert_int_equal(sds_repair_t_resp(s, sender, strlen(sender), id, strlen(id)),
                       json_integer_value(json_object_get(k, "tResp")));
      assert_int_equal(sds_repair_in_group(s, sender, strlen(sender), id, strlen(id)),
                       json_is_true(json_object_get(k, "inGroup")));
    }
    ld_sds_free(s);
  }
}

/* Three participants; bob misses m1. At T_req bob's sync carries the request; alice (the
 * original sender) answers at once with m1 rebuilt from her cache; carol, who would have answered
 * later, sees alice's answer and stays silent; bob delivers m1 then m2. */
static void repair_request_and_answer(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  ld_sds_t *a = make(&c, "alice", T0), *b = make(&c, "bob", T0), *k = make(&c, "carol", T0);
  size_t l1, l2;
  uint8_t *m1 = send_msg(a, T0, "m1", "one", &l1);
  uint8_t hint[32];
  memset(hint, 0x11, sizeof hint);
  assert_int_equal(ld_sds_set_retrieval_hint(a, "m1", hint, sizeof hint), 0);
  uint8_t *m2 = send_msg(a, T0 + 1, "m2", "two", &l2);
  recv_bytes(k, T0 + 2, m1, l1);
  recv_bytes(k, T0 + 2, m2, l2);
  assert_int_equal(recv_bytes(b, T0 + 2, m2, l2), LD_SDS_RX_BUFFERED);
  events_t e = {0};
  take(b, &e);
  const ld_sds_event_t *miss = nth(&e, LD_SDS_EV_MISSING, 0);
  assert_string_equal(miss->message_id, "m1");
  assert_int_equal(miss->hint_len, 32);
  assert_string_equal(miss->sender_id, "alice");
  discard(a);
  discard(k);
  /* bob's request waits until T_req, within [T_min, T_max) */
  uint64_t t_req = T0 + 2 + (sds_repair_t_req(b, "m1", 2) - b->now);
  assert_true(t_req >= T0 + 2 + c.repair_t_min_ms && t_req < T0 + 2 + c.repair_t_max_ms);
  assert_true(ld_sds_next_deadline(b) == t_req);
  events_free(&e);
  run_until(b, t_req, &e); /* the missing timer arms the sync that carries the request */
  assert_int_equal(count(&e, LD_SDS_EV_SEND), 1);
  const ld_sds_event_t *sync = nth(&e, LD_SDS_EV_SEND, 0);
  assert_int_equal(sync->send_kind, LD_SDS_SEND_SYNC);
  ld_sds_message_t m;
  decode(sync->data, sync->len, &m);
  assert_int_equal(ld_sds_message_class(&m), LD_SDS_CLASS_SYNC);
  assert_int_equal(m.repair_request_len, 1);
  assert_string_equal(m.repair_request[0].message_id, "m1");
  assert_string_equal(m.repair_request[0].sender_id, "alice");
  assert_memory_equal(m.repair_request[0].retrieval_hint, hint, 32);
  ld_sds_message_clear(&m);
  assert_int_equal(stats(b).repair_requests_sent, 1);
  /* alice and carol get the request */
  assert_int_equal(recv_bytes(a, t_req, sync->data, sync->len), LD_SDS_RX_SYNC);
  assert_int_equal(recv_bytes(k, t_req, sync->data, sync->len), LD_SDS_RX_SYNC);
  assert_int_equal(stats(k).responses_len, 1);
  uint64_t carol_at = sds_repair_t_resp(k, "alice", 5, "m1", 2);
  assert_true(carol_at > t_req);
  assert_int_equal(stats(a).responses_len, 1);
  events_t ea = {0};
  assert_int_equal(ld_sds_handle_timeout(a, t_req), 0); /* distance 0: at once */
  take(a, &ea);
  assert_int_equal(count_sends(&ea, LD_SDS_SEND_REPAIR), 1);
  const ld_sds_event_t *rep = nth_send(&ea, LD_SDS_SEND_REPAIR, 0);
  assert_string_equal(rep->message_id, "m1");
  decode(rep->data, rep->len, &m);
  assert_string_equal(m.sender_id, "alice");
  assert_memory_equal(m.content, "one", 3);
  assert_false(m.has_bloom); /* rebuilt from the cache, without the bloom filter */
  ld_sds_message_clear(&m);
  /* carol sees the answer (a duplicate for her) and drops her own */
  assert_int_equal(recv_bytes(k, t_req + 5, rep->data, rep->len), LD_SDS_RX_DUPLICATE);
  assert_int_equal(stats(k).responses_len, 0);
  run_until(k, carol_at + 1000, &e);
  assert_int_equal(stats(k).repairs_answered, 0);
  /* bob repairs the gap */
  events_t eb = {0};
  assert_int_equal(recv_bytes(b, t_req + 5, rep->data, rep->len), LD_SDS_RX_DELIVERED);
  take(b, &eb);
  assert_int_equal(count(&eb, LD_SDS_EV_DELIVERED), 2);
  assert_string_equal(nth(&eb, LD_SDS_EV_DELIVERED, 0)->message_id, "m1");
  assert_string_equal(nth(&eb, LD_SDS_EV_DELIVERED, 1)->message_id, "m2");
  assert_int_equal(stats(b).missing_len, 0);
  events_free(&e);
  events_free(&ea);
  events_free(&eb);
  free(m1);
  free(m2);
  ld_sds_free(a);
  ld_sds_free(b);
  ld_sds_free(k);
}

/* Someone else's request for the same message holds ours back; an unanswered request is sent
 * again after T_max, at most repair_max_requests times, riding on content messages too. */
static void repair_request_suppression_and_retries(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  c.lost_timeout_ms = 0; /* never lost: only requests here */
  ld_sds_t *b = make(&c, "bob", T0), *d = make(&c, "dave", T0);
  const char *deps[] = {"m1"};
  size_t len;
  uint8_t *m2 = craft("alice", "m2", true, T0, deps, 1, "two", &len);
  recv_bytes(b, T0, m2, len);
  recv_bytes(d, T0, m2, len);
  free(m2);
  discard(b);
  discard(d);
  uint64_t tb = ld_sds_next_deadline(b), td = ld_sds_next_deadline(d);
  /* whoever is due first asks; the other then waits T_max more */
  ld_sds_t *first = tb <= td ? b : d, *second = tb <= td ? d : b;
  uint64_t t1 = tb <= td ? tb : td, t2 = tb <= td ? td : tb;
  events_t e = {0};
  run_until(first, t1, &e);
  const ld_sds_event_t *sync = nth(&e, LD_SDS_EV_SEND, 0);
  recv_bytes(second, t1, sync->data, sync->len);
  discard(second);
  assert_true(ld_sds_next_deadline(second) >= t1 + c.repair_t_max_ms);
  events_t e2 = {0};
  run_until(second, t2, &e2);
  assert_int_equal(count(&e2, LD_SDS_EV_SEND), 0);
  /* the first asks again after T_max; a content message sent while the request is due carries
   * it (before any sync does) */
  uint64_t again = t1 + c.repair_t_max_ms;
  assert_true(ld_sds_next_deadline(first) == again);
  ld_sds_t *f = first;
  events_free(&e);
  assert_int_equal(ld_sds_send(f, again, "own", text("x"), 1), 0);
  take(f, &e);
  ld_sds_message_t m;
  decode(nth(&e, LD_SDS_EV_SEND, 0)->data, nth(&e, LD_SDS_EV_SEND, 0)->len, &m);
  assert_int_equal(m.repair_request_len, 1);
  assert_string_equal(m.repair_request[0].message_id, "m1");
  ld_sds_message_clear(&m);
  assert_int_equal(stats(f).repair_requests_sent, 2);
  events_free(&e);
  /* the third and last request goes out on a sync after another T_max; then no more */
  run_until(f, again + 10 * c.repair_t_max_ms, &e);
  assert_int_equal(count_sends(&e, LD_SDS_SEND_SYNC), 1);
  assert_int_equal(stats(f).repair_requests_sent, c.repair_max_requests);
  events_free(&e);
  events_free(&e2);
  ld_sds_free(b);
  ld_sds_free(d);
}

/* With T_min 0 a request can be due the moment the gap is seen: a sync carries it at once. */
static void repair_request_due_at_once(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  c.repair_t_min_ms = 0;
  c.repair_t_max_ms = 1;
  ld_sds_t *b = make(&c, "bob", T0);
  const char *deps[] = {"m1"};
  size_t len;
  uint8_t *m2 = craft("alice", "m2", true, T0, deps, 1, "two", &len);
  recv_bytes(b, T0, m2, len);
  free(m2);
  discard(b);
  assert_true(ld_sds_next_deadline(b) == T0);
  events_t e = {0};
  run_until(b, T0, &e);
  assert_int_equal(count_sends(&e, LD_SDS_SEND_SYNC), 1);
  ld_sds_message_t m;
  decode(nth_send(&e, LD_SDS_SEND_SYNC, 0)->data, nth_send(&e, LD_SDS_SEND_SYNC, 0)->len, &m);
  assert_int_equal(m.repair_request_len, 1);
  ld_sds_message_clear(&m);
  events_free(&e);
  ld_sds_free(b);
}

/* Only a participant that holds the message, and with its sender ID, schedules an answer; with
 * several response groups only members do. */
static void repair_answer_conditions(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  ld_sds_t *k = make(&c, "carol", T0);
  size_t len;
  uint8_t *m1 = craft("alice", "m1", true, T0, NULL, 0, "one", &len);
  recv_bytes(k, T0, m1, len);
  free(m1);
  ld_sds_history_entry_t req[3];
  memset(req, 0, sizeof req);
  req[0].message_id = "m1";
  req[0].message_id_len = 2; /* no sender: cannot tell the group */
  req[1].message_id = "unknown";
  req[1].message_id_len = 7;
  req[1].has_sender_id = true;
  req[1].sender_id = "alice";
  req[1].sender_id_len = 5;
  ld_sds_message_t m;
  ld_sds_message_init(&m);
  m.sender_id = "bob";
  m.sender_id_len = 3;
  m.channel_id = "chan";
  m.channel_id_len = 4;
  m.message_id = "sync-1";
  m.message_id_len = 6;
  m.has_lamport = true;
  m.lamport = T0;
  m.repair_request = req;
  m.repair_request_len = 2;
  ld_buf_t w;
  ld_buf_init(&w);
  assert_int_equal(ld_sds_message_encode(&m, &w), 0);
  recv_bytes(k, T0, w.data, w.len);
  assert_int_equal(stats(k).responses_len, 0);
  /* the same with the sender: scheduled */
  req[0].has_sender_id = true;
  req[0].sender_id = "alice";
  req[0].sender_id_len = 5;
  ld_buf_reset(&w);
  assert_int_equal(ld_sds_message_encode(&m, &w), 0);
  recv_bytes(k, T0, w.data, w.len);
  assert_int_equal(stats(k).responses_len, 1);
  ld_buf_clear(&w);
  ld_sds_free(k);
  /* with 64 response groups, carol answers only for the messages of her group (about 1 in 64) */
  c.repair_response_groups = 64;
  k = make(&c, "carol", T0);
  size_t members = 0;
  for (int i = 0; i < 6400; i++) {
    char id[16];
    snprintf(id, sizeof id, "g%d", i);
    members += sds_repair_in_group(k, "alice", 5, id, strlen(id));
    assert_true(sds_repair_in_group(k, "carol", 5, id, strlen(id))); /* own messages: always */
  }
  assert_true(members > 50 && members < 200);
  ld_sds_free(k);
}

/* With a retrieval hint, the caller is asked to fetch the dependency from a store: at once when
 * repair is off, after fetch_delay_ms otherwise, every fetch_interval_ms, max_fetches times. */
static void fetch_events(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  c.repair = false;
  ld_sds_t *a = make(&c, "alice", T0);
  ld_sds_history_entry_t dep = {0};
  uint8_t hint[32];
  memset(hint, 0x5a, sizeof hint);
  dep.message_id = "m1";
  dep.message_id_len = 2;
  dep.has_retrieval_hint = true;
  dep.retrieval_hint = hint;
  dep.retrieval_hint_len = 32;
  ld_sds_message_t m;
  ld_sds_message_init(&m);
  m.sender_id = "bob";
  m.sender_id_len = 3;
  m.channel_id = "chan";
  m.channel_id_len = 4;
  m.message_id = "m2";
  m.message_id_len = 2;
  m.has_lamport = true;
  m.lamport = T0;
  m.causal_history = &dep;
  m.causal_history_len = 1;
  m.has_content = true;
  m.content = text("two");
  m.content_len = 3;
  ld_buf_t w;
  ld_buf_init(&w);
  assert_int_equal(ld_sds_message_encode(&m, &w), 0);
  recv_bytes(a, T0, w.data, w.len);
  events_t e = {0};
  take(a, &e);
  run_until(a, T0 + 60000, &e);
  assert_int_equal(count(&e, LD_SDS_EV_FETCH), c.max_fetches);
  for (uint32_t i = 0; i < c.max_fetches; i++) {
    const ld_sds_event_t *f = nth(&e, LD_SDS_EV_FETCH, i);
    assert_string_equal(f->message_id, "m1");
    assert_int_equal(f->hint_len, 32);
    assert_memory_equal(f->hint, hint, 32);
  }
  assert_int_equal(stats(a).fetches, c.max_fetches);
  /* the fetched message is fed back like any received one */
  size_t len;
  uint8_t *m1 = craft("bob", "m1", true, T0 - 1, NULL, 0, "one", &len);
  assert_int_equal(ld_sds_receive(a, T0 + 60000, m1, len, hint, 32, NULL, NULL, 0), 0);
  free(m1);
  take(a, &e);
  assert_int_equal(count(&e, LD_SDS_EV_DELIVERED), 2);
  ld_buf_clear(&w);
  events_free(&e);
  ld_sds_free(a);
  /* with repair on, the first fetch waits fetch_delay_ms */
  c = test_cfg();
  a = make(&c, "alice", T0);
  ld_buf_init(&w);
  assert_int_equal(ld_sds_message_encode(&m, &w), 0);
  recv_bytes(a, T0, w.data, w.len);
  run_until(a, T0 + c.fetch_delay_ms - 1, &e);
  assert_int_equal(count(&e, LD_SDS_EV_FETCH), 0);
  run_until(a, T0 + c.fetch_delay_ms, &e);
  assert_int_equal(count(&e, LD_SDS_EV_FETCH), 1);
  ld_buf_clear(&w);
  events_free(&e);
  ld_sds_free(a);
}

/* ---- sync messages -------------------------------------------------------------------------- */

static void sync_messages(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  c.sync_interval_ms = 30000;
  ld_sds_t *a = make(&c, "alice", T0), *b = make(&c, "bob", T0);
  uint64_t first = ld_sds_next_deadline(a);
  assert_true(first >= T0 && first < T0 + 30000);
  /* nothing to carry yet: no sync, rescheduled within twice the interval */
  events_t e = {0};
  assert_int_equal(ld_sds_handle_timeout(a, first), 0);
  take(a, &e);
  assert_int_equal(e.n, 0);
  assert_true(ld_sds_next_deadline(a) < first + 60000);
  assert_int_equal(ld_sds_sync_now(a, first), 0);
  /* bob sends x1, alice delivers it; alice's next sync acknowledges it */
  size_t len;
  uint8_t *x1 = send_msg(b, T0, "x1", "x", &len);
  recv_bytes(a, T0 + 1, x1, len);
  free(x1);
  discard(a);
  uint64_t due = ld_sds_next_deadline(a);
  assert_true(due < T0 + 1 + 15000); /* content received: half the interval */
  assert_int_equal(ld_sds_handle_timeout(a, due), 0);
  take(a, &e);
  const ld_sds_event_t *sync = nth(&e, LD_SDS_EV_SEND, 0);
  assert_int_equal(sync->send_kind, LD_SDS_SEND_SYNC);
  ld_sds_message_t m;
  decode(sync->data, sync->len, &m);
  assert_int_equal(ld_sds_message_class(&m), LD_SDS_CLASS_SYNC);
  assert_int_equal(strncmp(m.message_id, "sync-", 5), 0);
  assert_int_equal(m.causal_history_len, 1);
  assert_string_equal(m.causal_history[0].message_id, "x1");
  assert_true(m.lamport > T0);
  ld_sds_message_clear(&m);
  /* sync messages are not logged, buffered or put in the bloom filter */
  assert_int_equal(stats(a).log_len, 1);
  assert_int_equal(stats(a).outgoing_len, 0);
  events_t eb = {0};
  assert_int_equal(recv_bytes(b, due, sync->data, sync->len), LD_SDS_RX_SYNC);
  take(b, &eb);
  assert_string_equal(nth(&eb, LD_SDS_EV_ACKNOWLEDGED, 0)->message_id, "x1");
  assert_int_equal(stats(b).log_len, 1);
  assert_int_equal(stats(b).syncs_received, 1);
  decode(sync->data, sync->len, &m);
  assert_false(ld_bloom_lookup(&b->bloom, m.message_id, m.message_id_len));
  ld_sds_message_clear(&m);
  /* a sync naming an unknown message reveals the gap */
  assert_int_equal(ld_sds_send(a, due, "a1", text("y"), 1), 0);
  discard(a);
  assert_int_equal(ld_sds_sync_now(a, due + 1), 1);
  take(a, &e);
  recv_bytes(b, due + 1, nth(&e, LD_SDS_EV_SEND, 0)->data, nth(&e, LD_SDS_EV_SEND, 0)->len);
  take(b, &eb);
  assert_string_equal(nth(&eb, LD_SDS_EV_MISSING, 0)->message_id, "a1");
  events_free(&e);
  events_free(&eb);
  ld_sds_free(a);
  ld_sds_free(b);
}

/* a sends m0..m<n-1> (body "x") at T0; b delivers each at T0 + 1. b's events go to `into`,
 * or are dropped when it is NULL. */
static void send_burst(ld_sds_t *a, ld_sds_t *b, int n, events_t *into) {
  for (int i = 0; i < n; i++) {
    char id[16];
    snprintf(id, sizeof id, "m%d", i);
    size_t len;
    uint8_t *wire = send_msg(a, T0, id, "x", &len);
    assert_int_equal(recv_bytes(b, T0 + 1, wire, len), LD_SDS_RX_DELIVERED);
    free(wire);
    if (into != NULL)
      drain(b, into);
  }
  if (into == NULL)
    discard(b);
}

/* Runs b's next timer, due within round + 1 acknowledgement sync delays (100 ms) of T0 + 1: it
 * sends one sync, which a receives. Adds the acknowledgements that brings a to *acked and
 * returns the time. */
static uint64_t ack_sync_round(ld_sds_t *b, ld_sds_t *a, int round, size_t *acked) {
  uint64_t now = ld_sds_next_deadline(b);
  assert_true(now <= T0 + 1 + 100 * (uint64_t)(round + 1));
  assert_int_equal(ld_sds_handle_timeout(b, now), 0);
  events_t e = {0}, ea = {0};
  drain(b, &e);
  assert_int_equal(count_sends(&e, LD_SDS_SEND_SYNC), 1);
  const ld_sds_event_t *sync = nth_send(&e, LD_SDS_SEND_SYNC, 0);
  assert_int_equal(recv_bytes(a, now, sync->data, sync->len), LD_SDS_RX_SYNC);
  drain(a, &ea);
  *acked += count(&ea, LD_SDS_EV_ACKNOWLEDGED);
  events_free(&e);
  events_free(&ea);
  return now;
}

/* With ack_sync_delay_ms, a burst received is acknowledged by syncs within a few delays: one
 * sync at most the delay after the first receipt, and as the burst exceeds what a causal history
 * names, one more, so that every message is in possible_acks_threshold (2) bloom filters. Then
 * the syncs stop. (Without it, the next sync is the random periodic one: up to 30 s.) */
static void acknowledgement_syncs_follow_a_burst(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  c.sync_interval_ms = 30000;
  c.ack_sync_delay_ms = 100;
  ld_sds_t *a = make(&c, "alice", T0), *b = make(&c, "bob", T0);
  send_burst(a, b, 10, NULL);
  assert_true(ld_sds_next_deadline(b) <= T0 + 1 + 100);
  size_t acked = 0;
  uint64_t now = T0 + 1;
  for (int round = 0; round < 2; round++)
    now = ack_sync_round(b, a, round, &acked);
  assert_int_equal(acked, 10); /* 2 by the causal history, 8 by two bloom hits */
  assert_int_equal(stats(a).outgoing_len, 0);
  assert_int_equal(stats(b).ack_syncs_sent, 2);
  assert_true(ld_sds_next_deadline(b) > now + 1000); /* only the periodic sync is left */
  ld_sds_free(a);
  ld_sds_free(b);
}

/* With ack_sync_every, a burst received brings an acknowledgement sync at once per that many
 * content messages, without waiting for ack_sync_delay_ms: a sender's outgoing buffer, which a
 * message leaves only when acknowledged, drains as fast as the burst arrives. The delayed syncs
 * still follow and acknowledge the tail. */
static void acknowledgement_syncs_keep_pace_with_a_burst(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  c.sync_interval_ms = 30000;
  c.ack_sync_delay_ms = 100;
  c.ack_sync_every = 4;
  ld_sds_t *a = make(&c, "alice", T0), *b = make(&c, "bob", T0);
  events_t e = {0}, ea = {0};
  send_burst(a, b, 10, &e);
  /* after m3 and m7, before any timer: each names the last two received and has every message
   * received so far in its bloom filter */
  assert_int_equal(count_sends(&e, LD_SDS_SEND_SYNC), 2);
  assert_int_equal(stats(b).ack_syncs_sent, 2);
  for (size_t k = 0; k < 2; k++) {
    const ld_sds_event_t *sync = nth_send(&e, LD_SDS_SEND_SYNC, k);
    assert_int_equal(recv_bytes(a, T0 + 2, sync->data, sync->len), LD_SDS_RX_SYNC);
  }
  take(a, &ea);
  /* m2, m3 (history of the first), m6, m7 (of the second), m0, m1 (in both filters) */
  size_t acked = count(&ea, LD_SDS_EV_ACKNOWLEDGED);
  assert_int_equal(acked, 6);
  assert_int_equal(stats(a).outgoing_len, 4);
  /* the delayed syncs acknowledge the rest */
  for (int round = 0; round < 2 && stats(a).outgoing_len > 0; round++)
    ack_sync_round(b, a, round, &acked);
  assert_int_equal(acked, 10);
  assert_int_equal(stats(a).outgoing_len, 0);
  events_free(&e);
  events_free(&ea);
  ld_sds_free(a);
  ld_sds_free(b);
}

/* ---- limits --------------------------------------------------------------------------------- */

static void event_queue_limit(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  c.max_events = 3;
  ld_sds_t *a = make(&c, "alice", T0);
  for (int i = 0; i < 3; i++) {
    char id[8];
    snprintf(id, sizeof id, "m%d", i);
    assert_int_equal(ld_sds_send(a, T0, id, text("x"), 1), 0);
  }
  assert_int_equal(ld_sds_send(a, T0, "m3", text("x"), 1), LD_ERR_AGAIN);
  assert_int_equal(ld_sds_handle_timeout(a, T0 + 60000), LD_ERR_AGAIN);
  size_t len;
  uint8_t *w = craft("bob", "b", true, T0, NULL, 0, "x", &len);
  assert_int_equal(ld_sds_receive(a, T0, w, len, NULL, 0, NULL, NULL, 0), LD_ERR_AGAIN);
  assert_false(ld_sds_in_log(a, "b"));
  discard(a);
  assert_int_equal(ld_sds_receive(a, T0, w, len, NULL, 0, NULL, NULL, 0), 0);
  assert_int_equal(ld_sds_send(a, T0, "m3", text("x"), 1), 0);
  free(w);
  ld_sds_free(a);
}

/* The log keeps max_log entries, the repair cache repair_cache_max, the bloom filter is rebuilt
 * when full and still holds the recent IDs. */
static void log_cache_and_bloom_bounds(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  c.max_log = 100;
  c.repair_cache_max = 10;
  c.bloom_capacity = 50;
  c.bloom_error_rate = 0.01;
  ld_sds_t *a = make(&c, "alice", T0);
  for (int i = 0; i < 300; i++) {
    char id[16];
    snprintf(id, sizeof id, "b%03d", i);
    size_t len;
    uint8_t *w = craft("bob", id, true, T0 + (uint64_t)i, NULL, 0, "x", &len);
    recv_bytes(a, T0, w, len);
    free(w);
    discard(a);
  }
  assert_int_equal(stats(a).log_len, 100);
  assert_string_equal(a->log.items[0]->id, "b200");
  assert_false(ld_sds_in_log(a, "b199"));
  assert_int_equal(stats(a).repair_cache_len, 10);
  assert_non_null(a->log.items[99]->cached);
  assert_null(a->log.items[89]->cached);
  assert_true(stats(a).bloom_rebuilds >= 5);
  assert_true(a->bloom.n_items <= 50);
  for (int i = 290; i < 300; i++) {
    char id[16];
    snprintf(id, sizeof id, "b%03d", i);
    assert_true(ld_bloom_lookup(&a->bloom, id, strlen(id)));
  }
  ld_sds_free(a);
}

/* 2 000 messages received newest first: each waits, and the oldest releases them all in causal
 * order (the cascade is linear, not quadratic); then a message naming 1 000 unknown messages
 * tracks at most max_missing of them. */
static void thousands_of_dependencies(void **state) {
  (void)state;
  ld_sds_config_t c = test_cfg();
  c.max_incoming = 4000;
  c.max_missing = 4000;
  ld_sds_t *b = make(&c, "bob", T0), *a = make(&c, "alice", T0);
  enum { N = 2000 };
  uint8_t **wires = calloc(N, sizeof *wires);
  size_t *lens = calloc(N, sizeof *lens);
  for (int i = 0; i < N; i++) {
    char id[16];
    snprintf(id, sizeof id, "m%04d", i);
    wires[i] = send_msg(b, T0 + (uint64_t)i, id, id, &lens[i]);
  }
  for (int i = N - 1; i > 0; i--)
    assert_int_equal(recv_bytes(a, T0 + N, wires[i], lens[i]), LD_SDS_RX_BUFFERED);
  discard(a);
  assert_int_equal(stats(a).incoming_len, N - 1);
  assert_int_equal(recv_bytes(a, T0 + N, wires[0], lens[0]), LD_SDS_RX_DELIVERED);
  events_t e = {0};
  take(a, &e);
  assert_int_equal(count(&e, LD_SDS_EV_DELIVERED), N);
  for (int i = 0; i < N; i++) {
    char id[16];
    snprintf(id, sizeof id, "m%04d", i);
    assert_string_equal(nth(&e, LD_SDS_EV_DELIVERED, (size_t)i)->message_id, id);
  }
  assert_int_equal(stats(a).incoming_len, 0);
  assert_int_equal(stats(a).missing_len, 0);
  for (int i = 0; i < N; i++)
    free(wires[i]);
  free(wires);
  free(lens);
  events_free(&e);
  ld_sds_free(a);
  ld_sds_free(b);

  c = test_cfg();
  c.max_missing = 300;
  a = make(&c, "alice", T0);
  static char names[LD_SDS_MAX_CAUSAL_HISTORY][16];
  const char *deps[LD_SDS_MAX_CAUSAL_HISTORY];
  for (size_t i = 0; i < LD_SDS_MAX_CAUSAL_HISTORY; i++) {
    snprintf(names[i], sizeof names[i], "u%zu", i);
    deps[i] = names[i];
  }
  size_t len;
  uint8_t *w = craft("bob", "wide", true, T0, deps, LD_SDS_MAX_CAUSAL_HISTORY, "x", &len);
  assert_int_equal(recv_bytes(a, T0, w, len), LD_SDS_RX_BUFFERED);
  free(w);
  take(a, &e);
  assert_int_equal(count(&e, LD_SDS_EV_MISSING), 300);
  assert_int_equal(stats(a).missing_len, 300);
  assert_int_equal(stats(a).missing_untracked, LD_SDS_MAX_CAUSAL_HISTORY - 300);
  /* at expiry every unmet dependency is declared lost and the message delivered */
  run_until(a, T0 + c.lost_timeout_ms, &e);
  assert_int_equal(count(&e, LD_SDS_EV_LOST), LD_SDS_MAX_CAUSAL_HISTORY);
  assert_int_equal(count(&e, LD_SDS_EV_DELIVERED), 1);
  assert_int_equal(stats(a).lost_len, c.max_lost); /* remembered lost IDs stay bounded */
  events_free(&e);
  ld_sds_free(a);
}

static void lip_message_id(void **state) {
  (void)state;
  char id[65];
  ld_sds_message_id("alice", 1763000000000000000ull, text("hello"), 5, id);
  /* keccak256("alice" "1763000000000000000" "hello") by @noble/hashes */
  assert_string_equal(id, "4080832dfe5e748bcc21b0f9f3189d4755a9afe72acc139a0b32a76b0f2488d3");
  char other[65];
  ld_sds_message_id("alice", 1763000000000000001ull, text("hello"), 5, other);
  assert_string_not_equal(id, other);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(config_checks),
      cmocka_unit_test(lamport_rules),
      cmocka_unit_test(log_orders_ties_by_id),
      cmocka_unit_test(lamport_at_limits),
      cmocka_unit_test(send_builds_the_message),
      cmocka_unit_test(ephemeral_messages),
      cmocka_unit_test(ack_by_causal_history),
      cmocka_unit_test(ack_by_bloom_threshold),
      cmocka_unit_test(bloom_filter_at_most_once_per_interval),
      cmocka_unit_test(retrieval_hint_known),
      cmocka_unit_test(wrong_size_bloom_filter),
      cmocka_unit_test(retransmits_then_gives_up),
      cmocka_unit_test(never_acknowledged_stays_bounded),
      cmocka_unit_test(receive_filters),
      cmocka_unit_test(causal_delivery_through_the_buffer),
      cmocka_unit_test(incoming_buffer_is_bounded),
      cmocka_unit_test(lost_after_timeout),
      cmocka_unit_test(expiry_resolves_chains_and_cycles),
      cmocka_unit_test(late_message_forgotten_as_lost),
      cmocka_unit_test(repair_timing_equals_js_waku),
      cmocka_unit_test(repair_request_and_answer),
      cmocka_unit_test(repair_request_suppression_and_retries),
      cmocka_unit_test(repair_request_due_at_once),
      cmocka_unit_test(repair_answer_conditions),
      cmocka_unit_test(fetch_events),
      cmocka_unit_test(sync_messages),
      cmocka_unit_test(acknowledgement_syncs_follow_a_burst),
      cmocka_unit_test(acknowledgement_syncs_keep_pace_with_a_burst),
      cmocka_unit_test(event_queue_limit),
      cmocka_unit_test(log_cache_and_bloom_bounds),
      cmocka_unit_test(thousands_of_dependencies),
      cmocka_unit_test(lip_message_id),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
