/* Kernel tier: the node's ENR, peer ID and metrics, and the discovery calls (c-api.md §3). DNS
 * discovery (EIP-1459) and discv5 are not part of this build: those calls are dispatched and
 * answered with an error that says so. */
#include <stdlib.h>

#include "base/buf.h"
#include "base/error.h"
#include "lib/kernel_internal.h"
#include "waku/enr/enr.h"

#define NO_DNS_DISCOVERY "DNS discovery (EIP-1459) is not available in this build"
#define NO_DISCV5 "discv5 is not available in this build"

/* ---- node information --------------------------------------------------------------------------
 */

static void h_my_enr(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  (void)p;
  if (ld_kernel_node(ctx, req, "myEnr") == NULL)
    return;
  char text[LD_ENR_TEXT_MAX];
  int rc = ld_lib_ctx_enr_text(ctx, text, sizeof text);
  if (rc != 0)
    ld_lib_reply_err(req, "myEnr: %s",
                     rc == LD_ERR_NOT_FOUND ? "the node has no ENR" : ld_strerror(rc));
  else
    ld_lib_reply_text(req, text);
}

int waku_get_my_enr(void *ctx, FFICallBack callback, void *userData) {
  return ld_kernel_call(ctx, callback, userData, h_my_enr, NULL, NULL, NULL, 0, 0);
}

static void h_my_peerid(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  (void)p;
  ld_node_t *node = ld_lib_ctx_node(ctx);
  char text[LD_PEERID_TEXT_MAX];
  if (node == NULL)
    ld_lib_reply_err(req, "myPeerId failed: node is not initialized");
  else if (ld_peerid_to_text(ld_node_peer_id(node), text, sizeof text) < 0)
    ld_lib_reply_err(req, "myPeerId: invalid peer ID");
  else
    ld_lib_reply_text(req, text);
}

int waku_get_my_peerid(void *ctx, FFICallBack callback, void *userData) {
  return ld_kernel_call(ctx, callback, userData, h_my_peerid, NULL, NULL, NULL, 0, 0);
}

static void h_metrics(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  (void)p;
  ld_buf_t out;
  ld_buf_init(&out);
  int rc = ld_lib_ctx_metrics_text(ctx, &out);
  if (rc == LD_ERR_STATE)
    ld_lib_reply_err(req, "metrics failed: node is not initialized");
  else if (rc != 0)
    ld_lib_reply_err(req, "metrics: %s", ld_strerror(rc));
  else
    ld_lib_reply_ok(req, (const char *)out.data, out.len);
  ld_buf_clear(&out);
}

int waku_get_metrics(void *ctx, FFICallBack callback, void *userData) {
  return ld_kernel_call(ctx, callback, userData, h_metrics, NULL, NULL, NULL, 0, 0);
}

/* ---- discovery (not part of this build) --------------------------------------------------------
 */

static void h_no_dns_discovery(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  (void)ctx, (void)p;
  ld_lib_reply_err(req, "%s", NO_DNS_DISCOVERY);
}

static void h_no_discv5(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  (void)ctx, (void)p;
  ld_lib_reply_err(req, "%s", NO_DISCV5);
}

int waku_dns_discovery(void *ctx, FFICallBack callback, void *userData, const char *entTreeUrl,
                       const char *nameDnsServer, int timeoutMs) {
  return ld_kernel_call(ctx, callback, userData, h_no_dns_discovery, entTreeUrl, nameDnsServer,
                        NULL, timeoutMs, 0);
}

int waku_discv5_update_bootnodes(void *ctx, FFICallBack callback, void *userData, char *bootnodes) {
  return ld_kernel_call(ctx, callback, userData, h_no_discv5, bootnodes, NULL, NULL, 0, 0);
}

int waku_start_discv5(void *ctx, FFICallBack callback, void *userData) {
  return ld_kernel_call(ctx, callback, userData, h_no_discv5, NULL, NULL, NULL, 0, 0);
}

int waku_stop_discv5(void *ctx, FFICallBack callback, void *userData) {
  return ld_kernel_call(ctx, callback, userData, h_no_discv5, NULL, NULL, NULL, 0, 0);
}
