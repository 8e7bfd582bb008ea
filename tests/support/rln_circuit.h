/* The RLN-v2 circuit's files (rln_final.zkey and graph.bin from the folder LD_RLN_FIXTURES
 * names) with a prover and a verifier made from them, for the zk tests: one per test program,
 * opened by the group set-up and closed by its tear-down. */
#ifndef LD_TEST_RLN_CIRCUIT_H
#define LD_TEST_RLN_CIRCUIT_H

#include <stddef.h>
#include <stdint.h>

#include "zk/rln.h"
#include "zk/rln_prover.h"

typedef struct rln_circuit {
  uint8_t *zkey, *graph; /* the files' bytes */
  size_t zkey_len, graph_len;
  ld_rln_prover_t *prover;
  ld_rln_verifier_t *verifier;
} rln_circuit_t;

/* The test program's circuit, valid between rln_circuit_setup and rln_circuit_teardown. */
extern rln_circuit_t rln_circuit;

/* cmocka group set-up: reads the files and makes the prover and verifier; -1 (with a line on
 * stderr) when the folder is not named or a file cannot be read or made into a prover. */
int rln_circuit_setup(void **state);
/* cmocka group tear-down: frees what the set-up made. */
int rln_circuit_teardown(void **state);

#endif
