/* Waku filter v2 (12/WAKU2-FILTER) wire codec: FilterSubscribeRequest, FilterSubscribeResponse
 * and MessagePush (proto/filter.proto), the status codes and their "<KIND>: <cause>" texts.
 *
 * Encoders write what nwaku writes: a request always carries request_id (1) and the type (2,
 * also when 0 = SUBSCRIBER_PING), then pubsub_topic (10) when set and one field 11 per content
 * topic; a response carries request_id (1), status_code (10) and status_desc (11) when given; a
 * push carries waku_message (1) then pubsub_topic (2). Every encoder appends one length-prefixed
 * frame (uvarint length ‖ body), the unit written on a stream.
 *
 * Decoders take a frame *body* (the bytes after the length prefix, see ld_reqresp_read_frame)
 * and walk it with the bounds-checked cursor in nwaku's protobuf dialect: unknown fields and
 * known fields sent with another wire type are skipped, a repeated scalar field keeps its last
 * occurrence, varints may be non-minimal. They return views into the body (no copies, strings
 * are NOT NUL-terminated and may hold any bytes), so the body must outlive the result. They do
 * not allocate, which is why they are written against the cursor rather than protobuf-c: a
 * request of 1.6 MB could otherwise make us allocate hundreds of thousands of strings.
 *
 * Pure functions, any thread. */
#ifndef LD_WAKU_FILTER_CODEC_H
#define LD_WAKU_FILTER_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "waku/core/codecs.h"
#include "waku/core/message.h"

#define LD_FILTER_SUBSCRIBE_PROTOCOL LD_WAKU_FILTER_SUBSCRIBE_CODEC
#define LD_FILTER_PUSH_PROTOCOL LD_WAKU_FILTER_PUSH_CODEC

/* Content topics one SUBSCRIBE/UNSUBSCRIBE may carry (nwaku MaxContentTopicsPerRequest); more
 * are answered with 400. */
#define LD_FILTER_MAX_CONTENT_TOPICS 100
/* Frame body caps nwaku reads with: requests and pushes 10 × 150 KiB + 64 KiB
 * (DefaultMaxSubscribeSize, DefaultMaxPushSize), responses 64 KiB. */
#define LD_FILTER_MAX_REQUEST_SIZE (10u * LD_WAKU_DEFAULT_MAX_MSG_SIZE + LD_WAKU_PROTOCOL_OVERHEAD)
#define LD_FILTER_MAX_PUSH_SIZE (10u * LD_WAKU_DEFAULT_MAX_MSG_SIZE + LD_WAKU_PROTOCOL_OVERHEAD)
#define LD_FILTER_MAX_RESPONSE_SIZE (64u * 1024)
/* Length of the request IDs our client generates: 10 random bytes in lowercase hex (nwaku). */
#define LD_FILTER_REQUEST_ID_LEN 20
/* Room for a status description we produce ("<KIND>: <cause>" plus NUL). */
#define LD_FILTER_STATUS_DESC_MAX 128

/* Request types (FilterSubscribeType). */
typedef enum ld_filter_request_type {
  LD_FILTER_SUBSCRIBER_PING = 0,
  LD_FILTER_SUBSCRIBE = 1,
  LD_FILTER_UNSUBSCRIBE = 2,
  LD_FILTER_UNSUBSCRIBE_ALL = 3,
} ld_filter_request_type_t;
#define LD_FILTER_REQUEST_TYPES 4

/* Status codes (nwaku FilterSubscribeErrorKind, plus 200). 300, 504 and 0 are produced by
 * clients locally, never sent by a service. */
#define LD_FILTER_STATUS_UNKNOWN 0u
#define LD_FILTER_STATUS_OK 200u
#define LD_FILTER_STATUS_BAD_RESPONSE 300u
#define LD_FILTER_STATUS_BAD_REQUEST 400u
#define LD_FILTER_STATUS_NOT_FOUND 404u
#define LD_FILTER_STATUS_TOO_MANY_REQUESTS 429u
#define LD_FILTER_STATUS_SERVICE_UNAVAILABLE 503u
#define LD_FILTER_STATUS_PEER_DIAL_FAILURE 504u

/* The request ID and description of nwaku's rate-limit answer (429). */
#define LD_FILTER_RATE_LIMITED_REQUEST_ID "N/A"
#define LD_FILTER_RATE_LIMITED_DESC "filter request rejected due rate limit exceeded"

/* "SUBSCRIBER_PING", "SUBSCRIBE", "UNSUBSCRIBE", "UNSUBSCRIBE_ALL", or "UNKNOWN". Static. */
const char *ld_filter_request_type_name(uint32_t type);

/* "OK" for 200, the kind for the others ("BAD_REQUEST", "NOT_FOUND", "TOO_MANY_REQUESTS",
 * "SERVICE_UNAVAILABLE", "BAD_RESPONSE", "PEER_DIAL_FAILURE"), "UNKNOWN" for anything else.
 * Static. */
