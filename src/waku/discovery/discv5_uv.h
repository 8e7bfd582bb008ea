/* The libuv adapter of the discv5 engine: one UDP socket and one timer on the node's loop.
 * Datagrams read from the socket go to ld_discv5_receive (with uv_now as the clock), the
 * engine's datagrams go out with uv_udp_try_send (or, when the socket would block, a queued
 * uv_udp_send, at most LD_DISCV5_UV_MAX_QUEUED in flight; beyond that they are dropped, as UDP
 * may drop them anyway), and the timer follows ld_discv5_next_deadline. A Waku search
 * (waku_discv5.h) can be attached: it sees every event first and its deadline joins the
 * engine's.
 *
 * Lifecycle: ld_discv5_uv_open binds (port 0: the kernel picks one, read it back with
 * ld_discv5_uv_port, so that the record can announce it), ld_discv5_uv_start creates the engine
 * and starts reading, ld_discv5_uv_close stops and frees once libuv has closed the handles (the
 * loop must run on). After calling the engine directly (ld_discv5_uv_engine: add_enr, lookup,
 * ping, …) call ld_discv5_uv_update so that the timer follows any new deadline.
 *
 * Threading: the loop's thread only. */
#ifndef LD_WAKU_DISCOVERY_DISCV5_UV_H
#define LD_WAKU_DISCOVERY_DISCV5_UV_H

#include <stdint.h>
#include <uv.h>

#include "waku/discovery/discv5.h"
#include "waku/discovery/waku_discv5.h"

#define LD_DISCV5_UV_MAX_QUEUED 256

typedef struct ld_discv5_uv ld_discv5_uv_t;

typedef struct ld_discv5_uv_callbacks {
  /* Optional: every engine event (after the attached search has seen it). May call the engine's
   * request functions (then ld_discv5_uv_update is not needed: the adapter re-arms after every
   * callback returns). */
  void (*event)(void *ud, ld_discv5_event_t *ev);
  /* Optional: a record the attached search matched. */
  void (*peer)(void *ud, const ld_enr_t *enr);
} ld_discv5_uv_callbacks_t;

/* Binds a UDP socket to `ip` (IPv4 or IPv6 text; NULL: "0.0.0.0") and `port`. Errors:
 * LD_ERR_INVALID_ARG (not an IP address), LD_ERR_ADDR_IN_USE, LD_ERR_IO, LD_ERR_NOMEM. */
int ld_discv5_uv_open(uv_loop_t *loop, const char *ip, uint16_t port, ld_discv5_uv_t **out);

/* The bound port. */
uint16_t ld_discv5_uv_port(const ld_discv5_uv_t *u);

/* Creates the engine with `cfg` (its send callback is the adapter's; copied) and, when `search`
 * is not NULL, a Waku search over it; starts reading. `cb` (may be NULL) is copied.
 * LD_ERR_STATE when already started, LD_ERR_INVALID_ARG when the engine refuses `cfg`,
 * LD_ERR_NOMEM, LD_ERR_IO. */
int ld_discv5_uv_start(ld_discv5_uv_t *u, const ld_discv5_config_t *cfg,
                       const ld_waku_discv5_config_t *search, const ld_discv5_uv_callbacks_t *cb,
                       void *ud);

/* The engine and the search (NULL before start, or without a search). */
ld_discv5_t *ld_discv5_uv_engine(ld_discv5_uv_t *u);
ld_waku_discv5_t *ld_discv5_uv_search(ld_discv5_uv_t *u);

/* Re-arms the timer after the engine or search was called from outside the adapter. */
void ld_discv5_uv_update(ld_discv5_uv_t *u);

/* Datagrams dropped because the socket would not take them. */
uint64_t ld_discv5_uv_send_drops(const ld_discv5_uv_t *u);

/* Stops reading, frees the engine and the search at once (no more callbacks), and the adapter
 * once libuv has closed its handles. NULL is a no-op. Not from inside the adapter's callbacks. */
void ld_discv5_uv_close(ld_discv5_uv_t *u);

#endif
