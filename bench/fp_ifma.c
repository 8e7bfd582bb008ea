/* BN254 Fp multiplication: the scalar code (ld_fp_mul, 4 x 64 bits, mulx/adcx/adox) against
 * eight lanes with AVX-512 IFMA (ld_fp8_mul, 5 x 52 bits), in ns of process CPU time per Fp
 * product. Each figure is the best of `reps` runs (other jobs on a shared core only slow a run
 * down).
 *
 *   bench_fp_ifma [reps]
 *
 * Figures: a dependent chain (x = x * y: latency), independent chains (throughput), a long
 * array of independent products r[i] = a[i] * b[i], and the cost of converting eight elements
 * to the eight-lane form and back. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"
#include "zk/field.h"
#include "zk/fp_ifma.h"

#define CHAIN 200000
#define ARRAY 4096 /* elements: 128 KiB per operand, in the core's L2 */

static uint64_t rng = 0x1234567;

static uint64_t next64(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static void random_fp(ld_fp_t *a) {
  uint8_t b[32];
  for (int i = 0; i < 32; i++) {
    b[i] = (uint8_t)next64();
  }
  b[31] &= 0x1f;
  if (ld_fp_from_bytes(a, b) != 0) {
    abort();
  }
}

static volatile uint64_t sink;

typedef double (*bench_fn)(void); /* returns ns per Fp product */

static double best_of(bench_fn f, int reps) {
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    double ns = f();
    if (ns < best) {
      best = ns;
    }
  }
  return best;
}

static ld_fp_t fa[ARRAY], fb[ARRAY], fr[ARRAY];
static ld_fp8_t *xa, *xb, *xr;

static double scalar_dependent(void) {
  ld_fp_t a = fa[0], b = fb[0];
  double t0 = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID);
  for (int i = 0; i < CHAIN; i++) {
    ld_fp_mul(&a, &a, &b);
  }
  double t1 = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID);
  sink ^= a.l[0];
  return (t1 - t0) * 1e6 / CHAIN;
}

static double scalar_four_chains(void) {
  ld_fp_t a[4] = {fa[0], fa[1], fa[2], fa[3]}, b = fb[0];
  double t0 = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID);
  for (int i = 0; i < CHAIN / 4; i++) {
    ld_fp_mul(&a[0], &a[0], &b);
    ld_fp_mul(&a[1], &a[1], &b);
    ld_fp_mul(&a[2], &a[2], &b);
    ld_fp_mul(&a[3], &a[3], &b);
  }
  double t1 = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID);
  sink ^= a[0].l[0] ^ a[1].l[0] ^ a[2].l[0] ^ a[3].l[0];
  return (t1 - t0) * 1e6 / (CHAIN / 4 * 4);
}

static double scalar_array(void) {
  const int rounds = CHAIN / ARRAY;
  double t0 = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID);
  for (int r = 0; r < rounds; r++) {
    for (int i = 0; i < ARRAY; i++) {
      ld_fp_mul(&fr[i], &fa[i], &fb[i]);
    }
  }
  double t1 = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID);
  sink ^= fr[ARRAY - 1].l[0];
  return (t1 - t0) * 1e6 / ((double)rounds * ARRAY);
}

static double fp8_dependent(void) {
  ld_fp8_t x = xa[0], y = xb[0];
  double t0 = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID);
  for (int i = 0; i < CHAIN / LD_FP8_LANES; i++) {
    ld_fp8_mul(&x, &x, &y);
  }
  double t1 = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID);
  sink ^= x.v[0][0];
  return (t1 - t0) * 1e6 / (CHAIN / LD_FP8_LANES * LD_FP8_LANES);
}

