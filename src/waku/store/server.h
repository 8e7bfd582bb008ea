/* Waku store v3 service: answers /vac/waku/store-query/3.0.0 queries from a message backend (the
 * archive, through a thin adapter the node installs).
 *
 * One request per stream: the peer writes one length-prefixed StoreQueryRequest (js-waku then
 * half-closes, nwaku does not), the server reads that one frame, asks the backend, writes one
 * length-prefixed StoreQueryResponse and half-closes. The backend answers asynchronously, so
 * the stream is driven here (not through ld_reqresp_serve, whose handler answers at once).
 * Responses larger than a stream's buffer are written in pieces as the stream drains.
 *
 * Answers, as nwaku gives them:
 * - 200 "OK", request_id echoed, entries in ascending (timestamp, hash) order whatever the
 *   direction, each with its hash, and with its message and pubsub topic when include_data is
 *   set; the cursor (hash of the last entry in query direction) when more results exist.
 * - 400 "decoding rpc failed: <why>" with an empty request_id: the request frame does not
 *   decode (also a frame over LD_STORE_MAX_REQUEST_BYTES or a malformed length prefix).
 * - 200 "OK" with no entries and no cursor when time_start is after time_end (nwaku's driver
 *   finds no row; a cursor is still looked up first, so an unknown one gets "cursor not found").
 * - 300 "BAD_RESPONSE: archive error: INVALID_QUERY: <cause>" or "…: DRIVER_ERROR: <cause>"
 *   with an empty request_id: the query is refused by the checks nwaku's archive makes ("all
 *   zeroes cursor hash", "too many content topics" — more than
 *   LD_STORE_MAX_CURSOR_CONTENT_TOPICS with a cursor), or by the backend (LD_ERR_INVALID_ARG is
 *   INVALID_QUERY, any other error DRIVER_ERROR with the backend's reason, e.g. "cursor not
 *   found"), or the backend did not answer within query_timeout_ms (DRIVER_ERROR "timed out").
 *   A cursor that is not 32 bytes long is read as nwaku's decoder reads it: zero-padded or cut
 *   to 32 bytes (so a short one is "all zeroes cursor hash" or "cursor not found").
 * - 429 "TOO_MANY_REQUESTS" with request_id "N/A": the peer already has
 *   max_queries_per_peer queries at the backend, or the server max_queries in total.
 * - 503 "SERVICE_UNAVAILABLE: not supported by this store node: <functions>" with the
 *   request_id echoed: the query needs a function in `disabled_functions` (functions.h maps a
 *   query onto the key-value, key-presence and wayback functions; the names of the disabled
 *   ones it needs follow the colon). nwaku's StoreError has no "not supported" kind; 503 is the
 *   one its clients read as the service being unavailable, and js-waku throws with the code and
 *   description. Checked before the query takes a concurrency slot or reaches the backend.
 * A stream that ends before a whole request frame arrived, or stays silent for
 * read_timeout_ms, gets no answer (nwaku's read error): it is half-closed or reset. js-waku
 * pre-opens streams and opens a fresh one when an idle one was reset.
 *
 * Direction: an absent field 52 reads as backward (the spec), unless `absent_forward` is set.
 * js-waku omits the field for backward queries and takes the first entry of each page as the
 * next cursor, so only this reading pages it correctly; an nwaku client always writes the field.
 * (The implementation digest reads nwaku's decoder as mapping absence to forward; js-waku's
 * paging against a real node is what decides here.)
 *
 * Page size: absent or 0 → 20, above 100 → 100. A page whose encoding would exceed
 * max_response_bytes is cut short (the newest entries of a forward page, the oldest of a
 * backward one) and the cursor set to the last entry kept in query direction, so that js-waku
 * (which refuses frames over 4 MiB) can read every page; at least one entry is always kept. A
 * backend result of more than LD_STORE_MAX_PAGE_SIZE rows is cut the same way.
 *
 * Threading: every function must be called on the switch's loop thread; callbacks (the
 * backend's `done`, local query results) come from that loop. */
#ifndef LD_WAKU_STORE_SERVER_H
#define LD_WAKU_STORE_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/switch.h"
#include "waku/archive/archive.h"
#include "waku/store/codec.h"
#include "waku/store/functions.h"

/* Defaults of ld_store_server_config_t. */
#define LD_STORE_DEFAULT_MAX_QUERIES 64
#define LD_STORE_DEFAULT_MAX_QUERIES_PER_PEER 8
/* Inbound store streams open at once (waiting for a request, querying, or writing). */
#define LD_STORE_DEFAULT_MAX_STREAMS 1024
/* js-waku's it-length-prefixed refuses frames over 4 MiB. */
#define LD_STORE_DEFAULT_MAX_RESPONSE_BYTES (4u * 1024 * 1024)
#define LD_STORE_DEFAULT_READ_TIMEOUT_MS 30000
#define LD_STORE_DEFAULT_QUERY_TIMEOUT_MS 30000
#define LD_STORE_DEFAULT_WRITE_TIMEOUT_MS 30000

/* Where messages come from. `query` starts `q` (valid only during the call; copy what is
 * needed) and returns 0, then calls `done` exactly once, later, from the loop (a synchronous
 * call from inside `query` is tolerated); or returns an error and never calls `done` (answered
 * as DRIVER_ERROR). The contract is ld_archive_query's: results in ascending order, the cursor
 * set when more rows exist, errors with a reason. */
