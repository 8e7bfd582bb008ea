#include "messaging/send_service.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hashmap.h"
#include "base/log.h"
#include "waku/lightpush/codec.h"

#define TOPIC "send"
#define DEFAULT_RETRY_WINDOW_MS 60000u
#define DEFAULT_CONFIRM_AFTER_MS 3000u

typedef struct task {
  struct task *prev, *next;
  uint64_t id;
  char request_id[LD_SEND_REQUEST_ID_MAX];
  char *pubsub_topic;
  ld_waku_message_t msg;
  uint8_t hash[LD_WAKU_HASH_LEN];
  ld_send_state_t state;
  bool too_large;
  bool lp_inflight;
  bool relay_inflight; /* relay_publish answered LD_SEND_LATER */
  bool propagated_once;
  uint64_t admitted_ms;
  uint64_t first_propagated_ms;
  uint64_t last_propagated_ms;
  char *last_error; /* the last retryable lightpush answer (heap; NULL: none) */
} task_t;

typedef struct queued_event {
  ld_send_event_kind_t kind;
  uint64_t task_id;
  bool done;
  char request_id[LD_SEND_REQUEST_ID_MAX];
  uint8_t hash[LD_WAKU_HASH_LEN];
  int64_t timestamp;
  char error[LD_SEND_ERROR_MAX];
} queued_event_t;

struct ld_send_service {
  ld_send_service_config_t cfg;
  ld_send_ops_t ops;
  void *ud;
  task_t *head, *tail;
  task_t *fresh; /* the first task not run yet; every later one is new too (NULL: none) */
  size_t n_tasks;
  ld_hashmap_t *by_id;
  uint64_t next_id;
  bool busy;
  /* events waiting for delivery */
  queued_event_t *events;
  size_t n_events, cap_events;
  bool draining;
  /* the confirmation in flight */
  bool confirm_inflight;
  uint64_t confirm_ids[LD_SEND_CONFIRM_BATCH_MAX];
  size_t n_confirm;
  ld_send_service_stats_t stats;
};

/* ---- tasks ----------------------------------------------------------------------------------- */

static void task_free(task_t *t) {
  free(t->last_error);
  ld_waku_message_clear(&t->msg);
  free(t->pubsub_topic);
  free(t);
}

static void task_unlink(ld_send_service_t *s, task_t *t) {
  if (s->fresh == t)
    s->fresh = t->next;
  if (t->prev != NULL)
    t->prev->next = t->next;
  else
    s->head = t->next;
  if (t->next != NULL)
    t->next->prev = t->prev;
  else
    s->tail = t->prev;
  ld_hashmap_remove_u64(s->by_id, t->id);
  s->n_tasks--;
  task_free(t);
}

static task_t *task_find(const ld_send_service_t *s, uint64_t id) {
  return ld_hashmap_get_u64(s->by_id, id);
}

static bool needs_confirmation(const ld_send_service_t *s, const task_t *t) {
  return s->cfg.reliability && s->ops.confirm_start != NULL && !t->msg.ephemeral;
}

/* ---- events ---------------------------------------------------------------------------------- */

static void queue_event(ld_send_service_t *s, ld_send_event_kind_t kind, const task_t *t, bool done,
                        const char *error) {
  if (s->n_events == s->cap_events) {
    size_t cap = s->cap_events == 0 ? 8 : s->cap_events * 2;
    queued_event_t *ev = realloc(s->events, cap * sizeof *ev);
    if (ev == NULL) {
      LD_ERROR(TOPIC, "out of memory: event of request %s lost", t->request_id);
      return;
    }
    s->events = ev;
    s->cap_events = cap;
  }
  queued_event_t *q = &s->events[s->n_events++];
  memset(q, 0, sizeof *q);
  q->kind = kind;
  q->task_id = t->id;
  q->done = done;
  memcpy(q->request_id, t->request_id, sizeof q->request_id);
  memcpy(q->hash, t->hash, LD_WAKU_HASH_LEN);
  q->timestamp = t->msg.timestamp;
  if (error != NULL)
    snprintf(q->error, sizeof q->error, "%s", error);
}

