/* Fuzz target: an eth_getTransactionReceipt result as generateRlnKeystore --execute reads it
 * (waku/rln/eth_register.h), for transaction 0x11…11, contract 0x5fbd…0aa3 and idCommitment 0xab.
 * The input is the receipt's JSON. Never a crash; an accepted receipt names a block and an index
 * that fits 32 bits, and every refusal says why. */
#include <stdlib.h>
#include <string.h>

#include "waku/rln/eth_register.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const uint8_t contract[LD_ETH_ADDRESS_LEN] = {0x5f, 0xbd, 0xb2, 0x31, 0x56, 0x78, 0xaf,
                                                       0xec, 0xb3, 0x67, 0xf0, 0x32, 0xd9, 0x3f,
                                                       0x64, 0x2f, 0x64, 0x18, 0x0a, 0xa3};
  uint8_t hash[LD_ETH_TX_HASH_LEN], idc[LD_ETH_WORD] = {0};
  memset(hash, 0x11, sizeof hash);
  idc[31] = 0xab;
  json_error_t jerr;
  json_t *root = json_loadb((const char *)data, size, JSON_DECODE_ANY, &jerr);
  if (root == NULL)
    return 0;
  ld_eth_registration_t reg;
  char err[256] = "";
  int rc = ld_eth_registration_from_receipt(root, hash, contract, idc, &reg, err, sizeof err);
  if (rc != 0 && err[0] == '\0')
    abort();
  json_decref(root);
  return 0;
}
