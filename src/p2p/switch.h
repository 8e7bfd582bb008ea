/* The switch: listens and dials, upgrades raw connections (multistream-select → Noise →
 * multistream-select → yamux or mplex), keeps the protocol handler registry, and opens outbound
 * streams with protocol negotiation. One switch runs on one libuv loop; every call must come from
 * that loop's thread. */
#ifndef LD_P2P_SWITCH_H
#define LD_P2P_SWITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "p2p/key.h"
#include "p2p/multiaddr.h"
#include "p2p/stream.h"
#include "p2p/transport.h"

typedef struct ld_switch ld_switch_t;

/* Transports one switch holds, TCP included. */
#define LD_SWITCH_MAX_TRANSPORTS 8

typedef struct ld_switch_config {
  uv_loop_t *loop;
  const ld_privkey_t *identity;    /* copied */
  size_t max_connections;          /* inbound + outbound; default 50 (nwaku --max-connections) */
  size_t max_streams_per_conn;     /* default 1024 */
  uint32_t dial_timeout_ms;        /* TCP connect + upgrade; default 10,000 */
  uint32_t handshake_timeout_ms;   /* inbound upgrade (security + muxer); default 10,000 */
  uint32_t negotiation_timeout_ms; /* per-stream protocol negotiation; default 10,000 */
  const char *muxers[2];           /* preference order; default {"/yamux/1.0.0", "/mplex/6.7.0"} */
} ld_switch_config_t;

/* Fills `cfg` with the defaults above (loop and identity left NULL). ld_switch_new treats a zero
 * count or timeout as its default; a NULL muxers[i] is skipped (at least one must be given). */
void ld_switch_config_default(ld_switch_config_t *cfg);

/* Creates a switch. NULL on bad configuration or allocation failure. When SIGPIPE still has its
 * default disposition it is set to ignored (writes to closed sockets then fail with EPIPE instead
 * of ending the process); an application's own SIGPIPE handler is left alone. */
ld_switch_t *ld_switch_new(const ld_switch_config_t *cfg);

/* Closes every listener and connection (streams get on_close(LD_ERR_CLOSED), listeners get
 * on_disconnected), then calls `done` from the loop; the switch is freed after `done` returns.
 * `done` may be NULL. */
void ld_switch_close(ld_switch_t *sw, void (*done)(void *user_data), void *user_data);

const ld_peerid_t *ld_switch_peer_id(const ld_switch_t *sw);
const ld_privkey_t *ld_switch_identity(const ld_switch_t *sw);
uv_loop_t *ld_switch_loop(const ld_switch_t *sw);

/* Adds a transport (p2p/transport.h) besides TCP, which every switch has: listen and dial use the
 * first transport, in the order added and TCP first, whose handles() accepts the address. On
 * success the switch owns `t` and destroys it when it closes; on failure the caller keeps it.
 * `t` must run on the switch's loop. Errors: LD_ERR_INVALID_ARG (NULL, another loop),
 * LD_ERR_EXISTS (added already), LD_ERR_LIMIT (too many), LD_ERR_CLOSED (closing). */
int ld_switch_add_transport(ld_switch_t *sw, ld_transport_t *t);

/* Starts listening on a transport address (/ip4/0.0.0.0/tcp/0 binds any free port;
 * /ip4/0.0.0.0/tcp/0/ws with the WebSocket transport added). LD_ERR_UNSUPPORTED when no transport
 * handles the address. */
int ld_switch_listen(ld_switch_t *sw, const ld_multiaddr_t *addr);

/* Copies up to `max` bound listen addresses (actual ports, without /p2p, with the transport's
 * suffix such as /ws) and returns how many there are in total. */
size_t ld_switch_listen_addrs(const ld_switch_t *sw, ld_multiaddr_t *out, size_t max);

/* ---- protocols ------------------------------------------------------------------------------ */