/* Delivers the queued events in order; listeners may queue more, which are delivered too. */
static void drain(ld_send_service_t *s) {
  if (s->draining)
    return;
  s->draining = true;
  for (size_t i = 0; i < s->n_events; i++) {
    queued_event_t q = s->events[i];
    ld_send_event_t ev = {q.kind, q.task_id, q.request_id, {0}, NULL, q.timestamp, q.done};
    memcpy(ev.hash, q.hash, LD_WAKU_HASH_LEN);
    if (q.kind == LD_SEND_EV_ERROR)
      ev.error = q.error;
    s->ops.event(s->ud, &ev);
  }
  s->n_events = 0;
  s->draining = false;
}

/* ---- transitions ----------------------------------------------------------------------------- */

static void fail(ld_send_service_t *s, task_t *t, const char *why) {
  t->state = LD_SEND_FAILED;
  s->stats.failed++;
  LD_WARN(TOPIC, "request %s failed: %s", t->request_id, why);
  queue_event(s, LD_SEND_EV_ERROR, t, false, why);
  task_unlink(s, t);
}

static void propagated(ld_send_service_t *s, task_t *t, uint64_t now_ms) {
  t->state = LD_SEND_PROPAGATED;
  t->last_propagated_ms = now_ms;
  bool done = !needs_confirmation(s, t);
  if (!t->propagated_once) {
    t->propagated_once = true;
    t->first_propagated_ms = now_ms;
    s->stats.propagated++;
    queue_event(s, LD_SEND_EV_PROPAGATED, t, done, NULL);
  }
  if (done)
    task_unlink(s, t);
}

static void validated(ld_send_service_t *s, task_t *t) {
  t->state = LD_SEND_VALIDATED;
  s->stats.validated++;
  queue_event(s, LD_SEND_EV_SENT, t, false, NULL);
  task_unlink(s, t);
}

static void dropped(ld_send_service_t *s, task_t *t) {
  s->stats.validation_timeouts++;
  LD_DEBUG(TOPIC, "request %s propagated but not confirmed in time; stop trying", t->request_id);
  queue_event(s, LD_SEND_EV_DROPPED, t, false, NULL);
  task_unlink(s, t);
}

/* ---- the processor chain --------------------------------------------------------------------- */

static bool lightpush_retryable(uint32_t status) {
  return status == LD_LIGHTPUSH_TOO_MANY_REQUESTS || status == LD_LIGHTPUSH_INTERNAL_SERVER_ERROR ||
         status == LD_LIGHTPUSH_SERVICE_NOT_AVAILABLE || status == LD_LIGHTPUSH_OUT_OF_RLN_PROOF ||
         status == LD_LIGHTPUSH_NO_PEERS_TO_RELAY;
}

/* Relay's outcome `peers` (peers, 0, an error): true when the chain goes on to lightpush. */
static bool relay_outcome(ld_send_service_t *s, task_t *t, int peers, uint64_t now_ms) {
  if (peers > 0) {
    propagated(s, t, now_ms);
    return false;
  }
  if (peers < 0) {
    char why[LD_SEND_ERROR_MAX];
    snprintf(why, sizeof why, "Failed to publish via relay: %s", ld_strerror(peers));
    fail(s, t, why);
    return false;
  }
  if (s->ops.lightpush_start == NULL) {
    fail(s, t, "No peers to relay the message");
    return false;
  }
  t->state = LD_SEND_FALLBACK_RETRY;
  return true;
}

/* Relay: true when the chain goes on to lightpush. */
static bool try_relay(ld_send_service_t *s, task_t *t, uint64_t now_ms) {
  int peers = s->ops.relay_publish(s->ud, t->id, t->pubsub_topic, &t->msg, t->hash);
  if (peers == LD_SEND_LATER) {
    t->relay_inflight = true;
    return false;
  }
  return relay_outcome(s, t, peers, now_ms);
}

static bool in_flight(const task_t *t) {
  return t->lp_inflight || t->relay_inflight;
}

