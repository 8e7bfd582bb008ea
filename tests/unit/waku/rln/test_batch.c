/* RLN-relay's batched validator (waku/rln/batch.h) on a real libuv loop and thread pool, with
 * messages proved by our prover:
 *  - the messages of one loop turn are verified as one batch; a bad proof in it is rejected
 *    alone, a double signal inside the batch is spam (arrival order), a message failing a cheap
 *    step is answered at once without entering the batch;
 *  - messages arriving while a batch is out form the next batches (batches grow with the load),
 *    and batches end in order;
 *  - closing with a batch out: no answer afterwards, `closed` once the batch is back.
 * Circuit files from LD_RLN_FIXTURES. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "base/error.h"
#include "rln_fixtures.h"
#include "waku/rln/batch.h"
#include "waku/rln/publish.h"
#include "waku/rln/validator.h"

#define EPOCH_SEC RF_EPOCH_SEC
#define SEC RF_SEC
#define T0 RF_T0
#define N_IDS 5

static ld_rln_prover_t *prover;
static ld_rln_verifier_t *verifier;
static ld_rln_member_t member;
static ld_fr_t root;

typedef rf_signed_msg_t signed_msg_t;

/* ids[i]: message id i; twin: message id 0 again with another payload (a double signal);
 * bad: message id 1 with its share y changed after proving (values canonical, proof false). */
static signed_msg_t ids[N_IDS], twin, bad;

static void make_msg(signed_msg_t *m, uint64_t id, uint8_t tag) {
  rf_make_msg(prover, m, &member, T0 + (int64_t)tag * SEC / 10, id, tag);
}

static int setup(void **state) {
  (void)state;
  if (rf_load(&prover, &verifier) != 0)
    return -1;
  rf_member(&member, 424242, 11, 2999, &root);
  for (uint64_t i = 0; i < N_IDS; i++)
    make_msg(&ids[i], i, (uint8_t)(i + 1));
  make_msg(&twin, 0, 20);
  make_msg(&bad, 1, 21);
  ld_rln_rate_limit_proof_t p;
  if (ld_rln_rate_limit_proof_decode(&p, bad.proof, bad.proof_len) != 0)
    return -1;
  p.share_y[0] ^= 1;
  bad.proof_len = ld_rln_rate_limit_proof_encode(&p, bad.proof);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  ld_rln_prover_free(prover);
  ld_rln_verifier_free(verifier);
  return 0;
}

/* ---- a batcher on its own loop, answers recorded -------------------------------------------- */

#define MAX_ANSWERS 16

typedef struct {
  uv_loop_t loop;
  ld_rln_validator_t *validator;
  ld_rln_batcher_t *batcher;
  size_t n;
  uint64_t token[MAX_ANSWERS];
  ld_gs_verdict_t verdict[MAX_ANSWERS];
  ld_rln_reason_t reason[MAX_ANSWERS];
  int closed;
} rig_t;

static void on_done(void *ctx, uint64_t token, ld_gs_verdict_t verdict, ld_rln_reason_t reason) {
  rig_t *g = ctx;
  assert_true(g->n < MAX_ANSWERS);
  g->token[g->n] = token;
  g->verdict[g->n] = verdict;
  g->reason[g->n] = reason;
  g->n++;
}

static int64_t fixed_now(void *ctx) {
  (void)ctx;
  return T0 + 2 * SEC;
}

static void rig_init(rig_t *g, size_t max_batch) {
  memset(g, 0, sizeof *g);
  assert_int_equal(uv_loop_init(&g->loop), 0);
  assert_int_equal(ld_rln_validator_new(&g->validator, verifier, EPOCH_SEC), 0);
  ld_rln_validator_add_root(g->validator, &root);
  ld_rln_batcher_config_t c = {.loop = &g->loop,
                               .validator = g->validator,
                               .done = on_done,
                               .max_batch = max_batch,
                               .now_ns = fixed_now};
  assert_int_equal(ld_rln_batcher_new(&g->batcher, &c), 0);
}

static void on_closed(void *user) {
  ((rig_t *)user)->closed++;
}

static void rig_free(rig_t *g) {
  ld_rln_batcher_close(g->batcher, on_closed, g);
  uv_run(&g->loop, UV_RUN_DEFAULT);
  assert_int_equal(g->closed, 1);
  ld_rln_batcher_free(g->batcher);
  ld_rln_validator_free(g->validator);
  assert_int_equal(uv_loop_close(&g->loop), 0);
}

static void submit(rig_t *g, uint64_t token, const signed_msg_t *m) {
  ld_rln_batcher_submit(g->batcher, g, token, &m->msg);
}

/* Runs the loop until `n` answers came (the batcher's handle keeps it alive meanwhile). */
static void run_until(rig_t *g, size_t n) {
  for (int i = 0; i < 100000 && g->n < n; i++)
    uv_run(&g->loop, UV_RUN_ONCE);
  assert_int_equal(g->n, n);
}

static size_t answer_of(const rig_t *g, uint64_t token) {
  for (size_t i = 0; i < g->n; i++)
    if (g->token[i] == token)
      return i;
  fail_msg("no answer for token %llu", (unsigned long long)token);
  return 0;
}

static void expect(const rig_t *g, uint64_t token, ld_gs_verdict_t v, ld_rln_reason_t r) {
  size_t i = answer_of(g, token);
  assert_int_equal(g->verdict[i], v);
  assert_int_equal(g->reason[i], r);
}

