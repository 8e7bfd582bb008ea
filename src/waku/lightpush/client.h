/* Waku lightpush client: pushes one WakuMessage to a service peer over an open connection, with
 * /vac/waku/lightpush/3.0.0 or the legacy /vac/waku/lightpush/2.0.0-beta1, as nwaku's clients do.
 *
 * One request per stream (p2p/reqresp.h): open a stream, write one length-prefixed request,
 * half-close, read one response. Before sending, a zero timestamp is replaced by the wall clock
 * (nwaku's ensureTimestampSet; the caller's message is not modified) and a request ID of 10
 * random bytes in lowercase hex is generated.
 *
 * v3 result rules (nwaku's client):
 *   - the response's status code and description are reported as received, except:
 *   - a response whose request_id differs from ours is 500 "response failure, requestId
 *     mismatch", unless its status is 429 (rate-limited answers carry "N/A");
 *   - a 200 whose relay_peer_count is absent or 0 is 505 NO_PEERS_TO_RELAY (with the response's
 *     description);
 *   - an undecodable response is 500 "decode_rpc_failure" (err = the decode error);
 *   - the peer does not speak the protocol: 503 "lightpush is not supported by the peer"
 *     (err = LD_ERR_PROTOCOL_UNSUPPORTED or LD_ERR_NEGOTIATION_FAILED);
 *   - the connection is gone: 505 "Peer is not accessible: dial_failure" (err = LD_ERR_CLOSED, …);
 *   - no response (timeout, reset, stream ended, oversized answer): 500 "Failed to read response
 *     from peer: <error>" (err set).
 * Success is status 200 only (with at least one relay peer).
 *
 * Legacy result: success is the response's is_success; info is the response's info (nwaku's
 * client texts otherwise: "decode_rpc_failure", "empty_response_body_failure", "unknown failure"
 * for a failure without info, "dial_failure" when the stream could not be opened, "Exception
 * reading: <error>" when no response came).
 *
 * Callback rule: the callback is called exactly once, from the switch's loop, never from inside
 * the push call; a push that returns an error never calls it. Threading: loop thread only. */
#ifndef LD_WAKU_LIGHTPUSH_CLIENT_H
#define LD_WAKU_LIGHTPUSH_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/switch.h"
#include "waku/core/message.h"
#include "waku/lightpush/codec.h"

/* Deadline of one push (stream opening, request, response); js-waku allows 10 s per attempt. */
#define LD_LIGHTPUSH_CLIENT_TIMEOUT_MS 10000
/* Largest encoded message a client sends by default (js-waku refuses more than 1 MiB locally;
 * the service's own cap, usually 150 KiB, is reported by its 420 answer). */
#define LD_LIGHTPUSH_CLIENT_MAX_MSG (1024u * 1024)
/* Random bytes of a generated request ID (nwaku's generateRequestId), and its hex text size. */
#define LD_LIGHTPUSH_REQUEST_ID_BYTES 10
#define LD_LIGHTPUSH_REQUEST_ID_TEXT (2 * LD_LIGHTPUSH_REQUEST_ID_BYTES + 1)

typedef struct ld_lightpush_push_opts {
  uint32_t timeout_ms; /* 0: LD_LIGHTPUSH_CLIENT_TIMEOUT_MS */
  /* Cap on the encoded message (0: LD_LIGHTPUSH_CLIENT_MAX_MSG; SIZE_MAX: none). */
  size_t max_msg_size;
  /* Request ID to send (copied; at most LD_LIGHTPUSH_MAX_REQUEST_ID_LEN bytes); NULL:
   * generated. */
  const char *request_id;
  /* Send a zero timestamp as is instead of stamping the message with the wall clock. */
  bool keep_zero_timestamp;
} ld_lightpush_push_opts_t;

/* A push in flight, for ld_lightpush_client_cancel. */
typedef struct ld_lightpush_call ld_lightpush_call_t;

