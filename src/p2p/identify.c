#include "p2p/identify.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "base/utf8.h"
#include "base/varint.h"
#include "p2p/reqresp.h"
#include "identify.pb-c.h"

typedef Ld__Identify__Identify pb_identify_t;

#define LOG_TOPIC "identify"

/* ---- info ----------------------------------------------------------------------------------- */

void ld_identify_info_init(ld_identify_info_t *info) {
  memset(info, 0, sizeof *info);
}

static void free_protocols(char **v, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(v[i]);
  free(v);
}

void ld_identify_info_clear(ld_identify_info_t *info) {
  free_protocols(info->protocols, info->n_protocols);
  free(info->listen_addrs);
  ld_identify_info_init(info);
}

static int dup_protocols(char *const *src, size_t n, char ***out) {
  *out = NULL;
  if (n == 0)
    return 0;
  char **v = calloc(n, sizeof *v);
  if (v == NULL)
    return LD_ERR_NOMEM;
  for (size_t i = 0; i < n; i++) {
    if ((v[i] = strdup(src[i])) == NULL) {
      free_protocols(v, i);
      return LD_ERR_NOMEM;
    }
  }
  *out = v;
  return 0;
}

static int dup_addrs(const ld_multiaddr_t *src, size_t n, ld_multiaddr_t **out) {
  *out = NULL;
  if (n == 0)
    return 0;
  *out = malloc(n * sizeof **out);
  if (*out == NULL)
    return LD_ERR_NOMEM;
  memcpy(*out, src, n * sizeof **out);
  return 0;
}

int ld_identify_info_copy(ld_identify_info_t *dst, const ld_identify_info_t *src) {
  ld_identify_info_clear(dst);
  ld_identify_info_t tmp = *src;
  if (dup_protocols(src->protocols, src->n_protocols, &tmp.protocols) != 0)
    return LD_ERR_NOMEM;
  if (dup_addrs(src->listen_addrs, src->n_listen_addrs, &tmp.listen_addrs) != 0) {
    free_protocols(tmp.protocols, tmp.n_protocols);
    return LD_ERR_NOMEM;
  }
  *dst = tmp;
  return 0;
}

int ld_identify_info_merge(ld_identify_info_t *dst, const ld_identify_info_t *update) {
  char **protocols = NULL;
  ld_multiaddr_t *addrs = NULL;
  if (update->protocols_present &&
      dup_protocols(update->protocols, update->n_protocols, &protocols) != 0)
    return LD_ERR_NOMEM;
  if (update->listen_addrs_present &&
      dup_addrs(update->listen_addrs, update->n_listen_addrs, &addrs) != 0) {
    free_protocols(protocols, update->protocols_present ? update->n_protocols : 0);
    return LD_ERR_NOMEM;
  }
  if (update->protocols_present) {
    free_protocols(dst->protocols, dst->n_protocols);
    dst->protocols = protocols;
    dst->n_protocols = update->n_protocols;
    dst->protocols_present = true;
  }
  if (update->listen_addrs_present) {
    free(dst->listen_addrs);
    dst->listen_addrs = addrs;
    dst->n_listen_addrs = update->n_listen_addrs;
    dst->listen_addrs_present = true;
  }
  if (dst->peer_id.len == 0)
    dst->peer_id = update->peer_id;
  if (update->has_public_key) {
    dst->has_public_key = true;
    dst->public_key = update->public_key;
  }
  if (update->has_agent_version) {
    dst->has_agent_version = true;
    memcpy(dst->agent_version, update->agent_version, sizeof dst->agent_version);
  }
  if (update->has_protocol_version) {
    dst->has_protocol_version = true;
    memcpy(dst->protocol_version, update->protocol_version, sizeof dst->protocol_version);
  }
  if (update->has_observed_addr) {
    dst->has_observed_addr = true;
    dst->observed_addr = update->observed_addr;
  }
  return 0;
}

bool ld_identify_info_has_protocol(const ld_identify_info_t *info, const char *protocol) {
  for (size_t i = 0; i < info->n_protocols; i++)
    if (strcmp(info->protocols[i], protocol) == 0)
      return true;
  return false;
}

