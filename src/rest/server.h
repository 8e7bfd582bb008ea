/* The REST API server: nwaku's paths, JSON and status codes on libmicrohttpd (rest/httpd.h),
 * running on the node's libuv loop.
 *
 * Endpoints (each group in its own file):
 *   GET  /debug/v1/info, /info          {"listenAddresses": [...], "enrUri"?}        (debug.c)
 *   GET  /debug/v1/version, /version    the version text                             (debug.c)
 *   GET  /health                        {"nodeHealth", "protocolsHealth": [...]}     (health.c)
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
 *
 * Answers follow nwaku: JSON bodies as application/json; successes without a body are 200 "OK"
 * and errors are a text/plain reason. An unknown path or a method a path does not have gives 400
 * "Bad request initiated. Invalid path or method used.", except below a group that is not
 * installed, which gives 404 with nwaku's explanation (admin without --rest-admin, relay without
 * relay, and filter, lightpush and store until those protocols exist). Bodies are capped (see
 * ld_rest_config_t.max_body; 413 beyond).
 *
 * Threading: everything on the node's loop thread (see rest/httpd.h); handlers read node state
 * directly. */
#ifndef LD_REST_SERVER_H
#define LD_REST_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "node/fanout.h"
#include "p2p/multiaddr.h"
#include "p2p/peerid.h"
#include "p2p/peerstore.h"
#include "p2p/switch.h"
#include "rest/httpd.h"
#include "rest/route.h"
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
  /* Connected relay peers over all topics (relay health). Optional: without it relay counts as
   * ready. */
  size_t (*peer_count)(void *user_data);
  /* The gossipsub score of a connected relay peer; false when it is not one. Optional. */
  bool (*peer_score)(void *user_data, const ld_peerid_t *peer, double *score);
  void *user_data;
} ld_rest_relay_ops_t;

/* The node's parts the REST server reads. All pointers are borrowed: they must stay valid until
 * the server's close has completed. */
typedef struct ld_rest_context {
  uv_loop_t *loop;                  /* required */
  ld_switch_t *sw;                  /* required: connections, dials */
  ld_peerstore_t *peerstore;        /* admin peers; NULL: live connections only */
  ld_metadata_t *metadata;          /* peers' shards; NULL: [] */
  ld_fanout_t *fanout;              /* the REST cache listens at LD_FANOUT_BROKER; NULL: the
                                       cache never fills */
  const ld_rest_relay_ops_t *relay; /* copied; NULL: relay not mounted (endpoints 404) */
  uint16_t cluster_id;              /* for autosharding */
  uint32_t num_shards_in_network;   /* > 0: autosharding over that many shards; 0: static */
  size_t max_msg_size;              /* payload cap on POSTed messages; 0: 150 KiB */
  const char *version;              /* /debug/v1/version text (copied); NULL: "v" LD_VERSION */
  /* The node's listen addresses ending in /p2p/<id> (as ld_node_listen_addrs). Required. */
  size_t (*listen_addrs)(void *user_data, ld_multiaddr_t *out, size_t max);
  /* Writes the node's ENR text ("enr:…") with a NUL; returns its length, or < 0 when the node
   * has none (then enrUri is left out). Optional. */
  int (*enr_uri)(void *user_data, char *out, size_t cap);
  /* nwaku's PeerOrigin of a peer: "UnknownOrigin", "Discv5", "Static", "PeerExchange", "Dns"
   * (static string). Optional: "UnknownOrigin". */
  const char *(*peer_origin)(void *user_data, const ld_peerid_t *peer);
  void *user_data; /* passed to listen_addrs, enr_uri, peer_origin */
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

/* Starts the server: binds, installs the endpoints, registers the cache at the fan-out. `ctx`
 * and `cfg` are copied (the pointers inside stay borrowed). Loop thread only. Errors:
 * LD_ERR_INVALID_ARG (missing loop, switch or listen_addrs; incomplete relay ops; a bad address
 * or origin), LD_ERR_ADDR_IN_USE, LD_ERR_IO, LD_ERR_LIMIT (fan-out full), LD_ERR_NOMEM. Logs
 * "REST service started" with the URL at INFO. */
int ld_rest_server_new(const ld_rest_context_t *ctx, const ld_rest_config_t *cfg,
                       ld_rest_server_t **out);

/* The bound port. */
uint16_t ld_rest_server_port(const ld_rest_server_t *srv);

/* The overall node health reported by /health (INITIALIZING until set). The node sets READY once
 * it is started and SHUTTING_DOWN when it stops. */
void ld_rest_server_set_health(ld_rest_server_t *srv, ld_rest_health_t health);

/* Removes the fan-out handler, closes the HTTP server and frees everything; `done` (may be NULL)
 * is called from the loop afterwards. Requests still waiting for a dial are answered when the
 * dial ends (the switch closing ends them), without touching the server. */
void ld_rest_server_close(ld_rest_server_t *srv, void (*done)(void *user_data), void *user_data);

/* ---- extension (later protocols, the Messaging API paths) ------------------------------------ */

/* A route handler: answers `req` (now or later, see rest/httpd.h). `m` holds the decoded path
 * parameters and is valid only during the call. */
typedef void (*ld_rest_handler_fn)(ld_rest_server_t *srv, ld_http_request_t *req,
                                   const ld_route_match_t *m, void *user_data);

/* Adds a route (see ld_route_add for patterns). Errors as ld_route_add. */
int ld_rest_server_add_route(ld_rest_server_t *srv, const char *method, const char *pattern,
                             ld_rest_handler_fn fn, void *user_data);

/* Answers requests below /<group>/ that match no route with 404 `message` (copied) instead of
 * 400; NULL message removes the entry. LD_ERR_LIMIT, LD_ERR_NOMEM. */
int ld_rest_server_set_unavailable(ld_rest_server_t *srv, const char *group, const char *message);

/* The server's context (for handlers installed by other modules). */
const ld_rest_context_t *ld_rest_server_context(const ld_rest_server_t *srv);

#endif
