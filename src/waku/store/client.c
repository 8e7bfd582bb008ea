#include "waku/store/client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hex.h"
#include "base/log.h"
#include "crypto/crypto.h"
#include "p2p/peerid.h"
#include "p2p/reqresp.h"

#define LOG_TOPIC "waku store client"
#define DESC_MAX 512

struct ld_store_call {
  ld_switch_t *sw;
  ld_conn_t *conn;
  ld_multiaddr_t addr;
  bool has_addr;
  ld_store_query_t q; /* owned copy */
  bool own_id;        /* a fresh request ID per exchange */
  char id[LD_STORE_REQUEST_ID_HEX_LEN + 1];
  ld_store_client_opts_t opts;
  ld_reqresp_call_t *rr;
  bool dialing;
  bool cancelled;
  bool all;
  ld_store_client_fn one;
  ld_store_page_fn page;
  ld_store_all_fn done;
  size_t pages;
  void *ud;
};

/* How a failure came about, for its made-up status. */
typedef enum fail_kind { FAIL_DIAL, FAIL_EXCHANGE, FAIL_DECODE } fail_kind_t;

static int send_request(ld_store_call_t *call);

/* ---- made-up responses ----------------------------------------------------------------------- */

static bool is_dial_error(int err) {
  switch (err) {
  case LD_ERR_UNREACHABLE:
  case LD_ERR_REFUSED:
  case LD_ERR_HANDSHAKE:
  case LD_ERR_BAD_SIGNATURE:
  case LD_ERR_PEER_ID_MISMATCH:
  case LD_ERR_TOO_MANY_CONNECTIONS:
  case LD_ERR_NOT_CONNECTED:
  case LD_ERR_PROTOCOL_UNSUPPORTED:
  case LD_ERR_NEGOTIATION_FAILED:
    return true;
  default:
    return false;
  }
}

static bool is_decode_error(int err) {
  return err == LD_ERR_BAD_PROTOBUF || err == LD_ERR_MISSING_FIELD || err == LD_ERR_FIELD_TOO_LONG;
}

uint32_t ld_store_client_error_status(int err) {
  if (is_dial_error(err))
    return LD_STORE_STATUS_PEER_DIAL_FAILURE;
  if (err == LD_ERR_INVALID_ARG || err == LD_ERR_LIMIT)
    return LD_STORE_STATUS_BAD_REQUEST;
  return LD_STORE_STATUS_BAD_RESPONSE;
}

/* An owned response holding copies of `request_id` and `desc`. */
static int make_response(uint32_t status, const char *request_id, const char *desc,
                         ld_store_response_t *res) {
  ld_store_response_clear(res);
  size_t id_len = strlen(request_id), desc_len = strlen(desc);
  char *block = malloc(id_len + 1 + desc_len + 1);
  if (block == NULL)
    return LD_ERR_NOMEM;
  memcpy(block, request_id, id_len + 1);
  memcpy(block + id_len + 1, desc, desc_len + 1);
  res->storage = block;
  res->request_id = block;
  res->status_desc = block + id_len + 1;
  res->status_code = status;
  return 0;
}

static void describe(int err, fail_kind_t kind, const char *peer, char *out, size_t cap) {
  uint32_t status = kind == FAIL_DIAL     ? LD_STORE_STATUS_PEER_DIAL_FAILURE
                    : kind == FAIL_DECODE ? LD_STORE_STATUS_BAD_RESPONSE
                                          : ld_store_client_error_status(err);
  const char *name = ld_store_status_name(status);
  if (status == LD_STORE_STATUS_PEER_DIAL_FAILURE)
    snprintf(out, cap, "%s: %s", name, peer != NULL ? peer : "unknown");
  else if (kind == FAIL_DECODE)
    snprintf(out, cap, "%s: decode_rpc_failure", name);
  else
    snprintf(out, cap, "%s: %s", name, ld_strerror(err));
}

static fail_kind_t kind_of(int err) {
  if (is_dial_error(err))
    return FAIL_DIAL;
  return is_decode_error(err) ? FAIL_DECODE : FAIL_EXCHANGE;
}

int ld_store_client_error_response(int err, const char *peer, ld_store_response_t *res) {
  char desc[DESC_MAX];
  fail_kind_t kind = kind_of(err);
  describe(err, kind, peer, desc, sizeof desc);
  uint32_t status =
      kind == FAIL_DECODE ? LD_STORE_STATUS_BAD_RESPONSE : ld_store_client_error_status(err);
  return make_response(status, "", desc, res);
}

/* ---- call lifetime --------------------------------------------------------------------------- */

static void call_free(ld_store_call_t *call) {
  ld_store_query_clear(&call->q);
  free(call);
}

static const char *peer_text(const ld_store_call_t *call, char *buf, size_t cap) {
  if (call->has_addr && ld_multiaddr_to_text(&call->addr, buf, cap) >= 0)
    return buf;
  if (call->conn != NULL && ld_peerid_to_text(ld_conn_remote_peer(call->conn), buf, cap) >= 0)
    return buf;
  return NULL;
}

