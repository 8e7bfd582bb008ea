#include <stdlib.h>

#include "base/error.h"
#include "base/log.h"
#include "p2p/reqresp.h"
#include "waku/peer_exchange/peer_exchange.h"

#define LOG_TOPIC "waku peer_exchange"

struct ld_px_call {
  ld_reqresp_call_t *rr;
  size_t max_enrs;
  ld_px_client_cb cb;
  void *user_data;
};

static void on_done(const uint8_t *data, size_t len, int err, void *ud) {
  ld_px_call_t *call = ud;
  ld_px_response_t resp;
  if (err == 0) {
    int rc = ld_px_decode_response(data, len, call->max_enrs, &resp);
    err = rc < 0 ? rc : 0;
  }
  if (err != 0)
    LD_DEBUG(LOG_TOPIC, "peer exchange request failed: %s", ld_errname(err));
  call->cb(err == 0 ? &resp : NULL, err, call->user_data);
  if (err == 0)
    ld_px_response_clear(&resp);
  free(call);
}

int ld_px_client_request_ex(ld_switch_t *sw, ld_conn_t *conn, uint64_t num_peers,
                            const ld_px_client_opts_t *opts, ld_px_client_cb cb, void *user_data,
                            ld_px_call_t **out) {
  if (sw == NULL || conn == NULL || cb == NULL)
    return LD_ERR_INVALID_ARG;
  ld_px_call_t *call = calloc(1, sizeof *call);
  if (call == NULL)
    return LD_ERR_NOMEM;
  call->cb = cb;
  call->user_data = user_data;
  call->max_enrs = opts != NULL && opts->max_enrs != 0 ? opts->max_enrs : (size_t)num_peers;
  if (call->max_enrs > LD_PX_MAX_RESPONSE_ENRS)
    call->max_enrs = LD_PX_MAX_RESPONSE_ENRS;
  ld_reqresp_opts_t ro = {.max_bytes = LD_PX_MAX_RPC_SIZE + 8,
                          .frame_max = LD_PX_MAX_RPC_SIZE,
                          .timeout_ms = opts != NULL && opts->timeout_ms != 0 ? opts->timeout_ms
                                                                              : LD_PX_TIMEOUT_MS};
  ld_buf_t req;
  ld_buf_init(&req);
  int rc = ld_px_encode_request(num_peers, &req);
  if (rc == 0)
    rc = ld_reqresp_request(sw, conn, LD_PX_PROTOCOL, req.data, req.len, &ro, on_done, call,
                            &call->rr);
  ld_buf_clear(&req);
  if (rc != 0) {
    free(call);
    return rc;
  }
  if (out != NULL)
    *out = call;
  return 0;
}

int ld_px_client_request(ld_switch_t *sw, ld_conn_t *conn, uint64_t num_peers, ld_px_client_cb cb,
                         void *user_data) {
  return ld_px_client_request_ex(sw, conn, num_peers, NULL, cb, user_data, NULL);
}

void ld_px_call_cancel(ld_px_call_t *call) {
  if (call == NULL)
    return;
  ld_reqresp_cancel(call->rr);
  free(call);
}
