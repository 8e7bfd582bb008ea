/* Reed–Solomon parity of a segmented payload (channels/leopard_rs.h, channels/segment.h): CPU
 * time to compute the parity of a payload at the LIP-243 defaults (segment size 102 400 bytes,
 * parity rate 0.125: 1 MiB → 11 data segments of 102 272 bytes and 2 parity segments), and to
 * rebuild the data when `--lost` data segments are missing. Prints figures; never fails on a time.
 *
 *   bench_leopard_rs [--bytes N] [--segment-size N] [--rate-ppm N] [--lost N] [--rounds N] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"
#include "channels/leopard_rs.h"
#include "channels/segment.h"

static size_t g_bytes = 1024 * 1024, g_segment = 102400;
static unsigned g_rate = 125000, g_lost = 2, g_rounds = 20;

static void parse(int argc, char **argv) {
  for (int i = 1; i + 1 < argc; i += 2) {
    unsigned long v = strtoul(argv[i + 1], NULL, 10);
    if (strcmp(argv[i], "--bytes") == 0)
      g_bytes = v;
    else if (strcmp(argv[i], "--segment-size") == 0)
      g_segment = v;
    else if (strcmp(argv[i], "--rate-ppm") == 0)
      g_rate = (unsigned)v;
    else if (strcmp(argv[i], "--lost") == 0)
      g_lost = (unsigned)v;
    else if (strcmp(argv[i], "--rounds") == 0)
      g_rounds = (unsigned)v;
  }
}

int main(int argc, char **argv) {
  parse(argc, argv);
  size_t shard = (g_segment - LD_SEGMENT_PARITY_OVERHEAD) / 64 * 64;
  uint32_t k = (uint32_t)((g_bytes + shard - 1) / shard);
  uint32_t m = ld_segment_parity_count(k, g_rate);
  if (m == 0 || g_lost > m) {
    fprintf(stderr, "no parity for %u segments at %u ppm (or --lost > %u)\n", k, g_rate, m);
    return 1;
  }
  uint8_t *payload = malloc((size_t)k * shard), *pbuf = malloc((size_t)m * shard);
  uint8_t *obuf = malloc((size_t)k * shard);
  uint8_t *parity[256], *out[256];
  const uint8_t *data[256], *have[256];
  uint64_t x = 88172645463325252u;
  for (size_t i = 0; i < (size_t)k * shard; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    payload[i] = i < g_bytes ? (uint8_t)x : 0;
  }
  for (uint32_t j = 0; j < m; j++)
    parity[j] = pbuf + (size_t)j * shard;
  for (uint32_t i = 0; i < k; i++) {
    data[i] = payload + (size_t)i * shard;
    out[i] = obuf + (size_t)i * shard;
  }
  double t0 = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID);
  for (unsigned r = 0; r < g_rounds; r++)
    if (ld_segment_parity(payload, g_bytes, shard, k, m, parity) != 0)
      return 2;
  double enc = (bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID) - t0) / g_rounds;
  memcpy(have, data, k * sizeof *have);
  for (unsigned i = 0; i < g_lost; i++)
    have[i] = NULL; /* the first data segments lost */
  t0 = bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID);
  for (unsigned r = 0; r < g_rounds; r++)
    if (ld_rs_decode(shard, k, m, have, (const uint8_t *const *)parity, out) != 0)
      return 3;
  double dec = (bench_clock_ms(CLOCK_PROCESS_CPUTIME_ID) - t0) / g_rounds;
  if (memcmp(obuf, payload, g_bytes) != 0)
    return 4;
  double mb = g_bytes / 1e6;
  printf("payload %zu bytes: %u data + %u parity segments of %zu bytes (rate %u ppm)\n", g_bytes, k,
         m, shard, g_rate);
  printf("encode parity: %.2f ms CPU, %.0f MB/s of payload\n", enc, mb / (enc / 1e3));
  printf("decode, %u data segments lost: %.2f ms CPU, %.0f MB/s of payload\n", g_lost, dec,
         mb / (dec / 1e3));
  free(payload);
  free(pbuf);
  free(obuf);
  return 0;
}
