/* Waku store v3 (/vac/waku/store-query/3.0.0): the StoreQueryRequest and StoreQueryResponse
 * messages (proto/store.proto, nwaku's field numbers) as C values, and their codec.
 *
 * Encoding (protobuf-c) writes what nwaku's decoders require and what nwaku itself writes:
 * request_id always (possibly empty), include_data and pagination_forward always, as varints
 * 0/1 (nwaku reads a missing field 52 as forward while the spec reads it as backward, so it is
 * never left out); the other request fields only when set. A response always carries
 * request_id, status_code and status_desc; every entry its 32-byte hash, and the message with
 * its pubsub topic when it has them (both or neither).
 *
 * Decoding walks the bytes with the bounds-checked cursor in nwaku's protobuf dialect: unknown
 * fields and known fields sent with another wire type are skipped, a singular field that repeats
 * keeps its last occurrence, absent fields read as empty or zero. Every count and length a peer
 * controls is checked against the caps below before anything is allocated. Only request_id is
 * required in a request (as nwaku); a response is read leniently (missing status fields read as
 * 0 and ""), but each entry must carry a 32-byte hash, since clients page with it.
 *
 * Frames: both messages travel as one unsigned-varint length-prefixed frame per stream
 * direction; the encoders append the frame, the decoders take the body (see
 * ld_reqresp_read_frame).
 *
 * All functions are pure and may be called from any thread; a value is used by one thread at a
 * time. */
#ifndef LD_WAKU_STORE_CODEC_H
#define LD_WAKU_STORE_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "waku/core/codecs.h"
#include "waku/core/message.h"

#define LD_STORE_PROTOCOL LD_WAKU_STORE_CODEC

/* ---- caps and defaults ----------------------------------------------------------------------- */

/* Page sizes (nwaku DefaultPageSize / MaxPageSize): a limit absent or 0 means the default, a
 * larger one is clamped to the maximum. */
#define LD_STORE_DEFAULT_PAGE_SIZE 20
#define LD_STORE_MAX_PAGE_SIZE 100
/* Content topics nwaku allows in a query that carries a cursor (MaxContentTopicsPerQuery). */
#define LD_STORE_MAX_CURSOR_CONTENT_TOPICS 10
/* Content topics a request may carry at all (nwaku has no cap without a cursor; this bounds
 * what a peer can make us allocate). */
#define LD_STORE_MAX_CONTENT_TOPICS 100
/* Hashes per lookup: each exactly LD_WAKU_HASH_LEN bytes. */
#define LD_STORE_MAX_HASHES 100
/* Longest request ID accepted (nwaku writes 20 hex digits, js-waku a 36-character UUID). */
#define LD_STORE_MAX_REQUEST_ID_LEN 256
/* Body of a request frame at most: 100 hashes and 100 topics fit with room to spare. */
#define LD_STORE_MAX_REQUEST_BYTES (64u * 1024)
/* Entries a response may carry (a page is at most LD_STORE_MAX_PAGE_SIZE). */
#define LD_STORE_MAX_RESPONSE_ENTRIES LD_STORE_MAX_PAGE_SIZE
/* Entry overhead besides its message: hash, pubsub topic, tags and lengths. */
#define LD_STORE_ENTRY_OVERHEAD 1024u
/* Body of a response frame at most, for a maximum page of maximum-size messages: nwaku reads
 * store frames without a limit, so a client accepts a full page of 150 KiB messages. */
#define LD_STORE_MAX_RESPONSE_BYTES                                                                \
  ((size_t)LD_STORE_MAX_PAGE_SIZE * (LD_WAKU_DEFAULT_MAX_MSG_SIZE + LD_STORE_ENTRY_OVERHEAD) +     \
   LD_WAKU_PROTOCOL_OVERHEAD)

/* Status codes (nwaku waku_store/common.nim). 503, 504 and 0 are produced by clients only. */
#define LD_STORE_STATUS_UNKNOWN 0
#define LD_STORE_STATUS_OK 200
#define LD_STORE_STATUS_BAD_RESPONSE 300
#define LD_STORE_STATUS_BAD_REQUEST 400
#define LD_STORE_STATUS_TOO_MANY_REQUESTS 429
#define LD_STORE_STATUS_SERVICE_UNAVAILABLE 503
#define LD_STORE_STATUS_PEER_DIAL_FAILURE 504

