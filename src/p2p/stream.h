/* Streams and connections as protocol handlers see them.
 *
 * A connection is a TCP (later WebSocket) connection upgraded with Noise and a muxer; a stream is
 * one muxed stream whose protocol has been negotiated with multistream-select. Both live on the
 * switch's event loop and may only be touched from that loop's thread.
 *
 * Callback rules: callbacks are never invoked from inside an ld_stream_* / ld_conn_* call; they
 * come from the event loop. on_close is called exactly once per stream, last; the stream is freed
 * when it returns. */
#ifndef LD_P2P_STREAM_H
#define LD_P2P_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/key.h"
#include "p2p/multiaddr.h"
#include "p2p/peerid.h"

typedef struct ld_stream ld_stream_t;
typedef struct ld_conn ld_conn_t;

typedef struct ld_stream_handler {
  /* Bytes arrived; they are valid only during the call. */
  void (*on_data)(ld_stream_t *s, const uint8_t *data, size_t len);
  /* The remote closed its write side: no more data will arrive. Optional. */
  void (*on_eof)(ld_stream_t *s);
  /* The stream is over: closed both ways (err = 0), reset by either side (LD_ERR_RESET),
   * or its connection went away (LD_ERR_CLOSED or the connection's error). Required. */
  void (*on_close)(ld_stream_t *s, int err);
  /* The bytes buffered by ld_stream_write have all been handed to the muxer. Optional. */
  void (*on_drain)(ld_stream_t *s);
} ld_stream_handler_t;

/* Installs the handler. Inbound streams must get one inside the protocol's accept callback;
 * outbound streams inside the open callback. `h` must outlive the stream. */
void ld_stream_set_handler(ld_stream_t *s, const ld_stream_handler_t *h, void *user_data);
void *ld_stream_user_data(const ld_stream_t *s);

/* Queues `len` bytes (copied). Bytes beyond the muxer's send window wait inside the stream.
 * Errors: LD_ERR_CLOSED after close_write or reset, LD_ERR_LIMIT when more than the per-stream
 * buffer cap (LD_STREAM_MAX_BUFFERED) would wait — the caller should wait for on_drain. The cap
 * is checked against what already waits plus all of `len` (nothing is written on LD_ERR_LIMIT),
 * so a single write larger than the cap always fails; the connection also caps the bytes waiting
 * in all its streams (64 MiB). */
int ld_stream_write(ld_stream_t *s, const uint8_t *data, size_t len);

/* Bytes queued but not yet handed to the muxer. */
size_t ld_stream_buffered(const ld_stream_t *s);

/* Half-closes after the queued bytes are sent. A second call returns 0; LD_ERR_CLOSED once the
 * stream is reset or over, or its connection is closing. */
int ld_stream_close_write(ld_stream_t *s);

/* Aborts both directions. on_close(LD_ERR_RESET) follows from the loop. */
void ld_stream_reset(ld_stream_t *s);

/* The negotiated protocol ID; valid for the life of the stream. */
const char *ld_stream_protocol(const ld_stream_t *s);
ld_conn_t *ld_stream_conn(const ld_stream_t *s);
bool ld_stream_is_inbound(const ld_stream_t *s);

#define LD_STREAM_MAX_BUFFERED (4u * 1024 * 1024)

/* ---- connections ------------------------------------------------------------------------ */

const ld_peerid_t *ld_conn_remote_peer(const ld_conn_t *c);
const ld_pubkey_t *ld_conn_remote_key(const ld_conn_t *c);
/* Transport addresses (/ip4/…/tcp/…), without /p2p. */
const ld_multiaddr_t *ld_conn_remote_addr(const ld_conn_t *c);
const ld_multiaddr_t *ld_conn_local_addr(const ld_conn_t *c);
/* True when we dialed this connection. */
bool ld_conn_is_outbound(const ld_conn_t *c);
/* "/yamux/1.0.0" or "/mplex/6.7.0". */
const char *ld_conn_muxer(const ld_conn_t *c);
/* Number of live streams. */
size_t ld_conn_stream_count(const ld_conn_t *c);

/* Closes the connection: graceful (GO_AWAY, flush, then close) or immediate. Streams get
 * on_close(LD_ERR_CLOSED); the switch's on_disconnected follows with `reason`. */
void ld_conn_close(ld_conn_t *c, int reason, bool graceful);

/* Opaque per-connection slots for services (identify, ping, peer manager): a service obtains a
 * slot index once with ld_conn_slot_register and stores a pointer per connection. */
#define LD_CONN_MAX_SLOTS 8
void ld_conn_set_slot(ld_conn_t *c, int slot, void *value);
void *ld_conn_get_slot(const ld_conn_t *c, int slot);
int ld_conn_slot_register(void);

#endif
