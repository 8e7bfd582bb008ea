/* The REST API server: nwaku's paths, JSON and status codes on libmicrohttpd (rest/httpd.h),
 * running on the node's libuv loop.
 *
 * Endpoints (each group in its own file):
 *   GET  /debug/v1/info, /info          {"listenAddresses": [...], "enrUri"?}        (debug.c)
 *   GET  /debug/v1/version, /version    the version text                             (debug.c)
 *   GET  /health                        {"nodeHealth", "protocolsHealth": [...]}     (health.c,
 *                                        rules in health.h)
 *   GET  /admin/v1/peers                [{multiaddr, protocols, shards, connected, agent,
 *                                         origin, score?}]                          (admin.c)
 *   GET  /admin/v1/peers/connected      the same, connected peers only              (admin.c)
 *   GET  /admin/v1/peer/{peerId}        one peer, 404 when unknown                  (admin.c)
 *   POST /admin/v1/peers                ["<multiaddr>/p2p/<id>", …]: dialled in order (admin.c)
 *   POST /admin/v1/log-level/{logLevel} sets the log level                          (admin.c)
 *   POST/DELETE  /relay/v1/subscriptions         [pubsub topics]                    (relay.c)
 *   GET/POST     /relay/v1/messages/{pubsubTopic}                                   (relay.c)
 *   POST/DELETE  /relay/v1/auto/subscriptions    [content topics]              (relay_auto.c)
 *   GET          /relay/v1/auto/messages/{contentTopic}                        (relay_auto.c)
 *   POST         /relay/v1/auto/messages                                       (relay_auto.c)
 *   OPTIONS on the relay paths answers 200 "OK", as nwaku.
 *   POST   /lightpush/v3/message        {pubsubTopic?, message} → {relayPeerCount} or
 *                                        {statusDesc}, HTTP status = lightpush code   (lightpush.c)
 *   POST   /lightpush/v1/message        the legacy answers: "OK" or a text reason (lightpush.c)
 *   POST/PUT /filter/v2/subscriptions   {requestId, pubsubTopic?, contentFilters}      (filter.c)
 *   DELETE /filter/v2/subscriptions     {requestId, pubsubTopic?, contentFilters}      (filter.c)
 *   DELETE /filter/v2/subscriptions/all {requestId}                                    (filter.c)
 *   GET    /filter/v2/subscriptions/{requestId}   ping the filter service peer        (filter.c)
 *       each answering {requestId, statusDesc} with nwaku's HTTP status mapping
 *   GET    /filter/v2/messages/{contentTopic}     the pushed messages, then cleared   (filter.c)
 *   GET    /store/v3/messages?peerAddr&pubsubTopic&contentTopics&startTime&endTime&hashes&
 *          cursor&pageSize&ascending&includeData → {requestId, statusCode, statusDesc,
 *          messages: [{messageHash, message?, pubsubTopic?}], paginationCursor?}     (store.c)
 *   GET    /, /status, /status/…       the status page and its summary (rest/status.h)
 *   The Messaging API paths (/messaging/v1/…, /message, /messages, /subscribe, /unsubscribe,
 *   /subscriptions) come and go with a messaging client (messaging/messaging_rest.h,
 *   rest/server_groups.h); without one they answer 404.
 *   The Reliable Channels paths (/channels/v1/…) come and go with a channel manager
 *   (rest/channels_routes.h, channels/channels_rest.h); without one they answer 404.
 *   Hashes and cursors are written "0x"-hex (nwaku's to0xHex) and read as hex (a "0x" prefix
 *   optional; standard base64 is accepted too); payloads are base64.
 *   The service endpoints wait at most ld_rest_context_t.service_timeout_ms for the node and
 *   then answer with nwaku's timeout text (the node's later completion is then dropped).
 *
 * Answers follow nwaku: JSON bodies as application/json; successes without a body are 200 "OK"
 * and errors are a text/plain reason. An unknown path or a method a path does not have gives 400
 * "Bad request initiated. Invalid path or method used.", except below a group that is not
 * installed, which gives 404 with nwaku's explanation (admin without --rest-admin, relay without
 * relay, lightpush without ld_rest_context_t.lightpush, filter without .filter, store without
 * .store). Bodies are capped (see ld_rest_config_t.max_body; 413 beyond).
 *
 * Threading: everything on the node's loop thread (see rest/httpd.h); handlers read node state
 * directly. */
