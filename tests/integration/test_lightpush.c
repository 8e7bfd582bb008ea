/* Waku lightpush between switches on loopback in one process.
 *
 * Three relay nodes (S, R1, R2: identify, gossipsub, metadata of cluster 1, relay with a 1 KiB
 * message cap) form a mesh on a static shard and an autoshard. S serves lightpush with the relay
 * publish callback; R1 serves it with a recording callback under static sharding (to walk every
 * mapping of a publish result to nwaku's answers); R2 serves it with a recording callback and a
 * rate limit on a fake clock. A light client C (identify and metadata only) pushes to all three
 * with the C client, sends malformed requests on raw streams, and checks the client rules
 * against F, a fake service whose answers the test chooses; G serves no v3. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "base/buf.h"
#include "base/error.h"
#include "p2p/gossipsub/service.h"
#include "p2p/identify.h"
#include "p2p/reqresp.h"
#include "switch_harness.h"
#include "waku/core/message.h"
#include "waku/lightpush/client.h"
#include "waku/lightpush/server.h"
#include "waku/metadata/metadata.h"
#include "waku/relay/relay.h"

#define WAIT_MS 20000
#define STATIC_TOPIC "/waku/2/rs/1/0"
#define CONTENT_TOPIC "/toychat/2/huilong/proto" /* shard 3 of 8 in cluster 1 */
#define AUTO_TOPIC "/waku/2/rs/1/3"
#define EMPTY_TOPIC "/waku/2/rs/1/5" /* nobody subscribed */
#define MAX_MSG 1024
#define N_BULK 1000
#define RATE_VOLUME 2
#define RATE_PERIOD_MS 60000
#define RING 64

typedef struct lnode {
  ld_switch_t *sw;
  ld_identify_t *id;
  ld_gs_service_t *gs;
  ld_metadata_t *md;
  ld_relay_t *relay;
  ld_lightpush_server_t *lp;
  ld_multiaddr_t addr;
  /* messages received from peers */
  uint8_t ring[RING][LD_WAKU_HASH_LEN];
  char ring_topic[RING][32];
  size_t n_got;
  size_t n_bulk;
} lnode_t;

/* The recording publish callback of R1 and R2. */
typedef struct recorder {
  int next_rc;
  char next_why[128];
  int calls;
  char topic[64];
  ld_waku_message_t msg;
} recorder_t;

static uv_loop_t g_loop;
static lnode_t g_s, g_r1, g_r2;
static ld_switch_t *g_c, *g_f, *g_g;
static ld_identify_t *g_c_id;
static ld_metadata_t *g_c_md;
static ld_multiaddr_t g_f_addr, g_g_addr;
static ld_conn_t *g_to_s, *g_to_r1, *g_to_r2, *g_to_f, *g_to_g;
static recorder_t g_rec1, g_rec2;
static uint64_t g_fake_ms = 1000000;

/* ---- nodes ---------------------------------------------------------------------------------- */

static void on_relay_message(ld_relay_t *r, const char *topic, const ld_waku_message_t *msg,
                             const uint8_t hash[LD_WAKU_HASH_LEN], const ld_peerid_t *from,
                             void *ud) {
  (void)r;
  lnode_t *n = ud;
  if (from == NULL)
    return;
  if (msg->content_topic_len == 16 && memcmp(msg->content_topic, "/lp/1/bulk/proto", 16) == 0)
    n->n_bulk++;
  size_t i = n->n_got++ % RING;
  memcpy(n->ring[i], hash, LD_WAKU_HASH_LEN);
  snprintf(n->ring_topic[i], sizeof n->ring_topic[i], "%s", topic);
}

static bool got_hash(const lnode_t *n, const uint8_t hash[LD_WAKU_HASH_LEN], const char *topic) {
  size_t have = n->n_got < RING ? n->n_got : RING;
  for (size_t i = 0; i < have; i++)
    if (memcmp(n->ring[i], hash, LD_WAKU_HASH_LEN) == 0 && strcmp(n->ring_topic[i], topic) == 0)
      return true;
  return false;
}

static int record_publish(void *ctx, const char *topic, const ld_waku_message_t *msg, char *why,
                          size_t why_len) {
  recorder_t *rec = ctx;
  rec->calls++;
  snprintf(rec->topic, sizeof rec->topic, "%s", topic);
  assert_int_equal(ld_waku_message_copy(&rec->msg, msg), 0);
  snprintf(why, why_len, "%s", rec->next_why);
  return rec->next_rc;
}

static uint64_t fake_now(void *ctx) {
  (void)ctx;
  return g_fake_ms;
}

static void relay_node_start(lnode_t *n, uint64_t seed) {
  memset(n, 0, sizeof *n);
  n->sw = sh_switch_new(&g_loop, NULL);
  n->id = ld_identify_new(n->sw, NULL);
  assert_non_null(n->id);
  ld_gs_service_config_t gs_cfg;
  ld_relay_gs_config(&gs_cfg, 0);
  gs_cfg.params.ip_colocation_threshold = 100;
  gs_cfg.seed = seed;
  int err = 0;
  n->gs = ld_gs_service_new(n->sw, n->id, &gs_cfg, &err);
  assert_non_null(n->gs);
  ld_metadata_config_t md_cfg;
  ld_metadata_config_default(&md_cfg);
  md_cfg.cluster_id = 1;
  n->md = ld_metadata_new(n->sw, &md_cfg);
  assert_non_null(n->md);
  ld_relay_config_t cfg;
  ld_relay_config_default(&cfg);
  cfg.loop = &g_loop;
  cfg.cluster_id = 1;
  cfg.num_shards = 8;
  cfg.max_msg_size = MAX_MSG;
  n->relay = ld_relay_new(n->gs, &cfg, &err);
  assert_non_null(n->relay);
  ld_metadata_set_shard_provider(n->md, ld_relay_shard_provider, n->relay);
  assert_int_equal(ld_relay_subscribe(n->relay, STATIC_TOPIC, on_relay_message, n), 0);
  assert_int_equal(ld_relay_subscribe(n->relay, AUTO_TOPIC, on_relay_message, n), 0);
  sh_listen_local(n->sw, &n->addr);
}

static void relay_node_stop(lnode_t *n) {
  ld_relay_free(n->relay);
  sh_switch_close(n->sw, &g_loop);
  ld_lightpush_server_free(n->lp);
  ld_gs_service_free(n->gs);
  ld_metadata_free(n->md);
  ld_identify_free(n->id);
}