static void fail(ld_store_call_t *call, int err, fail_kind_t kind) {
  char desc[DESC_MAX], peer[LD_MULTIADDR_TEXT_MAX];
  if (kind == FAIL_EXCHANGE && is_dial_error(err))
    kind = FAIL_DIAL; /* the peer does not speak store: nwaku's dialPeer(codec) fails */
  describe(err, kind, peer_text(call, peer, sizeof peer), desc, sizeof desc);
  LD_DEBUG(LOG_TOPIC, "store query failed: %s (%s)", desc, ld_errname(err));
  uint32_t status = kind == FAIL_DIAL     ? LD_STORE_STATUS_PEER_DIAL_FAILURE
                    : kind == FAIL_DECODE ? LD_STORE_STATUS_BAD_RESPONSE
                                          : ld_store_client_error_status(err);
  if (call->all) {
    call->done(err, status, desc, call->pages, call->ud);
  } else {
    ld_store_response_t res;
    ld_store_response_init(&res);
    if (make_response(status, call->q.request_id != NULL ? call->q.request_id : "", desc, &res) !=
        0) {
      res.request_id = ""; /* out of memory: a borrowed response, valid during the call */
      res.status_code = status;
      res.status_desc = ld_store_status_name(status);
    }
    call->one(err, &res, call->ud);
    ld_store_response_clear(&res);
  }
  call_free(call);
}

/* ---- paging ---------------------------------------------------------------------------------- */

/* Where the next page starts, or false when this was the last one. */
static bool next_cursor(const ld_store_call_t *call, const ld_store_response_t *res,
                        uint8_t out[LD_WAKU_HASH_LEN]) {
  if (call->opts.paging == LD_STORE_PAGING_CURSOR) {
    if (res->has_cursor)
      memcpy(out, res->cursor, LD_WAKU_HASH_LEN);
    return res->has_cursor;
  }
  if (res->n_entries == 0)
    return false;
  size_t i = call->q.forward ? res->n_entries - 1 : 0;
  memcpy(out, res->entries[i].hash, LD_WAKU_HASH_LEN);
  return true;
}

static void got_page(ld_store_call_t *call, ld_store_response_t *res) {
  if (res->status_code != LD_STORE_STATUS_OK) {
    call->done(0, res->status_code, res->status_desc, call->pages, call->ud);
    call_free(call);
    return;
  }
  uint8_t cursor[LD_WAKU_HASH_LEN];
  bool more = next_cursor(call, res, cursor);
  call->pages++;
  more = call->page(res, call->ud) && more;
  if (call->opts.max_pages != 0 && call->pages >= call->opts.max_pages)
    more = false;
  if (!more) {
    call->done(0, LD_STORE_STATUS_OK, ld_store_status_name(LD_STORE_STATUS_OK), call->pages,
               call->ud);
    call_free(call);
    return;
  }
  call->q.has_cursor = true;
  call->q.cursor_len = LD_WAKU_HASH_LEN;
  memcpy(call->q.cursor, cursor, LD_WAKU_HASH_LEN);
  int rc = send_request(call);
  if (rc != 0)
    fail(call, rc, FAIL_EXCHANGE);
}

static void got_response(ld_store_call_t *call, ld_store_response_t *res) {
  if (call->all) {
    got_page(call, res);
    return;
  }
  call->one(0, res, call->ud);
  call_free(call);
}

/* ---- the exchange ---------------------------------------------------------------------------- */

static void on_response(const uint8_t *resp, size_t len, int err, void *user_data) {
  ld_store_call_t *call = user_data;
  call->rr = NULL;
  if (err != 0) {
    fail(call, err, FAIL_EXCHANGE);
    return;
  }
  const uint8_t *body;
  size_t n;
  ld_store_response_t res;
  ld_store_response_init(&res);
  int rc = ld_reqresp_read_frame(resp, len, call->opts.max_response_bytes, &body, &n);
  if (rc >= 0)
    rc = ld_store_decode_response(body, n, call->opts.max_msg_size, &res);
  if (rc < 0) {
    fail(call, rc, FAIL_DECODE);
    return;
  }
  got_response(call, &res);
  ld_store_response_clear(&res);
}

static void new_request_id(char out[LD_STORE_REQUEST_ID_HEX_LEN + 1]) {
  uint8_t raw[LD_STORE_REQUEST_ID_HEX_LEN / 2];
  ld_random_bytes(raw, sizeof raw);
  ld_hex_encode(raw, sizeof raw, out);
  out[LD_STORE_REQUEST_ID_HEX_LEN] = '\0';
}

static int send_request(ld_store_call_t *call) {
  if (call->own_id) {
    new_request_id(call->id);
    call->q.request_id = call->id;
  }
  ld_buf_t req;
  ld_buf_init(&req);
  int rc = ld_store_encode_request(&call->q, &req);
  ld_reqresp_opts_t o = {
      .max_bytes = call->opts.max_response_bytes + 16,
      .frame_max = call->opts.max_response_bytes,
      .timeout_ms = call->opts.timeout_ms,
  };
  if (rc == 0)
    rc = ld_reqresp_request(call->sw, call->conn, LD_STORE_PROTOCOL, req.data, req.len, &o,
                            on_response, call, &call->rr);
  ld_buf_clear(&req);
  return rc;
}