#ifndef LD_REST_SERVER_H
#define LD_REST_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "p2p/multiaddr.h"
#include "p2p/peerid.h"
#include "p2p/peerstore.h"
#include "p2p/switch.h"
#include "rest/httpd.h"
#include "rest/route.h"
#include "rest/status.h"
#include "waku/core/message.h"
#include "waku/metadata/metadata.h"

#define LD_REST_DEFAULT_ADDRESS "127.0.0.1"
#define LD_REST_DEFAULT_PORT 8645
/* Addresses dialled by one POST /admin/v1/peers. */
#define LD_REST_MAX_DIALS 64
/* Groups answered 404 by ld_rest_server_set_unavailable. */
#define LD_REST_MAX_UNAVAILABLE 16
/* Listen addresses reported by /debug/v1/info. */
#define LD_REST_MAX_LISTEN_ADDRS 16
/* Longest ENR text. */
#define LD_REST_MAX_ENR 1024
/* Room for the JSON around a base64 payload: the body cap is at least the base64 size of the
 * node's largest message plus this. */
#define LD_REST_BODY_OVERHEAD (64u * 1024)

/* nwaku's HealthStatus values. */
typedef enum ld_rest_health {
  LD_REST_HEALTH_INITIALIZING = 0,
  LD_REST_HEALTH_SYNCHRONIZING,
  LD_REST_HEALTH_READY,
  LD_REST_HEALTH_NOT_READY,
  LD_REST_HEALTH_NOT_MOUNTED,
  LD_REST_HEALTH_SHUTTING_DOWN,
} ld_rest_health_t;

/* "INITIALIZING", "READY", … */
const char *ld_rest_health_name(ld_rest_health_t h);

/* Returned by ld_rest_relay_ops_t.publish_later when the outcome comes later. */
#define LD_REST_PUBLISH_LATER (-1000002)
/* The outcome of a publish_later: `result` and `why` as ld_rest_relay_ops_t.publish's. */
typedef void (*ld_rest_published_fn)(void *done_data, int result, const char *why);

/* What the relay endpoints need from the node. Every function runs on the loop thread, is called
 * only from inside a request handler, and writes a one-line reason into `why` (room for
 * `why_cap` bytes) when it fails. */
typedef struct ld_rest_relay_ops {
  /* Subscribes the node to a pubsub topic, so that its messages reach the fan-out. Already
   * subscribed: 0. Required. */
  int (*subscribe)(void *user_data, const char *pubsub_topic, char *why, size_t why_cap);
  /* Leaves a pubsub topic. Not subscribed: 0. Required. */
  int (*unsubscribe)(void *user_data, const char *pubsub_topic, char *why, size_t why_cap);
  /* Whether the node's relay is subscribed to the topic. Required. */
  bool (*subscribed)(void *user_data, const char *pubsub_topic);
  /* Runs relay's validators on `msg` (size, protected shard, …) and publishes it on the topic;
   * the node also hands its own message to the fan-out (so it reaches the REST cache, archive
   * and filter). Returns the number of peers it went to (≥ 0), or an error with the reason:
   * LD_ERR_EXISTS (already published: answered 200 as nwaku does), LD_ERR_NOMEM / LD_ERR_IO /
   * LD_ERR_INTERNAL (answered 500), anything else (a refused message: answered 400
   * "Failed to publish: <why>"). Required. */
  int (*publish)(void *user_data, const char *pubsub_topic, const ld_waku_message_t *msg, char *why,
                 size_t why_cap);
  /* `publish` answered once the message went out (RLN-relay: once it was proved and handed to
   * relay, as nwaku proves inside its publish): the same results, or LD_REST_PUBLISH_LATER, and
   * then done(done_data, result, why) is called exactly once, later, from the loop (also when the
   * node stops), with `publish`'s result and reason (NUL-terminated, "" when none). Optional:
   * without it `publish` is used. */
  int (*publish_later)(void *user_data, const char *pubsub_topic, const ld_waku_message_t *msg,
                       char *why, size_t why_cap, ld_rest_published_fn done, void *done_data);
  /* After `publish` succeeded (≥ 0): calls done(done_data) once the node's own `msg` has been
   * written to its archive (or refused by it, or its write failed), so that the answer comes
   * after it as nwaku's does (it archives inside the publish call) and a store query sent after
   * the answer finds the message. Returns 0 (then `done` is called exactly once, later, from the
   * loop, also when the node stops), or an error when there is nothing to wait for (no archive):
   * then `done` is never called. Optional: without it the publish answers at once. */
  int (*await_archived)(void *user_data, const char *pubsub_topic, const ld_waku_message_t *msg,
                        void (*done)(void *done_data), void *done_data);
  /* Connected relay peers over all topics (relay health). Optional: without it relay counts as
   * ready. */
  size_t (*peer_count)(void *user_data);
  /* The gossipsub score of a connected relay peer; false when it is not one. Optional. */
  bool (*peer_score)(void *user_data, const ld_peerid_t *peer, double *score);
  void *user_data;
} ld_rest_relay_ops_t;

