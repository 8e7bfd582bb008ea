/* Waku store v3 client: queries a store node over /vac/waku/store-query/3.0.0, one page per
 * call, or every page in turn.
 *
 * A call opens a stream on a connection (or dials the peer first), writes one length-prefixed
 * StoreQueryRequest (include_data and pagination_forward always written; a request ID of 20
 * lowercase hex digits generated when the query has none), half-closes, reads one
 * length-prefixed StoreQueryResponse and decodes it.
 *
 * Results always come as a response, so that a REST handler or a terminal command renders one
 * shape either way: err 0 with the server's response whatever its status (200, 300, 400, 429,
 * …), or err < 0 with a response the client made up as nwaku's client does:
 * - 504 "PEER_DIAL_FAILURE: <address or peer ID>": the dial failed, or the peer does not speak
 *   the store protocol (LD_ERR_PROTOCOL_UNSUPPORTED, LD_ERR_NEGOTIATION_FAILED, …);
 * - 300 "BAD_RESPONSE: decode_rpc_failure": the response does not decode;
 * - 300 "BAD_RESPONSE: <error text>": no response (timeout, reset, the stream ended early,
 *   a frame over max_response_bytes, the connection went away).
 * (400 "BAD_REQUEST: <error text>" is what ld_store_client_error_response makes of an invalid
 * query, which the calls themselves refuse directly.)
 *
 * Typical uses:
 *   REST /store/v3/messages?peerAddr=…  → ld_store_client_query with target.addr, render `res`;
 *   REST without peerAddr              → ld_store_server_query_local (server.h), same shape;
 *   `logosdelivery query`              → ld_store_client_query_all, print each page.
 *
 * Threading: every function must be called on the switch's loop thread; callbacks come from
 * that loop, never from inside these calls. A function that returns an error never calls its
 * callbacks. */
#ifndef LD_WAKU_STORE_CLIENT_H
#define LD_WAKU_STORE_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/multiaddr.h"
#include "p2p/switch.h"
#include "waku/store/codec.h"

/* Deadline of one exchange (opening the stream, request, response) when opts leave it at 0. */
#define LD_STORE_CLIENT_DEFAULT_TIMEOUT_MS 30000
/* Length of a generated request ID (10 random bytes as hex, as nwaku). */
#define LD_STORE_REQUEST_ID_HEX_LEN 20

typedef enum ld_store_paging {
  /* Follow the server's pagination_cursor; stop when a response has none (nwaku). */
  LD_STORE_PAGING_CURSOR = 0,
  /* js-waku: the next cursor is the hash of the last entry (the first when backward); stop at a
   * page without entries. */
  LD_STORE_PAGING_UNTIL_EMPTY = 1,
} ld_store_paging_t;

typedef struct ld_store_client_opts {
  uint32_t timeout_ms;       /* per exchange; 0: LD_STORE_CLIENT_DEFAULT_TIMEOUT_MS */
  size_t max_response_bytes; /* response frame body; 0: LD_STORE_MAX_RESPONSE_BYTES */
  size_t max_msg_size;       /* cap of each message read; 0: LD_WAKU_DEFAULT_MAX_MSG_SIZE */
  ld_store_paging_t paging;  /* ld_store_client_query_all only */
  size_t max_pages;          /* ld_store_client_query_all only; 0: no limit */
} ld_store_client_opts_t;

/* Whom to ask: an open connection, or else an address to dial (/ip4/…/tcp/…/p2p/<id>; with
 * /p2p the peer must prove that ID, and an existing connection to it is reused). */
typedef struct ld_store_target {
  ld_conn_t *conn;            /* used when not NULL (must be open at the time of the call) */
  const ld_multiaddr_t *addr; /* copied */
} ld_store_target_t;

/* A query in progress. Owned by the module; valid until its final callback has returned or it
 * is cancelled. */
typedef struct ld_store_call ld_store_call_t;

/* The answer to one query (see above for `err` and the made-up statuses). `res` is never NULL
 * and is cleared after the call returns; to keep it, move it out (`mine = *res;
 * ld_store_response_init(res);`) and ld_store_response_clear it later. */
typedef void (*ld_store_client_fn)(int err, ld_store_response_t *res, void *user_data);

/* Sends `q` (copied; a NULL request_id gets a generated one) to `to`. `opts` NULL: defaults.
 * *out (may be NULL) receives the handle for ld_store_client_cancel. Returns 0, or
 * LD_ERR_INVALID_ARG (NULL arguments, no target, a malformed query, an all-zero cursor — nwaku's
 * "invalid cursor"), LD_ERR_LIMIT (over the codec's caps), LD_ERR_NOMEM, or the direct errors
 * of ld_switch_dial / ld_switch_open_stream (LD_ERR_CLOSED, …); then `cb` is never called. */
int ld_store_client_query(ld_switch_t *sw, const ld_store_target_t *to, const ld_store_query_t *q,
                          const ld_store_client_opts_t *opts, ld_store_client_fn cb,
                          void *user_data, ld_store_call_t **out);

/* A page of ld_store_client_query_all (status 200). Return true for the next page, false to
 * stop. `page` is cleared after the call returns (it may be moved out, as above). */
typedef bool (*ld_store_page_fn)(ld_store_response_t *page, void *user_data);

/* The end of ld_store_client_query_all: err 0 and status 200 when every page was read (or the
 * page callback stopped, or max_pages pages were read); err 0 and the server's status and
 * description when a page was refused; err < 0 and the made-up status for a failure. `desc`
 * is valid only during the call. `pages` counts the 200 pages delivered. */
typedef void (*ld_store_all_fn)(int err, uint32_t status, const char *desc, size_t pages,
                                void *user_data);

/* Reads every page of `q` in turn on one connection (dialled once when `to` has an address),
 * repeating the criteria with each next cursor (opts->paging says which). The starting cursor,
 * if any, is taken from `q`. Returns and fails as ld_store_client_query; then neither callback
 * is called. */
int ld_store_client_query_all(ld_switch_t *sw, const ld_store_target_t *to,
                              const ld_store_query_t *q, const ld_store_client_opts_t *opts,
                              ld_store_page_fn page, ld_store_all_fn done, void *user_data,
                              ld_store_call_t **out);

/* Ends a call early: no callback is called afterwards; its stream is reset. Must not be called
 * after the final callback, nor from inside any callback of the call (a page callback stops the
 * paging by returning false). */
void ld_store_client_cancel(ld_store_call_t *call);

/* Fills `res` (initialised; cleared first) with the made-up response for client failure `err`
 * (see above) as an owned response; `peer` names the peer in "PEER_DIAL_FAILURE: <peer>" (NULL:
 * "unknown"). For the REST API, which reports failures this way too. LD_ERR_NOMEM or 0. */
int ld_store_client_error_response(int err, const char *peer, ld_store_response_t *res);

/* The made-up status for client failure `err`: LD_STORE_STATUS_PEER_DIAL_FAILURE for the dial
 * and negotiation errors (LD_ERR_UNREACHABLE, LD_ERR_REFUSED, LD_ERR_HANDSHAKE,
 * LD_ERR_PEER_ID_MISMATCH, LD_ERR_PROTOCOL_UNSUPPORTED, LD_ERR_NEGOTIATION_FAILED, …),
 * LD_STORE_STATUS_BAD_REQUEST for LD_ERR_INVALID_ARG and LD_ERR_LIMIT, otherwise
 * LD_STORE_STATUS_BAD_RESPONSE. */
uint32_t ld_store_client_error_status(int err);

#endif
