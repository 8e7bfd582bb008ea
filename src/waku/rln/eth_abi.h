/* The little of Ethereum's contract ABI and JSON-RPC that RLN's on-chain group needs (nwaku's
 * OnchainGroupManager): call data of view functions whose arguments are static words, decoding
 * of static return words, hex quantities and data, and the JSON-RPC 2.0 response envelope.
 * Everything a JSON-RPC endpoint sends is untrusted: every decoder is bounded and fuzzed
 * (fuzz/rln_eth_abi.c). Pure functions; any thread. */
#ifndef LD_WAKU_RLN_ETH_ABI_H
#define LD_WAKU_RLN_ETH_ABI_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "zk/field.h"

#define LD_ETH_WORD 32
#define LD_ETH_SELECTOR 4
#define LD_ETH_CALL_MAX_WORDS 4
/* "0x" + hex of the selector and the words + NUL */
#define LD_ETH_CALL_HEX_MAX (2 + 2 * (LD_ETH_SELECTOR + LD_ETH_CALL_MAX_WORDS * LD_ETH_WORD) + 1)

/* The first four bytes of keccak256(signature), e.g. "root()". */
void ld_eth_selector(const char *signature, uint8_t out[LD_ETH_SELECTOR]);

/* "0x" hex call data: selector(signature) followed by n (<= LD_ETH_CALL_MAX_WORDS) words.
 * LD_ERR_INVALID_ARG. */
int ld_eth_call_data(const char *signature, const uint8_t (*words)[LD_ETH_WORD], size_t n,
                     char out[LD_ETH_CALL_HEX_MAX]);

void ld_eth_word_from_u64(uint8_t word[LD_ETH_WORD], uint64_t v);
/* A field element as a uint256 word (big-endian). */
void ld_eth_word_from_field(uint8_t word[LD_ETH_WORD], const ld_fr_t *x);

/* "0x" then hex digits, of an even count, into out (at most cap bytes). LD_ERR_BAD_ENCODING,
 * LD_ERR_TOO_LARGE. */
int ld_eth_hex_data(const char *text, uint8_t *out, size_t cap, size_t *len);
/* A JSON-RPC quantity: "0x" then 1 to 16 hex digits. LD_ERR_BAD_ENCODING, LD_ERR_OVERFLOW. */
int ld_eth_quantity(const char *text, uint64_t *out);

/* Word `i` of ABI return data as a canonical field element / a uint64 / a bool.
 * LD_ERR_TRUNCATED (data too short), LD_ERR_OVERFLOW (not a canonical element, above 2^64 - 1,
 * or a bool other than 0 and 1). */
int ld_eth_abi_field(const uint8_t *data, size_t len, size_t i, ld_fr_t *out);
int ld_eth_abi_u64(const uint8_t *data, size_t len, size_t i, uint64_t *out);
int ld_eth_abi_bool(const uint8_t *data, size_t len, size_t i, int *out);

/* The JSON-RPC 2.0 request {"jsonrpc":"2.0","id":id,"method":method,"params":params}; steals
 * `params`. NULL when out of memory. */
json_t *ld_eth_rpc_request(uint64_t id, const char *method, json_t *params);

/* Reads a response body: its "result" (borrowed from *root, which the caller json_decrefs) or
 * the reason it has none. LD_ERR_MALFORMED (not JSON, not a JSON-RPC 2.0 response, another id),
 * LD_ERR_PROTOCOL (an "error" object: its code and message in err). On failure *root is NULL. */
int ld_eth_rpc_response(const char *body, size_t len, uint64_t id, json_t **root,
                        const json_t **result, char *err, size_t errlen);

#endif
