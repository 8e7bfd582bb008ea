/* Internal fetch of messages by their Waku message hashes from a store peer: a store v3 query
 * with `message_hashes` and include_data (the reduced store's key-value function). Not part of
 * the Messaging API (which exposes no store query to applications): the channel layer uses it
 * as the SDS retrieval-hint fallback when peers did not repair a missing dependency
 * (channels/channel_fetch.h).
 *
 * The store peer is chosen as the messaging client chooses its service peers
 * (messaging/service_peers.h: the configured store node, then connected peers that serve store,
 * then known ones), connected to and asked once. Every entry of the answer is checked: its hash
 * must be one that was asked for and must be the hash of its pubsub topic and message; anything
 * else is dropped and counted (never handed on).
 *
 * Threading: the node's loop thread only. */
#ifndef LD_MESSAGING_STORE_FETCH_H
#define LD_MESSAGING_STORE_FETCH_H

#include <stddef.h>
#include <stdint.h>

#include "node/node.h"
#include "waku/core/message.h"

/* Hashes in one fetch (one store query page). */
#define LD_MESSAGING_FETCH_MAX_HASHES 100u
#define LD_MESSAGING_FETCH_TIMEOUT_MS 10000u

typedef struct ld_messaging_fetcher ld_messaging_fetcher_t;
typedef struct ld_messaging_fetch ld_messaging_fetch_t;

/* A fetched message (borrowed for the call). */
typedef void (*ld_messaging_fetched_fn)(const char *pubsub_topic,
                                        const uint8_t hash[LD_WAKU_HASH_LEN],
                                        const ld_waku_message_t *msg, void *user_data);
/* The end of a fetch: err 0 (the store answered; `found` messages were handed on), or
 * LD_ERR_NOT_FOUND (no store peer), LD_ERR_UNSUPPORTED (the store refused: its key-value
 * function is off, 503), LD_ERR_PROTOCOL (another refusal), or the dial / stream error. */
typedef void (*ld_messaging_fetch_done_fn)(int err, size_t found, void *user_data);

/* A fetcher on `node` (which must outlive it). NULL when out of memory. */
ld_messaging_fetcher_t *ld_messaging_fetcher_new(ld_node_t *node);

/* Cancels every fetch under way (their callbacks are not called) and frees the fetcher. NULL is
 * a no-op. */
void ld_messaging_fetcher_free(ld_messaging_fetcher_t *f);

/* Fetches the messages of `hashes[0..n)` (1..LD_MESSAGING_FETCH_MAX_HASHES; copied): each found
 * one goes to `on_message`, then `done` is called once, both from the loop (never from inside
 * this call). Returns 0, or LD_ERR_INVALID_ARG, LD_ERR_NOT_FOUND (no store peer to ask),
 * LD_ERR_NOMEM; then no callback is called. */
int ld_messaging_fetch_by_hash(ld_messaging_fetcher_t *f, const uint8_t (*hashes)[LD_WAKU_HASH_LEN],
                               size_t n, ld_messaging_fetched_fn on_message,
                               ld_messaging_fetch_done_fn done, void *user_data);

/* Entries dropped because they were not asked for or did not hash to what they claimed. */
uint64_t ld_messaging_fetcher_rejected(const ld_messaging_fetcher_t *f);

#endif
