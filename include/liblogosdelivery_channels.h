/* liblogosdelivery reliable-channel extensions: calls beyond the stable tier (c-api.md §2) that
 * the Reliable Channel LIP asks for. A documented extension of this build; the stable header
 * stays as c-api.md gives it.
 *
 * Every function follows the calling contract of liblogosdelivery.h.
 *
 * Limits of logosdelivery_channel_send (liblogosdelivery.h), per channel: at most 1,000 messages
 * wait for an acknowledgement in SDS's outgoing buffer; further sends wait in the channel's send
 * queue, at most 50,000 messages and 64 MiB of payload, and go out, in order, as
 * acknowledgements make room and as fast as the relay writes them. Nothing accepted is given up
 * to make room: a send beyond the queue is refused with "ChannelSend failed: send queue of
 * channel <id> full (<n> messages, <b> bytes waiting; at most …)", and one beyond 50,000 messages
 * whose events are not all reported with "ChannelSend failed: too many messages in flight on the
 * channel (at most 50000)". Queued sends are kept in the channel's state and resume after a
 * restart under their request IDs. A context with channels reports channel messages as
 * channel_message_received only (not again as message_received).
 *
 * Channel events beyond c-api.md §6 (listener names in brackets):
 *   channel_message_delivered (onChannelMessageDelivered) {"eventType","channelId","requestId"}:
 *     every segment acknowledged by a participant;
 *   channel_message_delivery_error (onChannelMessageDeliveryError) {…,"requestId","error"}:
 *     retransmissions exhausted before that;
 *   channel_message_lost (onChannelMessageLost) {"eventType","channelId","senderId","messageId",
 *     "messageHash","payloadHash","reason"}: what another participant sent and this context will
 *     never deliver, either a causal dependency that no participant repaired and no store returned
 *     within the lost timeout ("reason":"Irretrievable", its SDS messageId and its retrieval hint
 *     messageHash "0x…" when known; the messages that waited for it are delivered without it) or
 *     a segment set that will never reassemble ("Expired" after the reassembly timeout, 300 s;
 *     "Evicted" by the reassembly bounds; "HashMismatch"; payloadHash = hex keccak256 of the whole
 *     payload). A field that does not apply or is unknown is "". */
#pragma once
#ifndef __liblogosdelivery_channels__
#define __liblogosdelivery_channels__

#include <stdint.h>

#include "liblogosdelivery.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An encryption hook: transforms `in[0..in_len)` and points `*out` / `*out_len` at the result,
 * which must stay valid until the function returns (the library copies it). Returns 0 on
 * success; anything else fails the segment (never a fallback to plain text). Runs on the
 * context's worker thread: it must not block or call into the library. */
typedef int (*LogosDeliveryCryptoFn)(void *userData, const uint8_t *in, size_t inLen,
                                     const uint8_t **out, size_t *outLen);

/* Registers the encryption hook pair of channel `channelId` (the channel need not exist yet; the
 * pair stays registered across channel close and create until the node stops): each segment is
 * encrypted before it is wrapped in SDS (so that the SDS routing metadata stays readable and
 * repairs replay the ciphertext), and decrypted once SDS delivers it; a segment that does not
 * decrypt is dropped. NULL for both functions clears the pair (no-op by default: plain text).
 * Reply "" or "ChannelSetEncryption failed: <why>" (node not started, one function NULL but not
 * the other). */
LOGOSDELIVERY_EXPORT int logosdelivery_channel_set_encryption(void *ctx, FFICallBack callback,
                                                              void *userData, const char *channelId,
                                                              LogosDeliveryCryptoFn encryptFn,
                                                              LogosDeliveryCryptoFn decryptFn,
                                                              void *cryptoUserData);

#ifdef __cplusplus
}
#endif

#endif
