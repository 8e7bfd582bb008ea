/* Kernel tier: peer management, ping, peer exchange and the online check (c-api.md §3). */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/clock.h"
#include "base/error.h"
#include "lib/kernel_internal.h"
#include "node/peer_manager.h"
#include "node/node_peers.h"
#include "p2p/ping.h"
#include "waku/enr/enr.h"
#include "waku/peer_exchange/peer_exchange.h"

/* Addresses one waku_connect takes at most. */
#define MAX_CONNECT_ADDRS 64

/* Remembers a dialed address of a peer in the peer store. */
static void remember(ld_node_t *node, const ld_multiaddr_t *addr) {
  ld_multiaddr_t a = *addr;
  ld_peerid_t id;
  if (ld_multiaddr_peerid(&a, &id, true) && a.len > 0)
    ld_peerstore_add_addrs(ld_node_peerstore(node), &id, &a, 1, ld_now_ms());
}

/* ---- connect -----------------------------------------------------------------------------------
 */

typedef struct connect_dial {
  ld_kernel_op_t *op;
  ld_multiaddr_t addr;
} connect_dial_t;

typedef struct connect_data {
  size_t n, pending;
  char failure[LD_MULTIADDR_TEXT_MAX + 128]; /* the first failure, "" when none */
  connect_dial_t dials[];
} connect_data_t;

static void connect_free(ld_kernel_op_t *op) {
  free(op->data);
}

static void note_failure(connect_data_t *d, const ld_multiaddr_t *addr, int err) {
  char text[LD_MULTIADDR_TEXT_MAX];
  if (d->failure[0] != '\0')
    return;
  if (ld_multiaddr_to_text(addr, text, sizeof text) < 0)
    strcpy(text, "?");
  snprintf(d->failure, sizeof d->failure, "failed to connect to %s: %s", text, ld_strerror(err));
}

static void connect_settle(ld_kernel_op_t *op) {
  connect_data_t *d = op->data;
  if (--d->pending > 0)
    return;
  if (d->failure[0] != '\0')
    ld_kernel_op_err(op, "%s", d->failure);
  else
    ld_kernel_op_ok(op, "", 0);
}

static void on_connect_dialed(ld_conn_t *c, int err, void *user_data) {
  (void)c;
  connect_dial_t *dial = user_data;
  ld_kernel_op_t *op = dial->op;
  if (ld_kernel_op_open(op)) {
    if (err != 0)
      note_failure(op->data, &dial->addr, err);
    else
      remember(ld_kernel_node_of(op->k), &dial->addr);
    connect_settle(op);
  }
  ld_kernel_op_release(op);
}

static char *trim(char *s) {
  while (isspace((unsigned char)*s))
    s++;
  size_t n = strlen(s);
  while (n > 0 && isspace((unsigned char)s[n - 1]))
    s[--n] = '\0';
  return s;
}

