/* The on-chain RLN group: polls the membership contract over Ethereum JSON-RPC (node_rln.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "node/node_rln.h"
#include "waku/rln/eth_abi.h"

#define TOPIC "rln"
#define PROOF_WORDS LD_NODE_RLN_CHAIN_DEPTH

typedef enum chain_state {
  CHAIN_STARTING, /* eth_chainId, isInMembershipSet */
  CHAIN_RUNNING,  /* polling */
  CHAIN_FAILED,   /* the endpoint's chain is not ours */
} chain_state_t;

struct node_rln_chain {
  node_rln_chain_config_t cfg;
  char urls[LD_NODE_RLN_MAX_ETH_CLIENTS][LD_NODE_PATH_MAX];
  char contract[64];
  ld_eth_rpc_t *rpc; /* client of urls[current] */
  size_t current;
  uv_timer_t timer;
  chain_state_t state;
  bool busy;    /* a poll is under way */
  bool stopped; /* no more callbacks */
  bool has_root;
  ld_fr_t root;
  uint64_t members;
  uint64_t failures;  /* in a row */
  char last_why[128]; /* the reason of the last failure logged */
  unsigned open;      /* the timer and the client, until closed */
  void (*closed)(void *user);
  void *closed_user;
};

typedef void (*step_fn)(node_rln_chain_t *ch, const uint8_t *data, size_t len);

static void poll_now(node_rln_chain_t *ch);
static void start_calls(node_rln_chain_t *ch);

/* ---- calls ---------------------------------------------------------------------------------- */

static void fail(node_rln_chain_t *ch, const char *what, const char *why) {
  ch->busy = false;
  /* each new reason, and a repeated one once a minute */
  if (strncmp(ch->last_why, why, sizeof ch->last_why - 1) != 0 || ch->failures % 12 == 0)
    LD_WARN(TOPIC, "on-chain group: %s via %s failed: %s (%" PRIu64 " failures in a row)", what,
            ch->urls[ch->current], why, ch->failures + 1);
  snprintf(ch->last_why, sizeof ch->last_why, "%s", why);
  ch->failures++;
  if (ch->cfg.n_urls > 1) { /* the next endpoint for the next poll */
    ld_eth_rpc_t *old = ch->rpc;
    ch->current = (ch->current + 1) % ch->cfg.n_urls;
    ch->rpc = NULL;
    if (ld_eth_rpc_new(&ch->rpc, ch->cfg.loop, ch->urls[ch->current], ch->cfg.timeout_ms,
                       LD_ETH_RPC_DEFAULT_MAX_RESPONSE) != 0)
      ch->rpc = NULL;
    else
      ch->open++;
    ld_eth_rpc_free(old, NULL, NULL);
    ch->open--;
  }
}

typedef struct pending_call {
  node_rln_chain_t *ch;
  const char *what;
  step_fn next;
} pending_call_t;

static void on_call(void *user, int status, const json_t *result, const char *why) {
  pending_call_t *p = user;
  node_rln_chain_t *ch = p->ch;
  const char *what = p->what;
  step_fn next = p->next;
  free(p);
  if (ch->stopped)
    return;
  if (status != 0) {
    fail(ch, what, why);
    return;
  }
  uint8_t data[PROOF_WORDS * LD_ETH_WORD];
  size_t len = 0;
  const char *text = json_string_value(result);
  int rc = text != NULL ? ld_eth_hex_data(text, data, sizeof data, &len) : LD_ERR_MALFORMED;
  if (rc != 0) {
    fail(ch, what, "the result is not hex data of the expected size");
    return;
  }
  next(ch, data, len);
}

/* eth_call of `signature` with `words` on the contract at "latest"; `next` gets the return data. */
static void eth_call(node_rln_chain_t *ch, const char *signature, const uint8_t (*words)[32],
                     size_t n, step_fn next) {
  char data[LD_ETH_CALL_HEX_MAX];
  pending_call_t *p = malloc(sizeof *p);
  json_t *params = NULL;
  if (p != NULL && ld_eth_call_data(signature, words, n, data) == 0)
    params = json_pack("[{s:s,s:s},s]", "to", ch->contract, "data", data, "latest");
  int rc = params == NULL || ch->rpc == NULL ? LD_ERR_NOMEM : 0;
  if (rc == 0) {
    *p = (pending_call_t){ch, signature, next};
    rc = ld_eth_rpc_call(ch->rpc, "eth_call", params, on_call, p);
  } else {
    json_decref(params);
  }
  if (rc != 0) {
    free(p);
    fail(ch, signature, ld_strerror(rc));
  }
}

