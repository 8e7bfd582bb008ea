/* Fuzz target: what a JSON-RPC endpoint sends the on-chain RLN group (waku/rln/eth_abi.h). The
 * input is read as a JSON-RPC response to request 1; a string result is read as a quantity and
 * as ABI data whose words are decoded as field elements, uint64s and bools. Never a crash; an
 * accepted quantity prints back to itself. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "waku/rln/eth_abi.h"

static void check_quantity(const char *text) {
  uint64_t v = 0, again = 0;
  if (ld_eth_quantity(text, &v) != 0)
    return;
  char buf[24];
  snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  if (ld_eth_quantity(buf, &again) != 0 || again != v)
    abort();
}

static void check_data(const char *text) {
  uint8_t data[20 * LD_ETH_WORD];
  size_t len = 0;
  if (ld_eth_hex_data(text, data, sizeof data, &len) != 0)
    return;
  if (len > sizeof data)
    abort();
  for (size_t i = 0; i <= len / LD_ETH_WORD; i++) {
    ld_fr_t x;
    uint64_t u;
    int b;
    if (ld_eth_abi_field(data, len, i, &x) == 0) {
      uint8_t word[LD_ETH_WORD];
      ld_eth_word_from_field(word, &x);
      if (memcmp(word, data + i * LD_ETH_WORD, LD_ETH_WORD) != 0)
        abort();
    }
    (void)ld_eth_abi_u64(data, len, i, &u);
    (void)ld_eth_abi_bool(data, len, i, &b);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  json_t *root = NULL;
  const json_t *result = NULL;
  char err[256];
  if (ld_eth_rpc_response((const char *)data, size, 1, &root, &result, err, sizeof err) != 0)
    return 0;
  const char *text = json_string_value(result);
  if (text != NULL) {
    check_quantity(text);
    check_data(text);
  }
  json_decref(root);
  return 0;
}
