/* `logosdelivery subscribe --peer <multiaddr> --content-topic T [--filter]`: prints each message
 * of that content topic as one JSON line (ld_client_message_json).
 *   relay (default): joins the relay mesh through the peer;
 *   --filter: a node without relay subscribes with filter v2 on the computed pubsub topic, pings
 *     the subscription every --ping-interval seconds (js-waku: 60), subscribes again when the
 *     service lost it (404 on ping) or after a reconnection, and unsubscribes on exit.
 * "subscribe: receiving …" goes to stderr once messages can arrive. */
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "logosdelivery/app.h"
#include "logosdelivery/client.h"
#include "logosdelivery/hints.h"
#include "waku/filter/client.h"

typedef struct subscribe_state {
  int64_t received;
  bool announced;
  /* --filter */
  ld_filter_client_t *fc;
  bool subscribed;  /* the service confirmed the subscription */
  bool subscribing; /* a SUBSCRIBE is in flight */
  bool pinging;     /* a PING is in flight */
  bool confirmed;   /* the first SUBSCRIBE succeeded */
  uint64_t last_ms; /* the last confirmation, or the last failed attempt */
} subscribe_state_t;

static bool wanted(const ld_client_t *c, const char *pubsub_topic, const ld_waku_message_t *msg) {
  return strcmp(pubsub_topic, c->topic) == 0 &&
         msg->content_topic_len == strlen(c->opts.content_topic) &&
         memcmp(msg->content_topic, c->opts.content_topic, msg->content_topic_len) == 0;
}

static void deliver(ld_client_t *c, const char *pubsub_topic, const ld_waku_message_t *msg,
                    const uint8_t hash[LD_WAKU_HASH_LEN]) {
  subscribe_state_t *s = c->user_data;
  if (c->finished || !wanted(c, pubsub_topic, msg))
    return;
  ld_client_print_message(pubsub_topic, msg, hash);
  if (c->opts.count > 0 && ++s->received >= c->opts.count)
    ld_client_finish(c, LD_EXIT_OK);
}

static void announce(ld_client_t *c) {
  subscribe_state_t *s = c->user_data;
  if (s->announced)
    return;
  s->announced = true;
  fprintf(stderr, "subscribe: receiving %s on %s through %s\n", c->opts.content_topic, c->topic,
          c->opts.peer);
}

/* ---- relay ---------------------------------------------------------------------------------- */

static void relay_message(ld_client_t *c, const ld_fanout_message_t *m) {
  deliver(c, m->pubsub_topic, m->msg, m->hash);
}

/* Announced once the peer is in our mesh of the topic: from then on it forwards every new
 * message to us (a message published before that is not repaired by gossip). */
static void relay_tick(ld_client_t *c) {
  if (ld_client_mesh_peers(c) > 0)
    announce(c);
}

static void subscribe_peer_lost(ld_client_t *c, int reason) {
  subscribe_state_t *s = c->user_data;
  s->announced = false;
  s->subscribed = false;
  LD_WARN("subscribe", "lost the connection to %s (%s); reconnecting", c->opts.peer,
          reason != 0 ? ld_errname(reason) : "closed");
}

/* ---- filter --------------------------------------------------------------------------------- */

static void filter_subscribe(ld_client_t *c);

static void report_status(const char *what, const ld_filter_result_t *res) {
  fprintf(stderr, "subscribe: %s failed: %u %s", what, res->status_code, res->status_desc);
  if (res->err != 0)
    fprintf(stderr, " (%s)", ld_errname(res->err));
  char buf[256];
  fprintf(stderr, "; %s\n",
          ld_app_service_hint(res->status_code, res->err, res->status_desc, "--filter=true", buf,
                              sizeof buf));
}

static void on_subscribed(const ld_filter_result_t *res, void *user_data) {
  ld_client_t *c = user_data;
  subscribe_state_t *s = c->user_data;
  s->subscribing = false;
  if (c->finished)
    return;
  s->last_ms = ld_client_now_ms(c);
  if (res->err == 0 && res->status_code == LD_FILTER_STATUS_OK) {
    s->subscribed = s->confirmed = true;
    announce(c);
    return;
  }
  report_status("filter subscription", res);
  if (!s->confirmed) /* a later failure is tried again (filter_tick, reconnection) */
    ld_client_finish(c, ld_client_service_exit(res->err));
}

static void filter_subscribe(ld_client_t *c) {
  subscribe_state_t *s = c->user_data;
  if (s->subscribing || c->conn == NULL)
    return;
  const char *topics[1] = {c->opts.content_topic};
  int rc = ld_filter_client_subscribe(s->fc, c->conn, c->topic, topics, 1, on_subscribed, c);
  if (rc != 0) {
    char buf[256];
    fprintf(stderr, "subscribe: cannot subscribe: %s (%s); %s\n", ld_strerror(rc), ld_errname(rc),
            ld_app_service_hint(0, rc, NULL, "--filter=true", buf, sizeof buf));
    ld_client_finish(c, ld_client_exit_code(rc));
    return;
  }
  s->subscribing = true;
}

