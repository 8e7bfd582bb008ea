/* Waku peer exchange: /vac/waku/peer-exchange/2.0.0-alpha1 (34/WAKU2-PEER-EXCHANGE).
 *
 * A resource-restricted node asks a service node for node records (ENRs) of peers it may dial.
 * One length-prefixed PeerExchangeRPC per direction on a fresh stream: the request carries
 * `query {num_peers}`, the answer `response {peer_infos {enr}, status_code, status_desc}` (plus
 * an empty `query`, which nwaku requires in every RPC). Records travel as raw RLP bytes.
 *
 * Three parts: a pure codec with caps; a server that answers with at most min(num_peers,
 * LD_PX_MAX_PEERS) records from a provider (by default a random sample of an ld_enr_cache_t of
 * our cluster); and a client that asks one connected peer and hands back the records whose
 * signatures verify and that name an address to dial (as js-waku keeps them). */
#ifndef LD_WAKU_PEER_EXCHANGE_PEER_EXCHANGE_H
#define LD_WAKU_PEER_EXCHANGE_PEER_EXCHANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "p2p/peerid.h"
#include "p2p/stream.h"
#include "p2p/switch.h"
#include "waku/core/codecs.h"
#include "waku/enr/cache.h"
#include "waku/enr/enr.h"

#define LD_PX_PROTOCOL LD_WAKU_PEER_EXCHANGE_CODEC

/* Records in one answer at most (nwaku's MaxPeersCacheSize); larger num_peers are capped. */
#define LD_PX_MAX_PEERS 60
/* num_peers nwaku asks for by default (DefaultPXNumPeersReq); js-waku asks for 60. */
#define LD_PX_DEFAULT_NUM_PEERS 5
/* Largest response frame body read: 60 records of 300 bytes need about 18.4 KiB. */
#define LD_PX_MAX_RPC_SIZE (64u * 1024)
/* Largest request frame body read by the server (a request is a few bytes). */
#define LD_PX_MAX_REQUEST_SIZE 1024u
/* Memory the protobuf decoder may allocate for one message; more fails the decode. */
#define LD_PX_DECODE_MEMORY_MAX (512u * 1024)
/* peer_infos of a response the client examines at most. */
#define LD_PX_MAX_RESPONSE_ENRS 100
/* Bytes of status_desc kept (longer ones are cut). */
#define LD_PX_MAX_STATUS_DESC 256
/* Deadline of one exchange, opening the stream included. */
#define LD_PX_TIMEOUT_MS 10000
/* Inbound peer-exchange streams served at the same time; more are reset. */
#define LD_PX_DEFAULT_MAX_INFLIGHT 32

/* Status codes (nwaku). Receivers recognise 200, 400, 429 and 503; 401 and 599 are local. */
enum {
  LD_PX_STATUS_UNKNOWN = 0,
  LD_PX_STATUS_SUCCESS = 200,
  LD_PX_STATUS_BAD_REQUEST = 400,
  LD_PX_STATUS_BAD_RESPONSE = 401,
  LD_PX_STATUS_TOO_MANY_REQUESTS = 429,
  LD_PX_STATUS_SERVICE_UNAVAILABLE = 503,
  LD_PX_STATUS_DIAL_FAILURE = 599,
};

/* "SUCCESS", "BAD_REQUEST", … ("UNKNOWN" for other values). Static string. */
const char *ld_px_status_name(uint32_t status);

/* ---- codec (pure functions; any thread) ----------------------------------------------------- */

/* Appends one length-prefixed request as nwaku writes it: query {num_peers} and an empty
 * response with status 0 (`0a02080512025000` for 5). Returns 0 or LD_ERR_NOMEM. */
int ld_px_encode_request(uint64_t num_peers, ld_buf_t *out);

/* Decodes the length-prefixed request at the start of data[0..len) and stores num_peers (0 when
 * the query has none). Returns the bytes consumed (> 0), or: the frame errors of
 * ld_reqresp_read_frame (LD_ERR_TRUNCATED, LD_ERR_TOO_LARGE above LD_PX_MAX_REQUEST_SIZE, the
 * varint errors); LD_ERR_BAD_PROTOBUF; LD_ERR_MISSING_FIELD when there is no `query` (nwaku
 * refuses such requests too). */
int ld_px_decode_request(const uint8_t *data, size_t len, uint64_t *num_peers);

/* Appends one length-prefixed response: query {num_peers 0}, then the raw records of
 * enrs[0..n), status_code and, when `desc` is not NULL, status_desc (cut to
 * LD_PX_MAX_STATUS_DESC bytes). Returns 0, LD_ERR_TOO_LARGE (more than LD_PX_MAX_RESPONSE_ENRS
 * records, or a body above LD_PX_MAX_RPC_SIZE) or LD_ERR_NOMEM, with `out` unchanged on
 * error. */
int ld_px_encode_response(const ld_enr_t *const *enrs, size_t n, uint32_t status, const char *desc,
                          ld_buf_t *out);

/* A decoded response. Caller storage; release with ld_px_response_clear. */
typedef struct ld_px_response {
  /* As sent; without field 10: SUCCESS when peer_infos are present, SERVICE_UNAVAILABLE
   * otherwise (older nwaku); UNKNOWN when the RPC has no `response` at all. */
  uint32_t status_code;
  bool has_status_desc;
  char status_desc[LD_PX_MAX_STATUS_DESC + 1];
  size_t n_received; /* peer_infos in the message */
  size_t n_invalid;  /* records that did not decode or verify (or were empty) */
  size_t n_unusable; /* valid records without an address to dial */
  size_t n_enrs;     /* records kept in `enrs`, in message order */
  ld_enr_t *enrs;    /* heap array owned by the response; NULL when n_enrs is 0 */
} ld_px_response_t;

