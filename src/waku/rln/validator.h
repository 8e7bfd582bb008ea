/* RLN-relay's message validator, nwaku's validateMessageAndUpdateLog in its order (waku.md
 * §11.3), with its verdicts mapped to gossipsub as nwaku maps them:
 *
 *   0. the nullifier log is pruned of every epoch e with |e - current| >= gap,
 *      gap = max(floor(20 / epoch_sec), 1) (clearNullifierLog, before each message);
 *   1. the rate_limit_proof decodes (proof.h)                        else Invalid "undecodable"
 *   2. |now - timestamp| in whole seconds <= 20 (MaxClockGapSeconds)  else Invalid
 * "invalid_timestamp"
 *   3. proof.epoch == epoch(message timestamp)                         else Invalid
 * "timestamp_mismatch"
 *   4. merkle_root among the last 50 roots (AcceptableRootWindowSize) else Invalid "invalid_root"
 *   5. the zk proof verifies for (root, external nullifier from epoch and rln_identifier,
 *      x = share_x, y, nullifier) and x = hash_to_field(signal)       else Invalid "invalid_proof"
 *   6. (epoch, nullifier) not in the log                              else Spam
 *   7. Valid: (epoch, nullifier) enters the log.
 *
 * Valid => Accept; Invalid and Spam => Reject. Unlike zerokit (which reduces field elements mod
 * r), a root, share or nullifier that is not a canonical field element is Invalid
 * ("invalid_proof"): otherwise nullifier + r would pass as a second nullifier and dodge step 6.
 * The log holds at most one entry per valid proof, so its size is bounded by the group's
 * members times their message limit per epoch in the window.
 *
 * The clock is a parameter (pure state machine); one owner thread. The verifier is borrowed. */
#ifndef LD_WAKU_RLN_VALIDATOR_H
#define LD_WAKU_RLN_VALIDATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/gossipsub/router.h"
#include "waku/core/message.h"
#include "waku/rln/proof.h"
#include "zk/rln.h"

#define LD_RLN_ROOT_WINDOW 50        /* nwaku's AcceptableRootWindowSize */
#define LD_RLN_MAX_CLOCK_GAP_SEC 20  /* nwaku's MaxClockGapSeconds */
#define LD_RLN_DEFAULT_EPOCH_SEC 600 /* The Waku Network's epoch */

typedef enum ld_rln_verdict { LD_RLN_VALID, LD_RLN_INVALID, LD_RLN_SPAM } ld_rln_verdict_t;

/* Why (stable order, an index in statistics; names are nwaku's metric labels). */
typedef enum ld_rln_reason {
  LD_RLN_OK = 0,
  LD_RLN_UNDECODABLE,        /* "undecodable" */
  LD_RLN_INVALID_TIMESTAMP,  /* "invalid_timestamp" */
  LD_RLN_TIMESTAMP_MISMATCH, /* "timestamp_mismatch" */
  LD_RLN_INVALID_ROOT,       /* "invalid_root" */
  LD_RLN_INVALID_PROOF,      /* "invalid_proof" */
  LD_RLN_DUPLICATE,          /* "spam" */
  LD_RLN_REASON_COUNT
} ld_rln_reason_t;

const char *ld_rln_reason_name(ld_rln_reason_t r);

typedef struct ld_rln_validator ld_rln_validator_t;

typedef struct ld_rln_validator_stats {
  uint64_t messages;      /* waku_rln_messages_total (decoded) */
  uint64_t verifications; /* waku_rln_proof_verification_total */
  uint64_t valid;         /* waku_rln_valid_messages_total */
  uint64_t spam;          /* waku_rln_spam_messages_total */
  uint64_t by_reason[LD_RLN_REASON_COUNT];
  double verify_seconds_sum; /* waku_rln_proof_verification_duration_seconds */
  double last_verify_seconds;
  /* zk verifications done together (ld_rln_validator_note_batch; batch.h) */
  uint64_t batches;       /* waku_rln_proof_verification_batches_total */
  uint64_t batched;       /* proofs in those batches */
  uint64_t largest_batch; /* the most proofs in one batch */
} ld_rln_validator_stats_t;

