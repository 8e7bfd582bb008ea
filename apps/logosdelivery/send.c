/* `logosdelivery send --peer <multiaddr> --content-topic T [--cluster-id C
 * --num-shards-in-network N | --pubsub-topic P] <text>`: joins the relay mesh through the peer,
 * publishes one WakuMessage once the peer announced the topic, prints its hash as 0x… hex. */
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/hex.h"
#include "logosdelivery/app.h"
#include "logosdelivery/client.h"

typedef struct send_state {
  const char *text;
  uint8_t meta[LD_WAKU_MAX_META_LEN];
  size_t meta_len;
} send_state_t;

static void send_tick(ld_client_t *c) {
  send_state_t *s = c->user_data;
  if (ld_client_topic_peers(c) == 0)
    return;
  ld_waku_message_t msg;
  ld_waku_message_init(&msg);
  msg.payload = (const uint8_t *)s->text;
  msg.payload_len = strlen(s->text);
  msg.content_topic = c->opts.content_topic;
  msg.content_topic_len = strlen(c->opts.content_topic);
  msg.meta = s->meta;
  msg.meta_len = s->meta_len;
  msg.ephemeral = c->opts.ephemeral;
  uint8_t hash[LD_WAKU_HASH_LEN];
  int rc = ld_node_publish(c->node, c->topic, &msg, hash);
  if (rc == 0)
    return; /* the topic peer is not reachable for publishing yet */
  if (rc < 0) {
    fprintf(stderr, "send: publishing on %s failed: %s (%s)\n", c->topic, ld_strerror(rc),
            ld_errname(rc));
    ld_client_finish(c, rc == LD_ERR_TOO_LARGE ? LD_EXIT_USAGE : LD_CANARY_EXIT_OTHER);
    return;
  }
  char hex[LD_WAKU_HASH_HEX_LEN + 1];
  ld_waku_hash_to_hex(hash, hex);
  printf("%s\n", hex);
  fflush(stdout);
  ld_client_finish(c, LD_EXIT_OK);
}

static void send_peer_lost(ld_client_t *c, int reason) {
  fprintf(stderr, "send: %s closed the connection (%s) before the message was sent\n", c->opts.peer,
          reason != 0 ? ld_errname(reason) : "no reason given");
  ld_client_finish(c, ld_client_exit_code(reason != 0 ? reason : LD_ERR_CLOSED));
}

static int parse_meta(const char *hex, send_state_t *s) {
  if (hex[0] == '\0')
    return 0;
  if (ld_hex_decode(hex, strlen(hex), s->meta, sizeof s->meta, &s->meta_len) != 0) {
    fprintf(stderr, "send: --meta must be at most %d bytes of hex\n", LD_WAKU_MAX_META_LEN);
    return LD_ERR_INVALID_ARG;
  }
  return 0;
}

int ld_app_send(int argc, char **argv) {
  static ld_client_t c;
  const char *positional[8];
  size_t n_positional = 0;
  char err[512];
  memset(&c, 0, sizeof c);
  c.command = "send";
  if (ld_client_parse("send", argc, argv, true, &c.opts, positional, &n_positional, err,
                      sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return LD_EXIT_USAGE;
  }
  if (c.opts.help)
    return LD_EXIT_OK;
  send_state_t s = {0};
  if (n_positional != 1) {
    fprintf(stderr, "usage: logosdelivery send --peer <multiaddr> --content-topic T "
                    "[--cluster-id C --num-shards-in-network N | --pubsub-topic P] <text>\n");
    return LD_EXIT_USAGE;
  }
  s.text = positional[0];
  if (parse_meta(c.opts.meta_hex, &s) != 0)
    return LD_EXIT_USAGE;
  c.user_data = &s;
  static const ld_client_hooks_t hooks = {send_tick, NULL, send_peer_lost};
  return ld_client_run(&c, &hooks);
}
