#include "waku/store/functions.h"

#include <stdio.h>
#include <string.h>

static const uint32_t k_order[] = {LD_STORE_FN_KEY_VALUE, LD_STORE_FN_KEY_PRESENCE,
                                   LD_STORE_FN_WAYBACK};

uint32_t ld_store_query_functions(const ld_store_query_t *q) {
  if (q->n_hashes > 0)
    return q->include_data ? LD_STORE_FN_KEY_VALUE : LD_STORE_FN_KEY_PRESENCE;
  return q->include_data ? LD_STORE_FN_WAYBACK | LD_STORE_FN_KEY_VALUE : LD_STORE_FN_WAYBACK;
}

const char *ld_store_function_name(uint32_t fn) {
  switch (fn) {
  case LD_STORE_FN_KEY_VALUE:
    return "key-value";
  case LD_STORE_FN_KEY_PRESENCE:
    return "key-presence";
  case LD_STORE_FN_WAYBACK:
    return "wayback";
  default:
    return "unknown";
  }
}

size_t ld_store_functions_text(uint32_t set, char *out, size_t cap) {
  size_t len = 0;
  out[0] = '\0';
  for (size_t i = 0; i < sizeof k_order / sizeof k_order[0]; i++) {
    if ((set & k_order[i]) == 0)
      continue;
    int n = snprintf(out + len, cap - len, "%s%s", len > 0 ? ", " : "",
                     ld_store_function_name(k_order[i]));
    if (n < 0 || (size_t)n >= cap - len)
      return strlen(out);
    len += (size_t)n;
  }
  return len;
}
