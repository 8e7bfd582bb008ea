/* What `logosdelivery send`, `subscribe` and `query` share: their flags, the pubsub topic they
 * use, the output format of a message, and a small node that does not listen, keeps one peer as
 * a static peer and runs until the command finishes, a deadline passes or SIGINT/SIGTERM
 * arrives. send and subscribe run that node with relay (the default) or, for their lightpush
 * (`send --lightpush`) and filter (`subscribe --filter`) variants, without it; query always
 * runs it without relay.
 *
 * The cluster and the pubsub topic are the peer's unless flags say otherwise: the node first
 * connects in the flags' cluster (else 0) and reads the peer's metadata (cluster and shards);
 * from it the command settles its cluster and its topic (ld_client_topic) and prints the topic
 * on stderr. When the node in place does not fit them (the peer is in another cluster, or relay
 * needs the topic's shard) it is replaced once by one that does, which connects again.
 *
 * Output: every message a command prints is one compact JSON line on stdout (see
 * ld_client_message_json), so that scripts parse the output of `subscribe` (either variant) and
 * `query` alike. Diagnostics go to stderr.
 *
 * Everything here runs on the process's main thread (the client's loop). */
#ifndef LD_APP_CLIENT_H
#define LD_APP_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "logosdelivery/flags.h"
#include "node/node.h"
#include "waku/metadata/metadata.h"
#include "waku/store/codec.h"

#define LD_CLIENT_TICK_MS 50
/* js-waku pings its filter subscriptions every minute (nwaku forgets them after 5 idle ones). */
#define LD_CLIENT_FILTER_PING_S 60
/* A connection to the peer counts as ready once the peer's metadata said its cluster (a peer of
 * another cluster ends the command), or after this long without metadata. */
#define LD_CLIENT_METADATA_WAIT_MS 2000
/* Default deadlines: `send` gives up after 20 s; `subscribe` and `query` run until done. */
#define LD_CLIENT_SEND_TIMEOUT_S 20
/* Room for "/waku/2/rs/<cluster>/<shard>" and its NUL. */
#define LD_CLIENT_TOPIC_MAX 64

typedef enum ld_client_command {
  LD_CLIENT_SEND = 0,
  LD_CLIENT_SUBSCRIBE,
  LD_CLIENT_QUERY,
} ld_client_command_t;

/* "send", "subscribe", "query". */
const char *ld_client_command_name(ld_client_command_t cmd);

/* Flags of one command at most. */
#define LD_CLIENT_MAX_FLAGS 24

/* The flag table of `cmd` for its documentation (man page, shell completion): up to `cap`
 * entries into `out`, whose targets point to storage of this module that is never read. Returns
 * the count. */
size_t ld_client_flags(ld_client_command_t cmd, ld_flag_t *out, size_t cap);

typedef struct ld_client_opts {
  ld_client_command_t command;
  char peer[LD_FLAG_STRING_MAX];
  char content_topic[LD_FLAG_STRING_MAX]; /* send, subscribe */
  char pubsub_topic[LD_FLAG_STRING_MAX];
  int64_t cluster_id; /* -1: not given */
  int64_t num_shards; /* 0: not given */
  int64_t timeout_s;  /* 0: none */
  char log_level[LD_FLAG_STRING_MAX];
  bool help;
  /* send */
  char meta_hex[LD_FLAG_STRING_MAX]; /* meta bytes */
  bool ephemeral;
  bool light; /* send --lightpush, subscribe --filter */
  /* subscribe */
  int64_t count;           /* exit after this many messages (0: never) */
  int64_t ping_interval_s; /* --filter: seconds between pings */
  /* query */
  ld_strlist_t content_topics; /* --content-topic, repeatable */
  ld_strlist_t hashes;         /* --hash, repeatable */
  int64_t start_time;          /* Unix ns; -1: not given */
  int64_t end_time;            /* Unix ns; -1: not given */
  char cursor[LD_FLAG_STRING_MAX];
  int64_t page_size; /* 0: the server's default */
  bool backward;
  bool no_data;
  bool all;
} ld_client_opts_t;

/* Parses the flags of `cmd` (the flags of the other commands are refused as unknown) into `o`
 * (overwritten; release it with ld_client_opts_clear, also after a failure). With --help, prints
 * the command's usage line and flags on stdout and returns 0 with o->help set. Returns 0, or
 * LD_ERR_INVALID_ARG with "<command>: <reason>" in `err` (the reason names the flag: unknown,
 * missing value, not a number, out of range, or a required flag left out: --peer always,
 * --content-topic for send and subscribe), or LD_ERR_NOMEM. positional/n_positional (room for
 * 8) receive the remaining arguments, pointing into argv. */
