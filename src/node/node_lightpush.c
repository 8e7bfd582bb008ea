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
 * Deviation: a message without timestamp is stamped with the current time before it is proved
 * (nwaku proves it with timestamp 0, which its own validator then refuses). */
#include <stdio.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "node/node_internal.h"

#define TOPIC "lightpush"

/* nwaku's text of the RLN validator's refusal (relay's addValidator message). */
#define RLN_REFUSED "RLN validation failed"

int ld_node_lightpush_publish(void *ctx, const char *pubsub_topic, const ld_waku_message_t *msg,
                              char *why, size_t why_len) {
  ld_node_t *node = ctx;
  ld_rln_validator_t *validator = ld_node_rln_validator(node);
  if (node->relay == NULL || validator == NULL)
    return ld_lightpush_relay_publish(node->relay, pubsub_topic, msg, why, why_len);
  ld_waku_message_t with_proof = *msg;
  uint8_t proof[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED];
  if (msg->proof_len == 0) {
    int rc = ld_node_rln_attach(node, msg, &with_proof, proof, why, why_len);
    if (rc != 0) {
      LD_INFO(TOPIC, "no RLN proof for a light client's message: %s", why);
      return LD_ERR_CRYPTO;
    }
  }
  /* size and protected shard first (their refusal answered by the relay glue) */
  if (ld_relay_check_outgoing(node->relay, pubsub_topic, &with_proof) == LD_RELAY_OK) {
    ld_rln_reason_t reason = LD_RLN_OK;
    ld_rln_verdict_t v =
        ld_rln_validator_check(validator, &with_proof, (int64_t)ld_wall_ns(), &reason);
    if (v != LD_RLN_VALID) {
      LD_INFO(TOPIC, "a light client's message failed RLN validation: %s",
              ld_rln_reason_name(reason));
      snprintf(why, why_len, "%s", RLN_REFUSED);
      return LD_ERR_MALFORMED;
    }
  }
  return ld_lightpush_relay_publish(node->relay, pubsub_topic, &with_proof, why, why_len);
}
