/* liblogosdelivery: the stable messaging tier of the Logos Delivery C API.
 *
 * Calling contract, shared by every function below and by the kernel tier:
 * - The return value is the dispatch status only: RET_OK means the request reached the context's
 *   worker thread. The result arrives later through `callback`, exactly once, from that thread:
 *   callback(RET_OK, reply, len, userData) or callback(RET_ERR, error text, len, userData).
 * - `msg` is borrowed for the duration of the callback and is not NUL-terminated: use `len`.
 * - A NULL callback: int functions return RET_MISSING_CALLBACK without calling anything;
 *   logosdelivery_create_node returns NULL.
 * - A request that cannot be handed over (NULL, destroyed or unknown ctx; a context being
 *   destroyed) is answered synchronously, on the caller's thread, with RET_ERR and the text
 *   "error in sendRequestToFFIThread: <reason>", and the function returns RET_ERR.
 * - Callbacks run on the library's threads: they must be quick and must not wait for another
 *   call to the same context to complete.
 *
 * Any thread may call any function. */
#pragma once
#ifndef __liblogosdelivery__
#define __liblogosdelivery__

#include <stddef.h>
#include <stdint.h>

#ifndef LOGOSDELIVERY_EXPORT
#if defined(__GNUC__) || defined(__clang__)
#define LOGOSDELIVERY_EXPORT __attribute__((visibility("default")))
#else
#define LOGOSDELIVERY_EXPORT
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define RET_OK 0
#define RET_ERR 1
#define RET_MISSING_CALLBACK 2

typedef void (*FFICallBack)(int callerRet, const char *msg, size_t len, void *userData);

/* ---- lifecycle ------------------------------------------------------------------------------ */

/* Creates a context and, asynchronously, its node from `configJson` (the configuration JSON: a
 * legacy flat object of kernel options, a structured object, or a kernel-only object). Returns
 * the context at once; `callback` then reports RET_OK with "" or RET_ERR with the reason ("failed
 * parseLogosDeliveryConf <why>" for a bad configuration). Wait for it before any other call.
 * Returns NULL when `callback` is NULL, and NULL after a synchronous RET_ERR callback when the
 * context's threads cannot be created. */
LOGOSDELIVERY_EXPORT void *logosdelivery_create_node(const char *configJson, FFICallBack callback,
                                                     void *userData);

/* Starts the node (listening, protocols, the messaging layer) and attaches the event listeners.
 * Reply "" or "failed to start: <why>". */
LOGOSDELIVERY_EXPORT int logosdelivery_start_node(void *ctx, FFICallBack callback, void *userData);

/* Stops the node and detaches the event listeners; the node can be started again. Reply "". */
LOGOSDELIVERY_EXPORT int logosdelivery_stop_node(void *ctx, FFICallBack callback, void *userData);

/* Destroys the context synchronously: requests still pending are answered with an error, a node
 * still running is stopped, the threads are joined and everything is freed; then `callback` is
 * called on the caller's thread with RET_OK, msg NULL and len 0, and RET_OK is returned. No
 * callback of the context fires after this returns. Must not be called from one of the
 * context's own callbacks (RET_ERR "liblogosdelivery error: <why>"). */
LOGOSDELIVERY_EXPORT int logosdelivery_destroy(void *ctx, FFICallBack callback, void *userData);

/* ---- messaging ------------------------------------------------------------------------------ */

/* Subscribes / unsubscribes a content topic ("/app/1/name/proto"). Reply "". */
LOGOSDELIVERY_EXPORT int logosdelivery_subscribe(void *ctx, FFICallBack callback, void *userData,
                                                 const char *contentTopic);
LOGOSDELIVERY_EXPORT int logosdelivery_unsubscribe(void *ctx, FFICallBack callback, void *userData,
                                                   const char *contentTopic);

/* Sends {"contentTopic":"…","payload":"<base64>","ephemeral":false}. Reply: the request ID (20
 * hex characters); delivery is then reported by message_propagated, message_sent and
 * message_error events carrying that ID. */
LOGOSDELIVERY_EXPORT int logosdelivery_send(void *ctx, FFICallBack callback, void *userData,
                                            const char *messageJson);

/* ---- reliable channels ---------------------------------------------------------------------- */

LOGOSDELIVERY_EXPORT int logosdelivery_channel_create(void *ctx, FFICallBack callback,
                                                      void *userData, const char *channelId,
                                                      const char *contentTopic,
                                                      const char *senderId);
/* Reply "true" or "false". */
LOGOSDELIVERY_EXPORT int logosdelivery_channel_exists(void *ctx, FFICallBack callback,
                                                      void *userData, const char *channelId);
LOGOSDELIVERY_EXPORT int logosdelivery_channel_send(void *ctx, FFICallBack callback, void *userData,
                                                    const char *channelId, const char *messageJson);
LOGOSDELIVERY_EXPORT int logosdelivery_channel_close(void *ctx, FFICallBack callback,
                                                     void *userData, const char *channelId);

/* ---- events --------------------------------------------------------------------------------- */

/* Sets the context's event callback (one per context; a later call replaces it, NULL disables
 * events). Events are compact JSON objects whose first key is "eventType", delivered as
 * callback(RET_OK, json, len, userData) from the context's threads; events produced while no
 * callback is set are dropped. Once this returns, the previous callback is not called again.
 * A NULL or unknown ctx is ignored. */
LOGOSDELIVERY_EXPORT void logosdelivery_set_event_callback(void *ctx, FFICallBack callback,
                                                           void *userData);

/* ---- debug / introspection ------------------------------------------------------------------ */

/* Reply: a JSON array of the ids logosdelivery_get_node_info accepts. */
LOGOSDELIVERY_EXPORT int logosdelivery_get_available_node_info_ids(void *ctx, FFICallBack callback,
                                                                   void *userData);
/* Reply: the item as plain text (Version, Metrics, MyMultiaddresses, MyENR, MyPeerId,
 * MyBoundPorts, MyMixPubKey, MaxMessageSize); "Invalid node info id: <id>" otherwise. */
LOGOSDELIVERY_EXPORT int logosdelivery_get_node_info(void *ctx, FFICallBack callback,
                                                     void *userData, const char *nodeInfoId);
/* Reply: pretty-printed JSON describing every kernel configuration option. */
LOGOSDELIVERY_EXPORT int logosdelivery_get_available_configs(void *ctx, FFICallBack callback,
                                                             void *userData);

#ifdef __cplusplus
}
#endif

#endif /* __liblogosdelivery__ */