/* ---- encoding ------------------------------------------------------------------------------- */

static ProtobufCBinaryData text_field(const char *s) {
  ProtobufCBinaryData b = {strlen(s), (uint8_t *)s};
  return b;
}

/* Length-prefixed size of `msg`. */
static size_t framed_size(const pb_identify_t *msg) {
  size_t body = ld__identify__identify__get_packed_size(msg);
  return ld_varint_len(body) + body;
}

static int append_framed(const pb_identify_t *msg, ld_buf_t *out) {
  uint8_t *p;
  int rc = ld_reqresp_append_frame(out, ld__identify__identify__get_packed_size(msg), &p);
  if (rc == 0)
    ld__identify__identify__pack(msg, p);
  return rc;
}

/* Listen addresses without /p2p, at most LD_IDENTIFY_MAX_ADDRS; returns how many. */
static size_t fill_addrs(const ld_identify_local_t *local, ld_multiaddr_t *addrs,
                         ProtobufCBinaryData *fields) {
  size_t n = 0;
  for (size_t i = 0; i < local->n_listen_addrs && n < LD_IDENTIFY_MAX_ADDRS; i++) {
    addrs[n] = local->listen_addrs[i];
    ld_multiaddr_peerid(&addrs[n], NULL, true);
    if (addrs[n].len == 0)
      continue;
    fields[n].len = addrs[n].len;
    fields[n].data = addrs[n].bytes;
    n++;
  }
  return n;
}

static void fill_optional(const ld_identify_local_t *local, pb_identify_t *msg) {
  if (local->observed_addr != NULL && local->observed_addr->len > 0) {
    msg->has_observedaddr = 1;
    msg->observedaddr.len = local->observed_addr->len;
    msg->observedaddr.data = (uint8_t *)local->observed_addr->bytes;
  }
  if (local->protocol_version != NULL) {
    msg->has_protocolversion = 1;
    msg->protocolversion = text_field(local->protocol_version);
  }
  if (local->agent_version != NULL) {
    msg->has_agentversion = 1;
    msg->agentversion = text_field(local->agent_version);
  }
}

int ld_identify_encode(const ld_identify_local_t *local, ld_buf_t *out) {
  if (local == NULL || local->public_key == NULL || out == NULL ||
      (local->n_listen_addrs > 0 && local->listen_addrs == NULL) ||
      (local->n_protocols > 0 && local->protocols == NULL))
    return LD_ERR_INVALID_ARG;
  pb_identify_t msg = LD__IDENTIFY__IDENTIFY__INIT;
  msg.has_publickey = 1;
  msg.publickey.len = local->public_key->proto_len;
  msg.publickey.data = (uint8_t *)local->public_key->proto;
  ld_multiaddr_t addrs[LD_IDENTIFY_MAX_ADDRS];
  ProtobufCBinaryData addr_fields[LD_IDENTIFY_MAX_ADDRS];
  msg.n_listenaddrs = fill_addrs(local, addrs, addr_fields);
  msg.listenaddrs = addr_fields;
  ProtobufCBinaryData *protos = calloc(local->n_protocols + 1, sizeof *protos);
  if (protos == NULL)
    return LD_ERR_NOMEM;
  for (size_t i = 0; i < local->n_protocols; i++)
    if (local->protocols[i] != NULL && local->protocols[i][0] != '\0')
      protos[msg.n_protocols++] = text_field(local->protocols[i]);
  msg.protocols = protos;
  fill_optional(local, &msg);

  while (framed_size(&msg) > LD_IDENTIFY_MAX_OWN_MSG && msg.n_listenaddrs > 0)
    msg.n_listenaddrs--;
  int rc =
      framed_size(&msg) > LD_IDENTIFY_MAX_OWN_MSG ? LD_ERR_TOO_LARGE : append_framed(&msg, out);
  free(protos);
  return rc < 0 ? rc : (int)msg.n_listenaddrs;
}

/* ---- decoding ------------------------------------------------------------------------------- */

