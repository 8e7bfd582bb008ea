/* The node's filter client (12/WAKU2-FILTER, light-node side) as a shared part of the node.
 *
 * A switch can carry one filter client only (it registers the push protocol), so the node keeps
 * one (node_internal.h filter_client), created on first use and freed with the node. A client
 * created here hands every pushed message to REST's filter cache (when REST runs) and publishes
 * it on the node's broker as LD_EVENT_FILTER_PUSH, so that several parties can listen (the C
 * library's kernel filter calls among them). A client that exists already keeps the push handler
 * its creator installed; whoever replaces the handler of the node's client takes the pushes away
 * from the broker event.
 *
 * Every call on the node's loop thread. */
#ifndef LD_NODE_NODE_FILTER_H
#define LD_NODE_NODE_FILTER_H

#include "node/node.h"
#include "waku/filter/client.h"

/* A message pushed by a filter service to the node's filter client. Payload: ld_filter_push_t
 * (waku/filter/client.h), valid only during the listener call. Published on ld_node_broker. */
#define LD_EVENT_FILTER_PUSH 100

/* The node's filter client, created on first use on the node's switch (deadlines of
 * waku/filter/client.h) with the push handler described above. Returns NULL and sets *err (may
 * be NULL): LD_ERR_STATE (node not started or stopping), LD_ERR_EXISTS (a filter client that is
 * not the node's owns the push protocol on this switch), LD_ERR_NOMEM. */
ld_filter_client_t *ld_node_filter_client(ld_node_t *node, int *err);

#endif