int ld_client_parse(ld_client_command_t cmd, int argc, char **argv, ld_client_opts_t *o,
                    const char **positional, size_t *n_positional, char *err, size_t errlen);

/* Frees the lists of `o`. */
void ld_client_opts_clear(ld_client_opts_t *o);

/* The usage line of `cmd` ("usage: logosdelivery send --peer …"), without a newline. Static. */
const char *ld_client_usage(ld_client_command_t cmd);

/* The pubsub topic of send and subscribe, and how it was chosen. */
typedef struct ld_client_topic {
  char topic[LD_CLIENT_TOPIC_MAX]; /* "/waku/2/rs/<cluster>/<shard>" */
  uint16_t cluster;
  uint16_t shard;
  uint32_t num_shards; /* the autosharding shard count; 0 for --pubsub-topic */
  char source[96];     /* where the shard count came from ("--pubsub-topic" for that flag) */
} ld_client_topic_t;

/* The pubsub topic of the options and of `peer` (what the peer's metadata said; NULL when it
 * said nothing): --pubsub-topic when given (a static-shard topic; of --cluster-id when that is
 * given too), else the autosharding shard of --content-topic in the cluster (--cluster-id, else
 * the peer's, else 0) over a shard count that is, first that applies:
 *   --num-shards-in-network;
 *   N when the peer's shards are exactly 0..N-1 (a node autosharding over N serves them all);
 *   the count of the cluster's network preset (twn, logos.dev, …) when the peer's shards all
 *   lie below it;
 *   1 (nwaku's default) when the peer named no shards.
 * Also checks the content topic. LD_ERR_INVALID_ARG with the reason in `err`, which for shards
 * that tell no count names them and the flags to give. Pure function. */
int ld_client_topic(const ld_client_opts_t *o, const ld_metadata_info_t *peer,
                    ld_client_topic_t *out, char *err, size_t errlen);

/* Whether the flags alone decide the topic, whatever the peer says: --pubsub-topic, or both
 * --cluster-id and --num-shards-in-network. */
bool ld_client_topic_from_flags(const ld_client_opts_t *o);

/* Whether the flags decide the cluster: --cluster-id, or the cluster of --pubsub-topic. */
bool ld_client_cluster_from_flags(const ld_client_opts_t *o);

/* ---- query ---------------------------------------------------------------------------------- */

/* A store query made from the query flags. `q` borrows the strings of the options it was built
 * from and the arrays below: keep both alive and in place while `q` is used. */
typedef struct ld_client_query {
  ld_store_query_t q;
  const char *topics[LD_STORE_MAX_CONTENT_TOPICS];
  uint8_t hashes[LD_STORE_MAX_HASHES][LD_WAKU_HASH_LEN];
} ld_client_query_t;

/* Builds the query of `o` (a query command's options): include_data unless --no-data, forward
 * unless --backward, the topics, the time range, the hashes, the starting cursor and the page
 * size as given. LD_ERR_INVALID_ARG with a reason naming the flag: a --hash or --cursor that is
 * not 64 hex digits (optional 0x), an all-zero --cursor, more than LD_STORE_MAX_HASHES hashes or
 * LD_STORE_MAX_CONTENT_TOPICS content topics, --start-time after --end-time, an empty topic. */
int ld_client_query_build(const ld_client_opts_t *o, ld_client_query_t *out, char *err,
                          size_t errlen);

/* ---- output --------------------------------------------------------------------------------- */

/* The JSON object of one message, keys in this order: "pubsubTopic", "contentTopic", "payload"
 * (base64), "text" (the payload, only when it is printable UTF-8: no control characters but
 * tab, CR and LF), "timestamp" (ns), "ephemeral", "meta" (base64, only when present), "hash"
 * ("0x…"). Returns a new reference, or NULL when out of memory. */
json_t *ld_client_message_json(const char *pubsub_topic, const ld_waku_message_t *msg,
                               const uint8_t hash[LD_WAKU_HASH_LEN]);

/* Prints ld_client_message_json as one line on stdout and flushes. */
void ld_client_print_message(const char *pubsub_topic, const ld_waku_message_t *msg,
                             const uint8_t hash[LD_WAKU_HASH_LEN]);

