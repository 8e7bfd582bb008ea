#include "pubsub_harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "base/varint.h"
#include "gossipsub.pb-c.h"
#include "switch_harness.h"

#define WAIT_MS 10000

/* ---- nodes ---------------------------------------------------------------------------------- */

void ph_config(ld_gs_service_config_t *cfg, uint64_t seed) {
  ld_gs_service_config_default(cfg);
  cfg->params.ip_colocation_threshold = 1000;
  cfg->seed = seed;
}

void ph_node_start(ph_node_t *n, uv_loop_t *loop, const ld_gs_service_config_t *cfg) {
  memset(n, 0, sizeof *n);
  assert_int_equal(ld_privkey_generate(&n->key, LD_KEY_ED25519), 0);
  ld_switch_config_t scfg;
  ld_switch_config_default(&scfg);
  scfg.loop = loop;
  scfg.identity = &n->key;
  scfg.max_connections = 200;
  n->sw = ld_switch_new(&scfg);
  assert_non_null(n->sw);
  n->id = ld_identify_new(n->sw, "pubsub-test");
  assert_non_null(n->id);
  ld_gs_service_config_t def;
  if (cfg == NULL) {
    ph_config(&def, 0);
    cfg = &def;
  }
  int err = -1;
  n->gs = ld_gs_service_new(n->sw, n->id, cfg, &err);
  assert_int_equal(err, 0);
  assert_non_null(n->gs);
  sh_listen_local(n->sw, &n->addr);
}

void ph_node_stop(ph_node_t *n, uv_loop_t *loop) {
  sh_switch_close(n->sw, loop);
  ld_gs_service_free(n->gs);
  ld_identify_free(n->id);
  sh_run_for(loop, 5);
  memset(n, 0, sizeof *n);
}

ld_conn_t *ph_connect(uv_loop_t *loop, ph_node_t *from, const ph_node_t *to) {
  int err = -1;
  ld_conn_t *c = sh_dial_wait(from->sw, loop, &to->addr, &err);
  assert_int_equal(err, 0);
  assert_non_null(c);
  return c;
}

size_t ph_peer_count(const ph_node_t *n) {
  return ld_gs_service_peers(n->gs, NULL, 0);
}

/* ---- RPC encoding --------------------------------------------------------------------------- */

static void pb_bytes(ld_buf_t *b, unsigned field, const void *data, size_t len) {
  assert_int_equal(ld_buf_varint(b, (uint64_t)field << 3 | 2), 0);
  assert_int_equal(ld_buf_lp(b, data, len), 0);
}

static void pb_varint(ld_buf_t *b, unsigned field, uint64_t v) {
  assert_int_equal(ld_buf_varint(b, (uint64_t)field << 3), 0);
  assert_int_equal(ld_buf_varint(b, v), 0);
}

void ph_rpc_sub(ld_buf_t *body, const char *topic, bool subscribe) {
  ld_buf_t sub;
  ld_buf_init(&sub);
  pb_varint(&sub, 1, subscribe ? 1 : 0);
  pb_bytes(&sub, 2, topic, strlen(topic));
  pb_bytes(body, 1, sub.data, sub.len);
  ld_buf_clear(&sub);
}

static void rpc_msg(ld_buf_t *body, const char *topic, const uint8_t *data, size_t len,
                    bool seqno) {
  static const uint8_t seq[8] = {0, 0, 0, 0, 0, 0, 0, 1};
  ld_buf_t m;
  ld_buf_init(&m);
  pb_bytes(&m, 2, data, len);
  if (seqno)
    pb_bytes(&m, 3, seq, sizeof seq);
  pb_bytes(&m, 4, topic, strlen(topic));
  pb_bytes(body, 2, m.data, m.len);
  ld_buf_clear(&m);
}

void ph_rpc_msg(ld_buf_t *body, const char *topic, const uint8_t *data, size_t len) {
  rpc_msg(body, topic, data, len, false);
}

