/* Helpers for the switch integration tests: running a loop until a condition holds, switches
 * listening on 127.0.0.1, an echo protocol, connection-event counters, log capture, and raw TCP
 * clients that misbehave (plain bytes, or an upgrade driven by hand so that forged handshakes and
 * muxer frames can be sent). Everything runs on one libuv loop in one thread. */
#ifndef LD_TESTS_SWITCH_HARNESS_H
#define LD_TESTS_SWITCH_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "base/buf.h"
#include "p2p/key.h"
#include "p2p/multiaddr.h"
#include "p2p/switch.h"
#include "p2p/upgrader.h"

#define SH_ECHO "/echo/1.0.0"

/* Runs `loop` until cond(ud) is true or `timeout_ms` passed; returns cond's last value. */
bool sh_run_until(uv_loop_t *loop, bool (*cond)(void *ud), void *ud, uint64_t timeout_ms);

/* Runs the loop for about `ms` milliseconds. */
void sh_run_for(uv_loop_t *loop, uint64_t ms);

/* A switch with a fresh Ed25519 identity (config defaults unless `cfg` is given; its loop and
 * identity fields are filled in here). Asserts on failure. */
ld_switch_t *sh_switch_new(uv_loop_t *loop, const ld_switch_config_t *cfg);

/* Listens on /ip4/127.0.0.1/tcp/0 and stores the bound address with /p2p/<id> in `out`. */
void sh_listen_local(ld_switch_t *sw, ld_multiaddr_t *out);

/* The transport part of `addr` (without /p2p). */
ld_multiaddr_t sh_strip_peer(const ld_multiaddr_t *addr);

/* Closes the switch and runs the loop until it is gone. */
void sh_switch_close(ld_switch_t *sw, uv_loop_t *loop);

/* Registers the echo protocol: every byte is written back, EOF is answered with close_write. */
void sh_register_echo(ld_switch_t *sw);

/* Connection events counted per switch. */
typedef struct sh_events {
  int connected;
  int disconnected;
  int last_reason;
  ld_conn_t *last_connected;
} sh_events_t;
void sh_track_events(ld_switch_t *sw, sh_events_t *ev);

/* Dials and runs the loop until the dial callback came; returns the connection or NULL and
 * stores the error in *err. */
ld_conn_t *sh_dial_wait(ld_switch_t *sw, uv_loop_t *loop, const ld_multiaddr_t *addr, int *err);

/* Log capture: every log line goes to memory until sh_log_release. */
void sh_log_capture(void);
bool sh_log_contains(const char *needle);
void sh_log_release(void);

/* ---- raw TCP clients --------------------------------------------------------------------- */

typedef struct sh_raw sh_raw_t;
struct sh_raw {
  uv_tcp_t tcp;
  uv_connect_t connect_req;
  uv_loop_t *loop;
  bool connected;
  bool eof; /* the remote closed the connection */
  bool closed;
  int status;
  ld_multiaddr_t local;
  ld_buf_t rx;
  void (*on_read)(sh_raw_t *r, const uint8_t *data, size_t len);
  void *user_data;
};

/* Connects to `addr` (transport part) and runs the loop until connected. Asserts on failure. */
void sh_raw_connect(sh_raw_t *r, uv_loop_t *loop, const ld_multiaddr_t *addr);
int sh_raw_write(sh_raw_t *r, const void *data, size_t len);
/* Closes the socket and runs the loop until the handle is closed. */
void sh_raw_close(sh_raw_t *r);
/* "/ip4/127.0.0.1/tcp/<port>" of the client's side, as the switch logs it. */
const char *sh_raw_local_text(sh_raw_t *r, char *buf, size_t cap);
/* For sh_run_until with the sh_raw_t as `ud`: true once the remote closed the connection. */
bool sh_raw_eof(void *ud);
/* Runs the loop until the remote dropped the client (10 s at most), then asserts that the log
 * (sh_log_capture) holds "addr=<client address><suffix> reason=<reason>". */
void sh_raw_assert_cut_off(sh_raw_t *r, const char *suffix, const char *reason);

/* A raw client that performs the upgrade by hand (multistream, Noise, multistream muxer). */
typedef struct sh_secure {
  sh_raw_t raw;
  ld_upgrader_t up;
  ld_noise_t *noise; /* after the upgrade */
  const char *muxer;
  bool done;
  int err;
  ld_buf_t inbuf;
  ld_buf_t plain; /* decrypted bytes received after the upgrade */
} sh_secure_t;

/* Connects and starts the upgrade as initiator with identity `id`, proposing `muxer`. When
 * `payload` is not NULL it replaces the Noise handshake payload (a forged signature). */
void sh_secure_connect(sh_secure_t *s, uv_loop_t *loop, const ld_multiaddr_t *addr,
                       const ld_privkey_t *id, const char *muxer, const uint8_t *payload,
                       size_t payload_len);
/* Encrypts and sends plaintext muxer bytes. */
int sh_secure_send(sh_secure_t *s, const uint8_t *pt, size_t len);
void sh_secure_close(sh_secure_t *s);

/* Deterministic test data: byte `off` of stream `idx`. */
static inline uint8_t sh_pattern(uint32_t idx, uint64_t off) {
  return (uint8_t)(idx * 131u + off * 7u + (off >> 9) + (off >> 17));
}

#endif
