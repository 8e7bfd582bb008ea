/* RLN-relay in the node with a static group (--rln-relay --rln-relay-dynamic=false).
 *
 * At mount: the members' rate commitments are read from --rln-relay-static-group-file (a JSON
 * array of 0x-hex field elements, big-endian, in membership-index order) into the Merkle tree of
 * depth 20; its root is the validator's only root; the validator (waku/rln/validator.h) is added
 * to relay, so that every message from a peer on every topic passes nwaku's checks.
 *
 * With --rln-relay-cred-path (a JSON object {"identitySecret": "0x<hex>"}, our simple form of
 * nwaku's keystore) and --rln-relay-membership-index, the node is that member: its identity must
 * give the rate commitment listed at that index for --rln-relay-user-message-limit. Every message
 * the node publishes (ld_node_publish, REST relay publish) then gets a RateLimitProof with the
 * next message id of the nonce manager for the message's epoch; the circuit's files come from
 * --rln-relay-circuit-dir. A node without credentials validates and refuses to publish, as nwaku
 * does. ld_node_publish and REST relay publish prove off the loop's thread (ld_node_rln_claim here,
 * the queue in node_rln_publish.c); ld_node_rln_prepare proves on the caller's thread.
 *
 * A static group gains members at run time through ld_node_rln_group_add (an embedder that
 * learns members out of band; tests): the new root joins the validator's window and a member
 * node's path is updated. A member node's publish queue keeps its proving context prepared for
 * our path (ld_node_rln_publish_warm: at mount, after every such change and, for the on-chain
 * group, after every Merkle proof of our leaf the contract gives for a new root). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "node/node_internal.h"
#include "node/node_rln.h"
#include "waku/rln/batch.h"
#include "waku/rln/group_file.h"
#include "waku/rln/hooks.h"
#include "waku/rln/keystore.h"
#include "waku/rln/publish.h"
#include "zk/merkle.h"

#define TOPIC "rln"

struct node_rln {
  ld_node_t *node;
  ld_rln_verifier_t *verifier;
  ld_rln_validator_t *validator;
  ld_rln_batcher_t *batcher; /* relay's validator: zk verifications batched off the loop */
  ld_merkle_tree_t *tree;
  uint64_t epoch_sec;
  uint64_t user_message_limit;
  /* our membership, when credentials were given */
  ld_rln_prover_t *prover;
  ld_rln_member_t member;
  uint64_t member_index; /* ours in the static group */
  ld_rln_nonce_t nonce;
  /* the on-chain group (node_rln_chain.c), when not a static group */
  node_rln_chain_t *chain;
  ld_fr_t rate_commitment; /* our leaf */
  bool member_ready;       /* member.merkle holds a proof the contract gave for a known root */
};

static int load_group(node_rln_t *r, const char *path, char *err, size_t errlen) {
  json_error_t jerr;
  json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
  if (root == NULL)
    return ld_error_fmt(err, errlen, LD_ERR_IO, "rln-relay-static-group-file %s: %s", path,
                        jerr.text);
  ld_fr_t *leaves = NULL;
  size_t n = 0;
  char why[256] = "";
  int rc = ld_rln_group_from_json(root, (size_t)ld_merkle_capacity(r->tree), &leaves, &n, why,
                                  sizeof why);
  json_decref(root);
  if (rc != 0)
    return ld_error_fmt(err, errlen, rc, "rln-relay-static-group-file %s: %s", path,
                        why[0] != '\0' ? why : ld_strerror(rc));
  rc = ld_merkle_set_range(r->tree, 0, leaves, n);
  free(leaves);
  return rc;
}

/* Our identity from --rln-relay-cred-path: nwaku's keystore, opened with
 * --rln-relay-cred-password, or our simple {"identitySecret": …}. A keystore also names the
 * membership index and the user message limit. */
static int identity_from_keystore(const json_t *root, const ld_node_rln_config_t *c,
                                  node_rln_identity_t *id, char *err, size_t errlen) {
  char chain[24] = "";
  if (c->chain_id != 0)
    snprintf(chain, sizeof chain, "%llu", (unsigned long long)c->chain_id);
  ld_rln_keystore_query_t q = {chain, c->eth_contract,
                               c->has_membership_index ? c->membership_index : 0};
  ld_rln_credential_t cred;
  char why[256] = "";
  int rc = ld_rln_keystore_open(root, c->cred_password, &q, &cred, why, sizeof why);
  if (rc == LD_ERR_DECRYPT)
    return ld_error_fmt(err, errlen, rc,
                        "rln-relay-cred-password does not open the keystore %s (wrong password)",
                        c->cred_path);
  if (rc != 0)
    return ld_error_fmt(err, errlen, rc, "rln-relay-cred-path %s: %s", c->cred_path, why);
  ld_fr_from_bytes(&id->secret, cred.id_secret_hash);
  id->has_index = true;
  id->index = cred.tree_index;
  id->user_message_limit = cred.user_message_limit;
  explicit_bzero(&cred, sizeof cred);
  return 0;
}

