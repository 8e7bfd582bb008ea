/* The Messaging API on the node's REST server (reliability-and-api.md §3.2, §3.3).
 *
 * logos-delivery's paths (text answers as the kernel endpoints; JSON in rest/messaging_json.h):
 *   POST/DELETE /messaging/v1/subscriptions  [content topics] → 200 "OK"; 400 bad body, wrong
 *               Content-Type or "invalid content topic: '<t>': <why>"; 503 without
 *               autosharding; 500 "Subscribe failed: <why>" / "Unsubscribe failed: <why>"
 *   POST   /messaging/v1/messages            MessagingJsonEnvelope → 200 {"requestId"}; 400 bad
 *               body, "Invalid message: <why>" (base64, meta, content topic); 503 without
 *               autosharding; 500 "Send failed: <why>"
 *   GET    /messaging/v1/events/send         [SendStatus…] oldest request first, then forgotten
 *   GET    /messaging/v1/events/send/{requestId}  SendStatus, then forgotten; 400 "Invalid
 *               requestId"; 404 "No send events for requestId: <id>"
 *   GET    /messaging/v1/events/received     [ReceivedMessageRecord…] oldest first, then forgotten
 *   OPTIONS on each of them → 200 "OK"
 *   GET    /health gains "connectionStatus" (rest/health.h)
 * The Messaging API draft's Message Storage paths (JSON answers, errors {"error": "<text>"}):
 *   GET  /message?requestId=<id> | ?hash=<0x…>  MessageRecord; 404 "Message with requestId '<id>'
 *        not found" / "Message with hash '<h>' not found"; 400 bad or missing parameter
 *   GET  /messages?contentTopic=<t> | ?subscriptionId=<id> [&skip=&take=]  [MessageRecord…]
 *        oldest first; 404 "No messages found for contentTopic '<t>'" / "… subscriptionId '<id>'"
 *        when there is none at all (a page past the end is []); skip/take as the draft: both
 *        omitted → all, take=0 → []
 *   POST /subscribe {"pubsubTopic"?, "contentTopic"} → {"subscriptionId"}; 404 "Failed to
 *        subscribe: clusterId <N> is not supported." for another cluster's pubsub topic
 *   POST /unsubscribe {"subscriptionId"} → {"status": "ok"} (an unknown ID is ignored)
 *   GET  /subscriptions → ["<subscriptionId>", …]
 *   (OPTIONS → 200 "OK" on these too.)
 * Subscription IDs listed and resolved are those of the content topics this module has seen
 * (subscribed or sent through REST, or received) that are still subscribed: the client has no
 * enumeration of its subscriptions.
 *
 * Event caches: send timelines of at most LD_REST_MSG_EVENTS_DEFAULT_REQUESTS request IDs and the
 * last LD_REST_MSG_EVENTS_DEFAULT_RECEIVED received messages, filled from the node's broker
 * (LD_EVENT_MESSAGING_*), each entry stamped with the wall clock when cached.
 *
 * Before attach and after detach (and on a node without messaging client) these paths answer
 * 404 LD_REST_MESSAGING_UNAVAILABLE (rest/server_groups.h).
 *
 * Threading: the node's loop thread only. */
#ifndef LD_MESSAGING_MESSAGING_REST_H
#define LD_MESSAGING_MESSAGING_REST_H

#include <jansson.h>
#include <stddef.h>

#include "messaging/messaging.h"

/* The broker provider under which an attached client's REST state is registered. Request: NULL.
 * Response: void * (the state). For this module only. */
#define LD_PROVIDE_MESSAGING_REST "messaging.rest"

/* Installs the Messaging API paths above on the REST server of `m`'s node, starts listening for
 * the client's events and adds the connection status to /health. Call it once `m` can answer
 * calls (the handlers call into it). Returns 0, also when the node runs no REST server (then
 * nothing is installed). Errors (nothing stays installed): LD_ERR_EXISTS (a client is attached
 * to this node already), LD_ERR_LIMIT (broker or route table full), LD_ERR_NOMEM. */
int ld_messaging_rest_attach(ld_messaging_t *m);

/* Removes everything attach installed and frees the caches; the paths answer 404 again. No-op
 * when `m` is not attached. Call it while `m` and its node are still alive (before
 * ld_messaging_free lets go of the client). */
void ld_messaging_rest_detach(ld_messaging_t *m);

/* The draft's MessageRecord of `r`: {"sending"?, "sent"?, "stored", "received", "requestId"?,
 * "messageHash"?, "pubsubTopic"?, "message": {"payload", "contentTopic", "version"?,
 * "timestamp"?, "meta"?, "ephemeral"?, "proof"?}, "error"?}, a field left out when unset
 * (sending and sent exist for the node's own messages only, the message's fields when zero or
 * empty; the message is ld_rest_message_to_sparse_json's, rest/json.h). Hashes "0x" + 64 hex
 * digits, byte fields standard base64. Returns a new reference, or NULL when out of memory. Pure
 * function; any thread. */
json_t *ld_messaging_rest_record_json(const ld_message_record_t *r);

/* A JSON array of `n` MessageRecords (ld_messaging_rest_record_json). */
json_t *ld_messaging_rest_records_json(const ld_message_record_t *const *r, size_t n);

#endif
