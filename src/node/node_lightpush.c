/* The lightpush service's publish step on a node with RLN-relay, as nwaku's relay push handler
 * with its RLN peer (waku_lightpush/callbacks.nim) does it:
 *
 *   1. a message without a rate_limit_proof gets one of ours (the node's membership and nonce
 *      manager, shared with its own publishing); when none can be made the push is answered
 *      504 OUT_OF_RLN_PROOF (v2: is_success false) with nwaku's appendRLNProof text, e.g.
 *      "could not get new message id to generate an rln proof: NonceLimitReached: Nonce limit
 *      reached. Please wait for the next epoch. requested nonce: 2 & nonceLimit: 2";
 *   2. relay's validation of the message as it will be published: size and protected shard
 *      (ld_relay_check_outgoing), then the RLN validator (clock gap, epoch, root, proof,
 *      nullifier log) — a message refused there is answered 420 "RLN validation failed" (v2:
 *      that info), so that a light client's bad or replayed proof never leaves the node (its
 *      relay peers would reject it and score the node down);
 *   3. relay publish (ld_lightpush_relay_publish).
 *
 * The proof of step 1 is made on libuv's thread pool, in the node's publish queue
 * (node_rln_publish.c), in turn with the node's own messages: the push is answered once the
 * message is proved and steps 2 and 3 are done, and the loop serves everything else meanwhile.
 *
 * Deviation: a message without timestamp is stamped with the current time before it is proved
 * (nwaku proves it with timestamp 0, which its own validator then refuses). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "node/node_internal.h"

#define TOPIC "lightpush"

/* nwaku's text of the RLN validator's refusal (relay's addValidator message). */
#define RLN_REFUSED "RLN validation failed"

/* Steps 2 and 3 for a message carrying its proof. */
static int publish_checked(ld_node_t *node, const char *pubsub_topic, const ld_waku_message_t *msg,
                           char *why, size_t why_len) {
  ld_rln_validator_t *validator = ld_node_rln_validator(node);
  /* size and protected shard first (their refusal answered by the relay glue) */
  if (ld_relay_check_outgoing(node->relay, pubsub_topic, msg) == LD_RELAY_OK) {
    ld_rln_reason_t reason = LD_RLN_OK;
    ld_rln_verdict_t v = ld_rln_validator_check(validator, msg, (int64_t)ld_wall_ns(), &reason);
    if (v != LD_RLN_VALID) {
      LD_INFO(TOPIC, "a light client's message failed RLN validation: %s",
              ld_rln_reason_name(reason));
      snprintf(why, why_len, "%s", RLN_REFUSED);
      return LD_ERR_MALFORMED;
    }
  }
  return ld_lightpush_relay_publish(node->relay, pubsub_topic, msg, why, why_len);
}

static int no_proof(const char *why) {
  LD_INFO(TOPIC, "no RLN proof for a light client's message: %s", why);
  return LD_ERR_CRYPTO;
}

/* A push that must be answered at once (a local push without a reply): proved on the loop. */
static int prove_now(ld_node_t *node, const char *pubsub_topic, const ld_waku_message_t *msg,
                     char *why, size_t why_len) {
  ld_waku_message_t with_proof;
  uint8_t proof[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED];
  if (ld_node_rln_attach(node, msg, &with_proof, proof, why, why_len) != 0)
    return no_proof(why);
  return publish_checked(node, pubsub_topic, &with_proof, why, why_len);
}

typedef struct proving_push {
  ld_node_t *node;
  ld_lightpush_reply_t *reply;
} proving_push_t;

static void on_proved(void *user_data, int rc, const char *pubsub_topic,
                      const ld_waku_message_t *msg) {
  proving_push_t *p = user_data;
  char why[LD_LIGHTPUSH_WHY_MAX] = "";
  int result;
  if (rc != 0) {
    ld_node_rln_why(p->node, rc, 0, why, sizeof why);
    result = no_proof(why);
  } else {
    result = publish_checked(p->node, pubsub_topic, msg, why, sizeof why);
  }
  ld_lightpush_reply_send(p->reply, result, why);
  free(p);
}

/* Step 1 off the loop: the nonce claimed now (its refusal answered at once), the proof queued. */
static int prove_later(ld_node_t *node, const char *pubsub_topic, const ld_waku_message_t *msg,
                       ld_lightpush_reply_t *reply, char *why, size_t why_len) {
  ld_waku_message_t m = *msg;
  ld_node_rln_claim_t claim;
  int rc = ld_node_rln_claim(node, &m, &claim); /* stamps a missing timestamp */
  if (rc != 0) {
    ld_node_rln_why(node, rc, claim.message_id, why, why_len);
    return no_proof(why);
  }
  proving_push_t *p = malloc(sizeof *p);
  if (p != NULL)
    *p = (proving_push_t){node, reply};
  rc = p == NULL ? LD_ERR_NOMEM
                 : ld_node_rln_prove_for(node, pubsub_topic, &m, &claim, on_proved, p);
  explicit_bzero(&claim.member, sizeof claim.member);
  if (rc != 0) {
    free(p);
    ld_node_rln_why(node, rc, 0, why, why_len);
    return no_proof(why);
  }
  return LD_LIGHTPUSH_LATER;
}

int ld_node_lightpush_publish(void *ctx, const char *pubsub_topic, const ld_waku_message_t *msg,
                              ld_lightpush_reply_t *reply, char *why, size_t why_len) {
  ld_node_t *node = ctx;
  if (node->relay == NULL || ld_node_rln_validator(node) == NULL)
    return ld_lightpush_relay_publish(node->relay, pubsub_topic, msg, why, why_len);
  if (msg->proof_len != 0)
    return publish_checked(node, pubsub_topic, msg, why, why_len);
  if (reply == NULL)
    return prove_now(node, pubsub_topic, msg, why, why_len);
  return prove_later(node, pubsub_topic, msg, reply, why, why_len);
}
