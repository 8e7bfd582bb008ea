/* The RLN-v2 circuit's files for the zk tests. */
#include "rln_circuit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rln_circuit_t rln_circuit;

/* The whole file `name` of the fixtures folder, or NULL. */
static uint8_t *read_fixture(const char *name, size_t *len) {
  const char *dir = getenv("LD_RLN_FIXTURES");
  if (dir == NULL) {
    fprintf(stderr, "LD_RLN_FIXTURES is not set\n");
    return NULL;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "%s: cannot be read\n", path);
    return NULL;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = n > 0 ? malloc((size_t)n) : NULL;
  if (b == NULL || fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  *len = b != NULL ? (size_t)n : 0;
  return b;
}

int rln_circuit_setup(void **state) {
  (void)state;
  rln_circuit_t *c = &rln_circuit;
  memset(c, 0, sizeof *c);
  c->zkey = read_fixture("rln_final.zkey", &c->zkey_len);
  c->graph = read_fixture("graph.bin", &c->graph_len);
  if (c->zkey == NULL || c->graph == NULL)
    return -1;
  if (ld_rln_prover_new(&c->prover, c->zkey, c->zkey_len, c->graph, c->graph_len) != 0)
    return -1;
  return ld_rln_verifier_new(&c->verifier);
}

int rln_circuit_teardown(void **state) {
  (void)state;
  rln_circuit_t *c = &rln_circuit;
  ld_rln_prover_free(c->prover);
  ld_rln_verifier_free(c->verifier);
  free(c->zkey);
  free(c->graph);
  memset(c, 0, sizeof *c);
  return 0;
}
