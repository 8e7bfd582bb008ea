/* Fuzz target: RLN-relay's RateLimitProof decoder and the validator behind it. The input is the
 * rate_limit_proof field of a message (with a fixed payload, content topic and timestamp):
 * decoding never crashes, a decoded proof re-encodes and decodes to the same fields, and the
 * validator answers Invalid (nothing random is a valid proof for the empty root window's
 * members) without touching the nullifier log. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "waku/rln/validator.h"

static ld_rln_verifier_t *verifier;
static ld_rln_validator_t *validator;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ld_rln_rate_limit_proof_t p, q;
  if (ld_rln_rate_limit_proof_decode(&p, data, size) != 0) {
    return 0;
  }
  uint8_t buf[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED];
  size_t n = ld_rln_rate_limit_proof_encode(&p, buf);
  if (n > sizeof buf || ld_rln_rate_limit_proof_decode(&q, buf, n) != 0 ||
      memcmp(&p, &q, sizeof p) != 0) {
    abort();
  }
  if (validator == NULL) {
    if (ld_rln_verifier_new(&verifier) != 0 ||
        ld_rln_validator_new(&validator, verifier, LD_RLN_DEFAULT_EPOCH_SEC) != 0) {
      abort();
    }
    /* the root the input claims is in the window: the proof check itself runs */
  }
  ld_fr_t root;
  if (ld_fr_from_bytes(&root, p.merkle_root) == 0) {
    ld_rln_validator_add_root(validator, &root);
  }
  ld_waku_message_t msg;
  ld_waku_message_init(&msg);
  static const uint8_t payload[] = "fuzz";
  msg.payload = payload;
  msg.payload_len = 4;
  msg.content_topic = "/fuzz/1/rln/proto";
  msg.content_topic_len = strlen(msg.content_topic);
  uint64_t epoch = 0;
  for (int i = 7; i >= 0; i--) {
    epoch = (epoch << 8) | p.epoch[i];
  }
  /* a timestamp inside the proof's epoch when it is a plausible one, so that steps 4–5 run */
  msg.timestamp =
      epoch < (1ull << 23) ? (int64_t)(epoch * LD_RLN_DEFAULT_EPOCH_SEC + 1) * 1000000000ll : 1;
  msg.proof = data;
  msg.proof_len = size;
  ld_rln_reason_t reason;
  if (ld_rln_validator_check(validator, &msg, msg.timestamp, &reason) != LD_RLN_INVALID ||
      ld_rln_validator_log_size(validator, NULL) != 0) {
    abort();
  }
  return 0;
}