/* True when data[0..n) is valid UTF-8 with no NUL (and no control characters when `strict`). */
static bool text_ok(const uint8_t *data, size_t n, bool strict) {
  for (size_t i = 0; i < n;) {
    if (data[i] == 0 || (strict && (data[i] < 0x20 || data[i] == 0x7f)))
      return false;
    size_t len = ld_utf8_char_len(data + i, n - i);
    if (len == 0)
      return false;
    i += len;
  }
  return true;
}

/* Copies a version string, cut to `cap - 1` bytes at a character boundary. False when invalid. */
static bool take_text(const ProtobufCBinaryData *f, char *dst, size_t cap) {
  if (!text_ok(f->data, f->len, false))
    return false;
  size_t n = f->len;
  if (n > cap - 1) {
    n = cap - 1;
    while (n > 0 && (f->data[n] & 0xc0) == 0x80)
      n--;
  }
  if (n > 0)
    memcpy(dst, f->data, n);
  dst[n] = '\0';
  return true;
}

static int take_key(const pb_identify_t *msg, const ld_peerid_t *remote, unsigned flags,
                    ld_identify_info_t *out) {
  if (!msg->has_publickey)
    return (flags & LD_IDENTIFY_KEY_OPTIONAL) ? 0 : LD_ERR_BAD_KEY;
  if (ld_pubkey_decode(&out->public_key, msg->publickey.data, msg->publickey.len) != 0)
    return LD_ERR_BAD_KEY;
  if (remote != NULL && !ld_peerid_matches(remote, &out->public_key))
    return LD_ERR_PEER_ID_MISMATCH;
  if (remote == NULL && ld_peerid_from_pubkey(&out->peer_id, &out->public_key) != 0)
    return LD_ERR_BAD_KEY;
  out->has_public_key = true;
  return 0;
}

static int take_protocols(const pb_identify_t *msg, ld_identify_info_t *out) {
  out->protocols_present = msg->n_protocols > 0;
  if (msg->n_protocols == 0)
    return 0;
  size_t cap =
      msg->n_protocols < LD_IDENTIFY_MAX_PROTOCOLS ? msg->n_protocols : LD_IDENTIFY_MAX_PROTOCOLS;
  out->protocols = calloc(cap, sizeof *out->protocols);
  if (out->protocols == NULL)
    return LD_ERR_NOMEM;
  for (size_t i = 0; i < msg->n_protocols && out->n_protocols < cap; i++) {
    const ProtobufCBinaryData *f = &msg->protocols[i];
    if (f->len == 0 || f->len > LD_IDENTIFY_MAX_PROTOCOL_LEN || !text_ok(f->data, f->len, true))
      continue;
    char *s = strndup((const char *)f->data, f->len);
    if (s == NULL)
      return LD_ERR_NOMEM;
    out->protocols[out->n_protocols++] = s;
  }
  return 0;
}

static bool take_addr(const ProtobufCBinaryData *f, ld_multiaddr_t *ma) {
  if (ld_multiaddr_from_bytes(ma, f->data, f->len) != 0)
    return false;
  ld_multiaddr_peerid(ma, NULL, true);
  return ma->len > 0;
}

static int take_addrs(const pb_identify_t *msg, ld_identify_info_t *out) {
  out->listen_addrs_present = msg->n_listenaddrs > 0;
  if (msg->has_observedaddr && take_addr(&msg->observedaddr, &out->observed_addr))
    out->has_observed_addr = true;
  if (msg->n_listenaddrs == 0)
    return 0;
  size_t cap =
      msg->n_listenaddrs < LD_IDENTIFY_MAX_ADDRS ? msg->n_listenaddrs : LD_IDENTIFY_MAX_ADDRS;
  out->listen_addrs = malloc(cap * sizeof *out->listen_addrs);
  if (out->listen_addrs == NULL)
    return LD_ERR_NOMEM;
  for (size_t i = 0; i < msg->n_listenaddrs && out->n_listen_addrs < cap; i++)
    if (take_addr(&msg->listenaddrs[i], &out->listen_addrs[out->n_listen_addrs]))
      out->n_listen_addrs++;
  return 0;
}

