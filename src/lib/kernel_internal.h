/* Shared parts of the kernel tier (liblogosdelivery_kernel.h, c-api.md §3): the per-node kernel
 * state, the operations in flight, the request arguments and the helpers every handler uses.
 * Not for other modules.
 *
 * Kernel state. A started node gets one ld_kernel_t on first use, found again through a
 * provider on the node's broker and torn down by a stop hook of the context (stop_node, a failed
 * start, destroy). It holds:
 *   - the relay topics subscribed through waku_relay_subscribe and the filter subscriptions made
 *     through waku_filter_subscribe: while there are any, messages on them are published as the
 *     `message` event (c-api.md §6) through ld_lib_ctx_emit;
 *   - the shards protected through waku_relay_add_protected_shard (one relay validator);
 *   - the service-peer selector for the lightpush, filter, store and peer-exchange clients;
 *   - the operations still waiting for the network.
 *
 * Operations. A request that waits for the network is an ld_kernel_op_t: it completes its
 * request exactly once (result, error or timeout) and lives on until the callbacks it still
 * expects have come (the switch reports every dial, stream and ping it took, at the latest when
 * it closes). When the node stops, every operation still in flight is completed with
 * "<op> failed: node stopped" and what can be cancelled is cancelled.
 *
 * Everything here runs on the context's worker thread (the node's loop). */
#ifndef LD_LIB_KERNEL_INTERNAL_H
#define LD_LIB_KERNEL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "lib/context.h"
#include "liblogosdelivery_kernel.h"
#include "crypto/crypto.h"
#include "messaging/service_peers.h"
#include "node/node.h"

/* Relay topics subscribed through the kernel at most (the relay's own topic cap). */
#define LD_KERNEL_MAX_RELAY_TOPICS LD_RELAY_MAX_TOPICS
/* Filter subscriptions (pubsub topic, content topic) kept at most. */
#define LD_KERNEL_MAX_FILTER_SUBS 1000
/* Shards protected at run time at most. */
#define LD_KERNEL_MAX_PROTECTED LD_RELAY_MAX_PROTECTED_SHARDS

/* ---- request arguments ------------------------------------------------------------------------
 */

/* Copies of a call's arguments, made on the caller's thread. A NULL string becomes "". */
typedef struct ld_kernel_args {
  char *s[3];
  int64_t n[2];
} ld_kernel_args_t;

/* Copies the strings (any may be NULL) and numbers. NULL when out of memory. Any thread. */
ld_kernel_args_t *ld_kernel_args_new(const char *a, const char *b, const char *c, int64_t n0,
                                     int64_t n1);
void ld_kernel_args_free(void *args);

/* Copies the arguments and dispatches `fn` (ld_lib_dispatch's contract and return values). Out
 * of memory is reported through the callback like a dispatch failure. Any thread. */
int ld_kernel_call(void *ctx, FFICallBack cb, void *user_data, ld_lib_handler_fn fn, const char *a,
                   const char *b, const char *c, int64_t n0, int64_t n1);

/* ---- handler helpers ---------------------------------------------------------------------------
 */

/* The started node, or NULL after completing `req` with "<op> failed: node is not started"
 * (or "… not initialized" without a node). */
ld_node_t *ld_kernel_node(ld_lib_ctx_t *ctx, ld_lib_request_t *req, const char *op);

/* Completes `req` with the `n` items joined by `sep` (each NUL-terminated). */
void ld_kernel_reply_join(ld_lib_request_t *req, const char *const *items, size_t n,
                          const char *sep);

/* Completes `req` with the base58 peer IDs joined by ','. */
void ld_kernel_reply_peers(ld_lib_request_t *req, const ld_peerid_t *ids, size_t n);

/* Completes `req` with a decimal number. */
void ld_kernel_reply_u64(ld_lib_request_t *req, uint64_t v);

/* A timeout argument in milliseconds: 0 for none (negative or zero given). */
uint32_t ld_kernel_timeout_ms(int64_t timeout);

/* ---- kernel state ------------------------------------------------------------------------------
 */

typedef struct ld_kernel ld_kernel_t;

/* The kernel state of the context's started node, created on first use. NULL (after completing
 * `req` with "<op> failed: …") when the node is not started or out of memory. */
ld_kernel_t *ld_kernel_get(ld_lib_ctx_t *ctx, ld_lib_request_t *req, const char *op);

ld_lib_ctx_t *ld_kernel_ctx(ld_kernel_t *k);
ld_node_t *ld_kernel_node_of(ld_kernel_t *k);
ld_service_peers_t *ld_kernel_service_peers(ld_kernel_t *k);

