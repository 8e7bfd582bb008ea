/* The registration's call data (as the contract's ABI lays it out: selector 0x6bfdc994 of
 * register(uint256,uint32,uint256[]), the commitment, the limit, the array's offset 0x60 and length
 * 0) and the receipt reader, with what a lying endpoint may send instead of a receipt. The event
 * topic 0x09f1…090a is keccak256("MembershipRegistered(uint256,uint256,uint32)") as an EVM
 * (ganache's web3_sha3) computes it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "waku/rln/eth_register.h"

#define HASH "0x1111111111111111111111111111111111111111111111111111111111111111"
#define CONTRACT "0x5fbdb2315678afecb367f032d93f642f64180aa3"
#define TOPIC "0x09f1fd9af917aa77238ff2affbec28a0028188d74c0d4f974364cd383ce7090a"
#define IDC "00000000000000000000000000000000000000000000000000000000000000ab"
#define WORD_5 "0000000000000000000000000000000000000000000000000000000000000005"
#define WORD_7 "0000000000000000000000000000000000000000000000000000000000000007"

static uint8_t g_hash[32], g_contract[20], g_idc[32];

static int setup(void **state) {
  (void)state;
  memset(g_hash, 0x11, sizeof g_hash);
  size_t len;
  assert_int_equal(ld_eth_hex_data(CONTRACT, g_contract, sizeof g_contract, &len), 0);
  memset(g_idc, 0, sizeof g_idc);
  g_idc[31] = 0xab;
  return 0;
}

static void call_data(void **state) {
  (void)state;
  char hex[LD_ETH_CALL_HEX_MAX];
  ld_eth_register_call_data(g_idc, 5, hex);
  assert_string_equal(hex, "0x6bfdc994" IDC WORD_5
                           "0000000000000000000000000000000000000000000000000000000000000060"
                           "0000000000000000000000000000000000000000000000000000000000000000");
}

/* A receipt as ganache sends it, with `status`, and one log (or none). */
static json_t *receipt(const char *status, const char *log_address, const char *topic,
                       const char *data) {
  json_t *logs = json_array();
  if (log_address != NULL)
    json_array_append_new(logs, json_pack("{s:s, s:[s], s:s, s:s}", "address", log_address,
                                          "topics", topic, "data", data, "logIndex", "0x0"));
  /* an unrelated log first: another contract's event */
  json_array_insert_new(logs, 0,
                        json_pack("{s:s, s:[s], s:s}", "address",
                                  "0x0000000000000000000000000000000000000001", "topics", TOPIC,
                                  "data", "0x"));
  return json_pack("{s:s, s:s, s:s, s:o}", "transactionHash", HASH, "status", status, "blockNumber",
                   "0x2a", "logs", logs);
}

static int read_receipt(json_t *r, ld_eth_registration_t *out, char *err, size_t errlen) {
  int rc = ld_eth_registration_from_receipt(r, g_hash, g_contract, g_idc, out, err, errlen);
  json_decref(r);
  return rc;
}

static void reads_the_event(void **state) {
  (void)state;
  ld_eth_registration_t reg;
  char err[256] = "";
  int rc =
      read_receipt(receipt("0x1", CONTRACT, TOPIC, "0x" IDC WORD_5 WORD_7), &reg, err, sizeof err);
  assert_int_equal(rc, 0);
  assert_int_equal(reg.index, 7);
  assert_int_equal(reg.rate_limit, 5);
  assert_int_equal(reg.block_number, 42);
  /* a checksummed (mixed-case) address is the same address */
  rc = read_receipt(
      receipt("0x1", "0x5FbDB2315678afecb367f032d93F642f64180aa3", TOPIC, "0x" IDC WORD_5 WORD_7),
      &reg, err, sizeof err);
  assert_int_equal(rc, 0);
  assert_int_equal(reg.index, 7);
}

static void refusals(void **state) {
  (void)state;
  ld_eth_registration_t reg;
  char err[256];
  struct {
    json_t *receipt;
    int code;
    const char *why;
  } cases[] = {
      {receipt("0x0", CONTRACT, TOPIC, "0x" IDC WORD_5 WORD_7), LD_ERR_REFUSED,
       "the transaction reverted (status 0x0) in block 42"},
      {receipt("0x1", NULL, NULL, NULL), LD_ERR_NOT_FOUND,
       "the receipt (1 logs) has no MembershipRegistered event of the contract"},
      {receipt("0x1", "0x5fbdb2315678afecb367f032d93f642f64180aa4", TOPIC, "0x" IDC WORD_5 WORD_7),
       LD_ERR_NOT_FOUND, "the receipt (2 logs) has no MembershipRegistered event of the contract"},
      {receipt("0x1", CONTRACT, HASH, "0x" IDC WORD_5 WORD_7), LD_ERR_NOT_FOUND,
       "the receipt (2 logs) has no MembershipRegistered event of the contract"},
      {receipt("0x1", CONTRACT, TOPIC, "0x" WORD_7 WORD_5 WORD_7), LD_ERR_PROTOCOL,
       "the MembershipRegistered event names another idCommitment"},
      {receipt("0x1", CONTRACT, TOPIC,
               "0x" IDC WORD_5 "0000000000000000000000000000000000000000000000000000000100000000"),
       LD_ERR_PROTOCOL, "the MembershipRegistered event's rate limit or index is out of range"},
      {receipt("0x1", CONTRACT, TOPIC, "0x" IDC WORD_5), LD_ERR_MALFORMED,
       /* the value cut at 80 characters */
       "the receipt's data 0x" IDC "00000000000000 is not 96 bytes of hex"},
      {receipt("0x", CONTRACT, TOPIC, "0x" IDC WORD_5 WORD_7), LD_ERR_MALFORMED,
       "the receipt's status 0x is not a quantity"},
      {json_pack("{s:s, s:s, s:s}", "transactionHash",
                 "0x2222222222222222222222222222222222222222222222222222222222222222", "status",
                 "0x1", "blockNumber", "0x1"),
       LD_ERR_MALFORMED, "the receipt is another transaction's"},
      {json_pack("{s:s, s:s, s:s}", "transactionHash", HASH, "status", "0x1", "blockNumber", "0x1"),
       LD_ERR_MALFORMED, "the receipt has no \"logs\" array"},
      {json_pack("{s:s}", "status", "0x1"), LD_ERR_MALFORMED,
       "the receipt has no \"transactionHash\" string"},
      {json_string("0x1"), LD_ERR_MALFORMED, "the receipt is not a JSON object"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    err[0] = '\0';
    assert_int_equal(read_receipt(cases[i].receipt, &reg, err, sizeof err), cases[i].code);
    assert_string_equal(err, cases[i].why);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(call_data),
      cmocka_unit_test(reads_the_event),
      cmocka_unit_test(refusals),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
