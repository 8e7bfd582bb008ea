/* What the RLN validator's unit tests (tests/unit/waku/rln: validator, batch) share: the circuit's
 * prover and verifier read from LD_RLN_FIXTURES, members with a made-up Merkle path (their root
 * computed from it), messages proved by a member at a fixed time, and that time. Asserts (cmocka)
 * on a proof that cannot be made. */
#ifndef LD_TESTS_RLN_FIXTURES_H
#define LD_TESTS_RLN_FIXTURES_H

#include <stddef.h>
#include <stdint.h>

#include "waku/core/message.h"
#include "waku/rln/proof.h"
#include "waku/rln/publish.h"
#include "zk/rln_prover.h"

#define RF_EPOCH_SEC 600
#define RF_SEC 1000000000ll
/* 2026-12-01 12:00:05 UTC, 5 s into an epoch of 600 s */
#define RF_T0 ((int64_t)1796126405 * RF_SEC)

/* A message and its encoded proof. */
typedef struct rf_signed_msg {
  ld_waku_message_t msg;
  uint8_t payload[32];
  uint8_t proof[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED];
  size_t proof_len;
} rf_signed_msg_t;

/* The prover and verifier of the circuit's files in LD_RLN_FIXTURES: 0, or -1 (not set, or the
 * files cannot be read). */
int rf_load(ld_rln_prover_t **prover, ld_rln_verifier_t **verifier);

/* Member with identity secret `secret` (limit 10) at leaf `index` of a tree whose path holds
 * path_base + 1, path_base + 2, ... ; the tree's root in *root. */
void rf_member(ld_rln_member_t *m, uint64_t secret, uint64_t index, uint64_t path_base,
               ld_fr_t *root);

/* A message of 32 bytes of `tag` on /rln/1/test/proto at `ts`, proved by `who` with message id
 * `id` for the epoch of `ts` (epochs of RF_EPOCH_SEC). */
void rf_make_msg(const ld_rln_prover_t *prover, rf_signed_msg_t *m, const ld_rln_member_t *who,
                 int64_t ts, uint64_t id, uint8_t tag);

#endif
