/* The REST operations of the service protocols (rest/server.h): the node as a lightpush, filter
 * and store client of its --lightpushnode / --filternode / --storenode, or answering from its
 * own lightpush and store services. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "node/node_internal.h"
#include "waku/core/sharding.h"
#include "waku/core/topics.h"
#include "waku/filter/client.h"
#include "waku/lightpush/client.h"
#include "waku/store/client.h"

#define TOPIC "node"

static char *dup_or_null(const char *s) {
  return s != NULL ? strdup(s) : NULL;
}

/* ---- lightpush ----------------------------------------------------------------------------------
 */

typedef struct push_req {
  ld_node_t *node;
  char *pubsub_topic; /* NULL: the service shards */
  ld_waku_message_t msg;
  ld_rest_lightpush_done_fn done;
  void *done_ud;
} push_req_t;

static void push_req_free(push_req_t *p) {
  free(p->pubsub_topic);
  ld_waku_message_clear(&p->msg);
  free(p);
}

static void on_pushed(const ld_lightpush_result_t *res, void *ud) {
  push_req_t *p = ud;
  p->done(p->done_ud, res->status_code, res->status_desc, res->relay_peer_count);
  push_req_free(p);
}

static void on_push_dialed(ld_conn_t *c, int err, void *ud) {
  push_req_t *p = ud;
  if (err == 0)
    err = ld_lightpush_client_push(ld_node_switch(p->node), c, p->pubsub_topic, &p->msg, on_pushed,
                                   p);
  if (err == 0)
    return;
  char why[96];
  snprintf(why, sizeof why, "dial failed: %s", ld_errname(err));
  p->done(p->done_ud, LD_REST_LIGHTPUSH_NO_PEERS_TO_RELAY, why, 0);
  push_req_free(p);
}

static int push_through_peer(ld_node_t *node, const char *topic, const ld_waku_message_t *msg,
                             ld_rest_lightpush_done_fn done, void *done_ud) {
  push_req_t *p = calloc(1, sizeof *p);
  if (p == NULL)
    return LD_ERR_NOMEM;
  *p = (push_req_t){node, dup_or_null(topic), {0}, done, done_ud};
  int rc = (topic != NULL && p->pubsub_topic == NULL) ? LD_ERR_NOMEM
                                                      : ld_waku_message_copy(&p->msg, msg);
  if (rc == 0)
    rc = ld_switch_dial(node->sw, &node->cfg.service_node[LD_NODE_SERVICE_LIGHTPUSH],
                        on_push_dialed, p);
  if (rc != 0)
    push_req_free(p);
  return rc;
}

/* A push to our own lightpush service, answered when it is published (an RLN proof is made off
 * the loop first on an RLN-relay node). */
typedef struct local_push {
  ld_rest_lightpush_done_fn done;
  void *done_ud;
} local_push_t;

static void on_local_pushed(void *ud, const ld_lightpush_local_result_t *out) {
  local_push_t *p = ud;
  p->done(p->done_ud, out->status_code, out->status_desc[0] != '\0' ? out->status_desc : NULL,
          out->relay_peer_count);
  free(p);
}

static int rest_push(void *ud, const char *topic, const ld_waku_message_t *msg,
                     ld_rest_lightpush_done_fn done, void *done_ud) {
  ld_node_t *node = ud;
  if (node->cfg.has_service_node[LD_NODE_SERVICE_LIGHTPUSH])
    return push_through_peer(node, topic, msg, done, done_ud);
  if (node->lightpush == NULL)
    return LD_ERR_NOT_FOUND;
  local_push_t *p = malloc(sizeof *p);
  if (p == NULL)
    return LD_ERR_NOMEM;
  *p = (local_push_t){done, done_ud};
  int rc = ld_lightpush_server_push_local_async(node->lightpush, topic, msg, on_local_pushed, p);
  if (rc != 0)
    free(p);
  return rc;
}

/* ---- store --------------------------------------------------------------------------------------
 */

typedef struct store_req {
  ld_rest_store_done_fn done;
  void *done_ud;
} store_req_t;

static void report_store(store_req_t *s, const ld_store_response_t *res) {
  ld_rest_store_entry_t *entries = calloc(res->n_entries ? res->n_entries : 1, sizeof *entries);
  ld_rest_store_result_t out;
  memset(&out, 0, sizeof out);
  if (entries == NULL) {
    out.error = LD_ERR_NOMEM;
  } else {
    for (size_t i = 0; i < res->n_entries; i++) {
      memcpy(entries[i].hash, res->entries[i].hash, LD_WAKU_HASH_LEN);
      entries[i].pubsub_topic = res->entries[i].pubsub_topic;
      entries[i].message = res->entries[i].pubsub_topic != NULL ? &res->entries[i].message : NULL;
    }
    out.status_code = res->status_code;
    out.status_desc = res->status_desc;
    out.request_id = res->request_id;
    out.entries = entries;
    out.n_entries = res->n_entries;
    out.cursor = res->has_cursor ? res->cursor : NULL;
  }
  s->done(s->done_ud, &out);
  free(entries);
  free(s);
}