/* ---- service protocols (the node as a client of lightpush, filter and store) ------------------
 *
 * Common contract of the asynchronous operations below:
 * - Thread: every operation is called on the loop thread, from inside a request handler, and
 *   calls its completion on the loop thread, either before it returns or later.
 * - Exactly once: when the operation returns 0 it calls `done` exactly once, also when the node
 *   stops (then with an error status), possibly after the REST server has been closed. When it
 *   returns an error it never calls `done`. LD_ERR_NOT_FOUND means "no service peer" (the node
 *   has none configured or connected and cannot discover one) and is answered with nwaku's "No
 *   suitable service peer & no discovery method"; any other error is answered 500.
 * - Arguments (topics, messages, queries) are borrowed for the duration of the call only: the
 *   node copies what it keeps. Everything handed to `done` is borrowed by the REST server for the
 *   duration of the completion call only.
 * - The REST server stops waiting after ld_rest_context_t.service_timeout_ms and answers with
 *   nwaku's timeout text; a completion arriving later is accepted and ignored. */

/* REST waits this long for a service operation (nwaku's futTimeout*). */
#define LD_REST_SERVICE_TIMEOUT_MS 5000

/* Lightpush v3 status codes (waku.md §4.1). */
#define LD_REST_LIGHTPUSH_SUCCESS 200
#define LD_REST_LIGHTPUSH_BAD_REQUEST 400
#define LD_REST_LIGHTPUSH_PAYLOAD_TOO_LARGE 413
#define LD_REST_LIGHTPUSH_INVALID_MESSAGE 420
#define LD_REST_LIGHTPUSH_UNSUPPORTED_PUBSUB_TOPIC 421
#define LD_REST_LIGHTPUSH_TOO_MANY_REQUESTS 429
#define LD_REST_LIGHTPUSH_INTERNAL_SERVER_ERROR 500
#define LD_REST_LIGHTPUSH_SERVICE_NOT_AVAILABLE 503
#define LD_REST_LIGHTPUSH_OUT_OF_RLN_PROOF 504
#define LD_REST_LIGHTPUSH_NO_PEERS_TO_RELAY 505

/* Completion of a push: `status_code` as waku.md §4.1 (LD_REST_LIGHTPUSH_*; 200 = published),
 * `status_desc` the service's description (NULL: none), `relay_peer_count` the peers the message
 * was relayed to (read on success only). */
typedef void (*ld_rest_lightpush_done_fn)(void *done_ud, uint32_t status_code,
                                          const char *status_desc, uint32_t relay_peer_count);