/* Called when an inbound stream has negotiated `protocol`. The callee must install a handler with
 * ld_stream_set_handler before returning (or reset the stream). */
typedef void (*ld_protocol_accept_fn)(ld_stream_t *s, void *user_data);

/* Registers a handler for inbound streams of `protocol` (copied). LD_ERR_EXISTS if present. */
int ld_switch_handle(ld_switch_t *sw, const char *protocol, ld_protocol_accept_fn accept,
                     void *user_data);

/* Copies up to `max` registered protocol IDs (pointers valid until the registry changes) and
 * returns how many there are. Identify advertises these. */
size_t ld_switch_protocols(const ld_switch_t *sw, const char **out, size_t max);

/* ---- connections ---------------------------------------------------------------------------- */

typedef struct ld_switch_events {
  /* A connection finished its upgrade (both directions). */
  void (*on_connected)(ld_conn_t *c, void *user_data);
  /* A connection that was reported connected went away; `reason` is 0 or an LD_ERR_*. The
   * connection is freed after every listener returns. */
  void (*on_disconnected)(ld_conn_t *c, int reason, void *user_data);
} ld_switch_events_t;

/* Adds a listener for connection events (up to 16). `ev` must outlive the switch. */
int ld_switch_add_listener(ld_switch_t *sw, const ld_switch_events_t *ev, void *user_data);

/* Called once with the upgraded connection, or with NULL and the reason: LD_ERR_UNREACHABLE,
 * LD_ERR_REFUSED, LD_ERR_TIMEOUT, LD_ERR_HANDSHAKE, LD_ERR_BAD_SIGNATURE,
 * LD_ERR_PEER_ID_MISMATCH, LD_ERR_NEGOTIATION_FAILED, LD_ERR_TOO_MANY_CONNECTIONS, … */
typedef void (*ld_dial_cb)(ld_conn_t *c, int err, void *user_data);

/* Dials /ip4|ip6/…/tcp/…[/p2p/<id>], or any address an added transport handles (LD_ERR_UNSUPPORTED
 * otherwise; TCP does not resolve /dns* names, the WebSocket transport does). With /p2p the Noise
 * handshake must prove that peer ID. If a connection to that peer already exists it is reused.
 * Errors returned directly mean the callback will not be called. */
int ld_switch_dial(ld_switch_t *sw, const ld_multiaddr_t *addr, ld_dial_cb cb, void *user_data);

/* Copies up to `max` live connections; returns the total. */
size_t ld_switch_connections(const ld_switch_t *sw, ld_conn_t **out, size_t max);

/* Called once with the negotiated stream (its protocol is the first of `protocols` the peer
 * accepted), or with NULL and LD_ERR_PROTOCOL_UNSUPPORTED (every protocol refused),
 * LD_ERR_TIMEOUT, LD_ERR_CLOSED, LD_ERR_TOO_MANY_STREAMS. The callee installs a handler. */
typedef void (*ld_open_stream_cb)(ld_stream_t *s, int err, void *user_data);

/* Opens an outbound stream on `c`, proposing `protocols` in order (strings copied). Errors
 * returned directly mean the callback will not be called: LD_ERR_CLOSED (the connection or the
 * switch is closing), LD_ERR_INVALID_ARG (no protocols, more than 16, an empty ID or one of 1024
 * bytes or more), LD_ERR_TOO_MANY_STREAMS (max_streams_per_conn live streams), LD_ERR_GOAWAY (the
 * peer sent GO_AWAY), LD_ERR_NOMEM. Later failures come through the callback: besides the codes
 * above, LD_ERR_RESET (the peer reset the stream) and the multistream-select errors
 * (LD_ERR_NEGOTIATION_FAILED, LD_ERR_MALFORMED, LD_ERR_TOO_LARGE). */
int ld_switch_open_stream(ld_switch_t *sw, ld_conn_t *c, const char *const *protocols,
                          size_t n_protocols, ld_open_stream_cb cb, void *user_data);

#endif
