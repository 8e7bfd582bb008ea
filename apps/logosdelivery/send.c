/* `logosdelivery send --peer <multiaddr> --content-topic T [--cluster-id C
 * --num-shards-in-network N | --pubsub-topic P] [--lightpush] <text>`: publishes one WakuMessage
 * (version 0, timestamp now) through the peer and prints its hash as 0x… hex on stdout.
 *   relay (default): joins the relay mesh through the peer and publishes once the peer announced
 *     the topic;
 *   --lightpush: a node without relay pushes the message to the peer with lightpush v3 on the
 *     computed pubsub topic; the relay peer count the service reports goes to stderr, and an
 *     answer other than 200 prints nwaku's status code, its name and the description on stderr
 *     and exits with LD_EXIT_SERVICE. */
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/hex.h"
#include "logosdelivery/app.h"
#include "logosdelivery/client.h"
#include "logosdelivery/hints.h"
#include "waku/lightpush/client.h"

typedef struct send_state {
  const char *text;
  uint8_t meta[LD_WAKU_MAX_META_LEN];
  size_t meta_len;
  bool pushed;               /* --lightpush: the push was started */
  ld_lightpush_call_t *call; /* --lightpush: the push in flight */
} send_state_t;

static void make_message(ld_client_t *c, ld_waku_message_t *msg) {
  send_state_t *s = c->user_data;
  ld_waku_message_init(msg);
  msg->payload = (const uint8_t *)s->text;
  msg->payload_len = strlen(s->text);
  msg->content_topic = c->opts.content_topic;
  msg->content_topic_len = strlen(c->opts.content_topic);
  msg->meta = s->meta;
  msg->meta_len = s->meta_len;
  msg->ephemeral = c->opts.ephemeral;
}

static void print_hash(const uint8_t hash[LD_WAKU_HASH_LEN]) {
  char hex[LD_WAKU_HASH_HEX_LEN + 1];
  ld_waku_hash_to_hex(hash, hex);
  printf("%s\n", hex);
  fflush(stdout);
}

/* ---- relay ---------------------------------------------------------------------------------- */

static void relay_tick(ld_client_t *c) {
  if (ld_client_topic_peers(c) == 0)
    return;
  ld_waku_message_t msg;
  make_message(c, &msg);
  uint8_t hash[LD_WAKU_HASH_LEN];
  int rc = ld_node_publish(c->node, c->topic, &msg, hash);
  if (rc == 0)
    return; /* the topic peer is not reachable for publishing yet */
  if (rc < 0) {
    fprintf(stderr, "send: publishing on %s failed: %s (%s); %s\n", c->topic, ld_strerror(rc),
            ld_errname(rc),
            rc == LD_ERR_TOO_LARGE ? "send a shorter message (the network's --max-msg-size)"
                                   : "run it again with --log-level=DEBUG to see why");
    ld_client_finish(c, rc == LD_ERR_TOO_LARGE ? LD_EXIT_USAGE : LD_CANARY_EXIT_OTHER);
    return;
  }
  print_hash(hash);
  ld_client_finish(c, LD_EXIT_OK);
}

static void send_peer_lost(ld_client_t *c, int reason) {
  fprintf(stderr,
          "send: %s closed the connection (%s) before the message was sent; check the node's log "
          "for why (e.g. its --max-connections) and try again\n",
          c->opts.peer, reason != 0 ? ld_errname(reason) : "no reason given");
  ld_client_finish(c, ld_client_exit_code(reason != 0 ? reason : LD_ERR_CLOSED));
}

/* ---- lightpush ------------------------------------------------------------------------------ */

static void report_refusal(const ld_lightpush_result_t *res) {
  fprintf(stderr, "send: lightpush failed: %u %s: %s", res->status_code,
          ld_lightpush_code_name(res->status_code),
          res->status_desc != NULL ? res->status_desc : "");
  if (res->err != 0)
    fprintf(stderr, " (%s)", ld_errname(res->err));
  char buf[256];
  fprintf(stderr, "; %s\n",
          ld_app_service_hint(res->status_code, res->err, res->status_desc, "--lightpush=true", buf,
                              sizeof buf));
}

