/* ld_zkprove: the C prover for the RLN-v2 interop test. Builds the prover from
 * $LD_RLN_FIXTURES/rln_final.zkey and graph.bin, then reads one request per line on stdin:
 *
 *   <witness|prove> <secret> <limit> <message_id> <index> <path> <x> <external_nullifier>
 *
 * field elements as 64 hex digits of their 32 little-endian bytes, <path> the 20 siblings
 * concatenated, <limit>, <message_id> and <index> (the leaf index, whose bits are the path's
 * directions) decimal. "witness" prints the circuit's full witness, every wire as 64 hex digits,
 * on one line; "prove" prints "<proof: 256 hex> <values: 320 hex, zerokit's layout>", or
 * "ERR NAME". "prove-ctx" proves the same way through one proving context kept for the whole run
 * (rln_prover.h: its cache of a member's sums reused when the member's wires are unchanged) and
 * prints "<proof> <values> <hits> <misses>", the context's counts after the proof. Two more
 * requests exercise RLN-relay (src/waku/rln/):
 *
 *   message <secret> <limit> <message_id> <index> <path> <payload hex or -> <content topic>
 *           <timestamp ns> <epoch sec>
 *     prints the encoded RateLimitProof our node attaches to that message (hex);
 *   validate <root> <epoch sec> <now ns> <payload hex or -> <content topic> <timestamp ns>
 *            <rate limit proof hex>
 *     runs the relay validator (one for the whole run, so that its nullifier log carries over;
 *     <root> joins its window) and prints "<VALID|INVALID|SPAM> <reason>".
 *
 * Exits 0 at the end of stdin, 2 on a line it cannot parse. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hex.h"
#include "waku/rln/publish.h"
#include "waku/rln/validator.h"
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

#define MAX_TOKENS 12

static int tokenize(char *line, char **tok) {
  int n = 0;
  for (char *t = strtok(line, " \r\n"); t != NULL && n < MAX_TOKENS; t = strtok(NULL, " \r\n")) {
    tok[n++] = t;
  }
  return n;
}

/* tok[1..7]: secret limit message_id index path x external_nullifier (x and the external
 * nullifier absent for "message"). */
static int parse_witness(char **tok, int with_values, ld_rln_witness_t *w) {
  if (strlen(tok[5]) != 64 * LD_RLN_TREE_DEPTH) {
    return -1;
  }
  memset(w, 0, sizeof *w);
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
  if (parse_fr(tok[1], &w->identity_secret) != 0) {
    return -1;
  }
  if (with_values &&
      (parse_fr(tok[6], &w->x) != 0 || parse_fr(tok[7], &w->external_nullifier) != 0)) {
    return -1;
  }
  return 0;
}

/* A message from "<payload hex or -> <content topic> <timestamp>"; the payload in buf. */
static int parse_message(char **tok, uint8_t *buf, size_t cap, ld_waku_message_t *m) {
  ld_waku_message_init(m);
  size_t n = 0;
  if (strcmp(tok[0], "-") != 0 && ld_hex_decode(tok[0], strlen(tok[0]), buf, cap, &n) != 0) {
    return -1;
  }
  m->payload = buf;
  m->payload_len = n;
  m->content_topic = tok[1];
  m->content_topic_len = strlen(tok[1]);
  m->timestamp = strtoll(tok[2], NULL, 10);
  return 0;
}

static void print_hex(const uint8_t *b, size_t n) {
  for (size_t i = 0; i < n; i++) {
    printf("%02x", b[i]);
  }
}

static ld_rln_proving_ctx_t *g_ctx;

