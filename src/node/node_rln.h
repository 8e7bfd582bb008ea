/* RLN-relay inside the node: what node_rln.c (mount, static group, publishing) and
 * node_rln_chain.c (the on-chain group) share. Loop thread only. */
#ifndef LD_NODE_NODE_RLN_H
#define LD_NODE_NODE_RLN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "node/config.h"
#include "zk/field.h"

/* Our identity as --rln-relay-cred-path gives it. */
typedef struct node_rln_identity {
  ld_fr_t secret;              /* identity secret hash */
  bool has_index;              /* from the keystore or --rln-relay-membership-index */
  uint64_t index;              /* our membership index */
  uint64_t user_message_limit; /* from the keystore; 0 when it has none */
} node_rln_identity_t;

/* Reads --rln-relay-cred-path: nwaku's keystore (waku/rln/keystore.h), opened with
 * --rln-relay-cred-password and picked by --rln-relay-chain-id, --rln-relay-eth-contract-address
 * and --rln-relay-membership-index when it holds several credentials; or our simple
 * {"identitySecret": "0x…"}. --rln-relay-membership-index, when given, wins over the keystore's
 * index. A wrong password is LD_ERR_DECRYPT with an error naming --rln-relay-cred-password.
 * Runs the keystore's KDF on the calling thread: 0.38 s of CPU for nwaku's PBKDF2 of 1,000,000
 * iterations (a keystore may ask for up to 8,000,000). It runs while the node is built: before
 * the loop starts for the node program (run_node.c); on the library context's own loop in
 * createNode and in the rebuild after stop_node, when that loop serves no node yet (the
 * context's next request waits; the watchdog allows 20 s). */
int ld_node_rln_load_identity(const ld_node_rln_config_t *c, node_rln_identity_t *id, char *err,
                              size_t errlen);

/* ---- the on-chain group (node_rln_chain.c) ----------------------------------------------------
 *
 * Follows the RLN membership contract as nwaku's OnchainGroupManager does: eth_chainId first
 * (a --rln-relay-chain-id that differs stops the group with an error), isInMembershipSet of our
 * identity commitment (a warning when it is not), then every poll interval (nwaku's 5 s) root():
 * a new root goes to on_root, and then, for a member, getMerkleProof(index) to on_proof with the
 * root it was fetched at, and nextFreeIndex() (the member count). One poll at a time; a call that
 * fails, stalls past its deadline or answers garbage is logged and the next endpoint of the list
 * is used for the next poll; the roots already known stay. */
#include "waku/rln/eth_rpc.h"
#include "zk/merkle.h"

#define LD_NODE_RLN_CHAIN_POLL_MS 5000 /* nwaku's trackRootChanges rpcDelay */
#define LD_NODE_RLN_CHAIN_DEPTH 20     /* WakuRlnV2's MERKLE_TREE_DEPTH */

typedef struct node_rln_chain node_rln_chain_t;

typedef struct node_rln_chain_config {
  uv_loop_t *loop;
  const char *urls[LD_NODE_RLN_MAX_ETH_CLIENTS];
  size_t n_urls;
  const char *contract; /* 0x and 40 hex digits */
  uint64_t chain_id;    /* 0: take the endpoint's */
  bool member;          /* we have an identity: fetch our Merkle proof */
  uint64_t member_index;
  ld_fr_t id_commitment;
  uint64_t poll_ms;    /* 0: LD_NODE_RLN_CHAIN_POLL_MS */
  uint32_t timeout_ms; /* 0: LD_ETH_RPC_DEFAULT_TIMEOUT_MS */
  void (*on_root)(void *user, const ld_fr_t *root);
  void (*on_proof)(void *user, const ld_fr_t *root, const ld_merkle_proof_t *proof);
  void *user;
} node_rln_chain_config_t;

/* Starts following the contract (the first calls go out at once). The strings of `cfg` are
 * copied. LD_ERR_IO (libcurl missing), LD_ERR_NOMEM, LD_ERR_INVALID_ARG. */
int ld_node_rln_chain_start(node_rln_chain_t **out, const node_rln_chain_config_t *cfg);

/* Members the contract counted at the last poll (nextFreeIndex), and polls that failed. */
uint64_t ld_node_rln_chain_members(const node_rln_chain_t *ch);
uint64_t ld_node_rln_chain_failures(const node_rln_chain_t *ch);

/* Stops: no callback after it; `closed` (may be NULL) runs once every handle has closed. */
void ld_node_rln_chain_stop(node_rln_chain_t *ch, void (*closed)(void *user), void *user);

#endif
