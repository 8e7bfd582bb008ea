/* generateRlnKeystore --execute: the membership's registration on chain (rln_register.h). The
 * JSON-RPC client is asynchronous on a libuv loop; this command makes one call at a time and runs
 * a loop of its own until each is answered. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/hex.h"
#include "crypto/crypto.h"
#include "logosdelivery/app.h"
#include "logosdelivery/rln_register.h"
#include "waku/rln/eth_abi.h"
#include "waku/rln/eth_register.h"
#include "waku/rln/eth_rpc.h"
#include "waku/rln/eth_tx.h"

#define POLL_MS 500
#define WHY_MAX 320

typedef struct reg {
  const ld_rln_register_args_t *args;
  uv_loop_t loop;
  ld_eth_rpc_t *rpc;
  uint8_t secret[LD_ETH_SECRET_LEN];
  uint8_t from[LD_ETH_ADDRESS_LEN];
  uint8_t contract[LD_ETH_ADDRESS_LEN];
  char from_hex[43];
  char *err;
  size_t errlen;
} reg_t;

/* ---- one call at a time ---------------------------------------------------------------------- */

typedef struct answer {
  bool done;
  int status;
  json_t *result;
  char why[WHY_MAX];
} answer_t;

static void on_answer(void *user, int status, const json_t *result, const char *why) {
  answer_t *a = user;
  a->done = true;
  a->status = status;
  if (status == 0)
    a->result = json_deep_copy(result);
  else
    snprintf(a->why, sizeof a->why, "%s", why != NULL ? why : ld_strerror(status));
  if (status == 0 && a->result == NULL) {
    a->status = LD_ERR_NOMEM;
    snprintf(a->why, sizeof a->why, "out of memory");
  }
}

/* Calls `method` (params stolen) and waits for its answer: 0 and *result (the caller
 * json_decrefs), or the call's error with its reason in `why`. */
static int call(reg_t *r, const char *method, json_t *params, json_t **result, char *why,
                size_t whylen) {
  answer_t a = {0};
  *result = NULL;
  int rc = params == NULL ? LD_ERR_NOMEM : ld_eth_rpc_call(r->rpc, method, params, on_answer, &a);
  if (rc != 0) {
    snprintf(why, whylen, "%s", ld_strerror(rc));
    return rc;
  }
  while (!a.done)
    uv_run(&r->loop, UV_RUN_ONCE);
  if (a.status != 0) {
    snprintf(why, whylen, "%s", a.why);
    return a.status;
  }
  *result = a.result;
  return 0;
}

/* The reason of a failed step: "<method> at <url> failed: <why>; <next>". */
static int fail_call(reg_t *r, int code, const char *method, const char *why, const char *next) {
  snprintf(r->err, r->errlen, "%s at %s failed: %s; %s", method, r->args->url, why, next);
  return code;
}

#define CHECK_ENDPOINT "check --rln-relay-eth-client-address and that the node there is synced"

/* A call whose result is a quantity. */
static int call_quantity(reg_t *r, const char *method, json_t *params, uint64_t *out,
                         const char *next) {
  char why[WHY_MAX];
  json_t *res = NULL;
  int rc = call(r, method, params, &res, why, sizeof why);
  if (rc != 0)
    return fail_call(r, LD_CANARY_EXIT_OTHER, method, why, next);
  const char *text = json_string_value(res);
  rc = ld_eth_quantity(text, out);
  if (rc != 0) {
    snprintf(why, sizeof why, "its answer %.80s is not a quantity (%s)",
             text != NULL ? text : "(not a string)", ld_strerror(rc));
    json_decref(res);
    return fail_call(r, LD_CANARY_EXIT_OTHER, method, why, CHECK_ENDPOINT);
  }
  json_decref(res);
  return 0;
}

/* {"from": …, "to": contract, "data": data} */
static json_t *call_object(reg_t *r, const char *data) {
  return json_pack("{s:s, s:s, s:s}", "from", r->from_hex, "to", r->args->contract, "data", data);
}

/* ---- the steps ---------------------------------------------------------------------------------
 */

static int check_chain(reg_t *r, ld_rln_register_result_t *out) {
  int rc = call_quantity(r, "eth_chainId", json_array(), &out->chain_id, CHECK_ENDPOINT);
  if (rc != 0)
    return rc;
  if (r->args->chain_id != 0 && r->args->chain_id != out->chain_id) {
    snprintf(r->err, r->errlen,
             "the endpoint %s is on chain %" PRIu64 ", not --rln-relay-chain-id=%" PRIu64
             "; give the contract's chain id, or an endpoint of that chain",
             r->args->url, out->chain_id, r->args->chain_id);
    return LD_EXIT_USAGE;
  }
  return 0;
}