static void try_lightpush(ld_send_service_t *s, task_t *t) {
  if (s->ops.lightpush_start(s->ud, t->id, t->pubsub_topic, &t->msg, t->hash) == 0)
    t->lp_inflight = true;
  else
    t->state = LD_SEND_NEXT_ROUND_RETRY;
}

static void run_chain(ld_send_service_t *s, task_t *t, uint64_t now_ms) {
  if (t->too_large) {
    char why[LD_SEND_ERROR_MAX];
    snprintf(why, sizeof why, "Message size exceeded maximum of %zu bytes", s->cfg.max_msg_size);
    fail(s, t, why);
    return;
  }
  if (s->ops.relay_publish != NULL && !try_relay(s, t, now_ms))
    return;
  try_lightpush(s, t);
}

/* A task past its window: never propagated within retry_window_ms of its submission, or not
 * confirmed within retry_window_ms of its first propagation. */
static bool expired(const ld_send_service_t *s, const task_t *t, uint64_t now_ms) {
  uint64_t since = t->propagated_once ? t->first_propagated_ms : t->admitted_ms;
  return now_ms - since >= s->cfg.retry_window_ms;
}

/* Runs the chain for the tasks submitted since the last run. */
static void run_fresh(ld_send_service_t *s, uint64_t now_ms) {
  while (s->fresh != NULL) {
    task_t *t = s->fresh;
    s->fresh = t->next;
    if (t->state == LD_SEND_ENTRY && !in_flight(t))
      run_chain(s, t, now_ms);
  }
}

/* Runs the chain again for the idle NextRoundRetry tasks that are within their window. */
static void run_retries(ld_send_service_t *s, uint64_t now_ms) {
  task_t *next;
  for (task_t *t = s->head; t != NULL && t != s->fresh; t = next) {
    next = t->next;
    if (!in_flight(t) && t->state == LD_SEND_NEXT_ROUND_RETRY && !expired(s, t, now_ms))
      run_chain(s, t, now_ms);
  }
}

/* ---- confirmation and timeouts --------------------------------------------------------------- */