/* ---- the poll: root(), then getMerkleProof(index) and nextFreeIndex() ------------------------ */

static void on_next_free_index(node_rln_chain_t *ch, const uint8_t *data, size_t len) {
  uint64_t n = 0;
  if (ld_eth_abi_u64(data, len, 0, &n) != 0) {
    fail(ch, "nextFreeIndex()", "not a uint64 word");
    return;
  }
  if (n != ch->members)
    LD_INFO(TOPIC, "on-chain group: %" PRIu64 " members", n);
  ch->members = n;
  ch->busy = false;
}

static void count_members(node_rln_chain_t *ch) {
  eth_call(ch, "nextFreeIndex()", NULL, 0, on_next_free_index);
}

static void on_merkle_proof(node_rln_chain_t *ch, const uint8_t *data, size_t len) {
  ld_merkle_proof_t proof;
  memset(&proof, 0, sizeof proof);
  proof.depth = PROOF_WORDS;
  for (size_t i = 0; i < PROOF_WORDS; i++) {
    if (ld_eth_abi_field(data, len, i, &proof.path[i]) != 0) {
      fail(ch, "getMerkleProof(uint40)", "not 20 canonical field elements");
      return;
    }
    proof.index_bits[i] = (uint8_t)((ch->cfg.member_index >> i) & 1);
  }
  ch->cfg.on_proof(ch->cfg.user, &ch->root, &proof);
  count_members(ch);
}

static void on_root(node_rln_chain_t *ch, const uint8_t *data, size_t len) {
  ld_fr_t root;
  if (ld_eth_abi_field(data, len, 0, &root) != 0) {
    fail(ch, "root()", "not a canonical field element");
    return;
  }
  if (ch->failures != 0 && ch->has_root)
    LD_INFO(TOPIC, "on-chain group: %s answers again", ch->urls[ch->current]);
  ch->failures = 0;
  ch->last_why[0] = '\0';
  if (ch->has_root && ld_fr_equal(&root, &ch->root)) {
    ch->busy = false;
    return;
  }
  ch->root = root;
  ch->has_root = true;
  ch->cfg.on_root(ch->cfg.user, &root);
  if (!ch->cfg.member) {
    count_members(ch);
    return;
  }
  uint8_t index[1][32];
  ld_eth_word_from_u64(index[0], ch->cfg.member_index);
  eth_call(ch, "getMerkleProof(uint40)", index, 1, on_merkle_proof);
}

static void poll_now(node_rln_chain_t *ch) {
  if (ch->busy || ch->state != CHAIN_RUNNING || ch->stopped)
    return;
  ch->busy = true;
  eth_call(ch, "root()", NULL, 0, on_root);
}

static void on_timer(uv_timer_t *t) {
  node_rln_chain_t *ch = t->data;
  if (ch->state == CHAIN_STARTING && !ch->busy) {
    start_calls(ch);
    return;
  }
  poll_now(ch);
}

/* ---- start: eth_chainId, isInMembershipSet ------------------------------------------------ */

static void on_membership(node_rln_chain_t *ch, const uint8_t *data, size_t len) {
  int member = 0;
  if (ld_eth_abi_bool(data, len, 0, &member) != 0) {
    fail(ch, "isInMembershipSet(uint256)", "not a bool word");
    return;
  }
  if (!member)
    LD_WARN(TOPIC, "on-chain group: our identity commitment is not in the contract's membership "
                   "set (yet): our proofs will not verify until it is");
  ch->state = CHAIN_RUNNING;
  ch->busy = false;
  poll_now(ch);
}

static void check_membership(node_rln_chain_t *ch) {
  uint8_t word[1][32];
  ld_eth_word_from_field(word[0], &ch->cfg.id_commitment);
  eth_call(ch, "isInMembershipSet(uint256)", word, 1, on_membership);
}

