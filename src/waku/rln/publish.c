/* RLN-relay publishing: proofs for our messages and the nonce manager. */
#include "waku/rln/publish.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* Proves with the context when given, else with the prover. */
static int attach_proof(const ld_rln_prover_t *prover, ld_rln_proving_ctx_t *ctx,
                        const ld_rln_member_t *member, const ld_waku_message_t *msg,
                        uint64_t epoch_sec, uint64_t message_id, const uint8_t *rln_identifier,
                        uint8_t out[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED], size_t *out_len) {
  if (epoch_sec == 0) {
    return LD_ERR_INVALID_ARG;
  }
  ld_rln_rate_limit_proof_t p;
  memset(&p, 0, sizeof p);
  memcpy(p.rln_identifier, rln_identifier != NULL ? rln_identifier : ld_rln_default_identifier, 32);
  ld_rln_epoch_bytes(p.epoch, ld_rln_epoch_of(msg->timestamp, epoch_sec));
  ld_rln_witness_t w;
  memset(&w, 0, sizeof w);
  w.identity_secret = member->identity_secret;
  w.user_message_limit = member->user_message_limit;
  w.message_id = message_id;
  w.merkle = member->merkle;
  size_t n = ld_rln_message_signal(NULL, NULL, msg->payload_len, NULL, msg->content_topic_len,
                                   msg->timestamp);
  uint8_t *signal = malloc(n);
  if (signal == NULL) {
    return LD_ERR_NOMEM;
  }
  ld_rln_message_signal(signal, msg->payload, msg->payload_len, msg->content_topic,
                        msg->content_topic_len, msg->timestamp);
  ld_rln_hash_to_field(&w.x, signal, n);
  free(signal);
  ld_rln_external_nullifier_nwaku(&w.external_nullifier, p.epoch, p.rln_identifier);
  ld_rln_proof_values_t values;
  int rc = ctx != NULL ? ld_rln_prove_ctx(ctx, &w, p.proof, &values)
                       : ld_rln_prove(prover, &w, p.proof, &values);
  explicit_bzero(&w, sizeof w);
  if (rc != 0) {
    return rc;
  }
  ld_fr_to_bytes(p.merkle_root, &values.root);
  ld_fr_to_bytes(p.share_x, &values.x);
  ld_fr_to_bytes(p.share_y, &values.y);
  ld_fr_to_bytes(p.nullifier, &values.nullifier);
  *out_len = ld_rln_rate_limit_proof_encode(&p, out);
  return 0;
}

int ld_rln_attach_proof(const ld_rln_prover_t *prover, const ld_rln_member_t *member,
                        const ld_waku_message_t *msg, uint64_t epoch_sec, uint64_t message_id,
                        const uint8_t *rln_identifier,
                        uint8_t out[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED], size_t *out_len) {
  return attach_proof(prover, NULL, member, msg, epoch_sec, message_id, rln_identifier, out,
                      out_len);
}

int ld_rln_attach_proof_ctx(ld_rln_proving_ctx_t *ctx, const ld_rln_member_t *member,
                            const ld_waku_message_t *msg, uint64_t epoch_sec, uint64_t message_id,
                            const uint8_t *rln_identifier,
                            uint8_t out[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED], size_t *out_len) {
  return attach_proof(ld_rln_proving_ctx_prover(ctx), ctx, member, msg, epoch_sec, message_id,
                      rln_identifier, out, out_len);
}

void ld_rln_nonce_init(ld_rln_nonce_t *n, uint64_t limit) {
  memset(n, 0, sizeof *n);
  n->limit = limit;
}

/* The slot of `epoch`, made when new (the oldest epoch leaves a full window); -1 when the epoch
 * is at or before one that left. */
static int nonce_slot(ld_rln_nonce_t *n, uint64_t epoch) {
  size_t oldest = 0;
  for (size_t i = 0; i < n->n; i++) {
    if (n->epoch[i] == epoch) {
      return (int)i;
    }
    if (n->epoch[i] < n->epoch[oldest]) {
      oldest = i;
    }
  }
  if (n->forgot && epoch <= n->floor) {
    return -1;
  }
  size_t slot = n->n;
  if (n->n == LD_RLN_NONCE_EPOCHS) {
    if (epoch < n->epoch[oldest]) {
      return -1; /* would leave at once */
    }
    slot = oldest;
    if (!n->forgot || n->epoch[oldest] > n->floor) {
      n->floor = n->epoch[oldest];
    }
    n->forgot = true;
  } else {
    n->n++;
  }
  n->epoch[slot] = epoch;
  n->next[slot] = 0;
  return (int)slot;
}

int ld_rln_nonce_next(ld_rln_nonce_t *n, uint64_t epoch, uint64_t *message_id) {
  int slot = nonce_slot(n, epoch);
  if (slot < 0) {
    return LD_ERR_INVALID_ARG;
  }
  *message_id = n->next[slot];
  if (n->next[slot] != UINT64_MAX) {
    n->next[slot]++;
  }
  return *message_id < n->limit ? 0 : LD_ERR_LIMIT;
}
