/* Internals shared by the switch (switch.c), connections (conn.c) and streams (conn_stream.c).
 *
 * Life cycle rules:
 * - Everything runs on the switch's loop. Work that must not happen inside an API call (user
 *   callbacks, flushing batched output) is deferred: the connection is put on the switch's
 *   pending list with flags, and a uv_idle handle drains that list on the next loop turn.
 * - A connection is torn down only from the pending list (never inside a read or an API call):
 *   ld_conn_fail records the first reason, stops reading and schedules CONN_PEND_TEARDOWN. The
 *   teardown delivers the remaining callbacks, closes the socket and the timer, and the memory is
 *   freed in the timer's close callback.
 * - A stream that is over (reset, closed both ways, failed negotiation) is marked STREAM_DONE at
 *   once and its last callback (on_close, or the open callback with an error) is delivered from
 *   the pending list; its memory is freed right after that callback returns. */
#ifndef LD_P2P_CONN_INTERNAL_H
#define LD_P2P_CONN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "base/buf.h"
#include "base/hashmap.h"
#include "base/list.h"
#include "p2p/multistream.h"
#include "p2p/muxer.h"
#include "p2p/noise.h"
#include "p2p/stream.h"
#include "p2p/switch.h"
#include "p2p/transport.h"
#include "p2p/upgrader.h"

/* Bytes waiting in the write queues of all streams of one connection. */
#define LD_CONN_MAX_BUFFERED (64u * 1024 * 1024)
/* Inbound streams refused for the per-connection cap before the connection is closed. */
#define LD_CONN_MAX_STREAM_VIOLATIONS 5
/* Protocols one ld_switch_open_stream may propose. */
#define LD_CONN_MAX_PROPOSALS 16
/* Bytes moved from stream queues into the muxer before output is flushed to the socket. */
#define LD_CONN_PUMP_BUDGET (1u * 1024 * 1024)
/* Muxer output above which stream queues are not drained into it until it was flushed. */
#define LD_CONN_MUXER_OUTPUT_CAP (2u * 1024 * 1024)

/* Room for a connection's address in log lines. */
#define LD_CONN_ADDR_TEXT_MAX 96

#define LD_SWITCH_MAX_LISTENERS 8
#define LD_SWITCH_MAX_EVENT_LISTENERS 16
#define LD_SWITCH_MAX_PROTOCOLS 256
#define LD_SWITCH_PROTOCOL_MAX_LEN (LD_MSS_MAX_MESSAGE - 1)

/* ---- streams ---------------------------------------------------------------------------- */

typedef enum ld_stream_state {
  STREAM_NEGOTIATING = 0,
  STREAM_OPEN,
  STREAM_DONE, /* over; the last callback is pending */
} ld_stream_state_t;

/* What an outbound or inbound negotiation needs; freed once the protocol is agreed. */
typedef struct ld_stream_neg {
  ld_mss_t mss;
  uint64_t deadline;
  ld_open_stream_cb cb; /* outbound */
  void *cb_data;
  size_t n_protos;
  const char *protos[LD_CONN_MAX_PROPOSALS];
  char names[]; /* the proposals' copies */
} ld_stream_neg_t;

struct ld_stream {
  ld_conn_t *conn;
  uint64_t sid;
  const ld_stream_handler_t *h;
  void *user_data;
  const char *protocol;
  char *protocol_owned;
  ld_stream_state_t state;
  bool inbound;
  bool remote_eof;
  bool write_closed; /* close_write requested */
  bool fin_sent;     /* close_write handed to the muxer */
  bool blocked;      /* the muxer's send window is exhausted */
  bool want_drain;   /* ld_stream_write queued bytes: report on_drain when they are gone */
  bool user_owned;   /* handed to the user (accept or open callback): on_close is owed */
  bool close_pending;
  bool drain_pending;
  int close_err;
  ld_stream_neg_t *neg;
  ld_buf_t wq; /* bytes not yet accepted by the muxer, from wq_off on */
  size_t wq_off;
  ld_link_t all;   /* conn->streams_all */
  ld_link_t ready; /* conn->streams_ready: queued bytes and room in the window */
  ld_link_t negq;  /* conn->streams_neg: FIFO by negotiation deadline */
  ld_link_t pendq; /* conn->streams_pending: deferred callbacks */
};

/* ---- connections ------------------------------------------------------------------------ */

typedef enum ld_conn_state {
  CONN_CONNECTING = 0,
  CONN_UPGRADING,
  CONN_OPEN,
  CONN_CLOSING, /* teardown scheduled */
  CONN_CLOSED,  /* torn down; memory goes with the timer's close callback */
} ld_conn_state_t;

enum {
  CONN_PEND_FLUSH = 1u << 0,
  CONN_PEND_PUMP = 1u << 1,
  CONN_PEND_STREAMS = 1u << 2,
  CONN_PEND_WAITERS = 1u << 3,
  CONN_PEND_TEARDOWN = 1u << 4,
};

typedef struct ld_dial_waiter {
  ld_dial_cb cb;
  void *user_data;
  struct ld_dial_waiter *next;
} ld_dial_waiter_t;