/* Parses the comma-separated list; each address must name its peer (/p2p/<id>). */
static int parse_addrs(char *list, connect_data_t *d, char *why, size_t cap) {
  char *save = NULL;
  size_t n = 0;
  for (char *item = strtok_r(list, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
    item = trim(item);
    ld_peerid_t id;
    if (n == d->n) {
      snprintf(why, cap, "too many addresses (at most %d)", MAX_CONNECT_ADDRS);
      return LD_ERR_LIMIT;
    }
    if (ld_multiaddr_parse(&d->dials[n].addr, item) != 0 ||
        !ld_multiaddr_peerid(&d->dials[n].addr, &id, false)) {
      snprintf(why, cap, "invalid peer multiaddr (expected .../p2p/<peer id>): '%.200s'", item);
      return LD_ERR_BAD_MULTIADDR;
    }
    n++;
  }
  d->n = n;
  if (n == 0)
    snprintf(why, cap, "no peer address given");
  return n > 0 ? 0 : LD_ERR_INVALID_ARG;
}

static connect_data_t *connect_data(ld_lib_request_t *req, char *list) {
  size_t commas = 0;
  for (const char *s = list; *s != '\0'; s++)
    commas += *s == ',';
  size_t max = commas + 1 < MAX_CONNECT_ADDRS ? commas + 1 : MAX_CONNECT_ADDRS;
  connect_data_t *d = calloc(1, sizeof *d + max * sizeof d->dials[0]);
  if (d == NULL) {
    ld_lib_reply_err(req, "connect failed: out of memory");
    return NULL;
  }
  d->n = max;
  char why[300];
  if (parse_addrs(list, d, why, sizeof why) != 0) {
    ld_lib_reply_err(req, "%s", why);
    free(d);
    return NULL;
  }
  return d;
}

static void h_connect(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  ld_kernel_args_t *a = p;
  ld_kernel_t *k = ld_kernel_get(ctx, req, "connect");
  connect_data_t *d = k != NULL ? connect_data(req, a->s[0]) : NULL;
  if (d == NULL)
    return;
  ld_kernel_op_t *op =
      ld_kernel_op_new(k, req, "connect", ld_kernel_timeout_ms(a->n[0]), "connect timed out");
  if (op == NULL) {
    free(d);
    return;
  }
  op->data = d;
  op->free_data = connect_free;
  d->pending = d->n + 1; /* one for this loop */
  ld_switch_t *sw = ld_node_switch(ld_kernel_node_of(k));
  for (size_t i = 0; i < d->n; i++) {
    d->dials[i].op = op;
    int rc = ld_switch_dial(sw, &d->dials[i].addr, on_connect_dialed, &d->dials[i]);
    if (rc == 0) {
      op->refs++;
      continue;
    }
    note_failure(d, &d->dials[i].addr, rc);
    connect_settle(op);
  }
  connect_settle(op);
  ld_kernel_op_release(op);
}

int waku_connect(void *ctx, FFICallBack callback, void *userData, const char *peerMultiAddr,
                 unsigned int timeoutMs) {
  return ld_kernel_call(ctx, callback, userData, h_connect, peerMultiAddr, NULL, NULL, timeoutMs,
                        0);
}

/* ---- disconnecting -----------------------------------------------------------------------------
 */

static void h_disconnect(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  ld_kernel_args_t *a = p;
  ld_node_t *node = ld_kernel_node(ctx, req, "disconnectPeerById");
  if (node == NULL)
    return;
  ld_peerid_t id;
  int rc = ld_peerid_parse(&id, a->s[0]);
  if (rc == 0) {
    ld_node_pm_hold_off(node, &id); /* not redialed by the peer manager right away */
    rc = ld_node_disconnect_peer(node, &id);
  }
  if (rc < 0)
    ld_lib_reply_err(req, "disconnectPeerById: %s: '%.200s'", ld_strerror(rc), a->s[0]);
  else
    ld_lib_reply_text(req, "");
}

int waku_disconnect_peer_by_id(void *ctx, FFICallBack callback, void *userData,
                               const char *peerId) {
  return ld_kernel_call(ctx, callback, userData, h_disconnect, peerId, NULL, NULL, 0, 0);
}

static void h_disconnect_all(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  (void)p;
  ld_node_t *node = ld_kernel_node(ctx, req, "disconnectAllPeers");
  if (node == NULL)
    return;
  ld_node_pm_hold_off(node, NULL);
  int rc = ld_node_disconnect_all(node);
  if (rc < 0)
    ld_lib_reply_err(req, "disconnectAllPeers: %s", ld_strerror(rc));
  else
    ld_lib_reply_text(req, "");
}

int waku_disconnect_all_peers(void *ctx, FFICallBack callback, void *userData) {
  return ld_kernel_call(ctx, callback, userData, h_disconnect_all, NULL, NULL, NULL, 0, 0);
}

/* ---- dialing with a protocol -------------------------------------------------------------------
 */

typedef struct dial_data {
  ld_multiaddr_t addr;
  char *protocol;
} dial_data_t;

static void dial_free(ld_kernel_op_t *op) {
  dial_data_t *d = op->data;
  free(d->protocol);
  free(d);
}

static void on_probe_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  (void)s, (void)data, (void)len;
}

