/* Internals of the SDS engine (channels/sds.h), shared by its source files:
 *   sds.c           lifecycle, clock, events, timers, public entry points
 *   sds_log.c       local log ordered by (Lamport, ID) and the repair cache
 *   sds_outgoing.c  building messages, the outgoing buffer, acknowledgements, sync
 *   sds_incoming.c  receiving, the incoming buffer, missing and lost dependencies
 *   sds_repair.c    SDS-R timing and the repair answers
 * Not for use outside src/channels/. */
#ifndef LD_CHANNELS_SDS_INTERNAL_H
#define LD_CHANNELS_SDS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/hashmap.h"
#include "base/timerheap.h"
#include "channels/bloom.h"
#include "channels/sds.h"

/* Bytes an unmet dependency adds to a buffered message's cost (index entries). */
#define SDS_DEP_COST 64u

/* Timers of every kind share one heap; the kind says which struct embeds the timer. */
enum {
  TK_OUTGOING = 1,
  TK_INCOMING,
  TK_MISSING,
  TK_RESPONSE,
  TK_SYNC,
  TK_REPAIR_SYNC,
  TK_ACK_SYNC
};

typedef struct sds_timer {
  ld_timer_t t; /* first member: a popped ld_timer_t* is the sds_timer_t* */
  int kind;
} sds_timer_t;

/* An owned copy of a history entry. */
typedef struct sds_entry {
  char *id;
  size_t id_len;
  uint8_t *hint; /* NULL when absent */
  size_t hint_len;
  char *sender; /* NULL when absent */
  size_t sender_len;
} sds_entry_t;

/* ---- local log ------------------------------------------------------------------------------ */

typedef struct log_entry {
  uint64_t lamport;
  char *id;
  size_t id_len;
  char *sender;
  size_t sender_len;
  uint8_t *hint; /* NULL until known */
  size_t hint_len;
  uint8_t *cached; /* repair copy (encoded, no bloom filter) or NULL */
  size_t cached_len;
  struct log_entry *cache_prev, *cache_next; /* the cache's insertion order */
} log_entry_t;

typedef struct sds_log {
  log_entry_t **items; /* ascending (Lamport, ID) */
  size_t len, cap;
  ld_hashmap_t *by_id;
  log_entry_t *cache_head, *cache_tail; /* oldest, newest cached */
  size_t cache_len, cache_bytes;
} sds_log_t;

/* ---- outgoing buffer ------------------------------------------------------------------------ */

typedef struct out_entry {
  sds_timer_t timer;
  char *id;
  size_t id_len;
  uint8_t *wire; /* the exact bytes retransmitted */
  size_t wire_len;
  uint32_t positions[LD_BLOOM_MAX_K]; /* bloom bits of the ID, for acknowledgement lookups */
  uint32_t retransmissions;
  uint32_t possible_acks;
  uint64_t last_sent;
  struct out_entry *prev, *next; /* send order */
} out_entry_t;

/* ---- incoming buffer and missing dependencies ------------------------------------------------ */

typedef struct in_entry {
  sds_timer_t timer;    /* expiry: received + lost_timeout */
  ld_sds_message_t msg; /* decoded from `copy` (no bloom filter, no repair requests) */
  uint8_t *copy;        /* the repair copy, kept for the log at delivery */
  size_t copy_len;
  uint8_t *hint;
  size_t hint_len;
  size_t unmet; /* dependencies neither logged nor lost (with repetitions) */
  size_t cost;
  uint64_t mark; /* expiry walk: visited in walk number `mark` */
  bool on_stack;
  struct in_entry *prev, *next; /* arrival order */
} in_entry_t;

/* A list of buffered messages waiting for one dependency. */
typedef struct waiters {
  in_entry_t **items;
  size_t len, cap;
} waiters_t;

typedef struct missing {
  sds_timer_t timer;
  sds_entry_t entry;
  uint64_t lost_at;    /* UINT64_MAX: never */
  uint64_t t_req;      /* next repair request; UINT64_MAX: no more */
  uint64_t next_fetch; /* UINT64_MAX: no more */
  uint32_t requests, fetches;
} missing_t;

