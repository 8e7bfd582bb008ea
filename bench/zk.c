/* The zk layer on one core: field multiplication, curve and pairing operations, Poseidon, the
 * Merkle tree and RLN-v2 proof verification. Prints one figure per line; never fails on a time.
 * Times are the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so that other jobs sharing the
 * cores do not count.
 *
 *   bench_zk                 all figures (verification on zerokit's proofs from the unit tests)
 *   bench_zk verify-lines N  reads "proof_hex values_hex" lines (ld_zkverify's input) on stdin and
 *                            prints the mean time to verify each, over N rounds, as JSON */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tests/unit/zk/rln_vectors.h"
#include "base/hex.h"
#include "zk/merkle.h"
#include "zk/pairing.h"
#include "zk/poseidon.h"
#include "zk/rln.h"

#define RUN_SECONDS 0.5

static volatile uint64_t g_sink;

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef void (*bench_fn)(void *arg);

/* Seconds per call, calling fn in batches for RUN_SECONDS. */
static double seconds_per_call(bench_fn fn, void *arg, int batch) {
  fn(arg);
  double start = now_seconds(), elapsed;
  long calls = 0;
  do {
    for (int i = 0; i < batch; i++) {
      fn(arg);
    }
    calls += batch;
    elapsed = now_seconds() - start;
  } while (elapsed < RUN_SECONDS);
  return elapsed / (double)calls;
}

static void report(const char *name, double seconds, const char *unit) {
  double scale = strcmp(unit, "ns") == 0 ? 1e9 : strcmp(unit, "us") == 0 ? 1e6 : 1e3;
  printf("%-60s %12.3f %s\n", name, seconds * scale, unit);
}

/* ---- fields ------------------------------------------------------------------------------------
 */

typedef struct {
  ld_fp_t a, b;
  ld_fr_t x, y;
  ld_fp12_t f, g;
} field_state_t;

static void fp_mul_1000(void *arg) {
  field_state_t *s = arg;
  for (int i = 0; i < 1000; i++) {
    ld_fp_mul(&s->a, &s->a, &s->b); /* a dependent chain: latency, not throughput */
  }
  g_sink += s->a.l[0];
}

static void fp_sqr_1000(void *arg) {
  field_state_t *s = arg;
  for (int i = 0; i < 1000; i++) {
    ld_fp_sqr(&s->a, &s->a);
  }
  g_sink += s->a.l[0];
}

static void fp_inv(void *arg) {
  field_state_t *s = arg;
  ld_fp_inv(&s->a, &s->a);
  g_sink += s->a.l[0];
}

static void fp_inv_fermat(void *arg) {
  field_state_t *s = arg;
  ld_fp_inv_fermat(&s->a, &s->a);
  g_sink += s->a.l[0];
}

static void fr_inv_vartime(void *arg) {
  field_state_t *s = arg;
  ld_fr_inv_vartime(&s->x, &s->x);
  g_sink += s->x.l[0];
}

static void fp12_mul(void *arg) {
  field_state_t *s = arg;
  ld_fp12_mul(&s->f, &s->f, &s->g);
  g_sink += s->f.c0.c0.c0.l[0];
}

static void fp12_sqr(void *arg) {
  field_state_t *s = arg;
  ld_fp12_sqr(&s->f, &s->f);
  g_sink += s->f.c0.c0.c0.l[0];
}

/* ---- curves and pairing ---------------------------------------------------------------------- */

typedef struct {
  ld_g1_affine_t p;
  ld_g2_affine_t q;
  ld_g1_t pj;
  ld_g2_t qj;
  ld_fr_t k;
  uint8_t q_compressed[64];
  ld_g2_prepared_t prep;
  ld_fp12_t f;
} curve_state_t;

static void g1_mul(void *arg) {
  curve_state_t *s = arg;
  ld_g1_t r;
  ld_g1_mul_fr_vartime(&r, &s->pj, &s->k);
  g_sink += r.x.l[0];
}

static void g2_mul(void *arg) {
  curve_state_t *s = arg;
  ld_g2_t r;
  ld_g2_mul_fr_vartime(&r, &s->qj, &s->k);
  g_sink += r.x.c0.l[0];
}

static void g2_decompress(void *arg) {
  curve_state_t *s = arg;
  ld_g2_affine_t q;
  g_sink += (uint64_t)ld_g2_from_compressed(&q, s->q_compressed);
}

static void g2_subgroup(void *arg) {
  curve_state_t *s = arg;
  g_sink += (uint64_t)ld_g2_is_in_subgroup(&s->q);
}

static void g2_prepare(void *arg) {
  curve_state_t *s = arg;
  ld_g2_prepare(&s->prep, &s->q);
  g_sink += s->prep.n;
}

static void miller_loop(void *arg) {
  curve_state_t *s = arg;
  ld_pairing_miller_loop(&s->f, &s->p, &s->prep, 1);
  g_sink += s->f.c0.c0.c0.l[0];
}