static void answer(const ld_rln_prover_t *p, const char *cmd, const ld_rln_witness_t *w) {
  int err;
  bool with_ctx = strcmp(cmd, "prove-ctx") == 0;
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
    err = 0;
    if (with_ctx && g_ctx == NULL) {
      err = ld_rln_proving_ctx_new(&g_ctx, p);
    }
    if (err == 0) {
      err = with_ctx ? ld_rln_prove_ctx(g_ctx, w, proof, &v) : ld_rln_prove(p, w, proof, &v);
    }
    if (err == 0) {
      ld_rln_proof_values_encode(values, &v);
      print_hex(proof, sizeof proof);
      printf(" ");
      print_hex(values, sizeof values);
    }
    if (err == 0 && with_ctx) {
      uint64_t hits, misses;
      ld_rln_proving_ctx_stats(g_ctx, NULL, &hits, &misses);
      printf(" %llu %llu", (unsigned long long)hits, (unsigned long long)misses);
    }
  }
  if (err != 0) {
    printf("ERR %s", ld_errname(err));
  }
  printf("\n");
  fflush(stdout);
}

static void answer_message(const ld_rln_prover_t *p, char **tok) {
  ld_rln_witness_t w;
  ld_rln_member_t member;
  static uint8_t payload[MAX_LINE / 2];
  ld_waku_message_t m;
  if (parse_witness(tok, 0, &w) != 0 || parse_message(tok + 6, payload, sizeof payload, &m) != 0) {
    printf("ERR MALFORMED\n");
    return;
  }
  member.identity_secret = w.identity_secret;
  member.user_message_limit = w.user_message_limit;
  member.merkle = w.merkle;
  uint8_t out[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED];
  size_t n = 0;
  int err =
      ld_rln_attach_proof(p, &member, &m, strtoull(tok[9], NULL, 10), w.message_id, NULL, out, &n);
  if (err != 0) {
    printf("ERR %s\n", ld_errname(err));
  } else {
    print_hex(out, n);
    printf("\n");
  }
  fflush(stdout);
}

static ld_rln_verifier_t *g_verifier;
static ld_rln_validator_t *g_validator;

static void answer_validate(char **tok) {
  static uint8_t payload[MAX_LINE / 2], proof[MAX_LINE / 2];
  ld_fr_t root;
  ld_waku_message_t m;
  size_t n = 0;
  if (parse_fr(tok[1], &root) != 0 || parse_message(tok + 4, payload, sizeof payload, &m) != 0 ||
      ld_hex_decode(tok[7], strlen(tok[7]), proof, sizeof proof, &n) != 0) {
    printf("ERR MALFORMED\n");
    return;
  }
  if (g_validator == NULL &&
      (ld_rln_verifier_new(&g_verifier) != 0 ||
       ld_rln_validator_new(&g_validator, g_verifier, strtoull(tok[2], NULL, 10)) != 0)) {
    printf("ERR NOMEM\n");
    return;
  }
  ld_rln_validator_add_root(g_validator, &root);
  m.proof = proof;
  m.proof_len = n;
  ld_rln_reason_t reason;
  ld_rln_verdict_t v = ld_rln_validator_check(g_validator, &m, strtoll(tok[3], NULL, 10), &reason);
  printf("%s %s\n",
         v == LD_RLN_VALID  ? "VALID"
         : v == LD_RLN_SPAM ? "SPAM"
                            : "INVALID",
         ld_rln_reason_name(reason));
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
    char *tok[MAX_TOKENS];
    int n = tokenize(line, tok);
    ld_rln_witness_t w;
    if (n == 8 &&
        (strcmp(tok[0], "witness") == 0 || strcmp(tok[0], "prove") == 0 ||
         strcmp(tok[0], "prove-ctx") == 0) &&
        parse_witness(tok, 1, &w) == 0) {
      answer(p, tok[0], &w);
    } else if (n == 10 && strcmp(tok[0], "message") == 0) {
      answer_message(p, tok);
    } else if (n == 8 && strcmp(tok[0], "validate") == 0) {
      answer_validate(tok);
    } else {
      fprintf(stderr, "bad input line\n");
      rc = 2;
      break;
    }
  }
  ld_rln_proving_ctx_free(g_ctx);
  ld_rln_prover_free(p);
  ld_rln_validator_free(g_validator);
  ld_rln_verifier_free(g_verifier);
  return rc;
}
