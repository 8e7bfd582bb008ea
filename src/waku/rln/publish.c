/* RLN-relay publishing: proofs for our messages and the nonce manager. */
#include "waku/rln/publish.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

int ld_rln_attach_proof(const ld_rln_prover_t *prover, const ld_rln_member_t *member,
                        const ld_waku_message_t *msg, uint64_t epoch_sec, uint64_t message_id,
                        const uint8_t *rln_identifier,
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
  int rc = ld_rln_prove(prover, &w, p.proof, &values);
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

void ld_rln_nonce_init(ld_rln_nonce_t *n, uint64_t limit) {
  n->limit = limit;
  n->epoch = 0;
  n->next = 0;
}

int ld_rln_nonce_next(ld_rln_nonce_t *n, uint64_t epoch, uint64_t *message_id) {
  if (epoch != n->epoch) {
    n->epoch = epoch;
    n->next = 0;
  }
  if (n->next >= n->limit) {
    return LD_ERR_LIMIT;
  }
  *message_id = n->next++;
  return 0;
}
