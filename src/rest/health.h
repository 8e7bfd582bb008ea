/* GET /health with the Messaging API's connection status: a messaging client attached to the
 * server adds "connectionStatus" to nwaku's HealthReport (rest/messaging_json.h). */
#ifndef LD_REST_HEALTH_H
#define LD_REST_HEALTH_H

#include "rest/server.h"

typedef struct ld_rest_health_source {
  /* "Disconnected", "PartiallyConnected" or "Connected" (a static string), or NULL to leave the
   * field out. Called on the loop thread while /health is answered. Required. */
  const char *(*connection_status)(void *user_data);
  void *user_data;
} ld_rest_health_source_t;

/* Makes /health report `src`'s connection status (borrowed: it must stay valid until the next
 * call or the server's close); NULL goes back to nwaku's report without it. Loop thread only.
 * Errors: LD_ERR_INVALID_ARG (no connection_status), those of ld_rest_server_add_route. */
int ld_rest_server_set_health_source(ld_rest_server_t *srv, const ld_rest_health_source_t *src);

#endif