static void mount_servers(void) {
  ld_lightpush_server_config_t cfg;
  ld_lightpush_server_config_default(&cfg);
  cfg.publish = ld_lightpush_relay_publish;
  cfg.publish_ctx = g_s.relay;
  cfg.cluster_id = 1;
  cfg.num_shards = 8;
  cfg.max_msg_size = MAX_MSG;
  assert_non_null(g_s.lp = ld_lightpush_server_new(g_s.sw, &cfg));
  assert_null(ld_lightpush_server_new(g_s.sw, &cfg)); /* already registered */

  ld_lightpush_server_config_default(&cfg);
  cfg.publish = record_publish;
  cfg.publish_ctx = &g_rec1;
  cfg.static_sharding = true;
  cfg.max_msg_size = MAX_MSG;
  cfg.timeout_ms = 500;
  assert_non_null(g_r1.lp = ld_lightpush_server_new(g_r1.sw, &cfg));

  ld_lightpush_server_config_default(&cfg);
  cfg.publish = record_publish;
  cfg.publish_ctx = &g_rec2;
  cfg.rate_volume = RATE_VOLUME;
  cfg.rate_period_ms = RATE_PERIOD_MS;
  cfg.now_ms = fake_now;
  assert_non_null(g_r2.lp = ld_lightpush_server_new(g_r2.sw, &cfg));
}

/* ---- the fake service F -----------------------------------------------------------------------
 */

typedef enum fake_mode {
  FAKE_ECHO_200,      /* 200 with relay_peer_count 4 */
  FAKE_200_NO_COUNT,  /* 200 without relay_peer_count */
  FAKE_200_ZERO,      /* 200 with relay_peer_count 0 */
  FAKE_WRONG_ID,      /* 200 with another request ID */
  FAKE_WRONG_ID_429,  /* 429 with "N/A" */
  FAKE_GARBAGE,       /* an undecodable body */
  FAKE_SILENT_CLOSE,  /* half-close without an answer */
  FAKE_502_WITH_DESC, /* a code outside the table, passed on */
} fake_mode_t;

static fake_mode_t g_fake_mode;

static int fake_request(ld_stream_t *s, const uint8_t *req, size_t len, ld_buf_t *resp, void *ud) {
  (void)s;
  (void)ud;
  const uint8_t *body;
  size_t n;
  assert_true(ld_reqresp_read_frame(req, len, SIZE_MAX, &body, &n) > 0);
  ld_lightpush_request_t in;
  ld_lightpush_request_init(&in);
  assert_int_equal(ld_lightpush_request_decode(body, n, &in, NULL, 0), 0);
  ld_lightpush_response_t r;
  ld_lightpush_response_init(&r);
  r.request_id = in.request_id;
  r.request_id_len = in.request_id_len;
  r.status_code = 200;
  int rc = 0;
  switch (g_fake_mode) {
  case FAKE_ECHO_200:
    r.has_relay_peer_count = true;
    r.relay_peer_count = 4;
    break;
  case FAKE_200_NO_COUNT:
    r.status_desc = "fine";
    r.status_desc_len = 4;
    break;
  case FAKE_200_ZERO:
    r.has_relay_peer_count = true;
    break;
  case FAKE_WRONG_ID:
    r.request_id = "someone-else";
    r.request_id_len = 12;
    r.has_relay_peer_count = true;
    r.relay_peer_count = 1;
    break;
  case FAKE_WRONG_ID_429:
    r.request_id = LD_LIGHTPUSH_NA;
    r.request_id_len = 3;
    r.status_code = 429;
    r.status_desc = LD_LIGHTPUSH_TOO_MANY_REQUESTS_DESC;
    r.status_desc_len = strlen(r.status_desc);
    break;
  case FAKE_GARBAGE:
    rc = ld_buf_append(resp, "\x03\x0a\x05x", 4);
    break;
  case FAKE_SILENT_CLOSE:
    break;
  case FAKE_502_WITH_DESC:
    r.status_code = 502;
    r.status_desc = "odd";
    r.status_desc_len = 3;
    break;
  }
  if (g_fake_mode != FAKE_GARBAGE && g_fake_mode != FAKE_SILENT_CLOSE)
    rc = ld_lightpush_response_encode(&r, resp);
  ld_lightpush_request_clear(&in);
  return rc;
}

static const ld_reqresp_server_t g_fake_server = {.on_request = fake_request};

static void fake_accept(ld_stream_t *s, void *ud) {
  (void)ud;
  ld_reqresp_opts_t o = {.max_bytes = 4096, .frame_max = 4000, .timeout_ms = 5000};
  assert_int_equal(ld_reqresp_serve(g_f, s, &o, &g_fake_server, NULL, NULL), 0);
}

static void reset_accept(ld_stream_t *s, void *ud) {
  (void)ud;
  ld_stream_reset(s);
}

/* ---- client helpers ------------------------------------------------------------------------- */

typedef struct push_res {
  bool done;
  int calls;
  uint32_t code;
  bool has_desc;
  char desc[512];
  uint32_t peers;
  int err;
  char id[64];
  int64_t timestamp;
  bool has_hash;
  uint8_t hash[LD_WAKU_HASH_LEN];
  /* legacy */
  bool success;
} push_res_t;

static void on_push(const ld_lightpush_result_t *r, void *ud) {
  push_res_t *p = ud;
  p->calls++;
  p->done = true;
  p->code = r->status_code;
  p->has_desc = r->status_desc != NULL;
  snprintf(p->desc, sizeof p->desc, "%s", r->status_desc != NULL ? r->status_desc : "");
  p->peers = r->relay_peer_count;
  p->err = r->err;
  snprintf(p->id, sizeof p->id, "%s", r->request_id);
  p->timestamp = r->timestamp;
  p->has_hash = r->has_hash;
  memcpy(p->hash, r->hash, sizeof p->hash);
}

static void on_legacy_push(const ld_lightpush_legacy_result_t *r, void *ud) {
  push_res_t *p = ud;
  p->calls++;
  p->done = true;
  p->success = r->success;
  assert_non_null(r->info);
  snprintf(p->desc, sizeof p->desc, "%s", r->info);
  p->err = r->err;
  snprintf(p->id, sizeof p->id, "%s", r->request_id);
  p->timestamp = r->timestamp;
  memcpy(p->hash, r->hash, sizeof p->hash);
}

static bool push_done(void *ud) {
  return ((push_res_t *)ud)->done;
}

static push_res_t push_ex(ld_conn_t *c, const char *topic, const ld_waku_message_t *m,
                          const ld_lightpush_push_opts_t *opts) {
  push_res_t p;
  memset(&p, 0, sizeof p);
  assert_int_equal(ld_lightpush_client_push_ex(g_c, c, topic, m, opts, on_push, &p, NULL), 0);
  assert_false(p.done); /* never from inside the call */
  assert_true(sh_run_until(&g_loop, push_done, &p, WAIT_MS));
  assert_int_equal(p.calls, 1);
  return p;
}

