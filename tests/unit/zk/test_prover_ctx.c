/* A proving context made without its tables (the node's publish queue builds them in slices
 * between proofs): it proves at once, and its proofs equal the prover's alone for the same r and
 * s before, while and after the tables are built; its cache is filled by the first proof and
 * reused by the next, and moved by the changed wires after new roots and another member. The
 * circuit files come from LD_RLN_FIXTURES (rln_final.zkey, graph.bin). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "zk/rln.h"
#include "zk/rln_prover.h"
#include "rln_circuit.h"
#include "zktest.h"

static void random_witness(uint64_t *seed, ld_rln_witness_t *w) {
  memset(w, 0, sizeof *w);
  zktest_fr(seed, &w->identity_secret);
  uint64_t limits[] = {1, 10, 100, 65535};
  w->user_message_limit = limits[zktest_next(seed) % 4];
  w->message_id = zktest_next(seed) % w->user_message_limit;
  w->merkle.depth = LD_RLN_TREE_DEPTH;
  uint64_t index = zktest_next(seed);
  for (int l = 0; l < LD_RLN_TREE_DEPTH; l++) {
    zktest_fr(seed, &w->merkle.path[l]);
    w->merkle.index_bits[l] = (uint8_t)((index >> l) & 1);
  }
  uint8_t msg[40], epoch[32] = {0}, rln_id[32] = "rln/waku-rln-relay/v2.0.0";
  zktest_bytes(seed, msg, sizeof msg);
  zktest_bytes(seed, epoch, 8);
  ld_rln_hash_to_field(&w->x, msg, sizeof msg);
  ld_rln_external_nullifier(&w->external_nullifier, epoch, rln_id);
}

static void next_message(uint64_t *seed, ld_rln_witness_t *w) {
  w->message_id = zktest_next(seed) % w->user_message_limit;
  uint8_t msg[40], epoch[32] = {0}, rln_id[32] = "rln/waku-rln-relay/v2.0.0";
  zktest_bytes(seed, msg, sizeof msg);
  zktest_bytes(seed, epoch, 8);
  ld_rln_hash_to_field(&w->x, msg, sizeof msg);
  ld_rln_external_nullifier(&w->external_nullifier, epoch, rln_id);
}

/* One proof through the context, checked against the prover alone (same r and s) and the
 * verifier. */
static void prove_and_compare(uint64_t *seed, ld_rln_proving_ctx_t *ctx,
                              const ld_rln_witness_t *w) {
  ld_fr_t r, s;
  zktest_fr(seed, &r);
  zktest_fr(seed, &s);
  uint8_t plain[128], cached[128];
  ld_rln_proof_values_t v1, v2;
  assert_int_equal(ld_rln_prove_rs(rln_circuit.prover, w, &r, &s, plain, &v1), 0);
  assert_int_equal(ld_rln_prove_ctx_rs(ctx, w, &r, &s, cached, &v2), 0);
  assert_memory_equal(plain, cached, 128);
  assert_memory_equal(&v1, &v2, sizeof v1);
  assert_int_equal(ld_rln_verify(rln_circuit.verifier, cached, &v2), 0);
}

static void proofs_while_tables_are_built(void **state) {
  (void)state;
  uint64_t seed = 777;
  ld_rln_proving_ctx_t *ctx;
  assert_int_equal(ld_rln_proving_ctx_new_deferred(&ctx, rln_circuit.prover), 0);
  assert_ptr_equal(ld_rln_proving_ctx_prover(ctx), rln_circuit.prover);
  assert_false(ld_rln_proving_ctx_complete(ctx));
  ld_rln_witness_t w;
  random_witness(&seed, &w);
  prove_and_compare(&seed, ctx, &w); /* no table yet: fills the cache */

  /* some slices, of very different sizes: the context is partly built */
  size_t slices = 0;
  int rc = 1;
  for (; slices < 5 && rc == 1; slices++) {
    rc = ld_rln_proving_ctx_build_step(ctx, slices % 2 ? 4000 : 300);
  }
  assert_int_equal(rc, 1);
  assert_false(ld_rln_proving_ctx_complete(ctx));
  next_message(&seed, &w);
  prove_and_compare(&seed, ctx, &w); /* some tables complete, one half built, some missing */

  while ((rc = ld_rln_proving_ctx_build_step(ctx, 4000)) == 1) {
    slices++;
  }
  assert_int_equal(rc, 0);
  assert_true(ld_rln_proving_ctx_complete(ctx));
  assert_int_equal(ld_rln_proving_ctx_build_step(ctx, 1), 0);
  next_message(&seed, &w);
  prove_and_compare(&seed, ctx, &w); /* every table */

  uint64_t hits, misses;
  ld_rln_proving_ctx_stats(ctx, NULL, &hits, &misses);
  assert_int_equal(misses, 1);
  assert_int_equal(hits, 2);
  ld_rln_proving_ctx_free(ctx);
}

