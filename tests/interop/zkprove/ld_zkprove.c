/* ld_zkprove: the C prover for the RLN-v2 interop test. Builds the prover from
 * $LD_RLN_FIXTURES/rln_final.zkey and graph.bin, then reads one request per line on stdin:
 *
 *   <witness|prove> <secret> <limit> <message_id> <index> <path> <x> <external_nullifier>
 *
 * field elements as 64 hex digits of their 32 little-endian bytes, <path> the 20 siblings
 * concatenated, <limit>, <message_id> and <index> (the leaf index, whose bits are the path's
 * directions) decimal. "witness" prints the circuit's full witness, every wire as 64 hex digits,
 * on one line; "prove" prints "<proof: 256 hex> <values: 320 hex, zerokit's layout>", or
 * "ERR NAME". Exits 0 at the end of stdin, 2 on a line it cannot parse. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hex.h"
#include "zk/rln_prover.h"

#define MAX_LINE (64 * 1024)

static int parse_fr(const char *hex, ld_fr_t *out) {
  uint8_t b[32];
  size_t n = 0;
  if (strlen(hex) != 64 || ld_hex_decode(hex, 64, b, 32, &n) != 0 || n != 32) {
    return -1;
  }
  return ld_fr_from_bytes(out, b) == 0 ? 0 : -1;
}

static int parse_request(char *line, char **cmd, ld_rln_witness_t *w) {
  char *tok[8];
  int n = 0;
  for (char *t = strtok(line, " \r\n"); t != NULL && n < 8; t = strtok(NULL, " \r\n")) {
    tok[n++] = t;
  }
  if (n != 8 || strlen(tok[5]) != 64 * LD_RLN_TREE_DEPTH) {
    return -1;
  }
  memset(w, 0, sizeof *w);
  *cmd = tok[0];
  w->user_message_limit = strtoull(tok[2], NULL, 10);
  w->message_id = strtoull(tok[3], NULL, 10);
  unsigned long long index = strtoull(tok[4], NULL, 10);
  w->merkle.depth = LD_RLN_TREE_DEPTH;
  for (int l = 0; l < LD_RLN_TREE_DEPTH; l++) {
    char h[65];
    memcpy(h, tok[5] + 64 * l, 64);
    h[64] = '\0';
    if (parse_fr(h, &w->merkle.path[l]) != 0) {
      return -1;
    }
    w->merkle.index_bits[l] = (uint8_t)((index >> l) & 1);
  }
  if (parse_fr(tok[1], &w->identity_secret) != 0 || parse_fr(tok[6], &w->x) != 0 ||
      parse_fr(tok[7], &w->external_nullifier) != 0) {
    return -1;
  }
  return 0;
}

static void print_hex(const uint8_t *b, size_t n) {
  for (size_t i = 0; i < n; i++) {
    printf("%02x", b[i]);
  }
}

static void answer(const ld_rln_prover_t *p, const char *cmd, const ld_rln_witness_t *w) {
  int err;
  if (strcmp(cmd, "witness") == 0) {
    size_t n = ld_rln_prover_num_wires(p);
    ld_fr_t *wires = malloc(n * sizeof *wires);
    err = wires == NULL ? LD_ERR_NOMEM : ld_rln_witness_compute(p, w, wires);
    for (size_t i = 0; err == 0 && i < n; i++) {
      uint8_t b[32];
      ld_fr_to_bytes(b, &wires[i]);
      print_hex(b, 32);
    }
    free(wires);
  } else {
    uint8_t proof[LD_RLN_PROOF_BYTES], values[LD_RLN_PROOF_VALUES_BYTES];
    ld_rln_proof_values_t v;
    err = ld_rln_prove(p, w, proof, &v);
    if (err == 0) {
      ld_rln_proof_values_encode(values, &v);
      print_hex(proof, sizeof proof);
      printf(" ");
      print_hex(values, sizeof values);
    }
  }
  if (err != 0) {
    printf("ERR %s", ld_errname(err));
  }
  printf("\n");
  fflush(stdout);
}

int main(void) {
  const char *dir = getenv("LD_RLN_FIXTURES");
  if (dir == NULL) {
    fprintf(stderr, "LD_RLN_FIXTURES is not set\n");
    return 1;
  }
  char zkey[4096], graph[4096];
  snprintf(zkey, sizeof zkey, "%s/rln_final.zkey", dir);
  snprintf(graph, sizeof graph, "%s/graph.bin", dir);
  ld_rln_prover_t *p;
  int err = ld_rln_prover_new_from_files(&p, zkey, graph);
  if (err != 0) {
    fprintf(stderr, "cannot build the RLN prover: %s\n", ld_errname(err));
    return 1;
  }
  static char line[MAX_LINE];
  int rc = 0;
  while (fgets(line, sizeof line, stdin) != NULL) {
    char *cmd;
    ld_rln_witness_t w;
    if (parse_request(line, &cmd, &w) != 0 ||
        (strcmp(cmd, "witness") != 0 && strcmp(cmd, "prove") != 0)) {
      fprintf(stderr, "bad input line\n");
      rc = 2;
      break;
    }
    answer(p, cmd, &w);
  }
  ld_rln_prover_free(p);
  return rc;
}