int ld_node_rln_load_identity(const ld_node_rln_config_t *c, node_rln_identity_t *id, char *err,
                              size_t errlen) {
  memset(id, 0, sizeof *id);
  json_error_t jerr;
  json_t *root = json_load_file(c->cred_path, JSON_REJECT_DUPLICATES, &jerr);
  if (root == NULL)
    return ld_error_fmt(err, errlen, LD_ERR_IO, "rln-relay-cred-path %s: %s", c->cred_path,
                        jerr.text);
  int rc = 0;
  if (ld_rln_keystore_detect(root))
    rc = identity_from_keystore(root, c, id, err, errlen);
  else if (ld_rln_identity_from_json(root, &id->secret) != 0)
    rc = ld_error_fmt(err, errlen, LD_ERR_MALFORMED,
                      "rln-relay-cred-path %s: neither nwaku's keystore nor an "
                      "\"identitySecret\" 0x-hex field element",
                      c->cred_path);
  json_decref(root);
  if (rc == 0 && c->has_membership_index) { /* the flag wins, as nwaku's query names it */
    id->has_index = true;
    id->index = c->membership_index;
  }
  return rc;
}

static int load_prover(node_rln_t *r, const char *dir, char *err, size_t errlen) {
  if (dir[0] == '\0')
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "rln-relay-cred-path needs rln-relay-circuit-dir (the circuit's files)");
  char zkey[LD_NODE_PATH_MAX + 32], graph[LD_NODE_PATH_MAX + 32];
  snprintf(zkey, sizeof zkey, "%s/rln_final.zkey", dir);
  snprintf(graph, sizeof graph, "%s/graph.bin", dir);
  int rc = ld_rln_prover_new_from_files(&r->prover, zkey, graph);
  if (rc != 0)
    return ld_error_fmt(err, errlen, rc, "rln-relay-circuit-dir %s: %s", dir, ld_strerror(rc));
  return 0;
}

/* Our membership: the identity must be the member listed at the index. */
static int load_member(node_rln_t *r, const ld_node_rln_config_t *c, char *err, size_t errlen) {
  node_rln_identity_t id;
  int rc = ld_node_rln_load_identity(c, &id, err, errlen);
  if (rc != 0)
    return rc;
  r->member.identity_secret = id.secret;
  explicit_bzero(&id.secret, sizeof id.secret);
  if (id.user_message_limit != 0)
    r->user_message_limit = id.user_message_limit;
  if (!id.has_index)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "rln-relay-cred-path needs rln-relay-membership-index");
  if (id.index >= ld_merkle_next_index(r->tree))
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "rln-relay-membership-index %llu: the static group has %llu members",
                        (unsigned long long)id.index,
                        (unsigned long long)ld_merkle_next_index(r->tree));
  ld_fr_t idc, rate, leaf;
  ld_rln_id_commitment(&idc, &r->member.identity_secret);
  ld_rln_rate_commitment(&rate, &idc, r->user_message_limit);
  ld_merkle_get(r->tree, id.index, &leaf);
  uint8_t a[32], b[32];
  ld_fr_to_bytes(a, &rate);
  ld_fr_to_bytes(b, &leaf);
  if (memcmp(a, b, 32) != 0)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "rln-relay-cred-path: our identity with user message limit %llu is not "
                        "member %llu of the static group",
                        (unsigned long long)r->user_message_limit, (unsigned long long)id.index);
  r->member.user_message_limit = r->user_message_limit;
  r->member_index = id.index;
  rc = ld_merkle_proof(r->tree, id.index, &r->member.merkle);
  if (rc == 0)
    rc = load_prover(r, c->circuit_dir, err, errlen);
  ld_rln_nonce_init(&r->nonce, r->user_message_limit);
  return rc;
}

/* ---- the on-chain group ------------------------------------------------------------------- */

static void on_chain_root(void *user, const ld_fr_t *root) {
  node_rln_t *r = user;
  ld_rln_validator_add_root(r->validator, root);
}

