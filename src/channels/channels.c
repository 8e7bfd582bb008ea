/* The channel manager (channels/channels.h): SDS engines per channel wired to the
 * MessagingClient, their timers on the node's loop, and the channel events. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/hashmap.h"
#include "base/hex.h"
#include "base/log.h"
#include "channels/channel_fetch.h"
#include "channels/channel_lost.h"
#include "channels/channel_store.h"
#include "channels/channels.h"
#include "channels/sds_wire.h"
#include "channels/segment.h"
#include "crypto/keccak.h"
#include "crypto/crypto.h"
#include "node/broker.h"
#include "p2p/gossipsub/service.h"

#define TOPIC "channels"
#define MARKER_LEN (sizeof LD_CHANNELS_MARKER - 1)

typedef struct ch_channel ch_channel_t;

/* One channel_send: its segments' SDS message IDs and what has been reported. */
typedef struct ch_request {
  char id[LD_CHANNEL_REQUEST_ID_LEN + 1];
  ch_channel_t *ch;
  bool ephemeral;
  uint32_t segments, dispatched, dispatch_failed, acked, delivery_failed;
  bool send_reported, delivery_reported;
  char error[160];          /* first dispatch error */
  char delivery_error[160]; /* first delivery error */
  char **seg_ids;           /* SDS message IDs, [segments] */
  struct ch_request *prev, *next;
} ch_request_t;

/* A messaging send whose outcome decides a segment's dispatch. */
typedef struct ch_pending {
  char msg_req[LD_MESSAGING_REQUEST_ID_LEN + 1];
  ch_request_t *req;
  char *seg_id;
  uint64_t lamport; /* of the segment's SDS message */
} ch_pending_t;

struct ch_channel {
  ld_channels_t *mgr;
  char *id, *topic, *sender;
  ld_sds_t *sds;
  uv_timer_t timer;
  ld_hashmap_t *by_seg;   /* SDS message ID → ch_request_t (content segments awaiting an ack) */
  ch_request_t *req_head; /* every live request */
  size_t n_requests;
  bool report_due; /* a request completed outside the pump: report on the next timer */
  bool closed;
  size_t log_puts; /* log rows stored since the last trim */
  ld_reassembler_t *segments;
  /* send queue: accepted sends waiting for room in the outgoing buffer or on the network */
  struct ch_queued *q_head, *q_tail;
  size_t q_len, q_bytes;
  bool q_blocked_by_network; /* poll the network's backlog on the channel timer */
  bool state_dirty;          /* written since the last commit */
};

struct ld_channels {
  uv_loop_t *loop;
  ld_messaging_t *messaging;
  ld_broker_t *broker;
  ld_channels_config_t cfg;
  ld_hashmap_t *channels;    /* channel ID → ch_channel_t */
  ld_hashmap_t *pending;     /* messaging request ID → ch_pending_t */
  ld_channel_store_t *store; /* NULL until the first create (or without persistence) */
  ld_hashmap_t *crypto;      /* channel ID → ch_crypto_t (the application's encryption hook) */
  uv_timer_t commit_timer;   /* ends the store's transaction LD_CHANNELS_COMMIT_MS after it began */
  /* rate limit */
  uv_timer_t rl_timer;
  struct rl_item *rl_head, *rl_tail;       /* first transmissions and repair answers */
  struct rl_item *rl_bg_head, *rl_bg_tail; /* retransmissions and syncs: after the others */
  size_t rl_queued, rl_queued_bytes;
  uint64_t rl_epoch, rl_used, rl_dropped, rl_coalesced;
  bool rl_net_blocked; /* the FIFOs wait for the network, not for the next epoch */
  int64_t handles[3];
  uint64_t queue_seq;     /* order of persisted queued sends */
  uint64_t net_tick;      /* uv_now of the loop turn net_unpublished counts */
  size_t net_unpublished; /* bytes handed to the MessagingClient in that turn */
  size_t open_handles;    /* channels whose timer is not closed yet, + 1 for the manager */
  bool freeing;
  /* the store fallback of repair (channel_fetch.h), created on first use */
  struct ld_channel_fetch *fetch;
};

typedef struct ch_crypto {
  ld_channel_crypto_fn encrypt, decrypt;
  void *user_data;
} ch_crypto_t;

/* ---- configuration -------------------------------------------------------------------------- */

static _Atomic uint64_t g_test_t_min, g_test_t_max, g_test_sync, g_test_ack;
static _Atomic uint64_t g_test_rl_epoch, g_test_rl_per_epoch;
static _Atomic size_t g_test_max_outgoing, g_test_send_queue;

void ld_channels_set_test_limits(size_t max_outgoing, size_t send_queue_max) {
  atomic_store(&g_test_max_outgoing, max_outgoing);
  atomic_store(&g_test_send_queue, send_queue_max);
}

void ld_channels_set_test_rate_limit(uint64_t epoch_ms, uint64_t per_epoch) {
  atomic_store(&g_test_rl_epoch, epoch_ms);
  atomic_store(&g_test_rl_per_epoch, per_epoch);
}

void ld_channels_set_test_timing(uint64_t repair_t_min_ms, uint64_t repair_t_max_ms,
                                 uint64_t sync_interval_ms, uint64_t ack_timeout_ms) {
  atomic_store(&g_test_t_min, repair_t_min_ms);
  atomic_store(&g_test_t_max, repair_t_max_ms);
  atomic_store(&g_test_sync, sync_interval_ms);
  atomic_store(&g_test_ack, ack_timeout_ms);
}

static _Atomic uint64_t g_test_ack_sync_delay;

void ld_channels_set_test_ack_sync_delay(uint64_t delay_ms) {
  atomic_store(&g_test_ack_sync_delay, delay_ms);
}

void ld_channels_config_default(ld_channels_config_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  ld_sds_config_default(&cfg->sds);
  uint64_t t_min = atomic_load(&g_test_t_min), t_max = atomic_load(&g_test_t_max),
           sync = atomic_load(&g_test_sync);
  if (t_min > 0 && t_max > t_min) {
    cfg->sds.repair_t_min_ms = t_min;
    cfg->sds.repair_t_max_ms = t_max;
    /* Short windows with many requests: a test over a lossy path has no store to fall back to. */
    cfg->sds.repair_max_requests = 20;
    cfg->sds.fetch_delay_ms = t_max + t_min;
    cfg->sds.lost_timeout_ms = 25 * t_max;
  }
  if (sync > 0)
    cfg->sds.sync_interval_ms = sync;
  uint64_t ack = atomic_load(&g_test_ack);
  if (ack > 0) { /* short acknowledgement timeouts: more attempts, as the window stays short */
    cfg->sds.ack_timeout_ms = ack;
    cfg->sds.possibly_acked_timeout_ms = 2 * ack;
    cfg->sds.max_retransmissions = 10;
  }
  cfg->segment_size = LD_CHANNELS_DEFAULT_SEGMENT_SIZE;
  cfg->reassembly_timeout_ms = LD_SEGMENT_DEFAULT_TIMEOUT_MS;
  cfg->rate_limit_epoch_ms = LD_CHANNELS_DEFAULT_EPOCH_MS;
  cfg->rate_limit_per_epoch = 1;
  cfg->rate_limit_max_queued = LD_CHANNELS_DEFAULT_MAX_QUEUED;
  cfg->rate_limit_max_queued_bytes = LD_CHANNELS_DEFAULT_MAX_QUEUED_BYTES;
  uint64_t rl_epoch = atomic_load(&g_test_rl_epoch), rl_n = atomic_load(&g_test_rl_per_epoch);
  if (rl_epoch > 0 && rl_n > 0) {
    cfg->rate_limit = true;
    cfg->rate_limit_epoch_ms = rl_epoch;
    cfg->rate_limit_per_epoch = rl_n;
  }
  cfg->max_requests = LD_CHANNELS_DEFAULT_MAX_REQUESTS;
  cfg->send_queue_max = LD_CHANNELS_DEFAULT_SEND_QUEUE;
  cfg->send_queue_max_bytes = LD_CHANNELS_DEFAULT_SEND_QUEUE_BYTES;
  cfg->sds.ack_sync_delay_ms = LD_CHANNELS_DEFAULT_ACK_SYNC_MS;
  uint64_t ack_sync_delay = atomic_load(&g_test_ack_sync_delay);
  if (ack_sync_delay > 0)
    cfg->sds.ack_sync_delay_ms = ack_sync_delay;
  cfg->sds.ack_sync_every = LD_CHANNELS_DEFAULT_ACK_SYNC_EVERY;
  cfg->sds.bloom_interval_ms = LD_CHANNELS_DEFAULT_BLOOM_INTERVAL_MS;
  size_t max_outgoing = atomic_load(&g_test_max_outgoing), queue = atomic_load(&g_test_send_queue);
  if (max_outgoing > 0)
    cfg->sds.max_outgoing = max_outgoing;
  if (queue > 0)
    cfg->send_queue_max = queue;
}

/* ---- helpers -------------------------------------------------------------------------------- */

static uint64_t wall_ms(void) {
  return ld_wall_ns() / 1000000u;
}

static char *dup_text(const char *s) {
  size_t n = strlen(s);
  char *p = malloc(n + 1);
  if (p != NULL)
    memcpy(p, s, n + 1);
  return p;
}