const char *ld_filter_status_kind(uint32_t code);

/* A status and its description as nwaku words it: "OK" for 200, "<KIND>: <cause>" otherwise
 * ("UNKNOWN" alone for an unknown code). Value type. */
typedef struct ld_filter_status {
  uint32_t code;
  char desc[LD_FILTER_STATUS_DESC_MAX];
} ld_filter_status_t;

/* Sets `st` to `code` with the printf-formatted cause (NULL for none); the description is cut to
 * fit LD_FILTER_STATUS_DESC_MAX. */
void ld_filter_status_set(ld_filter_status_t *st, uint32_t code, const char *cause_fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A borrowed byte string (not NUL-terminated). */
typedef struct ld_filter_str {
  const char *data;
  size_t len;
} ld_filter_str_t;

/* ---- FilterSubscribeRequest ----------------------------------------------------------------- */

typedef struct ld_filter_request {
  ld_filter_str_t request_id;
  uint32_t type; /* ld_filter_request_type_t */
  bool has_pubsub_topic;
  ld_filter_str_t pubsub_topic;
  /* How many content topics the request carried. Only the first
   * min(n_content_topics, LD_FILTER_MAX_CONTENT_TOPICS) are kept in `content_topics`. */
  size_t n_content_topics;
  ld_filter_str_t content_topics[LD_FILTER_MAX_CONTENT_TOPICS];
} ld_filter_request_t;

/* Appends the framed request. Topics beyond LD_FILTER_MAX_CONTENT_TOPICS in `req` are not
 * available here; use ld_filter_request_encode_topics to send more (tests of the 400 answer).
 * Returns 0, LD_ERR_INVALID_ARG (NULL view with a nonzero length) or LD_ERR_NOMEM (`out`
 * unchanged). */
int ld_filter_request_encode(const ld_filter_request_t *req, ld_buf_t *out);

/* The same from separate arguments: `pubsub_topic` NULL for none; `topics` holds `n` views (any
 * count). */
int ld_filter_request_encode_topics(const ld_filter_str_t *request_id, uint32_t type,
                                    const ld_filter_str_t *pubsub_topic,
                                    const ld_filter_str_t *topics, size_t n, ld_buf_t *out);

/* Decodes a request body into `out` (overwritten; views into `body`). An absent type is
 * SUBSCRIBER_PING. Errors: LD_ERR_BAD_PROTOBUF (malformed protobuf), LD_ERR_MISSING_FIELD (no
 * request_id), LD_ERR_MALFORMED (a type outside 0..3). nwaku answers none of these. */
int ld_filter_request_decode(const uint8_t *body, size_t len, ld_filter_request_t *out);

/* ---- FilterSubscribeResponse ---------------------------------------------------------------- */

typedef struct ld_filter_response {
  ld_filter_str_t request_id;
  uint32_t status_code;
  bool has_status_desc;
  ld_filter_str_t status_desc;
} ld_filter_response_t;

/* Appends the framed response; `status_desc` NULL leaves field 11 out. Returns 0 or
 * LD_ERR_INVALID_ARG / LD_ERR_NOMEM (`out` unchanged). */
int ld_filter_response_encode(const ld_filter_str_t *request_id, uint32_t status_code,
                              const char *status_desc, ld_buf_t *out);

/* Decodes a response body. An absent request_id reads as empty (the caller's request-ID check
 * catches it); status_code is required. Errors: LD_ERR_BAD_PROTOBUF, LD_ERR_MISSING_FIELD. */
int ld_filter_response_decode(const uint8_t *body, size_t len, ld_filter_response_t *out);

/* ---- MessagePush ---------------------------------------------------------------------------- */

typedef struct ld_filter_push_frame {
  ld_filter_str_t pubsub_topic;
  const uint8_t *message; /* serialized WakuMessage: decode with ld_waku_message_decode */
  size_t message_len;
} ld_filter_push_frame_t;

/* Appends the framed MessagePush of `msg` (encoded nwaku-style, no size cap) on `pubsub_topic`
 * (`topic_len` bytes). Returns 0, LD_ERR_INVALID_ARG, LD_ERR_FIELD_TOO_LONG (meta over 64
 * bytes) or LD_ERR_NOMEM (`out` unchanged). */
int ld_filter_push_encode(const char *pubsub_topic, size_t topic_len, const ld_waku_message_t *msg,
                          ld_buf_t *out);

/* Decodes a MessagePush body. Both fields are required (nwaku and js-waku). Errors:
 * LD_ERR_BAD_PROTOBUF, LD_ERR_MISSING_FIELD. */
int ld_filter_push_decode(const uint8_t *body, size_t len, ld_filter_push_frame_t *out);

#endif
