/* GossipSub over the switch: the network adapter around the sans-I/O router (router.h).
 *
 * The service registers the pubsub protocols on the switch (Waku relay first, then the meshsub
 * IDs), keeps one pubsub peer per remote peer ID however many connections it has, and for each
 * such peer:
 * - opens one outbound stream, used only for writing, proposing the configured protocols in
 *   order, as soon as identify lists one of them, the peer opens a pubsub stream to us, or (with
 *   open_on_connect) the connection comes up; a broken outbound stream is reopened with back-off
 *   and the new stream starts again with our subscriptions (js-libp2p forgets a peer whose stream
 *   broke), while the router keeps its state about the peer;
 * - reads RPCs only from the stream the peer opened (a newer inbound stream replaces and resets
 *   the older one): uvarint length-prefixed frames of at most params.max_rpc_size bytes; a larger
 *   frame is logged as TOO_LARGE, the stream is reset and the router penalises the peer;
 * - writes every RPC the router emits, length-prefixed, on the outbound stream; while that
 *   stream is not open yet the frames wait in a per-peer queue; whatever would make the bytes
 *   waiting for one peer exceed max_queued_bytes is dropped and counted (a peer that does not
 *   read does not make us buffer without end);
 * - adds the peer to the router with the protocol negotiated first (either direction), the
 *   connection's direction and its IP address, and removes it when its last connection closes;
 *   the router's disconnect requests close every connection of the peer, logged with the reason.
 *
 * Application callbacks (message handlers, validators, mesh and peer events) are never called
 * from inside a service function or the router: they run from the event loop (a timer of the
 * service, or the switch's stream and connection callbacks), so the application may call any
 * service function but ld_gs_service_free from them (publish, subscribe, validation_done, …).
 *
 * Threading: everything on the switch's loop thread. */
#ifndef LD_P2P_GOSSIPSUB_SERVICE_H
#define LD_P2P_GOSSIPSUB_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/gossipsub/router.h"
#include "p2p/identify.h"
#include "p2p/peerid.h"
#include "p2p/switch.h"

/* Protocol IDs registered and proposed at most. */
#define LD_GS_SERVICE_MAX_PROTOCOLS 8
/* Connections remembered per pubsub peer (simultaneous dials make more than one). */
#define LD_GS_SERVICE_MAX_CONNS_PER_PEER 8
/* Default cap on the bytes waiting to be written to one peer (our queue plus the stream's);
 * never above LD_STREAM_MAX_BUFFERED. */
#define LD_GS_SERVICE_DEFAULT_MAX_QUEUED (2u * 1024 * 1024)
/* Validators registered at the same time. */
#define LD_GS_SERVICE_MAX_VALIDATORS 32
/* Topics subscribed at the same time. */
#define LD_GS_SERVICE_MAX_SUBSCRIPTIONS 1024
/* A validation not completed within this time is answered Ignore. */
#define LD_GS_SERVICE_DEFAULT_VALIDATION_TIMEOUT_MS 10000
/* Outbound stream (re)opening: consecutive failures before the peer is given up (until it opens
 * a stream to us again or reconnects), and the back-off between attempts (doubling). */
#define LD_GS_SERVICE_MAX_OPEN_ATTEMPTS 6
#define LD_GS_SERVICE_REOPEN_BACKOFF_MS 500
/* An outbound stream that stayed open this long resets the failure count. */
#define LD_GS_SERVICE_STABLE_STREAM_MS 10000

typedef struct ld_gs_service ld_gs_service_t;

/* ---- configuration -------------------------------------------------------------------------- */

typedef struct ld_gs_service_config {
  /* Protocol IDs to register and propose, in preference order; each must be known to
   * ld_gs_proto_from_id. n_protocols = 0: relay, meshsub 1.2, 1.1, 1.0. Strings are copied. */
  const char *protocols[LD_GS_SERVICE_MAX_PROTOCOLS];
  size_t n_protocols;
  /* Router parameters (copied). params.max_rpc_size is also the inbound frame cap. */
  ld_gs_params_t params;
  /* Per-peer cap on waiting outbound bytes; 0 = LD_GS_SERVICE_DEFAULT_MAX_QUEUED. */
  size_t max_queued_bytes;
  /* 0 = LD_GS_SERVICE_DEFAULT_VALIDATION_TIMEOUT_MS. */
  uint32_t validation_timeout_ms;
  /* Our own published messages go to our own handler of that topic too (nwaku's triggerSelf,
   * so archive and filter see them); `from` is NULL for them. Default true. */
  bool deliver_own;
  /* Open the outbound stream on every new connection without waiting for identify (a peer that
   * does not speak pubsub answers na and is left alone). Default false. */
  bool open_on_connect;
  /* Seed of the router's PRNG; 0 = random. */
  uint64_t seed;
} ld_gs_service_config_t;

/* Defaults: the four protocol IDs above, nwaku's router parameters (ld_gs_params_nwaku), the
 * default caps and timeouts, deliver_own, seed 0. */
void ld_gs_service_config_default(ld_gs_service_config_t *cfg);