static void publish(ch_channel_t *ch, int kind, const ld_channel_event_t *ev) {
  if (!ch->closed && !ch->mgr->freeing)
    ld_broker_publish(ch->mgr->broker, kind, ev);
}

/* ---- requests ------------------------------------------------------------------------------- */

static void request_unlink(ch_request_t *r) {
  ch_channel_t *ch = r->ch;
  if (r->prev != NULL)
    r->prev->next = r->next;
  else
    ch->req_head = r->next;
  if (r->next != NULL)
    r->next->prev = r->prev;
  ch->n_requests--;
}

static void request_free(ch_request_t *r) {
  for (uint32_t i = 0; i < r->segments; i++) {
    if (r->seg_ids[i] != NULL &&
        ld_hashmap_get(r->ch->by_seg, r->seg_ids[i], strlen(r->seg_ids[i])) == r)
      ld_hashmap_remove(r->ch->by_seg, r->seg_ids[i], strlen(r->seg_ids[i]));
    free(r->seg_ids[i]);
  }
  free(r->seg_ids);
  free(r);
}

/* Drops the pending messaging sends of `r` (or of every request of `ch` when r is NULL). */
static void forget_pending(ld_channels_t *c, ch_channel_t *ch, ch_request_t *r) {
  ld_hashmap_iter_t it;
  ld_hashmap_iter_init(&it);
  const void *key;
  size_t klen;
  void *value;
  ch_pending_t *drop[64];
  for (;;) {
    size_t n = 0;
    ld_hashmap_iter_init(&it);
    while (n < 64 && ld_hashmap_next(c->pending, &it, &key, &klen, &value)) {
      ch_pending_t *p = value;
      if (r != NULL ? p->req == r : p->req->ch == ch)
        drop[n++] = p;
    }
    if (n == 0)
      return;
    for (size_t i = 0; i < n; i++) {
      ld_hashmap_remove(c->pending, drop[i]->msg_req, strlen(drop[i]->msg_req));
      free(drop[i]->seg_id);
      free(drop[i]);
    }
  }
}

static bool request_done(const ch_request_t *r) {
  return r->send_reported && (r->ephemeral || r->delivery_reported);
}

/* Reports what is complete in `r`; frees it once everything is reported. */
static void request_report(ch_request_t *r) {
  ch_channel_t *ch = r->ch;
  if (!r->send_reported && r->dispatched + r->dispatch_failed == r->segments) {
    r->send_reported = true;
    ld_channel_event_t ev = {.channel_id = ch->id, .request_id = r->id};
    if (r->dispatch_failed > 0) {
      ev.error = r->error[0] != '\0' ? r->error : "one or more segments failed";
      publish(ch, LD_EVENT_CHANNEL_ERROR, &ev);
    } else {
      publish(ch, LD_EVENT_CHANNEL_SENT, &ev);
    }
  }
  if (!r->ephemeral && !r->delivery_reported &&
      (r->delivery_failed > 0 || r->acked == r->segments)) {
    r->delivery_reported = true;
    ld_channel_event_t ev = {.channel_id = ch->id, .request_id = r->id};
    if (r->delivery_failed > 0) {
      ev.error = r->delivery_error;
      publish(ch, LD_EVENT_CHANNEL_DELIVERY_ERROR, &ev);
    } else {
      publish(ch, LD_EVENT_CHANNEL_DELIVERED, &ev);
    }
  }
  if (request_done(r)) {
    forget_pending(ch->mgr, ch, r);
    request_unlink(r);
    request_free(r);
  }
}

static void report_due_requests(ch_channel_t *ch) {
  ch->report_due = false;
  ch_request_t *r = ch->req_head;
  while (r != NULL) {
    ch_request_t *next = r->next;
    request_report(r);
    r = next;
  }
}

/* ---- persistence ---------------------------------------------------------------------------- */

static void persist_log(ch_channel_t *ch, const char *id, uint64_t lamport, const char *sender,
                        const uint8_t *hint, size_t hint_len) {
  ld_channel_store_t *st = ch->mgr->store;
  if (st == NULL || id == NULL || sender == NULL)
    return;
  ld_channel_store_put_log(st, ch->id, id, lamport, sender, hint, hint_len);
  size_t every = ch->mgr->cfg.sds.max_log / 10 + 1;
  if (++ch->log_puts >= every) {
    ch->log_puts = 0;
    ld_channel_store_trim_log(st, ch->id, ch->mgr->cfg.sds.max_log);
  }
}

static void persist_delete(ch_channel_t *ch, ld_channel_record_kind_t kind, const char *id) {
  if (ch->mgr->store != NULL && id != NULL)
    ld_channel_store_delete(ch->mgr->store, ch->id, kind, id);
}

/* Own content message `ev` (SEND, first transmission) into the outgoing rows, and into the log
 * when `log` (else its log row is written once its dispatch knows the hint); returns its Lamport
 * timestamp. */
static uint64_t persist_own(ch_channel_t *ch, const ld_sds_event_t *ev, const ch_request_t *r,
                            bool log) {
  uint64_t lamport = ev->lamport;
  if (ch->mgr->store == NULL)
    return lamport;
  if (log)
    persist_log(ch, ev->message_id, lamport, ch->sender, NULL, 0);
  ld_buf_t rec; /* without the bloom filter: restored with the one rebuilt from the log */
  ld_buf_init(&rec);
  if (ld_sds_strip_bloom(ev->data, ev->len, &rec) == 0)
    ld_channel_store_put_outgoing(ch->mgr->store, ch->id, ev->message_id, r->id, rec.data, rec.len);
  ld_buf_clear(&rec);
  return lamport;
}

/* A received message that waits for dependencies. */
static void persist_buffered(ch_channel_t *ch, const uint8_t *wire, size_t len, const uint8_t *hint,
                             size_t hint_len) {
  if (ch->mgr->store == NULL)
    return;
  ld_sds_message_t m;
  ld_sds_message_init(&m);
  ld_buf_t rec; /* without the bloom filter: its acknowledgements were taken when it came */
  ld_buf_init(&rec);
  if (ld_sds_message_decode(wire, len, &m, NULL, 0) == 0 &&
      ld_sds_strip_bloom(wire, len, &rec) == 0)
    ld_channel_store_put_incoming(ch->mgr->store, ch->id, m.message_id, rec.data, rec.len, hint,
                                  hint_len);
  ld_buf_clear(&rec);
  ld_sds_message_clear(&m);
}

/* Writes the channel row (its Lamport clock) of a channel written since the last commit. */
static void persist_channel_row(ch_channel_t *ch) {
  if (ch->mgr->store == NULL || !ch->state_dirty || ch->sds == NULL)
    return;
  ch->state_dirty = false;
  ld_sds_stats_t stats;
  ld_sds_get_stats(ch->sds, &stats);
  ld_channel_store_put_channel(ch->mgr->store, ch->id, ch->topic, ch->sender, stats.lamport);
}

/* Ends the store's transaction: every channel's writes since the last commit. */
static void commit_now(ld_channels_t *c) {
  if (c->store == NULL)
    return;
  ld_hashmap_iter_t it;
  ld_hashmap_iter_init(&it);
  const void *key;
  size_t klen;
  void *value;
  while (ld_hashmap_next(c->channels, &it, &key, &klen, &value))
    persist_channel_row(value);
  ld_channel_store_commit(c->store);
}

static void on_commit_timer(uv_timer_t *t) {
  commit_now(t->data);
}

/* The writes of a loop event are committed with those of the next LD_CHANNELS_COMMIT_MS in one
 * transaction (a context closed or destroyed commits at once). */
static void persist_commit(ch_channel_t *ch) {
  ld_channels_t *c = ch->mgr;
  if (c->store == NULL || ch->closed)
    return;
  ch->state_dirty = true;
  if (!c->freeing && !uv_is_active((uv_handle_t *)&c->commit_timer))
    uv_timer_start(&c->commit_timer, on_commit_timer, LD_CHANNELS_COMMIT_MS, 0);
}

/* ---- engine events -------------------------------------------------------------------------- */

static void rearm(ch_channel_t *ch);

static bool send_is_ephemeral(ld_sds_send_kind_t k) {
  return k == LD_SDS_SEND_SYNC || k == LD_SDS_SEND_REPAIR || k == LD_SDS_SEND_EPHEMERAL;
}

/* The request of an own content (or ephemeral) segment. */
static ch_request_t *request_of(ch_channel_t *ch, const char *seg_id) {
  return seg_id != NULL ? ld_hashmap_get(ch->by_seg, seg_id, strlen(seg_id)) : NULL;
}

static void segment_dispatch_failed(ch_request_t *r, const char *error) {
  r->dispatch_failed++;
  if (r->error[0] == '\0')
    snprintf(r->error, sizeof r->error, "%s", error);
}

/* The retrieval hint of an own message from the moment the MessagingClient took it (the Waku
 * hash of the message as submitted), as js-waku's ReliableChannel computes it before sending: a
 * message sent right after it carries the hint in its causal history even before this one
 * propagated (js-waku fetches from the store only what has a hint). With RLN the hash may still
 * change: a message that waited in the proving queue is stamped again when its proof starts (a
 * new timestamp, so a new hash); on_messaging_outcome then replaces the hint, and its log row,
 * with the hash of the message as propagated. */
