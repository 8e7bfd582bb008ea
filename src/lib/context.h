/* A library context (the `void *ctx` of liblogosdelivery.h): one node with its own worker thread
 * running the node's libuv loop, a request queue the API functions hand requests to from any
 * thread, the event callback, and a watchdog thread.
 *
 * Contract (c-api.md §1.1, with the deviations that make it safe):
 * - A request is dispatched from the caller's thread with ld_lib_dispatch: its handler then runs
 *   on the worker thread, on the loop, and completes the request exactly once with
 *   ld_lib_reply_ok / ld_lib_reply_err (then or later, from the loop). The reply calls the
 *   caller's callback on the worker thread.
 * - Dispatch returns once the request is in the worker's queue (requests run in the order they
 *   were dispatched); only when LD_LIB_QUEUE_NO_WAIT requests are already waiting does the
 *   caller wait until the worker has taken them (back-pressure, at most
 *   LD_LIB_HANDOVER_TIMEOUT_MS).
 * - A NULL, freed or never-created ctx is detected (a registry of live contexts) and answered
 *   RET_ERR, without calling anything when the callback is NULL.
 * - ld_lib_ctx_destroy completes every request still pending with an error, stops the threads,
 *   frees everything, and only then returns; no callback of the context fires afterwards.
 * - Events are published to the callback set with ld_lib_ctx_set_event_callback, from the worker
 *   thread; one without a callback is dropped. */
#ifndef LD_LIB_CONTEXT_H
#define LD_LIB_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "liblogosdelivery.h"
#include "lib/config_json.h"
#include "base/buf.h"
#include "channels/channels.h"
#include "messaging/messaging.h"
#include "node/node.h"

typedef struct ld_lib_ctx ld_lib_ctx_t;
typedef struct ld_lib_request ld_lib_request_t;

/* Runs on the worker thread. `args` is the pointer given to ld_lib_dispatch (owned by the
 * request: freed with its free function after the reply). Must complete `req` exactly once. */
typedef void (*ld_lib_handler_fn)(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *args);

/* Looks up a live context; NULL when `ctx` is NULL or not a live context. */
ld_lib_ctx_t *ld_lib_ctx_get(void *ctx);

/* Hands a request to the worker. Returns RET_OK once the worker has taken it; RET_ERR (after
 * calling `cb` synchronously with "error in sendRequestToFFIThread: <reason>", and freeing `args`
 * with `free_args`) when the context is not live or is being destroyed; RET_MISSING_CALLBACK
 * (nothing called, `args` freed) when `cb` is NULL. `free_args` may be NULL. */
int ld_lib_dispatch(void *ctx, FFICallBack cb, void *user_data, ld_lib_handler_fn fn, void *args,
                    void (*free_args)(void *args));

/* Completes `req` with RET_OK and `len` bytes of `msg` (NULL with len 0 is sent as ""). */
void ld_lib_reply_ok(ld_lib_request_t *req, const char *msg, size_t len);
/* Completes `req` with RET_OK and a NUL-terminated text. */
void ld_lib_reply_text(ld_lib_request_t *req, const char *text);
/* Completes `req` with RET_ERR and "ffi error: handleRes fireSyncRes error: " + the formatted
 * text (c-api.md §1.1). */