/* Decodes the length-prefixed response at the start of data[0..len). The first `max_enrs`
 * peer_infos (at most LD_PX_MAX_RESPONSE_ENRS) are decoded and verified; the valid ones with
 * at least one dialable address (ld_enr_dial_addrs) are kept. Returns the bytes consumed (> 0),
 * or: the frame errors (LD_ERR_TOO_LARGE above LD_PX_MAX_RPC_SIZE); LD_ERR_BAD_PROTOBUF (also
 * when decoding would take more than LD_PX_DECODE_MEMORY_MAX); LD_ERR_NOMEM. On error `out` is
 * left empty (and need not be cleared). */
int ld_px_decode_response(const uint8_t *data, size_t len, size_t max_enrs, ld_px_response_t *out);

/* Frees the records; the response is empty and reusable. */
void ld_px_response_clear(ld_px_response_t *r);

/* ---- server --------------------------------------------------------------------------------- */

/* Fills out[0..max) with records to hand to `requester` and returns how many. The pointers must
 * stay valid until the provider's caller returns (they are encoded at once). Called on the
 * switch's loop thread. */
typedef size_t (*ld_px_provider_fn)(void *user_data, const ld_peerid_t *requester,
                                    const ld_enr_t **out, size_t max);

typedef struct ld_px_server_config {
  /* Where records come from. When NULL, `cache` is sampled at random instead, leaving out the
   * requester's own record and, when has_cluster is set, records of another cluster (nwaku's
   * pool filter); with neither, every answer is an empty SUCCESS. */
  ld_px_provider_fn provider;
  void *provider_data;
  ld_enr_cache_t *cache; /* borrowed; must outlive the server */
  bool has_cluster;
  uint16_t cluster_id;
  size_t max_peers;    /* records per answer, at most LD_PX_MAX_PEERS; 0: LD_PX_MAX_PEERS */
  size_t max_inflight; /* 0: LD_PX_DEFAULT_MAX_INFLIGHT */
  uint32_t timeout_ms; /* 0: LD_PX_TIMEOUT_MS */
} ld_px_server_config_t;

void ld_px_server_config_default(ld_px_server_config_t *cfg);

typedef struct ld_px_server ld_px_server_t;

/* Registers the protocol on `sw` and serves requests: an undecodable request is answered with
 * BAD_REQUEST and a description, a valid one with SUCCESS and min(num_peers, max_peers) records
 * (none for num_peers 0); framing errors and oversized requests reset the stream. NULL on bad
 * configuration, allocation failure, or when the protocol is already registered. The switch
 * cannot drop handlers, so the server lives as long as the switch: free it only after
 * ld_switch_close has called its `done`. Loop thread only. */
ld_px_server_t *ld_px_server_new(ld_switch_t *sw, const ld_px_server_config_t *cfg);

/* Frees the server (see ld_px_server_new for when). NULL is a no-op. */
void ld_px_server_free(ld_px_server_t *srv);

/* Replaces the record source (same meaning as the config fields). Loop thread only. */
void ld_px_server_set_provider(ld_px_server_t *srv, ld_px_provider_fn fn, void *user_data);

typedef struct ld_px_server_stats {
  uint64_t requests;     /* requests answered with SUCCESS */
  uint64_t bad_requests; /* answered with BAD_REQUEST */
  uint64_t failed;       /* streams reset: framing errors, timeouts, over the in-flight cap */
  uint64_t enrs_sent;
} ld_px_server_stats_t;

void ld_px_server_get_stats(const ld_px_server_t *srv, ld_px_server_stats_t *out);

/* ---- client --------------------------------------------------------------------------------- */

/* The result of a request, called once from the loop: err = 0 and the decoded response (any
 * status; records only with SUCCESS in practice), valid only during the call; or an error and
 * NULL: the errors of the exchange (LD_ERR_PROTOCOL_UNSUPPORTED, LD_ERR_TIMEOUT, LD_ERR_RESET,
 * LD_ERR_CLOSED, LD_ERR_PROTOCOL when the peer closed without answering, …) or of
 * ld_px_decode_response. */
typedef void (*ld_px_client_cb)(const ld_px_response_t *resp, int err, void *user_data);

typedef struct ld_px_client_opts {
  uint32_t timeout_ms; /* 0: LD_PX_TIMEOUT_MS */
  /* Records kept at most; 0: min(num_peers, LD_PX_MAX_RESPONSE_ENRS). */
  size_t max_enrs;
} ld_px_client_opts_t;

typedef struct ld_px_call ld_px_call_t;

/* Asks the peer of `conn` for `num_peers` records. Returns 0, or LD_ERR_INVALID_ARG,
 * LD_ERR_NOMEM and the direct errors of ld_switch_open_stream (then `cb` is never called).
 * Loop thread only. */
int ld_px_client_request(ld_switch_t *sw, ld_conn_t *conn, uint64_t num_peers, ld_px_client_cb cb,
                         void *user_data);

/* As ld_px_client_request with options (NULL: defaults); *out (may be NULL) receives a handle
 * for ld_px_call_cancel, valid until `cb` is called. */
int ld_px_client_request_ex(ld_switch_t *sw, ld_conn_t *conn, uint64_t num_peers,
                            const ld_px_client_opts_t *opts, ld_px_client_cb cb, void *user_data,
                            ld_px_call_t **out);

/* Abandons a request: `cb` is not called; the stream is reset. Not after `cb` was called. */
void ld_px_call_cancel(ld_px_call_t *call);

#endif