typedef struct response {
  sds_timer_t timer;
  char *id;
  size_t id_len;
} response_t;

/* ---- the engine ----------------------------------------------------------------------------- */

typedef struct sds_event_node {
  ld_sds_event_t ev;
  struct sds_event_node *next;
} sds_event_node_t;

struct ld_sds {
  ld_sds_config_t cfg;
  char *channel_id;
  size_t channel_id_len;
  char *self;
  size_t self_len;
  uint64_t self_hash; /* H(self), for T_resp */
  uint64_t now;
  uint64_t lamport;
  uint64_t rng;

  ld_bloom_t bloom;
  bool bloom_sent;        /* a message carried the bloom filter since the engine started */
  uint64_t bloom_sent_at; /* when (cfg.bloom_interval_ms) */
  sds_log_t log;

  ld_hashmap_t *outgoing; /* id → out_entry_t */
  out_entry_t *out_head, *out_tail;

  ld_hashmap_t *incoming; /* id → in_entry_t */
  in_entry_t *in_head, *in_tail;
  size_t incoming_bytes;
  ld_hashmap_t *waiting; /* dependency id → waiters_t */
  uint64_t walk;         /* expiry walks so far */

  ld_hashmap_t *missing;   /* id → missing_t */
  ld_hashmap_t *responses; /* id → response_t */
  ld_hashmap_t *lost;      /* id → (char *) its key copy in lost_ring */
  char **lost_ring;        /* FIFO of lost IDs, max_lost slots */
  size_t lost_head, lost_len;

  ld_timerheap_t timers;
  sds_timer_t sync_timer;
  sds_timer_t repair_sync_timer; /* a sync to carry due repair requests */
  uint64_t last_repair_sync;
  sds_timer_t ack_sync_timer; /* acknowledgement syncs (cfg.ack_sync_delay_ms) */
  bool ack_sync_armed;
  uint32_t ack_syncs_owed;
  uint64_t rx_since_sync; /* content messages received since the last sync sent */

  sds_event_node_t *ev_head, *ev_tail;
  size_t ev_len;

  ld_sds_stats_t stats;
};

/* sds.c */
/* Start of an entry point: LD_ERR_AGAIN when the event queue is full, else advances `now`. */
int sds_begin(ld_sds_t *s, uint64_t now);
int sds_emit(ld_sds_t *s, ld_sds_event_t *ev); /* takes ev's fields (cleared on failure too) */
/* A SEND event of `data`; `lamport` is the message's Lamport timestamp when it is a content
 * message (LD_SDS_SEND_CONTENT), 0 otherwise. */
int sds_emit_send(ld_sds_t *s, ld_sds_send_kind_t kind, const char *id, uint64_t lamport,
                  const uint8_t *data, size_t len);
int sds_emit_entry(ld_sds_t *s, ld_sds_event_type_t type, const sds_entry_t *e);
int sds_arm(ld_sds_t *s, sds_timer_t *t, uint64_t deadline); /* UINT64_MAX disarms */
void sds_disarm(ld_sds_t *s, sds_timer_t *t);
uint64_t sds_random(ld_sds_t *s);
uint64_t sds_lamport_tick(ld_sds_t *s);
void sds_restart_sync(ld_sds_t *s, unsigned half_steps); /* delay × half_steps / 2 */
/* Content received: an acknowledgement sync within cfg.ack_sync_delay_ms (when on). */
void sds_ack_sync_on_content(ld_sds_t *s);
/* After a content message was logged or buffered: the acknowledgement sync that
 * cfg.ack_sync_every messages received since the previous sync bring at once. */
int sds_ack_sync_if_due(ld_sds_t *s);
char *sds_strndup(const char *p, size_t n);
uint8_t *sds_memdup(const void *p, size_t n);
int sds_entry_copy(sds_entry_t *dst, const ld_sds_history_entry_t *src);
void sds_entry_clear(sds_entry_t *e);
void sds_entry_view(const sds_entry_t *e, ld_sds_history_entry_t *view);