/* The contract's Merkle proof of our leaf is used only when it leads to the root it came with:
 * an endpoint that lies about it cannot make us publish proofs no one accepts. */
static void on_chain_proof(void *user, const ld_fr_t *root, const ld_merkle_proof_t *proof) {
  node_rln_t *r = user;
  ld_fr_t got;
  ld_merkle_root_from_proof(&r->rate_commitment, proof, &got);
  if (!ld_fr_equal(&got, root)) {
    LD_WARN(TOPIC, "on-chain group: the contract's Merkle proof of our membership does not lead "
                   "to its root (wrong index or user message limit?); not publishing");
    r->member_ready = false;
    return;
  }
  r->member.merkle = *proof;
  r->member_ready = true;
  ld_node_rln_publish_warm(r->node, r->prover); /* our path changed with the root */
}

static int onchain_member(node_rln_t *r, const ld_node_rln_config_t *c, node_rln_chain_config_t *cc,
                          char *err, size_t errlen) {
  node_rln_identity_t id;
  int rc = ld_node_rln_load_identity(c, &id, err, errlen);
  if (rc != 0)
    return rc;
  if (!id.has_index)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "rln-relay-cred-path needs rln-relay-membership-index");
  r->member.identity_secret = id.secret;
  explicit_bzero(&id.secret, sizeof id.secret);
  if (id.user_message_limit != 0)
    r->user_message_limit = id.user_message_limit;
  r->member.user_message_limit = r->user_message_limit;
  ld_rln_id_commitment(&cc->id_commitment, &r->member.identity_secret);
  ld_rln_rate_commitment(&r->rate_commitment, &cc->id_commitment, r->user_message_limit);
  cc->member = true;
  cc->member_index = id.index;
  ld_rln_nonce_init(&r->nonce, r->user_message_limit);
  return load_prover(r, c->circuit_dir, err, errlen);
}

static int build_onchain(node_rln_t *r, uv_loop_t *loop, const ld_node_rln_config_t *c, char *err,
                         size_t errlen) {
  if (c->eth_contract[0] == '\0')
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "the on-chain group needs rln-relay-eth-contract-address (or "
                        "rln-relay-dynamic=false with rln-relay-static-group-file)");
  node_rln_chain_config_t cc = {.loop = loop,
                                .contract = c->eth_contract,
                                .chain_id = c->chain_id,
                                .on_root = on_chain_root,
                                .on_proof = on_chain_proof,
                                .user = r};
  for (size_t i = 0; i < c->n_eth_clients; i++)
    cc.urls[cc.n_urls++] = c->eth_clients[i];
  if (cc.n_urls == 0)
    cc.urls[cc.n_urls++] = LD_NODE_RLN_DEFAULT_ETH_CLIENT;
  int rc = ld_rln_verifier_new(&r->verifier);
  if (rc == 0)
    rc = ld_rln_validator_new(&r->validator, r->verifier, r->epoch_sec);
  if (rc == 0 && c->cred_path[0] != '\0')
    rc = onchain_member(r, c, &cc, err, errlen);
  if (rc == 0)
    rc = ld_node_rln_chain_start(&r->chain, &cc);
  if (rc != 0 && err[0] == '\0')
    ld_error_fmt(err, errlen, rc, "on-chain group: %s", ld_strerror(rc));
  return rc;
}

/* The on-chain group unless rln-relay-dynamic=false names a static group (nwaku has only the
 * on-chain group). */
static bool wants_onchain(const ld_node_rln_config_t *c) {
  return c->dynamic || c->static_group_file[0] == '\0';
}

