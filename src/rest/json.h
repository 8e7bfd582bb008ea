/* JSON for the REST API (jansson): request bodies, nwaku's RelayWakuMessage in both directions,
 * and text that must become a JSON string whatever bytes it holds.
 *
 * Numbers: jansson keeps JSON integers as 64-bit integers (JSON_DECODE_INT_AS_REAL is never
 * set), so nanosecond timestamps beyond 2^53 keep every digit; an integer beyond the int64 range
 * is a decode error, and a number with a fraction or exponent is a real, never a timestamp.
 *
 * Pure functions; any thread. */
#ifndef LD_REST_JSON_H
#define LD_REST_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "waku/core/message.h"

/* Room for the error texts below. */
#define LD_REST_ERR_MAX 256
/* Entries accepted in one JSON array of topics or addresses. */
#define LD_REST_MAX_LIST 1024

/* Parses a request body as nwaku's decodeRequestBody does. `content_type` is the request's
 * Content-Type header (NULL: accepted as JSON); its media type must be application/json or
 * text/plain. Duplicate object keys are refused (nwaku refuses repeated fields). On success
 * stores a new reference in *out. Errors, with nwaku's text in `err`: LD_ERR_INVALID_ARG
 * ("Missing content body"), LD_ERR_UNSUPPORTED ("Wrong Content-Type, expected application/json
 * or text/plain"), LD_ERR_MALFORMED ("Invalid content body, could not decode: …"). */
int ld_rest_json_parse(const uint8_t *body, size_t len, const char *content_type, json_t **out,
                       char *err, size_t errcap);

/* Reads a JSON array of strings (at most LD_REST_MAX_LIST). On success stores borrowed pointers
 * (valid while `json` lives) in a new array *out (free it with free(); NULL when empty) and the
 * count in *n. LD_ERR_MALFORMED (not an array of strings), LD_ERR_LIMIT, LD_ERR_NOMEM; `err`
 * says which. */
int ld_rest_json_strings(const json_t *json, const char ***out, size_t *n, char *err,
                         size_t errcap);

/* Decodes nwaku's RelayWakuMessage object into `out` (initialised; becomes an owned message):
 * payload (base64, required and not blank), contentTopic (required, not blank), version (0 ..
 * 2^32-1), timestamp (int64 nanoseconds; missing or 0 becomes `now_ns`), meta (base64, at most
 * LD_WAKU_MAX_META_LEN bytes), ephemeral (bool), proof (base64); unknown fields are ignored,
 * null is not a value. `require_content_topic` false lets a missing content topic become nwaku's
 * default content topic. Errors (`out` left empty, the reason in `err`): LD_ERR_MALFORMED,
 * LD_ERR_BAD_ENCODING (base64), LD_ERR_TOO_LARGE (decoded payload over `max_payload` bytes;
 * 0: no cap), LD_ERR_NOMEM. */
int ld_rest_message_from_json(const json_t *json, int64_t now_ns, bool require_content_topic,
                              size_t max_payload, ld_waku_message_t *out, char *err, size_t errcap);

/* Encodes `msg` as nwaku's GET answers do: payload, contentTopic, version, timestamp, meta (only
 * when not empty), ephemeral, proof, in that order. NULL when out of memory. */
json_t *ld_rest_message_to_json(const ld_waku_message_t *msg);

/* The same fields in the same order, but version, timestamp, ephemeral and proof only when set
 * (≠ 0, true, not empty): the Messaging API's form. NULL when out of memory. */
json_t *ld_rest_message_to_sparse_json(const ld_waku_message_t *msg);

/* A JSON string of `text[0..len)`, with every byte sequence that is not valid UTF-8 replaced by
 * U+FFFD (content topics from the network may hold any bytes); `text` NULL gives "". NULL when
 * out of memory. */
json_t *ld_rest_json_string(const char *text, size_t len);

/* Decodes standard base64 whose '=' padding may be missing (nwaku accepts both) into a new buffer
 * *out (free it with free(); never NULL on success) and its length in *outlen. Returns 0,
 * LD_ERR_BAD_ENCODING (not base64, or a length that is 1 mod 4) or LD_ERR_NOMEM. */
int ld_rest_base64_decode(const char *text, size_t len, uint8_t **out, size_t *outlen);

/* A JSON string of `data[0..len)` in standard base64 with padding. NULL when out of memory. */
json_t *ld_rest_json_base64(const uint8_t *data, size_t len);

/* A JSON string of `hash` in lowercase hex with the 0x prefix (ld_waku_hash_to_hex). NULL when
 * out of memory. */
json_t *ld_rest_json_hash(const uint8_t hash[LD_WAKU_HASH_LEN]);

/* Sets obj[key] = value, taking the reference to `value` whatever happens (jansson's
 * json_object_set_new). Returns 0, or -1 when `value` is NULL (a failed constructor) or the set
 * fails; callers OR the results of a run of sets and check once. */
int ld_rest_json_set(json_t *obj, const char *key, json_t *value);

/* Whether `s` holds only ASCII white space (or nothing): nwaku's isEmptyOrWhitespace. */
bool ld_rest_is_blank(const char *s, size_t len);

#endif
