/* RLN-v2 proof generation on one core, step by step: the witness from the circuit's graph, the
 * quotient's evaluations (3 iFFTs + 3 coset FFTs over 8,192 points), the five MSMs (A, B1, C and
 * H in G1, B in G2), and whole proofs: without and with a proving context (its set-up, the cold
 * proof that fills its cache, then warm proofs of the same member interleaved with plain ones,
 * and the proofs after start and after new roots with and without a prepare beforehand).
 * Prints one JSON line per figure; never fails on a time. Times are the thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID), except the proofs with the MSMs split over two threads: their
 * wall-clock time (CLOCK_MONOTONIC) beside the process's CPU time.
 *
 *   bench_zk_prove [DIR] [PROOFS] [plain]
 *       circuit files from DIR (default $LD_RLN_FIXTURES, else tests/interop/fixtures/rln-v2),
 *       PROOFS whole proofs (10); with "plain", only the proofs without a context (their mean,
 *       minimum, quartile, median and maximum), the figure to compare two builds by, run after
 *       one another, on a host whose speed drifts. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_clock.h"
#include "zk/fft.h"
#include "zk/fp_ifma.h"
#include "zk/msm.h"
#include "zk/rln_prover.h"
#include "zk/zkey.h"

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double clock_seconds(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void report(const char *name, double seconds) {
  printf("{\"bench\":\"zk_prove\",\"figure\":\"%s\",\"ms\":%.3f}\n", name, seconds * 1e3);
  fflush(stdout);
}

static uint64_t rng_state = 0x5eed;
static uint64_t next_u64(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static void random_fr(ld_fr_t *r) {
  uint8_t b[32];
  for (int i = 0; i < 32; i++) {
    b[i] = (uint8_t)next_u64();
  }
  ld_fr_from_bytes_reduce(r, b);
}

static void random_witness(ld_rln_witness_t *w) {
  memset(w, 0, sizeof *w);
  random_fr(&w->identity_secret);
  w->user_message_limit = 100;
  w->message_id = next_u64() % 100;
  w->merkle.depth = LD_RLN_TREE_DEPTH;
  uint64_t index = next_u64();
  for (int l = 0; l < LD_RLN_TREE_DEPTH; l++) {
    random_fr(&w->merkle.path[l]);
    w->merkle.index_bits[l] = (uint8_t)((index >> l) & 1);
  }
  random_fr(&w->x);
  random_fr(&w->external_nullifier);
}

/* The steps of one proof, each timed on its own. */
static int steps(const ld_rln_prover_t *p, const ld_zkey_t *zk) {
  size_t n = ld_rln_prover_num_wires(p);
  ld_fr_t *wires = malloc(n * sizeof *wires);
  ld_fr_t *h = malloc(zk->domain_size * sizeof *h);
  ld_fr_domain_t *d;
  if (wires == NULL || h == NULL || ld_fr_domain_new(&d, zk->domain_log2) != 0) {
    return 1;
  }
  ld_rln_witness_t w;
  random_witness(&w);
  double t = cpu_seconds();
  ld_rln_witness_compute(p, &w, wires);
  report("witness (graph evaluation)", cpu_seconds() - t);
  for (size_t i = 0; i < zk->domain_size; i++) {
    random_fr(&h[i]);
  }
  t = cpu_seconds();
  for (int k = 0; k < 3; k++) {
    ld_fr_ifft(d, h);
    ld_fr_coset_fft(d, h);
  }
  report("quotient: 3 iFFT + 3 coset FFT (8192 points)", cpu_seconds() - t);
  size_t priv = (size_t)zk->num_public + 1;
  ld_g1_t r1;
  ld_g2_t r2;
  t = cpu_seconds();
  ld_g1_msm_pippenger(&r1, zk->a, wires, n);
  report("MSM A (G1, 5844 points)", cpu_seconds() - t);
  t = cpu_seconds();
  ld_g1_msm_pippenger(&r1, zk->b1, wires, n);
  report("MSM B1 (G1, 5844 points)", cpu_seconds() - t);
  t = cpu_seconds();
  ld_g2_msm_pippenger(&r2, zk->b2, wires, n);
  report("MSM B2 (G2, 5844 points)", cpu_seconds() - t);
  t = cpu_seconds();
  ld_g1_msm_pippenger(&r1, zk->c, wires + priv, n - priv);
  report("MSM C (G1, 5838 points)", cpu_seconds() - t);
  t = cpu_seconds();
  ld_g1_msm_pippenger(&r1, zk->h, h, zk->domain_size);
  report("MSM H (G1, 8192 points)", cpu_seconds() - t);
  ld_msm_table_t *th;
  t = cpu_seconds();
  if (ld_g1_msm_table_new(&th, zk->h, zk->domain_size) != 0) {
    return 1;
  }
  report("fixed-base table of H (once per proving context)", cpu_seconds() - t);
  t = cpu_seconds();
  ld_g1_msm_table(&r1, th, h);
  report("MSM H from its fixed-base table", cpu_seconds() - t);
  ld_msm_table_free(th);
  /* the four G1 MSMs of a proof with and without the GLV endomorphism, interleaved */
  typedef int g1_msm_fn(ld_g1_t *, const ld_g1_affine_t *, const ld_fr_t *, size_t);
  g1_msm_fn *variants[2] = {ld_g1_msm_pippenger, ld_g1_msm_pippenger_noglv};
  double g1_total[2] = {0, 0};
  enum { G1_ROUNDS = 5 };
  for (int round = 0; round < G1_ROUNDS; round++) {
    for (int v = 0; v < 2; v++) {
      t = cpu_seconds();
      variants[v](&r1, zk->a, wires, n);
      variants[v](&r1, zk->b1, wires, n);
      variants[v](&r1, zk->c, wires + priv, n - priv);
      variants[v](&r1, zk->h, h, zk->domain_size);
      g1_total[v] += cpu_seconds() - t;
    }
  }
  report("G1 MSMs A+B1+C+H with GLV (interleaved), per proof", g1_total[0] / G1_ROUNDS);
  report("G1 MSMs A+B1+C+H without GLV (interleaved), per proof", g1_total[1] / G1_ROUNDS);
  /* B2 in G2 with and without the psi endomorphism, interleaved */
  typedef int g2_msm_fn(ld_g2_t *, const ld_g2_affine_t *, const ld_fr_t *, size_t);
  g2_msm_fn *g2_variants[2] = {ld_g2_msm_pippenger, ld_g2_msm_pippenger_nopsi};
  double g2_total[2] = {0, 0};
  for (int round = 0; round < G1_ROUNDS; round++) {
    for (int v = 0; v < 2; v++) {
      t = cpu_seconds();
      g2_variants[v](&r2, zk->b2, wires, n);
      g2_total[v] += cpu_seconds() - t;
    }
  }
  report("G2 MSM B2 with psi (interleaved)", g2_total[0] / G1_ROUNDS);
  report("G2 MSM B2 without psi (interleaved)", g2_total[1] / G1_ROUNDS);
  ld_fr_domain_free(d);
  free(wires);
  free(h);
  return 0;
}

