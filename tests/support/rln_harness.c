/* A static RLN group for node tests. */
#include "rln_harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <cmocka.h>

void rh_write_fr_hex(FILE *f, const ld_fr_t *x) {
  uint8_t le[32];
  ld_fr_to_bytes(le, x);
  fputs("\"0x", f);
  for (int i = 31; i >= 0; i--)
    fprintf(f, "%02x", le[i]);
  fputc('"', f);
}

void rh_random_secret(ld_fr_t *out) {
  uint8_t b[32];
  assert_int_equal(getrandom(b, sizeof b, 0), (ssize_t)sizeof b);
  ld_fr_from_bytes_reduce(out, b);
}

void rh_group_make(rh_group_t *g, size_t members, uint64_t limit, uint64_t ours) {
  memset(g, 0, sizeof *g);
  assert_true(ours < members);
  g->members = members;
  g->limit = limit;
  g->ours = ours;
  snprintf(g->dir, sizeof g->dir, "/tmp/ld-rln-XXXXXX");
  assert_non_null(mkdtemp(g->dir));
  snprintf(g->group_path, sizeof g->group_path, "%s/group.json", g->dir);
  snprintf(g->cred_path, sizeof g->cred_path, "%s/cred.json", g->dir);
  g->secrets = calloc(members, sizeof *g->secrets);
  assert_non_null(g->secrets);
  assert_int_equal(ld_merkle_new(&g->tree, LD_MERKLE_RLN_DEPTH), 0);
  FILE *f = fopen(g->group_path, "w");
  assert_non_null(f);
  fputc('[', f);
  for (size_t i = 0; i < members; i++) {
    rh_random_secret(&g->secrets[i]);
    ld_fr_t id, rate;
    ld_rln_id_commitment(&id, &g->secrets[i]);
    ld_rln_rate_commitment(&rate, &id, limit);
    assert_int_equal(ld_merkle_set(g->tree, (uint64_t)i, &rate), 0);
    if (i > 0)
      fputc(',', f);
    rh_write_fr_hex(f, &rate);
  }
  fputs("]\n", f);
  fclose(f);
  f = fopen(g->cred_path, "w");
  assert_non_null(f);
  fputs("{\"identitySecret\": ", f);
  rh_write_fr_hex(f, &g->secrets[ours]);
  fputs("}\n", f);
  fclose(f);
}

void rh_group_free(rh_group_t *g) {
  ld_rln_prover_free(g->prover);
  ld_merkle_free(g->tree);
  explicit_bzero(g->secrets, g->members * sizeof *g->secrets);
  free(g->secrets);
  unlink(g->group_path);
  unlink(g->cred_path);
  rmdir(g->dir);
  memset(g, 0, sizeof *g);
}

void rh_configure(const rh_group_t *g, ld_node_config_t *cfg, uint64_t epoch_sec, bool member) {
  char err[256];
  const char *fixtures = getenv("LD_RLN_FIXTURES");
  assert_non_null(fixtures);
  cfg->rln.enabled = true;
  assert_int_equal(ld_node_config_set_rln_static_group_file(cfg, g->group_path, err, sizeof err),
                   0);
  assert_int_equal(ld_node_config_set_rln_user_message_limit(cfg, g->limit, err, sizeof err), 0);
  assert_int_equal(ld_node_config_set_rln_epoch_sec(cfg, epoch_sec, err, sizeof err), 0);
  if (member) {
    assert_int_equal(ld_node_config_set_rln_cred_path(cfg, g->cred_path, err, sizeof err), 0);
    assert_int_equal(ld_node_config_set_rln_membership_index(cfg, g->ours, err, sizeof err), 0);
    assert_int_equal(ld_node_config_set_rln_circuit_dir(cfg, fixtures, err, sizeof err), 0);
  }
}

ld_rln_prover_t *rh_prover(rh_group_t *g) {
  if (g->prover == NULL) {
    const char *fixtures = getenv("LD_RLN_FIXTURES");
    assert_non_null(fixtures);
    char zkey[512], graph[512];
    snprintf(zkey, sizeof zkey, "%s/rln_final.zkey", fixtures);
    snprintf(graph, sizeof graph, "%s/graph.bin", fixtures);
    assert_int_equal(ld_rln_prover_new_from_files(&g->prover, zkey, graph), 0);
  }
  return g->prover;
}

void rh_prove_in_tree(rh_group_t *g, ld_waku_message_t *m,
                      uint8_t proof[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED], const ld_fr_t *secret,
                      const ld_merkle_tree_t *tree, uint64_t index, uint64_t message_id,
                      uint64_t epoch_sec) {
  ld_rln_prover_t *prover = rh_prover(g);
  ld_rln_member_t member;
  memset(&member, 0, sizeof member);
  member.identity_secret = *secret;
  member.user_message_limit = g->limit;
  assert_int_equal(ld_merkle_proof(tree, index, &member.merkle), 0);
  size_t len = 0;
  assert_int_equal(
      ld_rln_attach_proof(prover, &member, m, epoch_sec, message_id, NULL, proof, &len), 0);
  explicit_bzero(&member, sizeof member);
  m->proof = proof;
  m->proof_len = len;
}

void rh_prove(rh_group_t *g, ld_waku_message_t *m,
              uint8_t proof[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED], uint64_t index,
              uint64_t message_id, uint64_t epoch_sec) {
  rh_prove_in_tree(g, m, proof, &g->secrets[index], g->tree, index, message_id, epoch_sec);
}
