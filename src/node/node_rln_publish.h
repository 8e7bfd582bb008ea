/* The publish queue (node_rln_publish.c): its restamping bound, and its statistics and hold for
 * tests and diagnostics. */
#ifndef LD_NODE_NODE_RLN_PUBLISH_H
#define LD_NODE_NODE_RLN_PUBLISH_H

#include <stdbool.h>
#include <stdint.h>

#include "node/node.h"

/* Our message waits in the queue; when its proof starts and its timestamp is older than this, or
 * its RLN epoch ended, it is stamped with the current time (and, in a new epoch, claims a message
 * id of that epoch; in its own it keeps the one it claimed). A message that enters the queue
 * older than this is stamped at once. Well under the validators' 20 s clock gap
 * (LD_RLN_MAX_CLOCK_GAP_SEC), with room for the proof, the hops and peers' clocks. */
#define LD_NODE_RLN_RESTAMP_AFTER_MS 5000

/* How the publish queue's proofs were made: without a proving context (before the context
 * exists), or through it, reusing the membership wires' sums (hits) or (re)making them (misses:
 * a proof with a root or path the context was not prepared for); the context's table slices
 * built and whether its tables are complete; our messages handed to relay after their proof
 * (published) and stamped again as their proof started (restamped); the prepares that brought
 * the context's sums to our new Merkle path before a proof needed it (at start, after a new
 * root). Zero without a queue. */
typedef struct ld_node_rln_proving_stats {
  uint64_t plain, ctx_hits, ctx_misses, build_slices;
  bool ctx_complete;
  uint64_t published, restamped;
  uint64_t prepares;
} ld_node_rln_proving_stats_t;
void ld_node_rln_proving_stats(const ld_node_t *node, ld_node_rln_proving_stats_t *out);

/* Holds the queue (true): no proof starts until it is let go (false), as when the prover is busy
 * with a long queue; messages are still checked and queued. For tests and diagnostics. */
void ld_node_rln_publish_hold(ld_node_t *node, bool hold);

#endif
