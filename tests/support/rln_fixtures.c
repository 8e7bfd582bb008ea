#include "rln_fixtures.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "zk/merkle.h"

int rf_load(ld_rln_prover_t **prover, ld_rln_verifier_t **verifier) {
  const char *dir = getenv("LD_RLN_FIXTURES");
  if (dir == NULL)
    return -1;
  char zkey[4096], graph[4096];
  snprintf(zkey, sizeof zkey, "%s/rln_final.zkey", dir);
  snprintf(graph, sizeof graph, "%s/graph.bin", dir);
  if (ld_rln_prover_new_from_files(prover, zkey, graph) != 0 || ld_rln_verifier_new(verifier) != 0)
    return -1;
  return 0;
}

void rf_member(ld_rln_member_t *m, uint64_t secret, uint64_t index, uint64_t path_base,
               ld_fr_t *root) {
  memset(m, 0, sizeof *m);
  ld_fr_from_u64(&m->identity_secret, secret);
  m->user_message_limit = 10;
  m->merkle.depth = LD_RLN_TREE_DEPTH;
  ld_fr_t id, leaf;
  ld_rln_id_commitment(&id, &m->identity_secret);
  ld_rln_rate_commitment(&leaf, &id, m->user_message_limit);
  for (int l = 0; l < LD_RLN_TREE_DEPTH; l++) {
    ld_fr_from_u64(&m->merkle.path[l], path_base + (uint64_t)l + 1);
    m->merkle.index_bits[l] = (uint8_t)((index >> l) & 1);
  }
  ld_merkle_root_from_proof(&leaf, &m->merkle, root);
}

void rf_make_msg(const ld_rln_prover_t *prover, rf_signed_msg_t *m, const ld_rln_member_t *who,
                 int64_t ts, uint64_t id, uint8_t tag) {
  memset(m, 0, sizeof *m);
  ld_waku_message_init(&m->msg);
  memset(m->payload, tag, sizeof m->payload);
  m->msg.payload = m->payload;
  m->msg.payload_len = sizeof m->payload;
  m->msg.content_topic = "/rln/1/test/proto";
  m->msg.content_topic_len = strlen(m->msg.content_topic);
  m->msg.timestamp = ts;
  assert_int_equal(
      ld_rln_attach_proof(prover, who, &m->msg, RF_EPOCH_SEC, id, NULL, m->proof, &m->proof_len),
      0);
  m->msg.proof = m->proof;
  m->msg.proof_len = m->proof_len;
}