static int take_fields(const pb_identify_t *msg, const ld_peerid_t *remote, unsigned flags,
                       ld_identify_info_t *out) {
  if (remote != NULL)
    out->peer_id = *remote;
  int rc = take_key(msg, remote, flags, out);
  if (rc == 0 && msg->has_agentversion)
    out->has_agent_version =
        take_text(&msg->agentversion, out->agent_version, sizeof out->agent_version);
  if (rc == 0 && msg->has_protocolversion)
    out->has_protocol_version =
        take_text(&msg->protocolversion, out->protocol_version, sizeof out->protocol_version);
  if (rc == 0)
    rc = take_protocols(msg, out);
  if (rc == 0)
    rc = take_addrs(msg, out);
  return rc;
}

int ld_identify_decode(const uint8_t *data, size_t len, const ld_peerid_t *remote, unsigned flags,
                       ld_identify_info_t *out) {
  ld_identify_info_clear(out);
  const uint8_t *body;
  size_t n;
  int used = ld_reqresp_read_frame(data, len, LD_IDENTIFY_MAX_MSG, &body, &n);
  if (used < 0)
    return used;
  pb_identify_t *msg = ld__identify__identify__unpack(NULL, n, body);
  if (msg == NULL)
    return LD_ERR_BAD_PROTOBUF;
  int rc = take_fields(msg, remote, flags, out);
  ld__identify__identify__free_unpacked(msg, NULL);
  if (rc != 0) {
    ld_identify_info_clear(out);
    return rc;
  }
  return used;
}

/* ---- service -------------------------------------------------------------------------------- */

typedef enum op_kind {
  OP_SERVE, /* the peer asked us (inbound /ipfs/id/1.0.0) */
  OP_PUSH_OUT,
  OP_PUSH_IN,
} op_kind_t;

typedef struct conn_state conn_state_t;

/* One identify stream (or one waiting to be opened) with its deadline. Freed once the stream is
 * over and the timer handle is closed. */
typedef struct op {
  ld_identify_t *id;
  op_kind_t kind;
  conn_state_t *state; /* NULL once the connection is gone */
  struct op *next;     /* in state->ops */
  ld_stream_t *stream;
  ld_buf_t rx;
  uv_timer_t timer;
  bool finished; /* the result was handled */
  bool released;
} op_t;

struct conn_state {
  ld_identify_t *id;
  ld_conn_t *conn;
  unsigned inbound;           /* live OP_SERVE and OP_PUSH_IN */
  ld_reqresp_call_t *request; /* our /ipfs/id/1.0.0 request, until its result */
  bool identified;
  ld_identify_info_t info;
  op_t *ops;
};

struct ld_identify {
  ld_switch_t *sw;
  char *agent;
  ld_pubkey_t pub;
  ld_identify_events_t ev;
  void *ev_ud;
  ld_peerstore_t *ps;
  ld_multiaddr_t announce[LD_IDENTIFY_MAX_ADDRS];
  size_t n_announce;
};

static int g_slot = -1;
static pthread_once_t g_slot_once = PTHREAD_ONCE_INIT;

static void register_slot(void) {
  g_slot = ld_conn_slot_register();
}

static conn_state_t *state_of(const ld_conn_t *c) {
  return g_slot >= 0 ? ld_conn_get_slot(c, g_slot) : NULL;
}

static const char *op_name(const op_t *op) {
  static const char *const names[] = {"serve", "push", "push-in"};
  return names[op->kind];
}

/* -- op lifecycle -- */

static void attach(op_t *op, conn_state_t *st) {
  op->state = st;
  if (st == NULL)
    return;
  op->next = st->ops;
  st->ops = op;
  if (op->kind == OP_SERVE || op->kind == OP_PUSH_IN)
    st->inbound++;
}

static void detach(op_t *op) {
  conn_state_t *st = op->state;
  if (st == NULL)
    return;
  for (op_t **pp = &st->ops; *pp != NULL; pp = &(*pp)->next) {
    if (*pp == op) {
      *pp = op->next;
      break;
    }
  }
  if (op->kind == OP_SERVE || op->kind == OP_PUSH_IN)
    st->inbound--;
  op->state = NULL;
}

static void on_timer_closed(uv_handle_t *h) {
  op_t *op = h->data;
  ld_buf_clear(&op->rx);
  free(op);
}