/* ---- request --------------------------------------------------------------------------------- */

/* A StoreQueryRequest.
 *
 * Ownership: a query built by a caller borrows its strings and arrays (`storage` NULL; they
 * must outlive every use). A decoded query owns one block holding all of them (`storage`);
 * release it with ld_store_query_clear. Strings are NUL-terminated (a decoded string containing
 * a NUL byte is refused). Build one with ld_store_query_init and fill the fields. */
typedef struct ld_store_query {
  const char *request_id;   /* NULL: none (a client generates one; the encoder writes "") */
  bool include_data;        /* entries carry their message and pubsub topic */
  const char *pubsub_topic; /* NULL: absent */
  const char *const *content_topics;
  size_t n_content_topics; /* ≤ LD_STORE_MAX_CONTENT_TOPICS */
  bool has_time_start;
  int64_t time_start; /* Unix ns, inclusive */
  bool has_time_end;
  int64_t time_end; /* Unix ns, inclusive (nwaku) */
  const uint8_t (*hashes)[LD_WAKU_HASH_LEN];
  size_t n_hashes; /* ≤ LD_STORE_MAX_HASHES; lookup / presence query */
  bool has_cursor;
  uint8_t cursor[LD_WAKU_HASH_LEN]; /* hash of the last entry seen, exclusive */
  /* Decoding: the cursor's length on the wire (its first 32 bytes are in `cursor`, zero-padded,
   * which is how nwaku's decoder reads it). Encoding: ignored, 32 bytes are written. */
  size_t cursor_len;
  bool forward;     /* true: ascending (timestamp, hash) order */
  bool has_forward; /* decoding: field 52 was present (absent reads as forward, see server.h) */
  bool has_limit;
  uint64_t limit; /* page size asked for; see LD_STORE_DEFAULT_PAGE_SIZE */
  void *storage;  /* private: owned block of a decoded query, NULL when borrowed */
} ld_store_query_t;

/* Makes `q` an empty borrowed query: no filters, forward, include_data false, no limit. */
void ld_store_query_init(ld_store_query_t *q);

/* Releases a decoded query's storage (no-op for a borrowed one) and re-initialises it. */
void ld_store_query_clear(ld_store_query_t *q);

/* The page size a server applies to `limit`: 0 → LD_STORE_DEFAULT_PAGE_SIZE, above
 * LD_STORE_MAX_PAGE_SIZE → LD_STORE_MAX_PAGE_SIZE. */
uint32_t ld_store_page_size(bool has_limit, uint64_t limit);

/* Appends one frame holding the request to `out`. Errors (nothing appended):
 * LD_ERR_INVALID_ARG (NULL arguments, NULL arrays with a nonzero count, a NULL topic),
 * LD_ERR_LIMIT (more than LD_STORE_MAX_CONTENT_TOPICS topics or LD_STORE_MAX_HASHES hashes, a
 * request ID longer than LD_STORE_MAX_REQUEST_ID_LEN), LD_ERR_TOO_LARGE (body over
 * LD_STORE_MAX_REQUEST_BYTES), LD_ERR_NOMEM. */
int ld_store_encode_request(const ld_store_query_t *q, ld_buf_t *out);

/* Decodes a request body `data[0..len)` (no length prefix; NULL allowed when len is 0) into `out`
 * (initialised; its old content is cleared first), which then owns its storage. On failure `out`
 * is left empty and *why (may be NULL) points at a static description in nwaku's words, which a
 * server puts after "decoding rpc failed: ". Errors:
 * - LD_ERR_BAD_PROTOBUF: malformed protobuf ("MessageIncomplete", "VarintDecode",
 *   "BadWireType", "IncorrectBlob <field>" for a string holding a NUL byte);
 * - LD_ERR_MISSING_FIELD: no request_id ("MissingRequiredField request_id");
 * - LD_ERR_FIELD_TOO_LONG / LD_ERR_LIMIT: a hash not 32 bytes long, too many hashes or content
 *   topics, a request ID over the cap ("InvalidLengthField <field>");
 * - LD_ERR_TOO_LARGE: len over LD_STORE_MAX_REQUEST_BYTES ("MessageTooBig");
 * - LD_ERR_INVALID_ARG, LD_ERR_NOMEM. */