static void final_exp(void *arg) {
  curve_state_t *s = arg;
  ld_fp12_t r;
  ld_pairing_final_exp(&r, &s->f);
  g_sink += r.c0.c0.c0.l[0];
}

static void pairing(void *arg) {
  curve_state_t *s = arg;
  ld_fp12_t r;
  ld_pairing(&r, &s->p, &s->q);
  g_sink += r.c0.c0.c0.l[0];
}

/* ---- Poseidon and the tree ------------------------------------------------------------------- */

typedef struct {
  ld_fr_t in[3];
  ld_merkle_tree_t *tree;
  uint64_t next;
} hash_state_t;

static void poseidon1(void *arg) {
  hash_state_t *s = arg;
  ld_poseidon_hash1(&s->in[0], &s->in[0]);
  g_sink += s->in[0].l[0];
}

static void poseidon2(void *arg) {
  hash_state_t *s = arg;
  ld_poseidon_hash2(&s->in[0], &s->in[0], &s->in[1]);
  g_sink += s->in[0].l[0];
}

static void poseidon3(void *arg) {
  hash_state_t *s = arg;
  ld_poseidon_hash(&s->in[0], s->in, 3);
  g_sink += s->in[0].l[0];
}

static void merkle_set(void *arg) {
  hash_state_t *s = arg;
  ld_merkle_set(s->tree, (s->next++ * 7919) % (1u << 20), &s->in[1]);
}

/* ---- RLN verification ------------------------------------------------------------------------ */

typedef struct {
  ld_rln_verifier_t *verifier;
  uint8_t proof[8][128];
  ld_rln_proof_values_t values[8];
  size_t n, next;
} verify_state_t;

static void rln_verify(void *arg) {
  verify_state_t *s = arg;
  size_t i = s->next++ % s->n;
  if (ld_rln_verify(s->verifier, s->proof[i], &s->values[i]) != 0) {
    abort();
  }
}

/* A batch of `batch` proofs (zerokit's vectors, repeated) verified at once. */
typedef struct {
  verify_state_t *vs;
  size_t batch;
  uint8_t (*proofs)[LD_RLN_PROOF_BYTES];
  ld_rln_proof_values_t *values;
  int *results;
} batch_state_t;

static void rln_verify_batch(void *arg) {
  batch_state_t *b = arg;
  if (ld_rln_verify_batch(b->vs->verifier, b->proofs, b->values, b->batch, b->results) != 0) {
    abort();
  }
}

static void report_batches(verify_state_t *vs) {
  static const size_t sizes[] = {2, 4, 8, 16, 32, 64, 128};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    batch_state_t b = {vs, sizes[k], NULL, NULL, NULL};
    b.proofs = malloc(b.batch * sizeof *b.proofs);
    b.values = malloc(b.batch * sizeof *b.values);
    b.results = malloc(b.batch * sizeof *b.results);
    if (b.proofs == NULL || b.values == NULL || b.results == NULL) {
      abort();
    }
    for (size_t i = 0; i < b.batch; i++) {
      memcpy(b.proofs[i], vs->proof[i % vs->n], LD_RLN_PROOF_BYTES);
      b.values[i] = vs->values[i % vs->n];
    }
    char name[96];
    snprintf(name, sizeof name, "RLN-v2 batch verification of %zu, per proof", b.batch);
    report(name, seconds_per_call(rln_verify_batch, &b, 1) / (double)b.batch, "ms");
    free(b.proofs);
    free(b.values);
    free(b.results);
  }
}

static void rln_verifier_new(void *arg) {
  (void)arg;
  ld_rln_verifier_t *v;
  if (ld_rln_verifier_new(&v) != 0) {
    abort();
  }
  ld_rln_verifier_free(v);
}

static int load_vectors(verify_state_t *s) {
  s->n = sizeof rln_vectors / sizeof rln_vectors[0];
  if (s->n > 8) {
    s->n = 8;
  }
  for (size_t i = 0; i < s->n; i++) {
    uint8_t raw[160];
    size_t n1, n2;
    if (ld_hex_decode(rln_vectors[i].proof, 256, s->proof[i], 128, &n1) != 0 ||
        ld_hex_decode(rln_vectors[i].values, 320, raw, 160, &n2) != 0 ||
        ld_rln_proof_values_decode(&s->values[i], raw) != 0) {
      return -1;
    }
  }
  return ld_rln_verifier_new(&s->verifier);
}