static void on_local_store(const ld_store_response_t *res, void *ud) {
  report_store(ud, res);
}

static void on_peer_store(int err, ld_store_response_t *res, void *ud) {
  (void)err; /* a failure arrives as nwaku's made-up status in `res` */
  report_store(ud, res);
}

static void to_store_query(const ld_rest_store_query_t *in, ld_store_query_t *q) {
  memset(q, 0, sizeof *q);
  q->include_data = in->include_data;
  q->pubsub_topic = in->pubsub_topic;
  q->content_topics = in->content_topics;
  q->n_content_topics = in->n_content_topics;
  q->has_time_start = in->has_start_time;
  q->time_start = in->start_time;
  q->has_time_end = in->has_end_time;
  q->time_end = in->end_time;
  q->hashes = in->hashes;
  q->n_hashes = in->n_hashes;
  q->has_cursor = in->has_cursor;
  memcpy(q->cursor, in->cursor, LD_WAKU_HASH_LEN);
  q->forward = in->forward;
  q->has_forward = true;
  q->has_limit = true;
  q->limit = in->page_size;
}

static int rest_store_query(void *ud, const ld_rest_store_query_t *in, ld_rest_store_done_fn done,
                            void *done_ud) {
  ld_node_t *node = ud;
  const ld_multiaddr_t *peer = in->peer_addr;
  if (peer == NULL && node->store == NULL && node->cfg.has_service_node[LD_NODE_SERVICE_STORE])
    peer = &node->cfg.service_node[LD_NODE_SERVICE_STORE];
  if (peer == NULL && node->store == NULL)
    return LD_ERR_NOT_FOUND;
  store_req_t *s = malloc(sizeof *s);
  if (s == NULL)
    return LD_ERR_NOMEM;
  *s = (store_req_t){done, done_ud};
  ld_store_query_t q;
  to_store_query(in, &q);
  int rc;
  if (peer != NULL) {
    ld_store_target_t to = {NULL, peer};
    rc = ld_store_client_query(node->sw, &to, &q, NULL, on_peer_store, s, NULL);
  } else {
    rc = ld_store_server_query_local(node->store, &q, on_local_store, s);
  }
  if (rc != 0)
    free(s);
  return rc;
}

/* ---- filter (client of --filternode) ------------------------------------------------------------
 */

typedef enum filter_op { F_SUBSCRIBE, F_UNSUBSCRIBE, F_UNSUBSCRIBE_ALL, F_PING } filter_op_t;

typedef struct filter_req {
  ld_node_t *node;
  filter_op_t op;
  char *pubsub_topic;
  char **topics;
  size_t n;
  ld_rest_filter_done_fn done;
  void *done_ud;
} filter_req_t;

static void filter_req_free(filter_req_t *f) {
  for (size_t i = 0; i < f->n; i++)
    free(f->topics[i]);
  free(f->topics);
  free(f->pubsub_topic);
  free(f);
}

static void on_filter_done(const ld_filter_result_t *res, void *ud) {
  filter_req_t *f = ud;
  f->done(f->done_ud, res->status_code, res->status_desc);
  filter_req_free(f);
}

static int send_filter(filter_req_t *f, ld_conn_t *c) {
  ld_filter_client_t *cl = f->node->filter_client;
  const char *const *topics = (const char *const *)f->topics;
  switch (f->op) {
  case F_SUBSCRIBE:
    return ld_filter_client_subscribe(cl, c, f->pubsub_topic, topics, f->n, on_filter_done, f);
  case F_UNSUBSCRIBE:
    return ld_filter_client_unsubscribe(cl, c, f->pubsub_topic, topics, f->n, on_filter_done, f);
  case F_UNSUBSCRIBE_ALL:
    return ld_filter_client_unsubscribe_all(cl, c, on_filter_done, f);
  default:
    return ld_filter_client_ping(cl, c, on_filter_done, f);
  }
}

static void on_filter_dialed(ld_conn_t *c, int err, void *ud) {
  filter_req_t *f = ud;
  if (err == 0 && send_filter(f, c) == 0)
    return;
  char addr[LD_MULTIADDR_TEXT_MAX];
  ld_multiaddr_to_text(&f->node->cfg.service_node[LD_NODE_SERVICE_FILTER], addr, sizeof addr);
  f->done(f->done_ud, LD_REST_FILTER_PEER_DIAL_FAILURE, addr);
  filter_req_free(f);
}

/* The pubsub topic of a request without one: the shard of its content topics (autosharding);
 * they must all map to the same shard. */