/* Ends a push early: its callback is never called and its stream is reset. Not after the
 * callback was called. */
void ld_lightpush_client_cancel(ld_lightpush_call_t *call);

/* ---- v3 ------------------------------------------------------------------------------------- */

typedef struct ld_lightpush_result {
  uint32_t status_code;      /* after the rules above; LD_LIGHTPUSH_SUCCESS means published */
  const char *status_desc;   /* NULL when the response had none */
  uint32_t relay_peer_count; /* as answered (0 unless a 200 said more) */
  int err;                   /* 0 when a response was decoded, else the LD_ERR_* of the failure */
  const char *request_id;    /* the ID we sent */
  int64_t timestamp;         /* the message timestamp we sent */
  /* The deterministic hash of the message as sent, on the pubsub topic of the request (only when
   * one was given: a service shards topic-less requests itself). */
  bool has_hash;
  uint8_t hash[LD_WAKU_HASH_LEN];
} ld_lightpush_result_t;

/* The result; every pointer is valid only during the call. */
typedef void (*ld_lightpush_done_fn)(const ld_lightpush_result_t *res, void *user_data);

/* Pushes `msg` (borrowed for the call only; encoded at once) to the peer of `conn` on
 * `pubsub_topic` (NULL: none sent, the service shards the content topic). Returns 0 and calls
 * `done` later, or an error and never calls it: LD_ERR_INVALID_ARG, LD_ERR_TOO_LARGE (above the
 * client cap), LD_ERR_FIELD_TOO_LONG (meta, or a pubsub topic over LD_LIGHTPUSH_MAX_TOPIC_LEN),
 * LD_ERR_NOMEM, or the direct errors of opening a stream (LD_ERR_CLOSED, LD_ERR_TOO_MANY_STREAMS,
 * LD_ERR_GOAWAY). */
int ld_lightpush_client_push(ld_switch_t *sw, ld_conn_t *conn, const char *pubsub_topic,
                             const ld_waku_message_t *msg, ld_lightpush_done_fn done,
                             void *user_data);

/* As ld_lightpush_client_push with options (`opts` NULL: defaults) and the call's handle in *out
 * (may be NULL), valid until the callback. */
int ld_lightpush_client_push_ex(ld_switch_t *sw, ld_conn_t *conn, const char *pubsub_topic,
                                const ld_waku_message_t *msg, const ld_lightpush_push_opts_t *opts,
                                ld_lightpush_done_fn done, void *user_data,
                                ld_lightpush_call_t **out);

/* ---- legacy v2 ------------------------------------------------------------------------------ */

typedef struct ld_lightpush_legacy_result {
  bool success;
  const char *info; /* never NULL */
  int err;          /* 0 when a response was decoded, else the LD_ERR_* of the failure */
  const char *request_id;
  int64_t timestamp;
  uint8_t hash[LD_WAKU_HASH_LEN]; /* deterministic hash on the request's pubsub topic */
} ld_lightpush_legacy_result_t;

typedef void (*ld_lightpush_legacy_done_fn)(const ld_lightpush_legacy_result_t *res,
                                            void *user_data);

/* Pushes `msg` on `pubsub_topic` (required) with the legacy protocol. Returns and calls back as
 * ld_lightpush_client_push. */
int ld_lightpush_legacy_client_push(ld_switch_t *sw, ld_conn_t *conn, const char *pubsub_topic,
                                    const ld_waku_message_t *msg, ld_lightpush_legacy_done_fn done,
                                    void *user_data);

int ld_lightpush_legacy_client_push_ex(ld_switch_t *sw, ld_conn_t *conn, const char *pubsub_topic,
                                       const ld_waku_message_t *msg,
                                       const ld_lightpush_push_opts_t *opts,
                                       ld_lightpush_legacy_done_fn done, void *user_data,
                                       ld_lightpush_call_t **out);

#endif
