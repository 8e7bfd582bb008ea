/* The publish queue's proving statistics (node_rln_publish.c), for tests and diagnostics. */
#ifndef LD_NODE_NODE_RLN_PUBLISH_H
#define LD_NODE_NODE_RLN_PUBLISH_H

#include <stdbool.h>
#include <stdint.h>

#include "node/node.h"

/* How the publish queue's proofs were made: without a proving context (before the first
 * publish's context exists), or through it, reusing the membership wires' sums (hits) or
 * (re)making them (misses: the first proof, a new root or path); the context's table slices
 * built and whether its tables are complete. Zero without a queue. */
typedef struct ld_node_rln_proving_stats {
  uint64_t plain, ctx_hits, ctx_misses, build_slices;
  bool ctx_complete;
} ld_node_rln_proving_stats_t;
void ld_node_rln_proving_stats(const ld_node_t *node, ld_node_rln_proving_stats_t *out);

#endif
