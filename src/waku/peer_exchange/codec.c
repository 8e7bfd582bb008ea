#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "p2p/reqresp.h"
#include "peer_exchange.pb-c.h"
#include "waku/peer_exchange/peer_exchange.h"

typedef Ld__Waku__PeerExchange__PeerExchangeRPC pb_rpc_t;
typedef Ld__Waku__PeerExchange__PeerExchangeQuery pb_query_t;
typedef Ld__Waku__PeerExchange__PeerExchangeResponse pb_response_t;
typedef Ld__Waku__PeerExchange__PeerInfo pb_peer_info_t;

const char *ld_px_status_name(uint32_t status) {
  switch (status) {
  case LD_PX_STATUS_SUCCESS:
    return "SUCCESS";
  case LD_PX_STATUS_BAD_REQUEST:
    return "BAD_REQUEST";
  case LD_PX_STATUS_BAD_RESPONSE:
    return "BAD_RESPONSE";
  case LD_PX_STATUS_TOO_MANY_REQUESTS:
    return "TOO_MANY_REQUESTS";
  case LD_PX_STATUS_SERVICE_UNAVAILABLE:
    return "SERVICE_UNAVAILABLE";
  case LD_PX_STATUS_DIAL_FAILURE:
    return "DIAL_FAILURE";
  default:
    return "UNKNOWN";
  }
}

/* ---- a protobuf-c allocator with a budget --------------------------------------------------- */

typedef struct budget {
  size_t left;
} budget_t;

static void *budget_alloc(void *data, size_t size) {
  budget_t *b = data;
  if (size > b->left || size > SIZE_MAX - sizeof(max_align_t))
    return NULL;
  max_align_t *p = malloc(sizeof(max_align_t) + size);
  if (p == NULL)
    return NULL;
  b->left -= size;
  *(size_t *)p = size;
  return p + 1;
}

static void budget_free(void *data, void *ptr) {
  if (ptr == NULL)
    return;
  budget_t *b = data;
  max_align_t *p = (max_align_t *)ptr - 1;
  b->left += *(size_t *)p;
  free(p);
}

static pb_rpc_t *unpack(const uint8_t *body, size_t n, ProtobufCAllocator *alloc,
                        budget_t *budget) {
  budget->left = LD_PX_DECODE_MEMORY_MAX;
  *alloc = (ProtobufCAllocator){budget_alloc, budget_free, budget};
  return ld__waku__peer_exchange__peer_exchange_rpc__unpack(alloc, n, body);
}

/* ---- encoding ------------------------------------------------------------------------------- */

static int append_rpc(const pb_rpc_t *rpc, size_t max, ld_buf_t *out) {
  size_t body = ld__waku__peer_exchange__peer_exchange_rpc__get_packed_size(rpc);
  if (body > max)
    return LD_ERR_TOO_LARGE;
  uint8_t *p;
  int rc = ld_reqresp_append_frame(out, body, &p);
  if (rc == 0)
    ld__waku__peer_exchange__peer_exchange_rpc__pack(rpc, p);
  return rc;
}

int ld_px_encode_request(uint64_t num_peers, ld_buf_t *out) {
  pb_query_t q = LD__WAKU__PEER_EXCHANGE__PEER_EXCHANGE_QUERY__INIT;
  pb_response_t r = LD__WAKU__PEER_EXCHANGE__PEER_EXCHANGE_RESPONSE__INIT;
  pb_rpc_t rpc = LD__WAKU__PEER_EXCHANGE__PEER_EXCHANGE_RPC__INIT;
  q.has_num_peers = true;
  q.num_peers = num_peers;
  r.has_status_code = true;
  rpc.query = &q;
  rpc.response = &r;
  return append_rpc(&rpc, LD_PX_MAX_REQUEST_SIZE, out);
}