typedef struct ld_rest_lightpush_ops {
  /* Publishes `msg` through lightpush v3: to the node's --lightpushnode (or a peer it selects),
   * or through the node's own lightpush service when it serves lightpush and has no client peer.
   * `pubsub_topic` NULL means "derive it from the content topic" (autosharding); under static
   * sharding the node completes with 420 (INVALID_MESSAGE) as nwaku does. A client-side failure
   * (dial, stream, undecodable response) completes with the code nwaku's client gives (505 for a
   * dial failure, 500 otherwise). Required. */
  int (*push)(void *user_data, const char *pubsub_topic, const ld_waku_message_t *msg,
              ld_rest_lightpush_done_fn done, void *done_ud);
  /* The same through legacy lightpush (/vac/waku/lightpush/2.0.0-beta1), behind
   * POST /lightpush/v1/message: complete with 200 on is_success, 429 when rate-limited, any
   * other code with the response's `info` as the description. Optional: NULL uses `push`. */
  int (*push_legacy)(void *user_data, const char *pubsub_topic, const ld_waku_message_t *msg,
                     ld_rest_lightpush_done_fn done, void *done_ud);
  void *user_data;
} ld_rest_lightpush_ops_t;

/* Filter v2 status codes (waku.md §5; nwaku FilterSubscribeErrorKind): 200, 300 BAD_RESPONSE,
 * 400, 404, 429, 503, 504 PEER_DIAL_FAILURE; anything else is UNKNOWN. */
#define LD_REST_FILTER_OK 200
#define LD_REST_FILTER_BAD_RESPONSE 300
#define LD_REST_FILTER_BAD_REQUEST 400
#define LD_REST_FILTER_NOT_FOUND 404
#define LD_REST_FILTER_TOO_MANY_REQUESTS 429
#define LD_REST_FILTER_SERVICE_UNAVAILABLE 503
#define LD_REST_FILTER_PEER_DIAL_FAILURE 504
/* Content topics in one REST subscription request (the filter service's own limit). */
#define LD_REST_FILTER_MAX_CONTENT_TOPICS 100

/* Completion of a filter request: `status_code` is the service's status (200 OK) or a
 * client-side kind (300 for an unreadable/undecodable response or a request-ID mismatch, 504 when
 * the peer cannot be dialled); `status_desc` is the service's status_desc as received ("NOT_FOUND:
 * peer has no subscriptions"), the dialled address for 504, or the client's reason for 300
 * (NULL: none). */
typedef void (*ld_rest_filter_done_fn)(void *done_ud, uint32_t status_code,
                                       const char *status_desc);

/* The node as a filter client of its --filternode (or a peer it selects). All four are required.
 * The node hands every message pushed to it to ld_rest_server_filter_push. */
typedef struct ld_rest_filter_ops {
  /* SUBSCRIBE `n` content topics (1..LD_REST_FILTER_MAX_CONTENT_TOPICS, NUL-terminated) on
   * `pubsub_topic`. NULL: as nwaku, the node derives the shard of each content topic
   * (autosharding) and sends one request per shard, completing with the last failure, or with
   * 300 "can't get shard" when a content topic has no shard; under static sharding nwaku ends
   * with status 0 (answered 200 "UNKNOWN"). */
  int (*subscribe)(void *user_data, const char *pubsub_topic, const char *const *content_topics,
                   size_t n, ld_rest_filter_done_fn done, void *done_ud);
  /* UNSUBSCRIBE, arguments as subscribe. */
  int (*unsubscribe)(void *user_data, const char *pubsub_topic, const char *const *content_topics,
                     size_t n, ld_rest_filter_done_fn done, void *done_ud);
  /* UNSUBSCRIBE_ALL. */
  int (*unsubscribe_all)(void *user_data, ld_rest_filter_done_fn done, void *done_ud);
  /* SUBSCRIBER_PING. */
  int (*ping)(void *user_data, ld_rest_filter_done_fn done, void *done_ud);
  void *user_data;
} ld_rest_filter_ops_t;

/* Store v3 status codes (waku.md §6.2). */
#define LD_REST_STORE_SUCCESS 200
#define LD_REST_STORE_BAD_RESPONSE 300
#define LD_REST_STORE_BAD_REQUEST 400
#define LD_REST_STORE_TOO_MANY_REQUESTS 429
#define LD_REST_STORE_SERVICE_UNAVAILABLE 503
#define LD_REST_STORE_PEER_DIAL_FAILURE 504
/* nwaku's page size default and cap. */
#define LD_REST_STORE_DEFAULT_PAGE_SIZE 20
#define LD_REST_STORE_MAX_PAGE_SIZE 100
/* Content topics and hashes accepted in one GET /store/v3/messages. */
#define LD_REST_STORE_MAX_CONTENT_TOPICS 100
#define LD_REST_STORE_MAX_HASHES 100

