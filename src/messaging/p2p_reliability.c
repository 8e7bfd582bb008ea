/* The peer-to-peer implementation of reliability.h over the Network Reliability Service. Calls
 * wait on a list; a timer (and every confirmation the service reports) answers those that are
 * due. */
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "messaging/reliability.h"
#include "waku/nrs/nrs.h"

#define POLL_MS 50u

typedef enum { CALL_CONFIRM, CALL_RECOVER } call_kind_t;

struct ld_reliability_call {
  ld_reliability_call_t *prev, *next;
  call_kind_t kind;
  uint64_t due_ms; /* confirm: answered at the latest then; recover: answered from then */
  uint8_t (*hashes)[LD_WAKU_HASH_LEN];
  size_t n;
  ld_reliability_confirm_fn confirm_cb;
  ld_reliability_done_fn done_cb;
  void *user_data;
};

typedef struct p2p {
  ld_reliability_t base;
  ld_nrs_t *nrs;
  uint32_t hold_ms;
  uv_timer_t *timer;
  ld_reliability_call_t *calls;
  bool answering;
} p2p_t;

static void call_unlink(p2p_t *p, ld_reliability_call_t *c) {
  if (c->prev != NULL)
    c->prev->next = c->next;
  else
    p->calls = c->next;
  if (c->next != NULL)
    c->next->prev = c->prev;
}

static void call_free(ld_reliability_call_t *c) {
  free(c->hashes);
  free(c);
}

/* A confirm call is answered once a hash of it is confirmed, or at its due time. */
static bool answer_confirm(p2p_t *p, ld_reliability_call_t *c, uint64_t now, bool *present) {
  bool any = false;
  for (size_t i = 0; i < c->n; i++) {
    present[i] = ld_nrs_confirmed(p->nrs, c->hashes[i]);
    any |= present[i];
  }
  return any || now >= c->due_ms;
}

/* Answers the calls that are due; each callback may cancel other calls or start new ones (those
 * wait for the next pass). */
static void answer_due(p2p_t *p) {
  if (p->answering)
    return;
  p->answering = true;
  uint64_t now = ld_now_ms();
  bool present[LD_RELIABILITY_MAX_CONFIRM];
  for (ld_reliability_call_t *c = p->calls, *next; c != NULL; c = next) {
    next = c->next;
    if (c->kind == CALL_CONFIRM && answer_confirm(p, c, now, present)) {
      call_unlink(p, c);
      c->confirm_cb(0, present, c->n, c->user_data);
      call_free(c);
      next = p->calls; /* the list may have changed: start over (answered calls are gone) */
    } else if (c->kind == CALL_RECOVER && now >= c->due_ms) {
      call_unlink(p, c);
      c->done_cb(0, 0, c->user_data);
      call_free(c);
      next = p->calls;
    }
  }
  p->answering = false;
  if (p->calls == NULL)
    uv_timer_stop(p->timer);
}

static void on_timer(uv_timer_t *t) {
  answer_due(t->data);
}

static void on_confirmed(void *user) {
  p2p_t *p = user;
  if (p->calls != NULL)
    uv_timer_start(p->timer, on_timer, 0, POLL_MS); /* on the next loop turn */
}

static ld_reliability_call_t *call_add(p2p_t *p, call_kind_t kind, uint64_t due_ms) {
  ld_reliability_call_t *c = calloc(1, sizeof *c);
  if (c == NULL)
    return NULL;
  c->kind = kind;
  c->due_ms = due_ms;
  c->next = p->calls;
  if (p->calls != NULL)
    p->calls->prev = c;
  p->calls = c;
  if (!uv_is_active((uv_handle_t *)p->timer))
    uv_timer_start(p->timer, on_timer, POLL_MS, POLL_MS);
  return c;
}

