/* Transports: byte-stream connections (TCP now, WebSocket later) behind one small vtable, as the
 * switch sees them. A transport owns its sockets and libuv handles; everything runs on one libuv
 * loop and every function must be called from that loop's thread.
 *
 * Raw connections (ld_tconn_t) report through ld_tconn_events_t. Events are delivered from the
 * loop only, never from inside a call to the functions below. After ld_tconn_close no event is
 * delivered any more and the connection's memory is reclaimed by the loop later. */
#ifndef LD_P2P_TRANSPORT_H
#define LD_P2P_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "base/buf.h"
#include "p2p/multiaddr.h"

/* Bytes queued for the socket above which the owner should stop adding (ld_tconn_queued tells;
 * on_drain reports when the queue fell below LD_TCONN_LOW_WATER again). */
#define LD_TCONN_HIGH_WATER (4u * 1024 * 1024)
#define LD_TCONN_LOW_WATER (1u * 1024 * 1024)
/* Hard cap: above this the connection also stops reading until the queue is below
 * LD_TCONN_LOW_WATER, so a peer that never reads cannot make us queue without bound. It is well
 * above LD_TCONN_HIGH_WATER so that owners who respect the high-water mark never stop reading
 * (two peers that both stopped reading while writing to each other would wait forever). */
#define LD_TCONN_READ_STOP (16u * 1024 * 1024)
/* Shared read buffer per transport: the most one read hands over (libuv reads at most 32 times
 * per wakeup and connection, so one peer gets at most 2 MiB of a loop turn). */
#define LD_TRANSPORT_READ_BUF (64u * 1024)

typedef struct ld_transport ld_transport_t;
typedef struct ld_tconn ld_tconn_t;
typedef struct ld_tlistener ld_tlistener_t;

typedef struct ld_tconn_events {
  /* Outbound connections: the connect attempt finished; err is 0, LD_ERR_REFUSED,
   * LD_ERR_UNREACHABLE, LD_ERR_TIMEOUT or LD_ERR_IO. On error the connection is already closed
   * (no further events; do not call ld_tconn_close). */
  void (*on_connect)(ld_tconn_t *c, int err, void *user_data);
  /* Bytes arrived; valid only during the call (they live in a buffer shared by the transport). */
  void (*on_read)(ld_tconn_t *c, const uint8_t *data, size_t len, void *user_data);
  /* The outbound queue fell below LD_TCONN_LOW_WATER after having passed LD_TCONN_HIGH_WATER. */
  void (*on_drain)(ld_tconn_t *c, void *user_data);
  /* The remote closed or reset (LD_ERR_CLOSED) or the socket failed (LD_ERR_IO): nothing
   * more will be read. The owner closes the connection with ld_tconn_close. */
  void (*on_error)(ld_tconn_t *c, int err, void *user_data);
} ld_tconn_events_t;

typedef struct ld_tconn_ops {
  /* Installs the events and starts reading (inbound connections; outbound ones get their events
   * from dial). */
  void (*start)(ld_tconn_t *c, const ld_tconn_events_t *ev, void *user_data);
  /* Queues the bytes in `data` for sending. Takes over data's memory (the buffer is left empty
   * and reusable). LD_ERR_CLOSED after close or a socket error, LD_ERR_NOMEM. */
  int (*write)(ld_tconn_t *c, ld_buf_t *data);
  /* Bytes accepted by write and not yet handed to the kernel. */
  size_t (*queued)(const ld_tconn_t *c);
  /* Stops (true) or resumes (false) reading on behalf of the owner, on top of backpressure. */
  void (*pause)(ld_tconn_t *c, bool paused);
  /* Closes the connection. graceful: flush queued bytes and half-close first (bounded by
   * LD_TCP_LINGER_MS); otherwise abort at once. No event is delivered after this call. */
  void (*close)(ld_tconn_t *c, bool graceful);
} ld_tconn_ops_t;

/* The common head of every raw connection. */
struct ld_tconn {
  const ld_tconn_ops_t *ops;
  ld_transport_t *transport;
  ld_multiaddr_t local;  /* /ip4|ip6/…/tcp/… */
  ld_multiaddr_t remote; /* /ip4|ip6/…/tcp/… */
  bool outbound;
};

/* A new inbound connection; the callee starts it (ld_tconn_start) or closes it before returning. */
typedef void (*ld_tlistener_accept_fn)(ld_tlistener_t *l, ld_tconn_t *c, void *user_data);

typedef struct ld_transport_ops {
  const char *name;
  /* True when the transport can dial or listen on `addr` (a trailing /p2p is ignored). */
  bool (*handles)(const ld_multiaddr_t *addr);
  /* Starts listening. *out receives the listener; its bound address (actual port) is `addr`
   * in ld_tlistener_t. Errors: LD_ERR_ADDR_IN_USE, LD_ERR_UNSUPPORTED, LD_ERR_IO, LD_ERR_NOMEM. */
  int (*listen)(ld_transport_t *t, const ld_multiaddr_t *addr, ld_tlistener_accept_fn accept,
                void *user_data, ld_tlistener_t **out);
  /* Stops listening; no accept after this call; memory reclaimed later by the loop. */
  void (*listener_close)(ld_tlistener_t *l);
  /* Starts a connection attempt; *out receives the connection at once (close it to cancel).
   * ev->on_connect reports the outcome. Errors returned directly mean no event will come:
   * LD_ERR_UNSUPPORTED (address), LD_ERR_NOMEM, LD_ERR_IO. */
  int (*dial)(ld_transport_t *t, const ld_multiaddr_t *addr, const ld_tconn_events_t *ev,
              void *user_data, ld_tconn_t **out);
  /* Frees the transport. Every listener and connection must be closed already; their memory
   * is reclaimed by the loop, so run the loop once more before closing it. */
  void (*destroy)(ld_transport_t *t);
} ld_transport_ops_t;

struct ld_transport {
  const ld_transport_ops_t *ops;
  uv_loop_t *loop;
};

struct ld_tlistener {
  ld_transport_t *transport;
  ld_multiaddr_t addr; /* bound address, actual port */
};

/* Convenience wrappers over the vtables. */
static inline void ld_tconn_start(ld_tconn_t *c, const ld_tconn_events_t *ev, void *ud) {
  c->ops->start(c, ev, ud);
}
static inline int ld_tconn_write(ld_tconn_t *c, ld_buf_t *data) {
  return c->ops->write(c, data);
}
static inline size_t ld_tconn_queued(const ld_tconn_t *c) {
  return c->ops->queued(c);
}
static inline void ld_tconn_pause(ld_tconn_t *c, bool paused) {
  c->ops->pause(c, paused);
}
static inline void ld_tconn_close(ld_tconn_t *c, bool graceful) {
  c->ops->close(c, graceful);
}

#endif
