#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/hashmap.h"
#include "base/log.h"
#include "messaging/reliability.h"
#include "waku/core/codecs.h"
#include "waku/store/client.h"

#define TOPIC "reliability"

typedef struct store_rel store_rel_t;

typedef enum call_kind {
  CALL_CONFIRM = 0,
  CALL_RECOVER,
} call_kind_t;

struct ld_reliability_call {
  ld_reliability_call_t *prev, *next;
  store_rel_t *owner;
  call_kind_t kind;
  void *ud;
  ld_service_peer_t peer;
  uint64_t started_ms;     /* for the service-peer outcome */
  ld_service_dial_t *dial; /* while connecting */
  ld_store_call_t *store;  /* while a store query runs */
  ld_conn_t *conn;
  bool in_cb;    /* inside known / on_message */
  bool canceled; /* cancelled from inside them */
  /* confirm */
  uint8_t (*hashes)[LD_WAKU_HASH_LEN];
  size_t n_hashes;
  ld_reliability_confirm_fn confirmed;
  /* recover */
  char *pubsub_topic;
  char **topics;
  size_t n_topics;
  int64_t start_ns, end_ns;
  ld_reliability_known_fn known;
  ld_reliability_message_fn on_message;
  ld_reliability_done_fn done;
  ld_hashmap_t *missing_set;
  uint8_t (*missing)[LD_WAKU_HASH_LEN];
  size_t n_missing, cap_missing, next_fetch, batch, recovered;
};

struct store_rel {
  ld_reliability_t base; /* first */
  ld_switch_t *sw;
  ld_service_peers_t *peers;
  ld_store_reliability_config_t cfg;
  ld_reliability_call_t *calls;
};

/* ---- calls ----------------------------------------------------------------------------------- */

static void call_free(ld_reliability_call_t *c) {
  store_rel_t *s = c->owner;
  if (c->prev != NULL)
    c->prev->next = c->next;
  else
    s->calls = c->next;
  if (c->next != NULL)
    c->next->prev = c->prev;
  free(c->hashes);
  free(c->pubsub_topic);
  for (size_t i = 0; i < c->n_topics; i++)
    free(c->topics[i]);
  free(c->topics);
  ld_hashmap_free(c->missing_set, NULL);
  free(c->missing);
  free(c);
}

static ld_reliability_call_t *call_new(store_rel_t *s, call_kind_t kind, void *ud) {
  ld_reliability_call_t *c = calloc(1, sizeof *c);
  if (c == NULL)
    return NULL;
  c->owner = s;
  c->kind = kind;
  c->ud = ud;
  c->next = s->calls;
  if (s->calls != NULL)
    s->calls->prev = c;
  s->calls = c;
  return c;
}

/* Tells the selector how the peer did (service_peers.h): one transient answer (503, 429, a
 * timeout) keeps it for the next call, with back-off; a dial or protocol failure skips it. */
static void peer_outcome(ld_reliability_call_t *c, int err, uint32_t status) {
  ld_service_outcome_t o = ld_service_outcome_of(err, status);
  if (o != LD_SERVICE_SERVED)
    LD_DEBUG(TOPIC, "store peer answered %u (%s): %s peer", status, ld_errname(err),
             ld_service_outcome_name(o));
  ld_service_peers_report(c->owner->peers, &c->peer.id, o, c->started_ms, ld_now_ms());
}

/* The final callback with an error, then the call is gone. */
static void finish_error(ld_reliability_call_t *c, int err) {
  if (c->kind == CALL_CONFIRM)
    c->confirmed(err, NULL, 0, c->ud);
  else
    c->done(err, c->recovered, c->ud);
  call_free(c);
}

static int pick_peer(store_rel_t *s, ld_service_peer_t *out) {
  if (s->cfg.pick != NULL)
    return s->cfg.pick(s->cfg.pick_user_data, out);
  size_t n = ld_service_peers_pick(s->peers, LD_WAKU_STORE_CODEC, NULL, 0, ld_now_ms(), out, 1);
  return n > 0 ? 0 : LD_ERR_NOT_FOUND;
}