static bool hint_at_submit(ch_channel_t *ch, const char *msg_req, const char *message_id,
                           uint64_t lamport) {
  const ld_message_record_t *rec = ld_messaging_record_by_request(ch->mgr->messaging, msg_req);
  if (rec == NULL || !rec->has_hash ||
      ld_sds_set_retrieval_hint(ch->sds, message_id, rec->hash, LD_WAKU_HASH_LEN) != 0)
    return false;
  persist_log(ch, message_id, lamport, ch->sender, rec->hash, LD_WAKU_HASH_LEN);
  return true;
}

/* Hands one SDS message to the MessagingClient now. Returns true when it wrote the message's log
 * row with its retrieval hint. */
static bool dispatch(ch_channel_t *ch, ld_sds_send_kind_t kind, const char *message_id,
                     const uint8_t *data, size_t len, uint64_t lamport) {
  ld_channels_t *c = ch->mgr;
  ld_messaging_envelope_t env = {ch->topic,  data,
                                 len,        (const uint8_t *)LD_CHANNELS_MARKER,
                                 MARKER_LEN, send_is_ephemeral(kind)};
  char msg_req[LD_MESSAGING_REQUEST_ID_LEN + 1], why[256] = "";
  int rc = ld_messaging_send(c->messaging, &env, msg_req, why, sizeof why);
  if (rc == 0)
    c->net_unpublished += len;
  bool first = kind == LD_SDS_SEND_CONTENT || kind == LD_SDS_SEND_EPHEMERAL;
  ch_request_t *r = first ? request_of(ch, message_id) : NULL;
  if (rc != 0) {
    LD_WARN(TOPIC, "channel %s: %s send failed: %s", ch->id, ld_sds_send_kind_name(kind), why);
    if (r != NULL) {
      segment_dispatch_failed(r, why[0] != '\0' ? why : ld_strerror(rc));
      ch->report_due = true;
    }
    return false;
  }
  if (r == NULL)
    return false;
  bool hinted = !r->ephemeral && hint_at_submit(ch, msg_req, message_id, lamport);
  ch_pending_t *p = calloc(1, sizeof *p);
  char *seg = p != NULL ? dup_text(message_id) : NULL;
  if (seg == NULL || ld_hashmap_put(c->pending, msg_req, strlen(msg_req), p, NULL) != 0) {
    /* Without a way to learn the outcome, the dispatch counts as done. */
    free(seg);
    free(p);
    r->dispatched++;
    ch->report_due = true;
    return hinted;
  }
  memcpy(p->msg_req, msg_req, sizeof msg_req);
  p->req = r;
  p->seg_id = seg;
  p->lamport = lamport;
  return hinted;
}

/* True while most pubsub peers have more than LD_CHANNELS_NET_BACKLOG_BYTES waiting to be
 * written, counting what the channels handed to the MessagingClient in this turn of the loop
 * (it publishes on the next): what the relay would queue beyond its per-peer cap it drops, and
 * SDS would only retransmit it an acknowledgement timeout later. */
static bool network_backlogged(ld_channels_t *c) {
  uint64_t tick = uv_now(c->loop);
  if (tick != c->net_tick) {
    c->net_tick = tick;
    c->net_unpublished = 0;
  }
  if (c->net_unpublished >= LD_CHANNELS_NET_BACKLOG_BYTES)
    return true;
  ld_gs_service_t *gs = ld_node_gossipsub(ld_messaging_node(c->messaging));
  size_t over = 0, total = 0;
  ld_gs_service_backlog(gs, LD_CHANNELS_NET_BACKLOG_BYTES - c->net_unpublished, &over, &total);
  return over * 2 > total;
}

/* ---- rate limit: a per-epoch budget of messages, queued beyond it --------------------------- */

typedef struct rl_item {
  char *channel_id, *message_id;
  ld_sds_send_kind_t kind;
  uint8_t *data;
  size_t len;
  uint64_t lamport;
  struct rl_item *next;
} rl_item_t;

static void rl_item_free(rl_item_t *q) {
  free(q->channel_id);
  free(q->message_id);
  free(q->data);
  free(q);
}

static uint64_t rl_epoch(const ld_channels_t *c, uint64_t now) {
  return now / c->cfg.rate_limit_epoch_ms;
}

/* True when one more message fits the current epoch (and charges it). */
static bool rl_admit(ld_channels_t *c) {
  if (!c->cfg.rate_limit)
    return true;
  uint64_t e = rl_epoch(c, wall_ms());
  if (e != c->rl_epoch) {
    c->rl_epoch = e;
    c->rl_used = 0;
  }
  if (c->rl_used >= c->cfg.rate_limit_per_epoch)
    return false;
  c->rl_used++;
  return true;
}

static void rl_on_timer(uv_timer_t *t);

static bool rl_background(ld_sds_send_kind_t k) {
  return k == LD_SDS_SEND_RETRANSMISSION || k == LD_SDS_SEND_SYNC;
}

/* A retransmission of a message already waiting adds nothing. */
static bool rl_waiting(const ld_channels_t *c, const char *channel_id, const char *message_id) {
  for (int l = 0; l < 2; l++)
    for (const rl_item_t *q = l == 0 ? c->rl_head : c->rl_bg_head; q != NULL; q = q->next)
      if (q->message_id != NULL && strcmp(q->message_id, message_id) == 0 &&
          strcmp(q->channel_id, channel_id) == 0)
        return true;
  return false;
}

static void rl_arm(ld_channels_t *c) {
  if ((c->rl_head == NULL && c->rl_bg_head == NULL) || c->freeing)
    return;
  if (c->rl_net_blocked || !c->cfg.rate_limit) {
    uv_timer_start(&c->rl_timer, rl_on_timer, LD_CHANNELS_NET_POLL_MS, 0);
    return;
  }
  uint64_t now = wall_ms(), next = (rl_epoch(c, now) + 1) * c->cfg.rate_limit_epoch_ms;
  uv_timer_start(&c->rl_timer, rl_on_timer, next > now ? next - now : 0, 0);
}

/* True when one more message may go to the MessagingClient now: the network takes it and it
 * fits the rate limit's budget (which it then charges). */
static bool rl_may_send(ld_channels_t *c) {
  c->rl_net_blocked = network_backlogged(c);
  return !c->rl_net_blocked && rl_admit(c);
}

/* Queues a send over the budget. First transmissions beyond the queue's bound fail their
 * request (reported); other sends are dropped and counted (SDS sends them again). */
static void rl_enqueue(ch_channel_t *ch, const ld_sds_event_t *ev, uint64_t lamport) {
  ld_channels_t *c = ch->mgr;
  if (ev->send_kind == LD_SDS_SEND_RETRANSMISSION && ev->message_id != NULL &&
      rl_waiting(c, ch->id, ev->message_id)) {
    c->rl_coalesced++;
    return;
  }
  rl_item_t *q = NULL;
  if (c->rl_queued < c->cfg.rate_limit_max_queued &&
      c->rl_queued_bytes + ev->len <= c->cfg.rate_limit_max_queued_bytes &&
      (q = calloc(1, sizeof *q)) != NULL) {
    q->channel_id = dup_text(ch->id);
    q->message_id = ev->message_id != NULL ? dup_text(ev->message_id) : NULL;
    q->data = malloc(ev->len > 0 ? ev->len : 1);
    if (q->channel_id == NULL || q->data == NULL ||
        (ev->message_id != NULL && q->message_id == NULL)) {
      rl_item_free(q);
      q = NULL;
    }
  }
  if (q == NULL) {
    c->rl_dropped++;
    ch_request_t *r = request_of(ch, ev->message_id);
    bool first = ev->send_kind == LD_SDS_SEND_CONTENT || ev->send_kind == LD_SDS_SEND_EPHEMERAL;
    LD_WARN(TOPIC, "channel %s: rate limit queue full: %s %s", ch->id,
            ld_sds_send_kind_name(ev->send_kind), first ? "failed" : "dropped (sent again later)");
    if (first && r != NULL) {
      segment_dispatch_failed(r, "rate limit queue full");
      ch->report_due = true;
    }
    return;
  }
  memcpy(q->data, ev->data, ev->len);
  q->len = ev->len;
  q->kind = ev->send_kind;
  q->lamport = lamport;
  rl_item_t **head = rl_background(q->kind) ? &c->rl_bg_head : &c->rl_head;
  rl_item_t **tail = rl_background(q->kind) ? &c->rl_bg_tail : &c->rl_tail;
  if (*tail != NULL)
    (*tail)->next = q;
  else
    *head = q;
  *tail = q;
  c->rl_queued++;
  c->rl_queued_bytes += q->len;
  rl_arm(c);
}

static void pump(ch_channel_t *ch);

static void rl_on_timer(uv_timer_t *t) {
  ld_channels_t *c = t->data;
  while ((c->rl_head != NULL || c->rl_bg_head != NULL) && rl_may_send(c)) {
    bool bg = c->rl_head == NULL;
    rl_item_t **head = bg ? &c->rl_bg_head : &c->rl_head,
              **tail = bg ? &c->rl_bg_tail : &c->rl_tail;
    rl_item_t *q = *head;
    *head = q->next;
    if (*head == NULL)
      *tail = NULL;
    c->rl_queued--;
    c->rl_queued_bytes -= q->len;
    ch_channel_t *ch = ld_hashmap_get(c->channels, q->channel_id, strlen(q->channel_id));
    if (ch != NULL) { /* a closed channel's queued sends go with it */
      dispatch(ch, q->kind, q->message_id, q->data, q->len, q->lamport);
      pump(ch);
    }
    rl_item_free(q);
  }
  rl_arm(c);
}

