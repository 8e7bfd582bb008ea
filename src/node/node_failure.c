/* What kept the node from starting (node.h, ld_node_failure). */
#include <stdio.h>

#include "node/node_internal.h"

void ld_node_note_failure(ld_node_t *node, const char *part, int err, const char *what) {
  if (node->failure.part[0] != '\0')
    return;
  snprintf(node->failure.part, sizeof node->failure.part, "%s", part);
  snprintf(node->failure.what, sizeof node->failure.what, "%s", what != NULL ? what : "");
  node->failure.err = err;
}

const ld_node_failure_t *ld_node_failure(const ld_node_t *node) {
  return node->failure.part[0] != '\0' ? &node->failure : NULL;
}