static ld_store_client_opts_t store_opts(const store_rel_t *s) {
  ld_store_client_opts_t o;
  memset(&o, 0, sizeof o);
  o.timeout_ms = s->cfg.timeout_ms;
  o.max_msg_size = s->cfg.max_msg_size;
  o.paging = LD_STORE_PAGING_CURSOR;
  return o;
}

static void on_dialed(ld_conn_t *conn, int err, void *ud);

/* Picks a store peer and starts connecting to it. */
static int call_connect(ld_reliability_call_t *c) {
  int rc = pick_peer(c->owner, &c->peer);
  c->started_ms = ld_now_ms();
  if (rc == 0)
    rc = ld_service_peers_connect(c->owner->sw, &c->peer, on_dialed, c, &c->dial);
  return rc;
}

/* ---- confirm --------------------------------------------------------------------------------- */

void ld_store_reliability_mark_present(const uint8_t (*hashes)[LD_WAKU_HASH_LEN], size_t n,
                                       const ld_store_response_t *res, bool *present) {
  for (size_t i = 0; i < n; i++) {
    present[i] = false;
    for (size_t j = 0; j < res->n_entries && !present[i]; j++)
      present[i] = memcmp(hashes[i], res->entries[j].hash, LD_WAKU_HASH_LEN) == 0;
  }
}

static void on_confirm_answer(int err, ld_store_response_t *res, void *ud) {
  ld_reliability_call_t *c = ud;
  c->store = NULL;
  if (err < 0 || res->status_code != LD_STORE_STATUS_OK) {
    LD_DEBUG(TOPIC, "confirmation query failed: %u %s", res->status_code,
             res->status_desc != NULL ? res->status_desc : "");
    peer_outcome(c, err < 0 ? err : 0, res->status_code);
    finish_error(c, err < 0 ? err : LD_ERR_PROTOCOL);
    return;
  }
  peer_outcome(c, 0, res->status_code);
  bool present[LD_RELIABILITY_MAX_CONFIRM];
  ld_store_reliability_mark_present((const uint8_t(*)[LD_WAKU_HASH_LEN])c->hashes, c->n_hashes, res,
                                    present);
  c->confirmed(0, present, c->n_hashes, c->ud);
  call_free(c);
}

static int confirm_query(ld_reliability_call_t *c) {
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.include_data = false;
  q.hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])c->hashes;
  q.n_hashes = c->n_hashes;
  q.has_limit = true;
  q.limit = LD_STORE_MAX_PAGE_SIZE;
  ld_store_target_t to = {c->conn, NULL};
  ld_store_client_opts_t o = store_opts(c->owner);
  return ld_store_client_query(c->owner->sw, &to, &q, &o, on_confirm_answer, c, &c->store);
}

static int sr_confirm(ld_reliability_t *r, const uint8_t (*hashes)[LD_WAKU_HASH_LEN], size_t n,
                      ld_reliability_confirm_fn cb, void *ud, ld_reliability_call_t **out) {
  store_rel_t *s = (store_rel_t *)r;
  if (hashes == NULL || cb == NULL || n == 0 || n > LD_RELIABILITY_MAX_CONFIRM)
    return LD_ERR_INVALID_ARG;
  ld_reliability_call_t *c = call_new(s, CALL_CONFIRM, ud);
  if (c == NULL || (c->hashes = malloc(n * LD_WAKU_HASH_LEN)) == NULL) {
    if (c != NULL)
      call_free(c);
    return LD_ERR_NOMEM;
  }
  memcpy(c->hashes, hashes, n * LD_WAKU_HASH_LEN);
  c->n_hashes = n;
  c->confirmed = cb;
  int rc = call_connect(c);
  if (rc != 0) {
    call_free(c);
    return rc;
  }
  if (out != NULL)
    *out = c;
  return 0;
}

/* ---- recover --------------------------------------------------------------------------------- */

