/* ld_zkverify: the C side of the RLN-v2 interop test. Reads one proof per line on stdin,
 *
 *   <proof: 256 hex digits> <values: 320 hex digits, zerokit's root|ext_nullifier|x|y|nullifier>
 *
 * verifies it with the compiled-in RLN-v2 key and prints one line per input: "OK", or "ERR NAME"
 * with the error's name (BAD_PROOF, BAD_POINT, OVERFLOW, MALFORMED, ...). Exits 0 at the end of
 * stdin, 2 on a line that is not two hex fields of those lengths. */
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/hex.h"
#include "zk/rln.h"

static int parse_line(char *line, uint8_t proof[128], uint8_t values[160]) {
  char *sp = strchr(line, ' ');
  if (sp == NULL) {
    return -1;
  }
  *sp = '\0';
  char *second = sp + 1;
  second[strcspn(second, "\r\n")] = '\0';
  size_t n1 = 0, n2 = 0;
  if (strlen(line) != 256 || strlen(second) != 320 ||
      ld_hex_decode(line, 256, proof, 128, &n1) != 0 ||
      ld_hex_decode(second, 320, values, 160, &n2) != 0) {
    return -1;
  }
  return n1 == 128 && n2 == 160 ? 0 : -1;
}

int main(void) {
  ld_rln_verifier_t *v;
  if (ld_rln_verifier_new(&v) != 0) {
    fprintf(stderr, "cannot build the RLN verifier\n");
    return 1;
  }
  char line[1024];
  int rc = 0;
  while (fgets(line, sizeof line, stdin) != NULL) {
    uint8_t proof[128], raw[160];
    if (parse_line(line, proof, raw) != 0) {
      fprintf(stderr, "bad input line\n");
      rc = 2;
      break;
    }
    ld_rln_proof_values_t values;
    int err = ld_rln_proof_values_decode(&values, raw);
    if (err == 0) {
      err = ld_rln_verify(v, proof, &values);
    }
    if (err == 0) {
      printf("OK\n");
    } else {
      printf("ERR %s\n", ld_errname(err));
    }
    fflush(stdout);
  }
  ld_rln_verifier_free(v);
  return rc;
}