typedef struct ld_store_backend {
  int (*query)(void *ctx, const ld_archive_query_t *q, ld_archive_query_fn done, void *user_data);
  void *ctx;
} ld_store_backend_t;

typedef struct ld_store_server_config {
  size_t max_queries;          /* at the backend at once, all peers; 0: default */
  size_t max_queries_per_peer; /* at the backend at once, one peer; 0: default */
  size_t max_streams;          /* inbound streams open at once; 0: default; more are reset */
  size_t max_response_bytes;   /* response frame body; 0: default; see "Page size" above */
  uint32_t read_timeout_ms;    /* the request frame must arrive within; 0: default */
  uint32_t query_timeout_ms;   /* the backend must answer within; 0: default */
  uint32_t write_timeout_ms;   /* the response must be taken within; 0: default */
  bool absent_forward;         /* absent field 52 reads as forward; default false (backward) */
  uint32_t disabled_functions; /* LD_STORE_FN_* (functions.h) answered 503; 0: all served */
} ld_store_server_config_t;

void ld_store_server_config_default(ld_store_server_config_t *cfg);

typedef struct ld_store_server ld_store_server_t;

/* Creates the service and registers LD_STORE_PROTOCOL on `sw`. `backend` is copied (its ctx is
 * borrowed and must outlive the server); `cfg` is copied (NULL: defaults). NULL on a NULL
 * argument, allocation failure, or when the protocol is already registered. The switch cannot
 * drop handlers, so the server lives as long as the switch: free it only after ld_switch_close
 * has called its `done`. */
ld_store_server_t *ld_store_server_new(ld_switch_t *sw, const ld_store_backend_t *backend,
                                       const ld_store_server_config_t *cfg);

/* Frees the server. Queries still at the backend are detached: their `done` is still expected
 * and is then ignored (the backend must outlive them, as it must outlive the server). Pending
 * local queries never get their callback. NULL is a no-op. */
void ld_store_server_free(ld_store_server_t *srv);

/* ---- queries without the network ------------------------------------------------------------- */

/* The answer to a local query: the response as the server would send it (status, description,
 * entries, cursor). `res` is valid only during the call; its messages borrow the backend's
 * result. */
typedef void (*ld_store_local_fn)(const ld_store_response_t *res, void *user_data);

/* Answers `q` (copied as needed; a NULL request_id is echoed as "") from the backend with the
 * same checks and translation as a query from the network, without the concurrency caps: what a
 * node's REST API does for /store/v3/messages without peerAddr. Returns 0 (then `done` is called
 * once, from the loop), or LD_ERR_INVALID_ARG (NULL argument, arrays NULL with counts, more than
 * the codec's caps) / LD_ERR_NOMEM, with `done` never called. */
int ld_store_server_query_local(ld_store_server_t *srv, const ld_store_query_t *q,
                                ld_store_local_fn done, void *user_data);

/* ---- figures --------------------------------------------------------------------------------- */

/* Error kinds, as nwaku labels waku_store_errors{type} where it has a label. */
typedef enum ld_store_error_kind {
  LD_STORE_ERROR_DECODE = 0,    /* "decode_rpc_failure": 400 */
  LD_STORE_ERROR_INVALID_QUERY, /* "invalid_query": 300 INVALID_QUERY */
  LD_STORE_ERROR_DRIVER,        /* "driver_error": 300 DRIVER_ERROR (timeouts included) */
  LD_STORE_ERROR_TOO_MANY,      /* "too_many_requests": 429 */
  LD_STORE_ERROR_READ,          /* "read_failure": no request frame arrived */
  LD_STORE_ERROR_WRITE,         /* "write_failure": the response could not be delivered */
  LD_STORE_ERROR_DISABLED,      /* "function_disabled": 503, a disabled function (no nwaku label) */
  LD_STORE_ERROR_KIND_COUNT
} ld_store_error_kind_t;

/* The label of a kind ("decode_rpc_failure", …); "unknown" out of range. */
const char *ld_store_error_kind_name(int kind);

/* Backend latency of admitted queries (from the request decoded to the backend's answer),
 * counted in fixed buckets. */
#define LD_STORE_LATENCY_BUCKETS 16
/* Upper bounds in microseconds, increasing: 0.1 ms … 10 s. */
extern const uint32_t ld_store_latency_bounds_us[LD_STORE_LATENCY_BUCKETS];

typedef struct ld_store_server_stats {
  uint64_t streams;         /* inbound streams accepted */
  uint64_t streams_refused; /* reset because max_streams were open */
  uint64_t queries;         /* requests admitted to the backend (waku_store_queries) */
  uint64_t local_queries;   /* ld_store_server_query_local calls */
  uint64_t answered_ok;     /* 200 responses written */
  uint64_t rows;            /* entries in 200 responses */
  uint64_t trimmed;         /* pages cut short by max_response_bytes */
  uint64_t errors[LD_STORE_ERROR_KIND_COUNT];
  uint64_t bytes_in, bytes_out; /* request / response bytes, prefixes included */
  uint64_t in_flight;           /* queries at the backend now */
  /* latency[i]: observations in (bounds[i-1], bounds[i]]; latency[LD_STORE_LATENCY_BUCKETS]:
   * above the last bound. */
  uint64_t latency[LD_STORE_LATENCY_BUCKETS + 1];
  uint64_t latency_count;
  double latency_sum_s;
} ld_store_server_stats_t;

void ld_store_server_get_stats(const ld_store_server_t *srv, ld_store_server_stats_t *out);

#endif