/* The stream is over (or was never opened): forget the op. */
static void release(op_t *op) {
  if (op->released)
    return;
  op->released = true;
  detach(op);
  op->stream = NULL;
  uv_timer_stop(&op->timer);
  uv_close((uv_handle_t *)&op->timer, on_timer_closed);
}

static void on_timeout(uv_timer_t *t);

static op_t *op_new(ld_identify_t *id, op_kind_t kind, conn_state_t *st) {
  op_t *op = calloc(1, sizeof *op);
  if (op == NULL)
    return NULL;
  op->id = id;
  op->kind = kind;
  ld_buf_init(&op->rx);
  uv_timer_init(ld_switch_loop(id->sw), &op->timer);
  op->timer.data = op;
  uv_timer_start(&op->timer, on_timeout, LD_IDENTIFY_TIMEOUT_MS, 0);
  attach(op, st);
  return op;
}

/* -- results -- */

static void store_in_peerstore(ld_identify_t *id, const ld_identify_info_t *info) {
  ld_peerstore_t *ps = id->ps;
  const ld_peerid_t *peer = &info->peer_id;
  uint64_t now = ld_now_ms();
  if (ps == NULL || peer->len == 0)
    return;
  if (info->has_public_key)
    ld_peerstore_set_public_key(ps, peer, &info->public_key, now);
  if (info->listen_addrs_present)
    ld_peerstore_set_addrs(ps, peer, info->listen_addrs, info->n_listen_addrs, now);
  if (info->protocols_present)
    ld_peerstore_set_protocols(ps, peer, (const char *const *)info->protocols, info->n_protocols,
                               now);
  ld_peerstore_set_versions(ps, peer, info->has_agent_version ? info->agent_version : NULL,
                            info->has_protocol_version ? info->protocol_version : NULL, now);
}

static void report_failure(ld_identify_t *id, conn_state_t *st, bool request, const char *what,
                           int err) {
  char peer[LD_PEERID_TEXT_MAX] = "?";
  if (st != NULL)
    ld_peerid_to_text(ld_conn_remote_peer(st->conn), peer, sizeof peer);
  LD_DEBUG(LOG_TOPIC, "identify %s with %s failed: %s", what, peer, ld_errname(err));
  if (request && st != NULL && err != LD_ERR_CLOSED && id->ev.on_failed != NULL)
    id->ev.on_failed(st->conn, err, id->ev_ud);
}

static void op_failure(op_t *op, int err) {
  report_failure(op->id, op->state, false, op_name(op), err);
}

/* Merges a decoded message into the connection's view and reports it. */
static void apply(ld_identify_t *id, conn_state_t *st, bool request,
                  const ld_identify_info_t *info) {
  if (ld_identify_info_merge(&st->info, info) != 0) {
    report_failure(id, st, request, request ? "request" : "push-in", LD_ERR_NOMEM);
    return;
  }
  if (request)
    st->identified = true;
  if (!st->identified)
    return;
  store_in_peerstore(id, &st->info);
  if (id->ev.on_identified != NULL)
    id->ev.on_identified(st->conn, &st->info, id->ev_ud);
}

/* Decodes every message in data[0..len) (the first of a request must carry the key) and merges
 * them into `out`. Returns 0 when at least one message was decoded. */
static int decode_all(const uint8_t *data, size_t len, bool request, const ld_peerid_t *remote,
                      ld_identify_info_t *out) {
  ld_identify_info_t one;
  ld_identify_info_init(&one);
  size_t pos = 0;
  int rc = 0, count = 0;
  while (pos < len && count < LD_IDENTIFY_MAX_MESSAGES) {
    unsigned flags = (request && count == 0) ? 0 : LD_IDENTIFY_KEY_OPTIONAL;
    int used = ld_identify_decode(data + pos, len - pos, remote, flags, &one);
    if (used < 0) {
      rc = used;
      break;
    }
    if ((rc = ld_identify_info_merge(out, &one)) != 0)
      break;
    pos += (size_t)used;
    count++;
  }
  ld_identify_info_clear(&one);
  if (count == 0)
    return rc < 0 ? rc : LD_ERR_TRUNCATED;
  return 0;
}