/* A cache miss moves the sums by the wires that changed: after new roots joining the member's
 * path at levels 19 and 0, a new message (a hit) and another member, every proof equals the
 * prover's alone for the same r and s and verifies. */
static void proofs_after_new_roots(void **state) {
  (void)state;
  uint64_t seed = 9191;
  ld_rln_proving_ctx_t *ctx;
  assert_int_equal(ld_rln_proving_ctx_new_deferred(&ctx, rln_circuit.prover), 0);
  ld_rln_witness_t w;
  random_witness(&seed, &w);
  for (int t = 0; t < 5; t++) {
    if (t == 1 || t == 2) {
      zktest_fr(&seed, &w.merkle.path[t == 1 ? 19 : 0]);
    } else if (t == 3) {
      next_message(&seed, &w);
    } else if (t == 4) {
      random_witness(&seed, &w);
    }
    prove_and_compare(&seed, ctx, &w);
    uint64_t hits, misses;
    ld_rln_proving_ctx_stats(ctx, NULL, &hits, &misses);
    assert_int_equal(hits, t >= 3 ? 1 : 0);
    assert_int_equal(misses, (uint64_t)t + (t >= 3 ? 0 : 1));
  }
  ld_rln_proving_ctx_free(ctx);
}

static void counts(const ld_rln_proving_ctx_t *ctx, uint64_t hits, uint64_t misses,
                   uint64_t prepares) {
  uint64_t h, m;
  ld_rln_proving_ctx_stats(ctx, NULL, &h, &m);
  assert_int_equal(h, hits);
  assert_int_equal(m, misses);
  assert_int_equal(ld_rln_proving_ctx_prepares(ctx), prepares);
}

/* A prepare brings the sums to a membership without a proof: the next proof of that membership
 * is a hit and equals the prover's alone for the same r and s, after the first membership, a new
 * root at level 19 and another member; a path the context was not prepared for still proves
 * right (a miss). A second prepare of the same membership does nothing. */
static void prepare_makes_the_next_proof_a_hit(void **state) {
  (void)state;
  uint64_t seed = 4242;
  ld_rln_proving_ctx_t *ctx;
  assert_int_equal(ld_rln_proving_ctx_new_deferred(&ctx, rln_circuit.prover), 0);
  ld_rln_witness_t w;
  random_witness(&seed, &w);
  assert_int_equal(ld_rln_proving_ctx_prepare(ctx, &w), 1);
  counts(ctx, 0, 0, 1);
  next_message(&seed, &w);
  prove_and_compare(&seed, ctx, &w);
  counts(ctx, 1, 0, 1);
  assert_int_equal(ld_rln_proving_ctx_prepare(ctx, &w), 0); /* already there */
  counts(ctx, 1, 0, 1);

  zktest_fr(&seed, &w.merkle.path[19]); /* a new root */
  assert_int_equal(ld_rln_proving_ctx_prepare(ctx, &w), 1);
  next_message(&seed, &w);
  prove_and_compare(&seed, ctx, &w);
  counts(ctx, 2, 0, 2);

  zktest_fr(&seed, &w.merkle.path[0]); /* not prepared: the proof moves the sums */
  prove_and_compare(&seed, ctx, &w);
  counts(ctx, 2, 1, 2);

  random_witness(&seed, &w); /* another member */
  assert_int_equal(ld_rln_proving_ctx_prepare(ctx, &w), 1);
  next_message(&seed, &w);
  prove_and_compare(&seed, ctx, &w);
  counts(ctx, 3, 1, 3);

  w.merkle.depth = LD_RLN_TREE_DEPTH - 1;
  assert_int_equal(ld_rln_proving_ctx_prepare(ctx, &w), LD_ERR_INVALID_ARG);
  w.merkle.depth = LD_RLN_TREE_DEPTH;
  w.user_message_limit = 0;
  assert_int_equal(ld_rln_proving_ctx_prepare(ctx, &w), LD_ERR_INVALID_ARG);
  counts(ctx, 3, 1, 3);
  ld_rln_proving_ctx_free(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(proofs_while_tables_are_built),
      cmocka_unit_test(proofs_after_new_roots),
      cmocka_unit_test(prepare_makes_the_next_proof_a_hit),
  };
  return cmocka_run_group_tests(tests, rln_circuit_setup, rln_circuit_teardown);
}