/* Relay topics of the kernel subscriptions. Add: 0, LD_ERR_LIMIT, LD_ERR_NOMEM (already listed
 * is 0). Remove: whether it was listed. */
int ld_kernel_relay_add(ld_kernel_t *k, const char *pubsub_topic);
bool ld_kernel_relay_remove(ld_kernel_t *k, const char *pubsub_topic);

/* Filter subscriptions. Add: 0, LD_ERR_LIMIT, LD_ERR_NOMEM. Remove: silently ignores pairs that
 * are not listed. Clear: all of them. */
int ld_kernel_filter_add(ld_kernel_t *k, const char *pubsub_topic, const char *const *topics,
                         size_t n);
void ld_kernel_filter_remove(ld_kernel_t *k, const char *pubsub_topic, const char *const *topics,
                             size_t n);
void ld_kernel_filter_clear(ld_kernel_t *k);

/* The filter service peer the last successful subscription went to (false when none). */
bool ld_kernel_filter_peer(const ld_kernel_t *k, ld_service_peer_t *out);
void ld_kernel_set_filter_peer(ld_kernel_t *k, const ld_service_peer_t *peer);

/* Protects `shard` of `cluster` with a compressed secp256k1 key (replacing an earlier key of the
 * same shard): messages from peers on /waku/2/rs/<cluster>/<shard> must then be signed by it.
 * 0, LD_ERR_LIMIT, or the relay validator's errors. */
int ld_kernel_protect_shard(ld_kernel_t *k, uint16_t cluster, uint16_t shard,
                            const uint8_t pubkey[LD_SECP256K1_PUBLIC_LEN]);

/* ---- operations --------------------------------------------------------------------------------
 */

typedef struct ld_kernel_op ld_kernel_op_t;

/* Called with a connection to the chosen service peer (err 0) or with NULL and the dial error;
 * see ld_kernel_op_connect. */
typedef void (*ld_kernel_conn_fn)(ld_kernel_op_t *op, ld_conn_t *c, int err,
                                  const ld_service_peer_t *peer);

/* Cancels what the operation still has running (the callbacks cancelled must not come; drop
 * their references with ld_kernel_op_release). Called once, when the operation completes early
 * (timeout, node stop) while it still holds references. */
typedef void (*ld_kernel_cancel_fn)(ld_kernel_op_t *op);

struct ld_kernel_op {
  ld_kernel_op_t *next, *prev; /* in the state's list while the request is open */
  ld_kernel_t *k;              /* NULL once the request is completed */
  ld_lib_request_t *req;       /* NULL once completed */
  const char *name;            /* "<name> failed: node stopped" */
  const char *timeout_text;    /* error text when the timer fires */
  ld_kernel_cancel_fn cancel;
  void (*free_data)(ld_kernel_op_t *op);
  void *data;
  uv_timer_t timer;
  bool timer_on;
  unsigned refs;
  ld_service_dial_t *dial; /* connection attempt of ld_kernel_op_connect */
  ld_kernel_conn_fn on_conn;
  ld_service_peer_t peer; /* the peer ld_kernel_op_connect chose */
};

/* A new operation on `req`, holding one reference for the caller (release it once the
 * asynchronous steps are started) and, when timeout_ms > 0, a timer that completes the request
 * with `timeout_text`. `name` and `timeout_text` are static strings. NULL (after completing
 * `req` with an out-of-memory error) on failure. */
ld_kernel_op_t *ld_kernel_op_new(ld_kernel_t *k, ld_lib_request_t *req, const char *name,
                                 uint32_t timeout_ms, const char *timeout_text);

/* Whether the request is still open (results are wanted). */
bool ld_kernel_op_open(const ld_kernel_op_t *op);

/* Completes the request (no-op when already completed) and stops the timer. */
void ld_kernel_op_ok(ld_kernel_op_t *op, const char *text, size_t len);
void ld_kernel_op_err(ld_kernel_op_t *op, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Drops one reference; the operation is freed (free_data called) with the last one. */
void ld_kernel_op_release(ld_kernel_op_t *op);

/* Gets a connection to a peer chosen for `protocol` (ld_service_peers_pick, or `peer` when not
 * NULL) and calls `cb` with it from the loop, holding one reference meanwhile (the callback must
 * release it). An early completion (timeout, node stop) cancels the attempt (then `cb` is not
 * called). Returns 0, or an LD_ERR_* (LD_ERR_NOT_FOUND: no candidate; LD_ERR_STATE: the request
 * is already completed) with nothing to release. */
int ld_kernel_op_connect(ld_kernel_op_t *op, const char *protocol, const ld_service_peer_t *peer,
                         ld_kernel_conn_fn cb);

#endif