/* sds_log.c */
int sds_log_init(sds_log_t *l);
void sds_log_clear(sds_log_t *l);
log_entry_t *sds_log_find(const sds_log_t *l, const char *id, size_t id_len);
/* Inserts a delivered or own message at its (Lamport, ID) position; `cached` (may be NULL) is
 * its repair copy, taken over. Evicts beyond the limits. */
int sds_log_insert(ld_sds_t *s, uint64_t lamport, const char *id, size_t id_len, const char *sender,
                   size_t sender_len, const uint8_t *hint, size_t hint_len, uint8_t *cached,
                   size_t cached_len);
int sds_log_set_hint(log_entry_t *e, const uint8_t *hint, size_t hint_len);
/* The causal history to send: the last `n` entries as views into the log (valid until the
 * log changes). `out` has room for n. Returns the count. */
size_t sds_log_history(const sds_log_t *l, size_t n, ld_sds_history_entry_t *out);

/* sds_outgoing.c */
void sds_outgoing_free_all(ld_sds_t *s);
int sds_outgoing_on_timer(ld_sds_t *s, out_entry_t *o);
int sds_review_acks(ld_sds_t *s, const ld_sds_message_t *m);
int sds_send_sync(ld_sds_t *s); /* 1 sent, 0 nothing to carry, < 0 error */
/* Puts a persisted own message back in the outgoing buffer (a copy of `wire`), its next
 * retransmission one ack timeout from now. LD_ERR_EXISTS, LD_ERR_NOMEM. */
int sds_outgoing_restore(ld_sds_t *s, const char *id, size_t id_len, const uint8_t *wire,
                         size_t len, uint32_t retransmissions);
/* Encodes `m` without its bloom filter and repair requests (the repair copy). */
int sds_encode_repair_copy(const ld_sds_message_t *m, uint8_t **out, size_t *out_len);
void sds_bloom_insert(ld_sds_t *s, const char *id, size_t id_len);

/* sds_incoming.c */
void sds_incoming_free_all(ld_sds_t *s);
int sds_incoming_receive(ld_sds_t *s, const ld_sds_message_t *m, const uint8_t *hint,
                         size_t hint_len, ld_sds_rx_t *outcome);
int sds_incoming_on_timer(ld_sds_t *s, in_entry_t *e);
int sds_missing_on_timer(ld_sds_t *s, missing_t *m);
bool sds_is_lost(const ld_sds_t *s, const char *id, size_t id_len);
/* Up to `max` repair requests due now (lowest T_req first) as views (valid until the missing
 * table changes) and the entries they come from; nothing is marked. Returns the count. */
size_t sds_peek_repair_requests(ld_sds_t *s, size_t max, ld_sds_history_entry_t *out,
                                missing_t **from);
/* Marks the peeked requests as sent (next request after T_max, at most repair_max_requests). */
void sds_commit_repair_requests(ld_sds_t *s, missing_t **from, size_t n);
bool sds_repair_request_due(const ld_sds_t *s);
/* Another participant asked for `id`: our own request waits T_max more. */
int sds_missing_postpone(ld_sds_t *s, const char *id, size_t id_len);

/* sds_repair.c */
uint64_t sds_repair_hash(const void *a, size_t alen, const void *b, size_t blen);
uint64_t sds_repair_t_req(const ld_sds_t *s, const char *id, size_t id_len);
uint64_t sds_repair_t_resp(const ld_sds_t *s, const char *sender, size_t sender_len, const char *id,
                           size_t id_len);
bool sds_repair_in_group(const ld_sds_t *s, const char *sender, size_t sender_len, const char *id,
                         size_t id_len);
int sds_repair_process_requests(ld_sds_t *s, const ld_sds_message_t *m);
void sds_repair_forget(ld_sds_t *s, const char *id, size_t id_len);
int sds_response_on_timer(ld_sds_t *s, response_t *r);
void sds_responses_free_all(ld_sds_t *s);

#endif
