/* Fuzz target: the reliability options' text — --reliability-window durations and the
 * last-online file (messaging/resume.h). The first byte picks the parser. An accepted window lies
 * in 10 s … 24 h and leaves the configuration otherwise unchanged; a refused one leaves the
 * window at its default; an accepted last-online time prints back as the input's digits. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "messaging/resume.h"
#include "node/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  const char *text = (const char *)data + 1;
  size_t len = size - 1;
  if (data[0] & 1) {
    uint64_t v = ld_resume_parse(text, len);
    if (v != 0) {
      char back[32];
      int n = snprintf(back, sizeof back, "%llu", (unsigned long long)v);
      size_t digits = len > 0 && text[len - 1] == '\n' ? len - 1 : len;
      if (n < 0 || (size_t)n > digits || memcmp(back, text + (digits - (size_t)n), (size_t)n) != 0)
        abort(); /* leading zeros aside, the digits are the value */
    }
    return 0;
  }
  char *z = malloc(len + 1);
  if (z == NULL)
    abort();
  memcpy(z, text, len);
  z[len] = '\0';
  ld_node_config_t *cfg = malloc(sizeof *cfg);
  if (cfg == NULL)
    abort();
  ld_node_config_default(cfg);
  char err[256];
  int rc = ld_node_config_set_reliability_window(cfg, z, err, sizeof err);
  if (rc == 0 && (cfg->reliability_window_ms < 10000 || cfg->reliability_window_ms > 86400000))
    abort();
  if (rc != 0 && (rc != LD_ERR_INVALID_ARG || cfg->reliability_window_ms != 7u * 60 * 1000))
    abort();
  free(cfg);
  free(z);
  return 0;
}
