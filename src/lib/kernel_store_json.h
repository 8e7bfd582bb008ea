/* The JSON of waku_store_query (c-api.md §3): the `jsonQuery` object parsed into a store v3
 * query, and a StoreQueryResponse rendered as the reply text.
 *
 * jsonQuery keys (other keys are ignored; a JSON null counts as absent):
 *   requestId          string, required
 *   includeData        bool, required
 *   pubsubTopic        string, optional
 *   contentTopics      array of strings, optional (at most LD_STORE_MAX_CONTENT_TOPICS)
 *   timeStart, timeEnd int64 nanoseconds as a JSON integer or a decimal string, optional
 *   messageHashes      array of "0x" + 64 hex digits, optional (at most LD_STORE_MAX_HASHES)
 *   paginationCursor   "0x" + 64 hex digits, optional
 *   paginationForward  bool, required
 *   paginationLimit    non-negative integer, optional
 * A value of the wrong type is refused (nwaku would read it silently as empty, false or 0).
 *
 * Reply (compact, keys in this order):
 *   {"requestId":"…","statusCode":N,"statusDesc":"…",
 *    "messages":[{"messageHash":"0x…","message":{…},"pubsubTopic":"…"},…],
 *    "paginationCursor":"0x…"}
 * `message` is nwaku's default JSON of a WakuMessage: payload, contentTopic, meta, version,
 * timestamp, ephemeral, proof, with the byte fields (payload, meta, proof) as arrays of integers
 * 0..255. Absent optional values are left out: an entry without data (includeData false) has
 * neither `message` nor `pubsubTopic`, and the last page has no `paginationCursor`.
 *
 * Pure functions; any thread. */
#ifndef LD_LIB_KERNEL_STORE_JSON_H
#define LD_LIB_KERNEL_STORE_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "waku/store/codec.h"

/* Longest jsonQuery accepted (100 hashes and 100 topics fit with room to spare). */
#define LD_KERNEL_STORE_MAX_QUERY_JSON (256u * 1024)

/* A parsed jsonQuery: `q` borrows the strings and arrays the struct owns. Release with
 * ld_kernel_store_query_clear. */
typedef struct ld_kernel_store_query {
  ld_store_query_t q;
  char *request_id;
  char *pubsub_topic;
  char **content_topics;
  size_t n_content_topics;
  uint8_t (*hashes)[LD_WAKU_HASH_LEN];
} ld_kernel_store_query_t;

/* Parses `len` bytes of `json` into `out` (any previous content is not released). Returns 0, or
 * LD_ERR_MALFORMED (not JSON, not an object, a required key missing, a value of the wrong type
 * or out of range), LD_ERR_BAD_ENCODING (a hash or cursor that is not 32 bytes of hex),
 * LD_ERR_LIMIT (too many topics or hashes, a request ID over LD_STORE_MAX_REQUEST_ID_LEN),
 * LD_ERR_TOO_LARGE (over LD_KERNEL_STORE_MAX_QUERY_JSON), LD_ERR_NOMEM; then `out` holds nothing
 * to release and `err` (may be NULL) a one-line reason, e.g. "key not found: requestId",
 * "Invalid int64 value in `timeStart`" or "Failed converting paginationCursor hex string to
 * bytes: …". */
int ld_kernel_store_query_parse(const char *json, size_t len, ld_kernel_store_query_t *out,
                                char *err, size_t errlen);

/* Releases what a successful parse allocated and zeroes `kq`. */
void ld_kernel_store_query_clear(ld_kernel_store_query_t *kq);

/* The reply text for `res` (see above): a heap string (free()), NULL when out of memory. NULL
 * strings in `res` render as "". */
char *ld_kernel_store_reply_json(const ld_store_response_t *res);

#endif