static push_res_t push(ld_conn_t *c, const char *topic, const ld_waku_message_t *m) {
  return push_ex(c, topic, m, NULL);
}

static push_res_t push_legacy(ld_conn_t *c, const char *topic, const ld_waku_message_t *m) {
  push_res_t p;
  memset(&p, 0, sizeof p);
  assert_int_equal(ld_lightpush_legacy_client_push(g_c, c, topic, m, on_legacy_push, &p), 0);
  assert_true(sh_run_until(&g_loop, push_done, &p, WAIT_MS));
  assert_int_equal(p.calls, 1);
  return p;
}

static ld_waku_message_t text_message(const char *content_topic, const char *text) {
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = (const uint8_t *)text;
  m.payload_len = strlen(text);
  m.content_topic = content_topic;
  m.content_topic_len = strlen(content_topic);
  return m;
}

/* A raw exchange on `protocol`: `frame` written as is, the answer's bytes collected. */
typedef struct raw_res {
  bool done;
  int err;
  uint8_t data[1024];
  size_t len;
} raw_res_t;

static void on_raw(const uint8_t *resp, size_t len, int err, void *ud) {
  raw_res_t *r = ud;
  r->done = true;
  r->err = err;
  r->len = len < sizeof r->data ? len : sizeof r->data;
  if (r->len > 0)
    memcpy(r->data, resp, r->len);
}

static bool raw_done(void *ud) {
  return ((raw_res_t *)ud)->done;
}

static raw_res_t raw_call(ld_conn_t *c, const char *protocol, const uint8_t *frame, size_t len) {
  raw_res_t r;
  memset(&r, 0, sizeof r);
  ld_reqresp_opts_t o = {.max_bytes = 2048, .frame_max = 1024, .timeout_ms = 5000};
  assert_int_equal(ld_reqresp_request(g_c, c, protocol, frame, len, &o, on_raw, &r, NULL), 0);
  assert_true(sh_run_until(&g_loop, raw_done, &r, WAIT_MS));
  return r;
}

/* Sends a v3 body (framed here) and decodes the answer. */
static void raw_v3(ld_conn_t *c, const uint8_t *body, size_t len, ld_lightpush_response_t *out) {
  ld_buf_t f;
  ld_buf_init(&f);
  assert_int_equal(ld_buf_lp(&f, body, len), 0);
  raw_res_t r = raw_call(c, LD_LIGHTPUSH_PROTOCOL, f.data, f.len);
  ld_buf_clear(&f);
  assert_int_equal(r.err, 0);
  const uint8_t *b;
  size_t n;
  assert_int_equal(ld_reqresp_read_frame(r.data, r.len, 1024, &b, &n), (int)r.len);
  assert_int_equal(ld_lightpush_response_decode(b, n, out, NULL, 0), 0);
}

static void raw_legacy(ld_conn_t *c, const uint8_t *body, size_t len, ld_lightpush_rpc_t *out) {
  ld_buf_t f;
  ld_buf_init(&f);
  assert_int_equal(ld_buf_lp(&f, body, len), 0);
  raw_res_t r = raw_call(c, LD_LIGHTPUSH_LEGACY_PROTOCOL, f.data, f.len);
  ld_buf_clear(&f);
  assert_int_equal(r.err, 0);
  const uint8_t *b;
  size_t n;
  assert_int_equal(ld_reqresp_read_frame(r.data, r.len, 1024, &b, &n), (int)r.len);
  assert_int_equal(ld_lightpush_rpc_decode(b, n, out, NULL, 0), 0);
}

/* ---- conditions ----------------------------------------------------------------------------- */

static bool mesh_ready(void *ud) {
  (void)ud;
  const char *topics[2] = {STATIC_TOPIC, AUTO_TOPIC};
  for (int t = 0; t < 2; t++)
    if (ld_gs_service_mesh_peers(g_s.gs, topics[t], NULL, 0) < 2 ||
        ld_gs_service_mesh_peers(g_r1.gs, topics[t], NULL, 0) < 2 ||
        ld_gs_service_mesh_peers(g_r2.gs, topics[t], NULL, 0) < 2)
      return false;
  return true;
}

typedef struct want {
  const uint8_t *hash;
  const char *topic;
} want_t;

static bool peers_got(void *ud) {
  const want_t *w = ud;
  return got_hash(&g_r1, w->hash, w->topic) && got_hash(&g_r2, w->hash, w->topic);
}

/* ---- tests: the real relay service S ------------------------------------------------------ */

static void v3_push_is_relayed_to_the_mesh(void **state) {
  (void)state;
  ld_waku_message_t m = text_message("/lp/1/chat/proto", "hello over lightpush");
  push_res_t p = push(g_to_s, STATIC_TOPIC, &m);
  assert_int_equal(p.code, LD_LIGHTPUSH_SUCCESS);
  assert_int_equal(p.peers, 2);
  assert_int_equal(p.err, 0);
  assert_false(p.has_desc);
  assert_int_equal(strlen(p.id), 2 * LD_LIGHTPUSH_REQUEST_ID_BYTES);
  assert_true(p.timestamp > 0); /* stamped by the client */
  assert_true(p.has_hash);
  want_t w = {p.hash, STATIC_TOPIC};
  assert_true(sh_run_until(&g_loop, peers_got, &w, WAIT_MS));

  /* Without a pubsub topic the service shards the content topic. */
  ld_waku_message_t a = text_message(CONTENT_TOPIC, "autosharded");
  a.timestamp = 1700000000000000000LL;
  push_res_t q = push(g_to_s, NULL, &a);
  assert_int_equal(q.code, LD_LIGHTPUSH_SUCCESS);
  assert_int_equal(q.peers, 2);
  assert_false(q.has_hash);
  assert_int_equal(q.timestamp, 1700000000000000000LL); /* kept */
  uint8_t hash[LD_WAKU_HASH_LEN];
  assert_int_equal(ld_waku_message_hash(AUTO_TOPIC, &a, hash), 0);
  want_t w2 = {hash, AUTO_TOPIC};
  assert_true(sh_run_until(&g_loop, peers_got, &w2, WAIT_MS));
}

