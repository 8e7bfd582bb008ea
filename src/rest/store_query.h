/* The query string of GET /store/v3/messages, read as nwaku's createStoreQuery and
 * parseUrlPeerAddr do. Untrusted text: every value is parsed with explicit bounds (fuzzed by
 * fuzz/rest_store_query.c).
 *
 *   includeData    Nim parseBool: y/yes/true/1/on or n/no/false/0/off (case and '_' ignored);
 *                  absent: false
 *   pubsubTopic    taken as is
 *   contentTopics  comma-separated (empty items skipped), ≤ LD_REST_STORE_MAX_CONTENT_TOPICS
 *   startTime, endTime  decimal int64 nanoseconds; ≤ 0 means "not given"
 *   hashes         comma-separated hashes, ≤ LD_REST_STORE_MAX_HASHES
 *   cursor         one hash
 *   ascending      "true" (or absent): forward; anything else: backward
 *   pageSize       decimal; absent or 0: LD_REST_STORE_DEFAULT_PAGE_SIZE; clamped to
 *                  LD_REST_STORE_MAX_PAGE_SIZE; negative refused
 *   peerAddr       a multiaddr ending in /p2p/<peer id>
 * A hash is 64 hex digits with an optional "0x" prefix (nwaku's format); standard base64 of 32
 * bytes is accepted too. An empty value counts as absent, as with nwaku.
 *
 * Pure functions; any thread. */
#ifndef LD_REST_STORE_QUERY_H
#define LD_REST_STORE_QUERY_H

#include <stddef.h>

#include "rest/server.h"

/* Longest accepted value of one parameter, in bytes (the request line is capped lower by the
 * HTTP server anyway). */
#define LD_REST_STORE_MAX_PARAM (64u * 1024u)

/* The percent-decoded values, NUL-terminated; NULL when absent. */
typedef struct ld_rest_store_params {
  const char *peer_addr;
  const char *include_data;
  const char *pubsub_topic;
  const char *content_topics;
  const char *start_time;
  const char *end_time;
  const char *hashes;
  const char *cursor;
  const char *ascending;
  const char *page_size;
} ld_rest_store_params_t;

/* A parsed query and the storage its views point into. */
typedef struct ld_rest_store_request {
  ld_rest_store_query_t query;
  char *pubsub_topic;
  char *topics_text;
  const char **content_topics;
  uint8_t (*hashes)[LD_WAKU_HASH_LEN];
  ld_multiaddr_t peer_addr;
  ld_peerid_t peer_id;
} ld_rest_store_request_t;

/* Parses `params` into `out` (no initialisation needed; on success free it with
 * ld_rest_store_request_clear; query.peer_addr/peer_id point into `out`, so do not copy the
 * struct). Errors, with nwaku's reason in `err` (answered 400): LD_ERR_MALFORMED ("include data
 * parsing error: …", "time parsing error: …", "page size parsing error: …", "Exception
 * converting hex string to bytes: …", "waku message hash parsing error: invalid hash length: N",
 * "Failed parsing remote peer info: …"), LD_ERR_LIMIT (too many content topics or hashes, a
 * value over LD_REST_STORE_MAX_PARAM), LD_ERR_NOMEM. */
int ld_rest_store_query_parse(const ld_rest_store_params_t *params, ld_rest_store_request_t *out,
                              char *err, size_t errcap);
void ld_rest_store_request_clear(ld_rest_store_request_t *r);

#endif
