/* Relay on static shards:
 *   POST/DELETE /relay/v1/subscriptions        [pubsub topics]
 *   GET         /relay/v1/messages/{pubsubTopic}  the cached messages, then cleared
 *   POST        /relay/v1/messages/{pubsubTopic}  publish a RelayWakuMessage */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "rest/relay_common.h"
#include "waku/core/topics.h"

/* nwaku's "Invalid pubsub topic(s): @["a", "b"]"; 0 when all are valid. */
static int check_pubsub_topics(ld_http_request_t *req, const char **topics, size_t n) {
  char msg[LD_REST_ERR_MAX * 4];
  size_t used = (size_t)snprintf(msg, sizeof msg, "Invalid pubsub topic(s): @[");
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    if (ld_pubsub_topic_valid(topics[i], strlen(topics[i])))
      continue;
    if (used < sizeof msg)
      used += (size_t)snprintf(msg + used, sizeof msg - used, "%s\"%s\"", bad > 0 ? ", " : "",
                               topics[i]);
    bad++;
  }
  if (bad == 0)
    return 0;
  if (used < sizeof msg)
    snprintf(msg + used, sizeof msg - used, "]");
  ld_http_respond_text(req, 400, msg);
  return LD_ERR_INVALID_ARG;
}

static void subscriptions(ld_rest_server_t *srv, ld_http_request_t *req, bool subscribe) {
  json_t *body = NULL;
  const char **topics = NULL;
  size_t n = 0;
  if (ld_rest_read_topic_list(req, &body, &topics, &n) != 0)
    return;
  if (check_pubsub_topics(req, topics, n) == 0) {
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
      rc = subscribe ? ld_rest_relay_subscribe(srv, req, topics[i], LD_REST_PUBSUB_TOPIC, topics[i],
                                               strlen(topics[i]))
                     : ld_rest_relay_unsubscribe(srv, req, topics[i], LD_REST_PUBSUB_TOPIC,
                                                 topics[i], strlen(topics[i]));
    if (rc == 0)
      ld_rest_respond_ok(req);
  }
  free(topics);
  json_decref(body);
}

static void post_message(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                         void *user_data) {
  (void)user_data;
  const char *topic = ld_route_param(m, "pubsubTopic");
  const ld_rest_relay_ops_t *relay = srv->ctx.relay;
  if (!relay->subscribed(relay->user_data, topic)) {
    ld_rest_respond_error(req, 400, "Failed to publish: Node not subscribed to topic: ", topic);
    return;
  }
  ld_waku_message_t msg;
  ld_waku_message_init(&msg);
  if (ld_rest_read_message(srv, req, &msg) != 0)
    return;
  ld_rest_relay_publish(srv, req, topic, &msg, "Failed to publish: ", 500);
  ld_waku_message_clear(&msg);
}

int ld_rest_install_relay(ld_rest_server_t *srv) {
  static const ld_rest_relay_routes_t routes = {
      .subscriptions = "/relay/v1/subscriptions",
      .messages = "/relay/v1/messages/{pubsubTopic}",
      .param = "pubsubTopic",
      .kind = LD_REST_PUBSUB_TOPIC,
      .subscriptions_fn = subscriptions,
      .post_message = post_message,
  };
  return ld_rest_install_relay_routes(srv, &routes);
}