static void v3_relay_refusals(void **state) {
  (void)state;
  /* The same message again: the relay has it already, sent to both mesh peers (nwaku answers
   * 420 "Dropping already-seen message" here). */
  ld_waku_message_t m = text_message("/lp/1/chat/proto", "only once");
  m.timestamp = 42;
  assert_int_equal(push(g_to_s, STATIC_TOPIC, &m).code, LD_LIGHTPUSH_SUCCESS);
  push_res_t p = push(g_to_s, STATIC_TOPIC, &m);
  assert_int_equal(p.code, LD_LIGHTPUSH_SUCCESS);
  assert_int_equal(p.peers, 2);
  /* The same bytes on another topic were never relayed there: nwaku's answer. */
  p = push(g_to_s, AUTO_TOPIC, &m);
  assert_int_equal(p.code, LD_LIGHTPUSH_INVALID_MESSAGE);
  assert_string_equal(p.desc, "Dropping already-seen message");

  /* Over the relay's cap but within the frame cap: 420 with the validator's message. */
  static uint8_t big[4 * MAX_MSG];
  ld_waku_message_t b = text_message("/lp/1/chat/proto", "");
  b.payload = big;
  b.payload_len = sizeof big;
  p = push(g_to_s, STATIC_TOPIC, &b);
  assert_int_equal(p.code, LD_LIGHTPUSH_INVALID_MESSAGE);
  assert_string_equal(p.desc, "Message size exceeded maximum of 1024 bytes");

  /* Over the frame cap (message cap + 64 KiB): the stream is reset unanswered. */
  static uint8_t huge[MAX_MSG + 70 * 1024];
  b.payload = huge;
  b.payload_len = sizeof huge;
  p = push(g_to_s, STATIC_TOPIC, &b);
  assert_int_equal(p.code, LD_LIGHTPUSH_INTERNAL_SERVER_ERROR);
  assert_true(p.err != 0);
  assert_non_null(strstr(p.desc, "Failed to read response from peer: "));

  /* A shard nobody is subscribed to: published to no peer. (Another message: the relay's seen
   * cache is keyed by the bytes alone, whatever the topic.) */
  ld_waku_message_t e = text_message("/lp/1/chat/proto", "to nobody");
  p = push(g_to_s, EMPTY_TOPIC, &e);
  assert_int_equal(p.code, LD_LIGHTPUSH_NO_PEERS_TO_RELAY);
  assert_string_equal(p.desc, "No peers for topic, skipping publish");
}

static void v3_topic_resolution_errors(void **state) {
  (void)state;
  ld_waku_message_t m = text_message("invalid", "x");
  push_res_t p = push(g_to_s, NULL, &m);
  assert_int_equal(p.code, LD_LIGHTPUSH_INVALID_MESSAGE);
  assert_string_equal(p.desc,
                      "Invalid content-topic:invalid format: content-topic 'invalid' must start "
                      "with slash");
  m = text_message("/toychat/2/huilong", "x");
  p = push(g_to_s, NULL, &m);
  assert_int_equal(p.code, LD_LIGHTPUSH_INVALID_MESSAGE);
  assert_string_equal(p.desc,
                      "Invalid content-topic:invalid format: Invalid content topic structure. "
                      "Expected either /<application>/<version>/<topic-name>/<encoding> or "
                      "/<gen>/<application>/<version>/<topic-name>/<encoding>");
  m = text_message("/1/toychat/2/huilong/proto", "x");
  p = push(g_to_s, NULL, &m);
  assert_int_equal(p.code, LD_LIGHTPUSH_INTERNAL_SERVER_ERROR);
  assert_string_equal(p.desc, "Auto-sharding error: Generation > 0 are not supported yet");
  m = text_message(CONTENT_TOPIC, "x");
  p = push(g_to_s, " \t", &m);
  assert_int_equal(p.code, LD_LIGHTPUSH_BAD_REQUEST);
  assert_string_equal(p.desc, "topic must not be empty");
  p = push(g_to_s, "", &m);
  assert_int_equal(p.code, LD_LIGHTPUSH_BAD_REQUEST);
  assert_string_equal(p.desc, "topic must not be empty");
}

static void legacy_push_is_relayed(void **state) {
  (void)state;
  ld_waku_message_t m = text_message("/lp/1/legacy/proto", "the old protocol");
  push_res_t p = push_legacy(g_to_s, STATIC_TOPIC, &m);
  assert_true(p.success);
  assert_string_equal(p.desc, "OK");
  assert_int_equal(p.err, 0);
  want_t w = {p.hash, STATIC_TOPIC};
  assert_true(sh_run_until(&g_loop, peers_got, &w, WAIT_MS));
  /* Validation failures carry the validator's message; publish failures do not. */
  static uint8_t big[2 * MAX_MSG];
  ld_waku_message_t b = text_message("/lp/1/legacy/proto", "");
  b.payload = big;
  b.payload_len = sizeof big;
  p = push_legacy(g_to_s, STATIC_TOPIC, &b);
  assert_false(p.success);
  assert_string_equal(p.desc, "Message size exceeded maximum of 1024 bytes");
  p = push_legacy(g_to_s, EMPTY_TOPIC, &m);
  assert_false(p.success);
  assert_string_equal(p.desc, "not_published_to_any_peer");
  ld_waku_message_t d = text_message("/lp/1/legacy/proto", "twice");
  d.timestamp = 7;
  assert_true(push_legacy(g_to_s, STATIC_TOPIC, &d).success);
  p = push_legacy(g_to_s, STATIC_TOPIC, &d); /* relayed already: a success */
  assert_true(p.success);
  assert_string_equal(p.desc, "OK");
  p = push_legacy(g_to_s, AUTO_TOPIC, &d); /* never relayed on that topic */
  assert_false(p.success);
  assert_string_equal(p.desc, "not_published_to_any_peer");
  p = push_legacy(g_to_s, "", &m);
  assert_false(p.success);
  assert_string_equal(p.desc, "not_published_to_any_peer");
}

typedef struct seen_by {
  const lnode_t *node;
  uint8_t hash[LD_WAKU_HASH_LEN];
} seen_by_t;

static bool node_got(void *ud) {
  const seen_by_t *w = ud;
  return got_hash(w->node, w->hash, STATIC_TOPIC);
}

/* A client pushes a message to S that S received by relay a moment before (another client pushed
 * it to R1 at the same time): the message is in the network, so the push succeeds, with the relay
 * peers S exchanged it with (R1 delivered it, R2 was forwarded it or had it). nwaku v0.36 answers
 * 420 "Dropping already-seen message" (v2: not_published_to_any_peer) and loses this race less
 * often only because its relay is slower. */