/* maxMembershipRateLimit(), which also tells whether a contract answers at that address. */
static int check_limit(reg_t *r) {
  char data[LD_ETH_CALL_HEX_MAX], why[WHY_MAX];
  (void)ld_eth_call_data("maxMembershipRateLimit()", NULL, 0, data);
  json_t *res = NULL;
  int rc = call(r, "eth_call", json_pack("[o, s]", call_object(r, data), "latest"), &res, why,
                sizeof why);
  if (rc != 0)
    return fail_call(r, LD_CANARY_EXIT_OTHER, "eth_call maxMembershipRateLimit()", why,
                     "check --rln-relay-eth-contract-address");
  uint8_t word[LD_ETH_WORD];
  size_t len = 0;
  uint64_t max = 0;
  const char *text = json_string_value(res);
  rc = ld_eth_hex_data(text, word, sizeof word, &len);
  if (rc == 0)
    rc = ld_eth_abi_u64(word, len, 0, &max);
  if (rc != 0) {
    snprintf(r->err, r->errlen,
             "eth_call maxMembershipRateLimit() of %s answered %.80s: no RLN membership contract "
             "there; check --rln-relay-eth-contract-address and --rln-relay-eth-client-address",
             r->args->contract, text != NULL ? text : "(not a string)");
    json_decref(res);
    return LD_CANARY_EXIT_OTHER;
  }
  json_decref(res);
  if (r->args->limit > max) {
    snprintf(r->err, r->errlen,
             "--rln-relay-user-message-limit=%" PRIu32
             " is above the contract's maxMembershipRateLimit %" PRIu64 "; choose at most %" PRIu64,
             r->args->limit, max, max);
    return LD_EXIT_USAGE;
  }
  return 0;
}

/* The fees: EIP-1559 when the latest block has a base fee, else legacy at twice the gas price. */
static int choose_fees(reg_t *r, ld_eth_tx_t *tx) {
  char why[WHY_MAX];
  json_t *block = NULL;
  int rc =
      call(r, "eth_getBlockByNumber", json_pack("[s, b]", "latest", 0), &block, why, sizeof why);
  if (rc != 0)
    return fail_call(r, LD_CANARY_EXIT_OTHER, "eth_getBlockByNumber", why, CHECK_ENDPOINT);
  const char *base_text = json_string_value(json_object_get(block, "baseFeePerGas"));
  uint64_t base = 0, price = 0;
  rc = base_text != NULL ? ld_eth_quantity(base_text, &base) : 0;
  json_decref(block);
  if (rc != 0)
    return fail_call(r, LD_CANARY_EXIT_OTHER, "eth_getBlockByNumber",
                     "its baseFeePerGas is not a quantity", CHECK_ENDPOINT);
  if (base_text == NULL) { /* a chain before London: nwaku's legacy transaction */
    rc = call_quantity(r, "eth_gasPrice", json_array(), &price, CHECK_ENDPOINT);
    if (rc != 0)
      return rc;
    tx->type = LD_ETH_TX_LEGACY;
    tx->gas_price = price > UINT64_MAX / 2 ? UINT64_MAX : price * 2;
    return 0;
  }
  uint64_t tip = 0;
  rc = call_quantity(r, "eth_maxPriorityFeePerGas", json_array(), &tip, CHECK_ENDPOINT);
  if (rc != 0)
    return rc;
  tx->type = LD_ETH_TX_EIP1559;
  tx->max_priority_fee_per_gas = tip;
  tx->max_fee_per_gas = base > (UINT64_MAX - tip) / 2 ? UINT64_MAX : base * 2 + tip;
  return 0;
}

static int estimate_gas(reg_t *r, const char *data, uint64_t *gas) {
  uint64_t estimate = 0;
  char why[WHY_MAX];
  json_t *res = NULL;
  int rc =
      call(r, "eth_estimateGas", json_pack("[o]", call_object(r, data)), &res, why, sizeof why);
  if (rc != 0) {
    snprintf(r->err, r->errlen,
             "eth_estimateGas of register(idCommitment, %" PRIu32 ", []) from %s at %s failed: %s; "
             "the contract refuses this registration (or the account cannot pay for it)",
             r->args->limit, r->from_hex, r->args->url, why);
    return LD_CANARY_EXIT_OTHER;
  }
  rc = ld_eth_quantity(json_string_value(res), &estimate);
  json_decref(res);
  if (rc != 0 || estimate == 0 || estimate > UINT64_MAX / 2)
    return fail_call(r, LD_CANARY_EXIT_OTHER, "eth_estimateGas", "its answer is not a gas amount",
                     CHECK_ENDPOINT);
  *gas = estimate + estimate / 4;
  return 0;
}

