/* Relay with autosharding:
 *   POST/DELETE /relay/v1/auto/subscriptions          [content topics]
 *   GET         /relay/v1/auto/messages/{contentTopic}  the cached messages, then cleared
 *   POST        /relay/v1/auto/messages               publish on the content topic's shard */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "rest/relay_common.h"
#include "waku/core/sharding.h"

#define STATIC_SHARDING_TEXT                                                                       \
  "Static sharding is used, relay subscriptions must specify a pubsub topic"

/* The pubsub topic of `content_topic`; on failure the reason (nwaku's wording) goes to `why`. */
static int shard_topic(const ld_rest_server_t *srv, const char *content_topic, size_t len,
                       char *out, size_t cap, char *why, size_t why_cap) {
  if (srv->ctx.num_shards_in_network == 0) {
    snprintf(why, why_cap, "%s", "Autosharding is disabled");
    return LD_ERR_UNSUPPORTED;
  }
  ld_topic_error_t reason = LD_TOPIC_OK;
  int rc = ld_autoshard_pubsub_topic(content_topic, len, srv->ctx.num_shards_in_network,
                                     srv->ctx.cluster_id, out, cap, &reason);
  if (rc < 0) {
    snprintf(why, why_cap, "Autosharding error: %s",
             reason != LD_TOPIC_OK ? ld_topic_strerror(reason) : ld_strerror(rc));
    return rc;
  }
  return 0;
}

static void subscriptions(ld_rest_server_t *srv, ld_http_request_t *req, bool subscribe) {
  json_t *body = NULL;
  const char **topics = NULL;
  size_t n = 0;
  if (ld_rest_read_topic_list(req, &body, &topics, &n) != 0)
    return;
  int rc = 0;
  const char *prefix = subscribe ? "Subscribe failed:" : "Unsubscribe failed:";
  for (size_t i = 0; i < n && rc == 0; i++) {
    char pubsub[LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1], why[LD_REST_ERR_MAX];
    if (srv->ctx.num_shards_in_network == 0) {
      ld_rest_respond_error(req, 500, prefix, STATIC_SHARDING_TEXT);
      rc = LD_ERR_UNSUPPORTED;
    } else if ((rc = shard_topic(srv, topics[i], strlen(topics[i]), pubsub, sizeof pubsub, why,
                                 sizeof why)) != 0) {
      ld_rest_respond_error(req, 500, prefix, why);
    } else if (subscribe) {
      rc = ld_rest_relay_subscribe(srv, req, pubsub, LD_REST_CONTENT_TOPIC, topics[i],
                                   strlen(topics[i]));
    } else {
      rc = ld_rest_relay_unsubscribe(srv, req, pubsub, LD_REST_CONTENT_TOPIC, topics[i],
                                     strlen(topics[i]));
    }
  }
  if (rc == 0)
    ld_rest_respond_ok(req);
  free(topics);
  json_decref(body);
}

static void post_message(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                         void *user_data) {
  (void)m;
  (void)user_data;
  ld_waku_message_t msg;
  ld_waku_message_init(&msg);
  if (ld_rest_read_message(srv, req, &msg) != 0)
    return;
  char pubsub[LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1], why[LD_REST_ERR_MAX];
  if (shard_topic(srv, msg.content_topic, msg.content_topic_len, pubsub, sizeof pubsub, why,
                  sizeof why) != 0)
    ld_rest_respond_error(req, 400, "Failed to publish. ", why);
  else
    ld_rest_relay_publish(srv, req, pubsub, &msg, "Failed to publish: ", 500);
  ld_waku_message_clear(&msg);
}

int ld_rest_install_relay_auto(ld_rest_server_t *srv) {
  static const ld_rest_relay_routes_t routes = {
      .subscriptions = "/relay/v1/auto/subscriptions",
      .messages = "/relay/v1/auto/messages/{contentTopic}",
      .param = "contentTopic",
      .kind = LD_REST_CONTENT_TOPIC,
      .subscriptions_fn = subscriptions,
      .post_message = NULL,
  };
  static const char publish[] = "/relay/v1/auto/messages";
  int rc = ld_rest_install_relay_routes(srv, &routes);
  rc = rc ? rc : ld_rest_server_add_route(srv, "OPTIONS", publish, ld_rest_options_ok, NULL);
  return rc ? rc : ld_rest_server_add_route(srv, "POST", publish, post_message, NULL);
}