static void push_of_a_message_just_relayed_succeeds(void **state) {
  (void)state;
  ld_waku_message_t m = text_message("/lp/1/race/proto", "pushed to two service nodes");
  m.timestamp = 1700000000123000000LL;
  seen_by_t w = {&g_s, {0}};
  assert_int_equal(ld_relay_publish(g_r1.relay, STATIC_TOPIC, &m, w.hash), 2);
  assert_true(sh_run_until(&g_loop, node_got, &w, WAIT_MS));
  push_res_t p = push(g_to_s, STATIC_TOPIC, &m);
  assert_int_equal(p.code, LD_LIGHTPUSH_SUCCESS);
  assert_false(p.has_desc);
  assert_int_equal(p.peers, 2);
  assert_memory_equal(p.hash, w.hash, LD_WAKU_HASH_LEN);

  ld_waku_message_t l = text_message("/lp/1/race/proto", "pushed twice over the legacy protocol");
  l.timestamp = 1700000000456000000LL;
  seen_by_t wl = {&g_s, {0}};
  assert_int_equal(ld_relay_publish(g_r2.relay, STATIC_TOPIC, &l, wl.hash), 2);
  assert_true(sh_run_until(&g_loop, node_got, &wl, WAIT_MS));
  p = push_legacy(g_to_s, STATIC_TOPIC, &l);
  assert_true(p.success);
  assert_string_equal(p.desc, "OK");
}

static void malformed_requests(void **state) {
  (void)state;
  ld_lightpush_response_t r;
  ld_lightpush_response_init(&r);
  /* Not a protobuf. */
  raw_v3(g_to_s, (const uint8_t *)"\x0f\x0f\x0f", 3, &r);
  assert_int_equal(r.status_code, LD_LIGHTPUSH_BAD_REQUEST);
  assert_string_equal(r.request_id, "N/A");
  assert_string_equal(r.status_desc, "decode_rpc_failure: BadWireType");
  assert_false(r.has_relay_peer_count);
  /* No request ID. */
  raw_v3(g_to_s, (const uint8_t *)"\xaa\x01\x00", 3, &r);
  assert_string_equal(r.status_desc, "decode_rpc_failure: MissingRequiredField request_id");
  /* A message without content topic (request ID "q"). */
  raw_v3(g_to_s, (const uint8_t *)"\x0a\x01q\xaa\x01\x02\x0a\x00", 8, &r);
  assert_int_equal(r.status_code, LD_LIGHTPUSH_BAD_REQUEST);
  assert_string_equal(r.request_id, "N/A");
  assert_string_equal(r.status_desc, "decode_rpc_failure: MissingRequiredField content_topic");
  /* An empty body. */
  raw_v3(g_to_s, NULL, 0, &r);
  assert_string_equal(r.status_desc, "decode_rpc_failure: MissingRequiredField request_id");
  ld_lightpush_response_clear(&r);

  ld_lightpush_rpc_t rpc;
  ld_lightpush_rpc_init(&rpc);
  raw_legacy(g_to_s, (const uint8_t *)"\x0a\x05", 2, &rpc);
  assert_true(rpc.has_response);
  assert_false(rpc.is_success);
  assert_string_equal(rpc.request_id, "");
  assert_string_equal(rpc.info, "decode_rpc_failure: MessageIncomplete");
  /* A PushRPC without request: empty_request_body_failure, request ID not echoed (nwaku). */
  raw_legacy(g_to_s, (const uint8_t *)"\x0a\x02id", 4, &rpc);
  assert_false(rpc.is_success);
  assert_string_equal(rpc.request_id, "");
  assert_string_equal(rpc.info, "empty_request_body_failure");
  ld_lightpush_rpc_clear(&rpc);

  /* No request at all (half-closed at once), a frame that never completes, and an announced
   * frame over the cap: the stream is reset without an answer. */
  raw_res_t x = raw_call(g_to_s, LD_LIGHTPUSH_PROTOCOL, (const uint8_t *)"", 0);
  assert_true(x.err != 0);
  x = raw_call(g_to_s, LD_LIGHTPUSH_PROTOCOL, (const uint8_t *)"\x10\x0a", 2);
  assert_true(x.err != 0);
  uint8_t over[4];
  ld_buf_t f;
  ld_buf_init(&f);
  assert_int_equal(ld_buf_varint(&f, ld_lightpush_max_frame(MAX_MSG) + 1), 0);
  memcpy(over, f.data, f.len);
  x = raw_call(g_to_s, LD_LIGHTPUSH_LEGACY_PROTOCOL, over, f.len);
  assert_true(x.err == LD_ERR_RESET || x.err == LD_ERR_PROTOCOL);
  ld_buf_clear(&f);
}

static void thousand_concurrent_pushes(void **state) {
  (void)state;
  static push_res_t res[N_BULK];
  static char text[N_BULK][32];
  memset(res, 0, sizeof res);
  size_t before1 = g_r1.n_bulk, before2 = g_r2.n_bulk;
  for (int i = 0; i < N_BULK; i++) {
    snprintf(text[i], sizeof text[i], "bulk message %d", i);
    ld_waku_message_t m = text_message("/lp/1/bulk/proto", text[i]);
    assert_int_equal(ld_lightpush_client_push(g_c, g_to_s, STATIC_TOPIC, &m, on_push, &res[i]), 0);
  }
  for (int i = 0; i < N_BULK; i++)
    assert_true(sh_run_until(&g_loop, push_done, &res[i], WAIT_MS));
  for (int i = 0; i < N_BULK; i++) {
    assert_int_equal(res[i].calls, 1);
    assert_int_equal(res[i].code, LD_LIGHTPUSH_SUCCESS);
    assert_int_equal(res[i].peers, 2);
    for (int k = 0; k < i && k < 4; k++)
      assert_string_not_equal(res[i].id, res[k].id);
  }
  for (int t = 0; t < 2000 && (g_r1.n_bulk < before1 + N_BULK || g_r2.n_bulk < before2 + N_BULK);
       t++)
    sh_run_for(&g_loop, 10);
  assert_int_equal(g_r1.n_bulk, before1 + N_BULK);
  assert_int_equal(g_r2.n_bulk, before2 + N_BULK);
}

