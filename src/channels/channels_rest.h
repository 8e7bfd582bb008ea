/* Reliable channels on the node's REST server: fills the REST layer's ops table
 * (rest/channels_routes.h) with the manager's calls and feeds its event cache from the node's
 * broker (LD_EVENT_CHANNEL_*). The paths and answers are those of rest/channels_routes.h.
 *
 * Threading: the node's loop thread only. */
#ifndef LD_CHANNELS_CHANNELS_REST_H
#define LD_CHANNELS_CHANNELS_REST_H

#include "channels/channels.h"
#include "messaging/messaging.h"

/* The broker provider under which an attached manager's REST state is registered. Request: NULL.
 * Response: void * (the state). For this module only. */
#define LD_PROVIDE_CHANNELS_REST "channels.rest"

/* Installs /channels/v1/… on the REST server of `m`'s node for manager `c` (which must stay
 * alive until detach) and starts caching its events. Returns 0, also when the node runs no REST
 * server (nothing installed). Errors (nothing stays installed): LD_ERR_EXISTS (a manager is
 * attached to this node already), LD_ERR_LIMIT, LD_ERR_NOMEM. */
int ld_channels_rest_attach(ld_channels_t *c, ld_messaging_t *m);

/* Removes what attach installed (the paths answer 404 again). No-op when `c` is not attached.
 * Call before ld_channels_free(c). */
void ld_channels_rest_detach(ld_channels_t *c, ld_messaging_t *m);

#endif