/* Hands one SDS message to the MessagingClient, within the rate limit. */
static void on_send(ch_channel_t *ch, const ld_sds_event_t *ev) {
  ld_channels_t *c = ch->mgr;
  bool first = ev->send_kind == LD_SDS_SEND_CONTENT || ev->send_kind == LD_SDS_SEND_EPHEMERAL;
  ch_request_t *r = first ? request_of(ch, ev->message_id) : NULL;
  bool waiting = rl_background(ev->send_kind) ? c->rl_head != NULL || c->rl_bg_head != NULL
                                              : c->rl_head != NULL;
  bool now = !waiting && rl_may_send(c);
  bool own = ev->send_kind == LD_SDS_SEND_CONTENT && r != NULL;
  uint64_t lamport = 0;
  if (own) /* dispatched now: one log row, with the hint known at submission */
    lamport = persist_own(ch, ev, r, !now);
  else if (ev->send_kind == LD_SDS_SEND_RETRANSMISSION && c->store != NULL)
    ld_channel_store_count_retransmission(c->store, ch->id, ev->message_id);
  if (!now)
    rl_enqueue(ch, ev, lamport);
  else if (!dispatch(ch, ev->send_kind, ev->message_id, ev->data, ev->len, lamport) && own)
    persist_log(ch, ev->message_id, lamport, ch->sender, NULL, 0);
}

static void on_acked(ch_channel_t *ch, const ld_sds_event_t *ev, bool failed) {
  persist_delete(ch, LD_CHANNEL_RECORD_OUTGOING, ev->message_id);
  ch_request_t *r = request_of(ch, ev->message_id);
  if (r == NULL)
    return;
  /* The segment stays mapped to its request until the request is freed: an acknowledgement (a
   * bloom filter's false positive) can come while the first transmission still waits in the rate
   * limiter's FIFO, whose dispatch must still find the request to report it sent. */
  if (failed) {
    r->delivery_failed++;
    if (r->delivery_error[0] == '\0')
      snprintf(r->delivery_error, sizeof r->delivery_error, "%s",
               ev->error == LD_ERR_LIMIT ? "outgoing buffer full: message given up"
                                         : "not acknowledged after the last retransmission");
  } else {
    r->acked++;
  }
  request_report(r);
}

static void deliver(ch_channel_t *ch, const char *sender, const uint8_t *payload, size_t len) {
  ld_channel_event_t out = {
      .channel_id = ch->id, .sender_id = sender, .payload = payload, .payload_len = len};
  publish(ch, LD_EVENT_CHANNEL_RECEIVED, &out);
}

static int apply_hook(ch_channel_t *ch, bool encrypt, const uint8_t *in, size_t len, uint8_t **out,
                      size_t *out_len);

/* A segment set dropped undelivered by the reassembler: reported as lost. */
static void on_segments_lost(void *ud, const char *sender, const uint8_t hash[LD_SEGMENT_HASH_LEN],
                             uint32_t held, uint32_t count, ld_reassembly_loss_t why) {
  ch_channel_t *ch = ud;
  char hex[LD_CHANNEL_LOST_HASH_TEXT];
  ld_channel_event_t ev;
  ld_channel_lost_segments(&ev, ch->id, sender, hash, why, hex);
  LD_WARN(TOPIC, "channel %s: segment set %s from %s lost (%s, %u of %u segments)", ch->id, hex,
          sender, ev.reason, held, count);
  publish(ch, LD_EVENT_CHANNEL_LOST, &ev);
}

/* Gives a segment to the reassembler; delivers the payload it completes. */
static void reassemble(ch_channel_t *ch, const char *sender, const ld_segment_t *seg) {
  uint8_t *whole = NULL;
  size_t whole_len = 0;
  int rc = ld_reassembler_add(ch->segments, sender, seg, wall_ms(), &whole, &whole_len);
  if (rc == LD_REASSEMBLY_COMPLETE)
    deliver(ch, sender, whole, whole_len);
  else if (rc != LD_REASSEMBLY_HELD && rc != LD_REASSEMBLY_DUPLICATE)
    LD_WARN(TOPIC, "channel %s: %s segment %u/%u from %s discarded (%d)", ch->id,
            seg->is_parity ? "parity" : "data", seg->is_parity ? seg->parity_index : seg->index,
            seg->is_parity ? seg->parity_count : seg->count, sender, rc);
  free(whole);
}

/* A delivered payload in clear: a whole payload, or a segment for reassembly. */
static void on_plain(ch_channel_t *ch, const ld_sds_event_t *ev, const uint8_t *data, size_t len) {
  ld_segment_t seg;
  int rc = ev->type == LD_SDS_EV_DELIVERED ? ld_segment_decode(data, len, &seg) : LD_ERR_MALFORMED;
  if (rc != 0) {
    deliver(ch, ev->sender_id, data, len);
    return;
  }
  reassemble(ch, ev->sender_id, &seg);
}

/* A content message SDS holds for missing dependencies (`wire`, the SDS message): when it is a
 * segment of a set with Reed–Solomon parity, it goes to the reassembler at once, so that a set
 * missing up to its parity count of segments is rebuilt without waiting for their repair (the
 * payload is then delivered ahead of the held segments; SDS delivers those later, as
 * duplicates of a delivered set). Not on a channel with an encryption hook: the application
 * decrypts each message once, when SDS delivers it. */
static void offer_held_segment(ch_channel_t *ch, const uint8_t *wire, size_t len) {
  if (ld_hashmap_get(ch->mgr->crypto, ch->id, strlen(ch->id)) != NULL)
    return; /* the application's decrypt hook sees each message once, on delivery */
  ld_sds_message_t m;
  ld_sds_message_init(&m);
  if (ld_sds_message_decode(wire, len, &m, NULL, 0) != 0)
    return;
  ld_segment_t seg;
  char *sender = m.has_content && m.sender_id_len > 0 &&
                         ld_segment_decode(m.content, m.content_len, &seg) == 0 &&
                         seg.parity_count > 0
                     ? strndup(m.sender_id, m.sender_id_len)
                     : NULL;
  if (sender != NULL)
    reassemble(ch, sender, &seg);
  free(sender);
  ld_sds_message_clear(&m);
}

/* A message delivered by SDS: decrypted (with a hook), then handled in clear. */
static void on_delivered(ch_channel_t *ch, const ld_sds_event_t *ev) {
  uint8_t *plain = NULL;
  size_t plain_len = 0;
  if (apply_hook(ch, false, ev->data, ev->len, &plain, &plain_len) != 0) {
    LD_WARN(TOPIC, "channel %s: message %s from %s could not be decrypted: dropped", ch->id,
            ev->message_id, ev->sender_id);
    return;
  }
  const uint8_t *data = plain != NULL ? plain : ev->data;
  size_t len = plain != NULL ? plain_len : ev->len;
  on_plain(ch, ev, data, len);
  free(plain);
}

static void on_engine_event(ch_channel_t *ch, const ld_sds_event_t *ev) {
  switch (ev->type) {
  case LD_SDS_EV_SEND:
    on_send(ch, ev);
    break;
  case LD_SDS_EV_DELIVERED:
    persist_log(ch, ev->message_id, ev->lamport, ev->sender_id, ev->hint, ev->hint_len);
    persist_delete(ch, LD_CHANNEL_RECORD_INCOMING, ev->message_id);
    /* fall through */
  case LD_SDS_EV_EPHEMERAL:
    on_delivered(ch, ev);
    break;
  case LD_SDS_EV_ACKNOWLEDGED:
    on_acked(ch, ev, false);
    break;
  case LD_SDS_EV_SEND_FAILED:
    on_acked(ch, ev, true);
    break;
  case LD_SDS_EV_FETCH:
    ld_channel_fetch_hint(&ch->mgr->fetch, ch->mgr, ch->mgr->messaging, ch->id, ev->hint,
                          ev->hint_len);
    break;
  case LD_SDS_EV_LOST: {
    LD_WARN(TOPIC, "channel %s: dependency %s declared lost", ch->id, ev->message_id);
    char hint[LD_CHANNEL_LOST_HINT_TEXT];
    ld_channel_event_t out;
    ld_channel_lost_dependency(&out, ch->id, ev->message_id, ev->sender_id, ev->hint, ev->hint_len,
                               hint);
    publish(ch, LD_EVENT_CHANNEL_LOST, &out);
    break;
  }
  case LD_SDS_EV_DROPPED:
    persist_delete(ch, LD_CHANNEL_RECORD_INCOMING, ev->message_id);
    LD_WARN(TOPIC, "channel %s: buffered message %s dropped (incoming buffer full)", ch->id,
            ev->message_id);
    break;
  default:
    break;
  }
}

static void queue_flush(ch_channel_t *ch);

/* Hands the send queue to the engine as far as it fits and drains the engine's events (twice:
 * acknowledgements among the events make room for more), then re-arms the channel's timer. */
static void pump(ch_channel_t *ch) {
  for (int round = 0; round < 2 && !ch->closed; round++) {
    queue_flush(ch);
    ld_sds_event_t ev;
    while (ld_sds_next_event(ch->sds, &ev)) {
      on_engine_event(ch, &ev);
      ld_sds_event_clear(&ev);
    }
  }
  if (ch->report_due)
    report_due_requests(ch);
  persist_commit(ch);
  rearm(ch);
}