static void service_counters(void **state) {
  (void)state;
  ld_lightpush_server_stats_t st;
  ld_lightpush_server_get_stats(g_s.lp, &st);
  int ok = ld_lightpush_code_index(LD_LIGHTPUSH_SUCCESS);
  /* 2 + 2 (relay refusals) + 1 (a push of a message just relayed) + N_BULK successes */
  assert_int_equal(st.v3_answers[ok], 5 + N_BULK);
  assert_int_equal(st.v3_answers[ld_lightpush_code_index(LD_LIGHTPUSH_INVALID_MESSAGE)], 2 + 2);
  assert_int_equal(st.v3_answers[ld_lightpush_code_index(LD_LIGHTPUSH_NO_PEERS_TO_RELAY)], 1);
  assert_int_equal(st.v3_answers[ld_lightpush_code_index(LD_LIGHTPUSH_BAD_REQUEST)], 2 + 4);
  assert_int_equal(st.v3_answers[ld_lightpush_code_index(LD_LIGHTPUSH_INTERNAL_SERVER_ERROR)], 1);
  assert_int_equal(st.v3_requests, 5 + N_BULK + 4 + 1 + 6 + 1);
  assert_int_equal(st.v3_pushes, 5 + N_BULK + 2 + 1);
  assert_int_equal(st.legacy_requests, 10);
  assert_int_equal(st.legacy_successes, 4);
  assert_int_equal(st.legacy_errors[LD_LIGHTPUSH_LEGACY_INVALID_MESSAGE], 1);
  assert_int_equal(st.legacy_errors[LD_LIGHTPUSH_LEGACY_NOT_PUBLISHED], 3);
  assert_int_equal(st.legacy_errors[LD_LIGHTPUSH_LEGACY_DECODE], 1);
  assert_int_equal(st.legacy_errors[LD_LIGHTPUSH_LEGACY_EMPTY_BODY], 1);
  assert_true(st.streams_failed >= 4); /* huge push, three malformed streams */
  assert_int_equal(st.streams_refused, 0);
  assert_true(st.bytes_in > 0 && st.bytes_out > 0);
  assert_string_equal(ld_lightpush_legacy_error_name(LD_LIGHTPUSH_LEGACY_NOT_PUBLISHED),
                      "not_published_to_any_peer");
}

static void local_push_through_the_service(void **state) {
  (void)state;
  ld_lightpush_local_result_t out;
  ld_waku_message_t m = text_message("/lp/1/local/proto", "from the node itself");
  m.timestamp = 5;
  assert_int_equal(ld_lightpush_server_push_local(g_s.lp, STATIC_TOPIC, &m, &out), 0);
  assert_int_equal(out.status_code, LD_LIGHTPUSH_SUCCESS);
  assert_int_equal(out.relay_peer_count, 2);
  assert_string_equal(out.status_desc, "");
  uint8_t hash[LD_WAKU_HASH_LEN];
  assert_int_equal(ld_waku_message_hash(STATIC_TOPIC, &m, hash), 0);
  want_t w = {hash, STATIC_TOPIC};
  assert_true(sh_run_until(&g_loop, peers_got, &w, WAIT_MS));
  m = text_message("/1/lp/1/local/proto", "generation 1");
  assert_int_equal(ld_lightpush_server_push_local(g_s.lp, NULL, &m, &out), 0);
  assert_int_equal(out.status_code, LD_LIGHTPUSH_INTERNAL_SERVER_ERROR);
  assert_string_equal(out.status_desc, "Auto-sharding error: Generation > 0 are not supported yet");
  uint8_t meta[LD_WAKU_MAX_META_LEN + 1] = {0};
  m.meta = meta;
  m.meta_len = sizeof meta;
  assert_int_equal(ld_lightpush_server_push_local(g_s.lp, STATIC_TOPIC, &m, &out),
                   LD_ERR_INVALID_ARG);
  assert_int_equal(ld_lightpush_server_push_local(g_s.lp, STATIC_TOPIC, NULL, &out),
                   LD_ERR_INVALID_ARG);
}

/* ---- tests: recording service R1 (static sharding) ------------------------------------------ */

typedef struct mapping {
  int rc;
  const char *why;
  uint32_t code;
  const char *desc; /* v3 */
  bool legacy_success;
  const char *info; /* legacy */
} mapping_t;

static void publish_results_map_to_nwaku_answers(void **state) {
  (void)state;
  static const mapping_t cases[] = {
      {5, "", 200, NULL, true, "OK"},
      {0, "", 505, "No peers for topic, skipping publish", false, "not_published_to_any_peer"},
      {LD_ERR_TOO_LARGE, "", 420, "Message size exceeded maximum of 1024 bytes", false,
       "Message size exceeded maximum of 1024 bytes"},
      {LD_ERR_BAD_SIGNATURE, "signed shard validation failed", 420,
       "signed shard validation failed", false, "signed shard validation failed"},
      {LD_ERR_MALFORMED, "RLN validation failed", 420, "RLN validation failed", false,
       "RLN validation failed"},
      {LD_ERR_MALFORMED, "", 420, "validator failed", false, "validator failed"},
      {LD_ERR_EXISTS, "", 420, "Dropping already-seen message", false, "not_published_to_any_peer"},
      {LD_ERR_INVALID_ARG, "", 420, "Empty topic, skipping publish", false,
       "not_published_to_any_peer"},
      {LD_ERR_CRYPTO, "could not get new message id to generate an rln proof", 504,
       "could not get new message id to generate an rln proof", false,
       "could not get new message id to generate an rln proof"},
      {LD_ERR_UNSUPPORTED, "", 500, "no waku relay found", false, "no waku relay found"},
      {LD_ERR_NOMEM, "", 500, "Error generating message id, skipping publish", false,
       "not_published_to_any_peer"},
  };
  ld_waku_message_t m = text_message("/lp/1/rec/proto", "recorded");
  m.timestamp = 99;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const mapping_t *c = &cases[i];
    g_rec1.next_rc = c->rc;
    snprintf(g_rec1.next_why, sizeof g_rec1.next_why, "%s", c->why);
    int calls = g_rec1.calls;
    push_res_t p = push(g_to_r1, "/waku/2/rs/1/6", &m);
    assert_int_equal(g_rec1.calls, calls + 1);
    assert_string_equal(g_rec1.topic, "/waku/2/rs/1/6");
    assert_true(ld_waku_message_equal(&g_rec1.msg, &m));
    assert_int_equal(p.code, c->code);
    assert_int_equal(p.peers, c->code == 200 ? (uint32_t)c->rc : 0);
    if (c->desc == NULL)
      assert_false(p.has_desc);
    else
      assert_string_equal(p.desc, c->desc);
    p = push_legacy(g_to_r1, "/waku/2/rs/1/6", &m);
    assert_int_equal(p.success, c->legacy_success);
    assert_string_equal(p.desc, c->info);
  }
}

static void static_sharding_needs_a_pubsub_topic(void **state) {
  (void)state;
  int calls = g_rec1.calls;
  ld_waku_message_t m = text_message(CONTENT_TOPIC, "where to?");
  push_res_t p = push(g_to_r1, NULL, &m);
  assert_int_equal(p.code, LD_LIGHTPUSH_INVALID_MESSAGE);
  assert_string_equal(p.desc, "Pubsub topic must be specified when static sharding is enabled");
  assert_int_equal(g_rec1.calls, calls);
}