/* A store query as the REST endpoint parsed it (every pointer borrowed for the call). */
typedef struct ld_rest_store_query {
  /* The peer to ask (peerAddr, ending in /p2p/<id>), or NULL: the node's own store when it
   * serves store, otherwise its --storenode (or a store peer it selects). */
  const ld_multiaddr_t *peer_addr;
  const ld_peerid_t *peer_id; /* the /p2p/ part of peer_addr; NULL with it */
  bool include_data;
  const char *pubsub_topic; /* NULL: none */
  const char *const *content_topics;
  size_t n_content_topics; /* ≤ LD_REST_STORE_MAX_CONTENT_TOPICS */
  bool has_start_time;     /* startTime > 0 was given */
  int64_t start_time;      /* ns */
  bool has_end_time;
  int64_t end_time; /* ns */
  const uint8_t (*hashes)[LD_WAKU_HASH_LEN];
  size_t n_hashes; /* ≤ LD_REST_STORE_MAX_HASHES */
  bool has_cursor;
  uint8_t cursor[LD_WAKU_HASH_LEN];
  bool forward;       /* pagination_forward: true unless ascending=<anything but "true"> */
  uint64_t page_size; /* 1 .. LD_REST_STORE_MAX_PAGE_SIZE */
} ld_rest_store_query_t;

/* One entry of a store response: the message and its pubsub topic are present together (NULL
 * when the query left out the data). */
typedef struct ld_rest_store_entry {
  uint8_t hash[LD_WAKU_HASH_LEN];
  const char *pubsub_topic;
  const ld_waku_message_t *message;
} ld_rest_store_entry_t;

typedef struct ld_rest_store_result {
  /* 0: a response (from a peer, or the node's own store) or a client-side failure described
   * below; < 0: the node could not run the query at all (no store client, its own store failed:
   * answered 500 with `status_desc`, or the error's text when NULL). */
  int error;
  /* The response's status (200 "OK"), or, as nwaku's client reports a failed query, the error
   * kind with "<KIND>: <cause>" as the description: 504 "PEER_DIAL_FAILURE: <address>", 300
   * "BAD_RESPONSE: <cause>", 400 "BAD_REQUEST: <cause>", 429 "TOO_MANY_REQUESTS" (answered 429
   * "Request rate limit reached"). Everything but 429 is answered 200 with this JSON. */
  uint32_t status_code;
  const char *status_desc; /* NULL: "" */
  const char *request_id;  /* NULL: "" */
  const ld_rest_store_entry_t *entries;
  size_t n_entries;
  const uint8_t *cursor; /* LD_WAKU_HASH_LEN bytes, or NULL: no more pages */
} ld_rest_store_result_t;

typedef void (*ld_rest_store_done_fn)(void *done_ud, const ld_rest_store_result_t *res);

typedef struct ld_rest_store_ops {
  /* Runs a store v3 query (see ld_rest_store_query_t for where it goes). Returns LD_ERR_NOT_FOUND
   * when `peer_addr` is NULL and the node neither serves store nor has a store peer. Required. */
  int (*query)(void *user_data, const ld_rest_store_query_t *query, ld_rest_store_done_fn done,
               void *done_ud);
  void *user_data;
} ld_rest_store_ops_t;

/* What GET /health needs to know of the node beyond relay (rest/health.h has the rules). */
typedef struct ld_rest_protocols {
  /* services the node serves */
  bool lightpush;        /* /vac/waku/lightpush/3.0.0 */
  bool legacy_lightpush; /* /vac/waku/lightpush/2.0.0-beta1 */
  bool filter;
  bool store;
  bool peer_exchange;
  /* clients the node runs: of its --lightpushnode (v3 and legacy, as nwaku mounts both),
   * --storenode, --filternode, or created on use (a filter client made for an Edge-mode Messaging
   * API client or the C library's filter calls) */
  bool lightpush_client;
  bool legacy_lightpush_client;
  bool filter_client;
  bool store_client;
  /* whether a service peer of the protocol can be selected, as nwaku's selectPeer: the configured
   * service node of the protocol, or any other peer the peer store knows to support it (connected
   * or not) */
  bool lightpush_peer;
  bool legacy_lightpush_peer;
  bool filter_peer;
  bool store_peer;
} ld_rest_protocols_t;