static void on_timer(uv_timer_t *t) {
  ch_channel_t *ch = t->data;
  (void)ld_reassembler_expire(ch->segments, wall_ms(), NULL);
  int rc = ld_sds_handle_timeout(ch->sds, wall_ms());
  if (rc != 0)
    LD_WARN(TOPIC, "channel %s: timers: %s", ch->id, ld_strerror(rc));
  pump(ch);
}

static void rearm(ch_channel_t *ch) {
  if (ch->closed)
    return;
  uint64_t now = wall_ms(), at = ld_sds_next_deadline(ch->sds), expiry = UINT64_MAX;
  (void)ld_reassembler_expire(ch->segments, now, &expiry);
  if (expiry < at)
    at = expiry;
  if (ch->report_due)
    at = now;
  else if (ch->q_head != NULL && ch->q_blocked_by_network && at > now + LD_CHANNELS_NET_POLL_MS)
    at = now + LD_CHANNELS_NET_POLL_MS;
  if (at == UINT64_MAX) {
    uv_timer_stop(&ch->timer);
    return;
  }
  uv_timer_start(&ch->timer, on_timer, at > now ? at - now : 0, 0);
}

/* ---- send queue: what channel_send accepted, handed to the engine as room allows ------------- */

typedef struct ch_queued {
  ch_request_t *req;
  uint8_t *payload;
  size_t len;
  struct ch_queued *next;
} ch_queued_t;

static int send_request_now(ch_channel_t *ch, ch_request_t *r, const uint8_t *payload, size_t len);
static uint32_t segments_for(const ld_channels_config_t *cfg, size_t len, size_t *chunk);
static ch_request_t *request_new(ch_channel_t *ch, uint32_t segments, bool ephemeral);

/* True when request `r` can go to the engine now: the outgoing buffer has room for its segments
 * (so that none is given up to make room) and the network takes more. */
static bool can_dispatch(ch_channel_t *ch, const ch_request_t *r) {
  ld_sds_stats_t st;
  ld_sds_get_stats(ch->sds, &st);
  size_t max = ch->mgr->cfg.sds.max_outgoing;
  ch->q_blocked_by_network = false;
  if (!r->ephemeral && st.outgoing_len > 0 && st.outgoing_len + r->segments > max)
    return false;
  ch->q_blocked_by_network = network_backlogged(ch->mgr);
  return !ch->q_blocked_by_network;
}

static void queued_free(ch_queued_t *q) {
  free(q->payload);
  free(q);
}

static void queue_persist(ch_channel_t *ch, const ch_queued_t *q) {
  ld_channels_t *c = ch->mgr;
  if (c->store == NULL || q->req->ephemeral)
    return;
  uint64_t now_us = ld_wall_ns() / 1000u;
  c->queue_seq = now_us > c->queue_seq ? now_us : c->queue_seq + 1;
  ld_channel_store_put_queued(c->store, ch->id, q->req->id, c->queue_seq, q->payload, q->len);
}

/* Appends a copy of the payload of `r` to the channel's queue. */
static int queue_push(ch_channel_t *ch, ch_request_t *r, const uint8_t *payload, size_t len) {
  ch_queued_t *q = calloc(1, sizeof *q);
  if (q == NULL || (q->payload = malloc(len)) == NULL) {
    free(q);
    return LD_ERR_NOMEM;
  }
  memcpy(q->payload, payload, len);
  q->len = len;
  q->req = r;
  if (ch->q_tail != NULL)
    ch->q_tail->next = q;
  else
    ch->q_head = q;
  ch->q_tail = q;
  ch->q_len++;
  ch->q_bytes += len;
  return 0;
}

static ch_queued_t *queue_pop(ch_channel_t *ch) {
  ch_queued_t *q = ch->q_head;
  ch->q_head = q->next;
  if (ch->q_head == NULL)
    ch->q_tail = NULL;
  ch->q_len--;
  ch->q_bytes -= q->len;
  return q;
}

/* A queued request that could not be handed to the engine: both its events report it. */
static void queued_failed(ch_request_t *r, int rc) {
  r->dispatch_failed = r->segments - r->dispatched;
  r->delivery_failed++;
  snprintf(r->error, sizeof r->error, "queued message not sent: %s", ld_strerror(rc));
  snprintf(r->delivery_error, sizeof r->delivery_error, "%s", r->error);
  r->ch->report_due = true;
}

/* Hands queued requests to the engine, oldest first, while they fit. */
static void queue_flush(ch_channel_t *ch) {
  while (ch->q_head != NULL && !ch->closed && can_dispatch(ch, ch->q_head->req)) {
    ch_queued_t *q = queue_pop(ch);
    if (ch->mgr->store != NULL && !q->req->ephemeral)
      ld_channel_store_delete(ch->mgr->store, ch->id, LD_CHANNEL_RECORD_QUEUED, q->req->id);
    int rc = send_request_now(ch, q->req, q->payload, q->len);
    if (rc != 0)
      queued_failed(q->req, rc);
    queued_free(q);
  }
}

/* Drops the queue of a closing channel (its requests go with the channel). */
static void queue_clear(ch_channel_t *ch) {
  while (ch->q_head != NULL)
    queued_free(queue_pop(ch));
}

/* A persisted queued send came back from the store: queued again under its request ID. */
static void on_restored_queued(void *ud, const char *request_id, uint64_t ord,
                               const uint8_t *payload, size_t len) {
  ch_channel_t *ch = ud;
  if (ord > ch->mgr->queue_seq)
    ch->mgr->queue_seq = ord;
  size_t chunk;
  uint32_t n = segments_for(&ch->mgr->cfg, len, &chunk);
  ch_request_t *r = n > 0 ? request_new(ch, n, false) : NULL;
  if (r == NULL)
    return;
  snprintf(r->id, sizeof r->id, "%s", request_id);
  if (queue_push(ch, r, payload, len) != 0) {
    request_unlink(r);
    request_free(r);
  }
}

/* ---- messaging events ----------------------------------------------------------------------- */

static void on_messaging_outcome(int kind, const void *payload, void *ud) {
  ld_channels_t *c = ud;
  const ld_messaging_send_event_t *ev = payload;
  ch_pending_t *p = ld_hashmap_remove(c->pending, ev->request_id, strlen(ev->request_id));
  if (p == NULL)
    return;
  ch_request_t *r = p->req;
  if (kind == LD_EVENT_MESSAGING_PROPAGATED) {
    r->dispatched++;
    /* the hint is usually recorded (and its log row written) at submission (hint_at_submit);
     * a message stamped again before its proof (RLN) propagated under another hash, which
     * replaces it */
    if (ev->has_hash && !r->ephemeral &&
        !ld_sds_has_retrieval_hint(r->ch->sds, p->seg_id, ev->hash, LD_WAKU_HASH_LEN) &&
        ld_sds_set_retrieval_hint(r->ch->sds, p->seg_id, ev->hash, LD_WAKU_HASH_LEN) == 0)
      persist_log(r->ch, p->seg_id, p->lamport, r->ch->sender, ev->hash, LD_WAKU_HASH_LEN);
  } else {
    segment_dispatch_failed(r, ev->error != NULL ? ev->error : "send failed");
  }
  ch_channel_t *ch = r->ch;
  free(p->seg_id);
  free(p);
  request_report(r);
  persist_commit(ch);
}

#define MARKER_FAMILY "RELIABLE-CHANNEL-API/"
#define MARKER_FAMILY_LEN (sizeof MARKER_FAMILY - 1)

/* Whether a received Waku message may be channel traffic. js-waku's ReliableChannel (@waku/sdk)
 * sends SDS bytes as the payload with no `meta` and ignores `meta` on receipt, so the marker
 * cannot gate ingress: only another version of the marker is refused. Anything else on a
 * channel's content topic is offered to its engine, which drops what does not decode as SDS or
 * carries another channel ID. */
static bool is_channel_message(const ld_waku_message_t *msg) {
  if (msg->meta_len < MARKER_FAMILY_LEN || memcmp(msg->meta, MARKER_FAMILY, MARKER_FAMILY_LEN) != 0)
    return true;
  return msg->meta_len == MARKER_LEN && memcmp(msg->meta, LD_CHANNELS_MARKER, MARKER_LEN) == 0;
}

static bool has_topic(const ch_channel_t *ch, const ld_waku_message_t *msg) {
  return strlen(ch->topic) == msg->content_topic_len &&
         memcmp(ch->topic, msg->content_topic, msg->content_topic_len) == 0;
}

bool ld_channels_consumes(const ld_channels_t *c, const ld_waku_message_t *msg) {
  if (c == NULL || msg == NULL || !is_channel_message(msg))
    return false;
  ld_hashmap_iter_t it;
  ld_hashmap_iter_init(&it);
  const void *key;
  size_t klen;
  void *value;
  while (ld_hashmap_next(c->channels, &it, &key, &klen, &value))
    if (has_topic(value, msg))
      return true;
  return false;
}

