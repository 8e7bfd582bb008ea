/* An Ethereum JSON-RPC client over HTTP(S) on a libuv loop: libcurl's multi interface driven by
 * the loop's poll and timer handles, libcurl loaded at run time (libcurl.so.4) the first time a
 * client is made, so that a node without the on-chain RLN group never maps it.
 *
 * Every call is bounded: a deadline (connect and whole transfer), a cap on the answer's size
 * (beyond it the transfer is cut: LD_ERR_TOO_LARGE), at most LD_ETH_RPC_MAX_PENDING calls in
 * flight (LD_ERR_LIMIT). An endpoint that stalls, lies or answers garbage costs at most that.
 *
 * Loop thread only. */
#ifndef LD_WAKU_RLN_ETH_RPC_H
#define LD_WAKU_RLN_ETH_RPC_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#define LD_ETH_RPC_MAX_PENDING 16
#define LD_ETH_RPC_DEFAULT_TIMEOUT_MS 10000
#define LD_ETH_RPC_DEFAULT_MAX_RESPONSE (64u * 1024u)

typedef struct ld_eth_rpc ld_eth_rpc_t;

/* The outcome of one call: status 0 and the "result" value (borrowed for the callback), or an
 * error and its reason: LD_ERR_TIMEOUT, LD_ERR_TOO_LARGE, LD_ERR_IO (transport; HTTP status not
 * 2xx), LD_ERR_MALFORMED (not a JSON-RPC answer), LD_ERR_PROTOCOL (a JSON-RPC error object). */
typedef void (*ld_eth_rpc_cb)(void *user, int status, const json_t *result, const char *why);

/* A client of `url` (http:// or https://). LD_ERR_IO when libcurl cannot be loaded,
 * LD_ERR_NOMEM. */
int ld_eth_rpc_new(ld_eth_rpc_t **out, uv_loop_t *loop, const char *url, uint32_t timeout_ms,
                   size_t max_response);

/* Calls `method` with `params` (a JSON array, stolen). On success `cb` is called once, later, on
 * the loop; on failure (LD_ERR_LIMIT, LD_ERR_NOMEM, LD_ERR_STATE after free began) never. */
int ld_eth_rpc_call(ld_eth_rpc_t *rpc, const char *method, json_t *params, ld_eth_rpc_cb cb,
                    void *user);

/* Drops the calls in flight (their callbacks are not called) and releases the client once its
 * handles have closed (the loop must run on); then calls `closed` (may be NULL). NULL is a
 * no-op (`closed` is not called). */
void ld_eth_rpc_free(ld_eth_rpc_t *rpc, void (*closed)(void *user), void *user);

#endif
