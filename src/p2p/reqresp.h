/* One request per stream, the pattern of identify and of the Waku request/response protocols
 * (metadata, lightpush, filter, store, peer exchange).
 *
 * Client: opens a stream with protocol negotiation, writes one request, half-closes, collects
 * the response and reports it once. Server: collects one request, hands it to a handler that
 * answers with bytes or an error, writes the answer and half-closes (an error resets the
 * stream). js-waku half-closes after writing its request and nwaku reads one length-prefixed
 * frame, so a collection ends at the first complete frame when `frame_max` is set, and at EOF
 * otherwise. Both sides cap the bytes read and bound the whole exchange with a deadline; the
 * stream is reset at the deadline if it is still open then.
 *
 * Every call must come from the switch's loop thread; callbacks come from that loop, never from
 * inside these calls. A function that returns an error never calls its callbacks. */
#ifndef LD_P2P_REQRESP_H
#define LD_P2P_REQRESP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "p2p/stream.h"
#include "p2p/switch.h"

/* Deadline used when an option leaves timeout_ms at 0. */
#define LD_REQRESP_DEFAULT_TIMEOUT_MS 10000
/* Byte cap used when an option leaves max_bytes at 0. */
#define LD_REQRESP_DEFAULT_MAX_BYTES (64u * 1024)

/* ---- length-prefixed frames ----------------------------------------------------------------- */

/* Reads the frame `uvarint(n) ‖ n bytes` at the start of data[0..len) with n ≤ max_body. Returns
 * the bytes the frame takes (prefix included, > 0) and points *body / *body_len at its payload
 * (either may be NULL), or: LD_ERR_TRUNCATED when more bytes may complete it; LD_ERR_TOO_LARGE
 * when n > max_body; LD_ERR_VARINT_NONMINIMAL or LD_ERR_VARINT_TOO_LONG for a malformed prefix.
 * Pure function; any thread. */
int ld_reqresp_read_frame(const uint8_t *data, size_t len, size_t max_body, const uint8_t **body,
                          size_t *body_len);

/* Appends the prefix uvarint(body_len) to `out` and body_len reserved bytes after it, which the
 * caller must fill: *body points at them (valid until `out` changes). Returns 0, or LD_ERR_NOMEM
 * with `out` unchanged. */
int ld_reqresp_append_frame(ld_buf_t *out, size_t body_len, uint8_t **body);

/* ---- options -------------------------------------------------------------------------------- */

typedef struct ld_reqresp_opts {
  /* Bytes read from the stream at most; one more ends the exchange with LD_ERR_TOO_LARGE and
   * resets the stream. 0: LD_REQRESP_DEFAULT_MAX_BYTES. */
  size_t max_bytes;
  /* Non-zero: the message is complete as soon as the bytes read start with a whole frame of a
   * body of at most frame_max bytes (frame errors end the exchange and reset the stream; EOF
   * before a whole frame is LD_ERR_PROTOCOL with nothing read, LD_ERR_TRUNCATED otherwise).
   * 0: the message is whatever arrived before EOF (possibly nothing). */
  size_t frame_max;
  /* Deadline of the whole exchange (opening included). 0: LD_REQRESP_DEFAULT_TIMEOUT_MS. */
  uint32_t timeout_ms;
  /* With frame_max = 0: at the deadline, deliver what arrived (when something did) instead of
   * LD_ERR_TIMEOUT, for peers that never half-close. */
  bool partial_on_timeout;
} ld_reqresp_opts_t;

/* A client call or a served stream. Owned by this module; the owner keeps the pointer only to
 * cancel, and must forget it once the final callback has been called. */
typedef struct ld_reqresp_call ld_reqresp_call_t;

/* Ends a call early: no callback is called afterwards and the stream (once there is one) is
 * reset. Memory is reclaimed from the loop. Must not be called after the call's final callback
 * (done for a client call, on_closed or else on_request/on_failed for a served stream). */
void ld_reqresp_cancel(ld_reqresp_call_t *call);

/* ---- client --------------------------------------------------------------------------------- */

