#include "rest/server_groups.h"

#include "base/error.h"

const char *const LD_REST_MESSAGING_GROUPS[LD_REST_MESSAGING_N_GROUPS] = {
    "messaging", "message", "messages", "subscribe", "unsubscribe", "subscriptions",
};

static int mark_unavailable(ld_rest_server_t *srv, const char *const *segments, size_t n,
                            const char *text) {
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++)
    rc = ld_rest_server_set_unavailable(srv, segments[i], text);
  return rc;
}

static void remove_routes(ld_rest_server_t *srv, const ld_rest_route_spec_t *routes, size_t n) {
  for (size_t i = 0; i < n; i++)
    ld_rest_server_remove_route(srv, routes[i].method, routes[i].pattern);
}

int ld_rest_server_add_group(ld_rest_server_t *srv, const ld_rest_group_t *g, void *user_data) {
  int rc = 0;
  size_t added = 0;
  for (; added < g->n_routes && rc == 0; added++) {
    const ld_rest_route_spec_t *r = &g->routes[added];
    rc = ld_rest_server_add_route(srv, r->method, r->pattern, r->fn, user_data);
  }
  if (rc != 0) {
    remove_routes(srv, g->routes, added - 1);
    return rc;
  }
  mark_unavailable(srv, g->segments, g->n_segments, NULL);
  return 0;
}

void ld_rest_server_remove_group(ld_rest_server_t *srv, const ld_rest_group_t *g) {
  remove_routes(srv, g->routes, g->n_routes);
  mark_unavailable(srv, g->segments, g->n_segments, g->unavailable);
}

int ld_rest_install_messaging_unavailable(ld_rest_server_t *srv) {
  return mark_unavailable(srv, LD_REST_MESSAGING_GROUPS, LD_REST_MESSAGING_N_GROUPS,
                          LD_REST_MESSAGING_UNAVAILABLE);
}