static void on_dialed(ld_conn_t *c, int err, void *user_data) {
  ld_store_call_t *call = user_data;
  call->dialing = false;
  if (call->cancelled) {
    call_free(call);
    return;
  }
  if (c == NULL) {
    fail(call, err != 0 ? err : LD_ERR_UNREACHABLE, FAIL_DIAL);
    return;
  }
  call->conn = c;
  int rc = send_request(call);
  if (rc != 0)
    fail(call, rc, FAIL_EXCHANGE);
}

/* ---- starting -------------------------------------------------------------------------------- */

static bool zero_cursor(const ld_store_query_t *q) {
  if (!q->has_cursor)
    return false;
  for (size_t i = 0; i < LD_WAKU_HASH_LEN; i++)
    if (q->cursor[i] != 0)
      return false;
  return true;
}

/* The query's deep copy, made by encoding and decoding it (which also checks it). */
static int copy_query(const ld_store_query_t *q, ld_store_query_t *out) {
  if (zero_cursor(q))
    return LD_ERR_INVALID_ARG;
  ld_buf_t frame;
  ld_buf_init(&frame);
  int rc = ld_store_encode_request(q, &frame);
  const uint8_t *body = NULL;
  size_t n = 0;
  if (rc == 0 && ld_reqresp_read_frame(frame.data, frame.len, SIZE_MAX, &body, &n) < 0)
    rc = LD_ERR_INTERNAL;
  if (rc == 0)
    rc = ld_store_decode_request(body, n, out, NULL);
  ld_buf_clear(&frame);
  return rc == LD_ERR_TOO_LARGE ? LD_ERR_LIMIT : rc;
}

static void apply_opts(const ld_store_client_opts_t *opts, ld_store_client_opts_t *o) {
  memset(o, 0, sizeof *o);
  if (opts != NULL)
    *o = *opts;
  if (o->timeout_ms == 0)
    o->timeout_ms = LD_STORE_CLIENT_DEFAULT_TIMEOUT_MS;
  if (o->max_response_bytes == 0)
    o->max_response_bytes = LD_STORE_MAX_RESPONSE_BYTES;
  if (o->max_msg_size == 0)
    o->max_msg_size = LD_WAKU_DEFAULT_MAX_MSG_SIZE;
}

static int call_new(ld_switch_t *sw, const ld_store_target_t *to, const ld_store_query_t *q,
                    const ld_store_client_opts_t *opts, ld_store_call_t **out) {
  if (sw == NULL || to == NULL || q == NULL || (to->conn == NULL && to->addr == NULL))
    return LD_ERR_INVALID_ARG;
  ld_store_call_t *call = calloc(1, sizeof *call);
  if (call == NULL)
    return LD_ERR_NOMEM;
  ld_store_query_init(&call->q);
  int rc = copy_query(q, &call->q);
  if (rc != 0) {
    call_free(call);
    return rc;
  }
  call->sw = sw;
  call->conn = to->conn;
  call->has_addr = to->conn == NULL;
  if (call->has_addr)
    call->addr = *to->addr;
  call->own_id = q->request_id == NULL;
  apply_opts(opts, &call->opts);
  *out = call;
  return 0;
}

static int call_start(ld_store_call_t *call, ld_store_call_t **out) {
  int rc;
  if (call->conn != NULL) {
    rc = send_request(call);
  } else {
    call->dialing = true;
    rc = ld_switch_dial(call->sw, &call->addr, on_dialed, call);
  }
  if (rc != 0) {
    call_free(call);
    return rc;
  }
  if (out != NULL)
    *out = call;
  return 0;
}

int ld_store_client_query(ld_switch_t *sw, const ld_store_target_t *to, const ld_store_query_t *q,
                          const ld_store_client_opts_t *opts, ld_store_client_fn cb,
                          void *user_data, ld_store_call_t **out) {
  if (cb == NULL)
    return LD_ERR_INVALID_ARG;
  ld_store_call_t *call;
  int rc = call_new(sw, to, q, opts, &call);
  if (rc != 0)
    return rc;
  call->one = cb;
  call->ud = user_data;
  return call_start(call, out);
}

int ld_store_client_query_all(ld_switch_t *sw, const ld_store_target_t *to,
                              const ld_store_query_t *q, const ld_store_client_opts_t *opts,
                              ld_store_page_fn page, ld_store_all_fn done, void *user_data,
                              ld_store_call_t **out) {
  if (page == NULL || done == NULL)
    return LD_ERR_INVALID_ARG;
  ld_store_call_t *call;
  int rc = call_new(sw, to, q, opts, &call);
  if (rc != 0)
    return rc;
  call->all = true;
  call->page = page;
  call->done = done;
  call->ud = user_data;
  return call_start(call, out);
}

void ld_store_client_cancel(ld_store_call_t *call) {
  if (call == NULL || call->cancelled)
    return;
  call->cancelled = true;
  if (call->dialing)
    return; /* freed when the dial reports */
  if (call->rr != NULL)
    ld_reqresp_cancel(call->rr);
  call_free(call);
}