/* Handles what a request or push-in stream delivered. */
static void receive(ld_identify_t *id, conn_state_t *st, bool request, const uint8_t *data,
                    size_t len) {
  ld_identify_info_t info;
  ld_identify_info_init(&info);
  int rc = decode_all(data, len, request, ld_conn_remote_peer(st->conn), &info);
  if (rc == 0 && request && !info.has_public_key)
    rc = LD_ERR_BAD_KEY;
  if (rc == 0)
    apply(id, st, request, &info);
  else
    report_failure(id, st, request, request ? "request" : "push-in", rc);
  ld_identify_info_clear(&info);
}

static void finish_receive(op_t *op) {
  if (op->finished)
    return;
  op->finished = true;
  if (op->state != NULL)
    receive(op->id, op->state, false, op->rx.data, op->rx.len);
}

static void on_timeout(uv_timer_t *t) {
  op_t *op = t->data;
  if (!op->finished && op->kind == OP_PUSH_IN && op->rx.len > 0 && op->stream != NULL) {
    finish_receive(op); /* a peer that never half-closes: use what it sent */
  } else if (!op->finished) {
    op->finished = true;
    op_failure(op, LD_ERR_TIMEOUT);
  }
  if (op->stream != NULL)
    ld_stream_reset(op->stream);
}

/* -- our message -- */

static int build_message(ld_identify_t *id, ld_conn_t *c, ld_buf_t *out) {
  const char *protocols[LD_IDENTIFY_MAX_PROTOCOLS];
  size_t n_protocols = ld_switch_protocols(id->sw, protocols, LD_IDENTIFY_MAX_PROTOCOLS);
  if (n_protocols > LD_IDENTIFY_MAX_PROTOCOLS)
    n_protocols = LD_IDENTIFY_MAX_PROTOCOLS;
  ld_multiaddr_t bound[LD_IDENTIFY_MAX_ADDRS];
  ld_identify_local_t local = {
      .public_key = &id->pub,
      .observed_addr = c != NULL ? ld_conn_remote_addr(c) : NULL,
      .protocols = protocols,
      .n_protocols = n_protocols,
      .protocol_version = LD_IDENTIFY_PROTOCOL_VERSION,
      .agent_version = id->agent,
  };
  if (id->n_announce > 0) {
    local.listen_addrs = id->announce;
    local.n_listen_addrs = id->n_announce;
  } else {
    size_t n = ld_switch_listen_addrs(id->sw, bound, LD_IDENTIFY_MAX_ADDRS);
    local.listen_addrs = bound;
    local.n_listen_addrs = n < LD_IDENTIFY_MAX_ADDRS ? n : LD_IDENTIFY_MAX_ADDRS;
  }
  int rc = ld_identify_encode(&local, out);
  return rc < 0 ? rc : 0;
}

/* Writes our message on `s` and half-closes. */
static int send_message(ld_identify_t *id, ld_stream_t *s) {
  ld_buf_t msg;
  ld_buf_init(&msg);
  int rc = build_message(id, ld_stream_conn(s), &msg);
  if (rc == 0)
    rc = ld_stream_write(s, msg.data, msg.len);
  if (rc == 0)
    rc = ld_stream_close_write(s);
  ld_buf_clear(&msg);
  return rc;
}

/* -- stream handlers -- */

static void on_recv_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  op_t *op = ld_stream_user_data(s);
  if (op->finished)
    return;
  if (op->rx.len + len > LD_IDENTIFY_MAX_READ) {
    op->finished = true;
    op_failure(op, LD_ERR_TOO_LARGE);
    ld_stream_reset(s);
    return;
  }
  if (ld_buf_append(&op->rx, data, len) != 0) {
    op->finished = true;
    op_failure(op, LD_ERR_NOMEM);
    ld_stream_reset(s);
  }
}

static void on_recv_eof(ld_stream_t *s) {
  op_t *op = ld_stream_user_data(s);
  finish_receive(op);
  ld_stream_close_write(s);
}

static void on_stream_close(ld_stream_t *s, int err) {
  op_t *op = ld_stream_user_data(s);
  if (!op->finished) {
    op->finished = true;
    if (op->kind == OP_PUSH_IN)
      op_failure(op, err != 0 ? err : LD_ERR_PROTOCOL);
    else if (err != 0)
      op_failure(op, err);
  }
  release(op);
}

