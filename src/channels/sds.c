#include "channels/sds.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hex.h"
#include "channels/sds_internal.h"
#include "crypto/crypto.h"
#include "crypto/keccak.h"

/* ---- configuration -------------------------------------------------------------------------- */

void ld_sds_config_default(ld_sds_config_t *c) {
  memset(c, 0, sizeof *c);
  c->causal_history_size = 2;
  c->possible_acks_threshold = 2;
  c->ack_timeout_ms = 5000;
  c->possibly_acked_timeout_ms = 10000;
  c->max_retransmissions = 5;
  c->lost_timeout_ms = 300000;
  c->fetch_delay_ms = 130000;
  c->fetch_interval_ms = 10000;
  c->max_fetches = 5;
  c->sync_interval_ms = 30000;
  c->repair = true;
  c->repair_t_min_ms = 30000;
  c->repair_t_max_ms = 120000;
  c->repair_response_groups = 1;
  c->repair_max_per_message = 3;
  c->repair_max_requests = 3;
  c->repair_sync_gap_ms = 1000;
  c->bloom_capacity = LD_BLOOM_DEFAULT_CAPACITY;
  c->bloom_error_rate = LD_BLOOM_DEFAULT_ERROR_RATE;
  c->max_lamport_ahead_ms = 86400000;
  c->max_log = 10000;
  c->repair_cache_max = 1000;
  c->repair_cache_bytes = 32u << 20;
  c->max_outgoing = 1000;
  c->max_incoming = 1000;
  c->max_incoming_bytes = 32u << 20;
  c->max_missing = 1000;
  c->max_repair_responses = 1000;
  c->max_lost = 1000;
  c->max_events = 65536;
}

int ld_sds_config_check(const ld_sds_config_t *c) {
  ld_bloom_params_t bp;
  if (c == NULL || c->causal_history_size > LD_SDS_MAX_CAUSAL_HISTORY ||
      c->possible_acks_threshold == 0 || c->ack_timeout_ms == 0 ||
      c->possibly_acked_timeout_ms == 0 || c->fetch_interval_ms == 0 ||
      ld_bloom_params(c->bloom_capacity, c->bloom_error_rate, &bp) != 0 || c->max_log == 0 ||
      c->max_outgoing == 0 || c->max_incoming == 0 || c->max_incoming_bytes == 0 ||
      c->max_missing == 0 || c->max_repair_responses == 0 || c->max_lost == 0 ||
      c->max_events == 0 || c->repair_max_per_message > LD_SDS_MAX_REPAIR_REQUESTS)
    return LD_ERR_INVALID_ARG;
  if (c->repair && (c->repair_t_min_ms >= c->repair_t_max_ms || c->repair_t_max_ms > UINT32_MAX ||
                    c->repair_response_groups == 0 || c->repair_max_per_message == 0 ||
                    c->repair_max_requests == 0))
    return LD_ERR_INVALID_ARG;
  return 0;
}

/* ---- small helpers -------------------------------------------------------------------------- */

char *sds_strndup(const char *p, size_t n) {
  char *d = malloc(n + 1);
  if (d == NULL)
    return NULL;
  if (n > 0)
    memcpy(d, p, n);
  d[n] = '\0';
  return d;
}

uint8_t *sds_memdup(const void *p, size_t n) {
  uint8_t *d = malloc(n > 0 ? n : 1);
  if (d != NULL && n > 0)
    memcpy(d, p, n);
  return d;
}

void sds_entry_clear(sds_entry_t *e) {
  free(e->id);
  free(e->hint);
  free(e->sender);
  memset(e, 0, sizeof *e);
}

int sds_entry_copy(sds_entry_t *dst, const ld_sds_history_entry_t *src) {
  memset(dst, 0, sizeof *dst);
  dst->id = sds_strndup(src->message_id, src->message_id_len);
  dst->id_len = src->message_id_len;
  if (src->has_retrieval_hint) {
    dst->hint = sds_memdup(src->retrieval_hint, src->retrieval_hint_len);
    dst->hint_len = src->retrieval_hint_len;
  }
  if (src->has_sender_id) {
    dst->sender = sds_strndup(src->sender_id, src->sender_id_len);
    dst->sender_len = src->sender_id_len;
  }
  if (dst->id == NULL || (src->has_retrieval_hint && dst->hint == NULL) ||
      (src->has_sender_id && dst->sender == NULL)) {
    sds_entry_clear(dst);
    return LD_ERR_NOMEM;
  }
  return 0;
}