static void on_probe_close(ld_stream_t *s, int err) {
  (void)s, (void)err;
}

static const ld_stream_handler_t g_probe_handler = {on_probe_data, NULL, on_probe_close, NULL};

static void on_dial_stream(ld_stream_t *s, int err, void *user_data) {
  ld_kernel_op_t *op = user_data;
  if (s != NULL) {
    ld_stream_set_handler(s, &g_probe_handler, NULL);
    ld_stream_reset(s);
  }
  if (err != 0)
    ld_kernel_op_err(op, "failed dialing peer: %s", ld_strerror(err));
  else
    ld_kernel_op_ok(op, "", 0);
  ld_kernel_op_release(op);
}

static void on_dialed(ld_conn_t *c, int err, void *user_data) {
  ld_kernel_op_t *op = user_data;
  dial_data_t *d = op->data;
  if (err == 0 && ld_kernel_op_open(op)) {
    ld_node_t *node = ld_kernel_node_of(op->k);
    remember(node, &d->addr);
    const char *protocols[1] = {d->protocol};
    if (d->protocol[0] == '\0')
      ld_kernel_op_ok(op, "", 0);
    else if ((err = ld_switch_open_stream(ld_node_switch(node), c, protocols, 1, on_dial_stream,
                                          op)) == 0)
      op->refs++;
  }
  if (err != 0)
    ld_kernel_op_err(op, "failed dialing peer: %s", ld_strerror(err));
  ld_kernel_op_release(op);
}

static void dial(ld_kernel_t *k, ld_lib_request_t *req, const ld_multiaddr_t *addr,
                 const char *protocol, int64_t timeout) {
  dial_data_t *d = calloc(1, sizeof *d);
  if (d == NULL || (d->protocol = strdup(protocol)) == NULL) {
    free(d);
    ld_lib_reply_err(req, "failed dialing peer: out of memory");
    return;
  }
  d->addr = *addr;
  ld_kernel_op_t *op = ld_kernel_op_new(k, req, "dialPeer", ld_kernel_timeout_ms(timeout),
                                        "failed dialing peer: timed out");
  if (op == NULL) {
    free(d->protocol);
    free(d);
    return;
  }
  op->data = d;
  op->free_data = dial_free;
  int rc = ld_switch_dial(ld_node_switch(ld_kernel_node_of(k)), addr, on_dialed, op);
  if (rc == 0)
    op->refs++;
  else
    ld_kernel_op_err(op, "failed dialing peer: %s", ld_strerror(rc));
  ld_kernel_op_release(op);
}

static void h_dial_peer(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  ld_kernel_args_t *a = p;
  ld_kernel_t *k = ld_kernel_get(ctx, req, "dialPeer");
  if (k == NULL)
    return;
  ld_multiaddr_t addr;
  int rc = ld_multiaddr_parse(&addr, a->s[0]);
  if (rc != 0)
    ld_lib_reply_err(req, "failed dialing peer: %s: '%.200s'", ld_strerror(rc), a->s[0]);
  else
    dial(k, req, &addr, a->s[1], a->n[0]);
}

int waku_dial_peer(void *ctx, FFICallBack callback, void *userData, const char *peerMultiAddr,
                   const char *protocol, int timeoutMs) {
  return ld_kernel_call(ctx, callback, userData, h_dial_peer, peerMultiAddr, protocol, NULL,
                        timeoutMs, 0);
}

