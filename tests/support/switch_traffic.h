/* Stream traffic for the switch integration tests: a pinger that keeps one chunk of pattern
 * bytes in flight on an echo stream (a well-behaved peer that never stops), and senders that push
 * a fixed amount of pattern bytes as fast as the stream drains, then close their write side and
 * collect the answer of a sink. Everything runs on the switch's loop, in one thread; failures are
 * cmocka assertions. */
#ifndef LD_TESTS_SWITCH_TRAFFIC_H
#define LD_TESTS_SWITCH_TRAFFIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "crypto/crypto.h"
#include "p2p/stream.h"
#include "p2p/switch.h"
#include "switch_harness.h"

#define SH_PING_CHUNK 1024
#define SH_PINGER_IDX 7                          /* the pinger's pattern index (sh_pattern) */
#define SH_SENDER_CHUNK (64u * 1024)             /* bytes a sender writes at once */
#define SH_SENDER_WRITE_AHEAD (1u * 1024 * 1024) /* buffered bytes a sender stops at */
#define SH_SENDER_ANSWER_MAX (LD_SHA256_LEN + 9)

/* Echo ping-pong: every echoed chunk is checked against the pattern, then the next one goes. */
typedef struct sh_pinger {
  ld_stream_t *s; /* NULL once closed */
  uint64_t sent, recv;
  uint32_t rounds; /* chunks that came back whole */
  bool bad;        /* an echoed byte differed from the pattern */
  bool closed;
  int err; /* the stream's close reason */
} sh_pinger_t;

/* Opens an SH_ECHO stream from `sw` on `c` and starts pinging; `p` (zeroed by the caller) must
 * outlive the stream. Asserts that the open is accepted and succeeds. */
void sh_pinger_start(ld_switch_t *sw, ld_conn_t *c, sh_pinger_t *p);

/* Runs `loop` until `p` completed `n` more round trips (10 s at most) and asserts that every
 * byte came back right and the stream is still open. */
void sh_pinger_assert_progress(uv_loop_t *loop, sh_pinger_t *p, uint32_t n);

/* A node under test (the target of misbehaving clients) and a well-behaved peer that keeps an
 * echo ping-pong running with it, on a loop of their own, with the log captured. Use:
 * sh_target_init, create `node` and `good` on `loop`, sh_target_track, make `node` listen,
 * sh_target_connect; at the end sh_target_close. */
typedef struct sh_target {
  uv_loop_t loop;
  ld_switch_t *node; /* the node under test */
  ld_switch_t *good; /* the well-behaved peer */
  sh_events_t ev_node, ev_good;
  sh_pinger_t ping; /* good's ping-pong with node */
} sh_target_t;

/* Zeroes `t`, initialises its loop and starts the log capture (sh_log_capture). */
void sh_target_init(sh_target_t *t);

/* Registers the echo protocol on `node` and counts the connection events of both switches. */
void sh_target_track(sh_target_t *t);

/* `good` dials `node` at `addr` and starts pinging; asserts 20 round trips. */
void sh_target_connect(sh_target_t *t, const ld_multiaddr_t *addr);

/* The good peer completes `n` more round trips (sh_pinger_assert_progress) and was never
 * disconnected. */
void sh_target_assert_progress(sh_target_t *t, uint32_t n);

/* Closes both switches, releases the log capture and closes the loop (asserting that no handle
 * is left). */
void sh_target_close(sh_target_t *t);

/* Sends `total` bytes of pattern `idx`, then closes its write side; what comes back (at most
 * `answer_cap` bytes, asserted) is kept in `answer`. With `hash`, `h` is the running SHA-256 of
 * what was sent (finish it with ld_sha256_final). */
typedef struct sh_sender {
  ld_stream_t *s;
  uint32_t idx;
  uint64_t total, sent;
  bool hash;
  ld_sha256_ctx_t h;
  uint8_t answer[SH_SENDER_ANSWER_MAX];
  size_t answer_cap, answer_len;
  bool fin;
  bool closed;
  int err; /* the stream's close reason */
} sh_sender_t;

/* Zeroes `x` and sets it up; answer_cap is at most SH_SENDER_ANSWER_MAX. */
void sh_sender_init(sh_sender_t *x, uint32_t idx, uint64_t total, size_t answer_cap, bool hash);

/* The open callback for ld_switch_open_stream with the sender as user data: asserts that the
 * open succeeded and starts sending. */
void sh_sender_opened(ld_stream_t *s, int err, void *ud);

/* A set of senders, for sh_run_until(…, sh_senders_done, &set, …): true once all are closed. */
typedef struct sh_senders {
  sh_sender_t *x;
  size_t n;
} sh_senders_t;
bool sh_senders_done(void *ud);

#endif