/* ---- lifecycle ------------------------------------------------------------------------------ */

/* Creates the service on `sw`: registers the inbound handlers and a connection listener. When
 * `id` is not NULL the service installs itself as that identify service's event receiver
 * (ld_identify_set_events; this replaces whatever receiver was set). A node that needs identify
 * events elsewhere passes NULL and forwards them with ld_gs_service_peer_identified. `cfg` is
 * copied; NULL means the defaults. Returns NULL and sets *err (may be NULL): LD_ERR_INVALID_ARG
 * (bad parameters, unknown protocol ID), LD_ERR_EXISTS (a protocol is already registered),
 * LD_ERR_LIMIT (switch listener slots full), LD_ERR_NOMEM. As the switch cannot drop handlers or
 * listeners, the service lives as long as the switch: free it only after ld_switch_close has
 * called its `done`. */
ld_gs_service_t *ld_gs_service_new(ld_switch_t *sw, ld_identify_t *id,
                                   const ld_gs_service_config_t *cfg, int *err);

/* Frees the service and everything it holds; pending validations are dropped without callbacks.
 * Its timer handles are released from the loop's next turn. NULL is a no-op. */
void ld_gs_service_free(ld_gs_service_t *svc);

/* Tells the service that identify finished on `c` (when it does not own the identify events).
 * Opens the pubsub stream if `info` lists one of our protocols. */
void ld_gs_service_peer_identified(ld_gs_service_t *svc, ld_conn_t *c,
                                   const ld_identify_info_t *info);

/* ---- subscriptions and publishing ----------------------------------------------------------- */

/* A message accepted on a subscribed topic, delivered once per message ID. `from` is the peer
 * that propagated it (NULL for our own messages, see deliver_own). All pointers are valid only
 * during the call. */
typedef void (*ld_gs_message_fn)(ld_gs_service_t *svc, const char *topic, const uint8_t *data,
                                 size_t len, const uint8_t id[LD_GS_MSG_ID_LEN],
                                 const ld_peerid_t *from, void *user_data);

/* Subscribes to `topic` (copied) with one handler (`on_message` may be NULL: relay only). The
 * subscription is announced to every pubsub peer and the mesh is joined. Errors: LD_ERR_EXISTS
 * (already subscribed; use unsubscribe first), LD_ERR_INVALID_ARG (empty topic or longer than
 * LD_GS_MAX_TOPIC_LEN), LD_ERR_LIMIT (LD_GS_SERVICE_MAX_SUBSCRIPTIONS), LD_ERR_NOMEM. */
int ld_gs_service_subscribe(ld_gs_service_t *svc, const char *topic, ld_gs_message_fn on_message,
                            void *user_data);

/* Leaves `topic`: announced, mesh pruned with the unsubscribe backoff; the handler is not called
 * again. LD_ERR_NOT_FOUND when not subscribed. */
int ld_gs_service_unsubscribe(ld_gs_service_t *svc, const char *topic);

bool ld_gs_service_subscribed(const ld_gs_service_t *svc, const char *topic);

/* Publishes `data` (copied as needed) on `topic`, whether subscribed or not (fanout). Local
 * validators are not run on it. Returns the number of peers it was sent to (0: nobody to send
 * to — nwaku's NoPeersToPublish), or LD_ERR_TOO_LARGE (the RPC would exceed
 * params.max_rpc_size), LD_ERR_EXISTS (the same data was seen within the seen TTL),
 * LD_ERR_INVALID_ARG, LD_ERR_NOMEM. */
int ld_gs_service_publish(ld_gs_service_t *svc, const char *topic, const uint8_t *data, size_t len);
/* ld_gs_service_publish that also stores the message's ID (ld_gs_msg_id of `data`, the ID our own
 * delivery of it carries, see deliver_own) in `id` when not NULL, whatever the result: the data
 * is hashed once for the ID, the seen cache and the delivery. */
int ld_gs_service_publish_id(ld_gs_service_t *svc, const char *topic, const uint8_t *data,
                             size_t len, uint8_t id[LD_GS_MSG_ID_LEN]);

/* How many peers the message `data` reached when it was seen on `topic`, for a publish refused
 * with LD_ERR_EXISTS: ld_gs_router_seen_reach for the message's ID, now. */
int ld_gs_service_seen_reach(const ld_gs_service_t *svc, const char *topic, const uint8_t *data,
                             size_t len);

/* ---- validation ----------------------------------------------------------------------------- */

/* Asynchronous validator: called once per new message (not our own) on a matching topic. It
 * must answer exactly once with ld_gs_service_validation_done(svc, token, verdict), now or
 * later; `topic`, `data` and `from` stay valid until it has answered (or the validation timed
 * out, see below). Validators run in the order they were added; the first verdict that is not
 * Accept is final and the later validators are skipped. A message no validator covers is
 * accepted. Reject penalises the propagating peer (P4); Ignore drops without penalty. */