static int verify_lines(int rounds) {
  verify_state_t *s = calloc(1, sizeof *s);
  if (ld_rln_verifier_new(&s->verifier) != 0) {
    return 1;
  }
  char line[1024];
  while (s->n < 8 && fgets(line, sizeof line, stdin) != NULL) {
    uint8_t raw[160];
    size_t n1, n2;
    if (strlen(line) < 577 || ld_hex_decode(line, 256, s->proof[s->n], 128, &n1) != 0 ||
        ld_hex_decode(line + 257, 320, raw, 160, &n2) != 0 ||
        ld_rln_proof_values_decode(&s->values[s->n], raw) != 0) {
      fprintf(stderr, "bad line\n");
      return 2;
    }
    s->n++;
  }
  if (s->n == 0) {
    return 2;
  }
  rln_verify(s); /* warm up */
  double start = now_seconds();
  for (int r = 0; r < rounds; r++) {
    for (size_t i = 0; i < s->n; i++) {
      rln_verify(s);
    }
  }
  double per = (now_seconds() - start) / (double)(rounds * (int)s->n);
  printf("{\"figure\":\"rln_verify_cpu_ms\",\"impl\":\"c\",\"proofs\":%zu,\"rounds\":%d,\"value\":%"
         ".3f}\n",
         s->n, rounds, per * 1e3);
  ld_rln_verifier_free(s->verifier);
  free(s);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "verify-lines") == 0) {
    return verify_lines(argc >= 3 ? atoi(argv[2]) : 20);
  }
  field_state_t fs;
  ld_fp_from_u64(&fs.a, 0x1234567);
  ld_fp_from_u64(&fs.b, 0x7654321);
  ld_fp_inv(&fs.b, &fs.b);
  ld_fr_from_u64(&fs.x, 99);
  memset(&fs.f, 0, sizeof fs.f);
  ld_fp12_set_one(&fs.f);
  fs.f.c1.c2.c0 = fs.b;
  fs.g = fs.f;
  fs.g.c0.c1.c1 = fs.a;
  report("Fp mul (dependent chain)", seconds_per_call(fp_mul_1000, &fs, 100) / 1000, "ns");
  report("Fp square (dependent chain)", seconds_per_call(fp_sqr_1000, &fs, 100) / 1000, "ns");
  report("Fp inverse (safegcd, constant-time)", seconds_per_call(fp_inv, &fs, 100), "us");
  report("Fp inverse (Fermat, constant-time)", seconds_per_call(fp_inv_fermat, &fs, 100), "us");
  report("Fr inverse (binary Euclid, variable-time)", seconds_per_call(fr_inv_vartime, &fs, 100),
         "us");
  report("Fp12 mul", seconds_per_call(fp12_mul, &fs, 100), "us");
  report("Fp12 square", seconds_per_call(fp12_sqr, &fs, 100), "us");

  curve_state_t *cs = calloc(1, sizeof *cs);
  ld_g1_generator(&cs->p);
  ld_g2_generator(&cs->q);
  ld_g1_from_affine(&cs->pj, &cs->p);
  ld_g2_from_affine(&cs->qj, &cs->q);
  ld_fr_from_u64(&cs->k, 0xdeadbeefcafeULL);
  ld_fr_inv(&cs->k, &cs->k); /* a full-width scalar */
  ld_g2_to_compressed(cs->q_compressed, &cs->q);
  ld_g2_prepare(&cs->prep, &cs->q);
  report("G1 scalar multiplication (254-bit, variable-time)", seconds_per_call(g1_mul, cs, 10),
         "us");
  report("G2 scalar multiplication (254-bit, variable-time)", seconds_per_call(g2_mul, cs, 10),
         "us");
  report("G2 subgroup check (psi = [6x^2])", seconds_per_call(g2_subgroup, cs, 10), "us");
  report("G2 decompression (sqrt + subgroup check)", seconds_per_call(g2_decompress, cs, 10), "us");
  report("G2 line precomputation", seconds_per_call(g2_prepare, cs, 10), "us");
  report("Miller loop (one pair, prepared G2)", seconds_per_call(miller_loop, cs, 10), "ms");
  report("final exponentiation", seconds_per_call(final_exp, cs, 10), "ms");
  report("pairing e(P, Q) (prepare + Miller loop + final exponentiation)",
         seconds_per_call(pairing, cs, 10), "ms");
  free(cs);

  hash_state_t hs;
  for (int i = 0; i < 3; i++) {
    ld_fr_from_u64(&hs.in[i], (uint64_t)i + 5);
  }
  report("Poseidon, 1 input (t = 2)", seconds_per_call(poseidon1, &hs, 100), "us");
  report("Poseidon, 2 inputs (t = 3, a Merkle node)", seconds_per_call(poseidon2, &hs, 100), "us");
  report("Poseidon, 3 inputs (t = 4)", seconds_per_call(poseidon3, &hs, 100), "us");
  if (ld_merkle_new(&hs.tree, LD_MERKLE_RLN_DEPTH) != 0) {
    return 1;
  }
  hs.next = 0;
  report("Merkle tree depth 20: set one leaf (20 hashes)", seconds_per_call(merkle_set, &hs, 10),
         "us");
  ld_merkle_free(hs.tree);

  verify_state_t *vs = calloc(1, sizeof *vs);
  if (load_vectors(vs) != 0) {
    return 1;
  }
  report("RLN-v2 verifier set-up (parse key, e(alpha, beta), lines)",
         seconds_per_call(rln_verifier_new, NULL, 1), "ms");
  report("RLN-v2 proof verification (decode + Groth16), per proof",
         seconds_per_call(rln_verify, vs, 4), "ms");
  report_batches(vs);
  ld_rln_verifier_free(vs->verifier);
  free(vs);
  return 0;
}