static int shard_topic_of(const ld_node_t *node, const char *const *topics, size_t n, char *out,
                          size_t cap) {
  if (node->cfg.num_shards_in_network == 0 || n == 0)
    return LD_ERR_UNSUPPORTED;
  ld_relay_shard_t first = {0, 0};
  for (size_t i = 0; i < n; i++) {
    ld_relay_shard_t shard;
    ld_topic_error_t why = LD_TOPIC_OK;
    if (ld_autoshard(topics[i], strlen(topics[i]), node->cfg.num_shards_in_network,
                     node->cfg.cluster_id, &shard, &why) != 0)
      return LD_ERR_BAD_CONTENT_TOPIC;
    if (i > 0 && shard.shard_id != first.shard_id)
      return LD_ERR_UNSUPPORTED;
    first = shard;
  }
  return ld_pubsub_topic_format(first, out, cap) > 0 ? 0 : LD_ERR_INTERNAL;
}

static int start_filter(ld_node_t *node, filter_op_t op, const char *topic,
                        const char *const *topics, size_t n, ld_rest_filter_done_fn done,
                        void *done_ud) {
  if (node->filter_client == NULL)
    return LD_ERR_NOT_FOUND;
  char derived[LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1];
  if (topic == NULL && (op == F_SUBSCRIBE || op == F_UNSUBSCRIBE)) {
    if (shard_topic_of(node, topics, n, derived, sizeof derived) != 0) {
      done(done_ud, LD_REST_FILTER_BAD_RESPONSE, "can't get shard");
      return 0;
    }
    topic = derived;
  }
  filter_req_t *f = calloc(1, sizeof *f);
  if (f == NULL)
    return LD_ERR_NOMEM;
  *f = (filter_req_t){node, op,     dup_or_null(topic), calloc(n ? n : 1, sizeof(char *)), 0,
                      done, done_ud};
  int rc = f->topics == NULL || (topic != NULL && f->pubsub_topic == NULL) ? LD_ERR_NOMEM : 0;
  for (size_t i = 0; rc == 0 && i < n; i++, f->n++)
    if ((f->topics[i] = strdup(topics[i])) == NULL)
      rc = LD_ERR_NOMEM;
  if (rc == 0)
    rc = ld_switch_dial(node->sw, &node->cfg.service_node[LD_NODE_SERVICE_FILTER], on_filter_dialed,
                        f);
  if (rc != 0)
    filter_req_free(f);
  return rc;
}

static int rest_subscribe(void *ud, const char *topic, const char *const *topics, size_t n,
                          ld_rest_filter_done_fn done, void *done_ud) {
  return start_filter(ud, F_SUBSCRIBE, topic, topics, n, done, done_ud);
}

static int rest_unsubscribe(void *ud, const char *topic, const char *const *topics, size_t n,
                            ld_rest_filter_done_fn done, void *done_ud) {
  return start_filter(ud, F_UNSUBSCRIBE, topic, topics, n, done, done_ud);
}

static int rest_unsubscribe_all(void *ud, ld_rest_filter_done_fn done, void *done_ud) {
  return start_filter(ud, F_UNSUBSCRIBE_ALL, NULL, NULL, 0, done, done_ud);
}

static int rest_ping(void *ud, ld_rest_filter_done_fn done, void *done_ud) {
  return start_filter(ud, F_PING, NULL, NULL, 0, done, done_ud);
}

static void on_filter_push(const ld_filter_push_t *push, void *ud) {
  ld_node_t *node = ud;
  if (node->rest != NULL)
    ld_rest_server_filter_push(node->rest, push->pubsub_topic, push->msg);
}

/* ---- the tables
 * ---------------------------------------------------------------------------------- */

int ld_node_rest_services(ld_node_t *node, ld_rest_lightpush_ops_t *lp, ld_rest_filter_ops_t *fo,
                          ld_rest_store_ops_t *so, bool *has_lightpush, bool *has_filter) {
  *lp = (ld_rest_lightpush_ops_t){rest_push, NULL, node};
  *so = (ld_rest_store_ops_t){rest_store_query, node};
  *fo = (ld_rest_filter_ops_t){rest_subscribe, rest_unsubscribe, rest_unsubscribe_all, rest_ping,
                               node};
  *has_lightpush = node->lightpush != NULL || node->cfg.has_service_node[LD_NODE_SERVICE_LIGHTPUSH];
  *has_filter = false;
  if (!node->cfg.has_service_node[LD_NODE_SERVICE_FILTER])
    return 0;
  if (node->filter_client == NULL) {
    node->filter_client = ld_filter_client_new(node->sw, NULL);
    if (node->filter_client == NULL)
      return LD_ERR_NOMEM;
    ld_filter_client_set_push_handler(node->filter_client, on_filter_push, node);
  }
  *has_filter = true;
  return 0;
}