static int add_missing(ld_reliability_call_t *c, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  if (ld_hashmap_contains(c->missing_set, hash, LD_WAKU_HASH_LEN))
    return 0;
  if (c->n_missing == c->cap_missing) {
    size_t cap = c->cap_missing == 0 ? 64 : c->cap_missing * 2;
    void *p = realloc(c->missing, cap * LD_WAKU_HASH_LEN);
    if (p == NULL)
      return LD_ERR_NOMEM;
    c->missing = p;
    c->cap_missing = cap;
  }
  if (ld_hashmap_put(c->missing_set, hash, LD_WAKU_HASH_LEN, c, NULL) != 0)
    return LD_ERR_NOMEM;
  memcpy(c->missing[c->n_missing++], hash, LD_WAKU_HASH_LEN);
  return 0;
}

static bool is_known(ld_reliability_call_t *c, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  if (c->known == NULL)
    return false;
  c->in_cb = true;
  bool known = c->known(hash, c->ud);
  c->in_cb = false;
  return known;
}

static bool on_hash_page(ld_store_response_t *page, void *ud) {
  ld_reliability_call_t *c = ud;
  for (size_t i = 0; i < page->n_entries && !c->canceled; i++) {
    if (c->n_missing >= LD_RELIABILITY_MAX_RECOVER)
      return false;
    if (!is_known(c, page->entries[i].hash) && add_missing(c, page->entries[i].hash) != 0)
      return false;
  }
  return !c->canceled;
}

static void fetch_next(ld_reliability_call_t *c);

static void on_fetched(int err, ld_store_response_t *res, void *ud) {
  ld_reliability_call_t *c = ud;
  c->store = NULL;
  if (err < 0 || res->status_code != LD_STORE_STATUS_OK) {
    peer_outcome(c, err < 0 ? err : 0, res->status_code);
    finish_error(c, err < 0 ? err : LD_ERR_PROTOCOL);
    return;
  }
  for (size_t i = 0; i < res->n_entries; i++) {
    const ld_store_entry_t *e = &res->entries[i];
    if (e->pubsub_topic == NULL)
      continue;
    c->recovered++;
    c->in_cb = true;
    c->on_message(e->pubsub_topic, e->hash, &e->message, c->ud);
    c->in_cb = false;
    if (c->canceled) {
      call_free(c);
      return;
    }
  }
  c->next_fetch += c->batch;
  fetch_next(c);
}

static void fetch_next(ld_reliability_call_t *c) {
  size_t left = c->n_missing - c->next_fetch;
  if (left == 0) {
    c->done(0, c->recovered, c->ud);
    call_free(c);
    return;
  }
  c->batch = left < LD_STORE_MAX_HASHES ? left : LD_STORE_MAX_HASHES;
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.include_data = true;
  q.hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])(c->missing + c->next_fetch);
  q.n_hashes = c->batch;
  q.has_limit = true;
  q.limit = LD_STORE_MAX_PAGE_SIZE;
  ld_store_target_t to = {c->conn, NULL};
  ld_store_client_opts_t o = store_opts(c->owner);
  int rc = ld_store_client_query(c->owner->sw, &to, &q, &o, on_fetched, c, &c->store);
  if (rc != 0)
    finish_error(c, rc);
}

static void on_hashes_listed(int err, uint32_t status, const char *desc, size_t pages, void *ud) {
  ld_reliability_call_t *c = ud;
  (void)pages;
  c->store = NULL;
  if (c->canceled) {
    call_free(c);
    return;
  }
  if (err < 0 || status != LD_STORE_STATUS_OK) {
    LD_DEBUG(TOPIC, "recovery query failed: %u %s", status, desc != NULL ? desc : "");
    peer_outcome(c, err < 0 ? err : 0, status);
    finish_error(c, err < 0 ? err : LD_ERR_PROTOCOL);
    return;
  }
  peer_outcome(c, 0, status);
  fetch_next(c);
}

static int list_query(ld_reliability_call_t *c) {
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.include_data = false;
  q.pubsub_topic = c->pubsub_topic;
  q.content_topics = (const char *const *)c->topics;
  q.n_content_topics = c->n_topics;
  q.has_time_start = q.has_time_end = true;
  q.time_start = c->start_ns;
  q.time_end = c->end_ns;
  q.forward = true;
  q.has_limit = true;
  q.limit = LD_STORE_MAX_PAGE_SIZE;
  ld_store_target_t to = {c->conn, NULL};
  ld_store_client_opts_t o = store_opts(c->owner);
  return ld_store_client_query_all(c->owner->sw, &to, &q, &o, on_hash_page, on_hashes_listed, c,
                                   &c->store);
}