static void on_pinged(const ld_filter_result_t *res, void *user_data) {
  ld_client_t *c = user_data;
  subscribe_state_t *s = c->user_data;
  s->pinging = false;
  if (c->finished)
    return;
  if (res->err == 0 && res->status_code == LD_FILTER_STATUS_OK) {
    s->last_ms = ld_client_now_ms(c);
    return;
  }
  if (res->err == 0 && res->status_code == LD_FILTER_STATUS_NOT_FOUND) {
    fprintf(stderr, "subscribe: %s lost the subscription; subscribing again\n", c->opts.peer);
    s->subscribed = false;
    filter_subscribe(c);
    return;
  }
  LD_WARN("subscribe", "ping of %s failed: %u %s", c->opts.peer, res->status_code,
          res->status_desc);
  s->last_ms = ld_client_now_ms(c); /* try again after the next interval */
}

/* Every interval: a ping of the subscription, or another attempt when it was lost. */
static void filter_tick(ld_client_t *c) {
  subscribe_state_t *s = c->user_data;
  uint64_t interval_ms = (uint64_t)c->opts.ping_interval_s * 1000;
  if (!s->confirmed || s->pinging || s->subscribing || c->conn == NULL ||
      ld_client_now_ms(c) - s->last_ms < interval_ms)
    return;
  if (!s->subscribed)
    filter_subscribe(c);
  else if (ld_filter_client_ping(s->fc, c->conn, on_pinged, c) == 0)
    s->pinging = true;
}

static void on_push(const ld_filter_push_t *p, void *user_data) {
  deliver(user_data, p->pubsub_topic, p->msg, p->hash);
}

static void filter_started(ld_client_t *c) {
  subscribe_state_t *s = c->user_data;
  s->fc = ld_filter_client_new(ld_node_switch(c->node), NULL);
  if (s->fc == NULL) {
    fprintf(stderr, "subscribe: cannot start the filter client; run it again with "
                    "--log-level=DEBUG to see why, or subscribe over relay without --filter\n");
    ld_client_finish(c, LD_CANARY_EXIT_OTHER);
    return;
  }
  ld_filter_client_set_push_handler(s->fc, on_push, c);
}

static void filter_peer_ready(ld_client_t *c) {
  subscribe_state_t *s = c->user_data;
  if (s->fc != NULL)
    filter_subscribe(c);
}

static void on_unsubscribed(const ld_filter_result_t *res, void *user_data) {
  ld_client_t *c = user_data;
  if (res->err == 0 && res->status_code == LD_FILTER_STATUS_OK)
    fprintf(stderr, "subscribe: unsubscribed from %s\n", c->opts.peer);
  else
    report_status("unsubscribing", res);
  ld_client_stop(c);
}

static void filter_finishing(ld_client_t *c) {
  subscribe_state_t *s = c->user_data;
  const char *topics[1] = {c->opts.content_topic};
  if (s->fc == NULL || !s->subscribed || c->conn == NULL ||
      ld_filter_client_unsubscribe(s->fc, c->conn, c->topic, topics, 1, on_unsubscribed, c) != 0)
    ld_client_stop(c);
}

/* ---- the command ---------------------------------------------------------------------------- */

static int parse(ld_client_t *c, int argc, char **argv) {
  const char *positional[8];
  size_t n_positional = 0;
  char err[512];
  if (ld_client_parse(LD_CLIENT_SUBSCRIBE, argc, argv, &c->opts, positional, &n_positional, err,
                      sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return LD_EXIT_USAGE;
  }
  if (!c->opts.help && n_positional != 0) {
    fprintf(stderr,
            "subscribe: unexpected argument '%s'; subscribe takes only flags "
            "(`logosdelivery subscribe --help`)\n",
            positional[0]);
    return LD_EXIT_USAGE;
  }
  return LD_EXIT_OK;
}

int ld_app_subscribe(int argc, char **argv) {
  static ld_client_t c;
  static const ld_client_hooks_t relay_hooks = {
      .on_tick = relay_tick, .on_message = relay_message, .on_peer_lost = subscribe_peer_lost};
  static const ld_client_hooks_t filter_hooks = {.on_tick = filter_tick,
                                                 .on_started = filter_started,
                                                 .on_peer_ready = filter_peer_ready,
                                                 .on_peer_lost = subscribe_peer_lost,
                                                 .on_finishing = filter_finishing};
  subscribe_state_t s;
  memset(&c, 0, sizeof c);
  memset(&s, 0, sizeof s);
  int code = parse(&c, argc, argv);
  if (code == LD_EXIT_OK && !c.opts.help) {
    c.user_data = &s;
    code = ld_client_run(&c, c.opts.light ? &filter_hooks : &relay_hooks);
  }
  ld_filter_client_free(s.fc);
  ld_client_opts_clear(&c.opts);
  return code;
}