typedef void (*ld_gs_validator_fn)(ld_gs_service_t *svc, uint64_t token, const char *topic,
                                   const uint8_t *data, size_t len, const ld_peerid_t *from,
                                   void *user_data);

/* Adds a validator for `topic` (copied), or for every topic when `topic` is NULL. Returns its
 * id (> 0) or LD_ERR_LIMIT (LD_GS_SERVICE_MAX_VALIDATORS), LD_ERR_INVALID_ARG, LD_ERR_NOMEM. */
int ld_gs_service_add_validator(ld_gs_service_t *svc, const char *topic, ld_gs_validator_fn fn,
                                void *user_data);

/* Removes a validator; validations waiting on it still accept its late answer, later ones skip
 * it. LD_ERR_NOT_FOUND for an unknown id. */
int ld_gs_service_remove_validator(ld_gs_service_t *svc, int validator_id);

/* Completes the current validator's step for `token`; may be called from inside the validator.
 * Accept moves on to the next validator (called from the loop's next turn) or, after the last
 * one, forwards the message at once and delivers it to the handler from the loop. Reject and
 * Ignore are final at once. Returns 0, LD_ERR_NOT_FOUND (unknown token: already answered, timed
 * out after validation_timeout_ms — then the message was ignored — or the service dropped it),
 * LD_ERR_INVALID_ARG (bad verdict). */
int ld_gs_service_validation_done(ld_gs_service_t *svc, uint64_t token, ld_gs_verdict_t verdict);

/* ---- events --------------------------------------------------------------------------------- */

typedef struct ld_gs_service_events {
  /* The mesh size of a subscribed topic changed (topic health). Reported once per loop turn
   * with the current size, only when it differs from the last size reported. Optional. */
  void (*on_mesh_changed)(ld_gs_service_t *svc, const char *topic, size_t mesh_size,
                          void *user_data);
  /* A pubsub peer was added (`up` true: its stream protocol was negotiated) or removed. */
  void (*on_peer)(ld_gs_service_t *svc, const ld_peerid_t *peer, bool up, void *user_data);
} ld_gs_service_events_t;

/* Sets the event callbacks (`ev` copied; NULL removes them). */
void ld_gs_service_set_events(ld_gs_service_t *svc, const ld_gs_service_events_t *ev,
                              void *user_data);

/* ---- introspection -------------------------------------------------------------------------- */

/* Mesh peers of `topic`: writes up to `cap` peer IDs into `out` (may be NULL with cap 0) and
 * returns the mesh size (0 when not subscribed). */
size_t ld_gs_service_mesh_peers(const ld_gs_service_t *svc, const char *topic, ld_peerid_t *out,
                                size_t cap);

/* Peers that announced a subscription to `topic`, as above. */
size_t ld_gs_service_topic_peers(const ld_gs_service_t *svc, const char *topic, ld_peerid_t *out,
                                 size_t cap);

/* Per-topic counters (messages and bytes in/out, validation results); LD_ERR_NOT_FOUND if the
 * topic was never seen. */
int ld_gs_service_topic_stats(const ld_gs_service_t *svc, const char *topic,
                              ld_gs_topic_stats_t *out);

typedef struct ld_gs_peer_info {
  ld_peerid_t id;
  ld_gs_proto_t proto; /* the protocol negotiated first */
  bool outbound;       /* the first tracked connection was dialed by us */
  bool writable;       /* the outbound stream is open */
  size_t n_conns;
  double score;
  uint64_t rpcs_dropped; /* frames dropped at the outbound cap */
} ld_gs_peer_info_t;

/* Connected pubsub peers (added to the router): writes up to `cap` into `out` and returns how
 * many there are. */
size_t ld_gs_service_peers(const ld_gs_service_t *svc, ld_gs_peer_info_t *out, size_t cap);

/* Outbound backlog: of the pubsub peers, how many (`*over`) have more than
 * `threshold` bytes waiting to be written (the stream's buffer beyond the flow-control window
 * plus the frames queued before it opened), and how many there are (`*total`). A publisher that
 * waits while most of them are over keeps its frames under the per-peer cap (max_queued_bytes),
 * beyond which they would be dropped. */
void ld_gs_service_backlog(const ld_gs_service_t *svc, size_t threshold, size_t *over,
                           size_t *total);

typedef struct ld_gs_service_stats {
  ld_gs_stats_t router;
  uint64_t frames_in, frames_out;
  uint64_t frames_dropped, bytes_dropped; /* outbound cap */
  uint64_t frames_too_large;              /* inbound frames over max_rpc_size */
  uint64_t inbound_resets;                /* inbound streams we reset (replaced or bad input) */
  uint64_t outbound_opened, outbound_failed;
  uint64_t validations_timed_out;
  uint64_t disconnects; /* router-requested */
} ld_gs_service_stats_t;

void ld_gs_service_stats(const ld_gs_service_t *svc, ld_gs_service_stats_t *out);

/* The router, for introspection the service does not wrap (scores, stats). Do not call its
 * input or action functions directly. */
ld_gs_router_t *ld_gs_service_router(ld_gs_service_t *svc);

#endif