static int send_raw(reg_t *r, const ld_buf_t *raw, const uint8_t hash[LD_ETH_TX_HASH_LEN],
                    char hash_hex[67]) {
  char why[WHY_MAX];
  char *hex = malloc(2 * raw->len + 3);
  if (hex == NULL)
    return fail_call(r, LD_CANARY_EXIT_OTHER, "eth_sendRawTransaction", "out of memory",
                     "try again");
  memcpy(hex, "0x", 2);
  ld_hex_encode(raw->data, raw->len, hex + 2);
  hex[2 * raw->len + 2] = '\0';
  json_t *res = NULL;
  int rc = call(r, "eth_sendRawTransaction", json_pack("[s]", hex), &res, why, sizeof why);
  free(hex);
  memcpy(hash_hex, "0x", 2);
  ld_hex_encode(hash, LD_ETH_TX_HASH_LEN, hash_hex + 2);
  hash_hex[66] = '\0';
  if (rc != 0)
    return fail_call(r, LD_CANARY_EXIT_OTHER, "eth_sendRawTransaction", why,
                     "nothing was registered; check the account's balance and nonce, then run "
                     "again");
  uint8_t got[LD_ETH_TX_HASH_LEN];
  size_t len = 0;
  const char *text = json_string_value(res);
  if (ld_eth_hex_data(text, got, sizeof got, &len) != 0 || len != sizeof got ||
      memcmp(got, hash, sizeof got) != 0) {
    snprintf(r->err, r->errlen,
             "eth_sendRawTransaction at %s answered %.80s, not the transaction's hash %s; "
             "use another endpoint (look the transaction up before running again)",
             r->args->url, text != NULL ? text : "(not a string)", hash_hex);
    json_decref(res);
    return LD_CANARY_EXIT_OTHER;
  }
  json_decref(res);
  return 0;
}

static void on_slept(uv_timer_t *t) {
  (void)t; /* a one-shot timer: inactive once it fired */
}

static void sleep_ms(reg_t *r, uint64_t ms) {
  uv_timer_t t;
  uv_timer_init(&r->loop, &t);
  uv_timer_start(&t, on_slept, ms, 0);
  while (uv_is_active((uv_handle_t *)&t))
    uv_run(&r->loop, UV_RUN_ONCE);
  uv_close((uv_handle_t *)&t, NULL);
  uv_run(&r->loop, UV_RUN_NOWAIT);
}

/* Polls for the receipt until it comes or the wait is over; transport errors are retried. */
static int await_receipt(reg_t *r, const uint8_t hash[LD_ETH_TX_HASH_LEN], const char *hash_hex,
                         const uint8_t id_commitment[LD_ETH_WORD], ld_rln_register_result_t *out) {
  uint64_t deadline = uv_now(&r->loop) + r->args->receipt_wait_ms;
  char last[WHY_MAX] = "not mined yet";
  for (;;) {
    json_t *res = NULL;
    char why[WHY_MAX];
    if (call(r, "eth_getTransactionReceipt", json_pack("[s]", hash_hex), &res, why, sizeof why) !=
        0) {
      snprintf(last, sizeof last, "%s", why);
    } else if (!json_is_null(res)) {
      ld_eth_registration_t reg;
      char reason[WHY_MAX];
      int rc = ld_eth_registration_from_receipt(res, hash, r->contract, id_commitment, &reg, reason,
                                                sizeof reason);
      json_decref(res);
      if (rc != 0) {
        snprintf(r->err, r->errlen, "transaction %s: %s; nothing was written%s", hash_hex, reason,
                 rc == LD_ERR_REFUSED ? " (the contract refused the registration)"
                                      : ", look the transaction up on the chain");
        return LD_CANARY_EXIT_OTHER;
      }
      out->index = reg.index;
      out->block_number = reg.block_number;
      return 0;
    }
    json_decref(res);
    if (uv_now(&r->loop) >= deadline)
      break;
    sleep_ms(r, POLL_MS);
    uv_update_time(&r->loop);
  }
  snprintf(r->err, r->errlen,
           "no receipt of transaction %s from %s within %" PRIu32 " ms (last: %s); nothing was "
           "written: look the transaction up, it may still be mined",
           hash_hex, r->args->url, r->args->receipt_wait_ms, last);
  return LD_CANARY_EXIT_TIMEOUT;
}

/* ---- inputs --------------------------------------------------------------------------------- */

