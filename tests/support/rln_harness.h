/* A static RLN group for node tests: random identities with one message limit, written as the
 * group file nodes read (--rln-relay-static-group-file), one member's secret as the credentials
 * file, the tree, and the circuit's prover (from LD_RLN_FIXTURES) for messages the test proves
 * itself. Asserts (cmocka) on every failure. */
#ifndef LD_TEST_RLN_HARNESS_H
#define LD_TEST_RLN_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "node/config.h"
#include "waku/core/message.h"
#include "waku/rln/publish.h"
#include "zk/merkle.h"
#include "zk/rln_prover.h"

typedef struct rh_group {
  char dir[64];
  char group_path[128], cred_path[128];
  size_t members;
  uint64_t limit;
  uint64_t ours; /* the member whose secret is in cred_path */
  ld_fr_t *secrets;
  ld_merkle_tree_t *tree;
  ld_rln_prover_t *prover; /* made on first rh_prove */
} rh_group_t;

/* `members` random identities with `limit`; member `ours`'s secret in the credentials file. */
void rh_group_make(rh_group_t *g, size_t members, uint64_t limit, uint64_t ours);
/* Removes the files and frees the group. */
void rh_group_free(rh_group_t *g);

/* Sets --rln-relay with the group, its limit and `epoch_sec` on `cfg`; with `member`, also the
 * credentials of member `ours` and the circuit's folder (the node then proves). */
void rh_configure(const rh_group_t *g, ld_node_config_t *cfg, uint64_t epoch_sec, bool member);

/* The circuit's prover (from LD_RLN_FIXTURES), made on the first call and kept by the group. */
ld_rln_prover_t *rh_prover(rh_group_t *g);

/* Attaches to `m` (timestamp set) a proof by member `index` of the group with `message_id` for
 * the epoch of its timestamp; the encoded RateLimitProof is written to `proof`, which `m` then
 * points into. */
void rh_prove(rh_group_t *g, ld_waku_message_t *m,
              uint8_t proof[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED], uint64_t index,
              uint64_t message_id, uint64_t epoch_sec);

/* As rh_prove, for the identity `secret` (with the group's limit) at leaf `index` of `tree`, which
 * need not be the group's: a proof over another tree is one by a non-member. */
void rh_prove_in_tree(rh_group_t *g, ld_waku_message_t *m,
                      uint8_t proof[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED], const ld_fr_t *secret,
                      const ld_merkle_tree_t *tree, uint64_t index, uint64_t message_id,
                      uint64_t epoch_sec);

/* A random identity secret. */
void rh_random_secret(ld_fr_t *out);

/* Writes `x` as a group or credentials file spells it: a JSON string of "0x" and 64 big-endian
 * hex digits. */
void rh_write_fr_hex(FILE *f, const ld_fr_t *x);

#endif