void ld_lib_reply_err(ld_lib_request_t *req, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The worker's loop, node and messaging client (NULL until created / started, and for a
 * kernel-only context's messaging). Worker thread only. */
uv_loop_t *ld_lib_ctx_loop(ld_lib_ctx_t *ctx);
ld_node_t *ld_lib_ctx_node(ld_lib_ctx_t *ctx);
ld_messaging_t *ld_lib_ctx_messaging(ld_lib_ctx_t *ctx);
/* The reliable channel manager (entry layer channels, while started), or NULL. */
ld_channels_t *ld_lib_ctx_channels(ld_lib_ctx_t *ctx);
const ld_lib_config_t *ld_lib_ctx_config(ld_lib_ctx_t *ctx);
bool ld_lib_ctx_started(ld_lib_ctx_t *ctx);

/* Publishes an event (compact JSON, eventType first) to the context's event callback. Worker
 * thread only. */
void ld_lib_ctx_emit(ld_lib_ctx_t *ctx, const char *json, size_t len);

/* ---- additions: context lifecycle (used by the stable tier) --------------------------------- */

/* Live contexts at most per process (each one owns two threads and a loop). */
#define LD_LIB_MAX_CONTEXTS 64
/* How long a caller waits for the worker to take its request before giving up with RET_ERR. */
#define LD_LIB_HANDOVER_TIMEOUT_MS 30000u
/* Requests waiting for the worker before a caller waits for it to take them (back-pressure). */
#define LD_LIB_QUEUE_NO_WAIT 256u
/* Watchdog: first probe after START, then one every PERIOD; `not_responding` when a probe has
 * not been answered within TIMEOUT. */
#define LD_LIB_WATCHDOG_START_MS 10000u
#define LD_LIB_WATCHDOG_PERIOD_MS 1000u
#define LD_LIB_WATCHDOG_TIMEOUT_MS 20000u
/* Stop hooks per context. */
#define LD_LIB_MAX_STOP_HOOKS 32

/* Creates a context: its loop, worker thread and watchdog thread, and registers it. Returns the
 * opaque handle callers use as `ctx` (never reused within the process), or NULL with a one-line
 * reason in `why` (LD_LIB_MAX_CONTEXTS reached, thread or loop creation failed). Any thread. */
void *ld_lib_ctx_create(char *why, size_t why_cap);

/* logosdelivery_destroy: see liblogosdelivery.h. Any thread but the context's own. */
int ld_lib_ctx_destroy(void *ctx, FFICallBack cb, void *user_data);

/* logosdelivery_set_event_callback: see liblogosdelivery.h. Any thread (also from inside an
 * event callback). */
void ld_lib_ctx_set_event_callback(void *ctx, FFICallBack cb, void *user_data);

/* Publishes RET_ERR "Exception <listener> when calling 'eventCallBack': <msg>" to the event
 * callback (an event that could not be built). Worker thread only. */
void ld_lib_ctx_emit_error(ld_lib_ctx_t *ctx, const char *listener, const char *msg);

/* The handle of a context (what ld_lib_ctx_get maps back). */
void *ld_lib_ctx_handle(ld_lib_ctx_t *ctx);

/* ---- additions: the node of a context (worker thread only) ---------------------------------- */

/* Called on the worker thread. */
typedef void (*ld_lib_ctx_fn)(ld_lib_ctx_t *ctx, void *user_data);

/* Takes ownership of a parsed configuration (heap; freed with the context). A configuration
 * without a node key gets a random one here, so that the node keeps its peer ID when it is
 * stopped and started again. */
void ld_lib_ctx_set_config(ld_lib_ctx_t *ctx, ld_lib_config_t *cfg);

/* Builds the node (ld_node_new on the worker loop) from the configuration. Returns 0, or an
 * LD_ERR_* with a one-line reason (LD_ERR_STATE when there is no configuration or already a
 * node). */
int ld_lib_ctx_node_build(ld_lib_ctx_t *ctx, char *why, size_t why_cap);

/* Starts the node and, unless the entry layer is kernel, creates its messaging client (in Edge
 * mode when the configuration asks for Core but relay is not mounted). Returns
 * 0, or an LD_ERR_* with a one-line reason; after a failure the node must be stopped with
 * ld_lib_ctx_node_stop. LD_ERR_STATE when there is no node, it is started, or a stop is under
 * way. */
int ld_lib_ctx_node_start(ld_lib_ctx_t *ctx, char *why, size_t why_cap);

/* Stops the node: runs the stop hooks, frees the messaging client, stops the node, then builds
 * a fresh node from the configuration (same key) so that it can be started again, and calls
 * `done` (may be NULL). A node that is not started is left as it is and `done` is called at
 * once. While a stop is under way further calls join it (their `done` is called when it
 * completes). Returns 0, or LD_ERR_LIMIT (too many waiters; `done` is not called). */
int ld_lib_ctx_node_stop(ld_lib_ctx_t *ctx, ld_lib_ctx_fn done, void *user_data);

/* True while ld_lib_ctx_node_stop is under way. */
bool ld_lib_ctx_stopping(ld_lib_ctx_t *ctx);

/* Registers `fn` to run once, on the worker thread, when the node is about to stop (stop_node,
 * a failed start, destroy), before the messaging client and the node are freed; hooks run
 * newest first and are removed once run. Returns a handle (> 0), or LD_ERR_LIMIT. */
int64_t ld_lib_ctx_add_stop_hook(ld_lib_ctx_t *ctx, ld_lib_ctx_fn fn, void *user_data);

/* Removes a hook that has not run. LD_ERR_NOT_FOUND otherwise. */
int ld_lib_ctx_remove_stop_hook(ld_lib_ctx_t *ctx, int64_t handle);

/* ---- additions: node information (worker thread only) --------------------------------------- */

/* The build version, "v" + the project version. Any thread. */
const char *ld_lib_version(void);

/* Writes the node's "enr:…" (NUL-terminated) to `out`. LD_ERR_STATE without a node,
 * LD_ERR_NOT_FOUND before the node has started (no record yet), LD_ERR_LIMIT when `cap` is too
 * small (LD_ENR_TEXT_MAX suffices). */
int ld_lib_ctx_enr_text(ld_lib_ctx_t *ctx, char *out, size_t cap);

/* Appends the Prometheus text exposition of the node's metrics (process, connections, peer
 * store, relay and gossipsub) to `out`. LD_ERR_STATE without a node, LD_ERR_NOMEM. */
int ld_lib_ctx_metrics_text(ld_lib_ctx_t *ctx, ld_buf_t *out);

/* ---- additions: tests ----------------------------------------------------------------------- */

/* Replaces the watchdog timings of contexts created afterwards (0 restores a default). Tests
 * only; any thread. */
void ld_lib_set_watchdog_timing(uint32_t start_ms, uint32_t period_ms, uint32_t timeout_ms);

#endif