static void on_messaging_received(int kind, const void *payload, void *ud) {
  (void)kind;
  ld_channels_t *c = ud;
  const ld_messaging_received_event_t *ev = payload;
  const ld_waku_message_t *msg = ev->msg;
  if (!is_channel_message(msg))
    return;
  ld_hashmap_iter_t it;
  ld_hashmap_iter_init(&it);
  const void *key;
  size_t klen;
  void *value;
  /* Channels are few (LD_CHANNELS_MAX_CHANNELS); each engine drops other channel IDs. */
  ch_channel_t *match[LD_CHANNELS_MAX_CHANNELS];
  size_t n = 0;
  while (n < LD_CHANNELS_MAX_CHANNELS && ld_hashmap_next(c->channels, &it, &key, &klen, &value)) {
    if (has_topic(value, msg))
      match[n++] = value;
  }
  for (size_t i = 0; i < n; i++) {
    ld_sds_rx_t outcome = 0;
    char why[160] = "";
    int rc = ld_sds_receive(match[i]->sds, wall_ms(), msg->payload, msg->payload_len, ev->hash,
                            LD_WAKU_HASH_LEN, &outcome, why, sizeof why);
    if (rc != 0)
      LD_DEBUG(TOPIC, "channel %s: message refused: %s (%s)", match[i]->id, ld_strerror(rc), why);
    else if (outcome == LD_SDS_RX_BUFFERED) {
      persist_buffered(match[i], msg->payload, msg->payload_len, ev->hash, LD_WAKU_HASH_LEN);
      offer_held_segment(match[i], msg->payload, msg->payload_len);
    }
    pump(match[i]);
  }
}

void ld_channels_receive_fetched(ld_channels_t *c, const char *pubsub_topic,
                                 const uint8_t hash[LD_WAKU_HASH_LEN],
                                 const ld_waku_message_t *msg) {
  ld_messaging_received_event_t ev = {.pubsub_topic = pubsub_topic, .msg = msg};
  memcpy(ev.hash, hash, LD_WAKU_HASH_LEN);
  on_messaging_received(LD_EVENT_MESSAGING_RECEIVED, &ev, c);
}

/* ---- manager -------------------------------------------------------------------------------- */

ld_channels_t *ld_channels_new(uv_loop_t *loop, ld_messaging_t *m, const ld_channels_config_t *cfg,
                               int *err) {
  int e = LD_ERR_INVALID_ARG;
  ld_channels_t *c = NULL;
  if (loop == NULL || m == NULL || cfg == NULL || ld_sds_config_check(&cfg->sds) != 0 ||
      cfg->segment_size <= LD_SEGMENT_OVERHEAD ||
      (cfg->parity_rate_ppm > 0 && cfg->segment_size < LD_SEGMENT_PARITY_OVERHEAD + 64) ||
      cfg->max_requests == 0 || cfg->send_queue_max == 0 || cfg->send_queue_max_bytes == 0)
    goto fail;
  e = LD_ERR_NOMEM;
  c = calloc(1, sizeof *c);
  if (c == NULL)
    goto fail;
  c->loop = loop;
  c->messaging = m;
  c->broker = ld_node_broker(ld_messaging_node(m));
  c->cfg = *cfg;
  c->open_handles = 1;
  c->channels = ld_hashmap_new(16);
  c->pending = ld_hashmap_new(64);
  c->crypto = ld_hashmap_new(8);
  if (c->channels == NULL || c->pending == NULL || c->crypto == NULL)
    goto fail;
  static const int kinds[3] = {LD_EVENT_MESSAGING_PROPAGATED, LD_EVENT_MESSAGING_ERROR,
                               LD_EVENT_MESSAGING_RECEIVED};
  e = LD_ERR_INVALID_ARG;
  if (cfg->rate_limit && (cfg->rate_limit_epoch_ms == 0 || cfg->rate_limit_per_epoch == 0 ||
                          cfg->rate_limit_max_queued == 0))
    goto fail;
  for (int i = 0; i < 3; i++) {
    c->handles[i] = ld_broker_subscribe(c->broker, kinds[i],
                                        i < 2 ? on_messaging_outcome : on_messaging_received, c);
    if (c->handles[i] < 0) {
      e = (int)c->handles[i];
      c->handles[i] = 0;
      goto fail;
    }
  }
  uv_timer_init(loop, &c->rl_timer);
  c->rl_timer.data = c;
  c->open_handles++;
  uv_timer_init(loop, &c->commit_timer);
  c->commit_timer.data = c;
  c->open_handles++;
  return c;
fail:
  if (c != NULL) {
    for (int i = 0; i < 3; i++)
      if (c->handles[i] > 0)
        ld_broker_unsubscribe(c->broker, c->handles[i]);
    ld_hashmap_free(c->channels, NULL);
    ld_hashmap_free(c->pending, NULL);
    ld_hashmap_free(c->crypto, free);
    free(c);
  }
  if (err != NULL)
    *err = e;
  return NULL;
}

static void manager_release(ld_channels_t *c) {
  if (--c->open_handles > 0)
    return;
  ld_channel_store_close(c->store);
  ld_hashmap_free(c->crypto, free);
  ld_hashmap_free(c->channels, NULL);
  ld_hashmap_free(c->pending, NULL);
  free(c);
}

static void on_channel_closed(uv_handle_t *h) {
  ch_channel_t *ch = h->data;
  ld_channels_t *c = ch->mgr;
  free(ch->id);
  free(ch->topic);
  free(ch->sender);
  free(ch);
  manager_release(c);
}

/* Frees everything of a channel but its timer, which closes asynchronously. */
static void channel_teardown(ch_channel_t *ch) {
  ld_channels_t *c = ch->mgr;
  persist_channel_row(ch);
  ld_channel_store_commit(c->store);
  ch->closed = true;
  queue_clear(ch);
  forget_pending(c, ch, NULL);
  while (ch->req_head != NULL) {
    ch_request_t *r = ch->req_head;
    request_unlink(r);
    request_free(r);
  }
  ld_hashmap_free(ch->by_seg, NULL);
  ch->by_seg = NULL;
  ld_sds_free(ch->sds);
  ch->sds = NULL;
  ld_reassembler_free(ch->segments);
  ch->segments = NULL;
  uv_timer_stop(&ch->timer);
  uv_close((uv_handle_t *)&ch->timer, on_channel_closed);
}

static void on_manager_timer_closed(uv_handle_t *h) {
  manager_release(h->data);
}

void ld_channels_free(ld_channels_t *c) {
  if (c == NULL)
    return;
  c->freeing = true;
  ld_channel_fetch_free(c->fetch);
  c->fetch = NULL;
  for (int l = 0; l < 2; l++) {
    rl_item_t *q = l == 0 ? c->rl_head : c->rl_bg_head;
    while (q != NULL) {
      rl_item_t *next = q->next;
      rl_item_free(q);
      q = next;
    }
  }
  c->rl_head = c->rl_tail = c->rl_bg_head = c->rl_bg_tail = NULL;
  uv_timer_stop(&c->rl_timer);
  uv_close((uv_handle_t *)&c->rl_timer, on_manager_timer_closed);
  commit_now(c);
  uv_timer_stop(&c->commit_timer);
  uv_close((uv_handle_t *)&c->commit_timer, on_manager_timer_closed);
  for (int i = 0; i < 3; i++)
    if (c->handles[i] > 0)
      ld_broker_unsubscribe(c->broker, c->handles[i]);
  ld_hashmap_iter_t it;
  const void *key;
  size_t klen;
  void *value;
  for (;;) {
    ld_hashmap_iter_init(&it);
    if (!ld_hashmap_next(c->channels, &it, &key, &klen, &value))
      break;
    ch_channel_t *ch = value;
    ld_hashmap_remove(c->channels, ch->id, strlen(ch->id));
    channel_teardown(ch);
  }
  manager_release(c);
}

static bool topic_in_use(const ld_channels_t *c, const char *topic) {
  ld_hashmap_iter_t it;
  ld_hashmap_iter_init(&it);
  const void *key;
  size_t klen;
  void *value;
  while (ld_hashmap_next(c->channels, &it, &key, &klen, &value))
    if (strcmp(((ch_channel_t *)value)->topic, topic) == 0)
      return true;
  return false;
}

static ch_request_t *request_new(ch_channel_t *ch, uint32_t segments, bool ephemeral);

/* An unacknowledged own message came back from the store: its request waits for the ack. */
static void on_restored(void *ud, const char *message_id, const char *request_id) {
  ch_channel_t *ch = ud;
  ch_request_t *r = request_new(ch, 1, false);
  if (r == NULL)
    return;
  snprintf(r->id, sizeof r->id, "%s", request_id);
  r->dispatched = 1;
  r->send_reported = true; /* reported before the restart */
  r->seg_ids[0] = dup_text(message_id);
  if (r->seg_ids[0] == NULL ||
      ld_hashmap_put(ch->by_seg, r->seg_ids[0], strlen(r->seg_ids[0]), r, NULL) != 0) {
    request_unlink(r);
    request_free(r);
  }
}

/* Opens the store at the first create, then loads the channel's state into its engine. */
static int restore(ch_channel_t *ch, char *why, size_t why_cap) {
  ld_channels_t *c = ch->mgr;
  if (c->cfg.state_path[0] == '\0')
    return 0;
  char detail[512] = "";
  if (c->store == NULL) {
    int rc = ld_channel_store_open(c->cfg.state_path, &c->store, detail, sizeof detail);
    if (rc != 0)
      return ld_error_fmt(why, why_cap, rc, "channel state store: %s", detail);
  }
  ld_channel_restore_fns_t fns = {.outgoing = on_restored, .queued = on_restored_queued};
  int rc = ld_channel_store_load(c->store, ch->id, ch->sender, ch->sds, wall_ms(), &fns, ch, detail,
                                 sizeof detail);
  if (rc < 0) {
    queue_clear(ch);
    while (ch->req_head != NULL) {
      ch_request_t *r = ch->req_head;
      request_unlink(r);
      request_free(r);
    }
    return ld_error_fmt(why, why_cap, rc, "%s", detail);
  }
  return 0;
}

