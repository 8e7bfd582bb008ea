/* Sending: building content, ephemeral and sync messages; the outgoing buffer with its
 * retransmissions; acknowledgements from received causal histories and bloom filters. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "channels/sds_internal.h"

/* ---- bloom filter of received IDs ----------------------------------------------------------- */

/* Rebuilds the full filter from the newest half of the log and the buffered messages. */
static void bloom_rebuild(ld_sds_t *s) {
  ld_bloom_reset(&s->bloom);
  size_t keep = s->bloom.params.capacity / 2;
  size_t from = s->log.len > keep ? s->log.len - keep : 0;
  for (size_t i = from; i < s->log.len; i++)
    ld_bloom_insert(&s->bloom, s->log.items[i]->id, s->log.items[i]->id_len);
  for (in_entry_t *e = s->in_head; e != NULL; e = e->next)
    ld_bloom_insert(&s->bloom, e->msg.message_id, e->msg.message_id_len);
  s->stats.bloom_rebuilds++;
}

void sds_bloom_insert(ld_sds_t *s, const char *id, size_t id_len) {
  if (s->bloom.n_items >= s->bloom.params.capacity)
    bloom_rebuild(s);
  ld_bloom_insert(&s->bloom, id, id_len);
}

/* ---- building messages ---------------------------------------------------------------------- */

/* A message under construction with the views it borrows. */
typedef struct draft {
  ld_sds_message_t msg;
  ld_sds_history_entry_t *history;
  ld_sds_history_entry_t requests[LD_SDS_MAX_REPAIR_REQUESTS];
  missing_t *requested[LD_SDS_MAX_REPAIR_REQUESTS];
} draft_t;

/* Whether the message being built carries the bloom filter: a sync always, content at most once
 * per cfg.bloom_interval_ms. */
static bool bloom_due(const ld_sds_t *s, bool sync) {
  return sync || s->cfg.bloom_interval_ms == 0 || !s->bloom_sent ||
         s->now - s->bloom_sent_at >= s->cfg.bloom_interval_ms;
}

/* After the message `m` went out. */
static void note_bloom_sent(ld_sds_t *s, const ld_sds_message_t *m) {
  if (!m->has_bloom)
    return;
  s->bloom_sent = true;
  s->bloom_sent_at = s->now;
}

/* Fills sender, channel, Lamport (ticked), causal history, bloom filter (when due) and the repair
 * requests due (not yet marked as sent). `*saved_lamport` restores the clock on failure. */
static int draft_init(ld_sds_t *s, draft_t *d, const char *id, bool sync, uint64_t *saved_lamport) {
  memset(d, 0, sizeof *d);
  d->history = calloc(s->cfg.causal_history_size + 1, sizeof *d->history);
  if (d->history == NULL)
    return LD_ERR_NOMEM;
  ld_sds_message_t *m = &d->msg;
  ld_sds_message_init(m);
  m->sender_id = s->self;
  m->sender_id_len = s->self_len;
  m->channel_id = s->channel_id;
  m->channel_id_len = s->channel_id_len;
  m->message_id = id;
  m->message_id_len = strlen(id);
  *saved_lamport = s->lamport;
  m->has_lamport = true;
  m->lamport = sds_lamport_tick(s);
  m->causal_history = d->history;
  m->causal_history_len = sds_log_history(&s->log, s->cfg.causal_history_size, d->history);
  if (bloom_due(s, sync)) {
    m->has_bloom = true;
    m->bloom = s->bloom.data;
    m->bloom_len = s->bloom.params.bytes;
  }
  if (s->cfg.repair) {
    m->repair_request = d->requests;
    m->repair_request_len =
        sds_peek_repair_requests(s, s->cfg.repair_max_per_message, d->requests, d->requested);
  }
  return 0;
}

static int draft_encode(const draft_t *d, ld_buf_t *out) {
  int rc = ld_sds_message_encode(&d->msg, out);
  if (rc == 0 && out->len > LD_SDS_MAX_WIRE_SIZE)
    rc = LD_ERR_TOO_LARGE;
  return rc;
}

