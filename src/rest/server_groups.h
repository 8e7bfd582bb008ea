/* Route groups added to and removed from a running REST server: the Messaging API paths come
 * with the messaging client (ld_messaging_rest_attach) and go with it, while the server keeps
 * running. Until a group is installed, and again after it is removed, requests below its first
 * path segments are answered 404 with the group's explanation (ld_rest_server_set_unavailable).
 *
 * Threading: the server's loop thread only, as everything of rest/server.h. */
#ifndef LD_REST_SERVER_GROUPS_H
#define LD_REST_SERVER_GROUPS_H

#include <stddef.h>

#include "rest/server.h"

/* Answer of the Messaging API paths when no messaging client is attached (logos-delivery's text
 * for a kernel-only node). */
#define LD_REST_MESSAGING_UNAVAILABLE                                                              \
  "/messaging endpoints are not available. Please check your configuration: "                      \
  "--entry-layer=messaging or --entry-layer=channels"

/* The first path segments of the Messaging API: /messaging/v1/… (logos-delivery) and the Message
 * Storage paths of the Messaging API draft (/message, /messages, /subscribe, /unsubscribe,
 * /subscriptions). */
#define LD_REST_MESSAGING_N_GROUPS 6
extern const char *const LD_REST_MESSAGING_GROUPS[LD_REST_MESSAGING_N_GROUPS];

/* One route of a group. */
typedef struct ld_rest_route_spec {
  const char *method;
  const char *pattern; /* as ld_route_add */
  ld_rest_handler_fn fn;
} ld_rest_route_spec_t;

/* A group: its routes and the first path segments it owns. Borrowed by the calls below. */
typedef struct ld_rest_group {
  const ld_rest_route_spec_t *routes;
  size_t n_routes;
  const char *const *segments;
  size_t n_segments;
  const char *unavailable; /* 404 text while the group is not installed */
} ld_rest_group_t;

/* Adds every route of `g` with `user_data`, all or none, and lifts the 404 of its segments.
 * Errors: those of ld_rest_server_add_route (LD_ERR_EXISTS when the group is installed already);
 * on failure the routes added so far are removed again. */
int ld_rest_server_add_group(ld_rest_server_t *srv, const ld_rest_group_t *g, void *user_data);

/* Removes the routes of `g` (missing ones are skipped) and answers its segments with
 * g->unavailable again. Safe from inside one of the group's handlers. */
void ld_rest_server_remove_group(ld_rest_server_t *srv, const ld_rest_group_t *g);

/* Marks the Messaging API segments unavailable with LD_REST_MESSAGING_UNAVAILABLE. Called by the
 * server at start; returns 0 or the error of ld_rest_server_set_unavailable. */
int ld_rest_install_messaging_unavailable(ld_rest_server_t *srv);

#endif