static void maybe_confirm(ld_send_service_t *s, uint64_t now_ms) {
  if (!s->cfg.reliability || s->ops.confirm_start == NULL || s->confirm_inflight)
    return;
  uint32_t after = s->cfg.confirm_after_ms;
  uint8_t hashes[LD_SEND_CONFIRM_BATCH_MAX][LD_WAKU_HASH_LEN];
  size_t n = 0;
  for (task_t *t = s->head; t != NULL && n < LD_SEND_CONFIRM_BATCH_MAX; t = t->next) {
    if (t->state != LD_SEND_PROPAGATED || !needs_confirmation(s, t) ||
        now_ms - t->last_propagated_ms < after)
      continue;
    s->confirm_ids[n] = t->id;
    memcpy(hashes[n++], t->hash, LD_WAKU_HASH_LEN);
  }
  if (n == 0 || s->ops.confirm_start(s->ud, (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes, n) != 0)
    return;
  s->confirm_inflight = true;
  s->n_confirm = n;
  s->stats.confirmations++;
}

/* The retry window is over: its text, with the last retryable answer when there was one. */
static void fail_window(ld_send_service_t *s, task_t *t) {
  if (t->last_error == NULL) {
    fail(s, t, LD_SEND_ERR_RETRY_WINDOW);
    return;
  }
  char why[LD_SEND_ERROR_MAX];
  snprintf(why, sizeof why, "%s%s%s", LD_SEND_ERR_RETRY_WINDOW, LD_SEND_ERR_LAST_ERROR,
           t->last_error);
  fail(s, t, why);
}

static void expire(ld_send_service_t *s, uint64_t now_ms) {
  task_t *next;
  for (task_t *t = s->head; t != NULL; t = next) {
    next = t->next;
    if (in_flight(t) || !expired(s, t, now_ms))
      continue;
    if (t->propagated_once)
      dropped(s, t);
    else
      fail_window(s, t);
  }
}

/* ---- public ---------------------------------------------------------------------------------- */

ld_send_service_t *ld_send_service_new(const ld_send_service_config_t *cfg,
                                       const ld_send_ops_t *ops, void *user_data) {
  if (cfg == NULL || ops == NULL || ops->event == NULL ||
      (ops->relay_publish == NULL && ops->lightpush_start == NULL))
    return NULL;
  ld_send_service_t *s = calloc(1, sizeof *s);
  if (s == NULL)
    return NULL;
  s->cfg = *cfg;
  if (s->cfg.retry_window_ms == 0)
    s->cfg.retry_window_ms = DEFAULT_RETRY_WINDOW_MS;
  if (s->cfg.confirm_after_ms == 0)
    s->cfg.confirm_after_ms = DEFAULT_CONFIRM_AFTER_MS;
  if (s->cfg.max_pending == 0)
    s->cfg.max_pending = LD_SEND_DEFAULT_MAX_PENDING;
  if (s->cfg.max_msg_size == 0)
    s->cfg.max_msg_size = LD_WAKU_DEFAULT_MAX_MSG_SIZE;
  s->ops = *ops;
  s->ud = user_data;
  s->next_id = 1;
  s->by_id = ld_hashmap_new(64);
  if (s->by_id == NULL) {
    free(s);
    return NULL;
  }
  return s;
}

void ld_send_service_free(ld_send_service_t *s) {
  if (s == NULL)
    return;
  while (s->head != NULL)
    task_unlink(s, s->head);
  ld_hashmap_free(s->by_id, NULL);
  free(s->events);
  free(s);
}

static task_t *task_new(const char *request_id, const char *pubsub_topic,
                        const ld_waku_message_t *msg) {
  task_t *t = calloc(1, sizeof *t);
  if (t == NULL)
    return NULL;
  ld_waku_message_init(&t->msg);
  snprintf(t->request_id, sizeof t->request_id, "%s", request_id);
  t->pubsub_topic = strdup(pubsub_topic);
  if (t->pubsub_topic == NULL || ld_waku_message_copy(&t->msg, msg) != 0 ||
      ld_waku_message_hash(pubsub_topic, msg, t->hash) != 0) {
    task_free(t);
    return NULL;
  }
  return t;
}

int ld_send_service_submit(ld_send_service_t *s, const char *request_id, const char *pubsub_topic,
                           const ld_waku_message_t *msg, uint64_t now_ms,
                           uint8_t hash[LD_WAKU_HASH_LEN], uint64_t *task_id) {
  if (s == NULL || request_id == NULL || pubsub_topic == NULL || msg == NULL ||
      strlen(request_id) >= LD_SEND_REQUEST_ID_MAX)
    return LD_ERR_INVALID_ARG;
  if (s->n_tasks >= s->cfg.max_pending)
    return LD_ERR_LIMIT;
  task_t *t = task_new(request_id, pubsub_topic, msg);
  if (t == NULL)
    return LD_ERR_NOMEM;
  t->id = s->next_id++;
  t->admitted_ms = now_ms;
  t->too_large = ld_waku_message_encoded_len(msg) > s->cfg.max_msg_size;
  if (ld_hashmap_put_u64(s->by_id, t->id, t, NULL) != 0) {
    task_free(t);
    return LD_ERR_NOMEM;
  }
  t->prev = s->tail;
  if (s->tail != NULL)
    s->tail->next = t;
  else
    s->head = t;
  s->tail = t;
  if (s->fresh == NULL)
    s->fresh = t;
  s->n_tasks++;
  s->stats.submitted++;
  if (hash != NULL)
    memcpy(hash, t->hash, LD_WAKU_HASH_LEN);
  if (task_id != NULL)
    *task_id = t->id;
  return 0;
}

void ld_send_service_process(ld_send_service_t *s, uint64_t now_ms) {
  if (s->busy)
    return;
  s->busy = true;
  run_fresh(s, now_ms);
  s->busy = false;
  drain(s);
}

void ld_send_service_tick(ld_send_service_t *s, uint64_t now_ms) {
  if (s->busy)
    return;
  s->busy = true;
  run_fresh(s, now_ms);
  run_retries(s, now_ms);
  maybe_confirm(s, now_ms);
  expire(s, now_ms);
  s->busy = false;
  drain(s);
}

void ld_send_service_lightpush_done(ld_send_service_t *s, uint64_t task_id, uint32_t status,
                                    const char *desc, uint64_t now_ms) {
  task_t *t = task_find(s, task_id);
  if (t == NULL || !t->lp_inflight)
    return;
  t->lp_inflight = false;
  if (status == LD_LIGHTPUSH_SUCCESS) {
    propagated(s, t, now_ms);
    drain(s);
    return;
  }
  char why[LD_SEND_ERROR_MAX];
  if (desc != NULL && desc[0] != '\0')
    snprintf(why, sizeof why, "%s", desc);
  else
    snprintf(why, sizeof why, "lightpush failed: %u %s", status, ld_lightpush_code_name(status));
  if (lightpush_retryable(status)) {
    t->state = LD_SEND_NEXT_ROUND_RETRY;
    char *copy = strdup(why);
    if (copy != NULL) {
      free(t->last_error);
      t->last_error = copy;
    }
  } else {
    fail(s, t, why);
  }
  drain(s);
}

void ld_send_service_relay_done(ld_send_service_t *s, uint64_t task_id, int result,
                                int64_t timestamp, uint64_t now_ms) {
  task_t *t = task_find(s, task_id);
  if (t == NULL || !t->relay_inflight)
    return;
  t->relay_inflight = false;
  if (result >= 0 && timestamp != t->msg.timestamp) { /* stamped again by the publisher */
    t->msg.timestamp = timestamp;
    if (ld_waku_message_hash(t->pubsub_topic, &t->msg, t->hash) != 0)
      LD_ERROR(TOPIC, "request %s: hash of the published message not computed", t->request_id);
  }
  if (relay_outcome(s, t, result, now_ms))
    try_lightpush(s, t);
  drain(s);
}

static void confirm_answer(ld_send_service_t *s, int err, const bool *present, size_t n,
                           uint64_t now_ms, bool absent_known) {
  if (!s->confirm_inflight)
    return;
  s->confirm_inflight = false;
  for (size_t i = 0; i < s->n_confirm && err == 0; i++) {
    task_t *t = task_find(s, s->confirm_ids[i]);
    if (t == NULL || t->state != LD_SEND_PROPAGATED)
      continue;
    if (present != NULL && i < n && present[i])
      validated(s, t);
    else if (absent_known)
      t->state = LD_SEND_NEXT_ROUND_RETRY;
  }
  s->n_confirm = 0;
  if (err == 0 && !s->busy)
    maybe_confirm(s, now_ms); /* the next batch, if any is eligible */
  drain(s);
}

void ld_send_service_confirm_done(ld_send_service_t *s, int err, const bool *present, size_t n,
                                  uint64_t now_ms) {
  confirm_answer(s, err, present, n, now_ms, true);
}

void ld_send_service_confirm_some(ld_send_service_t *s, int err, const bool *present, size_t n,
                                  uint64_t now_ms) {
  confirm_answer(s, err, present, n, now_ms, false);
}

size_t ld_send_service_pending(const ld_send_service_t *s) {
  return s->n_tasks;
}

bool ld_send_service_task_state(const ld_send_service_t *s, uint64_t task_id,
                                ld_send_state_t *state) {
  const task_t *t = task_find(s, task_id);
  if (t != NULL && state != NULL)
    *state = t->state;
  return t != NULL;
}

bool ld_send_service_confirm_in_flight(const ld_send_service_t *s) {
  return s->confirm_inflight;
}

void ld_send_service_get_stats(const ld_send_service_t *s, ld_send_service_stats_t *out) {
  *out = s->stats;
}

const char *ld_send_state_name(ld_send_state_t state) {
  switch (state) {
  case LD_SEND_ENTRY:
    return "Entry";
  case LD_SEND_PROPAGATED:
    return "SuccessfullyPropagated";
  case LD_SEND_VALIDATED:
    return "SuccessfullyValidated";
  case LD_SEND_FALLBACK_RETRY:
    return "FallbackRetry";
  case LD_SEND_NEXT_ROUND_RETRY:
    return "NextRoundRetry";
  case LD_SEND_FAILED:
    return "FailedToDeliver";
  }
  return "Unknown";
}