static bool id_ok(const char *s) {
  return s != NULL && s[0] != '\0' && strlen(s) <= LD_CHANNEL_ID_MAX;
}

int ld_channels_create(ld_channels_t *c, const char *channel_id, const char *content_topic,
                       const char *sender_id, char *why, size_t why_cap) {
  if (!id_ok(channel_id) || !id_ok(sender_id) || content_topic == NULL) {
    snprintf(why, why_cap, "%s", !id_ok(channel_id) ? "invalid channel id" : "invalid sender id");
    return LD_ERR_INVALID_ARG;
  }
  if (ld_hashmap_contains(c->channels, channel_id, strlen(channel_id))) {
    snprintf(why, why_cap, "channel already exists: %s", channel_id);
    return LD_ERR_EXISTS;
  }
  if (ld_hashmap_size(c->channels) >= LD_CHANNELS_MAX_CHANNELS) {
    snprintf(why, why_cap, "too many channels (at most %u)", LD_CHANNELS_MAX_CHANNELS);
    return LD_ERR_LIMIT;
  }
  char sub_why[256] = "";
  bool was_subscribed = ld_messaging_subscribed(c->messaging, content_topic);
  int rc = ld_messaging_subscribe(c->messaging, content_topic, sub_why, sizeof sub_why);
  if (rc != 0) {
    snprintf(why, why_cap, "failed to subscribe to content topic: %s", sub_why);
    return rc;
  }
  ch_channel_t *ch = calloc(1, sizeof *ch);
  rc = LD_ERR_NOMEM;
  if (ch == NULL)
    goto fail;
  ch->mgr = c;
  ch->id = dup_text(channel_id);
  ch->topic = dup_text(content_topic);
  ch->sender = dup_text(sender_id);
  ch->by_seg = ld_hashmap_new(16);
  ch->segments = ld_reassembler_new(LD_SEGMENT_DEFAULT_MAX_SETS, LD_SEGMENT_DEFAULT_MAX_BYTES,
                                    c->cfg.reassembly_timeout_ms);
  if (ch->id == NULL || ch->topic == NULL || ch->sender == NULL || ch->by_seg == NULL ||
      ch->segments == NULL)
    goto fail;
  ld_reassembler_on_loss(ch->segments, on_segments_lost, ch);
  rc = ld_sds_new(&c->cfg.sds, channel_id, sender_id, wall_ms(), &ch->sds);
  if (rc != 0)
    goto fail;
  if ((rc = restore(ch, why, why_cap)) != 0)
    goto fail_why;
  rc = ld_hashmap_put(c->channels, ch->id, strlen(ch->id), ch, NULL);
  if (rc != 0)
    goto fail;
  uv_timer_init(c->loop, &ch->timer);
  ch->timer.data = ch;
  c->open_handles++;
  pump(ch); /* what the restore queued, the first commit, the timer */
  return 0;
fail:
  snprintf(why, why_cap, "%s", ld_strerror(rc));
fail_why:
  if (ch != NULL) {
    queue_clear(ch);
    while (ch->req_head != NULL) {
      ch_request_t *r = ch->req_head;
      request_unlink(r);
      request_free(r);
    }
    ld_sds_free(ch->sds);
    ld_hashmap_free(ch->by_seg, NULL);
    ld_reassembler_free(ch->segments);
    free(ch->id);
    free(ch->topic);
    free(ch->sender);
    free(ch);
  }
  if (!was_subscribed && !topic_in_use(c, content_topic))
    (void)ld_messaging_unsubscribe(c->messaging, content_topic, sub_why, sizeof sub_why);
  return rc;
}

bool ld_channels_exists(const ld_channels_t *c, const char *channel_id) {
  return channel_id != NULL && ld_hashmap_contains(c->channels, channel_id, strlen(channel_id));
}

static ch_channel_t *find(const ld_channels_t *c, const char *channel_id, char *why,
                          size_t why_cap) {
  ch_channel_t *ch =
      channel_id != NULL ? ld_hashmap_get(c->channels, channel_id, strlen(channel_id)) : NULL;
  if (ch == NULL)
    snprintf(why, why_cap, "unknown channel: %s", channel_id != NULL ? channel_id : "");
  return ch;
}

static void new_request_id(char out[LD_CHANNEL_REQUEST_ID_LEN + 1]) {
  uint8_t raw[LD_CHANNEL_REQUEST_ID_LEN / 2];
  ld_random_bytes(raw, sizeof raw);
  ld_hex_encode(raw, sizeof raw, out);
  out[LD_CHANNEL_REQUEST_ID_LEN] = '\0';
}

static ch_request_t *request_new(ch_channel_t *ch, uint32_t segments, bool ephemeral) {
  ch_request_t *r = calloc(1, sizeof *r);
  if (r == NULL)
    return NULL;
  r->seg_ids = calloc(segments, sizeof *r->seg_ids);
  if (r->seg_ids == NULL) {
    free(r);
    return NULL;
  }
  r->ch = ch;
  r->segments = segments;
  r->ephemeral = ephemeral;
  new_request_id(r->id);
  r->next = ch->req_head;
  if (ch->req_head != NULL)
    ch->req_head->prev = r;
  ch->req_head = r;
  ch->n_requests++;
  return r;
}

/* Wraps segment `i` of `r` in SDS and queues its SEND. */
/* Runs the channel's hook `fn` (encrypt or decrypt) on `in`: a heap copy of its output in *out,
 * or *out = NULL when the channel has no hook. LD_ERR_CRYPTO when the hook fails. */
static int apply_hook(ch_channel_t *ch, bool encrypt, const uint8_t *in, size_t len, uint8_t **out,
                      size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  ch_crypto_t *k = ld_hashmap_get(ch->mgr->crypto, ch->id, strlen(ch->id));
  ld_channel_crypto_fn fn = k == NULL ? NULL : encrypt ? k->encrypt : k->decrypt;
  if (fn == NULL)
    return 0;
  const uint8_t *res = NULL;
  size_t res_len = 0;
  if (fn(k->user_data, in, len, &res, &res_len) != 0 || (res == NULL && res_len > 0) ||
      (encrypt && res_len == 0) || res_len > LD_SDS_MAX_WIRE_SIZE)
    return LD_ERR_CRYPTO;
  *out = malloc(res_len > 0 ? res_len : 1);
  if (*out == NULL)
    return LD_ERR_NOMEM;
  if (res_len > 0)
    memcpy(*out, res, res_len);
  *out_len = res_len;
  return 0;
}

static int send_segment(ch_channel_t *ch, ch_request_t *r, uint32_t i, const uint8_t *plain,
                        size_t plain_len) {
  uint8_t *cipher = NULL;
  size_t cipher_len = 0;
  int crc = apply_hook(ch, true, plain, plain_len, &cipher, &cipher_len);
  if (crc != 0)
    return crc;
  const uint8_t *data = cipher != NULL ? cipher : plain;
  size_t len = cipher != NULL ? cipher_len : plain_len;
  char id[65];
  uint64_t now = wall_ms();
  ld_sds_message_id(ch->sender, ld_wall_ns() + i, data, len, id);
  r->seg_ids[i] = dup_text(id);
  int rc =
      r->seg_ids[i] == NULL ? LD_ERR_NOMEM : ld_hashmap_put(ch->by_seg, id, strlen(id), r, NULL);
  if (rc != 0) {
    free(cipher);
    return rc;
  }
  rc = r->ephemeral ? ld_sds_send_ephemeral(ch->sds, now, id, data, len)
                    : ld_sds_send(ch->sds, now, id, data, len);
  if (rc != 0)
    ld_hashmap_remove(ch->by_seg, id, strlen(id));
  free(cipher);
  return rc;
}

/* How a payload is cut: `data` segments of `chunk` bytes (the last shorter) and `parity`
 * Reed–Solomon segments; data = 0 when the payload is too large. */
typedef struct seg_plan {
  uint32_t data, parity;
  size_t chunk;
} seg_plan_t;

static seg_plan_t plan_for(const ld_channels_config_t *cfg, size_t len) {
  seg_plan_t p = {.data = 1, .parity = 0, .chunk = cfg->segment_size - LD_SEGMENT_OVERHEAD};
  if (len <= cfg->segment_size)
    return p;
  if (cfg->parity_rate_ppm > 0) {
    size_t chunk = (cfg->segment_size - LD_SEGMENT_PARITY_OVERHEAD) / 64 * 64;
    size_t n = (len + chunk - 1) / chunk;
    uint32_t m = n <= LD_SEGMENT_MAX_SEGMENTS
                     ? ld_segment_parity_count((uint32_t)n, cfg->parity_rate_ppm)
                     : 0;
    if (m > 0)
      return (seg_plan_t){.data = (uint32_t)n, .parity = m, .chunk = chunk};
  }
  size_t n = (len + p.chunk - 1) / p.chunk;
  p.data = n <= LD_SEGMENT_MAX_SEGMENTS ? (uint32_t)n : 0;
  return p;
}

