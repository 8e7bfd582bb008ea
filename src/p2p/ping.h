/* libp2p ping (/ipfs/ping/1.0.0): the dialer writes 32 random bytes, the listener echoes them;
 * repeated on one stream until the dialer half-closes. No framing.
 *
 * The responder echoes every complete 32-byte ping until EOF, then closes; it serves at most
 * LD_PING_MAX_INBOUND_STREAMS streams per connection at once (js-waku allows 10; extra streams
 * are reset). The client keeps at most one outbound ping stream per connection. */
#ifndef LD_P2P_PING_H
#define LD_P2P_PING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "p2p/stream.h"
#include "p2p/switch.h"

#define LD_PING_PROTOCOL "/ipfs/ping/1.0.0"
#define LD_PING_SIZE 32
#define LD_PING_TIMEOUT_MS 10000
#define LD_PING_MAX_INBOUND_STREAMS 10
/* Echoes waiting in the stream's send buffer before the responder gives up on a peer that does
 * not read. */
#define LD_PING_MAX_PENDING_ECHO (64u * 1024)

/* ---- pure parts ----------------------------------------------------------------------------- */

/* The responder's framing: collects bytes into whole pings. Caller storage, zero-initialise. */
typedef struct ld_ping_echo {
  uint8_t buf[LD_PING_SIZE];
  size_t fill;
} ld_ping_echo_t;

/* Feeds received bytes; every completed 32-byte ping is appended to `out` (to be written back).
 * Returns the number of bytes appended, or LD_ERR_NOMEM (the pending bytes are then lost). */
int ld_ping_echo_feed(ld_ping_echo_t *e, const uint8_t *data, size_t len, ld_buf_t *out);

/* The client's view of one round: the payload sent and the bytes echoed so far. */
typedef struct ld_ping_round {
  uint8_t sent[LD_PING_SIZE];
  uint8_t got[LD_PING_SIZE];
  size_t fill;
} ld_ping_round_t;

/* Starts a round with `payload` (32 bytes). */
void ld_ping_round_start(ld_ping_round_t *r, const uint8_t payload[LD_PING_SIZE]);

/* Feeds echoed bytes. Returns 0 while incomplete, 1 when the 32 bytes came back intact (*used
 * tells how many of `len` belonged to this round), LD_ERR_PROTOCOL on a mismatch. */
int ld_ping_round_feed(ld_ping_round_t *r, const uint8_t *data, size_t len, size_t *used);

/* ---- service -------------------------------------------------------------------------------- */

/* Registers the responder on `sw`. LD_ERR_EXISTS when already registered, LD_ERR_LIMIT when no
 * connection slot is left for the per-connection stream count. Loop thread only. */
int ld_ping_handle(ld_switch_t *sw);

/* Progress of ld_ping: after each round trip `done` is false, `err` 0, `index` the round
 * (0-based) and `rtt_us` its round-trip time (monotonic clock). Then exactly once `done` is
 * true: err 0 after all rounds, or LD_ERR_PROTOCOL (wrong echo, or the peer closed early),
 * LD_ERR_TIMEOUT (no echo within LD_PING_TIMEOUT_MS), LD_ERR_PROTOCOL_UNSUPPORTED (the peer
 * answered `na`), LD_ERR_RESET, LD_ERR_CLOSED, …; `index` is then the number of rounds completed
 * and `rtt_us` 0. */
typedef void (*ld_ping_cb)(int err, unsigned index, uint64_t rtt_us, bool done, void *user_data);

/* Opens one ping stream on `c` and runs `count` rounds on it, each with fresh random bytes and
 * its own LD_PING_TIMEOUT_MS deadline. `cb` is called from the loop, never from inside this call.
 * Errors (callback never called): LD_ERR_INVALID_ARG (count 0, no cb), LD_ERR_AGAIN (a ping is
 * already running on `c`), LD_ERR_LIMIT (no connection slot), LD_ERR_NOMEM, or the switch's
 * ld_switch_open_stream error. The operation ends by itself when the connection closes. Loop thread
 * only. */
int ld_ping(ld_switch_t *sw, ld_conn_t *c, unsigned count, ld_ping_cb cb, void *user_data);

#endif
