/* Signed Ethereum transactions against published vectors:
 *  - EIP-1559: the first vectors of ethereumjs-monorepo packages/tx/test/json/eip1559.json (chain
 *    7822, key 0x8f2a…be63; the file gives each signed transaction wrapped as an RLP string, the
 *    two-byte header b87x of which is left out here);
 *  - EIP-155: the example of the EIP's text (key 0x46…46, chain 1, its signing data and signed
 *    transaction, sender 0x9d8a…5a4f);
 *  - addresses: key 1 (0x7e5f…5bdf, a well-known account) and ganache's first deterministic account
 *    (0x90f8…c9c1). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/hex.h"
#include "crypto/keccak.h"
#include "waku/rln/eth_tx.h"

static size_t unhex(const char *hex, uint8_t *out, size_t cap) {
  size_t n = 0;
  assert_int_equal(ld_hex_decode(hex, strlen(hex), out, cap, &n), 0);
  return n;
}

static void secret_of(const char *hex, uint8_t secret[LD_ETH_SECRET_LEN]) {
  assert_int_equal(unhex(hex, secret, LD_ETH_SECRET_LEN), LD_ETH_SECRET_LEN);
}

static void assert_signs_to(const ld_eth_tx_t *tx, const char *key, const char *want_hex) {
  uint8_t secret[LD_ETH_SECRET_LEN], want[512], hash[LD_ETH_TX_HASH_LEN], want_hash[32];
  secret_of(key, secret);
  size_t n = unhex(want_hex, want, sizeof want);
  ld_buf_t raw;
  ld_buf_init(&raw);
  assert_int_equal(ld_eth_tx_sign(tx, secret, &raw, hash), 0);
  assert_int_equal(raw.len, n);
  assert_memory_equal(raw.data, want, n);
  ld_keccak256(want, n, want_hash);
  assert_memory_equal(hash, want_hash, 32);
  ld_buf_clear(&raw);
}

#define EIP1559_KEY "8f2a55949038a9610f50fb23b5883af3b4ecb3c3bb792cbcefbd1542c692be63"

static ld_eth_tx_t eip1559_vector(uint64_t nonce, uint64_t value, uint64_t gas, uint64_t tip,
                                  uint64_t max_fee) {
  ld_eth_tx_t tx = {.type = LD_ETH_TX_EIP1559,
                    .chain_id = 7822,
                    .nonce = nonce,
                    .max_priority_fee_per_gas = tip,
                    .max_fee_per_gas = max_fee,
                    .gas_limit = gas,
                    .has_to = true,
                    .value = value};
  tx.to[18] = 0xaa;
  tx.to[19] = 0xaa;
  return tx;
}

static void eip1559_vectors(void **state) {
  (void)state;
  ld_eth_tx_t tx = eip1559_vector(819, 43203529, 35552, 75853, 121212); /* y parity 0 */
  assert_signs_to(&tx, EIP1559_KEY,
                  "02f870821e8e8203338301284d8301d97c828ae094000000000000000000000000000000000000aa"
                  "aa8402933bc980c080a0d067f2167008c59219652f91cbf8788dbca5f771f6e91e2b7657e85b78b4"
                  "72e0a01d305af9fe81fdba43f0dfcd400ed24dcace0a7e30d4e85701dcaaf484cd079e");
  tx = eip1559_vector(353, 61901619, 32593, 38850, 136295); /* y parity 1 */
  assert_signs_to(&tx, EIP1559_KEY,
                  "02f86f821e8e8201618297c283021467827f5194000000000000000000000000000000000000aaaa"
                  "8403b08b3380c001a004205678f13fc1d7b10feea6513dfa76e24418b6e08097d95c6f93a3b64e53"
                  "6da01d45ad61bfece43862de2cce7d2575a8c1d08c26c87f3cb5f26d7b0be54a91b2");
  tx = eip1559_vector(709, 6478043, 28335, 86252, 94636); /* a three-byte value */
  assert_signs_to(&tx, EIP1559_KEY,
                  "02f86f821e8e8202c5830150ec830171ac826eaf94000000000000000000000000000000000000aa"
                  "aa8362d8db80c001a09880d133cd636f8c8dce32e2c43494b9f2dc000eee8dc61931e09f866ed04b"
                  "46a00e44d5c503c7f08b36c8b062c32a963f3dd20a71e95e3d903bfbe7f4da47cd47");
}

static void eip155_example(void **state) {
  (void)state;
  ld_eth_tx_t tx = {.type = LD_ETH_TX_LEGACY,
                    .chain_id = 1,
                    .nonce = 9,
                    .gas_price = 20000000000u,
                    .gas_limit = 21000,
                    .has_to = true,
                    .value = 1000000000000000000u};
  memset(tx.to, 0x35, sizeof tx.to);
  assert_signs_to(&tx, "4646464646464646464646464646464646464646464646464646464646464646",
                  "f86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a764"
                  "00008025a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cb"
                  "e9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83");
}