static void on_chain_id(void *user, int status, const json_t *result, const char *why) {
  node_rln_chain_t *ch = user;
  if (ch->stopped)
    return;
  uint64_t id = 0;
  if (status != 0 || ld_eth_quantity(json_string_value(result), &id) != 0) {
    fail(ch, "eth_chainId", status != 0 ? why : "the result is not a quantity");
    return;
  }
  if (ch->cfg.chain_id != 0 && id != ch->cfg.chain_id) {
    LD_ERROR(TOPIC,
             "on-chain group stopped: rln-relay-chain-id is %" PRIu64
             " but %s serves chain %" PRIu64,
             ch->cfg.chain_id, ch->urls[ch->current], id);
    ch->state = CHAIN_FAILED;
    ch->busy = false;
    return;
  }
  LD_INFO(TOPIC, "on-chain group: chain %" PRIu64 ", contract %s, via %s", id, ch->contract,
          ch->urls[ch->current]);
  ch->cfg.chain_id = id;
  if (ch->cfg.member) {
    check_membership(ch);
    return;
  }
  ch->state = CHAIN_RUNNING;
  ch->busy = false;
  poll_now(ch);
}

static void start_calls(node_rln_chain_t *ch) {
  ch->busy = true;
  int rc = ch->rpc == NULL ? LD_ERR_IO
                           : ld_eth_rpc_call(ch->rpc, "eth_chainId", json_array(), on_chain_id, ch);
  if (rc != 0)
    fail(ch, "eth_chainId", ld_strerror(rc));
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

static void release(void *user) {
  node_rln_chain_t *ch = user;
  if (--ch->open != 0)
    return;
  void (*closed)(void *) = ch->closed;
  void *closed_user = ch->closed_user;
  free(ch);
  if (closed != NULL)
    closed(closed_user);
}

static void on_timer_closed(uv_handle_t *h) {
  release(h->data);
}

int ld_node_rln_chain_start(node_rln_chain_t **out, const node_rln_chain_config_t *cfg) {
  if (cfg->n_urls == 0 || cfg->n_urls > LD_NODE_RLN_MAX_ETH_CLIENTS)
    return LD_ERR_INVALID_ARG;
  node_rln_chain_t *ch = calloc(1, sizeof *ch);
  if (ch == NULL)
    return LD_ERR_NOMEM;
  ch->cfg = *cfg;
  if (ch->cfg.poll_ms == 0)
    ch->cfg.poll_ms = LD_NODE_RLN_CHAIN_POLL_MS;
  if (ch->cfg.timeout_ms == 0)
    ch->cfg.timeout_ms = LD_ETH_RPC_DEFAULT_TIMEOUT_MS;
  for (size_t i = 0; i < cfg->n_urls; i++)
    snprintf(ch->urls[i], sizeof ch->urls[i], "%s", cfg->urls[i]);
  snprintf(ch->contract, sizeof ch->contract, "%s", cfg->contract);
  int rc = ld_eth_rpc_new(&ch->rpc, cfg->loop, ch->urls[0], ch->cfg.timeout_ms,
                          LD_ETH_RPC_DEFAULT_MAX_RESPONSE);
  if (rc != 0) {
    free(ch);
    return rc;
  }
  ch->open = 2;
  uv_timer_init(cfg->loop, &ch->timer);
  ch->timer.data = ch;
  uv_timer_start(&ch->timer, on_timer, ch->cfg.poll_ms, ch->cfg.poll_ms);
  start_calls(ch);
  *out = ch;
  return 0;
}

uint64_t ld_node_rln_chain_members(const node_rln_chain_t *ch) {
  return ch->members;
}

uint64_t ld_node_rln_chain_failures(const node_rln_chain_t *ch) {
  return ch->failures;
}

void ld_node_rln_chain_stop(node_rln_chain_t *ch, void (*closed)(void *user), void *user) {
  if (ch == NULL || ch->stopped)
    return;
  ch->stopped = true;
  ch->closed = closed;
  ch->closed_user = user;
  uv_timer_stop(&ch->timer);
  uv_close((uv_handle_t *)&ch->timer, on_timer_closed);
  if (ch->rpc != NULL) /* counted in ch->open */
    ld_eth_rpc_free(ch->rpc, release, ch);
  ch->rpc = NULL;
}