static void idle_stream_is_reset_at_the_deadline(void **state) {
  (void)state;
  ld_lightpush_server_stats_t before, after;
  ld_lightpush_server_get_stats(g_r1.lp, &before);
  raw_res_t r;
  memset(&r, 0, sizeof r);
  ld_reqresp_opts_t o = {.max_bytes = 64, .frame_max = 60, .timeout_ms = 5000};
  /* Nothing written: a stream opened early and never used, as js-waku's stream manager does. */
  assert_int_equal(
      ld_reqresp_request(g_c, g_to_r1, LD_LIGHTPUSH_PROTOCOL, NULL, 0, &o, on_raw, &r, NULL), 0);
  assert_true(sh_run_until(&g_loop, raw_done, &r, WAIT_MS));
  assert_true(r.err == LD_ERR_RESET || r.err == LD_ERR_PROTOCOL);
  ld_lightpush_server_get_stats(g_r1.lp, &after);
  assert_int_equal(after.streams_failed, before.streams_failed + 1);
}

/* ---- tests: rate-limited service R2 ------------------------------------------------------- */

static void rate_limit_answers_429(void **state) {
  (void)state;
  g_rec2.next_rc = 1;
  ld_waku_message_t m = text_message("/lp/1/rate/proto", "limited");
  for (int i = 0; i < RATE_VOLUME; i++)
    assert_int_equal(push(g_to_r2, STATIC_TOPIC, &m).code, LD_LIGHTPUSH_SUCCESS);
  push_res_t p = push(g_to_r2, STATIC_TOPIC, &m);
  /* The answer carries "N/A"; the client keeps a 429 anyway. */
  assert_int_equal(p.code, LD_LIGHTPUSH_TOO_MANY_REQUESTS);
  assert_string_equal(p.desc, "Request rejected due to too many requests");
  ld_lightpush_response_t r;
  ld_lightpush_response_init(&r);
  raw_v3(g_to_r2, (const uint8_t *)"\x0f", 1, &r); /* limited before decoding */
  assert_int_equal(r.status_code, LD_LIGHTPUSH_TOO_MANY_REQUESTS);
  assert_string_equal(r.request_id, "N/A");
  ld_lightpush_response_clear(&r);
  /* Both protocols draw from the same bucket. */
  p = push_legacy(g_to_r2, STATIC_TOPIC, &m);
  assert_false(p.success);
  assert_string_equal(p.desc, "TOO_MANY_REQUESTS");
  ld_lightpush_rpc_t rpc;
  ld_lightpush_rpc_init(&rpc);
  raw_legacy(g_to_r2, (const uint8_t *)"\x0a\x01x", 3, &rpc);
  assert_string_equal(rpc.request_id, "N/A");
  assert_string_equal(rpc.info, "TOO_MANY_REQUESTS");
  ld_lightpush_rpc_clear(&rpc);
  assert_int_equal(g_rec2.calls, RATE_VOLUME);
  /* Half a period refills one token. */
  g_fake_ms += RATE_PERIOD_MS / RATE_VOLUME;
  assert_int_equal(push(g_to_r2, STATIC_TOPIC, &m).code, LD_LIGHTPUSH_SUCCESS);
  assert_int_equal(push(g_to_r2, STATIC_TOPIC, &m).code, LD_LIGHTPUSH_TOO_MANY_REQUESTS);
  ld_lightpush_server_stats_t st;
  ld_lightpush_server_get_stats(g_r2.lp, &st);
  assert_int_equal(st.v3_answers[ld_lightpush_code_index(LD_LIGHTPUSH_TOO_MANY_REQUESTS)], 3);
  assert_int_equal(st.legacy_errors[LD_LIGHTPUSH_LEGACY_RATE_LIMITED], 2);
}

/* ---- tests: client rules against F and G ------------------------------------------------------
 */

static void client_rules(void **state) {
  (void)state;
  ld_waku_message_t m = text_message("/lp/1/fake/proto", "to the fake");
  g_fake_mode = FAKE_ECHO_200;
  push_res_t p = push(g_to_f, STATIC_TOPIC, &m);
  assert_int_equal(p.code, 200);
  assert_int_equal(p.peers, 4);
  /* A chosen request ID is sent as is. */
  ld_lightpush_push_opts_t o = {.request_id = "my-own-id"};
  p = push_ex(g_to_f, STATIC_TOPIC, &m, &o);
  assert_int_equal(p.code, 200);
  assert_string_equal(p.id, "my-own-id");
  g_fake_mode = FAKE_200_NO_COUNT;
  p = push(g_to_f, STATIC_TOPIC, &m);
  assert_int_equal(p.code, LD_LIGHTPUSH_NO_PEERS_TO_RELAY);
  assert_string_equal(p.desc, "fine");
  g_fake_mode = FAKE_200_ZERO;
  p = push(g_to_f, STATIC_TOPIC, &m);
  assert_int_equal(p.code, LD_LIGHTPUSH_NO_PEERS_TO_RELAY);
  assert_false(p.has_desc);
  g_fake_mode = FAKE_WRONG_ID;
  p = push(g_to_f, STATIC_TOPIC, &m);
  assert_int_equal(p.code, LD_LIGHTPUSH_INTERNAL_SERVER_ERROR);
  assert_string_equal(p.desc, "response failure, requestId mismatch");
  assert_int_equal(p.peers, 0);
  g_fake_mode = FAKE_WRONG_ID_429;
  p = push(g_to_f, STATIC_TOPIC, &m);
  assert_int_equal(p.code, LD_LIGHTPUSH_TOO_MANY_REQUESTS);
  g_fake_mode = FAKE_502_WITH_DESC;
  p = push(g_to_f, STATIC_TOPIC, &m);
  assert_int_equal(p.code, 502);
  assert_string_equal(p.desc, "odd");
  g_fake_mode = FAKE_GARBAGE;
  p = push(g_to_f, STATIC_TOPIC, &m);
  assert_int_equal(p.code, LD_LIGHTPUSH_INTERNAL_SERVER_ERROR);
  assert_string_equal(p.desc, "decode_rpc_failure");
  assert_int_equal(p.err, LD_ERR_BAD_PROTOBUF);
  g_fake_mode = FAKE_SILENT_CLOSE;
  p = push(g_to_f, STATIC_TOPIC, &m);
  assert_int_equal(p.code, LD_LIGHTPUSH_INTERNAL_SERVER_ERROR);
  assert_int_equal(p.err, LD_ERR_PROTOCOL);
  assert_non_null(strstr(p.desc, "Failed to read response from peer"));
  /* F has no legacy lightpush, G no v3. */
  p = push_legacy(g_to_f, STATIC_TOPIC, &m);
  assert_false(p.success);
  assert_string_equal(p.desc, "dial_failure");
  assert_int_equal(p.err, LD_ERR_PROTOCOL_UNSUPPORTED);
  p = push(g_to_g, STATIC_TOPIC, &m);
  assert_int_equal(p.code, LD_LIGHTPUSH_SERVICE_NOT_AVAILABLE);
  assert_int_equal(p.err, LD_ERR_PROTOCOL_UNSUPPORTED);
}