void ph_rpc_msg_seqno(ld_buf_t *body, const char *topic, const uint8_t *data, size_t len) {
  rpc_msg(body, topic, data, len, true);
}

void ph_rpc_control(ld_buf_t *body, const ld_buf_t *ctrl) {
  pb_bytes(body, 3, ctrl->data, ctrl->len);
}

void ph_ctrl_ihave(ld_buf_t *ctrl, const char *topic, const uint8_t *ids, size_t n) {
  ld_buf_t e;
  ld_buf_init(&e);
  pb_bytes(&e, 1, topic, strlen(topic));
  for (size_t i = 0; i < n; i++)
    pb_bytes(&e, 2, ids + 32 * i, 32);
  pb_bytes(ctrl, 1, e.data, e.len);
  ld_buf_clear(&e);
}

void ph_ctrl_iwant(ld_buf_t *ctrl, const uint8_t *ids, size_t n) {
  ld_buf_t e;
  ld_buf_init(&e);
  for (size_t i = 0; i < n; i++)
    pb_bytes(&e, 1, ids + 32 * i, 32);
  pb_bytes(ctrl, 2, e.data, e.len);
  ld_buf_clear(&e);
}

void ph_ctrl_graft(ld_buf_t *ctrl, const char *topic) {
  ld_buf_t e;
  ld_buf_init(&e);
  pb_bytes(&e, 1, topic, strlen(topic));
  pb_bytes(ctrl, 3, e.data, e.len);
  ld_buf_clear(&e);
}

void ph_frame(ld_buf_t *out, const ld_buf_t *body) {
  assert_int_equal(ld_buf_lp(out, body->data, body->len), 0);
}

/* ---- raw pubsub peer ------------------------------------------------------------------------ */

static void raw_count(ph_raw_t *r, const uint8_t *frame, size_t len) {
  r->rx.frames++;
  Ld__Gossipsub__RPC *rpc = ld__gossipsub__rpc__unpack(NULL, len, frame);
  if (rpc == NULL) {
    r->rx.undecodable++;
    return;
  }
  for (size_t i = 0; i < rpc->n_subscriptions; i++) {
    if (rpc->subscriptions[i]->has_subscribe && rpc->subscriptions[i]->subscribe) {
      r->rx.subscribes++;
      r->rx.last_stream_subscribes++;
    }
  }
  r->rx.messages += rpc->n_publish;
  if (rpc->control != NULL) {
    for (size_t i = 0; i < rpc->control->n_ihave; i++)
      r->rx.ihave_ids += rpc->control->ihave[i]->n_messageids;
    for (size_t i = 0; i < rpc->control->n_iwant; i++)
      r->rx.iwant_ids += rpc->control->iwant[i]->n_messageids;
    r->rx.grafts += rpc->control->n_graft;
    r->rx.prunes += rpc->control->n_prune;
  }
  ld__gossipsub__rpc__free_unpacked(rpc, NULL);
}

static void raw_in_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  ph_raw_t *r = ld_stream_user_data(s);
  if (s != r->in)
    return;
  assert_int_equal(ld_buf_append(&r->inbuf, data, len), 0);
  size_t off = 0;
  for (;;) {
    uint64_t flen;
    size_t hl;
    if (ld_uvarint_decode(r->inbuf.data + off, r->inbuf.len - off, &flen, &hl) != 0)
      break;
    if (r->inbuf.len - off - hl < flen)
      break;
    raw_count(r, r->inbuf.data + off + hl, (size_t)flen);
    off += hl + (size_t)flen;
  }
  ld_buf_consume(&r->inbuf, off);
}

static void raw_in_close(ld_stream_t *s, int err) {
  ph_raw_t *r = ld_stream_user_data(s);
  (void)err;
  if (r != NULL && r->in == s)
    r->in = NULL;
}

static const ld_stream_handler_t raw_in_handler = {
    .on_data = raw_in_data,
    .on_close = raw_in_close,
};

