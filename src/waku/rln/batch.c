/* RLN-relay's validator with batched zk verification on libuv's thread pool. */
#include "waku/rln/batch.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/error.h"

typedef enum batch_state {
  BATCH_FORMING, /* the newest batch, taking messages */
  BATCH_READY,   /* full, waiting for a free slot on the thread pool */
  BATCH_OUT,     /* being verified on the thread pool */
  BATCH_BACK,    /* verified, waiting for the batches before it to end */
} batch_state_t;

typedef struct batch {
  struct batch *next;
  ld_rln_batcher_t *owner;
  uv_work_t work;
  batch_state_t state;
  size_t n;
  double seconds; /* the verification's wall time */
  void **ctx;
  uint64_t *tokens;
  ld_rln_pending_proof_t *pending;
  /* the verification's input and output, contiguous as ld_rln_verify_batch takes them */
  uint8_t (*proofs)[LD_RLN_PROOF_BYTES];
  ld_rln_proof_values_t *values;
  int *results;
} batch_t;

struct ld_rln_batcher {
  ld_rln_batcher_config_t cfg;
  const ld_rln_verifier_t *verifier;
  batch_t *head, *tail; /* every batch not ended, oldest first */
  size_t in_flight;     /* batches out on the thread pool */
  size_t pending;       /* messages queued or out, not answered */
  uv_idle_t turn_end;   /* active while a batch waits and the thread pool has room for it */
  bool handle_ready, closing;
  void (*closed)(void *user);
  void *closed_user;
};

/* ---- batches -------------------------------------------------------------------------------- */

static void batch_free(batch_t *bt) {
  if (bt == NULL)
    return;
  free(bt->ctx);
  free(bt->tokens);
  free(bt->pending);
  free(bt->proofs);
  free(bt->values);
  free(bt->results);
  free(bt);
}

static batch_t *batch_new(ld_rln_batcher_t *b) {
  size_t cap = b->cfg.max_batch;
  batch_t *bt = calloc(1, sizeof *bt);
  if (bt == NULL)
    return NULL;
  bt->owner = b;
  bt->work.data = bt;
  bt->ctx = calloc(cap, sizeof *bt->ctx);
  bt->tokens = calloc(cap, sizeof *bt->tokens);
  bt->pending = calloc(cap, sizeof *bt->pending);
  bt->proofs = calloc(cap, sizeof *bt->proofs);
  bt->values = calloc(cap, sizeof *bt->values);
  bt->results = calloc(cap, sizeof *bt->results);
  if (bt->ctx == NULL || bt->tokens == NULL || bt->pending == NULL || bt->proofs == NULL ||
      bt->values == NULL || bt->results == NULL) {
    batch_free(bt);
    return NULL;
  }
  return bt;
}

/* The batch taking messages: the newest while it is forming, else a new one. */
static batch_t *forming_batch(ld_rln_batcher_t *b) {
  if (b->tail != NULL && b->tail->state == BATCH_FORMING)
    return b->tail;
  batch_t *bt = batch_new(b);
  if (bt == NULL)
    return NULL;
  if (b->tail != NULL)
    b->tail->next = bt;
  else
    b->head = bt;
  b->tail = bt;
  return bt;
}

/* ---- on the thread pool --------------------------------------------------------------------- */

static double monotonic_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void verify_work(uv_work_t *w) {
  batch_t *bt = w->data;
  const ld_rln_verifier_t *v = bt->owner->verifier;
  double t = monotonic_seconds();
  if (ld_rln_verify_batch(v, bt->proofs, bt->values, bt->n, bt->results) == LD_ERR_NOMEM) {
    for (size_t i = 0; i < bt->n; i++) /* no room for the batch: one at a time */
      bt->results[i] = ld_rln_verify(v, bt->proofs[i], &bt->values[i]);
  }
  bt->seconds = monotonic_seconds() - t;
}

/* ---- on the loop ---------------------------------------------------------------------------- */

static int64_t now_of(const ld_rln_batcher_t *b) {
  return b->cfg.now_ns != NULL ? b->cfg.now_ns(b->cfg.now_ctx) : (int64_t)ld_wall_ns();
}

