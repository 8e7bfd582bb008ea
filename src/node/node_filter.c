#include "node/node_filter.h"

#include <string.h>

#include "base/error.h"
#include "node/node_internal.h"

static void on_push(const ld_filter_push_t *push, void *user_data) {
  ld_node_t *node = user_data;
  if (node->state != NODE_STARTED)
    return;
  if (node->rest != NULL)
    ld_rest_server_filter_push(node->rest, push->pubsub_topic, push->msg);
  ld_broker_publish(node->broker, LD_EVENT_FILTER_PUSH, push);
}

/* Protocol IDs looked at to find out whether the push protocol is taken (a switch holds 256). */
#define PROTOCOLS_MAX 256

static bool push_protocol_taken(const ld_node_t *node) {
  const char *protocols[PROTOCOLS_MAX];
  size_t n = ld_switch_protocols(node->sw, protocols, PROTOCOLS_MAX);
  for (size_t i = 0; i < n && i < PROTOCOLS_MAX; i++)
    if (strcmp(protocols[i], LD_FILTER_PUSH_PROTOCOL) == 0)
      return true;
  return false;
}

ld_filter_client_t *ld_node_filter_client(ld_node_t *node, int *err) {
  int rc = node->state == NODE_STARTED ? 0 : LD_ERR_STATE;
  if (rc == 0 && node->filter_client == NULL) {
    if (push_protocol_taken(node))
      rc = LD_ERR_EXISTS;
    else if ((node->filter_client = ld_filter_client_new(node->sw, NULL)) == NULL)
      rc = LD_ERR_NOMEM;
    else
      ld_filter_client_set_push_handler(node->filter_client, on_push, node);
  }
  if (rc != 0 && err != NULL)
    *err = rc;
  return rc == 0 ? node->filter_client : NULL;
}