int ld_px_encode_response(const ld_enr_t *const *enrs, size_t n, uint32_t status, const char *desc,
                          ld_buf_t *out) {
  if (n > LD_PX_MAX_RESPONSE_ENRS || (enrs == NULL && n > 0))
    return LD_ERR_TOO_LARGE;
  pb_peer_info_t infos[LD_PX_MAX_RESPONSE_ENRS];
  pb_peer_info_t *ptrs[LD_PX_MAX_RESPONSE_ENRS];
  for (size_t i = 0; i < n; i++) {
    infos[i] = (pb_peer_info_t)LD__WAKU__PEER_EXCHANGE__PEER_INFO__INIT;
    infos[i].has_enr = true;
    infos[i].enr.len = enrs[i]->len;
    infos[i].enr.data = (uint8_t *)enrs[i]->raw;
    ptrs[i] = &infos[i];
  }
  char cut[LD_PX_MAX_STATUS_DESC + 1];
  pb_query_t q = LD__WAKU__PEER_EXCHANGE__PEER_EXCHANGE_QUERY__INIT;
  pb_response_t r = LD__WAKU__PEER_EXCHANGE__PEER_EXCHANGE_RESPONSE__INIT;
  pb_rpc_t rpc = LD__WAKU__PEER_EXCHANGE__PEER_EXCHANGE_RPC__INIT;
  q.has_num_peers = true;
  r.n_peer_infos = n;
  r.peer_infos = ptrs;
  r.has_status_code = true;
  r.status_code = status;
  if (desc != NULL) {
    snprintf(cut, sizeof cut, "%s", desc);
    r.status_desc = cut;
  }
  rpc.query = &q;
  rpc.response = &r;
  return append_rpc(&rpc, LD_PX_MAX_RPC_SIZE, out);
}

/* ---- decoding ------------------------------------------------------------------------------- */

int ld_px_decode_request(const uint8_t *data, size_t len, uint64_t *num_peers) {
  const uint8_t *body;
  size_t n;
  int used = ld_reqresp_read_frame(data, len, LD_PX_MAX_REQUEST_SIZE, &body, &n);
  if (used < 0)
    return used;
  ProtobufCAllocator alloc;
  budget_t budget;
  pb_rpc_t *rpc = unpack(body, n, &alloc, &budget);
  if (rpc == NULL)
    return LD_ERR_BAD_PROTOBUF;
  int rc = used;
  if (rpc->query == NULL)
    rc = LD_ERR_MISSING_FIELD;
  else
    *num_peers = rpc->query->has_num_peers ? rpc->query->num_peers : 0;
  ld__waku__peer_exchange__peer_exchange_rpc__free_unpacked(rpc, &alloc);
  return rc;
}

void ld_px_response_clear(ld_px_response_t *r) {
  free(r->enrs);
  memset(r, 0, sizeof *r);
}

/* Decodes one record into the next slot when it verifies and can be dialed. */
static void take_enr(const pb_peer_info_t *info, ld_px_response_t *out) {
  ld_enr_t *enr = &out->enrs[out->n_enrs];
  if (!info->has_enr || ld_enr_decode(enr, info->enr.data, info->enr.len) != 0) {
    out->n_invalid++;
    return;
  }
  ld_multiaddr_t addr;
  if (ld_enr_dial_addrs(enr, &addr, 1) == 0) {
    out->n_unusable++;
    return;
  }
  out->n_enrs++;
}

static int take_response(const pb_response_t *r, size_t max_enrs, ld_px_response_t *out) {
  out->n_received = r->n_peer_infos;
  if (r->has_status_code)
    out->status_code = r->status_code;
  else
    out->status_code =
        r->n_peer_infos > 0 ? LD_PX_STATUS_SUCCESS : LD_PX_STATUS_SERVICE_UNAVAILABLE;
  if (r->status_desc != NULL) {
    out->has_status_desc = true;
    snprintf(out->status_desc, sizeof out->status_desc, "%s", r->status_desc);
  }
  size_t n = r->n_peer_infos < max_enrs ? r->n_peer_infos : max_enrs;
  if (n == 0)
    return 0;
  if ((out->enrs = malloc(n * sizeof *out->enrs)) == NULL)
    return LD_ERR_NOMEM;
  for (size_t i = 0; i < n; i++)
    take_enr(r->peer_infos[i], out);
  return 0;
}

int ld_px_decode_response(const uint8_t *data, size_t len, size_t max_enrs, ld_px_response_t *out) {
  memset(out, 0, sizeof *out);
  const uint8_t *body;
  size_t n;
  int used = ld_reqresp_read_frame(data, len, LD_PX_MAX_RPC_SIZE, &body, &n);
  if (used < 0)
    return used;
  ProtobufCAllocator alloc;
  budget_t budget;
  pb_rpc_t *rpc = unpack(body, n, &alloc, &budget);
  if (rpc == NULL)
    return LD_ERR_BAD_PROTOBUF;
  if (max_enrs > LD_PX_MAX_RESPONSE_ENRS)
    max_enrs = LD_PX_MAX_RESPONSE_ENRS;
  int rc = rpc->response != NULL ? take_response(rpc->response, max_enrs, out) : 0;
  ld__waku__peer_exchange__peer_exchange_rpc__free_unpacked(rpc, &alloc);
  if (rc != 0) {
    ld_px_response_clear(out);
    return rc;
  }
  return used;
}
