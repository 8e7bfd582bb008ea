/* Fuzz target: the create_node configuration JSON parser (lib/config_json.c, node/options.c)
 * never crashes or leaks on any bytes; a refusal always carries a one-line reason, and an
 * accepted configuration is finalized (shards chosen, ports in range, names recorded bounded). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "lib/config_json.h"

static ld_lib_config_t g_cfg;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[512];
  memset(err, 'x', sizeof err);
  int rc = ld_lib_config_parse((const char *)data, size, &g_cfg, err, sizeof err);
  if (memchr(err, '\0', sizeof err) == NULL)
    abort(); /* the reason is always terminated */
  if (rc != 0) {
    if (err[0] == '\0' && rc != LD_ERR_NOMEM)
      abort(); /* every refusal says why */
    return 0;
  }
  const ld_node_config_t *c = &g_cfg.node;
  if (c->n_shards == 0 || c->n_shards > LD_NODE_MAX_SHARDS || c->n_inert > LD_NODE_MAX_INERT)
    abort();
  if (g_cfg.entry_layer > LD_LIB_LAYER_CHANNELS || (c->lightpush && !c->relay))
    abort();
  for (size_t i = 0; i < c->n_inert; i++)
    if (c->inert[i] == NULL || c->inert[i][0] == '\0')
      abort();
  return 0;
}
