/* RLN-relay on the publishing side: the RateLimitProof a member attaches to a message before
 * relay publish (nwaku's appendRLNProof), and the nonce manager that hands out message ids
 * (0 .. limit-1 per epoch, back to 0 when the epoch changes). The message's timestamp must be
 * set first: it is part of the proved signal and fixes the epoch. */
#ifndef LD_WAKU_RLN_PUBLISH_H
#define LD_WAKU_RLN_PUBLISH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "waku/core/message.h"
#include "waku/rln/proof.h"
#include "zk/rln_prover.h"

/* Our membership: the identity secret, its limit and the Merkle proof of its leaf in the
 * current tree. */
typedef struct ld_rln_member {
  ld_fr_t identity_secret;
  uint64_t user_message_limit;
  ld_merkle_proof_t merkle;
} ld_rln_member_t;

/* Proves `msg` (timestamp set) for epoch(msg->timestamp) with `message_id` and writes the
 * encoded RateLimitProof to out (*out_len bytes). `rln_identifier` NULL means nwaku's default.
 * Errors as ld_rln_prove (LD_ERR_INVALID_ARG: message id >= limit, epoch_sec 0). */
int ld_rln_attach_proof(const ld_rln_prover_t *prover, const ld_rln_member_t *member,
                        const ld_waku_message_t *msg, uint64_t epoch_sec, uint64_t message_id,
                        const uint8_t *rln_identifier,
                        uint8_t out[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED], size_t *out_len);

/* The same through a member's proving context (zk/rln_prover.h: after the first proof of a
 * membership, a third of the work), with the context's prover. One proof at a time per context. */
int ld_rln_attach_proof_ctx(ld_rln_proving_ctx_t *ctx, const ld_rln_member_t *member,
                            const ld_waku_message_t *msg, uint64_t epoch_sec, uint64_t message_id,
                            const uint8_t *rln_identifier,
                            uint8_t out[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED], size_t *out_len);

/* The nonce manager keeps the epochs it handed ids out for in a small window, so that messages
 * whose timestamps straddle an epoch change (a light client's clock a few seconds off) each get
 * a fresh id of their own epoch: an id is never handed out twice for one epoch, since a second
 * proof with the same (epoch, message id) is a double signal that reveals the member's secret.
 * An epoch that fell out of the window (older than the LD_RLN_NONCE_EPOCHS newest) is refused. */
#define LD_RLN_NONCE_EPOCHS 4

typedef struct ld_rln_nonce {
  uint64_t limit;
  size_t n;                            /* epochs in the window */
  uint64_t epoch[LD_RLN_NONCE_EPOCHS]; /* epochs handed ids out for */
  uint64_t next[LD_RLN_NONCE_EPOCHS];  /* their next id (may pass limit: requests counted) */
  bool forgot;                         /* an epoch left the window: `floor` is set */
  uint64_t floor;                      /* the newest epoch that left the window */
} ld_rln_nonce_t;

void ld_rln_nonce_init(ld_rln_nonce_t *n, uint64_t limit);
/* The next message id for `epoch` (0 for an epoch not seen before). LD_ERR_LIMIT when the
 * epoch's `limit` ids are used up (nwaku's NonceLimitReached), with *message_id set to the id
 * requested (limit, limit + 1, … as nwaku counts them); LD_ERR_INVALID_ARG for an epoch at or
 * before one that left the window (its used ids are forgotten). */
int ld_rln_nonce_next(ld_rln_nonce_t *n, uint64_t epoch, uint64_t *message_id);

#endif