/* The node's parts the REST server reads. All pointers are borrowed: they must stay valid until
 * the server's close has completed. */
typedef struct ld_rest_context {
  uv_loop_t *loop;                  /* required */
  ld_switch_t *sw;                  /* required: connections, dials */
  ld_peerstore_t *peerstore;        /* admin peers; NULL: live connections only */
  ld_metadata_t *metadata;          /* peers' shards; NULL: [] */
  const ld_rest_relay_ops_t *relay; /* copied; NULL: relay not mounted (endpoints 404) */
  uint16_t cluster_id;              /* for autosharding */
  uint32_t num_shards_in_network;   /* > 0: autosharding over that many shards; 0: static */
  size_t max_msg_size;              /* payload cap on POSTed messages; 0: 150 KiB */
  const char *version;              /* /debug/v1/version text (copied); NULL: "v" LD_VERSION */
  /* copied; NULL: /lightpush answers 404 (nwaku: no lightpush client nor self-served service) */
  const ld_rest_lightpush_ops_t *lightpush;
  /* copied; NULL: /filter answers 404 (nwaku: no filter client mounted) */
  const ld_rest_filter_ops_t *filter;
  /* copied; NULL: /store answers 404. nwaku always installs its store endpoint (answering 412
   * "No suitable service peer & no discovery method" without a store peer), so a node that
   * wants nwaku's answers sets this always and lets `query` return LD_ERR_NOT_FOUND. */
  const ld_rest_store_ops_t *store;
  uint32_t service_timeout_ms; /* 0: LD_REST_SERVICE_TIMEOUT_MS */
  /* The node's listen addresses ending in /p2p/<id> (as ld_node_listen_addrs). Required. */
  size_t (*listen_addrs)(void *user_data, ld_multiaddr_t *out, size_t max);
  /* Writes the node's ENR text ("enr:…") with a NUL; returns its length, or < 0 when the node
   * has none (then enrUri is left out). Optional. */
  int (*enr_uri)(void *user_data, char *out, size_t cap);
  /* nwaku's PeerOrigin of a peer: "UnknownOrigin", "Discv5", "Static", "PeerExchange", "Dns"
   * (static string). Optional: "UnknownOrigin". */
  const char *(*peer_origin)(void *user_data, const ld_peerid_t *peer);
  /* Fills `out` (zeroed by the caller) for GET /health, on the loop thread, once per request.
   * Optional: without it every protocol but Relay counts as not mounted (except the clients a
   * Messaging API client adds, rest/health.h). */
  void (*protocols)(void *user_data, ld_rest_protocols_t *out);
  /* /debug/v1/info's "reliabilityMode" ("store" or "p2p", a static string); NULL: left out */
  const char *reliability_mode;
  void *user_data; /* passed to listen_addrs, enr_uri, peer_origin, protocols */
  /* copied; what the status page reads of the node (rest/status.h). NULL: the page shows the
   * connections, peers and identity only. */
  const ld_rest_status_ops_t *status;
} ld_rest_context_t;

typedef struct ld_rest_config {
  const char *address;                /* --rest-address; NULL: LD_REST_DEFAULT_ADDRESS */
  uint16_t port;                      /* --rest-port (ports shift applied); 0: any free port */
  bool admin;                         /* --rest-admin */
  size_t relay_cache_capacity;        /* --rest-relay-cache-capacity; 0: 50 */
  const char *const *allowed_origins; /* --rest-allow-origin (copied) */
  size_t n_allowed_origins;
  size_t max_body;        /* 0: LD_HTTPD_DEFAULT_MAX_BODY; raised to fit the largest message
                             (base64 of ctx.max_msg_size plus LD_REST_BODY_OVERHEAD) */
  size_t max_connections; /* 0: LD_HTTPD_DEFAULT_MAX_CONNECTIONS */
  /* Topics whose messages the relay cache keeps from the start: the pubsub topics of the node's
   * --shard shards and its --content-topic topics (copied). */
  const char *const *cached_pubsub_topics;
  size_t n_cached_pubsub_topics;
  const char *const *cached_content_topics;
  size_t n_cached_content_topics;
} ld_rest_config_t;