static int build(node_rln_t *r, const ld_node_config_t *cfg, uv_loop_t *loop, char *err,
                 size_t errlen) {
  const ld_node_rln_config_t *c = &cfg->rln;
  if (wants_onchain(c)) {
    if (!cfg->relay)
      return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "rln-relay needs relay");
    r->epoch_sec = c->epoch_sec != 0 ? c->epoch_sec : LD_NODE_RLN_DEFAULT_EPOCH_SEC;
    r->user_message_limit =
        c->user_message_limit != 0 ? c->user_message_limit : LD_NODE_RLN_DEFAULT_USER_MESSAGE_LIMIT;
    return build_onchain(r, loop, c, err, errlen);
  }
  if (c->static_group_file[0] == '\0')
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "rln-relay needs rln-relay-static-group-file");
  if (!cfg->relay)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "rln-relay needs relay");
  r->epoch_sec = c->epoch_sec != 0 ? c->epoch_sec : LD_NODE_RLN_DEFAULT_EPOCH_SEC;
  r->user_message_limit =
      c->user_message_limit != 0 ? c->user_message_limit : LD_NODE_RLN_DEFAULT_USER_MESSAGE_LIMIT;
  int rc = ld_merkle_new(&r->tree, LD_MERKLE_RLN_DEPTH);
  if (rc == 0)
    rc = load_group(r, c->static_group_file, err, errlen);
  if (rc == 0)
    rc = ld_rln_verifier_new(&r->verifier);
  if (rc == 0)
    rc = ld_rln_validator_new(&r->validator, r->verifier, r->epoch_sec);
  if (rc != 0)
    return rc;
  ld_fr_t root;
  ld_merkle_root(r->tree, &root);
  ld_rln_validator_add_root(r->validator, &root);
  return c->cred_path[0] != '\0' ? load_member(r, c, err, errlen) : 0;
}

static void free_rln(node_rln_t *r) {
  if (r == NULL)
    return;
  ld_node_rln_chain_stop(r->chain, NULL, NULL);
  ld_rln_batcher_free(r->batcher);
  ld_rln_prover_free(r->prover);
  ld_rln_validator_free(r->validator);
  ld_rln_verifier_free(r->verifier);
  ld_merkle_free(r->tree);
  explicit_bzero(
      r, sizeof *r); /* the member's secret (all of r: GCC 12 -O2 misjudges the member's size) */
  free(r);
}

int ld_node_rln_mount(ld_node_t *node) {
  if (!node->cfg.rln.enabled)
    return 0;
  node_rln_t *r = calloc(1, sizeof *r);
  if (r == NULL)
    return LD_ERR_NOMEM;
  r->node = node;
  char err[512] = "";
  int rc = build(r, &node->cfg, node->loop, err, sizeof err);
  if (rc == 0) {
    ld_rln_batcher_config_t bc = {
        .loop = node->loop, .validator = r->validator, .done = ld_rln_batch_relay_done};
    rc = ld_rln_batcher_new(&r->batcher, &bc);
  }
  if (rc == 0) {
    int id = ld_relay_add_validator(node->relay, ld_rln_batch_relay_validate, r->batcher);
    rc = id < 0 ? id : 0;
  }
  if (rc != 0) {
    LD_ERROR(TOPIC, "RLN-relay not mounted: %s", err[0] != '\0' ? err : ld_strerror(rc));
    ld_node_note_failure(node, "rln", rc, err[0] != '\0' ? err : ld_strerror(rc));
    free_rln(r);
    return rc;
  }
  node->rln = r;
  if (r->prover != NULL) /* the proving context from the start, prepared once we have a path */
    ld_node_rln_publish_warm(node, r->prover);
  if (r->chain != NULL) {
    LD_INFO(TOPIC, "RLN-relay mounted: on-chain group at %s, epoch %llu s%s",
            node->cfg.rln.eth_contract, (unsigned long long)r->epoch_sec,
            r->prover != NULL ? ", publishing with proofs" : ", validating only");
    return 0;
  }
  LD_INFO(TOPIC, "RLN-relay mounted: static group of %llu members, epoch %llu s%s",
          (unsigned long long)ld_merkle_next_index(r->tree), (unsigned long long)r->epoch_sec,
          r->prover != NULL ? ", publishing with proofs" : ", validating only");
  return 0;
}

void ld_node_rln_stop(ld_node_t *node) {
  if (node->rln == NULL)
    return;
  if (node->rln->batcher != NULL) { /* its batches out on the thread pool come back first */
    node->pending++;
    ld_rln_batcher_close(node->rln->batcher, ld_node_pending_done, node);
  }
  if (node->rln->chain == NULL)
    return;
  node->pending++;
  ld_node_rln_chain_stop(node->rln->chain, ld_node_pending_done, node);
  node->rln->chain = NULL;
}

void ld_node_rln_free(ld_node_t *node) {
  free_rln(node->rln);
  node->rln = NULL;
}

int ld_node_rln_prepare(ld_node_t *node, const ld_waku_message_t *in, ld_waku_message_t *out,
                        uint8_t proof[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED]) {
  return ld_node_rln_attach(node, in, out, proof, NULL, 0);
}

