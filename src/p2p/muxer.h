/* The stream-multiplexer engine interface shared by yamux (/yamux/1.0.0) and mplex (/mplex/6.7.0).
 *
 * Engines do no I/O. The connection feeds decrypted bytes with `read`, which reports stream events
 * through the callbacks; everything the engine wants to send accumulates inside it and is drained
 * with `take_output`. Timers (yamux keep-alive) are driven with `next_deadline` and
 * `handle_timeout`. All times are monotonic milliseconds supplied by the caller.
 *
 * Stream IDs are the engine's own 64-bit handles; they are unique for the life of the session (for
 * mplex, the engine maps (id, who-opened) pairs onto distinct handles: id << 1 for streams we
 * opened, id << 1 | 1 for streams the remote opened; yamux handles are the yamux stream IDs).
 *
 * Stream life: a stream exists from open_stream / on_stream_open until it is reset (either side)
 * or both directions are closed (local close_write and remote EOF). After that the engine forgets
 * it and ignores frames for it, and calls on it return LD_ERR_NOT_FOUND. */
#ifndef LD_P2P_MUXER_H
#define LD_P2P_MUXER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

/* Event callbacks. Each returns 0, or a negative LD_ERR_* that aborts `read` with that value.
 * Callbacks may call the engine's write/close_write/reset/consumed/open_stream functions (not
 * read or destroy). */
typedef struct ld_muxer_callbacks {
  int (*on_stream_open)(void *user_data, uint64_t sid); /* the remote opened a stream */
  int (*on_stream_data)(void *user_data, uint64_t sid, const uint8_t *data, size_t len);
  int (*on_stream_eof)(void *user_data, uint64_t sid);      /* the remote half-closed */
  int (*on_stream_reset)(void *user_data, uint64_t sid);    /* the remote reset; stream is gone */
  int (*on_stream_writable)(void *user_data, uint64_t sid); /* send window grew from zero */
  int (*on_go_away)(void *user_data, uint32_t code);        /* remote will open no more streams */
} ld_muxer_callbacks_t;

typedef struct ld_muxer_config {
  size_t max_streams;       /* live streams, both directions; extra inbound ones are reset */
  size_t max_frame;         /* largest inbound data frame accepted (mplex: 1 MiB) */
  uint32_t recv_window;     /* yamux: initial per-stream receive window we enforce (256 KiB) */
  uint32_t max_recv_window; /* yamux: the receive window may grow up to this (16 MiB) */
  uint32_t send_window;     /* yamux: assumed initial send window (256,000 for nim peers) */
  uint32_t keepalive_ms;    /* yamux: PING interval, 0 = none */
} ld_muxer_config_t;

/* Defaults: 1024 streams, 1 MiB frames, 256 KiB initial receive window growing to 16 MiB,
 * 256,000-byte initial send window, 30 s keep-alive. */
void ld_muxer_config_default(ld_muxer_config_t *cfg);

typedef struct ld_muxer ld_muxer_t;

typedef struct ld_muxer_ops {
  const char *protocol_id;

  /* `initiator` is true on the dialer's side of the connection. The callbacks struct and
   * user_data must outlive the engine; cfg is copied (NULL means ld_muxer_config_default), cb may
   * be NULL (no events). Returns NULL on allocation failure. */
  ld_muxer_t *(*create)(bool initiator, const ld_muxer_config_t *cfg,
                        const ld_muxer_callbacks_t *cb, void *user_data);
  void (*destroy)(ld_muxer_t *m);

  /* Consumes all of `data` (partial frames are kept inside). A negative return is fatal for the
   * session: the caller flushes take_output (which may hold a GO_AWAY) and closes the
   * connection. LD_ERR_PROTOCOL, LD_ERR_WINDOW_EXCEEDED, LD_ERR_FRAME_TOO_LARGE,
   * LD_ERR_MALFORMED name the reason. */
  int (*read)(ld_muxer_t *m, const uint8_t *data, size_t len, uint64_t now_ms);

  /* Opens an outbound stream; *sid receives its handle. LD_ERR_TOO_MANY_STREAMS or LD_ERR_GOAWAY
   * when no more may be opened. Data may be written at once. */
  int (*open_stream)(ld_muxer_t *m, uint64_t *sid);

  /* Queues up to `len` bytes on the stream. Returns the number accepted (may be less than len,
   * or 0, when the yamux send window is exhausted: on_stream_writable reports when more fits),
   * or LD_ERR_NOT_FOUND / LD_ERR_CLOSED after close_write. mplex accepts everything. */
  int64_t (*write)(ld_muxer_t *m, uint64_t sid, const uint8_t *data, size_t len);

  int (*close_write)(ld_muxer_t *m, uint64_t sid);
  int (*reset)(ld_muxer_t *m, uint64_t sid);

  /* The application has processed `n` bytes delivered on `sid`: yamux returns window credit.
   * LD_ERR_INVALID_ARG when n exceeds the bytes delivered and not yet reported. */
  int (*consumed)(ld_muxer_t *m, uint64_t sid, size_t n);

  /* Sends GO_AWAY (yamux) or resets all streams (mplex) for a graceful close. */
  int (*go_away)(ld_muxer_t *m, uint32_t code);

  /* Appends every pending output byte to `out` and forgets them. When `out` is empty the engine
   * may swap buffer memory with it instead of copying (out->data may change; out stays owned by
   * the caller). */
  int (*take_output)(ld_muxer_t *m, ld_buf_t *out);
  size_t (*pending_output)(const ld_muxer_t *m);

  /* Next time handle_timeout wants to run, UINT64_MAX for none. */
  uint64_t (*next_deadline)(const ld_muxer_t *m);
  int (*handle_timeout)(ld_muxer_t *m, uint64_t now_ms);

  /* Number of live streams. */
  size_t (*stream_count)(const ld_muxer_t *m);
} ld_muxer_ops_t;

extern const ld_muxer_ops_t ld_yamux_ops;
extern const ld_muxer_ops_t ld_mplex_ops;

#endif