static void h_dial_peer_by_id(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  ld_kernel_args_t *a = p;
  ld_kernel_t *k = ld_kernel_get(ctx, req, "dialPeerById");
  if (k == NULL)
    return;
  ld_peerid_t id;
  ld_multiaddr_t addr;
  int rc = ld_peerid_parse(&id, a->s[0]);
  if (rc != 0)
    ld_lib_reply_err(req, "failed dialing peer: %s: '%.200s'", ld_strerror(rc), a->s[0]);
  else if (ld_node_peer_dial_addr(ld_kernel_node_of(k), &id, &addr) != 0)
    ld_lib_reply_err(req, "failed dialing peer: no address known for %s", a->s[0]);
  else
    dial(k, req, &addr, a->s[1], a->n[0]);
}

int waku_dial_peer_by_id(void *ctx, FFICallBack callback, void *userData, const char *peerId,
                         const char *protocol, int timeoutMs) {
  return ld_kernel_call(ctx, callback, userData, h_dial_peer_by_id, peerId, protocol, NULL,
                        timeoutMs, 0);
}

/* ---- peer lists --------------------------------------------------------------------------------
 */

/* Peer-store peers (supporting `protocol` when not NULL; connected ones only when asked). */
static void reply_peerstore(ld_lib_request_t *req, ld_node_t *node, const char *protocol,
                            bool connected_only) {
  ld_peerstore_t *ps = ld_node_peerstore(node);
  size_t n = ld_peerstore_peers(ps, protocol, NULL, 0);
  ld_peerid_t *ids = n > 0 ? malloc(n * sizeof *ids) : NULL;
  if (n > 0 && ids == NULL) {
    ld_lib_reply_err(req, "out of memory");
    return;
  }
  n = ld_peerstore_peers(ps, protocol, ids, n);
  size_t kept = 0;
  for (size_t i = 0; i < n; i++)
    if (!connected_only || ld_node_peer_connected(node, &ids[i]))
      ids[kept++] = ids[i];
  ld_kernel_reply_peers(req, ids, kept);
  free(ids);
}

static void h_peerstore(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  (void)p;
  ld_node_t *node = ld_kernel_node(ctx, req, "peerIdsFromPeerstore");
  if (node != NULL)
    reply_peerstore(req, node, NULL, false);
}

int waku_get_peerids_from_peerstore(void *ctx, FFICallBack callback, void *userData) {
  return ld_kernel_call(ctx, callback, userData, h_peerstore, NULL, NULL, NULL, 0, 0);
}

static void h_by_protocol(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  ld_kernel_args_t *a = p;
  ld_node_t *node = ld_kernel_node(ctx, req, "peerIdsByProtocol");
  if (node != NULL)
    reply_peerstore(req, node, a->s[0], true);
}

int waku_get_peerids_by_protocol(void *ctx, FFICallBack callback, void *userData,
                                 const char *protocol) {
  return ld_kernel_call(ctx, callback, userData, h_by_protocol, protocol, NULL, NULL, 0, 0);
}

/* Connected peers (heap array in *ids, count in *n); LD_ERR_NOMEM. */
static int connected(ld_node_t *node, ld_peerid_t **ids, size_t *n) {
  *n = ld_node_connected_peers(node, NULL, 0);
  *ids = *n > 0 ? malloc(*n * sizeof **ids) : NULL;
  if (*n > 0 && *ids == NULL)
    return LD_ERR_NOMEM;
  size_t again = ld_node_connected_peers(node, *ids, *n);
  *n = again < *n ? again : *n;
  return 0;
}

static void h_connected_peers(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  (void)p;
  ld_node_t *node = ld_kernel_node(ctx, req, "connectedPeers");
  ld_peerid_t *ids = NULL;
  size_t n = 0;
  if (node == NULL)
    return;
  if (connected(node, &ids, &n) != 0)
    ld_lib_reply_err(req, "connectedPeers: out of memory");
  else
    ld_kernel_reply_peers(req, ids, n);
  free(ids);
}