static void on_pushed(const ld_lightpush_result_t *res, void *user_data) {
  ld_client_t *c = user_data;
  send_state_t *s = c->user_data;
  s->call = NULL;
  if (c->finished)
    return;
  if (res->status_code != LD_LIGHTPUSH_SUCCESS) {
    report_refusal(res);
    ld_client_finish(c, ld_client_service_exit(res->err));
    return;
  }
  uint8_t hash[LD_WAKU_HASH_LEN];
  memcpy(hash, res->hash, sizeof hash);
  if (!res->has_hash) {
    ld_waku_message_t msg;
    make_message(c, &msg);
    msg.timestamp = res->timestamp;
    ld_waku_message_hash(c->topic, &msg, hash);
  }
  print_hash(hash);
  fprintf(stderr, "send: %s relayed the message to %u peer%s\n", c->opts.peer,
          res->relay_peer_count, res->relay_peer_count == 1 ? "" : "s");
  ld_client_finish(c, LD_EXIT_OK);
}

static void push(ld_client_t *c) {
  send_state_t *s = c->user_data;
  if (s->pushed)
    return;
  s->pushed = true;
  ld_waku_message_t msg;
  make_message(c, &msg);
  int rc = ld_lightpush_client_push_ex(ld_node_switch(c->node), c->conn, c->topic, &msg, NULL,
                                       on_pushed, c, &s->call);
  if (rc == 0)
    return;
  char buf[256];
  fprintf(stderr, "send: cannot push on %s: %s (%s); %s\n", c->topic, ld_strerror(rc),
          ld_errname(rc),
          rc == LD_ERR_TOO_LARGE || rc == LD_ERR_FIELD_TOO_LONG
              ? "send a shorter message or --meta"
              : ld_app_service_hint(0, rc, NULL, "--lightpush=true", buf, sizeof buf));
  bool usage = rc == LD_ERR_TOO_LARGE || rc == LD_ERR_FIELD_TOO_LONG || rc == LD_ERR_INVALID_ARG;
  ld_client_finish(c, usage ? LD_EXIT_USAGE : ld_client_exit_code(rc));
}

static void lightpush_finishing(ld_client_t *c) {
  send_state_t *s = c->user_data;
  if (s->call != NULL)
    ld_lightpush_client_cancel(s->call);
  s->call = NULL;
  ld_client_stop(c);
}

/* ---- the command ---------------------------------------------------------------------------- */

static int parse_meta(const char *hex, send_state_t *s) {
  if (hex[0] == '\0')
    return 0;
  if (ld_hex_decode(hex, strlen(hex), s->meta, sizeof s->meta, &s->meta_len) != 0) {
    fprintf(stderr,
            "send: --meta '%s' is not hex of at most %d bytes; give an even number of hex "
            "digits, e.g. --meta 0a1b\n",
            hex, LD_WAKU_MAX_META_LEN);
    return LD_ERR_INVALID_ARG;
  }
  return 0;
}

static int parse(ld_client_t *c, send_state_t *s, int argc, char **argv) {
  const char *positional[8];
  size_t n_positional = 0;
  char err[512];
  if (ld_client_parse(LD_CLIENT_SEND, argc, argv, &c->opts, positional, &n_positional, err,
                      sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return LD_EXIT_USAGE;
  }
  if (c->opts.help)
    return LD_EXIT_OK;
  if (n_positional != 1) {
    fprintf(stderr,
            "send: %s; give the message text as one argument (in quotes when it has spaces)"
            "\n%s\n",
            n_positional == 0 ? "no message text" : "more than one message text",
            ld_client_usage(LD_CLIENT_SEND));
    return LD_EXIT_USAGE;
  }
  s->text = positional[0];
  return parse_meta(c->opts.meta_hex, s) != 0 ? LD_EXIT_USAGE : LD_EXIT_OK;
}

int ld_app_send(int argc, char **argv) {
  static ld_client_t c;
  static const ld_client_hooks_t relay_hooks = {.on_tick = relay_tick,
                                                .on_peer_lost = send_peer_lost};
  static const ld_client_hooks_t lightpush_hooks = {
      .on_peer_ready = push, .on_peer_lost = send_peer_lost, .on_finishing = lightpush_finishing};
  send_state_t s;
  memset(&c, 0, sizeof c);
  memset(&s, 0, sizeof s);
  int code = parse(&c, &s, argc, argv);
  if (code == LD_EXIT_OK && !c.opts.help) {
    c.user_data = &s;
    code = ld_client_run(&c, c.opts.light ? &lightpush_hooks : &relay_hooks);
  }
  ld_client_opts_clear(&c.opts);
  return code;
}
