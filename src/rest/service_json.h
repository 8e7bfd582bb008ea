/* JSON of the service endpoints (lightpush, filter, store): nwaku's request types in, nwaku's
 * response types out. Pure functions (jansson only); any thread.
 *
 * Parsers take a body already decoded by ld_rest_json_parse (so duplicate keys are refused);
 * unknown fields are ignored, as nwaku's readers only warn about them. On failure they write a
 * one-line reason into `err` (room for `errcap` bytes). */
#ifndef LD_REST_SERVICE_JSON_H
#define LD_REST_SERVICE_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rest/server.h"

/* ---- lightpush ------------------------------------------------------------------------------- */

/* nwaku's PushRequest {pubsubTopic?, message: RelayWakuMessage}. */
typedef struct ld_rest_push_request {
  const char *pubsub_topic; /* borrowed from the body; NULL when absent or "" */
  ld_waku_message_t msg;    /* owned: ld_rest_push_request_clear */
} ld_rest_push_request_t;

/* Reads a PushRequest (`out` needs no initialisation). A missing or zero timestamp becomes
 * `now_ns`. Errors (nothing to clear): LD_ERR_MALFORMED (the request: not an object, `message`
 * missing or not an object, `pubsubTopic` not a string, a message field missing, empty or of
 * the wrong type), LD_ERR_BAD_ENCODING (the message: a base64 field that does not decode),
 * LD_ERR_NOMEM. */
int ld_rest_push_request_parse(const json_t *body, int64_t now_ns, ld_rest_push_request_t *out,
                               char *err, size_t errcap);
void ld_rest_push_request_clear(ld_rest_push_request_t *r);

/* nwaku's PushResponse: {"relayPeerCount": n} for 200, otherwise {"statusDesc": desc} ({} when
 * desc is NULL). NULL when out of memory. */
json_t *ld_rest_push_response_json(uint32_t status_code, const char *status_desc,
                                   uint32_t relay_peer_count);

/* The HTTP status nwaku answers for a lightpush status code: the code itself when it is an HTTP
 * status nwaku's HTTP library knows (420 is not one), otherwise 500. */
unsigned ld_rest_push_http_status(uint32_t status_code);

/* ---- filter ---------------------------------------------------------------------------------- */

/* nwaku's FilterSubscribeRequest / FilterUnsubscribeRequest {requestId, pubsubTopic?,
 * contentFilters} and FilterUnsubscribeAllRequest {requestId}. */
typedef struct ld_rest_filter_request {
  const char *request_id;      /* borrowed from the body */
  const char *pubsub_topic;    /* borrowed; NULL when absent or "" */
  const char **content_topics; /* a new array of borrowed strings (ld_rest_filter_request_clear) */
  size_t n_content_topics;
} ld_rest_filter_request_t;

/* Reads a request; `with_topics` false reads the unsubscribe-all form (contentFilters and
 * pubsubTopic ignored). Content topics are not capped here (see
 * LD_REST_FILTER_MAX_CONTENT_TOPICS). Errors (nothing to clear): LD_ERR_MALFORMED with nwaku's
 * reason ("Field `requestId` is missing", "Field `contentFilters` is empty", …), LD_ERR_LIMIT
 * (more than LD_REST_MAX_LIST topics), LD_ERR_NOMEM. */
int ld_rest_filter_request_parse(const json_t *body, bool with_topics,
                                 ld_rest_filter_request_t *out, char *err, size_t errcap);
void ld_rest_filter_request_clear(ld_rest_filter_request_t *r);

/* nwaku's FilterSubscriptionResponse {"requestId", "statusDesc"}. NULL when out of memory. */
json_t *ld_rest_filter_response_json(const char *request_id, const char *status_desc);

/* nwaku's filter REST mapping of a completion: the HTTP status (200 for 200 and for unknown
 * codes, 500 for 300, the code itself for 400/404/429/503/504), and the description: "OK" for
 * 200, "UNKNOWN" for unknown codes, otherwise `status_desc` (or the kind's default cause when
 * NULL). */
unsigned ld_rest_filter_http_status(uint32_t status_code);
const char *ld_rest_filter_status_desc(uint32_t status_code, const char *status_desc);

/* nwaku's FilterGetMessagesResponse: [{payload, contentTopic, version, timestamp, meta?,
 * ephemeral}] (no proof). NULL when out of memory. */
json_t *ld_rest_filter_messages_json(const ld_waku_message_t *msgs, size_t n);

/* ---- store ----------------------------------------------------------------------------------- */

/* nwaku's StoreQueryResponseHex: {requestId, statusCode, statusDesc, messages: [{messageHash,
 * message?: {payload, contentTopic, meta?, version, timestamp, ephemeral, proof?},
 * pubsubTopic?}], paginationCursor?} with "0x"-hex hashes. NULL when out of memory. */
json_t *ld_rest_store_response_json(const ld_rest_store_result_t *res);

#endif