/* nwaku's appendRLNProof texts. */
static int attach_failed(int rc, const node_rln_t *r, uint64_t requested, char *why,
                         size_t why_len) {
  if (why == NULL || why_len == 0)
    return rc;
  if (rc == LD_ERR_STATE)
    snprintf(why, why_len, "could not generate rln-v2 proof: identity credentials are not set");
  else if (rc == LD_ERR_LIMIT)
    snprintf(why, why_len,
             "could not get new message id to generate an rln proof: NonceLimitReached: Nonce "
             "limit reached. Please wait for the next epoch. requested nonce: %llu & nonceLimit: "
             "%llu",
             (unsigned long long)requested, (unsigned long long)r->user_message_limit);
  else if (rc == LD_ERR_INVALID_ARG)
    snprintf(why, why_len,
             "could not get new message id to generate an rln proof: the message's epoch is "
             "past (its timestamp is too old)");
  else
    snprintf(why, why_len, "could not generate rln-v2 proof: %s", ld_strerror(rc));
  return rc;
}

int ld_node_rln_attach(ld_node_t *node, const ld_waku_message_t *in, ld_waku_message_t *out,
                       uint8_t proof[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED], char *why,
                       size_t why_len) {
  *out = *in;
  ld_node_rln_claim_t claim;
  int rc = ld_node_rln_claim(node, out, &claim);
  if (rc != 0)
    return attach_failed(rc, node->rln, claim.message_id, why, why_len);
  if (claim.prover == NULL)
    return 0; /* no RLN-relay */
  size_t len = 0;
  rc = ld_rln_attach_proof(claim.prover, &claim.member, out, claim.epoch_sec, claim.message_id,
                           NULL, proof, &len);
  explicit_bzero(&claim.member, sizeof claim.member);
  if (rc != 0)
    return attach_failed(rc, node->rln, claim.message_id, why, why_len);
  out->proof = proof;
  out->proof_len = len;
  return 0;
}

int ld_node_rln_why(const ld_node_t *node, int rc, uint64_t requested, char *why, size_t why_len) {
  return node->rln != NULL ? attach_failed(rc, node->rln, requested, why, why_len) : rc;
}

ld_rln_validator_t *ld_node_rln_validator(const ld_node_t *node) {
  return node->rln != NULL ? node->rln->validator : NULL;
}

void ld_node_sync_rln_hook(const ld_node_t *node, ld_sync_rln_fn *fn, void **ctx) {
  *fn = node->rln != NULL ? ld_rln_sync_accept : NULL;
  *ctx = node->rln != NULL ? node->rln->validator : NULL;
}

const ld_rln_validator_stats_t *ld_node_rln_stats(const ld_node_t *node) {
  return node->rln != NULL ? ld_rln_validator_stats(node->rln->validator) : NULL;
}

int ld_node_rln_claim(ld_node_t *node, ld_waku_message_t *msg, ld_node_rln_claim_t *out) {
  node_rln_t *r = node->rln;
  out->prover = NULL;
  out->message_id = 0;
  if (r == NULL)
    return 0;
  if (r->prover == NULL || (r->chain != NULL && !r->member_ready))
    return LD_ERR_STATE;
  if (msg->timestamp == 0)
    msg->timestamp = (int64_t)ld_wall_ns();
  int rc =
      ld_rln_nonce_next(&r->nonce, ld_rln_epoch_of(msg->timestamp, r->epoch_sec), &out->message_id);
  if (rc != 0)
    return rc;
  out->prover = r->prover;
  out->member = r->member;
  out->epoch_sec = r->epoch_sec;
  return 0;
}

int ld_node_rln_membership(const ld_node_t *node, const ld_rln_prover_t **prover,
                           ld_rln_member_t *member) {
  const node_rln_t *r = node->rln;
  *prover = NULL;
  if (r == NULL || r->prover == NULL || (r->chain != NULL && !r->member_ready))
    return LD_ERR_STATE;
  *prover = r->prover;
  *member = r->member;
  return 0;
}

int ld_node_rln_group_add(ld_node_t *node, const ld_fr_t *rate_commitment, uint64_t *index) {
  node_rln_t *r = node->rln;
  if (r == NULL || r->tree == NULL)
    return LD_ERR_STATE;
  uint64_t at;
  int rc = ld_merkle_append(r->tree, rate_commitment, &at);
  if (rc != 0)
    return rc;
  ld_fr_t root;
  ld_merkle_root(r->tree, &root);
  ld_rln_validator_add_root(r->validator, &root);
  if (r->prover != NULL) {
    rc = ld_merkle_proof(r->tree, r->member_index, &r->member.merkle);
    if (rc != 0)
      return rc;
    ld_node_rln_publish_warm(node, r->prover);
  }
  LD_INFO(TOPIC, "RLN static group: member %llu joined", (unsigned long long)at);
  if (index != NULL)
    *index = at;
  return 0;
}