int waku_get_connected_peers(void *ctx, FFICallBack callback, void *userData) {
  return ld_kernel_call(ctx, callback, userData, h_connected_peers, NULL, NULL, NULL, 0, 0);
}

static json_t *addr_list(ld_node_t *node, const ld_peerid_t *id, const ld_peerstore_peer_t *known) {
  json_t *arr = json_array();
  char text[LD_MULTIADDR_TEXT_MAX];
  for (size_t i = 0; arr != NULL && known != NULL && i < known->n_addrs; i++)
    if (ld_multiaddr_to_text(&known->addrs[i], text, sizeof text) >= 0)
      json_array_append_new(arr, json_string(text));
  ld_conn_t *c = json_array_size(arr) == 0 ? ld_node_peer_conn(node, id) : NULL;
  if (c != NULL && ld_multiaddr_to_text(ld_conn_remote_addr(c), text, sizeof text) >= 0)
    json_array_append_new(arr, json_string(text));
  return arr;
}

static json_t *peer_info(ld_node_t *node, const ld_peerid_t *id) {
  const ld_peerstore_peer_t *known = ld_peerstore_get(ld_node_peerstore(node), id);
  json_t *protocols = json_array();
  for (size_t i = 0; protocols != NULL && known != NULL && i < known->n_protocols; i++)
    json_array_append_new(protocols, json_string(known->protocols[i]));
  json_t *o = json_object();
  if (o != NULL) {
    json_object_set_new(o, "protocols", protocols != NULL ? protocols : json_array());
    json_object_set_new(o, "addresses", addr_list(node, id, known));
  } else {
    json_decref(protocols);
  }
  return o;
}

static void h_peers_info(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  (void)p;
  ld_node_t *node = ld_kernel_node(ctx, req, "connectedPeersInfo");
  ld_peerid_t *ids = NULL;
  size_t n = 0;
  if (node == NULL)
    return;
  json_t *all = connected(node, &ids, &n) == 0 ? json_object() : NULL;
  for (size_t i = 0; all != NULL && i < n; i++) {
    char id[LD_PEERID_TEXT_MAX];
    if (ld_peerid_to_text(&ids[i], id, sizeof id) >= 0)
      json_object_set_new(all, id, peer_info(node, &ids[i]));
  }
  char *text = all != NULL ? json_dumps(all, JSON_COMPACT) : NULL;
  if (text != NULL)
    ld_lib_reply_text(req, text);
  else
    ld_lib_reply_err(req, "connectedPeersInfo: out of memory");
  free(text);
  json_decref(all);
  free(ids);
}

int waku_get_connected_peers_info(void *ctx, FFICallBack callback, void *userData) {
  return ld_kernel_call(ctx, callback, userData, h_peers_info, NULL, NULL, NULL, 0, 0);
}

static void h_listen_addresses(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  (void)p;
  ld_node_t *node = ld_kernel_node(ctx, req, "listenAddresses");
  if (node == NULL)
    return;
  ld_multiaddr_t addrs[LD_NODE_MAX_LISTEN_ADDRS];
  size_t n = ld_node_listen_addrs(node, addrs, LD_NODE_MAX_LISTEN_ADDRS);
  n = n < LD_NODE_MAX_LISTEN_ADDRS ? n : LD_NODE_MAX_LISTEN_ADDRS;
  char(*text)[LD_MULTIADDR_TEXT_MAX] = malloc(LD_NODE_MAX_LISTEN_ADDRS * sizeof *text);
  const char *items[LD_NODE_MAX_LISTEN_ADDRS];
  if (text == NULL) {
    ld_lib_reply_err(req, "listenAddresses: out of memory");
    return;
  }
  size_t kept = 0;
  for (size_t i = 0; i < n; i++)
    if (ld_multiaddr_to_text(&addrs[i], text[kept], sizeof text[kept]) >= 0) {
      items[kept] = text[kept];
      kept++;
    }
  ld_kernel_reply_join(req, items, kept, ",");
  free(text);
}

