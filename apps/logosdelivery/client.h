/* What `logosdelivery send` and `logosdelivery subscribe` share: their flags, the pubsub topic
 * they use, and a small relay node that does not listen, keeps one peer as a static peer and
 * runs until the command finishes, a deadline passes or SIGINT/SIGTERM arrives. */
#ifndef LD_APP_CLIENT_H
#define LD_APP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "logosdelivery/flags.h"
#include "node/node.h"

#define LD_CLIENT_TICK_MS 50

typedef struct ld_client_opts {
  char peer[LD_FLAG_STRING_MAX];
  char content_topic[LD_FLAG_STRING_MAX];
  char pubsub_topic[LD_FLAG_STRING_MAX];
  int64_t cluster_id;
  int64_t num_shards;
  int64_t timeout_s; /* 0: none */
  int64_t count;     /* subscribe: exit after this many messages (0: never) */
  char log_level[LD_FLAG_STRING_MAX];
  char meta_hex[LD_FLAG_STRING_MAX]; /* send: meta bytes */
  bool ephemeral;                    /* send */
  bool help;
} ld_client_opts_t;

/* Parses the shared flags (those a command does not take are refused by `send_flags`). Returns
 * 0, or LD_ERR_INVALID_ARG with the reason in `err`. positional/n_positional receive the
 * remaining arguments. */
int ld_client_parse(const char *command, int argc, char **argv, bool send_flags,
                    ld_client_opts_t *o, const char **positional, size_t *n_positional, char *err,
                    size_t errlen);

/* The pubsub topic of the options: --pubsub-topic when given (it must be a static-shard topic of
 * --cluster-id when that is given too), else the autosharding shard of --content-topic over
 * --num-shards-in-network (default 1) in --cluster-id (default 0). Also checks the content
 * topic. Writes the topic, its cluster and its shard. LD_ERR_INVALID_ARG with the reason. */
int ld_client_topic(const ld_client_opts_t *o, char *topic, size_t cap, uint16_t *cluster,
                    uint16_t *shard, char *err, size_t errlen);

typedef struct ld_client ld_client_t;

typedef struct ld_client_hooks {
  void (*on_tick)(ld_client_t *c);                                  /* every LD_CLIENT_TICK_MS */
  void (*on_message)(ld_client_t *c, const ld_fanout_message_t *m); /* optional */
  /* The peer's connection went away (the static-peer engine redials). Optional: default
   * keeps running. */
  void (*on_peer_lost)(ld_client_t *c, int reason);
} ld_client_hooks_t;

struct ld_client {
  const char *command; /* "send" or "subscribe", for messages */
  ld_client_opts_t opts;
  char topic[64];
  uv_loop_t loop;
  uv_signal_t sigint, sigterm;
  uv_timer_t tick;
  ld_node_t *node;
  const ld_client_hooks_t *hooks;
  uint64_t started_ms;
  bool peer_connected;
  bool finished;
  int exit_code;
  void *user_data;
};

/* Builds the node for `c->opts` and `c->topic`, runs the loop until ld_client_finish and returns
 * the exit code. Dial failures end the command with the canary exit codes. */
int ld_client_run(ld_client_t *c, const ld_client_hooks_t *hooks);

/* Ends the command with `exit_code` (the first call wins): stops the node and the loop. */
void ld_client_finish(ld_client_t *c, int exit_code);

/* Number of relay peers that announced the command's topic. */
size_t ld_client_topic_peers(const ld_client_t *c);

/* Number of peers in our mesh of the command's topic (they forward its messages to us). */
size_t ld_client_mesh_peers(const ld_client_t *c);

/* Exit code for an LD_ERR_* (as the canary maps them). */
int ld_client_exit_code(int err);

#endif