/* ---- metrics ----------------------------------------------------------------------------------
 */

static const ld_rln_validator_stats_t *stats_of(void *user_data) {
  const ld_node_t *node = user_data;
  return node->rln != NULL ? ld_rln_validator_stats(node->rln->validator) : NULL;
}

#define RLN_COUNTER_COLLECTOR(fn, field)                                                           \
  static void fn(ld_metrics_emitter_t *e, void *user_data) {                                       \
    const ld_rln_validator_stats_t *s = stats_of(user_data);                                       \
    if (s != NULL)                                                                                 \
      ld_metrics_emit(e, NULL, (double)s->field);                                                  \
  }
RLN_COUNTER_COLLECTOR(collect_messages, messages)
RLN_COUNTER_COLLECTOR(collect_spam, spam)
RLN_COUNTER_COLLECTOR(collect_valid, valid)
RLN_COUNTER_COLLECTOR(collect_verifications, verifications)
RLN_COUNTER_COLLECTOR(collect_batches, batches)

static void collect_invalid(ld_metrics_emitter_t *e, void *user_data) {
  const ld_rln_validator_stats_t *s = stats_of(user_data);
  for (int r = LD_RLN_OK + 1; s != NULL && r < LD_RLN_REASON_COUNT; r++) {
    if (r == LD_RLN_DUPLICATE)
      continue; /* counted as spam */
    const char *type = ld_rln_reason_name((ld_rln_reason_t)r);
    ld_metrics_emit(e, &type, (double)s->by_reason[r]);
  }
}

/* Only the count and the sum are kept: the histogram has the +Inf bucket alone. */
static void collect_verify_time(ld_metrics_emitter_t *e, void *user_data) {
  const ld_rln_validator_stats_t *s = stats_of(user_data);
  if (s != NULL)
    ld_metrics_emit_histogram(e, NULL, NULL, NULL, 0, s->verifications, s->verify_seconds_sum);
}

/* The on-chain group's member count (nextFreeIndex at the last poll), as nwaku's gauge. */
static void collect_memberships(ld_metrics_emitter_t *e, void *user_data) {
  const ld_node_t *node = user_data;
  if (node->rln != NULL && node->rln->chain != NULL)
    ld_metrics_emit(e, NULL, (double)ld_node_rln_chain_members(node->rln->chain));
}

int ld_node_rln_register_metrics(ld_node_t *node, ld_metrics_t *reg) {
  if (node->rln == NULL)
    return 0;
  static const char *const type_label[] = {"type"};
  static const struct {
    const char *name, *help;
    ld_metric_type_t type;
    bool typed;
    ld_metrics_collect_fn fn;
  } families[] = {
      {"waku_rln_messages", "number of messages published on the rln content topic",
       LD_METRIC_COUNTER, false, collect_messages},
      {"waku_rln_spam_messages", "number of spam messages detected", LD_METRIC_COUNTER, false,
       collect_spam},
      {"waku_rln_invalid_messages", "number of invalid messages detected", LD_METRIC_COUNTER, true,
       collect_invalid},
      {"waku_rln_valid_messages", "number of valid messages with their roots tracked",
       LD_METRIC_COUNTER, false, collect_valid},
      {"waku_rln_proof_verification", "number of times the rln proofs are verified",
       LD_METRIC_COUNTER, false, collect_verifications},
      {"waku_rln_proof_verification_duration_seconds", "time taken to verify a proof",
       LD_METRIC_HISTOGRAM, false, collect_verify_time},
      {"waku_rln_number_registered_memberships", "number of registered and active rln memberships",
       LD_METRIC_GAUGE, false, collect_memberships},
      /* ours: relay's zk verifications done together (waku/rln/batch.h); with
       * waku_rln_proof_verification_total, the mean batch size */
      {"waku_rln_proof_verification_batches", "number of batches the rln proofs were verified in",
       LD_METRIC_COUNTER, false, collect_batches},
  };
  for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
    int rc = ld_metrics_add_collector(reg, families[i].name, families[i].type, families[i].help,
                                      families[i].typed ? type_label : NULL,
                                      families[i].typed ? 1 : 0, families[i].fn, node);
    if (rc != 0)
      return rc;
  }
  return 0;
}