int waku_listen_addresses(void *ctx, FFICallBack callback, void *userData) {
  return ld_kernel_call(ctx, callback, userData, h_listen_addresses, NULL, NULL, NULL, 0, 0);
}

static void h_is_online(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  (void)p;
  ld_node_t *node = ld_kernel_node(ctx, req, "isOnline");
  if (node != NULL)
    ld_lib_reply_text(req, ld_node_connected_peers(node, NULL, 0) > 0 ? "true" : "false");
}

int waku_is_online(void *ctx, FFICallBack callback, void *userData) {
  return ld_kernel_call(ctx, callback, userData, h_is_online, NULL, NULL, NULL, 0, 0);
}

/* ---- ping --------------------------------------------------------------------------------------
 */

/* Completes the operation with a decimal number. */
static void reply_count(ld_kernel_op_t *op, uint64_t n) {
  char text[24];
  int len = snprintf(text, sizeof text, "%" PRIu64, n);
  ld_kernel_op_ok(op, text, (size_t)len);
}

typedef struct ping_data {
  ld_multiaddr_t addr;
  uint64_t rtt_us;
} ping_data_t;

static void ping_free(ld_kernel_op_t *op) {
  free(op->data);
}

static void on_ping(int err, unsigned index, uint64_t rtt_us, bool done, void *user_data) {
  (void)index;
  ld_kernel_op_t *op = user_data;
  ping_data_t *d = op->data;
  if (!done) {
    d->rtt_us = rtt_us;
    return;
  }
  if (err != 0)
    ld_kernel_op_err(op, "could not ping peer: %s", ld_strerror(err));
  else if (d->rtt_us == 0)
    ld_kernel_op_err(op, "could not ping peer: rtt-0");
  else
    reply_count(op, d->rtt_us * 1000);
  ld_kernel_op_release(op);
}

static void on_ping_dialed(ld_conn_t *c, int err, void *user_data) {
  ld_kernel_op_t *op = user_data;
  if (err == 0 && ld_kernel_op_open(op)) {
    remember(ld_kernel_node_of(op->k), &((ping_data_t *)op->data)->addr);
    if ((err = ld_ping(ld_node_switch(ld_kernel_node_of(op->k)), c, 1, on_ping, op)) == 0)
      op->refs++;
  }
  if (err != 0)
    ld_kernel_op_err(op, "could not ping peer: %s", ld_strerror(err));
  ld_kernel_op_release(op);
}

static void h_ping(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  ld_kernel_args_t *a = p;
  ld_kernel_t *k = ld_kernel_get(ctx, req, "pingPeer");
  if (k == NULL)
    return;
  ping_data_t *d = calloc(1, sizeof *d);
  int rc = d == NULL ? LD_ERR_NOMEM : ld_multiaddr_parse(&d->addr, a->s[0]);
  if (rc != 0) {
    free(d);
    ld_lib_reply_err(req, "pingPeer failed to parse peer addr: %s", ld_strerror(rc));
    return;
  }
  ld_kernel_op_t *op =
      ld_kernel_op_new(k, req, "pingPeer", ld_kernel_timeout_ms(a->n[0]), "ping timed out");
  if (op == NULL) {
    free(d);
    return;
  }
  op->data = d;
  op->free_data = ping_free;
  rc = ld_switch_dial(ld_node_switch(ld_kernel_node_of(k)), &d->addr, on_ping_dialed, op);
  if (rc == 0)
    op->refs++;
  else
    ld_kernel_op_err(op, "could not ping peer: %s", ld_strerror(rc));
  ld_kernel_op_release(op);
}

int waku_ping_peer(void *ctx, FFICallBack callback, void *userData, const char *peerAddr,
                   int timeoutMs) {
  return ld_kernel_call(ctx, callback, userData, h_ping, peerAddr, NULL, NULL, timeoutMs, 0);
}

