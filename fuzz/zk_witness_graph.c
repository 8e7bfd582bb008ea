/* Fuzz target: the circom witness-graph loader (zk/witness_graph.h). Any bytes: a clear error
 * or a graph whose every operand and wire index is in range, which then evaluates on all-zero
 * inputs without touching memory outside its own. */
#include <stdint.h>
#include <stdlib.h>

#include "zk/witness_graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ld_witness_graph_t *g;
  if (ld_witness_graph_load(&g, data, size) != 0) {
    return 0;
  }
  size_t ni = ld_witness_graph_num_inputs(g), nw = ld_witness_graph_num_wires(g);
  if (ni == 0 || nw == 0 || ni > (1u << 24) || nw > (1u << 24)) {
    abort();
  }
  ld_fr_t *in = calloc(ni, sizeof *in), *wires = calloc(nw, sizeof *wires);
  if (in != NULL && wires != NULL) {
    ld_witness_graph_eval(g, in, wires);
  }
  free(in);
  free(wires);
  ld_witness_graph_free(g);
  return 0;
}