/* One publishing member through a proving context (ld_rln_prove_ctx): the cold proof that fills
 * the cache, then messages of the same member (warm), each interleaved with a proof without the
 * context for the same witness (A/B under the same load). */
static int cached_proofs(const ld_rln_prover_t *p, int proofs) {
  ld_rln_proving_ctx_t *ctx;
  double t0 = cpu_seconds();
  if (ld_rln_proving_ctx_new(&ctx, p) != 0) {
    return 1;
  }
  report("proving context set-up (fixed-base tables of H and the message's wires)",
         cpu_seconds() - t0);
  ld_rln_witness_t w;
  ld_rln_proof_values_t v;
  uint8_t proof[LD_RLN_PROOF_BYTES];
  random_witness(&w);
  double t = cpu_seconds();
  int rc = ld_rln_prove_ctx(ctx, &w, proof, &v);
  report("RLN-v2 proof through a proving context, cold (fills the cache)", cpu_seconds() - t);
  double warm = 0, plain = 0;
  for (int i = 0; rc == 0 && i < proofs; i++) {
    w.message_id = next_u64() % w.user_message_limit;
    random_fr(&w.x);
    random_fr(&w.external_nullifier);
    t = cpu_seconds();
    rc = ld_rln_prove(p, &w, proof, &v);
    plain += cpu_seconds() - t;
    t = cpu_seconds();
    rc = rc != 0 ? rc : ld_rln_prove_ctx(ctx, &w, proof, &v);
    warm += cpu_seconds() - t;
  }
  /* cache misses after a new root: the path element of level L changes (the new leaf joins
   * the member's path there), so the levels L..19 hash to new values; then another member */
  size_t nw = ld_rln_prover_num_wires(p);
  ld_fr_t *before = malloc(nw * sizeof *before), *after = malloc(nw * sizeof *after);
  const int levels[] = {19, 15, 10, 5, 0};
  for (size_t i = 0; rc == 0 && before != NULL && after != NULL && i <= 5; i++) {
    char name[160];
    ld_rln_witness_compute(p, &w, before);
    if (i < 5) {
      random_fr(&w.merkle.path[levels[i]]);
      snprintf(name, sizeof name,
               "RLN-v2 proof through a proving context after a new root joining at level %d",
               levels[i]);
    } else {
      random_witness(&w);
      snprintf(name, sizeof name, "RLN-v2 proof through a proving context, another member");
    }
    ld_rln_witness_compute(p, &w, after);
    size_t changed = 0;
    for (size_t k = 0; k < nw; k++) {
      changed += !ld_fr_equal(&before[k], &after[k]);
    }
    t = cpu_seconds();
    rc = ld_rln_prove_ctx(ctx, &w, proof, &v);
    double dt = cpu_seconds() - t;
    printf("{\"bench\":\"zk_prove\",\"figure\":\"%s\",\"ms\":%.3f,\"changed_wires\":%zu}\n", name,
           dt * 1e3, changed);
  }
  free(before);
  free(after);
  size_t fixed;
  uint64_t hits, misses;
  ld_rln_proving_ctx_stats(ctx, &fixed, &hits, &misses);
  printf("{\"bench\":\"zk_prove\",\"figure\":\"proving context\",\"fixed_wires\":%zu,"
         "\"wires\":%zu,\"hits\":%llu,\"misses\":%llu}\n",
         fixed, ld_rln_prover_num_wires(p), (unsigned long long)hits, (unsigned long long)misses);
  report("RLN-v2 proof through a proving context, warm (same member), per proof",
         proofs > 0 ? warm / proofs : 0);
  report("RLN-v2 proof without a context, interleaved with the warm ones, per proof",
         proofs > 0 ? plain / proofs : 0);
  ld_rln_proving_ctx_free(ctx);
  return rc != 0 || hits != (uint64_t)proofs || misses != 7;
}

