/* The TCP transport on libuv: /ip4|ip6/<addr>/tcp/<port> listeners and dials, TCP_NODELAY,
 * one read buffer shared by every connection of the transport, one write per batch the owner
 * hands over (straight to the socket when nothing is queued and the kernel takes it all, else
 * queued with uv_write behind what is already queued), and backpressure (see LD_TCONN_HIGH_WATER
 * and LD_TCONN_READ_STOP). libuv reads at most 32 times per wakeup and connection, which caps what
 * one peer can take of a loop turn. */
#ifndef LD_P2P_TRANSPORT_TCP_H
#define LD_P2P_TRANSPORT_TCP_H

#include <uv.h>

#include "p2p/transport.h"

/* Listen backlog. */
#define LD_TCP_BACKLOG 511
/* A graceful close waits at most this long for queued bytes to leave before aborting. */
#define LD_TCP_LINGER_MS 2000

/* Creates the TCP transport on `loop` (which must outlive it). NULL when out of memory. Free
 * with transport->ops->destroy after closing its listeners and connections. */
ld_transport_t *ld_transport_tcp_new(uv_loop_t *loop);

/* Maps a libuv error code onto LD_ERR_* (ECONNREFUSED → REFUSED, ENETUNREACH/EHOSTUNREACH →
 * UNREACHABLE, ETIMEDOUT → TIMEOUT, EADDRINUSE → ADDR_IN_USE, EOF/ECONNRESET/EPIPE → CLOSED,
 * ENOMEM → NOMEM, others → IO). */
int ld_tcp_map_uv_error(int uverr);

#endif
