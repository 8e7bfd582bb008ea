/* RLN-relay's validator with the zk verifications of many messages done together, off the loop.
 *
 * A message submitted here runs the validator's cheap steps at once on the loop (decode, clock
 * gap, epoch, root window, the values against the signal: ld_rln_validator_begin); a message
 * that fails one is answered at once. The others queue. At the start of the next loop turn (a
 * uv_idle handle, before the loop polls again) the queue goes, up to max_batch proofs at a time, to
 * libuv's thread pool as one ld_rln_verify_batch call (one multi-pairing for the whole batch; when
 * it fails the proofs are verified one by one to name the bad ones). While max_in_flight batches
 * are out, messages keep queueing, so batches grow with the load and a quiet node answers within
 * one verification. Back on the loop, batches end in the order they were queued and their messages
 * in arrival order (ld_rln_validator_end: the nullifier log and the double-signal rule), each
 * answered through the `done` callback with nwaku's gossipsub mapping (Valid => Accept, Invalid and
 * Spam => Reject).
 *
 * The validator and its verifier are borrowed: they must outlive the batcher, and the verifier
 * (immutable) is read from the thread pool while a batch is out. Loop thread only otherwise. */
#ifndef LD_WAKU_RLN_BATCH_H
#define LD_WAKU_RLN_BATCH_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "p2p/gossipsub/router.h"
#include "waku/relay/relay.h"
#include "waku/rln/validator.h"

#define LD_RLN_BATCH_DEFAULT_MAX 64      /* proofs per batch */
#define LD_RLN_BATCH_DEFAULT_IN_FLIGHT 1 /* batches on the thread pool at once */
#define LD_RLN_BATCH_DEFAULT_QUEUE 4096  /* messages waiting; more are ignored */

typedef struct ld_rln_batcher ld_rln_batcher_t;

/* A message's answer: `token` and `ctx` as submitted; `reason` why (LD_RLN_OK when accepted; a
 * message ignored because the queue is full or the batcher closes gets LD_GS_IGNORE with
 * LD_RLN_OK). Runs on the loop, never from inside ld_rln_batcher_submit for a queued message. */
typedef void (*ld_rln_batch_done_fn)(void *ctx, uint64_t token, ld_gs_verdict_t verdict,
                                     ld_rln_reason_t reason);

typedef struct ld_rln_batcher_config {
  uv_loop_t *loop;
  ld_rln_validator_t *validator;
  ld_rln_batch_done_fn done;
  size_t max_batch;             /* 0: LD_RLN_BATCH_DEFAULT_MAX */
  size_t max_in_flight;         /* 0: LD_RLN_BATCH_DEFAULT_IN_FLIGHT */
  size_t max_queue;             /* 0: LD_RLN_BATCH_DEFAULT_QUEUE */
  int64_t (*now_ns)(void *ctx); /* NULL: the wall clock */
  void *now_ctx;
} ld_rln_batcher_config_t;

/* LD_ERR_INVALID_ARG (no loop, validator or done), LD_ERR_NOMEM. Nothing runs until the first
 * submit. */
int ld_rln_batcher_new(ld_rln_batcher_t **out, const ld_rln_batcher_config_t *cfg);

/* Validates `msg` (read during the call only): answers through `done` now when a cheap step
 * fails, else queues its proof. */
void ld_rln_batcher_submit(ld_rln_batcher_t *b, void *ctx, uint64_t token,
                           const ld_waku_message_t *msg);

/* Messages submitted and not answered yet. */
size_t ld_rln_batcher_pending(const ld_rln_batcher_t *b);

/* Stops: the queued messages are dropped without an answer, no `done` runs after this call,
 * later submits are answered Ignore at once. `closed` (may be NULL) runs once the batches on
 * the thread pool have come back and the handle is closed; then free the batcher. */
void ld_rln_batcher_close(ld_rln_batcher_t *b, void (*closed)(void *user), void *user);

/* Frees a batcher that was closed (and whose `closed` ran) or never given a message. */
void ld_rln_batcher_free(ld_rln_batcher_t *b);

/* An ld_relay_validator_fn: user_data is an ld_rln_batcher_t whose `done` is
 * ld_rln_batch_relay_done (ctx: the relay). */
void ld_rln_batch_relay_validate(ld_relay_t *r, uint64_t token, const char *pubsub_topic,
                                 const ld_waku_message_t *msg, const ld_peerid_t *from,
                                 void *user_data);
/* An ld_rln_batch_done_fn answering relay (ctx: the ld_relay_t). */
void ld_rln_batch_relay_done(void *ctx, uint64_t token, ld_gs_verdict_t verdict,
                             ld_rln_reason_t reason);

#endif
