/* Kernel tier: waku_store_query (c-api.md §3), one store v3 page from `peerAddr`, else from the
 * --storenode or a connected store peer; the reply is rendered by kernel_store_json.c. */
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "lib/kernel_internal.h"
#include "lib/kernel_store_json.h"
#include "node/node_peers.h"
#include "waku/core/codecs.h"
#include "waku/store/client.h"

#define OP "StoreRequest"
#define QUERY_FAILED "StoreRequest failed store query: "

typedef struct store_data {
  ld_store_call_t *call;
} store_data_t;

static void data_free(ld_kernel_op_t *op) {
  free(op->data);
}

static void store_cancel(ld_kernel_op_t *op) {
  store_data_t *d = op->data;
  if (d->call != NULL) {
    ld_store_client_cancel(d->call);
    d->call = NULL;
    ld_kernel_op_release(op);
  }
}

/* nwaku's StoreError texts for a server's refusal. */
static void reply_refusal(ld_kernel_op_t *op, const ld_store_response_t *res) {
  uint32_t s = res->status_code;
  const char *desc = res->status_desc != NULL ? res->status_desc : "";
  if (s == LD_STORE_STATUS_BAD_RESPONSE || s == LD_STORE_STATUS_BAD_REQUEST ||
      s == LD_STORE_STATUS_PEER_DIAL_FAILURE)
    ld_kernel_op_err(op, QUERY_FAILED "storeQuery failed: %s: %s", ld_store_status_name(s), desc);
  else
    ld_kernel_op_err(op, QUERY_FAILED "storeQuery failed: %s", ld_store_status_name(s));
}

static void on_store_done(int err, ld_store_response_t *res, void *user_data) {
  ld_kernel_op_t *op = user_data;
  store_data_t *d = op->data;
  d->call = NULL;
  op->cancel = NULL;
  if (err == LD_ERR_TIMEOUT) {
    ld_kernel_op_err(op, QUERY_FAILED "storeQuery timed out");
  } else if (err < 0) {
    ld_kernel_op_err(op, QUERY_FAILED "storeQuery failed: %s",
                     res->status_desc != NULL ? res->status_desc : ld_strerror(err));
  } else if (res->status_code != LD_STORE_STATUS_OK) {
    reply_refusal(op, res);
  } else {
    char *text = ld_kernel_store_reply_json(res);
    if (text != NULL)
      ld_kernel_op_ok(op, text, strlen(text));
    else
      ld_kernel_op_err(op, QUERY_FAILED "out of memory");
    free(text);
  }
  ld_kernel_op_release(op);
}

/* Whom to ask: `peer_addr`, else the configured store node, else a connected store peer. False
 * after completing `req`. */
static bool pick_target(ld_kernel_t *k, ld_lib_request_t *req, const char *peer_addr,
                        ld_multiaddr_t *addr, ld_store_target_t *to) {
  ld_node_t *node = ld_kernel_node_of(k);
  const ld_node_config_t *cfg = ld_node_config(node);
  memset(to, 0, sizeof *to);
  if (peer_addr[0] != '\0') {
    int rc = ld_multiaddr_parse(addr, peer_addr);
    if (rc != 0) {
      ld_lib_reply_err(req, QUERY_FAILED "storeQuery failed to parse peer addr: %s",
                       ld_strerror(rc));
      return false;
    }
    to->addr = addr;
    return true;
  }
  ld_service_peer_t peer;
  if (cfg->has_service_node[LD_NODE_SERVICE_STORE]) {
    *addr = cfg->service_node[LD_NODE_SERVICE_STORE];
    to->addr = addr;
  } else if (ld_service_peers_pick(ld_kernel_service_peers(k), LD_WAKU_STORE_CODEC, NULL, 0,
                                   ld_now_ms(), &peer, 1) == 1) {
    *addr = peer.addr;
    to->addr = peer.addr.len > 0 ? addr : NULL;
    to->conn = peer.addr.len > 0 ? NULL : ld_node_peer_conn(node, &peer.id);
  }
  if (to->addr == NULL && to->conn == NULL)
    ld_lib_reply_err(req, QUERY_FAILED "no store peer: give peerAddr or configure a storenode");
  return to->addr != NULL || to->conn != NULL;
}

static void send_query(ld_kernel_t *k, ld_lib_request_t *req, const ld_store_target_t *to,
                       const ld_store_query_t *q, int64_t timeout) {
  ld_kernel_op_t *op = ld_kernel_op_new(k, req, OP, 0, NULL);
  store_data_t *d = op != NULL ? calloc(1, sizeof *d) : NULL;
  if (op != NULL && d == NULL)
    ld_kernel_op_err(op, QUERY_FAILED "out of memory");
  if (d == NULL) {
    if (op != NULL)
      ld_kernel_op_release(op);
    return;
  }
  op->data = d;
  op->free_data = data_free;
  uint32_t ms = ld_kernel_timeout_ms(timeout);
  ld_store_client_opts_t opts = {ms > 0 ? ms : UINT32_MAX, 0,
                                 ld_node_config(ld_kernel_node_of(k))->max_msg_size,
                                 LD_STORE_PAGING_CURSOR, 0};
  int rc = ld_store_client_query(ld_node_switch(ld_kernel_node_of(k)), to, q, &opts, on_store_done,
                                 op, &d->call);
  if (rc == 0) {
    op->refs++;
    op->cancel = store_cancel;
  } else {
    ld_store_response_t res;
    ld_store_response_init(&res);
    ld_store_client_error_response(rc, NULL, &res);
    ld_kernel_op_err(op, QUERY_FAILED "storeQuery failed: %s",
                     res.status_desc != NULL ? res.status_desc : ld_strerror(rc));
    ld_store_response_clear(&res);
  }
  ld_kernel_op_release(op);
}

/* nwaku refuses an all-zero cursor before asking anyone. */
static bool zero_cursor(const uint8_t cursor[LD_WAKU_HASH_LEN]) {
  for (size_t i = 0; i < LD_WAKU_HASH_LEN; i++)
    if (cursor[i] != 0)
      return false;
  return true;
}

static void h_store_query(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  ld_kernel_args_t *a = p;
  ld_kernel_t *k = ld_kernel_get(ctx, req, OP);
  if (k == NULL)
    return;
  ld_kernel_store_query_t kq;
  char err[512];
  if (ld_kernel_store_query_parse(a->s[0], strlen(a->s[0]), &kq, err, sizeof err) != 0) {
    ld_lib_reply_err(req, "StoreRequest failed parsing store request: %s", err);
    return;
  }
  ld_multiaddr_t addr;
  ld_store_target_t to;
  if (kq.q.has_cursor && zero_cursor(kq.q.cursor))
    ld_lib_reply_err(req, QUERY_FAILED "storeQuery failed: BAD_REQUEST: invalid cursor");
  else if (pick_target(k, req, a->s[1], &addr, &to))
    send_query(k, req, &to, &kq.q, a->n[0]);
  ld_kernel_store_query_clear(&kq);
}

int waku_store_query(void *ctx, FFICallBack callback, void *userData, const char *jsonQuery,
                     const char *peerAddr, int timeoutMs) {
  return ld_kernel_call(ctx, callback, userData, h_store_query, jsonQuery, peerAddr, NULL,
                        timeoutMs, 0);
}