/* Served requests and outbound pushes only write; whatever the peer sends is ignored. */
static void on_ignore_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  (void)s;
  (void)data;
  (void)len;
}

static void on_send_eof(ld_stream_t *s) {
  op_t *op = ld_stream_user_data(s);
  op->finished = true;
}

static const ld_stream_handler_t g_recv_handler = {
    .on_data = on_recv_data,
    .on_eof = on_recv_eof,
    .on_close = on_stream_close,
};

static const ld_stream_handler_t g_send_handler = {
    .on_data = on_ignore_data,
    .on_eof = on_send_eof,
    .on_close = on_stream_close,
};

/* -- inbound -- */

static void accept_inbound(ld_stream_t *s, ld_identify_t *id, op_kind_t kind) {
  conn_state_t *st = state_of(ld_stream_conn(s));
  if (st != NULL && st->inbound >= LD_IDENTIFY_MAX_INBOUND_STREAMS) {
    LD_DEBUG(LOG_TOPIC, "too many inbound identify streams; resetting");
    ld_stream_reset(s);
    return;
  }
  op_t *op = op_new(id, kind, st);
  if (op == NULL) {
    ld_stream_reset(s);
    return;
  }
  op->stream = s;
  ld_stream_set_handler(s, kind == OP_SERVE ? &g_send_handler : &g_recv_handler, op);
  if (kind == OP_SERVE) {
    int rc = send_message(id, s);
    if (rc != 0) {
      LD_WARN(LOG_TOPIC, "cannot answer identify: %s", ld_errname(rc));
      ld_stream_reset(s);
    }
  }
}

static void on_accept_request(ld_stream_t *s, void *user_data) {
  accept_inbound(s, user_data, OP_SERVE);
}

static void on_accept_push(ld_stream_t *s, void *user_data) {
  accept_inbound(s, user_data, OP_PUSH_IN);
}

/* -- outbound -- */

static void on_open(ld_stream_t *s, int err, void *user_data) {
  op_t *op = user_data;
  if (s == NULL) {
    if (!op->finished) {
      op->finished = true;
      op_failure(op, err);
    }
    release(op);
    return;
  }
  op->stream = s;
  ld_stream_set_handler(s, &g_send_handler, op);
  if (op->finished || op->state == NULL) {
    ld_stream_reset(s); /* timed out while opening, or the connection is going away */
    return;
  }
  if (send_message(op->id, s) != 0)
    ld_stream_reset(s);
}

static int start_push(ld_identify_t *id, ld_conn_t *c) {
  const char *protocol = LD_IDENTIFY_PUSH_PROTOCOL;
  op_t *op = op_new(id, OP_PUSH_OUT, state_of(c));
  if (op == NULL)
    return LD_ERR_NOMEM;
  int rc = ld_switch_open_stream(id->sw, c, &protocol, 1, on_open, op);
  if (rc != 0) {
    op->finished = true;
    release(op);
  }
  return rc;
}

/* The responder sends one message (or more) and half-closes; a peer that never half-closes is
 * read up to the deadline. */
static void on_response(const uint8_t *resp, size_t len, int err, void *user_data) {
  conn_state_t *st = user_data;
  st->request = NULL;
  if (err != 0)
    report_failure(st->id, st, true, "request", err);
  else
    receive(st->id, st, true, resp, len);
}

static int start_request(ld_identify_t *id, conn_state_t *st) {
  ld_reqresp_opts_t opts = {
      .max_bytes = LD_IDENTIFY_MAX_READ,
      .timeout_ms = LD_IDENTIFY_TIMEOUT_MS,
      .partial_on_timeout = true,
  };
  return ld_reqresp_request(id->sw, st->conn, LD_IDENTIFY_PROTOCOL, NULL, 0, &opts, on_response, st,
                            &st->request);
}

/* -- connection events -- */