/* Segments (data and parity) of a payload of `len` bytes: 1 up to the segment size (sent
 * unwrapped); 0 when over LD_SEGMENT_MAX_SEGMENTS. *chunk: the data segments' size. */
static uint32_t segments_for(const ld_channels_config_t *cfg, size_t len, size_t *chunk) {
  seg_plan_t p = plan_for(cfg, len);
  *chunk = p.chunk;
  return p.data == 0 ? 0 : p.data + p.parity;
}

/* Wraps and sends segment `i` (data segments first, then parity) of the payload. */
static int send_wrapped(ch_channel_t *ch, ch_request_t *r, const uint8_t hash[32], uint32_t i,
                        const seg_plan_t *p, const uint8_t *payload, size_t len,
                        uint8_t *const parity[]) {
  ld_segment_t seg = {.hash = hash, .count = p->data, .parity_count = p->parity};
  if (p->parity > 0)
    seg.total_len = len;
  if (i < p->data) {
    size_t off = (size_t)i * p->chunk;
    seg.index = i;
    seg.payload = payload + off;
    seg.len = len - off < p->chunk ? len - off : p->chunk;
  } else {
    seg.is_parity = true;
    seg.parity_index = i - p->data;
    seg.payload = parity[seg.parity_index];
    seg.len = p->chunk;
  }
  ld_buf_t buf;
  ld_buf_init(&buf);
  int rc = ld_segment_encode_full(&seg, &buf);
  if (rc == 0)
    rc = send_segment(ch, r, i, buf.data, buf.len);
  ld_buf_clear(&buf);
  return rc;
}

/* The parity segments of a plan: p->parity buffers of p->chunk bytes behind one allocation
 * (*parity, freed with free), NULL without parity. */
static int parity_for(const seg_plan_t *p, const uint8_t *payload, size_t len, uint8_t ***parity) {
  *parity = NULL;
  if (p->parity == 0)
    return 0;
  uint8_t **ptrs = malloc(p->parity * (sizeof *ptrs + p->chunk));
  if (ptrs == NULL)
    return LD_ERR_NOMEM;
  uint8_t *bytes = (uint8_t *)(ptrs + p->parity);
  for (uint32_t j = 0; j < p->parity; j++)
    ptrs[j] = bytes + (size_t)j * p->chunk;
  int rc = ld_segment_parity(payload, len, p->chunk, p->data, p->parity, ptrs);
  if (rc != 0) {
    free(ptrs);
    return rc;
  }
  *parity = ptrs;
  return 0;
}

/* Wraps and hands every segment of `r` to the engine. 0, or an error before any segment went
 * (nothing queued); once the first is out, a failure of a later one is reported on `r`. */
static int send_request_now(ch_channel_t *ch, ch_request_t *r, const uint8_t *payload, size_t len) {
  seg_plan_t p = plan_for(&ch->mgr->cfg, len);
  uint32_t n = p.data + p.parity;
  if (p.data == 1)
    return send_segment(ch, r, 0, payload, len);
  uint8_t hash[LD_KECCAK256_LEN];
  ld_keccak256(payload, len, hash);
  uint8_t **parity;
  int rc = parity_for(&p, payload, len, &parity);
  if (rc == 0)
    rc = send_wrapped(ch, r, hash, 0, &p, payload, len, parity);
  for (uint32_t i = 1; rc == 0 && i < n; i++) {
    rc = send_wrapped(ch, r, hash, i, &p, payload, len, parity);
    if (rc != 0) { /* the first segments are out: the rest are reported failed */
      r->dispatch_failed += n - i;
      r->delivery_failed++;
      snprintf(r->error, sizeof r->error, "segment %u of %u not sent: %s", i, n, ld_strerror(rc));
      snprintf(r->delivery_error, sizeof r->delivery_error, "%s", r->error);
      ch->report_due = true;
      rc = 0;
      break;
    }
  }
  free(parity);
  return rc;
}

/* The send queue's limits: LD_ERR_LIMIT with the reason when one more payload would exceed them. */
static int queue_admits(const ch_channel_t *ch, size_t len, char *why, size_t why_cap) {
  const ld_channels_config_t *cfg = &ch->mgr->cfg;
  if (ch->q_len + 1 > cfg->send_queue_max || ch->q_bytes + len > cfg->send_queue_max_bytes) {
    snprintf(why, why_cap,
             "send queue of channel %s full (%zu messages, %zu bytes waiting; at most %zu "
             "messages, %zu bytes)",
             ch->id, ch->q_len, ch->q_bytes, cfg->send_queue_max, cfg->send_queue_max_bytes);
    return LD_ERR_LIMIT;
  }
  if (ch->n_requests >= cfg->max_requests) {
    snprintf(why, why_cap, "too many messages in flight on the channel (at most %zu)",
             cfg->max_requests);
    return LD_ERR_LIMIT;
  }
  return 0;
}

int ld_channels_send(ld_channels_t *c, const char *channel_id, const uint8_t *payload, size_t len,
                     bool ephemeral, char request_id[LD_CHANNEL_REQUEST_ID_LEN + 1], char *why,
                     size_t why_cap) {
  ch_channel_t *ch = find(c, channel_id, why, why_cap);
  if (ch == NULL)
    return LD_ERR_NOT_FOUND;
  if (len == 0 || payload == NULL) {
    snprintf(why, why_cap, "empty payload");
    return LD_ERR_INVALID_ARG;
  }
  size_t chunk;
  uint32_t n = segments_for(&c->cfg, len, &chunk);
  if (n == 0 || (ephemeral && n > 1)) {
    snprintf(why, why_cap, "payload of %zu bytes exceeds the maximum of %zu bytes%s", len,
             ephemeral ? c->cfg.segment_size : (size_t)LD_SEGMENT_MAX_SEGMENTS * chunk,
             ephemeral ? " (ephemeral messages are not segmented)" : "");
    return LD_ERR_TOO_LARGE;
  }
  if (c->cfg.rate_limit && c->rl_queued + n > c->cfg.rate_limit_max_queued) {
    snprintf(why, why_cap, "rate limit queue full (%zu messages waiting)", c->rl_queued);
    return LD_ERR_LIMIT;
  }
  int rc = queue_admits(ch, len, why, why_cap);
  if (rc != 0)
    return rc;
  ch_request_t *r = request_new(ch, n, ephemeral);
  if (r == NULL) {
    snprintf(why, why_cap, "%s", ld_strerror(LD_ERR_NOMEM));
    return LD_ERR_NOMEM;
  }
  if (ch->q_head == NULL && can_dispatch(ch, r))
    rc = send_request_now(ch, r, payload, len);
  else if ((rc = queue_push(ch, r, payload, len)) == 0)
    queue_persist(ch, ch->q_tail);
  if (rc != 0) {
    snprintf(why, why_cap, "%s", ld_strerror(rc));
    request_unlink(r);
    request_free(r);
    pump(ch); /* a failed call queues nothing, but NOMEM may leave a half-done send */
    return rc;
  }
  memcpy(request_id, r->id, LD_CHANNEL_REQUEST_ID_LEN + 1);
  pump(ch);
  return 0;
}

int ld_channels_close(ld_channels_t *c, const char *channel_id, char *why, size_t why_cap) {
  ch_channel_t *ch = find(c, channel_id, why, why_cap);
  if (ch == NULL)
    return LD_ERR_NOT_FOUND;
  ld_hashmap_remove(c->channels, ch->id, strlen(ch->id));
  if (!topic_in_use(c, ch->topic)) {
    char sub_why[256];
    (void)ld_messaging_unsubscribe(c->messaging, ch->topic, sub_why, sizeof sub_why);
  }
  channel_teardown(ch);
  return 0;
}

int ld_channels_set_encryption(ld_channels_t *c, const char *channel_id, ld_channel_crypto_fn enc,
                               ld_channel_crypto_fn dec, void *user_data) {
  if (!id_ok(channel_id) || (enc == NULL) != (dec == NULL))
    return LD_ERR_INVALID_ARG;
  size_t n = strlen(channel_id);
  if (enc == NULL) {
    free(ld_hashmap_remove(c->crypto, channel_id, n));
    return 0;
  }
  ch_crypto_t *k = ld_hashmap_get(c->crypto, channel_id, n);
  if (k == NULL) {
    if (ld_hashmap_size(c->crypto) >= LD_CHANNELS_MAX_CHANNELS)
      return LD_ERR_LIMIT;
    if ((k = calloc(1, sizeof *k)) == NULL)
      return LD_ERR_NOMEM;
    if (ld_hashmap_put(c->crypto, channel_id, n, k, NULL) != 0) {
      free(k);
      return LD_ERR_NOMEM;
    }
  }
  *k = (ch_crypto_t){enc, dec, user_data};
  return 0;
}

bool ld_channels_stats(const ld_channels_t *c, const char *channel_id, ld_sds_stats_t *out) {
  ch_channel_t *ch =
      channel_id != NULL ? ld_hashmap_get(c->channels, channel_id, strlen(channel_id)) : NULL;
  if (ch == NULL)
    return false;
  ld_sds_get_stats(ch->sds, out);
  return true;
}

void ld_channels_store_counts(const ld_channels_t *c, ld_channel_store_counts_t *out) {
  ld_channel_store_counts(c != NULL ? c->store : NULL, out);
}