static void verify_done(uv_work_t *w, int status);

static void maybe_finish_close(ld_rln_batcher_t *b);

/* Ends the batches at the head that are back, in order: steps 6 and 7 for each message. */
static void end_batches(ld_rln_batcher_t *b) {
  while (b->head != NULL && b->head->state == BATCH_BACK) {
    batch_t *bt = b->head;
    b->head = bt->next;
    if (b->head == NULL)
      b->tail = NULL;
    ld_rln_validator_note_batch(b->cfg.validator, bt->n);
    double share = bt->n > 0 ? bt->seconds / (double)bt->n : 0;
    int64_t now = now_of(b);
    for (size_t i = 0; i < bt->n; i++) {
      ld_rln_reason_t why;
      ld_rln_verdict_t v =
          ld_rln_validator_end(b->cfg.validator, &bt->pending[i], bt->results[i], share, now, &why);
      b->pending--;
      b->cfg.done(bt->ctx[i], bt->tokens[i], ld_rln_gossipsub_verdict(v), why);
      if (b->closing) /* the answer's receiver stopped us: the rest is dropped */
        break;
    }
    batch_free(bt);
    if (b->closing)
      return;
  }
}

/* Sends the waiting batches, oldest first, while the thread pool has room for them. */
static void send_batches(ld_rln_batcher_t *b) {
  for (batch_t *bt = b->head; bt != NULL && b->in_flight < b->cfg.max_in_flight; bt = bt->next) {
    if ((bt->state != BATCH_FORMING && bt->state != BATCH_READY) || bt->n == 0)
      continue;
    bt->state = BATCH_OUT;
    b->in_flight++;
    if (uv_queue_work(b->cfg.loop, &bt->work, verify_work, verify_done) != 0) {
      verify_work(&bt->work); /* only for a NULL callback: never, but answered anyway */
      b->in_flight--;
      bt->state = BATCH_BACK;
    }
  }
}

/* A batch waits and the thread pool has room for it. */
static bool can_send(const ld_rln_batcher_t *b) {
  if (b->in_flight >= b->cfg.max_in_flight)
    return false;
  for (const batch_t *bt = b->head; bt != NULL; bt = bt->next)
    if ((bt->state == BATCH_FORMING || bt->state == BATCH_READY) && bt->n > 0)
      return true;
  return false;
}

/* Sends at the start of the next loop turn (the idle phase, before the loop polls again): the
 * messages of this turn go out together, and the poll does not block while they wait. */
static void on_turn_end(uv_idle_t *h) {
  ld_rln_batcher_t *b = h->data;
  send_batches(b);
  end_batches(b);
  if (b->closing || !can_send(b))
    uv_idle_stop(&b->turn_end);
}

static void schedule(ld_rln_batcher_t *b) {
  if (!b->closing && can_send(b))
    uv_idle_start(&b->turn_end, on_turn_end);
}

static void verify_done(uv_work_t *w, int status) {
  (void)status; /* work is never cancelled */
  batch_t *bt = w->data;
  ld_rln_batcher_t *b = bt->owner;
  b->in_flight--;
  bt->state = BATCH_BACK;
  if (b->closing) {
    maybe_finish_close(b);
    return;
  }
  end_batches(b);
  schedule(b);
}

static void ensure_handle(ld_rln_batcher_t *b) {
  if (b->handle_ready)
    return;
  uv_idle_init(b->cfg.loop, &b->turn_end);
  b->turn_end.data = b;
  b->handle_ready = true;
}

int ld_rln_batcher_new(ld_rln_batcher_t **out, const ld_rln_batcher_config_t *cfg) {
  *out = NULL;
  if (cfg == NULL || cfg->loop == NULL || cfg->validator == NULL || cfg->done == NULL)
    return LD_ERR_INVALID_ARG;
  ld_rln_batcher_t *b = calloc(1, sizeof *b);
  if (b == NULL)
    return LD_ERR_NOMEM;
  b->cfg = *cfg;
  if (b->cfg.max_batch == 0)
    b->cfg.max_batch = LD_RLN_BATCH_DEFAULT_MAX;
  if (b->cfg.max_in_flight == 0)
    b->cfg.max_in_flight = LD_RLN_BATCH_DEFAULT_IN_FLIGHT;
  if (b->cfg.max_queue == 0)
    b->cfg.max_queue = LD_RLN_BATCH_DEFAULT_QUEUE;
  b->verifier = ld_rln_validator_verifier(cfg->validator);
  *out = b;
  return 0;
}