/* `verifier` is borrowed and must outlive the validator; epoch_sec > 0. LD_ERR_INVALID_ARG,
 * LD_ERR_NOMEM. */
int ld_rln_validator_new(ld_rln_validator_t **out, const ld_rln_verifier_t *verifier,
                         uint64_t epoch_sec);
void ld_rln_validator_free(ld_rln_validator_t *v);

uint64_t ld_rln_validator_epoch_sec(const ld_rln_validator_t *v);

/* Adds a root to the window (the oldest of LD_RLN_ROOT_WINDOW leaves); a root equal to the
 * newest is not added twice. */
void ld_rln_validator_add_root(ld_rln_validator_t *v, const ld_fr_t *root);
/* 1 when `root` (32 bytes little-endian) is in the window. */
bool ld_rln_validator_root_ok(const ld_rln_validator_t *v, const uint8_t root[32]);

/* Steps 0 to 7 on `msg` at time now_ns (Unix ns). *reason (may be NULL) says why. */
ld_rln_verdict_t ld_rln_validator_check(ld_rln_validator_t *v, const ld_waku_message_t *msg,
                                        int64_t now_ns, ld_rln_reason_t *reason);

/* Steps 1, 3, 4 and 5 only (no clock gap, no log): for messages old by design, as store-sync
 * transfers them. The same reasons. */
ld_rln_verdict_t ld_rln_validator_check_proof(ld_rln_validator_t *v, const ld_waku_message_t *msg,
                                              ld_rln_reason_t *reason);

/* ---- the same steps split around the zk verification --------------------------------------
 *
 * For a caller that verifies the proofs of several messages at once (batch.h):
 * ld_rln_validator_begin runs steps 0 to 4 and step 5's checks of the values; the zk
 * verification of what it returns is the caller's (ld_rln_verify_batch, on any thread: the
 * pending proof is a plain copy); ld_rln_validator_end takes its result and runs steps 6 and 7.
 * Ending begun messages in the order they began keeps nwaku's double-signal rule: of two proofs
 * with one (epoch, nullifier), the first ended is valid, the second spam. */
typedef struct ld_rln_pending_proof {
  uint8_t proof[LD_RLN_PROOF_BYTES];
  ld_rln_proof_values_t values;
  uint8_t epoch[32];     /* as carried: the log's key with the nullifier */
  uint8_t nullifier[32]; /* as carried */
} ld_rln_pending_proof_t;

/* LD_RLN_OK with *out set when only the zk verification is left; otherwise the reason, already
 * counted in the statistics as ld_rln_validator_check counts an Invalid verdict. */
ld_rln_reason_t ld_rln_validator_begin(ld_rln_validator_t *v, const ld_waku_message_t *msg,
                                       int64_t now_ns, ld_rln_pending_proof_t *out);
/* Ends a message begun with LD_RLN_OK: zk_result is what ld_rln_verify answered for it (0 when
 * the proof holds), verify_seconds its share of the verification time; now_ns prunes the log. */
ld_rln_verdict_t ld_rln_validator_end(ld_rln_validator_t *v, const ld_rln_pending_proof_t *p,
                                      int zk_result, double verify_seconds, int64_t now_ns,
                                      ld_rln_reason_t *reason);
/* Counts a zk verification of `count` proofs done together. */
void ld_rln_validator_note_batch(ld_rln_validator_t *v, size_t count);
/* The verifier given at creation. */
const ld_rln_verifier_t *ld_rln_validator_verifier(const ld_rln_validator_t *v);

/* Entries in the nullifier log, and epochs it holds. */
size_t ld_rln_validator_log_size(const ld_rln_validator_t *v, size_t *epochs);

const ld_rln_validator_stats_t *ld_rln_validator_stats(const ld_rln_validator_t *v);

/* nwaku's mapping: Valid => Accept, Invalid => Reject, Spam => Reject. */
ld_gs_verdict_t ld_rln_gossipsub_verdict(ld_rln_verdict_t v);

#endif