void sds_entry_view(const sds_entry_t *e, ld_sds_history_entry_t *v) {
  memset(v, 0, sizeof *v);
  v->message_id = e->id;
  v->message_id_len = e->id_len;
  v->has_retrieval_hint = e->hint != NULL;
  v->retrieval_hint = e->hint;
  v->retrieval_hint_len = e->hint_len;
  v->has_sender_id = e->sender != NULL;
  v->sender_id = e->sender;
  v->sender_id_len = e->sender_len;
}

/* splitmix64: sync delays and sync IDs need no secrecy, only spread. */
uint64_t sds_random(ld_sds_t *s) {
  uint64_t z = (s->rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t sds_lamport_tick(ld_sds_t *s) {
  uint64_t next = s->lamport == UINT64_MAX ? UINT64_MAX : s->lamport + 1;
  s->lamport = s->now > next ? s->now : next;
  return s->lamport;
}

/* A `now` that never goes back: timers compare against the latest time seen. */
static void advance(ld_sds_t *s, uint64_t now) {
  if (now > s->now)
    s->now = now;
}

static bool text_ok(const char *p, size_t max) {
  if (p == NULL)
    return false;
  size_t n = strnlen(p, max + 1);
  if (n > max)
    return false;
  ld_sds_message_t m;
  ld_sds_message_init(&m);
  m.message_id = p;
  m.message_id_len = n;
  ld_buf_t b;
  ld_buf_init(&b);
  int rc = ld_sds_message_encode(&m, &b); /* the codec's own text checks */
  ld_buf_clear(&b);
  return rc == 0;
}

/* ---- timers --------------------------------------------------------------------------------- */

int sds_arm(ld_sds_t *s, sds_timer_t *t, uint64_t deadline) {
  if (deadline == UINT64_MAX) {
    ld_timerheap_remove(&s->timers, &t->t);
    return 0;
  }
  return ld_timerheap_add(&s->timers, &t->t, deadline);
}

void sds_disarm(ld_sds_t *s, sds_timer_t *t) {
  ld_timerheap_remove(&s->timers, &t->t);
}

void sds_restart_sync(ld_sds_t *s, unsigned half_steps) {
  if (s->cfg.sync_interval_ms == 0)
    return;
  uint64_t span = s->cfg.sync_interval_ms * half_steps / 2;
  uint64_t delay = 1 + (span > 0 ? sds_random(s) % span : 0); /* never due in the same call */
  if (sds_arm(s, &s->sync_timer, s->now + delay) != 0)
    s->stats.refused++; /* out of memory: the next send or receive re-arms it */
}

static int on_sync_timer(ld_sds_t *s) {
  int rc = sds_send_sync(s);
  sds_restart_sync(s, 4);
  return rc < 0 ? rc : 0;
}

static void arm_ack_sync(ld_sds_t *s) {
  if (sds_arm(s, &s->ack_sync_timer, s->now + s->cfg.ack_sync_delay_ms) != 0)
    s->stats.refused++; /* out of memory: the next content received re-arms it */
  else
    s->ack_sync_armed = true;
}

void sds_ack_sync_on_content(ld_sds_t *s) {
  s->rx_since_sync++;
  if (s->cfg.ack_sync_delay_ms == 0)
    return;
  if (s->ack_syncs_owed == 0)
    s->ack_syncs_owed = 1;
  if (!s->ack_sync_armed)
    arm_ack_sync(s);
}

int sds_ack_sync_if_due(ld_sds_t *s) {
  if (s->cfg.ack_sync_delay_ms == 0 || s->cfg.ack_sync_every == 0 ||
      s->rx_since_sync < s->cfg.ack_sync_every)
    return 0;
  int rc = sds_send_sync(s); /* the delayed ones stay armed: they acknowledge the tail */
  if (rc == 1)
    s->stats.ack_syncs_sent++;
  return rc < 0 ? rc : 0;
}

/* One acknowledgement sync; more while messages received since the previous one were beyond
 * the causal history (acknowledged only by bloom hits, which take possible_acks_threshold). */
static int on_ack_sync_timer(ld_sds_t *s) {
  s->ack_sync_armed = false;
  uint64_t received = s->rx_since_sync;
  int rc = sds_send_sync(s);
  if (rc < 0)
    return rc;
  if (rc == 1)
    s->stats.ack_syncs_sent++;
  if (received > s->cfg.causal_history_size)
    s->ack_syncs_owed = s->cfg.possible_acks_threshold - 1;
  else if (s->ack_syncs_owed > 0)
    s->ack_syncs_owed--;
  if (s->ack_syncs_owed > 0)
    arm_ack_sync(s);
  return 0;
}

static int on_repair_sync_timer(ld_sds_t *s) {
  if (!sds_repair_request_due(s))
    return 0;
  int rc = sds_send_sync(s);
  if (rc < 0)
    return rc;
  s->last_repair_sync = s->now;
  if (sds_repair_request_due(s))
    return sds_arm(s, &s->repair_sync_timer, s->now + s->cfg.repair_sync_gap_ms);
  return 0;
}

static int dispatch_timer(ld_sds_t *s, sds_timer_t *t) {
  switch (t->kind) {
  case TK_OUTGOING:
    return sds_outgoing_on_timer(s, (out_entry_t *)t);
  case TK_INCOMING:
    return sds_incoming_on_timer(s, (in_entry_t *)t);
  case TK_MISSING:
    return sds_missing_on_timer(s, (missing_t *)t);
  case TK_RESPONSE:
    return sds_response_on_timer(s, (response_t *)t);
  case TK_SYNC:
    return on_sync_timer(s);
  case TK_REPAIR_SYNC:
    return on_repair_sync_timer(s);
  case TK_ACK_SYNC:
    return on_ack_sync_timer(s);
  default:
    return LD_ERR_INTERNAL;
  }
}

/* ---- events --------------------------------------------------------------------------------- */

void ld_sds_event_clear(ld_sds_event_t *ev) {
  free(ev->message_id);
  free(ev->sender_id);
  free(ev->data);
  free(ev->hint);
  memset(ev, 0, sizeof *ev);
}

int sds_emit(ld_sds_t *s, ld_sds_event_t *ev) {
  sds_event_node_t *n = malloc(sizeof *n);
  if (n == NULL) {
    ld_sds_event_clear(ev);
    return LD_ERR_NOMEM;
  }
  n->ev = *ev;
  n->next = NULL;
  memset(ev, 0, sizeof *ev);
  if (s->ev_tail != NULL)
    s->ev_tail->next = n;
  else
    s->ev_head = n;
  s->ev_tail = n;
  s->ev_len++;
  return 0;
}

int sds_emit_send(ld_sds_t *s, ld_sds_send_kind_t kind, const char *id, uint64_t lamport,
                  const uint8_t *data, size_t len) {
  ld_sds_event_t ev = {.type = LD_SDS_EV_SEND, .send_kind = kind, .lamport = lamport};
  ev.message_id = sds_strndup(id, strlen(id));
  ev.data = sds_memdup(data, len);
  ev.len = len;
  if (ev.message_id == NULL || ev.data == NULL) {
    ld_sds_event_clear(&ev);
    return LD_ERR_NOMEM;
  }
  return sds_emit(s, &ev);
}

int sds_emit_entry(ld_sds_t *s, ld_sds_event_type_t type, const sds_entry_t *e) {
  ld_sds_event_t ev = {.type = type};
  ev.message_id = sds_strndup(e->id, e->id_len);
  if (e->sender != NULL)
    ev.sender_id = sds_strndup(e->sender, e->sender_len);
  if (e->hint != NULL) {
    ev.hint = sds_memdup(e->hint, e->hint_len);
    ev.hint_len = e->hint_len;
  }
  if (ev.message_id == NULL || (e->sender != NULL && ev.sender_id == NULL) ||
      (e->hint != NULL && ev.hint == NULL)) {
    ld_sds_event_clear(&ev);
    return LD_ERR_NOMEM;
  }
  return sds_emit(s, &ev);
}

bool ld_sds_next_event(ld_sds_t *s, ld_sds_event_t *ev) {
  sds_event_node_t *n = s->ev_head;
  if (n == NULL)
    return false;
  *ev = n->ev;
  s->ev_head = n->next;
  if (s->ev_head == NULL)
    s->ev_tail = NULL;
  s->ev_len--;
  free(n);
  return true;
}

const char *ld_sds_event_name(ld_sds_event_type_t t) {
  static const char *const names[] = {
      "?",           "send",    "delivered", "ephemeral", "acknowledged", "possibly-acknowledged",
      "send-failed", "missing", "fetch",     "lost",      "dropped",
  };
  return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

const char *ld_sds_send_kind_name(ld_sds_send_kind_t k) {
  static const char *const names[] = {"?",    "content", "retransmission",
                                      "sync", "repair",  "ephemeral"};
  return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

static int init_maps(ld_sds_t *s) {
  s->outgoing = ld_hashmap_new(64);
  s->incoming = ld_hashmap_new(64);
  s->waiting = ld_hashmap_new(64);
  s->missing = ld_hashmap_new(64);
  s->responses = ld_hashmap_new(16);
  s->lost = ld_hashmap_new(16);
  s->lost_ring = calloc(s->cfg.max_lost, sizeof *s->lost_ring);
  if (s->outgoing == NULL || s->incoming == NULL || s->waiting == NULL || s->missing == NULL ||
      s->responses == NULL || s->lost == NULL || s->lost_ring == NULL)
    return LD_ERR_NOMEM;
  return sds_log_init(&s->log);
}

static uint64_t seed(const ld_sds_config_t *c) {
  uint64_t v = c->random_seed;
  while (v == 0)
    ld_random_bytes(&v, sizeof v);
  return v;
}

int ld_sds_new(const ld_sds_config_t *cfg, const char *channel_id, const char *sender_id,
               uint64_t now_ms, ld_sds_t **out) {
  ld_sds_config_t defaults;
  if (cfg == NULL) {
    ld_sds_config_default(&defaults);
    cfg = &defaults;
  }
  if (out == NULL || ld_sds_config_check(cfg) != 0 || !text_ok(channel_id, LD_SDS_MAX_ID_LEN) ||
      !text_ok(sender_id, LD_SDS_MAX_ID_LEN) || sender_id[0] == '\0')
    return LD_ERR_INVALID_ARG;
  ld_sds_t *s = calloc(1, sizeof *s);
  if (s == NULL)
    return LD_ERR_NOMEM;
  s->cfg = *cfg;
  s->channel_id_len = strlen(channel_id);
  s->self_len = strlen(sender_id);
  s->channel_id = sds_strndup(channel_id, s->channel_id_len);
  s->self = sds_strndup(sender_id, s->self_len);
  s->now = s->lamport = now_ms;
  s->rng = seed(cfg);
  s->sync_timer.kind = TK_SYNC;
  s->repair_sync_timer.kind = TK_REPAIR_SYNC;
  s->ack_sync_timer.kind = TK_ACK_SYNC;
  ld_timerheap_init(&s->timers);
  int rc = s->channel_id == NULL || s->self == NULL ? LD_ERR_NOMEM : init_maps(s);
  if (rc == 0)
    rc = ld_bloom_init(&s->bloom, cfg->bloom_capacity, cfg->bloom_error_rate);
  if (rc != 0) {
    ld_sds_free(s);
    return rc;
  }
  s->self_hash = sds_repair_hash(s->self, s->self_len, NULL, 0);
  sds_restart_sync(s, 2);
  *out = s;
  return 0;
}

static void free_lost(ld_sds_t *s) {
  if (s->lost_ring != NULL)
    for (size_t i = 0; i < s->lost_len; i++)
      free(s->lost_ring[(s->lost_head + i) % s->cfg.max_lost]);
  free(s->lost_ring);
  ld_hashmap_free(s->lost, NULL);
}

void ld_sds_free(ld_sds_t *s) {
  if (s == NULL)
    return;
  ld_sds_event_t ev;
  while (ld_sds_next_event(s, &ev))
    ld_sds_event_clear(&ev);
  ld_timerheap_clear(&s->timers); /* first: the entries freed below embed armed timers */
  if (s->outgoing != NULL)
    sds_outgoing_free_all(s);
  if (s->incoming != NULL && s->waiting != NULL && s->missing != NULL)
    sds_incoming_free_all(s);
  if (s->responses != NULL)
    sds_responses_free_all(s);
  ld_hashmap_free(s->outgoing, NULL);
  ld_hashmap_free(s->incoming, NULL);
  ld_hashmap_free(s->waiting, NULL);
  ld_hashmap_free(s->missing, NULL);
  ld_hashmap_free(s->responses, NULL);
  free_lost(s);
  sds_log_clear(&s->log);
  ld_bloom_clear(&s->bloom);
  free(s->channel_id);
  free(s->self);
  free(s);
}

/* ---- entry points --------------------------------------------------------------------------- */

int sds_begin(ld_sds_t *s, uint64_t now) {
  if (s->ev_len >= s->cfg.max_events)
    return LD_ERR_AGAIN;
  advance(s, now);
  return 0;
}

int ld_sds_receive(ld_sds_t *s, uint64_t now_ms, const uint8_t *data, size_t len,
                   const uint8_t *hint, size_t hint_len, ld_sds_rx_t *outcome, char *why,
                   size_t why_cap) {
  if (s == NULL || (hint == NULL && hint_len > 0) || hint_len > LD_SDS_MAX_HINT_LEN)
    return ld_error_fmt(why, why_cap, LD_ERR_INVALID_ARG, "invalid argument");
  int rc = sds_begin(s, now_ms);
  if (rc != 0)
    return ld_error_fmt(why, why_cap, rc, "event queue full");
  ld_sds_message_t m;
  ld_sds_message_init(&m);
  if ((rc = ld_sds_message_decode(data, len, &m, why, why_cap)) != 0) {
    s->stats.refused++;
    return rc;
  }
  ld_sds_rx_t result = 0;
  rc = sds_incoming_receive(s, &m, hint, hint_len, &result);
  ld_sds_message_clear(&m);
  if (rc == LD_ERR_MALFORMED)
    ld_error_fmt(why, why_cap, rc, "neither content, sync nor ephemeral");
  else if (rc == LD_ERR_OVERFLOW)
    ld_error_fmt(why, why_cap, rc, "Lamport timestamp more than %" PRIu64 " ms ahead",
                 s->cfg.max_lamport_ahead_ms);
  if (rc == 0 && outcome != NULL)
    *outcome = result;
  return rc;
}

int ld_sds_handle_timeout(ld_sds_t *s, uint64_t now_ms) {
  int rc = sds_begin(s, now_ms);
  ld_timer_t *t;
  while (rc == 0 && s->ev_len < s->cfg.max_events &&
         (t = ld_timerheap_pop_expired(&s->timers, s->now)) != NULL)
    rc = dispatch_timer(s, (sds_timer_t *)t);
  return rc;
}

uint64_t ld_sds_next_deadline(const ld_sds_t *s) {
  return ld_timerheap_next_deadline(&s->timers);
}

int ld_sds_sync_now(ld_sds_t *s, uint64_t now_ms) {
  int rc = sds_begin(s, now_ms);
  return rc != 0 ? rc : sds_send_sync(s);
}

int ld_sds_set_retrieval_hint(ld_sds_t *s, const char *message_id, const uint8_t *hint,
                              size_t hint_len) {
  if (s == NULL || message_id == NULL || hint == NULL || hint_len == 0 ||
      hint_len > LD_SDS_MAX_HINT_LEN)
    return LD_ERR_INVALID_ARG;
  log_entry_t *e = sds_log_find(&s->log, message_id, strlen(message_id));
  return e == NULL ? LD_ERR_NOT_FOUND : sds_log_set_hint(e, hint, hint_len);
}

bool ld_sds_has_retrieval_hint(const ld_sds_t *s, const char *message_id, const uint8_t *hint,
                               size_t hint_len) {
  if (s == NULL || message_id == NULL || hint == NULL)
    return false;
  const log_entry_t *e = sds_log_find(&s->log, message_id, strlen(message_id));
  return e != NULL && e->hint != NULL && e->hint_len == hint_len &&
         memcmp(e->hint, hint, hint_len) == 0;
}

bool ld_sds_in_log(const ld_sds_t *s, const char *message_id) {
  return sds_log_find(&s->log, message_id, strlen(message_id)) != NULL;
}

void ld_sds_get_stats(const ld_sds_t *s, ld_sds_stats_t *out) {
  *out = s->stats;
  out->lamport = s->lamport;
  out->log_len = s->log.len;
  out->repair_cache_len = s->log.cache_len;
  out->repair_cache_bytes = s->log.cache_bytes;
  out->outgoing_len = ld_hashmap_size(s->outgoing);
  out->incoming_len = ld_hashmap_size(s->incoming);
  out->incoming_bytes = s->incoming_bytes;
  out->missing_len = ld_hashmap_size(s->missing);
  out->responses_len = ld_hashmap_size(s->responses);
  out->lost_len = s->lost_len;
  out->events_len = s->ev_len;
}

void ld_sds_message_id(const char *sender_id, uint64_t unix_ns, const uint8_t *content, size_t len,
                       char out[65]) {
  char ns[24];
  int n = snprintf(ns, sizeof ns, "%" PRIu64, unix_ns);
  ld_keccak256_ctx_t ctx;
  ld_keccak256_init(&ctx);
  ld_keccak256_update(&ctx, sender_id, strlen(sender_id));
  ld_keccak256_update(&ctx, ns, (size_t)n);
  ld_keccak256_update(&ctx, content, len);
  uint8_t digest[LD_KECCAK256_LEN];
  ld_keccak256_final(&ctx, digest);
  ld_hex_encode(digest, sizeof digest, out);
}