struct ld_conn {
  ld_switch_t *sw;
  ld_link_t link;  /* sw->conns */
  ld_link_t pendq; /* sw->pending */
  unsigned pend;
  ld_conn_state_t state;
  bool outbound;
  bool reported;      /* on_connected was delivered */
  bool graceful;      /* how the teardown closes */
  bool stream_closed; /* streams get LD_ERR_CLOSED instead of the reason */
  bool go_away;       /* the remote opens no more streams */
  bool in_io;         /* inside a read, drain or timer callback, which pump and flush at the end */
  bool has_expected;
  int reason;
  ld_tconn_t *t;
  ld_upgrader_t *up;
  ld_noise_t *noise;
  const ld_muxer_ops_t *mops;
  ld_muxer_t *mux;
  ld_peerid_t expected;
  ld_peerid_t peer;
  ld_hashmap_t *streams; /* sid → ld_stream_t */
  size_t n_streams;
  unsigned violations;
  size_t buffered; /* bytes in the write queues of all streams */
  ld_link_t streams_all;
  ld_link_t streams_ready;
  ld_link_t streams_neg;
  ld_link_t streams_pending;
  uv_timer_t timer;
  uint64_t timer_at;
  uint64_t upgrade_deadline;
  ld_buf_t inbuf;
  ld_dial_waiter_t *waiters;
  void *slots[LD_CONN_MAX_SLOTS];
  char peer_text[LD_PEERID_TEXT_MAX];
  char addr_text[LD_CONN_ADDR_TEXT_MAX];
};

/* ---- the switch ------------------------------------------------------------------------- */

typedef struct ld_switch_proto {
  char *id;
  size_t len;
  ld_protocol_accept_fn accept;
  void *user_data;
} ld_switch_proto_t;

typedef struct ld_switch_listener {
  const ld_switch_events_t *ev;
  void *user_data;
} ld_switch_listener_t;

struct ld_switch {
  uv_loop_t *loop;
  ld_switch_config_t cfg;
  ld_privkey_t identity;
  ld_peerid_t peer_id;
  ld_muxer_config_t mcfg;
  const char *dial_muxers[2];
  size_t n_dial_muxers;
  ld_transport_t *tcp;
  ld_tlistener_t *listeners[LD_SWITCH_MAX_LISTENERS];
  size_t n_listeners;
  ld_switch_proto_t *protos;
  size_t n_protos;
  ld_switch_listener_t evl[LD_SWITCH_MAX_EVENT_LISTENERS];
  size_t n_evl;
  ld_link_t conns;
  size_t n_conns;
  ld_link_t pending;
  uv_idle_t idle;
  bool idle_on;
  bool closing;
  bool finished;
  void (*done)(void *user_data);
  void *done_data;
  ld_buf_t rx;      /* decrypted bytes of one read (no callbacks nest reads) */
  ld_buf_t tx;      /* muxer output being encrypted */
  ld_buf_t mss_out; /* a stream's negotiation answers */
};

/* switch.c */
void ld_switch_schedule(ld_conn_t *c, unsigned flags);
const ld_switch_proto_t *ld_switch_find_protocol(const ld_switch_t *sw, const char *id);
const char *ld_switch_select_protocol(void *sw, const char *p, size_t len);
size_t ld_switch_list_protocols(void *sw, const char **out, size_t max);
void ld_switch_notify_connected(ld_switch_t *sw, ld_conn_t *c);
void ld_switch_notify_disconnected(ld_switch_t *sw, ld_conn_t *c);
/* The connection leaves the switch's books (teardown). */
void ld_switch_forget_conn(ld_switch_t *sw, ld_conn_t *c);
/* Muxer IDs the listener side accepts. */
extern const char *const ld_switch_listen_muxers[2];

/* conn.c */
ld_conn_t *ld_conn_new(ld_switch_t *sw, bool outbound);
/* Starts the upgrade of an accepted raw connection. */
int ld_conn_accept(ld_conn_t *c, ld_tconn_t *t);
/* Starts dialing `addr`; `expected` may be NULL. */
int ld_conn_dial(ld_conn_t *c, const ld_multiaddr_t *addr, const ld_peerid_t *expected);
/* Frees a connection that never got a socket (dial failed synchronously). */
void ld_conn_discard(ld_conn_t *c);
int ld_conn_add_waiter(ld_conn_t *c, ld_dial_cb cb, void *user_data);
/* Records the first reason, stops reading and schedules the teardown (idempotent). */
void ld_conn_fail(ld_conn_t *c, int err, bool graceful);
/* Runs deferred work; called by the switch for each pending connection. */
void ld_conn_process(ld_conn_t *c, unsigned flags);
void ld_conn_flush(ld_conn_t *c);
void ld_conn_arm_timer(ld_conn_t *c);
const char *ld_conn_peer_text(const ld_conn_t *c);
uint64_t ld_conn_now(const ld_conn_t *c);

/* conn_stream.c */
extern const ld_muxer_callbacks_t ld_conn_muxer_callbacks;
int ld_conn_open_stream(ld_conn_t *c, const char *const *protocols, size_t n, ld_open_stream_cb cb,
                        void *user_data);
/* Moves queued stream bytes into the muxer while the socket keeps up. */
void ld_conn_pump(ld_conn_t *c);
/* Delivers deferred stream callbacks. */
void ld_conn_streams_process(ld_conn_t *c);
/* Fails negotiations whose deadline passed; returns the next negotiation deadline. */
uint64_t ld_conn_streams_expire(ld_conn_t *c, uint64_t now);
uint64_t ld_conn_streams_next_deadline(const ld_conn_t *c);
/* Ends every stream (teardown): callbacks with `err`, memory freed. */
void ld_conn_streams_teardown(ld_conn_t *c, int err);

#endif