/* ---- peer exchange -----------------------------------------------------------------------------
 */

typedef struct px_data {
  uint64_t num_peers;
  ld_px_call_t *call;
} px_data_t;

static void px_free(ld_kernel_op_t *op) {
  free(op->data);
}

static void px_cancel(ld_kernel_op_t *op) {
  px_data_t *d = op->data;
  if (d->call != NULL) {
    ld_px_call_cancel(d->call);
    d->call = NULL;
    ld_kernel_op_release(op);
  }
}

/* Hands the records to the peer manager (origin PeerExchange, which may dial them); returns how
 * many it took (our cluster, a dialable address, not ourselves). */
static size_t learn(ld_node_t *node, const ld_px_response_t *resp) {
  size_t added = 0;
  for (size_t i = 0; i < resp->n_enrs; i++)
    if (ld_node_add_peer_enr(node, &resp->enrs[i], LD_PM_ORIGIN_PX) == 0)
      added++;
  if (added > 0)
    ld_node_pm_poke(node);
  return added;
}

static void on_px(const ld_px_response_t *resp, int err, void *user_data) {
  ld_kernel_op_t *op = user_data;
  px_data_t *d = op->data;
  d->call = NULL;
  op->cancel = NULL;
  if (err != 0)
    ld_kernel_op_err(op, "failed peer exchange: %s", ld_strerror(err));
  else if (resp->status_code != LD_PX_STATUS_SUCCESS)
    ld_kernel_op_err(op, "failed peer exchange: %s: %s", ld_px_status_name(resp->status_code),
                     resp->has_status_desc ? resp->status_desc : "");
  else if (ld_kernel_op_open(op))
    reply_count(op, learn(ld_kernel_node_of(op->k), resp));
  ld_kernel_op_release(op);
}

static void on_px_conn(ld_kernel_op_t *op, ld_conn_t *c, int err, const ld_service_peer_t *peer) {
  (void)peer;
  px_data_t *d = op->data;
  if (err == 0 && ld_kernel_op_open(op)) {
    err = ld_px_client_request_ex(ld_node_switch(ld_kernel_node_of(op->k)), c, d->num_peers, NULL,
                                  on_px, op, &d->call);
    if (err == 0) {
      op->refs++;
      op->cancel = px_cancel;
    }
  }
  if (err != 0)
    ld_kernel_op_err(op, "failed peer exchange: %s", ld_strerror(err));
  ld_kernel_op_release(op);
}

static void h_peer_exchange(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  ld_kernel_args_t *a = p;
  ld_kernel_t *k = ld_kernel_get(ctx, req, "peerExchangeRequest");
  if (k == NULL)
    return;
  px_data_t *d = calloc(1, sizeof *d);
  ld_kernel_op_t *op = d != NULL ? ld_kernel_op_new(k, req, "peerExchangeRequest", 0, NULL) : NULL;
  if (op == NULL) {
    if (d == NULL)
      ld_lib_reply_err(req, "failed peer exchange: out of memory");
    free(d);
    return;
  }
  d->num_peers = (uint64_t)(uint32_t)a->n[0];
  op->data = d;
  op->free_data = px_free;
  int rc = ld_kernel_op_connect(op, LD_PX_PROTOCOL, NULL, on_px_conn);
  if (rc == LD_ERR_NOT_FOUND)
    ld_kernel_op_err(op, "failed peer exchange: no peer supporting peer exchange");
  else if (rc != 0)
    ld_kernel_op_err(op, "failed peer exchange: %s", ld_strerror(rc));
  ld_kernel_op_release(op);
}

int waku_peer_exchange_request(void *ctx, FFICallBack callback, void *userData, int numPeers) {
  return ld_kernel_call(ctx, callback, userData, h_peer_exchange, NULL, NULL, NULL, numPeers, 0);
}