int ld_store_decode_request(const uint8_t *data, size_t len, ld_store_query_t *out,
                            const char **why);

/* ---- response -------------------------------------------------------------------------------- */

/* One WakuMessageKeyValue. `pubsub_topic` is NULL when the entry carries only its hash (a
 * presence query, include_data false); otherwise `message` is set too. */
typedef struct ld_store_entry {
  uint8_t hash[LD_WAKU_HASH_LEN];
  const char *pubsub_topic;
  ld_waku_message_t message; /* owned in a decoded response, borrowed when building one */
} ld_store_entry_t;

/* A StoreQueryResponse.
 *
 * Ownership: a response built for encoding borrows everything (`storage` NULL). A decoded
 * response owns its strings, its entries and their messages; release them with
 * ld_store_response_clear. The struct holds no pointer to itself, so it may be moved by plain
 * assignment (then ld_store_response_init the source). */
typedef struct ld_store_response {
  const char *request_id;  /* never NULL once decoded ("" when absent) */
  uint32_t status_code;    /* LD_STORE_STATUS_*; 0 when absent */
  const char *status_desc; /* never NULL once decoded */
  ld_store_entry_t *entries;
  size_t n_entries; /* ascending (timestamp, hash) as servers send them */
  bool has_cursor;
  uint8_t cursor[LD_WAKU_HASH_LEN]; /* present: more results; pass it in the next query */
  void *storage;                    /* private */
} ld_store_response_t;

/* Makes `res` an empty borrowed response (status 0, no entries, strings NULL). */
void ld_store_response_init(ld_store_response_t *res);

/* Releases a decoded response (entries, messages, strings; no-op for a borrowed one) and
 * re-initialises it. */
void ld_store_response_clear(ld_store_response_t *res);

/* Bytes one entry adds to an encoded response (tag, length prefix and body). */
size_t ld_store_entry_wire_len(const ld_store_entry_t *e);

/* Appends one frame holding the response to `out`: request_id ("" when NULL), status_code,
 * status_desc ("" when NULL), the entries in order, the cursor when set. Messages are encoded
 * nwaku-style without a size cap. Errors (nothing appended): LD_ERR_INVALID_ARG (NULL
 * arguments, entries NULL with n_entries > 0, malformed message views), LD_ERR_FIELD_TOO_LONG (a
 * message's meta over 64 bytes), LD_ERR_NOMEM. */
int ld_store_encode_response(const ld_store_response_t *res, ld_buf_t *out);

/* Decodes a response body `data[0..len)` (no length prefix) into `out` (initialised; cleared
 * first), which then owns everything. Messages are decoded leniently with `max_msg_size` as
 * their cap (0 = LD_WAKU_DEFAULT_MAX_MSG_SIZE). An entry with a message but no pubsub topic, or
 * the reverse, keeps only its hash (nwaku). Errors (`out` left empty): LD_ERR_BAD_PROTOBUF
 * (malformed, also inside an entry or its message), LD_ERR_MISSING_FIELD (an entry without a
 * hash), LD_ERR_FIELD_TOO_LONG (a hash or cursor not 32 bytes, a message's meta over 64
 * bytes), LD_ERR_LIMIT (more than LD_STORE_MAX_RESPONSE_ENTRIES entries), LD_ERR_TOO_LARGE (a
 * message over its cap), LD_ERR_INVALID_ARG, LD_ERR_NOMEM. */
int ld_store_decode_response(const uint8_t *data, size_t len, size_t max_msg_size,
                             ld_store_response_t *out);

/* The text nwaku gives a status code: "OK", "BAD_RESPONSE", "BAD_REQUEST", "TOO_MANY_REQUESTS",
 * "SERVICE_UNAVAILABLE", "PEER_DIAL_FAILURE", otherwise "UNKNOWN". Static. */
const char *ld_store_status_name(uint32_t status);

#endif
