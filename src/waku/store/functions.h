/* The three functions a store server is reduced to, and how a store v3 query maps onto them.
 *
 * A store server answers three kinds of question (the design "store's limitations"):
 * - key-value (LD_STORE_FN_KEY_VALUE): a message's body, given its hash;
 * - key presence (LD_STORE_FN_KEY_PRESENCE): whether a hash is stored, without its body;
 * - wayback (LD_STORE_FN_WAYBACK): the hashes of the messages stored on a content topic,
 *   newest first, page by page backwards from now.
 * Each can be enabled or disabled on its own (the node's --store-key-value, --store-key-presence
 * and --store-wayback), while the server keeps speaking store v3 to today's clients. A v3 query
 * needs these functions:
 *
 *   message_hashes given, include_data true   → key-value
 *   message_hashes given, include_data false  → key presence
 *   no hashes (a content filter, a time range or nothing at all), include_data false → wayback
 *   no hashes, include_data true (today's full history query) → wayback and key-value: it is a
 *     listing whose entries carry their bodies, which a client of the reduced store gets by a
 *     wayback query followed by key-value queries for the hashes it has not seen.
 *
 * A hash query that also names a content filter (nwaku does not refuse the combination) is a
 * hash query: the hashes decide. Wayback keeps v3's time range and both directions, so that
 * today's clients (js-waku pages backwards with a time range, nwaku's store-based reliability
 * forwards) keep working; "backwards from now" is the query without a time range that pages
 * with include_data false and pagination_forward false.
 *
 * All functions are pure and may be called from any thread. */
#ifndef LD_WAKU_STORE_FUNCTIONS_H
#define LD_WAKU_STORE_FUNCTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "waku/store/codec.h"

/* Bits of a function set. */
#define LD_STORE_FN_KEY_VALUE (1u << 0)
#define LD_STORE_FN_KEY_PRESENCE (1u << 1)
#define LD_STORE_FN_WAYBACK (1u << 2)
#define LD_STORE_FN_ALL (LD_STORE_FN_KEY_VALUE | LD_STORE_FN_KEY_PRESENCE | LD_STORE_FN_WAYBACK)

/* The functions `q` needs (a nonzero set of LD_STORE_FN_* bits, as in the table above). */
uint32_t ld_store_query_functions(const ld_store_query_t *q);

/* The name of one function bit: "key-value", "key-presence", "wayback"; "unknown" otherwise.
 * Static. */
const char *ld_store_function_name(uint32_t fn);

/* Writes the names of the functions in `set` to `out` (capacity `cap` > 0, always
 * NUL-terminated, cut when too small), in the order key-value, key-presence, wayback, separated
 * by ", ". Returns the length written. */
size_t ld_store_functions_text(uint32_t set, char *out, size_t cap);

#endif