/* One loop turn's messages: one batch; the bad proof alone rejected, the double signal spam,
 * a message of another epoch answered at once. */
static void one_turn_one_batch(void **state) {
  (void)state;
  rig_t g;
  rig_init(&g, 0);
  signed_msg_t shifted = ids[2];
  shifted.msg.timestamp = T0 - 6 * SEC; /* 8 s from now, but the epoch before its proof's */
  submit(&g, 1, &ids[0]);
  submit(&g, 2, &bad);
  submit(&g, 3, &ids[2]);
  submit(&g, 4, &shifted);
  submit(&g, 5, &twin);
  submit(&g, 6, &ids[3]);
  assert_int_equal(g.n, 1); /* the cheap step's answer, during its submit */
  expect(&g, 4, LD_GS_REJECT, LD_RLN_TIMESTAMP_MISMATCH);
  assert_int_equal(ld_rln_batcher_pending(g.batcher), 5);
  run_until(&g, 6);
  expect(&g, 1, LD_GS_ACCEPT, LD_RLN_OK);
  expect(&g, 2, LD_GS_REJECT, LD_RLN_INVALID_PROOF);
  expect(&g, 3, LD_GS_ACCEPT, LD_RLN_OK);
  expect(&g, 5, LD_GS_REJECT, LD_RLN_DUPLICATE);
  expect(&g, 6, LD_GS_ACCEPT, LD_RLN_OK);
  /* answered in arrival order */
  assert_true(answer_of(&g, 1) < answer_of(&g, 2) && answer_of(&g, 2) < answer_of(&g, 3) &&
              answer_of(&g, 3) < answer_of(&g, 5) && answer_of(&g, 5) < answer_of(&g, 6));
  const ld_rln_validator_stats_t *st = ld_rln_validator_stats(g.validator);
  assert_int_equal(st->batches, 1);
  assert_int_equal(st->batched, 5);
  assert_int_equal(st->largest_batch, 5);
  assert_int_equal(st->verifications, 5);
  assert_int_equal(st->valid, 3);
  assert_int_equal(st->spam, 1);
  assert_int_equal(st->by_reason[LD_RLN_INVALID_PROOF], 1);
  assert_int_equal(st->by_reason[LD_RLN_TIMESTAMP_MISMATCH], 1);
  assert_int_equal(ld_rln_validator_log_size(g.validator, NULL), 3);
  assert_int_equal(ld_rln_batcher_pending(g.batcher), 0);

  /* the double signal the other way round: the twin first is valid, the original spam */
  rig_t h;
  rig_init(&h, 0);
  submit(&h, 1, &twin);
  submit(&h, 2, &ids[0]);
  run_until(&h, 2);
  expect(&h, 1, LD_GS_ACCEPT, LD_RLN_OK);
  expect(&h, 2, LD_GS_REJECT, LD_RLN_DUPLICATE);
  rig_free(&h);
  rig_free(&g);
}

/* A batch out on the thread pool: the messages arriving meanwhile wait and form the next
 * batches (at most max_batch each), which end in order after it. */
static void batches_grow_while_one_is_out(void **state) {
  (void)state;
  rig_t g;
  rig_init(&g, 3);
  submit(&g, 1, &ids[0]);
  uv_run(&g.loop, UV_RUN_NOWAIT); /* the turn ends: the batch of one goes out */
  submit(&g, 2, &ids[1]);
  submit(&g, 3, &ids[2]);
  submit(&g, 4, &ids[3]);
  submit(&g, 5, &ids[4]);
  submit(&g, 6, &twin);
  run_until(&g, 6);
  for (uint64_t t = 1; t <= 5; t++) {
    expect(&g, t, LD_GS_ACCEPT, LD_RLN_OK);
    assert_int_equal(answer_of(&g, t), t - 1);
  }
  expect(&g, 6, LD_GS_REJECT, LD_RLN_DUPLICATE);
  const ld_rln_validator_stats_t *st = ld_rln_validator_stats(g.validator);
  assert_int_equal(st->batches, 3); /* 1, then 3, then 2 */
  assert_int_equal(st->batched, 6);
  assert_int_equal(st->largest_batch, 3);
  rig_free(&g);
}

/* Closing while a batch is out: the queued and the out messages get no answer, `closed` runs
 * once the batch is back; a submit after closing is ignored at once. */
static void close_with_a_batch_out(void **state) {
  (void)state;
  rig_t g;
  rig_init(&g, 1);
  submit(&g, 1, &ids[0]);
  uv_run(&g.loop, UV_RUN_NOWAIT); /* out */
  submit(&g, 2, &ids[1]);         /* queued */
  ld_rln_batcher_close(g.batcher, on_closed, &g);
  submit(&g, 3, &ids[2]);
  assert_int_equal(g.n, 1);
  expect(&g, 3, LD_GS_IGNORE, LD_RLN_OK);
  assert_int_equal(g.closed, 0);
  uv_run(&g.loop, UV_RUN_DEFAULT);
  assert_int_equal(g.closed, 1);
  assert_int_equal(g.n, 1);
  ld_rln_batcher_free(g.batcher);
  ld_rln_validator_free(g.validator);
  assert_int_equal(uv_loop_close(&g.loop), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(one_turn_one_batch),
      cmocka_unit_test(batches_grow_while_one_is_out),
      cmocka_unit_test(close_with_a_batch_out),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