int sds_encode_repair_copy(const ld_sds_message_t *m, uint8_t **out, size_t *out_len) {
  ld_sds_message_t copy = *m;
  copy.has_bloom = false;
  copy.bloom_len = 0;
  copy.repair_request_len = 0;
  copy.storage = NULL;
  ld_buf_t b;
  ld_buf_init(&b);
  int rc = ld_sds_message_encode(&copy, &b);
  if (rc != 0) {
    ld_buf_clear(&b);
    return rc;
  }
  *out = b.data;
  *out_len = b.len;
  return 0;
}

/* ---- the outgoing buffer -------------------------------------------------------------------- */

static void out_unlink(ld_sds_t *s, out_entry_t *o) {
  if (o->prev != NULL)
    o->prev->next = o->next;
  else
    s->out_head = o->next;
  if (o->next != NULL)
    o->next->prev = o->prev;
  else
    s->out_tail = o->prev;
}

static void out_free(out_entry_t *o) {
  free(o->id);
  free(o->wire);
  free(o);
}

static void out_remove(ld_sds_t *s, out_entry_t *o) {
  sds_disarm(s, &o->timer);
  ld_hashmap_remove(s->outgoing, o->id, o->id_len);
  out_unlink(s, o);
  out_free(o);
}

void sds_outgoing_free_all(ld_sds_t *s) {
  while (s->out_head != NULL)
    out_remove(s, s->out_head);
}

static int emit_outcome(ld_sds_t *s, ld_sds_event_type_t type, const out_entry_t *o, uint32_t count,
                        int error) {
  ld_sds_event_t ev = {.type = type, .count = count, .error = error};
  if ((ev.message_id = sds_strndup(o->id, o->id_len)) == NULL)
    return LD_ERR_NOMEM;
  return sds_emit(s, &ev);
}

/* Gives up the oldest outgoing message to make room (SEND_FAILED, LD_ERR_LIMIT). */
static int make_room(ld_sds_t *s) {
  int rc = 0;
  while (rc == 0 && ld_hashmap_size(s->outgoing) >= s->cfg.max_outgoing) {
    out_entry_t *old = s->out_head;
    rc = emit_outcome(s, LD_SDS_EV_SEND_FAILED, old, 0, LD_ERR_LIMIT);
    s->stats.send_failed++;
    out_remove(s, old);
  }
  return rc;
}

static uint64_t resend_period(const ld_sds_t *s, const out_entry_t *o) {
  return o->possible_acks > 0 ? s->cfg.possibly_acked_timeout_ms : s->cfg.ack_timeout_ms;
}

/* Takes over `wire` (an ld_buf_t's data). */
static int out_add(ld_sds_t *s, const char *id, size_t id_len, ld_buf_t *wire) {
  out_entry_t *o = calloc(1, sizeof *o);
  if (o == NULL || (o->id = sds_strndup(id, id_len)) == NULL) {
    free(o);
    return LD_ERR_NOMEM;
  }
  o->timer.kind = TK_OUTGOING;
  o->id_len = id_len;
  o->last_sent = s->now;
  ld_bloom_positions(&s->bloom.params, id, id_len, o->positions);
  if (ld_hashmap_put(s->outgoing, id, id_len, o, NULL) != 0 ||
      sds_arm(s, &o->timer, s->now + s->cfg.ack_timeout_ms) != 0) {
    ld_hashmap_remove(s->outgoing, id, id_len);
    out_free(o);
    return LD_ERR_NOMEM;
  }
  o->wire = wire->data;
  o->wire_len = wire->len;
  ld_buf_init(wire);
  o->prev = s->out_tail;
  if (s->out_tail != NULL)
    s->out_tail->next = o;
  else
    s->out_head = o;
  s->out_tail = o;
  return 0;
}

int sds_outgoing_on_timer(ld_sds_t *s, out_entry_t *o) {
  if (o->retransmissions >= s->cfg.max_retransmissions) {
    int rc = emit_outcome(s, LD_SDS_EV_SEND_FAILED, o, 0, LD_ERR_TIMEOUT);
    s->stats.send_failed++;
    out_remove(s, o);
    return rc;
  }
  o->retransmissions++;
  o->last_sent = s->now;
  s->stats.retransmitted++;
  int rc = sds_arm(s, &o->timer, s->now + resend_period(s, o));
  if (rc == 0)
    rc = sds_emit_send(s, LD_SDS_SEND_RETRANSMISSION, o->id, 0, o->wire, o->wire_len);
  return rc;
}

