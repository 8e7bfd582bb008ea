/* RLN-relay on the publishing side: the RateLimitProof a member attaches to a message before
 * relay publish (nwaku's appendRLNProof), and the nonce manager that hands out message ids
 * (0 .. limit-1 per epoch, back to 0 when the epoch changes). The message's timestamp must be
 * set first: it is part of the proved signal and fixes the epoch. */
#ifndef LD_WAKU_RLN_PUBLISH_H
#define LD_WAKU_RLN_PUBLISH_H

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

typedef struct ld_rln_nonce {
  uint64_t limit;
  uint64_t epoch;
  uint64_t next;
} ld_rln_nonce_t;

void ld_rln_nonce_init(ld_rln_nonce_t *n, uint64_t limit);
/* The next message id for `epoch`: 0 after an epoch change. LD_ERR_LIMIT when the epoch's
 * `limit` ids are used up (nwaku's NonceLimitReached). */
int ld_rln_nonce_next(ld_rln_nonce_t *n, uint64_t epoch, uint64_t *message_id);

#endif