/* Prints {"<key>":"0x…"} as one line on stdout and flushes: "hash" for an entry without its
 * message (query --no-data), "cursor" for where the next page of a query starts. */
void ld_client_print_hash(const char *key, const uint8_t hash[LD_WAKU_HASH_LEN]);

/* ---- the node ------------------------------------------------------------------------------- */

typedef struct ld_client ld_client_t;

/* Every hook is optional. */
typedef struct ld_client_hooks {
  void (*on_tick)(ld_client_t *c); /* every LD_CLIENT_TICK_MS once settled (see on_started) */
  void (*on_message)(ld_client_t *c, const ld_fanout_message_t *m); /* relay messages */
  /* The node the command uses is running and its cluster and topic are settled (the first time
   * a connection to the peer is ready, just before on_peer_ready): mount what the command
   * needs on ld_node_switch(c->node). Called once. */
  void (*on_started)(ld_client_t *c);
  /* A connection to the peer is ready (see LD_CLIENT_METADATA_WAIT_MS); c->conn is set. Called
   * again after each reconnection. */
  void (*on_peer_ready)(ld_client_t *c);
  /* The last connection to the peer went away (the static-peer engine redials); c->conn is
   * NULL. Not called when the peer said it is in another cluster: that ends the command with
   * LD_CANARY_EXIT_UNREACHABLE. Default: keep running. */
  void (*on_peer_lost)(ld_client_t *c, int reason);
  /* The command is ending (ld_client_finish, the deadline or a signal; c->exit_code is set):
   * cancel or finish last requests, then call ld_client_stop. Default: stop at once. */
  void (*on_finishing)(ld_client_t *c);
} ld_client_hooks_t;

struct ld_client {
  ld_client_opts_t opts;
  char topic[LD_CLIENT_TOPIC_MAX]; /* send, subscribe: the pubsub topic ("" for query, or until
                                      settled) */
  uint16_t cluster;                /* the cluster the node runs in */
  ld_metadata_info_t peer_info;    /* what the peer's metadata said, when has_peer_info */
  bool has_peer_info;
  bool settled;   /* the node in place is the one the command uses */
  bool replaced;  /* the first node was replaced (see above) */
  bool replacing; /* the first node is stopping; its events are ignored */
  uv_loop_t loop;
  uv_signal_t sigint, sigterm;
  uv_timer_t tick;
  ld_node_t *node;
  const ld_client_hooks_t *hooks;
  ld_peerid_t peer_id; /* of --peer */
  ld_conn_t *conn;     /* a live connection to the peer, or NULL */
  bool awaiting_ready; /* c->conn is up, on_peer_ready not called yet */
  uint64_t connected_ms;
  uint64_t started_ms;
  bool peer_connected;
  bool finished; /* ending: no more output */
  bool stopping; /* the node is being stopped */
  int exit_code;
  void *user_data;
};

/* Builds the node for `c->opts`, settles the cluster and (send, subscribe) `c->topic` with the
 * peer (see above), runs the loop until the node has stopped and returns the exit code. Dial
 * failures end the command with the canary exit codes; a peer in another cluster than the flags
 * name with LD_CANARY_EXIT_UNREACHABLE; a bad --peer, topic or --log-level, or a topic the
 * peer's shards do not tell, with LD_EXIT_USAGE. `c` and `hooks` must stay valid until it
 * returns. */
int ld_client_run(ld_client_t *c, const ld_client_hooks_t *hooks);

/* Ends the command with `exit_code` (the first call wins): sets c->finished and calls the
 * on_finishing hook, or ld_client_stop. Safe from inside hooks and protocol callbacks. */
void ld_client_finish(ld_client_t *c, int exit_code);

/* Stops the node and then the loop (a second call is a no-op). */
void ld_client_stop(ld_client_t *c);

/* Milliseconds on the client's loop clock. */
uint64_t ld_client_now_ms(ld_client_t *c);

/* Number of relay peers that announced the command's topic. */
size_t ld_client_topic_peers(const ld_client_t *c);

/* Number of peers in our mesh of the command's topic (they forward its messages to us). */
size_t ld_client_mesh_peers(const ld_client_t *c);

/* Exit code for an LD_ERR_* (as the canary maps them). */
int ld_client_exit_code(int err);

/* Exit code of a service request's outcome: ld_client_exit_code(err) for a local failure (err
 * != 0: the peer does not speak the protocol, the connection went away, no answer in time),
 * LD_EXIT_SERVICE for an answer with an error status (err == 0). */
int ld_client_service_exit(int err);

#endif