static void raw_accept(ld_stream_t *s, void *user_data) {
  ph_raw_t *r = user_data;
  r->rx.streams++;
  ld_stream_set_handler(s, &raw_in_handler, r);
  if (r->reset_next > 0) {
    r->reset_next--;
    r->rx.streams_reset++;
    ld_stream_reset(s);
    return;
  }
  r->in = s;
  r->rx.last_stream_subscribes = 0;
  ld_buf_reset(&r->inbuf);
}

static void raw_out_close(ld_stream_t *s, int err) {
  ph_raw_t *r = ld_stream_user_data(s);
  if (r->out == s) {
    r->out = NULL;
    r->out_closed = true;
    r->out_err = err;
  }
}

static const ld_stream_handler_t raw_out_handler = {.on_close = raw_out_close};

static void raw_disconnected(ld_conn_t *c, int reason, void *user_data) {
  ph_raw_t *r = user_data;
  if (c == r->conn) {
    r->conn = NULL;
    r->disconnected++;
    r->last_reason = reason;
  }
}

static const ld_switch_events_t raw_events = {.on_disconnected = raw_disconnected};

void ph_raw_start(ph_raw_t *r, uv_loop_t *loop, ph_node_t *node, const char *protocol) {
  memset(r, 0, sizeof *r);
  r->loop = loop;
  r->node = node;
  ld_buf_init(&r->inbuf);
  assert_int_equal(ld_privkey_generate(&r->key, LD_KEY_ED25519), 0);
  ld_switch_config_t scfg;
  ld_switch_config_default(&scfg);
  scfg.loop = loop;
  scfg.identity = &r->key;
  r->sw = ld_switch_new(&scfg);
  assert_non_null(r->sw);
  assert_int_equal(ld_switch_handle(r->sw, protocol, raw_accept, r), 0);
  assert_int_equal(ld_switch_add_listener(r->sw, &raw_events, r), 0);
  int err = -1;
  r->conn = sh_dial_wait(r->sw, loop, &node->addr, &err);
  assert_int_equal(err, 0);
}

typedef struct open_wait {
  ph_raw_t *r;
  bool done;
  int err;
} open_wait_t;

static void raw_opened(ld_stream_t *s, int err, void *user_data) {
  open_wait_t *w = user_data;
  w->done = true;
  w->err = err;
  if (s != NULL) {
    ld_stream_set_handler(s, &raw_out_handler, w->r);
    w->r->out = s;
    w->r->out_closed = false;
  }
}

static bool open_done(void *ud) {
  return ((open_wait_t *)ud)->done;
}

void ph_raw_open(ph_raw_t *r, const char *protocol) {
  open_wait_t w = {.r = r};
  assert_non_null(r->conn);
  assert_int_equal(ld_switch_open_stream(r->sw, r->conn, &protocol, 1, raw_opened, &w), 0);
  assert_true(sh_run_until(r->loop, open_done, &w, WAIT_MS));
  assert_int_equal(w.err, 0);
}

int ph_raw_send(ph_raw_t *r, const uint8_t *data, size_t len) {
  if (r->out == NULL)
    return LD_ERR_CLOSED;
  return ld_stream_write(r->out, data, len);
}

void ph_raw_stop(ph_raw_t *r) {
  sh_switch_close(r->sw, r->loop);
  ld_buf_clear(&r->inbuf);
  r->sw = NULL;
}

void ph_raw_send_rpc(ph_raw_t *r, const ld_buf_t *body) {
  ld_buf_t f;
  ld_buf_init(&f);
  ph_frame(&f, body);
  assert_int_equal(ph_raw_send(r, f.data, f.len), 0);
  ld_buf_clear(&f);
}

void ph_raw_subscribe(ph_raw_t *r) {
  ld_buf_t body;
  ld_buf_init(&body);
  ph_rpc_sub(&body, PH_TOPIC, true);
  ph_raw_send_rpc(r, &body);
  ld_buf_clear(&body);
}
