/* Pieces shared by the static-shard and the autosharding relay endpoints. Each function that
 * takes `req` answers it when it fails (and returns the error); on success the caller answers. */
#ifndef LD_REST_RELAY_COMMON_H
#define LD_REST_RELAY_COMMON_H

#include "rest/server_internal.h"

/* Reads the body as a JSON list of strings into a new reference *body and an array *topics of
 * borrowed strings (free() it); 400 on failure. */
int ld_rest_read_topic_list(ld_http_request_t *req, json_t **body, const char ***topics, size_t *n);

/* Caches `topic` (of `kind`) and subscribes the node to `pubsub_topic`; 500
 * "Subscribe failed:<why>" on failure (the cache is left as it was). */
int ld_rest_relay_subscribe(ld_rest_server_t *srv, ld_http_request_t *req, const char *pubsub_topic,
                            ld_rest_topic_kind_t kind, const char *topic, size_t len);

/* Forgets `topic` in the cache and unsubscribes the node from `pubsub_topic`; 500
 * "Unsubscribe failed:<why>" on failure. */
int ld_rest_relay_unsubscribe(ld_rest_server_t *srv, ld_http_request_t *req,
                              const char *pubsub_topic, ld_rest_topic_kind_t kind,
                              const char *topic, size_t len);

/* Answers the cached messages of a topic as a JSON array and clears them; 404 when the topic is
 * not cached, with nwaku's text/plain body: empty for a pubsub topic, the topic for a content
 * topic. */
void ld_rest_respond_cached(ld_rest_server_t *srv, ld_http_request_t *req,
                            ld_rest_topic_kind_t kind, const char *topic, size_t len);

/* Reads the body as a RelayWakuMessage into `msg` (initialised; owned on success); 400 with the
 * reason on failure. */
int ld_rest_read_message(ld_rest_server_t *srv, ld_http_request_t *req, ld_waku_message_t *msg);

/* Publishes `msg` on `pubsub_topic` and answers: 200 "OK" on success (a duplicate included;
 * once the node has archived the message when it has an archive, see the relay op
 * await_archived), 400 "<prefix><why>" for a refused message, `internal_status` "<prefix><why>"
 * for internal failures. */
void ld_rest_relay_publish(ld_rest_server_t *srv, ld_http_request_t *req, const char *pubsub_topic,
                           const ld_waku_message_t *msg, const char *prefix,
                           unsigned internal_status);

/* One relay endpoint family: the subscriptions path (OPTIONS, POST, DELETE) and the messages path
 * with a `{param}` topic (OPTIONS, GET of the cached messages of `kind`, and, when post_message
 * is set, POST). */
typedef struct ld_rest_relay_routes {
  const char *subscriptions;
  const char *messages;
  const char *param;
  ld_rest_topic_kind_t kind;
  /* Handles a subscription list (subscribe or unsubscribe) and answers the request. */
  void (*subscriptions_fn)(ld_rest_server_t *srv, ld_http_request_t *req, bool subscribe);
  ld_rest_handler_fn post_message; /* NULL: no POST on the messages path */
} ld_rest_relay_routes_t;

/* Registers the routes of `r` (borrowed; must outlive the server). Returns 0 or the error of
 * ld_rest_server_add_route. */
int ld_rest_install_relay_routes(ld_rest_server_t *srv, const ld_rest_relay_routes_t *r);

#endif