static void client_argument_errors_and_cancel(void **state) {
  (void)state;
  push_res_t p;
  memset(&p, 0, sizeof p);
  ld_waku_message_t m = text_message("/lp/1/fake/proto", "x");
  assert_int_equal(ld_lightpush_client_push(g_c, g_to_f, STATIC_TOPIC, NULL, on_push, &p),
                   LD_ERR_INVALID_ARG);
  assert_int_equal(ld_lightpush_legacy_client_push(g_c, g_to_f, NULL, &m, on_legacy_push, &p),
                   LD_ERR_INVALID_ARG);
  static uint8_t big[LD_LIGHTPUSH_CLIENT_MAX_MSG + 1];
  ld_waku_message_t b = m;
  b.payload = big;
  b.payload_len = sizeof big;
  assert_int_equal(ld_lightpush_client_push(g_c, g_to_f, STATIC_TOPIC, &b, on_push, &p),
                   LD_ERR_TOO_LARGE);
  static char long_topic[LD_LIGHTPUSH_MAX_TOPIC_LEN + 2];
  memset(long_topic, 'a', sizeof long_topic - 1);
  assert_int_equal(ld_lightpush_client_push(g_c, g_to_f, long_topic, &m, on_push, &p),
                   LD_ERR_FIELD_TOO_LONG);
  /* A cancelled push never calls back. */
  g_fake_mode = FAKE_ECHO_200;
  ld_lightpush_call_t *call = NULL;
  assert_int_equal(
      ld_lightpush_client_push_ex(g_c, g_to_f, STATIC_TOPIC, &m, NULL, on_push, &p, &call), 0);
  assert_non_null(call);
  ld_lightpush_client_cancel(call);
  sh_run_for(&g_loop, 200);
  assert_int_equal(p.calls, 0);
  /* A zero timestamp may be kept. */
  ld_lightpush_push_opts_t o = {.keep_zero_timestamp = true};
  p = push_ex(g_to_f, STATIC_TOPIC, &m, &o);
  assert_int_equal(p.timestamp, 0);
  assert_int_equal(p.code, 200);
}

/* ---- setup ---------------------------------------------------------------------------------- */

static ld_conn_t *dial_from_client(const ld_multiaddr_t *addr) {
  int err = 0;
  ld_conn_t *c = sh_dial_wait(g_c, &g_loop, addr, &err);
  assert_int_equal(err, 0);
  assert_non_null(c);
  return c;
}

static void dial_relay(lnode_t *from, const lnode_t *to) {
  int err = 0;
  assert_non_null(sh_dial_wait(from->sw, &g_loop, &to->addr, &err));
  assert_int_equal(err, 0);
}

static int setup(void **state) {
  (void)state;
  if (uv_loop_init(&g_loop) != 0)
    return -1;
  relay_node_start(&g_s, 1);
  relay_node_start(&g_r1, 2);
  relay_node_start(&g_r2, 3);
  ld_waku_message_init(&g_rec1.msg);
  ld_waku_message_init(&g_rec2.msg);
  mount_servers();
  dial_relay(&g_s, &g_r1);
  dial_relay(&g_s, &g_r2);
  dial_relay(&g_r1, &g_r2);

  g_f = sh_switch_new(&g_loop, NULL);
  assert_int_equal(ld_switch_handle(g_f, LD_LIGHTPUSH_PROTOCOL, fake_accept, NULL), 0);
  sh_listen_local(g_f, &g_f_addr);
  g_g = sh_switch_new(&g_loop, NULL);
  sh_listen_local(g_g, &g_g_addr);
  /* A service that cannot register every protocol registers none (G keeps no v3). */
  assert_int_equal(ld_switch_handle(g_g, LD_LIGHTPUSH_LEGACY_PROTOCOL, reset_accept, NULL), 0);
  ld_lightpush_server_config_t cfg;
  ld_lightpush_server_config_default(&cfg);
  assert_null(ld_lightpush_server_new(g_g, &cfg));
  const char *ids[16];
  size_t n = ld_switch_protocols(g_g, ids, 16);
  for (size_t i = 0; i < n && i < 16; i++)
    assert_string_not_equal(ids[i], LD_LIGHTPUSH_PROTOCOL);

  g_c = sh_switch_new(&g_loop, NULL);
  g_c_id = ld_identify_new(g_c, NULL);
  ld_metadata_config_t md_cfg;
  ld_metadata_config_default(&md_cfg);
  md_cfg.cluster_id = 1;
  md_cfg.require_metadata = false; /* F and G do not speak metadata */
  g_c_md = ld_metadata_new(g_c, &md_cfg);
  assert_non_null(g_c_md);
  g_to_s = dial_from_client(&g_s.addr);
  g_to_r1 = dial_from_client(&g_r1.addr);
  g_to_r2 = dial_from_client(&g_r2.addr);
  g_to_f = dial_from_client(&g_f_addr);
  g_to_g = dial_from_client(&g_g_addr);
  return sh_run_until(&g_loop, mesh_ready, NULL, WAIT_MS) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  sh_switch_close(g_c, &g_loop);
  ld_metadata_free(g_c_md);
  ld_identify_free(g_c_id);
  sh_switch_close(g_f, &g_loop);
  sh_switch_close(g_g, &g_loop);
  relay_node_stop(&g_s);
  relay_node_stop(&g_r1);
  relay_node_stop(&g_r2);
  ld_waku_message_clear(&g_rec1.msg);
  ld_waku_message_clear(&g_rec2.msg);
  sh_run_for(&g_loop, 50);
  return uv_loop_close(&g_loop) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(v3_push_is_relayed_to_the_mesh),
      cmocka_unit_test(v3_relay_refusals),
      cmocka_unit_test(v3_topic_resolution_errors),
      cmocka_unit_test(legacy_push_is_relayed),
      cmocka_unit_test(push_of_a_message_just_relayed_succeeds),
      cmocka_unit_test(malformed_requests),
      cmocka_unit_test(thousand_concurrent_pushes),
      cmocka_unit_test(service_counters),
      cmocka_unit_test(local_push_through_the_service),
      cmocka_unit_test(publish_results_map_to_nwaku_answers),
      cmocka_unit_test(static_sharding_needs_a_pubsub_topic),
      cmocka_unit_test(idle_stream_is_reset_at_the_deadline),
      cmocka_unit_test(rate_limit_answers_429),
      cmocka_unit_test(client_rules),
      cmocka_unit_test(client_argument_errors_and_cancel),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
