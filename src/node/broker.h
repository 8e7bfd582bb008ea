/* The broker: how events travel upward and how upper layers ask for data without including the
 * modules that hold it.
 *
 * Events: a publisher (the node, on behalf of the protocols below it) publishes an event of a
 * kind (LD_EVENT_* in node/events.h, or any positive number an upper layer defines) with a
 * payload pointer; every listener subscribed to that kind is called synchronously, in the order
 * it subscribed, inside ld_broker_publish. The payload is valid only during the call.
 *
 * Requests: a provider registers under a name ("relay.subscriptions", "peers.connected", …) and
 * answers ld_broker_request synchronously by filling a response struct whose layout the name's
 * owner documents. Asynchronous answers are made by putting a callback in the request struct.
 *
 * Re-entrancy: listeners may subscribe, unsubscribe (themselves or others) and publish from inside
 * a call; a listener removed during a dispatch is not called afterwards, one added during a
 * dispatch is called from the next publish on. Nesting is capped at LD_BROKER_MAX_DEPTH.
 *
 * One broker per node, used on the node's loop thread only. */
#ifndef LD_NODE_BROKER_H
#define LD_NODE_BROKER_H

#include <stddef.h>
#include <stdint.h>

#define LD_BROKER_MAX_LISTENERS 1024 /* across all kinds */
#define LD_BROKER_MAX_PROVIDERS 128
#define LD_BROKER_MAX_NAME 64  /* bytes of a provider name, without the NUL */
#define LD_BROKER_MAX_DEPTH 16 /* publish calls nested inside listeners */

typedef struct ld_broker ld_broker_t;

/* Called for every event of the subscribed kind. `payload` is the publisher's, valid only during
 * the call. */
typedef void (*ld_broker_listener_fn)(int kind, const void *payload, void *user_data);

/* Answers a request: reads `request`, fills `response` (both laid out as the name's owner
 * documents; either may be NULL when the name says so) and returns 0 or an LD_ERR_*. */
typedef int (*ld_broker_provider_fn)(const void *request, void *response, void *user_data);

/* Creates an empty broker; NULL when out of memory. */
ld_broker_t *ld_broker_new(void);

/* Frees the broker; listeners and providers are forgotten without being called. Must not be
 * called from inside a listener or provider. NULL is a no-op. */
void ld_broker_free(ld_broker_t *b);

/* Subscribes `fn` to events of `kind` (> 0). Returns a handle (> 0) for ld_broker_unsubscribe,
 * or LD_ERR_INVALID_ARG (kind ≤ 0, NULL fn), LD_ERR_LIMIT (LD_BROKER_MAX_LISTENERS),
 * LD_ERR_NOMEM. The same function may be subscribed several times (it is then called as often). */
int64_t ld_broker_subscribe(ld_broker_t *b, int kind, ld_broker_listener_fn fn, void *user_data);

/* Removes a subscription. LD_ERR_NOT_FOUND for an unknown or already removed handle. */
int ld_broker_unsubscribe(ld_broker_t *b, int64_t handle);

/* Calls every listener of `kind` with `payload`. Returns the number of listeners called, or
 * LD_ERR_LIMIT when nested deeper than LD_BROKER_MAX_DEPTH (nobody is called). */
int ld_broker_publish(ld_broker_t *b, int kind, const void *payload);

/* Number of live listeners of `kind`. */
size_t ld_broker_listener_count(const ld_broker_t *b, int kind);

/* Registers the provider of `name` (copied; 1..LD_BROKER_MAX_NAME bytes). Errors:
 * LD_ERR_EXISTS (the name has a provider: remove it first), LD_ERR_INVALID_ARG, LD_ERR_LIMIT,
 * LD_ERR_NOMEM. */
int ld_broker_set_provider(ld_broker_t *b, const char *name, ld_broker_provider_fn fn,
                           void *user_data);

/* Removes the provider of `name`. LD_ERR_NOT_FOUND when there is none. */
int ld_broker_remove_provider(ld_broker_t *b, const char *name);

/* Asks the provider of `name`; returns what it returns, or LD_ERR_NOT_FOUND when nobody provides
 * `name`, LD_ERR_LIMIT when nested deeper than LD_BROKER_MAX_DEPTH. */
int ld_broker_request(ld_broker_t *b, const char *name, const void *request, void *response);

#endif