/* ---- acknowledgements ----------------------------------------------------------------------- */

static int acknowledge(ld_sds_t *s, out_entry_t *o, uint32_t bloom_hits) {
  int rc = emit_outcome(s, LD_SDS_EV_ACKNOWLEDGED, o, bloom_hits, 0);
  if (bloom_hits > 0)
    s->stats.acked_by_bloom++;
  else
    s->stats.acked_by_history++;
  out_remove(s, o);
  return rc;
}

static int review_bloom(ld_sds_t *s, const uint8_t *bytes) {
  int rc = 0;
  out_entry_t *next;
  for (out_entry_t *o = s->out_head; o != NULL && rc == 0; o = next) {
    next = o->next;
    if (!ld_bloom_positions_set(&s->bloom.params, bytes, o->positions))
      continue;
    if (++o->possible_acks >= s->cfg.possible_acks_threshold) {
      rc = acknowledge(s, o, o->possible_acks);
      continue;
    }
    rc = sds_arm(s, &o->timer, o->last_sent + resend_period(s, o));
    if (rc == 0)
      rc = emit_outcome(s, LD_SDS_EV_POSSIBLY_ACKNOWLEDGED, o, o->possible_acks, 0);
  }
  return rc;
}

int sds_review_acks(ld_sds_t *s, const ld_sds_message_t *m) {
  int rc = 0;
  for (size_t i = 0; i < m->causal_history_len && rc == 0; i++) {
    const ld_sds_history_entry_t *e = &m->causal_history[i];
    out_entry_t *o = ld_hashmap_get(s->outgoing, e->message_id, e->message_id_len);
    if (o != NULL)
      rc = acknowledge(s, o, 0);
  }
  if (rc != 0 || !m->has_bloom || s->out_head == NULL)
    return rc;
  if (!ld_bloom_bytes_fit(&s->bloom.params, m->bloom_len)) {
    s->stats.bloom_size_mismatch++;
    return 0;
  }
  return review_bloom(s, m->bloom);
}

/* ---- content messages ----------------------------------------------------------------------- */

static int check_send(ld_sds_t *s, const char *id, const uint8_t *content, size_t len) {
  if (s == NULL || id == NULL || content == NULL || len == 0)
    return LD_ERR_INVALID_ARG;
  size_t n = strnlen(id, LD_SDS_MAX_ID_LEN + 1);
  if (n == 0 || n > LD_SDS_MAX_ID_LEN)
    return LD_ERR_INVALID_ARG;
  return 0;
}

/* Logs the own message with its repair copy and records it as received in the bloom filter. */
static int log_own(ld_sds_t *s, const ld_sds_message_t *m) {
  uint8_t *copy = NULL;
  size_t copy_len = 0;
  int rc = sds_encode_repair_copy(m, &copy, &copy_len);
  if (rc != 0)
    return rc;
  rc = sds_log_insert(s, m->lamport, m->message_id, m->message_id_len, s->self, s->self_len, NULL,
                      0, copy, copy_len);
  if (rc == 0)
    sds_bloom_insert(s, m->message_id, m->message_id_len);
  return rc;
}

static int send_content(ld_sds_t *s, const char *id, const uint8_t *content, size_t len) {
  draft_t d;
  uint64_t saved;
  int rc = draft_init(s, &d, id, false, &saved);
  if (rc != 0)
    return rc;
  d.msg.has_content = true;
  d.msg.content = content;
  d.msg.content_len = len;
  ld_buf_t wire;
  ld_buf_init(&wire);
  if ((rc = draft_encode(&d, &wire)) != 0) {
    s->lamport = saved;
    goto out;
  }
  sds_commit_repair_requests(s, d.requested, d.msg.repair_request_len);
  if ((rc = make_room(s)) == 0 && (rc = log_own(s, &d.msg)) == 0 &&
      (rc = sds_emit_send(s, LD_SDS_SEND_CONTENT, id, d.msg.lamport, wire.data, wire.len)) == 0) {
    note_bloom_sent(s, &d.msg);
    rc = out_add(s, id, d.msg.message_id_len, &wire);
  }
  s->stats.sent++;
  sds_restart_sync(s, 2);
out:
  ld_buf_clear(&wire);
  free(d.history);
  return rc;
}

