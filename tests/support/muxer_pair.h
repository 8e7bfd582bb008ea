/* Helpers for the stream-muxer unit tests: an engine of any muxer (picked by its ld_muxer_ops_t)
 * wrapped in a test peer whose callbacks record every event and collect the delivered bytes per
 * stream, plus moving one peer's output into another in pieces of a chosen size, hex vectors and
 * payload patterns. Everything is in memory, single-threaded, with the caller's fake clock.
 *
 * Failures are reported through cmocka assertions: call these only from inside a cmocka test. */
#ifndef LD_TESTS_MUXER_PAIR_H
#define LD_TESTS_MUXER_PAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "p2p/muxer.h"

/* Kinds of recorded events, one per muxer callback. */
enum { MP_EV_OPEN, MP_EV_DATA, MP_EV_EOF, MP_EV_RESET, MP_EV_WRITABLE, MP_EV_GOAWAY };

/* One recorded callback: `code` is the byte count for MP_EV_DATA, the error code for
 * MP_EV_GOAWAY and 0 otherwise; `sid` is 0 for MP_EV_GOAWAY. */
typedef struct mp_ev {
  int kind;
  uint64_t sid;
  uint32_t code;
} mp_ev_t;

#define MP_MAX_RX 1024 /* streams whose bytes one peer can collect */

typedef struct mp_rx {
  uint64_t sid;
  ld_buf_t data;
} mp_rx_t;

/* A muxer engine with recording callbacks. The fields after `rx`/`nrx` steer the callbacks and
 * may be changed by the test at any time. */
typedef struct mp_peer {
  const ld_muxer_ops_t *ops;
  ld_muxer_t *m;
  mp_ev_t *ev; /* every callback in order */
  size_t nev;
  size_t evcap;
  mp_rx_t rx[MP_MAX_RX]; /* delivered bytes per stream */
  size_t nrx;
  bool auto_consume;    /* call consumed() for delivered bytes (default true) */
  int data_rc;          /* returned by on_stream_data */
  bool reset_on_data;   /* reset the stream from inside on_stream_data */
  const char *greeting; /* written from inside on_stream_open */
} mp_peer_t;

/* A heap-allocated peer over a new `ops` engine with the given role and config (the defaults of
 * ld_muxer_config_default when `cfg` is NULL; it is not kept). Free with mp_peer_free. */
mp_peer_t *mp_peer_new(const ld_muxer_ops_t *ops, bool initiator, const ld_muxer_config_t *cfg);

/* Destroys the engine, then frees the events, collected bytes and the peer. */
void mp_peer_free(mp_peer_t *p);

/* The buffer of bytes delivered on `sid`, created empty on first use. Owned by the peer. */
ld_buf_t *mp_rx_of(mp_peer_t *p, uint64_t sid);

/* How many events of `kind` were recorded for `sid` (any sid for MP_EV_GOAWAY). */
size_t mp_count(const mp_peer_t *p, int kind, uint64_t sid);

/* Moves all of `from`'s pending output into `to`'s read in pieces of `split` bytes (0: all at
 * once), stopping at the first failing read. Returns 0 or that read's error. */
int mp_pump(mp_peer_t *from, mp_peer_t *to, size_t split, uint64_t now);

/* Pumps both ways until neither peer has pending output; asserts every read succeeds. */
void mp_exchange(mp_peer_t *a, mp_peer_t *b, size_t split, uint64_t now);

/* Replaces `out`'s contents with the peer's pending output. */
void mp_take(mp_peer_t *p, ld_buf_t *out);

/* Decodes the hex digits of `hex` (trusted test input, lowercase or uppercase) into `out`, which
 * has room for `cap` bytes (asserted). Returns the byte count. */
size_t mp_unhex(const char *hex, uint8_t *out, size_t cap);

/* Asserts that `b` holds exactly the bytes spelled by `hex` (at most 4096 bytes). */
void mp_assert_buf_hex(const ld_buf_t *b, const char *hex);

/* Reads the bytes spelled by `hex` (at most 256) into the peer's engine; returns read's result. */
int mp_feed_hex(mp_peer_t *p, const char *hex, uint64_t now);

/* Takes the peer's pending output and asserts it is exactly the bytes spelled by `hex`. */
void mp_assert_output_hex(mp_peer_t *p, const char *hex);

/* Fills `buf` with the deterministic pattern for `seed`, as seen from stream position `offset`. */
void mp_pattern(uint8_t *buf, size_t len, size_t offset, uint64_t seed);

/* Whether `buf` holds the pattern for `seed` from position 0. */
bool mp_matches_pattern(const uint8_t *buf, size_t len, uint64_t seed);

/* ld_muxer_config_default's values, by value. */
ld_muxer_config_t mp_config(void);

#endif