/* Zeros with the defaults above. */
void ld_rest_config_default(ld_rest_config_t *cfg);

typedef struct ld_rest_server ld_rest_server_t;

/* Starts the server: binds, installs the endpoints, creates the relay cache (the node feeds it,
 * ld_rest_server_relay_message). `ctx` and `cfg` are copied (the pointers inside stay borrowed).
 * Loop thread only. Errors: LD_ERR_INVALID_ARG (missing loop, switch or listen_addrs; incomplete
 * relay, lightpush, filter or store ops; a bad address or origin), LD_ERR_ADDR_IN_USE, LD_ERR_IO,
 * LD_ERR_LIMIT (route table full), LD_ERR_NOMEM. Logs "REST service started" with the URL at
 * INFO. */
int ld_rest_server_new(const ld_rest_context_t *ctx, const ld_rest_config_t *cfg,
                       ld_rest_server_t **out);

/* The bound port. */
uint16_t ld_rest_server_port(const ld_rest_server_t *srv);

/* The overall node health reported by /health (INITIALIZING until set). The node sets READY once
 * it is started and SHUTTING_DOWN when it stops. */
void ld_rest_server_set_health(ld_rest_server_t *srv, ld_rest_health_t health);

/* Closes the HTTP server and frees everything; `done` (may be NULL) is called from the loop
 * afterwards. Requests still waiting for a dial are answered when the dial ends (the switch
 * closing ends them), without touching the server. */
void ld_rest_server_close(ld_rest_server_t *srv, void (*done)(void *user_data), void *user_data);

/* Hands a message the node relayed or published itself (after its own consumers: filter,
 * archive, sync) to the cache behind GET /relay/v1/messages/{pubsubTopic} and
 * /relay/v1/auto/messages/{contentTopic}: kept when its pubsub topic or content topic is
 * cached (subscribed through REST, or in ld_rest_config_t's cached topics). `msg` is copied.
 * Loop thread only. */
void ld_rest_server_relay_message(ld_rest_server_t *srv, const char *pubsub_topic,
                                  const ld_waku_message_t *msg);

/* Hands a message the node's filter client received (a MessagePush from its service peer) to the
 * cache behind GET /filter/v2/messages/{contentTopic}. Only content topics subscribed through
 * POST /filter/v2/subscriptions are kept; at most LD_REST_CACHE_DEFAULT_CAPACITY messages in
 * all (the oldest timestamp goes first), an identical message once. `msg` is copied. No-op when
 * the server has no filter ops. Loop thread only. */
void ld_rest_server_filter_push(ld_rest_server_t *srv, const char *pubsub_topic,
                                const ld_waku_message_t *msg);

/* ---- extension (later protocols, the Messaging API paths) ------------------------------------ */

/* A route handler: answers `req` (now or later, see rest/httpd.h). `m` holds the decoded path
 * parameters and is valid only during the call. */
typedef void (*ld_rest_handler_fn)(ld_rest_server_t *srv, ld_http_request_t *req,
                                   const ld_route_match_t *m, void *user_data);

/* Adds a route (see ld_route_add for patterns). Errors as ld_route_add. */
int ld_rest_server_add_route(ld_rest_server_t *srv, const char *method, const char *pattern,
                             ld_rest_handler_fn fn, void *user_data);

/* Removes the route added with exactly this method and pattern (route groups that come and go
 * with a running server, see rest/server_groups.h). Safe from inside a handler, the removed
 * route's included. LD_ERR_NOT_FOUND when there is no such route. */
int ld_rest_server_remove_route(ld_rest_server_t *srv, const char *method, const char *pattern);

/* Answers requests below /<group>/ that match no route with 404 `message` (copied) instead of
 * 400; NULL message removes the entry. LD_ERR_LIMIT, LD_ERR_NOMEM. */
int ld_rest_server_set_unavailable(ld_rest_server_t *srv, const char *group, const char *message);

/* The server's context (for handlers installed by other modules). */
const ld_rest_context_t *ld_rest_server_context(const ld_rest_server_t *srv);

#endif
