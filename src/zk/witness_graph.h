/* The circom witness graph (circom-witnesscalc's graph.bin, which zerokit >= 0.7 ships for the RLN
 * circuits; layout in proto/witness_graph.proto): a straight-line program over Fr that turns a
 * circuit's input signals into its full witness, every wire in the order of the circuit's
 * constraint system (wire 0 is the constant 1), ready for the Groth16 prover.
 *
 * Supported node operations: inputs, constants, neg, id, mul, div (by zero gives 0, as
 * circom-witnesscalc does), add, sub, eq, neq, land, lor, shr, band and the ternary condition —
 * what circom emits for arithmetic circuits such as RLN-v2 (which uses mul, add, sub, shr and
 * band). Graphs with other operations are refused at load (LD_ERR_UNSUPPORTED). The field
 * operations are constant-time; shr, band and the comparisons branch on their operands (in
 * RLN-v2 they only split the message id into bits).
 *
 * A loaded graph is immutable: evaluate it from several threads at once freely. */
#ifndef LD_ZK_WITNESS_GRAPH_H
#define LD_ZK_WITNESS_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "zk/field.h"

typedef struct ld_witness_graph ld_witness_graph_t;

/* Parses a serialised graph. Every operand must name an earlier node, every input index must lie
 * within the inputs the metadata names, every wire must name a node. LD_ERR_MALFORMED for bytes
 * that are not such a graph (wrong magic, truncation, bad protobuf, dangling indices, a constant
 * longer than 32 bytes), LD_ERR_UNSUPPORTED for an operation listed as unsupported above,
 * LD_ERR_TOO_LARGE past 2^24 nodes, LD_ERR_NOMEM. Free with ld_witness_graph_free. */
int ld_witness_graph_load(ld_witness_graph_t **out, const uint8_t *data, size_t len);
void ld_witness_graph_free(ld_witness_graph_t *g);

/* Number of wires the evaluation writes (the circuit's witness length). */
size_t ld_witness_graph_num_wires(const ld_witness_graph_t *g);
/* Length of the input vector (slot 0 holds the constant 1). */
size_t ld_witness_graph_num_inputs(const ld_witness_graph_t *g);
/* Where the named input signal (an array of `len` elements) sits in the input vector: 0, or
 * LD_ERR_NOT_FOUND. */
int ld_witness_graph_input(const ld_witness_graph_t *g, const char *name, size_t *offset,
                           size_t *len);

/* Evaluates the graph: `inputs` has ld_witness_graph_num_inputs elements (inputs[0] is set to 1
 * whatever it holds), `wires` receives ld_witness_graph_num_wires elements. 0 or LD_ERR_NOMEM
 * (the evaluation holds one element per node, about 32 bytes each). */
int ld_witness_graph_eval(const ld_witness_graph_t *g, const ld_fr_t *inputs, ld_fr_t *wires);

/* Which wires depend on the inputs flagged in `input_varies` (ld_witness_graph_num_inputs
 * flags, non-zero = may vary): wire_varies (ld_witness_graph_num_wires flags) receives 1 for
 * every wire whose node reaches a flagged input through its operands, 0 for the wires that
 * are a function of the other inputs and constants alone. 0 or LD_ERR_NOMEM. */
int ld_witness_graph_dependents(const ld_witness_graph_t *g, const uint8_t *input_varies,
                                uint8_t *wire_varies);

#endif