/* The result of a client call, called exactly once: err = 0 and the collected bytes (the first
 * complete frame and whatever followed it in the same read, when frame_max is set), or an error
 * and (NULL, 0): the open errors of ld_switch_open_stream (LD_ERR_PROTOCOL_UNSUPPORTED, …),
 * the error of writing the request, LD_ERR_TIMEOUT, LD_ERR_TOO_LARGE (more than max_bytes, or a
 * frame larger than frame_max), the frame errors, LD_ERR_TRUNCATED, LD_ERR_PROTOCOL (the stream
 * ended with nothing complete), LD_ERR_RESET, LD_ERR_CLOSED (the connection went away),
 * LD_ERR_NOMEM. `resp` is valid only during the call. After it returns the call pointer is no
 * longer valid; the stream winds down by itself (reset at the deadline if the peer never
 * closes). */
typedef void (*ld_reqresp_done_fn)(const uint8_t *resp, size_t len, int err, void *user_data);

/* Starts a call on `c` for `protocol` (copied). `req` (req_len bytes, copied) is written as is,
 * framing included, then our side is half-closed; with req = NULL nothing is written and our
 * side is half-closed only after the response's EOF (identify). `opts` NULL: all defaults.
 * *out (may be NULL) receives the handle for ld_reqresp_cancel. Returns 0, or LD_ERR_NOMEM,
 * LD_ERR_INVALID_ARG, or the direct errors of ld_switch_open_stream; then `done` is never
 * called. */
int ld_reqresp_request(ld_switch_t *sw, ld_conn_t *c, const char *protocol, const uint8_t *req,
                       size_t req_len, const ld_reqresp_opts_t *opts, ld_reqresp_done_fn done,
                       void *user_data, ld_reqresp_call_t **out);

/* ---- server --------------------------------------------------------------------------------- */

typedef struct ld_reqresp_server {
  /* The request arrived (`req` valid only during the call; the bytes of the first frame and what
   * followed, when frame_max is set). Append the answer, framing included, to `resp` (empty)
   * and return 0: it is written and our side half-closed (an empty answer only half-closes).
   * Return an error to reset the stream instead. Or return LD_REQRESP_LATER (leaving `resp`
   * empty) and answer later with ld_reqresp_respond on the call's handle (from ld_reqresp_serve's
   * *out); the stream stays open meanwhile, under the same deadline. Called at most once.
   * Required. */
  int (*on_request)(ld_stream_t *s, const uint8_t *req, size_t len, ld_buf_t *resp,
                    void *user_data);
  /* No request could be read: LD_ERR_TIMEOUT, LD_ERR_TOO_LARGE, a frame error, LD_ERR_PROTOCOL,
   * LD_ERR_TRUNCATED, LD_ERR_RESET, LD_ERR_CLOSED, LD_ERR_NOMEM; or the answer could not be
   * written (after on_request returned 0). Called at most once; the stream is being reset.
   * Optional. */
  void (*on_failed)(ld_stream_t *s, int err, void *user_data);
  /* The stream is over; the last callback of the served stream. Optional. */
  void (*on_closed)(void *user_data);
} ld_reqresp_server_t;

/* Serves one request on the inbound stream `s` of `sw`; call it from the protocol's accept
 * callback (it installs the stream's handler). `srv` must outlive the stream; `opts` is copied
 * (NULL: defaults). *out (may be NULL) receives the handle for ld_reqresp_cancel. Returns 0, or
 * LD_ERR_NOMEM / LD_ERR_INVALID_ARG after resetting `s`; then no callback is called. */
int ld_reqresp_serve(ld_switch_t *sw, ld_stream_t *s, const ld_reqresp_opts_t *opts,
                     const ld_reqresp_server_t *srv, void *user_data, ld_reqresp_call_t **out);

/* on_request's answer for "the answer comes later through ld_reqresp_respond". */
#define LD_REQRESP_LATER 1

/* Answers a served stream whose on_request returned LD_REQRESP_LATER: with err 0 the `len` bytes
 * of `resp` (framing included; copied) are written and our side is half-closed, otherwise (or
 * when the write fails, reported to on_failed) the stream is reset. Once only, and never after
 * the stream's on_closed (the stream may end first: deadline, reset, the connection closing —
 * then the answer is not given). */
void ld_reqresp_respond(ld_reqresp_call_t *call, const uint8_t *resp, size_t len, int err);

#endif
