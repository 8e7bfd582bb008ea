/* The reliability options of the node configuration (see config.h). */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "node/config.h"

/* A peer's presence counts only for messages newer than the session window's start plus the 20 s
 * of clock tolerance (waku/nrs/presence.h): a shorter window leaves nothing to confirm, so 60 s is
 * the least that leaves a send 40 s to be confirmed in. */
#define MIN_WINDOW_MS 60000ull
#define MAX_WINDOW_MS (24ull * 3600 * 1000)

const char *ld_node_reliability_mode_name(ld_node_reliability_mode_t mode) {
  return mode == LD_NODE_RELIABILITY_P2P ? "p2p" : "store";
}

int ld_node_config_set_reliability_mode(ld_node_config_t *cfg, const char *text, char *err,
                                        size_t errlen) {
  if (strcmp(text, "store") == 0)
    cfg->reliability_mode = LD_NODE_RELIABILITY_STORE;
  else if (strcmp(text, "p2p") == 0)
    cfg->reliability_mode = LD_NODE_RELIABILITY_P2P;
  else
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "reliability mode must be store or p2p, not '%s'", text);
  return 0;
}

int ld_node_config_set_reliability_window(ld_node_config_t *cfg, const char *text, char *err,
                                          size_t errlen) {
  char *end = NULL;
  unsigned long long n = text[0] >= '0' && text[0] <= '9' ? strtoull(text, &end, 10) : 0;
  unsigned long long unit = 0;
  if (end != NULL && end != text) {
    if (*end == '\0' || strcmp(end, "s") == 0)
      unit = 1000;
    else if (strcmp(end, "ms") == 0)
      unit = 1;
    else if (strcmp(end, "m") == 0)
      unit = 60000;
    else if (strcmp(end, "h") == 0)
      unit = 3600000;
  }
  if (unit == 0 || n > MAX_WINDOW_MS || n * unit < MIN_WINDOW_MS || n * unit > MAX_WINDOW_MS)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "reliability window must be a duration from 60s to 24h (e.g. 7m), not "
                        "'%s' (sends are confirmed by peers only for messages newer than the "
                        "window's start plus 20s of clock tolerance)",
                        text);
  cfg->reliability_window_ms = n * unit;
  return 0;
}

int ld_node_config_set_local_storage_path(ld_node_config_t *cfg, const char *path, char *err,
                                          size_t errlen) {
  size_t len = strlen(path);
  if (len >= sizeof cfg->local_storage_path)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "local storage path is too long");
  memcpy(cfg->local_storage_path, path, len + 1);
  return 0;
}