/* Call data and contract creation (no `to`) take the same path through the encoder; the
 * transaction hash covers the type byte. */
static void call_data_and_creation(void **state) {
  (void)state;
  uint8_t secret[LD_ETH_SECRET_LEN], hash[32], data[300];
  secret_of(EIP1559_KEY, secret);
  memset(data, 0xab, sizeof data);
  ld_eth_tx_t tx = eip1559_vector(1, 0, 100000, 1, 2);
  tx.has_to = false;
  tx.data = data;
  tx.data_len = sizeof data;
  ld_buf_t raw;
  ld_buf_init(&raw);
  assert_int_equal(ld_eth_tx_sign(&tx, secret, &raw, hash), 0);
  assert_int_equal(raw.data[0], 0x02);
  assert_int_equal(raw.data[1], 0xf9); /* a list of more than 255 bytes */
  /* chainId, nonce, fees, gas, then 0x80 for the missing `to`, 0x80 for value 0 */
  static const uint8_t head[] = {0x82, 0x1e, 0x8e, 0x01, 0x01, 0x02, 0x83, 0x01,
                                 0x86, 0xa0, 0x80, 0x80, 0xb9, 0x01, 0x2c};
  assert_memory_equal(raw.data + 4, head, sizeof head);
  assert_memory_equal(raw.data + 4 + sizeof head, data, sizeof data);
  uint8_t want[32];
  ld_keccak256(raw.data, raw.len, want);
  assert_memory_equal(hash, want, 32);
  ld_buf_clear(&raw);
}

static void addresses(void **state) {
  (void)state;
  struct {
    const char *key, *address;
  } v[] = {
      {"0000000000000000000000000000000000000000000000000000000000000001",
       "7e5f4552091a69125d5dfcb7b8c2659029395bdf"},
      {"4646464646464646464646464646464646464646464646464646464646464646",
       "9d8a62f656a8d1615c1294fd71e9cfb3e4855a4f"},
      {"4f3edf983ac636a65a842ce7c78d9aa706d3b113bce9c46f30d7d21715b23b1d",
       "90f8bf6a479f320ead074411a4b0e7944ea8c9c1"},
  };
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    uint8_t secret[LD_ETH_SECRET_LEN], addr[LD_ETH_ADDRESS_LEN], want[LD_ETH_ADDRESS_LEN];
    secret_of(v[i].key, secret);
    unhex(v[i].address, want, sizeof want);
    assert_int_equal(ld_eth_address(secret, addr), 0);
    assert_memory_equal(addr, want, sizeof want);
  }
}

static void bad_keys_and_arguments(void **state) {
  (void)state;
  uint8_t zero[LD_ETH_SECRET_LEN] = {0}, order[LD_ETH_SECRET_LEN], addr[20], hash[32];
  /* the group order n is not a valid secret */
  secret_of("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141", order);
  assert_int_equal(ld_eth_address(zero, addr), LD_ERR_BAD_KEY);
  assert_int_equal(ld_eth_address(order, addr), LD_ERR_BAD_KEY);
  ld_eth_tx_t tx = eip1559_vector(0, 0, 21000, 1, 1);
  ld_buf_t raw;
  ld_buf_init(&raw);
  assert_int_equal(ld_eth_tx_sign(&tx, zero, &raw, hash), LD_ERR_BAD_KEY);
  assert_int_equal(ld_eth_tx_sign(&tx, order, &raw, hash), LD_ERR_BAD_KEY);
  assert_int_equal(raw.len, 0);
  uint8_t secret[LD_ETH_SECRET_LEN];
  secret_of(EIP1559_KEY, secret);
  tx.type = (ld_eth_tx_type_t)1; /* EIP-2930 is not made here */
  assert_int_equal(ld_eth_tx_sign(&tx, secret, &raw, hash), LD_ERR_INVALID_ARG);
  tx.type = LD_ETH_TX_LEGACY;
  tx.chain_id = UINT64_MAX / 2; /* v would not fit */
  assert_int_equal(ld_eth_tx_sign(&tx, secret, &raw, hash), LD_ERR_INVALID_ARG);
  assert_int_equal(raw.len, 0);
  ld_buf_clear(&raw);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(eip1559_vectors),        cmocka_unit_test(eip155_example),
      cmocka_unit_test(call_data_and_creation), cmocka_unit_test(addresses),
      cmocka_unit_test(bad_keys_and_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