static int read_inputs(reg_t *r) {
  const char *key = r->args->private_key;
  if (key[0] == '0' && (key[1] == 'x' || key[1] == 'X'))
    key += 2;
  size_t len = 0;
  if (strlen(key) != 2 * LD_ETH_SECRET_LEN ||
      ld_hex_decode(key, strlen(key), r->secret, sizeof r->secret, &len) != 0 ||
      len != LD_ETH_SECRET_LEN || ld_eth_address(r->secret, r->from) != 0) {
    snprintf(r->err, r->errlen,
             "--rln-relay-eth-private-key (%zu characters) is not a secp256k1 private key; give "
             "the account's key as 64 hex digits",
             strlen(r->args->private_key));
    return LD_EXIT_USAGE;
  }
  if (ld_eth_hex_data(r->args->contract, r->contract, sizeof r->contract, &len) != 0 ||
      len != sizeof r->contract) {
    snprintf(r->err, r->errlen,
             "--rln-relay-eth-contract-address=%.80s is not an address; give the membership "
             "contract as 0x and 40 hex digits",
             r->args->contract);
    return LD_EXIT_USAGE;
  }
  memcpy(r->from_hex, "0x", 2);
  ld_hex_encode(r->from, sizeof r->from, r->from_hex + 2);
  r->from_hex[42] = '\0';
  return 0;
}

static int sign(reg_t *r, ld_eth_tx_t *tx, ld_buf_t *raw, uint8_t hash[LD_ETH_TX_HASH_LEN]) {
  int rc = ld_eth_tx_sign(tx, r->secret, raw, hash);
  if (rc != 0)
    snprintf(r->err, r->errlen, "signing the transaction failed: %s; check the chain id %" PRIu64,
             ld_strerror(rc), tx->chain_id);
  return rc != 0 ? LD_CANARY_EXIT_OTHER : 0;
}

static int run(reg_t *r, const uint8_t id_commitment[32], ld_rln_register_result_t *out) {
  int rc = check_chain(r, out);
  if (rc == 0)
    rc = check_limit(r);
  ld_eth_tx_t tx = {.chain_id = out->chain_id, .has_to = true};
  memcpy(tx.to, r->contract, sizeof tx.to);
  if (rc == 0)
    rc = call_quantity(r, "eth_getTransactionCount", json_pack("[s, s]", r->from_hex, "pending"),
                       &tx.nonce, CHECK_ENDPOINT);
  if (rc == 0)
    rc = choose_fees(r, &tx);
  char data[LD_ETH_CALL_HEX_MAX];
  ld_eth_register_call_data(id_commitment, r->args->limit, data);
  if (rc == 0)
    rc = estimate_gas(r, data, &tx.gas_limit);
  out->gas_limit = tx.gas_limit;
  if (rc != 0 || !r->args->execute)
    return rc;
  uint8_t bytes[LD_ETH_SELECTOR + 4 * LD_ETH_WORD], hash[LD_ETH_TX_HASH_LEN];
  size_t len = 0;
  (void)ld_eth_hex_data(data, bytes, sizeof bytes, &len);
  tx.data = bytes;
  tx.data_len = len;
  ld_buf_t raw;
  ld_buf_init(&raw);
  rc = sign(r, &tx, &raw, hash);
  if (rc == 0)
    rc = send_raw(r, &raw, hash, out->tx_hash);
  ld_buf_clear(&raw);
  if (rc == 0)
    rc = await_receipt(r, hash, out->tx_hash, id_commitment, out);
  return rc;
}

static void on_rpc_closed(void *user) {
  *(bool *)user = true;
}

int ld_app_rln_register(const ld_rln_register_args_t *args, const uint8_t id_commitment[32],
                        ld_rln_register_result_t *out, char *err, size_t errlen) {
  reg_t r = {.args = args, .err = err, .errlen = errlen};
  memset(out, 0, sizeof *out);
  int rc = read_inputs(&r);
  if (rc != 0) {
    explicit_bzero(r.secret, sizeof r.secret);
    return rc;
  }
  snprintf(out->from, sizeof out->from, "%s", r.from_hex);
  uv_loop_init(&r.loop);
  rc = ld_eth_rpc_new(&r.rpc, &r.loop, args->url, args->call_timeout_ms,
                      LD_ETH_RPC_DEFAULT_MAX_RESPONSE);
  if (rc != 0) {
    snprintf(err, errlen, "no JSON-RPC client for %s: %s; install libcurl (libcurl.so.4)",
             args->url, ld_strerror(rc));
    rc = LD_CANARY_EXIT_OTHER;
  } else {
    rc = run(&r, id_commitment, out);
    bool closed = false;
    ld_eth_rpc_free(r.rpc, on_rpc_closed, &closed);
    while (!closed)
      uv_run(&r.loop, UV_RUN_ONCE);
  }
  uv_run(&r.loop, UV_RUN_DEFAULT);
  uv_loop_close(&r.loop);
  explicit_bzero(r.secret, sizeof r.secret);
  return rc;
}