int ld_sds_send(ld_sds_t *s, uint64_t now_ms, const char *message_id, const uint8_t *content,
                size_t len) {
  int rc = check_send(s, message_id, content, len);
  if (rc == 0)
    rc = sds_begin(s, now_ms);
  if (rc != 0)
    return rc;
  size_t n = strlen(message_id);
  if (sds_log_find(&s->log, message_id, n) != NULL ||
      ld_hashmap_contains(s->outgoing, message_id, n) ||
      ld_hashmap_contains(s->incoming, message_id, n))
    return LD_ERR_EXISTS;
  return send_content(s, message_id, content, len);
}

int ld_sds_send_ephemeral(ld_sds_t *s, uint64_t now_ms, const char *message_id,
                          const uint8_t *content, size_t len) {
  int rc = check_send(s, message_id, content, len);
  if (rc == 0)
    rc = sds_begin(s, now_ms);
  if (rc != 0)
    return rc;
  ld_sds_message_t m;
  ld_sds_message_init(&m);
  m.sender_id = s->self;
  m.sender_id_len = s->self_len;
  m.channel_id = s->channel_id;
  m.channel_id_len = s->channel_id_len;
  m.message_id = message_id;
  m.message_id_len = strlen(message_id);
  m.has_content = true;
  m.content = content;
  m.content_len = len;
  ld_buf_t wire;
  ld_buf_init(&wire);
  rc = ld_sds_message_encode(&m, &wire);
  if (rc == 0 && wire.len > LD_SDS_MAX_WIRE_SIZE)
    rc = LD_ERR_TOO_LARGE;
  if (rc == 0)
    rc = sds_emit_send(s, LD_SDS_SEND_EPHEMERAL, message_id, 0, wire.data, wire.len);
  ld_buf_clear(&wire);
  return rc;
}

/* ---- sync messages -------------------------------------------------------------------------- */

int sds_send_sync(ld_sds_t *s) {
  char id[5 + 16 + 1];
  snprintf(id, sizeof id, "sync-%016" PRIx64, sds_random(s));
  draft_t d;
  uint64_t saved;
  int rc = draft_init(s, &d, id, true, &saved);
  if (rc != 0)
    return rc;
  if (d.msg.causal_history_len == 0 && d.msg.repair_request_len == 0) {
    s->lamport = saved; /* nothing to carry (js-waku does not send it either) */
    free(d.history);
    return 0;
  }
  ld_buf_t wire;
  ld_buf_init(&wire);
  rc = draft_encode(&d, &wire);
  if (rc != 0)
    s->lamport = saved;
  else if ((rc = sds_emit_send(s, LD_SDS_SEND_SYNC, id, 0, wire.data, wire.len)) == 0) {
    sds_commit_repair_requests(s, d.requested, d.msg.repair_request_len);
    note_bloom_sent(s, &d.msg);
    s->stats.syncs_sent++;
    s->rx_since_sync = 0;
  }
  ld_buf_clear(&wire);
  free(d.history);
  return rc == 0 ? 1 : rc;
}

/* ---- persistence ---------------------------------------------------------------------------- */

int sds_outgoing_restore(ld_sds_t *s, const char *id, size_t id_len, const uint8_t *wire,
                         size_t len, uint32_t retransmissions) {
  if (ld_hashmap_contains(s->outgoing, id, id_len))
    return LD_ERR_EXISTS;
  int rc = make_room(s);
  if (rc != 0)
    return rc;
  ld_buf_t copy;
  ld_buf_init(&copy);
  if ((rc = ld_buf_append(&copy, wire, len)) != 0)
    return rc;
  rc = out_add(s, id, id_len, &copy);
  ld_buf_clear(&copy);
  if (rc == 0)
    ((out_entry_t *)ld_hashmap_get(s->outgoing, id, id_len))->retransmissions = retransmissions;
  return rc;
}