void ld_rln_batcher_submit(ld_rln_batcher_t *b, void *ctx, uint64_t token,
                           const ld_waku_message_t *msg) {
  if (b->closing || b->pending >= b->cfg.max_queue) {
    b->cfg.done(ctx, token, LD_GS_IGNORE, LD_RLN_OK);
    return;
  }
  ld_rln_pending_proof_t p;
  ld_rln_reason_t why = ld_rln_validator_begin(b->cfg.validator, msg, now_of(b), &p);
  if (why != LD_RLN_OK) {
    b->cfg.done(ctx, token, LD_GS_REJECT, why);
    return;
  }
  batch_t *bt = forming_batch(b);
  if (bt == NULL) {
    b->cfg.done(ctx, token, LD_GS_IGNORE, LD_RLN_OK);
    return;
  }
  ensure_handle(b);
  size_t i = bt->n++;
  bt->ctx[i] = ctx;
  bt->tokens[i] = token;
  bt->pending[i] = p;
  memcpy(bt->proofs[i], p.proof, LD_RLN_PROOF_BYTES);
  bt->values[i] = p.values;
  if (bt->n == b->cfg.max_batch)
    bt->state = BATCH_READY;
  b->pending++;
  schedule(b);
}

size_t ld_rln_batcher_pending(const ld_rln_batcher_t *b) {
  return b->pending;
}

static void on_handle_closed(uv_handle_t *h) {
  ld_rln_batcher_t *b = h->data;
  b->handle_ready = false;
  if (b->closed != NULL)
    b->closed(b->closed_user);
}

/* Once no batch is out: frees what is left and closes the handle. */
static void maybe_finish_close(ld_rln_batcher_t *b) {
  if (b->in_flight > 0)
    return;
  while (b->head != NULL) {
    batch_t *bt = b->head;
    b->head = bt->next;
    batch_free(bt);
  }
  b->tail = NULL;
  b->pending = 0;
  ensure_handle(b);
  uv_close((uv_handle_t *)&b->turn_end, on_handle_closed);
}

void ld_rln_batcher_close(ld_rln_batcher_t *b, void (*closed)(void *user), void *user) {
  if (b->closing)
    return;
  b->closing = true;
  b->closed = closed;
  b->closed_user = user;
  /* batches not sent are dropped now; those out are freed when they come back */
  batch_t **link = &b->head;
  b->tail = NULL;
  while (*link != NULL) {
    batch_t *bt = *link;
    if (bt->state == BATCH_OUT) {
      b->tail = bt;
      link = &bt->next;
    } else {
      *link = bt->next;
      batch_free(bt);
    }
  }
  if (b->handle_ready)
    uv_idle_stop(&b->turn_end);
  maybe_finish_close(b);
}

void ld_rln_batcher_free(ld_rln_batcher_t *b) {
  if (b == NULL)
    return;
  while (b->head != NULL) {
    batch_t *bt = b->head;
    b->head = bt->next;
    batch_free(bt);
  }
  free(b);
}

/* ---- relay ---------------------------------------------------------------------------------- */

void ld_rln_batch_relay_validate(ld_relay_t *r, uint64_t token, const char *pubsub_topic,
                                 const ld_waku_message_t *msg, const ld_peerid_t *from,
                                 void *user_data) {
  (void)pubsub_topic, (void)from;
  ld_rln_batcher_submit(user_data, r, token, msg);
}

void ld_rln_batch_relay_done(void *ctx, uint64_t token, ld_gs_verdict_t verdict,
                             ld_rln_reason_t reason) {
  (void)reason;
  ld_relay_validation_done(ctx, token, verdict);
}