/* A publish's proof after start and after a new root, with and without the node's prepare
 * (ld_rln_proving_ctx_prepare, run when the node learns the root, before the publish): without
 * it the publish's proof pays the miss; with it, the prepare pays it in advance and the proof is
 * a hit. Per level where the new leaf joins the member's path (19, 10, 0) and for the first proof
 * of a member (after start): the miss, then, after the same change once more, the prepare and
 * the proof that follows it. */
static int prepared_proofs(const ld_rln_prover_t *p) {
  ld_rln_proving_ctx_t *ctx;
  if (ld_rln_proving_ctx_new(&ctx, p) != 0) {
    return 1;
  }
  ld_rln_witness_t w;
  ld_rln_proof_values_t v;
  uint8_t proof[LD_RLN_PROOF_BYTES];
  const int levels[] = {-1, 19, 10, 0}; /* -1: another member (the first proof after start) */
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < sizeof levels / sizeof levels[0]; i++) {
    double miss = 0, prepare = 0, after = 0;
    for (int with = 0; rc == 0 && with < 2; with++) {
      if (levels[i] < 0) {
        random_witness(&w);
      } else {
        random_fr(&w.merkle.path[levels[i]]);
      }
      w.message_id = next_u64() % w.user_message_limit;
      random_fr(&w.x);
      double t = cpu_seconds();
      if (with) {
        rc = ld_rln_proving_ctx_prepare(ctx, &w) == 1 ? 0 : 1;
        prepare = cpu_seconds() - t;
        t = cpu_seconds();
        rc = rc != 0 ? rc : ld_rln_prove_ctx(ctx, &w, proof, &v);
        after = cpu_seconds() - t;
      } else {
        rc = ld_rln_prove_ctx(ctx, &w, proof, &v);
        miss = cpu_seconds() - t;
      }
    }
    char level[64] = "another member (first proof after start)";
    if (levels[i] >= 0) {
      snprintf(level, sizeof level, "new root at level %d", levels[i]);
    }
    printf("{\"bench\":\"zk_prove\",\"figure\":\"publish after %s\",\"proof_unprepared_ms\":"
           "%.3f,\"prepare_ms\":%.3f,\"proof_prepared_ms\":%.3f}\n",
           level, miss * 1e3, prepare * 1e3, after * 1e3);
    fflush(stdout);
  }
  uint64_t hits, misses;
  ld_rln_proving_ctx_stats(ctx, NULL, &hits, &misses);
  ld_rln_proving_ctx_free(ctx);
  return rc != 0 || hits != 4 || misses != 4;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : getenv("LD_RLN_FIXTURES");
  if (dir == NULL) {
    dir = "tests/interop/fixtures/rln-v2";
  }
  int proofs = argc > 2 ? atoi(argv[2]) : 10;
  char zkey_path[4096], graph_path[4096];
  snprintf(zkey_path, sizeof zkey_path, "%s/rln_final.zkey", dir);
  snprintf(graph_path, sizeof graph_path, "%s/graph.bin", dir);
  ld_rln_prover_t *p;
  ld_zkey_t *zk;
  double t = cpu_seconds();
  if (ld_rln_prover_new_from_files(&p, zkey_path, graph_path) != 0) {
    fprintf(stderr, "cannot read the circuit files in %s\n", dir);
    return 1;
  }
  report("prover set-up (read zkey and graph, check points)", cpu_seconds() - t);
  bool plain_only = argc > 3 && strcmp(argv[3], "plain") == 0;
  if (!plain_only && (ld_zkey_read_file(&zk, zkey_path) != 0 || steps(p, zk) != 0)) {
    return 1;
  }
  /* each proof's thread CPU time: the mean, and the minimum and median, which a busy neighbour
   * on the host moves less */
  uint64_t *us = calloc(proofs > 0 ? (size_t)proofs : 1, sizeof *us), total_us = 0;
  for (int i = 0; i < proofs; i++) {
    ld_rln_witness_t w;
    ld_rln_proof_values_t v;
    uint8_t proof[LD_RLN_PROOF_BYTES];
    random_witness(&w);
    uint64_t t0 = bench_clock_us(CLOCK_THREAD_CPUTIME_ID);
    if (us == NULL || ld_rln_prove(p, &w, proof, &v) != 0) {
      return 1;
    }
    us[i] = bench_clock_us(CLOCK_THREAD_CPUTIME_ID) - t0;
    total_us += us[i];
  }
  report("RLN-v2 proof (witness + Groth16), per proof", proofs > 0 ? total_us / 1e6 / proofs : 0);
  if (proofs > 0) {
    bench_sort_u64(us, (size_t)proofs);
    printf("{\"bench\":\"zk_prove\",\"figure\":\"RLN-v2 proof (witness + Groth16), over %d "
           "proofs\",\"min_ms\":%.3f,\"p25_ms\":%.3f,\"p50_ms\":%.3f,\"max_ms\":%.3f}\n",
           proofs, us[0] / 1e3, bench_pct_u64(us, (size_t)proofs, 25) / 1e3,
           bench_pct_u64(us, (size_t)proofs, 50) / 1e3, us[proofs - 1] / 1e3);
  }
  free(us);
  if (plain_only) {
    ld_rln_prover_free(p);
    return 0;
  }
  if (ld_fp8_available()) { /* the IFMA lanes against the scalar path, interleaved */
    double path_total[2] = {0, 0};
    for (int i = 0; i < proofs; i++) {
      ld_rln_witness_t w;
      ld_rln_proof_values_t v;
      uint8_t proof[LD_RLN_PROOF_BYTES];
      random_witness(&w);
      for (int scalar = 0; scalar < 2; scalar++) {
        ld_fp8_force_scalar(scalar);
        t = cpu_seconds();
        if (ld_rln_prove(p, &w, proof, &v) != 0) {
          return 1;
        }
        path_total[scalar] += cpu_seconds() - t;
      }
    }
    ld_fp8_force_scalar(0);
    report("RLN-v2 proof, IFMA lanes (interleaved with the scalar path), per proof",
           proofs > 0 ? path_total[0] / proofs : 0);
    report("RLN-v2 proof, scalar path forced (bucket sums and NTTs), per proof",
           proofs > 0 ? path_total[1] / proofs : 0);
  }
  if (cached_proofs(p, proofs) != 0 || prepared_proofs(p) != 0) {
    return 1;
  }
  ld_rln_prover_set_threads(p, 2);
  double wall = 0, cpu = 0;
  for (int i = 0; i < proofs; i++) {
    ld_rln_witness_t w;
    ld_rln_proof_values_t v;
    uint8_t proof[LD_RLN_PROOF_BYTES];
    random_witness(&w);
    double w0 = clock_seconds(CLOCK_MONOTONIC), c0 = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
    if (ld_rln_prove(p, &w, proof, &v) != 0) {
      return 1;
    }
    wall += clock_seconds(CLOCK_MONOTONIC) - w0;
    cpu += clock_seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
  }
  report("RLN-v2 proof, MSMs over 2 threads: wall-clock per proof", proofs > 0 ? wall / proofs : 0);
  report("RLN-v2 proof, MSMs over 2 threads: CPU (both threads) per proof",
         proofs > 0 ? cpu / proofs : 0);
  ld_zkey_free(zk);
  ld_rln_prover_free(p);
  return 0;
}