static bool range_valid(const ld_reliability_range_t *range) {
  if (range == NULL || range->pubsub_topic == NULL || range->content_topics == NULL ||
      range->n_content_topics == 0 || range->n_content_topics > LD_RELIABILITY_MAX_TOPICS ||
      range->start_ns > range->end_ns)
    return false;
  for (size_t i = 0; i < range->n_content_topics; i++)
    if (range->content_topics[i] == NULL)
      return false;
  return true;
}

static int copy_range(ld_reliability_call_t *c, const ld_reliability_range_t *range) {
  c->pubsub_topic = strdup(range->pubsub_topic);
  c->topics = calloc(range->n_content_topics, sizeof *c->topics);
  c->missing_set = ld_hashmap_new(64);
  if (c->pubsub_topic == NULL || c->topics == NULL || c->missing_set == NULL)
    return LD_ERR_NOMEM;
  for (; c->n_topics < range->n_content_topics; c->n_topics++)
    if ((c->topics[c->n_topics] = strdup(range->content_topics[c->n_topics])) == NULL)
      return LD_ERR_NOMEM;
  c->start_ns = range->start_ns;
  c->end_ns = range->end_ns;
  return 0;
}

static int sr_recover(ld_reliability_t *r, const ld_reliability_range_t *range,
                      ld_reliability_known_fn known, ld_reliability_message_fn on_message,
                      ld_reliability_done_fn done, void *ud, ld_reliability_call_t **out) {
  store_rel_t *s = (store_rel_t *)r;
  if (!range_valid(range) || on_message == NULL || done == NULL)
    return LD_ERR_INVALID_ARG;
  ld_reliability_call_t *c = call_new(s, CALL_RECOVER, ud);
  if (c == NULL)
    return LD_ERR_NOMEM;
  c->known = known;
  c->on_message = on_message;
  c->done = done;
  int rc = copy_range(c, range);
  if (rc == 0)
    rc = call_connect(c);
  if (rc != 0) {
    call_free(c);
    return rc;
  }
  if (out != NULL)
    *out = c;
  return 0;
}

/* ---- connection, cancel, free ---------------------------------------------------------------- */

static void on_dialed(ld_conn_t *conn, int err, void *ud) {
  ld_reliability_call_t *c = ud;
  c->dial = NULL;
  if (err != 0) {
    ld_service_peers_report(c->owner->peers, &c->peer.id, LD_SERVICE_BROKEN, c->started_ms,
                            ld_now_ms());
    finish_error(c, err);
    return;
  }
  c->conn = conn;
  int rc = c->kind == CALL_CONFIRM ? confirm_query(c) : list_query(c);
  if (rc != 0)
    finish_error(c, rc);
}

static void sr_cancel(ld_reliability_t *r, ld_reliability_call_t *c) {
  (void)r;
  if (c == NULL)
    return;
  if (c->in_cb) {
    c->canceled = true;
    return;
  }
  if (c->dial != NULL)
    ld_service_peers_connect_cancel(c->dial);
  if (c->store != NULL)
    ld_store_client_cancel(c->store);
  call_free(c);
}

static void sr_free(ld_reliability_t *r) {
  store_rel_t *s = (store_rel_t *)r;
  while (s->calls != NULL) {
    s->calls->in_cb = false;
    sr_cancel(r, s->calls);
  }
  free(s);
}

static const ld_reliability_ops_t STORE_OPS = {sr_confirm, sr_recover, sr_cancel, sr_free,
                                               NULL,       NULL,       false};

ld_reliability_t *ld_store_reliability_new(ld_switch_t *sw, ld_service_peers_t *peers,
                                           const ld_store_reliability_config_t *cfg) {
  if (sw == NULL || (peers == NULL && (cfg == NULL || cfg->pick == NULL)))
    return NULL;
  store_rel_t *s = calloc(1, sizeof *s);
  if (s == NULL)
    return NULL;
  s->base.ops = &STORE_OPS;
  s->sw = sw;
  s->peers = peers;
  if (cfg != NULL)
    s->cfg = *cfg;
  return &s->base;
}
