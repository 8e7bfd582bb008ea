/* Helpers for the gossipsub integration tests: nodes made of a switch, identify and the
 * gossipsub service listening on 127.0.0.1; a hand-driven pubsub peer ("raw peer") that speaks
 * the RPC framing itself so that tests can send what a well-behaved router never would; and a
 * minimal RPC encoder for such peers. Everything runs on one libuv loop in one thread. */
#ifndef LD_TESTS_PUBSUB_HARNESS_H
#define LD_TESTS_PUBSUB_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "base/buf.h"
#include "p2p/gossipsub/service.h"
#include "p2p/identify.h"
#include "p2p/switch.h"

#define PH_TOPIC "/waku/2/rs/1/0"

/* A node: switch + identify + gossipsub service. */
typedef struct ph_node {
  ld_privkey_t key;
  ld_switch_t *sw;
  ld_identify_t *id;
  ld_gs_service_t *gs;
  ld_multiaddr_t addr; /* bound address with /p2p */
} ph_node_t;

/* Service defaults for tests: nwaku's parameters with the IP-colocation threshold raised (every
 * node is on 127.0.0.1) and a fixed seed. */
void ph_config(ld_gs_service_config_t *cfg, uint64_t seed);

/* Starts a node on `loop` with `cfg` (NULL: ph_config). Asserts on failure. */
void ph_node_start(ph_node_t *n, uv_loop_t *loop, const ld_gs_service_config_t *cfg);

/* Closes the switch, runs the loop until it is gone, frees the service and identify. */
void ph_node_stop(ph_node_t *n, uv_loop_t *loop);

/* Dials `to` from `from` and waits for the connection; asserts success. */
ld_conn_t *ph_connect(uv_loop_t *loop, ph_node_t *from, const ph_node_t *to);

/* Number of pubsub peers of `n` (added to its router). */
size_t ph_peer_count(const ph_node_t *n);

/* ---- RPC encoding (protobuf by hand, field numbers of the pubsub RPC) -------------------- */

/* RPC body parts: append to `body` (an RPC being built). */
void ph_rpc_sub(ld_buf_t *body, const char *topic, bool subscribe);
void ph_rpc_msg(ld_buf_t *body, const char *topic, const uint8_t *data, size_t len);
/* A Message that also carries a seqno (a StrictNoSign violation). */
void ph_rpc_msg_seqno(ld_buf_t *body, const char *topic, const uint8_t *data, size_t len);
/* Wraps a ControlMessage body `ctrl` as RPC field 3. */
void ph_rpc_control(ld_buf_t *body, const ld_buf_t *ctrl);

/* ControlMessage parts: `ids` holds n consecutive 32-byte message IDs. */
void ph_ctrl_ihave(ld_buf_t *ctrl, const char *topic, const uint8_t *ids, size_t n);
void ph_ctrl_iwant(ld_buf_t *ctrl, const uint8_t *ids, size_t n);
void ph_ctrl_graft(ld_buf_t *ctrl, const char *topic);

/* Appends uvarint(body.len) ‖ body to `out`. */
void ph_frame(ld_buf_t *out, const ld_buf_t *body);

/* ---- raw pubsub peer ------------------------------------------------------------------------ */

/* What the raw peer read from the node's outbound stream(s). */
typedef struct ph_raw_rx {
  size_t streams;       /* inbound streams the node opened to us */
  size_t streams_reset; /* of those, reset by us on purpose */
  size_t frames;
  size_t subscribes;             /* SubOpts with subscribe = true */
  size_t last_stream_subscribes; /* on the stream accepted last */
  size_t messages;
  size_t ihave_ids, iwant_ids, grafts, prunes;
  size_t undecodable;
} ph_raw_rx_t;

typedef struct ph_raw {
  ld_privkey_t key;
  ld_switch_t *sw;
  uv_loop_t *loop;
  ld_conn_t *conn;
  ld_stream_t *out; /* our stream to the node */
  bool out_closed;
  int out_err;
  size_t reset_next; /* inbound streams to reset on arrival before accepting one */
  ph_raw_rx_t rx;
  ld_buf_t inbuf;
  ld_stream_t *in;
  ph_node_t *node;
  int disconnected;
  int last_reason;
} ph_raw_t;

/* Starts a raw peer on `loop` that serves `protocol` (the node's outbound streams land here)
 * and connects it to `node`. Does not open its own stream yet. */
void ph_raw_start(ph_raw_t *r, uv_loop_t *loop, ph_node_t *node, const char *protocol);

/* Opens our stream to the node with `protocol` and waits until it is negotiated. */
void ph_raw_open(ph_raw_t *r, const char *protocol);

/* Writes bytes on our stream; returns ld_stream_write's result (LD_ERR_CLOSED once reset). */
int ph_raw_send(ph_raw_t *r, const uint8_t *data, size_t len);

/* Sends one RPC `body` as a length-prefixed frame on the raw peer's stream; fails the test when
 * the write fails. */
void ph_raw_send_rpc(ph_raw_t *r, const ld_buf_t *body);

/* Sends an RPC subscribing the raw peer to PH_TOPIC. */
void ph_raw_subscribe(ph_raw_t *r);

void ph_raw_stop(ph_raw_t *r);

#endif