static void on_connected(ld_conn_t *c, void *user_data) {
  ld_identify_t *id = user_data;
  conn_state_t *st = calloc(1, sizeof *st);
  if (st == NULL) {
    LD_WARN(LOG_TOPIC, "out of memory; connection not identified");
    return;
  }
  st->id = id;
  st->conn = c;
  ld_identify_info_init(&st->info);
  ld_conn_set_slot(c, g_slot, st);
  int rc = start_request(id, st);
  if (rc != 0 && rc != LD_ERR_CLOSED && id->ev.on_failed != NULL)
    id->ev.on_failed(c, rc, id->ev_ud);
}

static void on_disconnected(ld_conn_t *c, int reason, void *user_data) {
  (void)reason;
  (void)user_data;
  conn_state_t *st = state_of(c);
  if (st == NULL)
    return;
  while (st->ops != NULL)
    detach(st->ops);
  if (st->request != NULL)
    ld_reqresp_cancel(st->request);
  ld_conn_set_slot(c, g_slot, NULL);
  ld_identify_info_clear(&st->info);
  free(st);
}

static const ld_switch_events_t g_switch_events = {
    .on_connected = on_connected,
    .on_disconnected = on_disconnected,
};

/* -- public -- */

ld_identify_t *ld_identify_new(ld_switch_t *sw, const char *agent_version) {
  pthread_once(&g_slot_once, register_slot);
  if (sw == NULL || g_slot < 0)
    return NULL;
  ld_identify_t *id = calloc(1, sizeof *id);
  if (id == NULL)
    return NULL;
  id->sw = sw;
  id->agent = strdup(agent_version != NULL ? agent_version : LD_IDENTIFY_AGENT_VERSION);
  ld_privkey_public(ld_switch_identity(sw), &id->pub);
  if (id->agent == NULL || ld_switch_handle(sw, LD_IDENTIFY_PROTOCOL, on_accept_request, id) != 0 ||
      ld_switch_handle(sw, LD_IDENTIFY_PUSH_PROTOCOL, on_accept_push, id) != 0 ||
      ld_switch_add_listener(sw, &g_switch_events, id) != 0) {
    free(id->agent);
    free(id);
    return NULL;
  }
  return id;
}

void ld_identify_free(ld_identify_t *id) {
  if (id == NULL)
    return;
  free(id->agent);
  free(id);
}

void ld_identify_set_events(ld_identify_t *id, const ld_identify_events_t *ev, void *user_data) {
  memset(&id->ev, 0, sizeof id->ev);
  if (ev != NULL)
    id->ev = *ev;
  id->ev_ud = user_data;
}

void ld_identify_set_peerstore(ld_identify_t *id, ld_peerstore_t *ps) {
  id->ps = ps;
}

int ld_identify_set_listen_addrs(ld_identify_t *id, const ld_multiaddr_t *addrs, size_t n) {
  if (id == NULL || (n > 0 && addrs == NULL))
    return LD_ERR_INVALID_ARG;
  if (n > LD_IDENTIFY_MAX_ADDRS)
    return LD_ERR_LIMIT;
  if (n > 0)
    memcpy(id->announce, addrs, n * sizeof *addrs);
  id->n_announce = n;
  return 0;
}

static bool wants_push(const ld_conn_t *c) {
  const conn_state_t *st = state_of(c);
  return st != NULL &&
         (!st->identified || ld_identify_info_has_protocol(&st->info, LD_IDENTIFY_PUSH_PROTOCOL));
}

int ld_identify_push(ld_identify_t *id) {
  size_t total = ld_switch_connections(id->sw, NULL, 0);
  if (total == 0)
    return 0;
  ld_conn_t **conns = calloc(total, sizeof *conns);
  if (conns == NULL)
    return LD_ERR_NOMEM;
  size_t n = ld_switch_connections(id->sw, conns, total);
  int started = 0;
  for (size_t i = 0; i < n && i < total; i++)
    if (wants_push(conns[i]) && start_push(id, conns[i]) == 0)
      started++;
  free(conns);
  return started;
}

const ld_identify_info_t *ld_identify_get(const ld_identify_t *id, const ld_conn_t *c) {
  (void)id;
  const conn_state_t *st = c != NULL ? state_of(c) : NULL;
  return st != NULL && st->identified ? &st->info : NULL;
}