static double fp8_two_chains(void) {
  ld_fp8_t x = xa[0], z = xa[1], y = xb[0];
  double t0 = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID);
  for (int i = 0; i < CHAIN / (2 * LD_FP8_LANES); i++) {
    ld_fp8_mul(&x, &x, &y);
    ld_fp8_mul(&z, &z, &y);
  }
  double t1 = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID);
  sink ^= x.v[0][0] ^ z.v[0][0];
  return (t1 - t0) * 1e6 / (CHAIN / (2 * LD_FP8_LANES) * 2 * LD_FP8_LANES);
}

static double fp8_array(void) {
  const int rounds = CHAIN / ARRAY;
  double t0 = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID);
  for (int r = 0; r < rounds; r++) {
    for (int i = 0; i < ARRAY / LD_FP8_LANES; i++) {
      ld_fp8_mul(&xr[i], &xa[i], &xb[i]);
    }
  }
  double t1 = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID);
  sink ^= xr[0].v[0][0];
  return (t1 - t0) * 1e6 / ((double)rounds * ARRAY);
}

/* ns per element of ld_fp8_from_fp followed by ld_fp8_to_fp. */
static double fp8_convert(void) {
  const int rounds = CHAIN / ARRAY;
  double t0 = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID);
  for (int r = 0; r < rounds; r++) {
    for (int i = 0; i < ARRAY / LD_FP8_LANES; i++) {
      ld_fp8_from_fp(&xr[i], &fa[i * LD_FP8_LANES]);
      ld_fp8_to_fp(&fr[i * LD_FP8_LANES], &xr[i]);
    }
  }
  double t1 = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID);
  sink ^= fr[0].l[0];
  return (t1 - t0) * 1e6 / ((double)rounds * ARRAY);
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 5;
  if (reps < 1) {
    reps = 1;
  }
  for (int i = 0; i < ARRAY; i++) {
    random_fp(&fa[i]);
    random_fp(&fb[i]);
  }
  printf("Fp multiplication, ns of process CPU time per product (best of %d runs)\n", reps);
  printf("  scalar, dependent chain          %7.2f\n", best_of(scalar_dependent, reps));
  printf("  scalar, four independent chains  %7.2f\n", best_of(scalar_four_chains, reps));
  printf("  scalar, array of %d products   %7.2f\n", ARRAY, best_of(scalar_array, reps));
  if (!ld_fp8_available()) {
    printf("  no AVX-512 IFMA on this CPU: the eight-lane figures are skipped\n");
    return 0;
  }
  size_t n8 = ARRAY / LD_FP8_LANES;
  xa = aligned_alloc(64, n8 * sizeof *xa);
  xb = aligned_alloc(64, n8 * sizeof *xb);
  xr = aligned_alloc(64, n8 * sizeof *xr);
  if (xa == NULL || xb == NULL || xr == NULL) {
    return 1;
  }
  for (size_t i = 0; i < n8; i++) {
    ld_fp8_from_fp(&xa[i], &fa[i * LD_FP8_LANES]);
    ld_fp8_from_fp(&xb[i], &fb[i * LD_FP8_LANES]);
  }
  /* the eight-lane products agree with the scalar ones */
  ld_fp_t got[LD_FP8_LANES], want;
  ld_fp8_mul(&xr[0], &xa[0], &xb[0]);
  ld_fp8_to_fp(got, &xr[0]);
  for (int i = 0; i < LD_FP8_LANES; i++) {
    ld_fp_mul(&want, &fa[i], &fb[i]);
    if (!ld_fp_equal(&got[i], &want)) {
      fprintf(stderr, "eight-lane product differs from the scalar one in lane %d\n", i);
      return 1;
    }
  }
  printf("  IFMA x8, dependent chain         %7.2f\n", best_of(fp8_dependent, reps));
  printf("  IFMA x8, two independent chains  %7.2f\n", best_of(fp8_two_chains, reps));
  printf("  IFMA x8, array of %d products  %7.2f\n", ARRAY, best_of(fp8_array, reps));
  printf("  IFMA x8, to and from ld_fp_t     %7.2f per element\n", best_of(fp8_convert, reps));
  free(xa);
  free(xb);
  free(xr);
  return 0;
}
