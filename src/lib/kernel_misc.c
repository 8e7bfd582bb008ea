/* Kernel tier: the node's ENR, peer ID and metrics, and the discovery calls (c-api.md §3): discv5
 * bootstrap updates, start and stop run on the node's discv5 (node/peer_manager.h); DNS discovery
 * (EIP-1459) is in kernel_dns.c. */
#include <jansson.h>
#include <stdlib.h>

#include "base/buf.h"
#include "base/error.h"
#include "lib/kernel_internal.h"
#include "node/peer_manager.h"
#include "waku/enr/enr.h"

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

/* ---- discovery ---------------------------------------------------------------------------------
 */

#define BOOTNODES_ERR "error in updateDiscv5BootstrapNodes: "

/* nwaku's updateBootstrapRecords: a JSON array of "enr:…" texts, each added as a bootstrap node
 * (nwaku checks them and then seeds its table from an empty list; the records are meant to be
 * used, and here they are). */
static void h_update_bootnodes(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  ld_kernel_args_t *a = p;
  ld_node_t *node = ld_kernel_node(ctx, req, "updateDiscv5BootstrapNodes");
  if (node == NULL)
    return;
  json_error_t jerr;
  json_t *list = json_loads(a->s[0] != NULL ? a->s[0] : "", 0, &jerr);
  if (list == NULL) {
    ld_lib_reply_err(req, BOOTNODES_ERR "exception parsing json enr records: %s", jerr.text);
    return;
  }
  size_t i;
  json_t *item;
  const char *bad = NULL;
  ld_enr_t *enrs = json_is_array(list) ? calloc(json_array_size(list) + 1, sizeof *enrs) : NULL;
  json_array_foreach(list, i, item) {
    const char *text = json_string_value(item);
    if (enrs != NULL && (text == NULL || ld_enr_parse_text(&enrs[i], text) != 0)) {
      bad = text != NULL ? text : "(not a string)";
      break;
    }
  }
  if (!json_is_array(list))
    ld_lib_reply_err(req, BOOTNODES_ERR "updateBootstrapRecords should receive a json array "
                                        "containing ENRs");
  else if (enrs == NULL)
    ld_lib_reply_err(req, BOOTNODES_ERR "out of memory");
  else if (bad != NULL)
    ld_lib_reply_err(req, BOOTNODES_ERR "wrong enr given: %s", bad);
  else if (ld_node_discv5(node) == NULL)
    ld_lib_reply_err(req, BOOTNODES_ERR "discv5 is not running");
  else {
    for (i = 0; i < json_array_size(list); i++)
      ld_node_discv5_add_bootstrap(node, &enrs[i], false); /* no udp endpoint: skipped */
    ld_lib_reply_text(req, "discovery request processed correctly");
  }
  free(enrs);
  json_decref(list);
}

static void h_start_discv5(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  (void)p;
  ld_node_t *node = ld_kernel_node(ctx, req, "startDiscv5");
  if (node == NULL)
    return;
  int rc = ld_node_discv5_start(node);
  if (rc != 0)
    ld_lib_reply_err(req, "discv5 did not start: %s",
                     rc == LD_ERR_UNSUPPORTED ? "the node does not listen" : ld_strerror(rc));
  else
    ld_lib_reply_text(req, "discv5 started correctly");
}

static void h_stop_discv5(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  (void)p;
  ld_node_t *node = ld_kernel_node(ctx, req, "stopDiscv5");
  if (node == NULL)
    return;
  ld_node_discv5_stop(node);
  ld_lib_reply_text(req, "discv5 stopped correctly");
}

int waku_discv5_update_bootnodes(void *ctx, FFICallBack callback, void *userData, char *bootnodes) {
  return ld_kernel_call(ctx, callback, userData, h_update_bootnodes, bootnodes, NULL, NULL, 0, 0);
}

int waku_start_discv5(void *ctx, FFICallBack callback, void *userData) {
  return ld_kernel_call(ctx, callback, userData, h_start_discv5, NULL, NULL, NULL, 0, 0);
}

int waku_stop_discv5(void *ctx, FFICallBack callback, void *userData) {
  return ld_kernel_call(ctx, callback, userData, h_stop_discv5, NULL, NULL, NULL, 0, 0);
}
