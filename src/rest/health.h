/* GET /health: nwaku's HealthReport
 *   {"nodeHealth": <status>, "connectionStatus"?: …, "protocolsHealth": [{<name>: <status>,
 *    "desc"?: <why not ready>}, …]}
 *
 * nodeHealth is the node's overall state set with ld_rest_server_set_health (INITIALIZING until
 * the node has started, READY while it runs, SHUTTING_DOWN once it stops), as nwaku's
 * setOverallHealth; it does not depend on the protocols. "connectionStatus" (logos-delivery) is
 * there while a Messaging API client is attached (ld_rest_server_set_health_source).
 *
 * protocolsHealth lists nwaku's protocols in nwaku's order, each by nwaku's health monitor rules
 * (ld_rest_protocols_health). Relay's status comes from the relay ops (ld_rest_context_t.relay),
 * the rest from ld_rest_context_t.protocols:
 *   Relay                    not mounted → NOT_MOUNTED; no connected relay peer → NOT_READY
 *                            "No connected peers"; else READY
 *   Rln Relay                NOT_MOUNTED (not implemented)
 *   Lightpush,               READY when relay is READY, else NOT_READY "Node has no relay peers
 *   Legacy Lightpush           to fullfill push requests" (nwaku's spelling)
 *   Filter                   READY when relay is READY, else NOT_READY "Relay is not ready,
 *                              filter will not be able to sort out messages"
 *   Store                    READY when mounted
 *   Legacy Store             NOT_MOUNTED (store v2 is not served)
 *   Peer Exchange            READY when mounted
 *   Rendezvous, Mix          NOT_MOUNTED (not implemented)
 *   Lightpush Client,        READY when a service peer of that lightpush version can be selected
 *   Legacy Lightpush Client    or the node serves it itself with relay READY, else NOT_READY "No
 *                              Lightpush service peer available yet"
 *   Store Client             READY when a store service peer can be selected or the node serves
 *                              store, else NOT_READY "No Store service peer available yet,
 *                              neither Store service set up for the node"
 *   Legacy Store Client      NOT_MOUNTED (no store v2 client)
 *   Filter Client            READY when a filter service peer can be selected, else NOT_READY
 *                              "No Filter service peer available yet"
 * and NOT_MOUNTED for any service or client the node does not run. A Messaging API client (an
 * attached health source) runs the lightpush and store clients in both of its modes, so they
 * count as mounted while it is attached; its Edge-mode filter client is the node's and comes
 * through ld_rest_context_t.protocols. */
#ifndef LD_REST_HEALTH_H
#define LD_REST_HEALTH_H

#include "rest/server.h"

/* Entries of protocolsHealth. */
#define LD_REST_HEALTH_N_PROTOCOLS 15

/* One entry of protocolsHealth. */
typedef struct ld_rest_protocol_health {
  const char *name; /* nwaku's protocol name ("Relay", "Lightpush Client", …); static */
  ld_rest_health_t health;
  const char *desc; /* why it is not ready (static), or NULL */
} ld_rest_protocol_health_t;

/* The rules above: writes the LD_REST_HEALTH_N_PROTOCOLS entries in nwaku's order to `out`, for
 * relay's status `relay` (LD_REST_HEALTH_NOT_MOUNTED, _NOT_READY meaning no connected relay peer,
 * or _READY) and what the node runs (`p`, not NULL). Pure; any thread. */
void ld_rest_protocols_health(ld_rest_health_t relay, const ld_rest_protocols_t *p,
                              ld_rest_protocol_health_t out[LD_REST_HEALTH_N_PROTOCOLS]);

typedef struct ld_rest_health_source {
  /* "Disconnected", "PartiallyConnected" or "Connected" (a static string), or NULL to leave the
   * field out. Called on the loop thread while /health is answered. Required. */
  const char *(*connection_status)(void *user_data);
  void *user_data;
} ld_rest_health_source_t;

/* Makes /health report `src`'s connection status and count the Messaging API's lightpush and
 * store clients as mounted (`src` borrowed: it must stay valid until the next call or the
 * server's close); NULL goes back to nwaku's report without them. Loop thread only. Errors:
 * LD_ERR_INVALID_ARG (no connection_status), those of ld_rest_server_add_route. */
int ld_rest_server_set_health_source(ld_rest_server_t *srv, const ld_rest_health_source_t *src);

#endif
