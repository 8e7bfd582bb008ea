#include "messaging/store_fetch.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "messaging/service_peers.h"
#include "waku/core/codecs.h"
#include "waku/store/client.h"

#define TOPIC "reliability"
/* How long a peer that failed a fetch is skipped. */
#define FAIL_EXPIRY_MS 30000u

struct ld_messaging_fetch {
  ld_messaging_fetcher_t *owner;
  ld_messaging_fetch_t *prev, *next;
  uint8_t hashes[LD_MESSAGING_FETCH_MAX_HASHES][LD_WAKU_HASH_LEN];
  size_t n_hashes;
  ld_messaging_fetched_fn on_message;
  ld_messaging_fetch_done_fn done;
  void *ud;
  ld_service_peer_t peer;
  uint64_t started_ms;
  ld_service_dial_t *dial; /* while connecting */
  ld_store_call_t *store;  /* while the query runs */
};

struct ld_messaging_fetcher {
  ld_node_t *node;
  ld_service_peers_t *peers;
  ld_messaging_fetch_t *fetches;
  uint64_t rejected;
};

ld_messaging_fetcher_t *ld_messaging_fetcher_new(ld_node_t *node) {
  ld_messaging_fetcher_t *f = calloc(1, sizeof *f);
  if (f == NULL)
    return NULL;
  f->node = node;
  if ((f->peers = ld_service_peers_new(node, FAIL_EXPIRY_MS)) == NULL) {
    free(f);
    return NULL;
  }
  return f;
}

static void fetch_unlink_free(ld_messaging_fetch_t *x) {
  ld_messaging_fetcher_t *f = x->owner;
  if (x->prev != NULL)
    x->prev->next = x->next;
  else
    f->fetches = x->next;
  if (x->next != NULL)
    x->next->prev = x->prev;
  free(x);
}

void ld_messaging_fetcher_free(ld_messaging_fetcher_t *f) {
  if (f == NULL)
    return;
  while (f->fetches != NULL) {
    ld_messaging_fetch_t *x = f->fetches;
    if (x->dial != NULL)
      ld_service_peers_connect_cancel(x->dial);
    if (x->store != NULL)
      ld_store_client_cancel(x->store);
    fetch_unlink_free(x);
  }
  ld_service_peers_free(f->peers);
  free(f);
}

uint64_t ld_messaging_fetcher_rejected(const ld_messaging_fetcher_t *f) {
  return f->rejected;
}

static void finish(ld_messaging_fetch_t *x, int err, size_t found) {
  ld_messaging_fetch_done_fn done = x->done;
  void *ud = x->ud;
  fetch_unlink_free(x);
  done(err, found, ud);
}

static bool was_asked(const ld_messaging_fetch_t *x, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  for (size_t i = 0; i < x->n_hashes; i++)
    if (memcmp(x->hashes[i], hash, LD_WAKU_HASH_LEN) == 0)
      return true;
  return false;
}

/* An entry is handed on only when it was asked for and its message hashes to it. */
static bool entry_valid(const ld_messaging_fetch_t *x, const ld_store_entry_t *e) {
  uint8_t h[LD_WAKU_HASH_LEN];
  return e->pubsub_topic != NULL && was_asked(x, e->hash) &&
         ld_waku_message_hash(e->pubsub_topic, &e->message, h) == 0 &&
         memcmp(h, e->hash, LD_WAKU_HASH_LEN) == 0;
}

/* The fetch's error for a store answer other than 200: 503 is the reduced store's "not
 * supported by this store node" (its key-value function is off). */
static int answer_error(uint32_t status) {
  return status == 503 ? LD_ERR_UNSUPPORTED : LD_ERR_PROTOCOL;
}

static void on_answer(int err, ld_store_response_t *res, void *ud) {
  ld_messaging_fetch_t *x = ud;
  x->store = NULL;
  ld_service_peers_report(x->owner->peers, &x->peer.id,
                          ld_service_outcome_of(err < 0 ? err : 0, res->status_code), x->started_ms,
                          ld_now_ms());
  if (err < 0 || res->status_code != LD_STORE_STATUS_OK) {
    LD_DEBUG(TOPIC, "fetch by hash: store answered %u %s (%s)", res->status_code,
             res->status_desc != NULL ? res->status_desc : "", ld_errname(err));
    finish(x, err < 0 ? err : answer_error(res->status_code), 0);
    return;
  }
  size_t found = 0;
  for (size_t i = 0; i < res->n_entries; i++) {
    const ld_store_entry_t *e = &res->entries[i];
    if (!entry_valid(x, e)) {
      x->owner->rejected++;
      continue;
    }
    found++;
    x->on_message(e->pubsub_topic, e->hash, &e->message, x->ud);
  }
  finish(x, 0, found);
}

static void on_dialed(ld_conn_t *conn, int err, void *ud) {
  ld_messaging_fetch_t *x = ud;
  x->dial = NULL;
  if (err != 0) {
    ld_service_peers_report(x->owner->peers, &x->peer.id, LD_SERVICE_BROKEN, x->started_ms,
                            ld_now_ms());
    finish(x, err, 0);
    return;
  }
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.include_data = true;
  q.hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])x->hashes;
  q.n_hashes = x->n_hashes;
  q.has_limit = true;
  q.limit = LD_STORE_MAX_PAGE_SIZE;
  ld_store_target_t to = {conn, NULL};
  ld_store_client_opts_t o;
  memset(&o, 0, sizeof o);
  o.timeout_ms = LD_MESSAGING_FETCH_TIMEOUT_MS;
  o.max_msg_size = ld_node_config(x->owner->node)->max_msg_size;
  int rc =
      ld_store_client_query(ld_node_switch(x->owner->node), &to, &q, &o, on_answer, x, &x->store);
  if (rc != 0)
    finish(x, rc, 0);
}

int ld_messaging_fetch_by_hash(ld_messaging_fetcher_t *f, const uint8_t (*hashes)[LD_WAKU_HASH_LEN],
                               size_t n, ld_messaging_fetched_fn on_message,
                               ld_messaging_fetch_done_fn done, void *user_data) {
  if (f == NULL || hashes == NULL || n == 0 || n > LD_MESSAGING_FETCH_MAX_HASHES ||
      on_message == NULL || done == NULL)
    return LD_ERR_INVALID_ARG;
  ld_messaging_fetch_t *x = calloc(1, sizeof *x);
  if (x == NULL)
    return LD_ERR_NOMEM;
  x->owner = f;
  memcpy(x->hashes, hashes, n * LD_WAKU_HASH_LEN);
  x->n_hashes = n;
  x->on_message = on_message;
  x->done = done;
  x->ud = user_data;
  x->started_ms = ld_now_ms();
  int rc =
      ld_service_peers_pick(f->peers, LD_WAKU_STORE_CODEC, NULL, 0, ld_now_ms(), &x->peer, 1) > 0
          ? 0
          : LD_ERR_NOT_FOUND;
  if (rc == 0)
    rc = ld_service_peers_connect(ld_node_switch(f->node), &x->peer, on_dialed, x, &x->dial);
  if (rc != 0) {
    free(x);
    return rc;
  }
  x->next = f->fetches;
  if (f->fetches != NULL)
    f->fetches->prev = x;
  f->fetches = x;
  return 0;
}