static int p2p_confirm(ld_reliability_t *r, const uint8_t (*hashes)[LD_WAKU_HASH_LEN], size_t n,
                       ld_reliability_confirm_fn cb, void *user_data, ld_reliability_call_t **out) {
  p2p_t *p = (p2p_t *)r;
  if (n == 0 || n > LD_RELIABILITY_MAX_CONFIRM || cb == NULL)
    return LD_ERR_INVALID_ARG;
  uint8_t(*copy)[LD_WAKU_HASH_LEN] = malloc(n * LD_WAKU_HASH_LEN);
  if (copy == NULL)
    return LD_ERR_NOMEM;
  memcpy(copy, hashes, n * LD_WAKU_HASH_LEN);
  ld_reliability_call_t *c = call_add(p, CALL_CONFIRM, ld_now_ms() + p->hold_ms);
  if (c == NULL) {
    free(copy);
    return LD_ERR_NOMEM;
  }
  c->hashes = copy;
  c->n = n;
  c->confirm_cb = cb;
  c->user_data = user_data;
  if (out != NULL)
    *out = c;
  return 0;
}

static int p2p_recover(ld_reliability_t *r, const ld_reliability_range_t *range,
                       ld_reliability_known_fn known, ld_reliability_message_fn on_message,
                       ld_reliability_done_fn done, void *user_data, ld_reliability_call_t **out) {
  (void)known;
  p2p_t *p = (p2p_t *)r;
  if (range == NULL || on_message == NULL || done == NULL)
    return LD_ERR_INVALID_ARG;
  ld_nrs_kick(p->nrs);
  ld_reliability_call_t *c = call_add(p, CALL_RECOVER, 0);
  if (c == NULL)
    return LD_ERR_NOMEM;
  c->done_cb = done;
  c->user_data = user_data;
  if (out != NULL)
    *out = c;
  return 0;
}

static void p2p_cancel(ld_reliability_t *r, ld_reliability_call_t *call) {
  p2p_t *p = (p2p_t *)r;
  if (call == NULL)
    return;
  call_unlink(p, call);
  call_free(call);
}

static void on_closed(uv_handle_t *h) {
  free(h);
}

static void p2p_free(ld_reliability_t *r) {
  p2p_t *p = (p2p_t *)r;
  while (p->calls != NULL) {
    ld_reliability_call_t *c = p->calls;
    call_unlink(p, c);
    call_free(c);
  }
  ld_nrs_set_confirm_listener(p->nrs, NULL, NULL);
  uv_close((uv_handle_t *)p->timer, on_closed);
  free(p);
}

static int p2p_track(ld_reliability_t *r, const char *pubsub_topic, const ld_waku_message_t *msg,
                     const uint8_t hash[LD_WAKU_HASH_LEN]) {
  return ld_nrs_track(((p2p_t *)r)->nrs, pubsub_topic, msg, hash);
}

static int p2p_watch(ld_reliability_t *r, const char *content_topic) {
  return ld_nrs_watch(((p2p_t *)r)->nrs, content_topic);
}

static const ld_reliability_ops_t P2P_OPS = {
    p2p_confirm, p2p_recover, p2p_cancel, p2p_free, p2p_track, p2p_watch, true,
};

ld_reliability_t *ld_p2p_reliability_new(uv_loop_t *loop, ld_nrs_t *nrs, uint32_t hold_ms) {
  if (loop == NULL || nrs == NULL)
    return NULL;
  p2p_t *p = calloc(1, sizeof *p);
  if (p == NULL)
    return NULL;
  p->timer = calloc(1, sizeof *p->timer);
  if (p->timer == NULL) {
    free(p);
    return NULL;
  }
  p->base.ops = &P2P_OPS;
  p->nrs = nrs;
  p->hold_ms = hold_ms != 0 ? hold_ms : LD_P2P_RELIABILITY_DEFAULT_HOLD_MS;
  uv_timer_init(loop, p->timer);
  p->timer->data = p;
  ld_nrs_set_confirm_listener(nrs, on_confirmed, p);
  return &p->base;
}
