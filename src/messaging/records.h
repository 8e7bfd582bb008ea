/* Message records of the Message Storage API (messaging.h's ld_message_record_t): one record per
 * message hash, from own sends and from receptions, kept in insertion order up to a bound (the
 * oldest is dropped first), found by request ID, by hash, or by content topic with skip/take.
 *
 * Flags, as the 2025 messaging-api draft describes them:
 *   sending   own message, delivery under way: true from the send until it propagated without a
 *             confirmation to wait for, was confirmed, failed, or was given up;
 *   sent      own message: propagated with nothing to confirm, or confirmed present in a store;
 *   stored    confirmed present in a store;
 *   received  seen through a subscription;
 *   error     the failure text (NULL when none), cleared when the request later succeeds.
 * The caller updates a record before it publishes the matching event.
 *
 * Records are allocated one by one: a returned pointer stays valid until the record is dropped
 * (by the bound) or the set is freed. Pure data structure; one thread at a time. */
#ifndef LD_MESSAGING_RECORDS_H
#define LD_MESSAGING_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "messaging/messaging.h"
#include "waku/core/message.h"

/* `take` meaning "all that remain". */
#define LD_RECORDS_ALL SIZE_MAX

typedef struct ld_records ld_records_t;

/* Creates an empty set holding at most `max_records` (0: LD_MESSAGING_DEFAULT_MAX_RECORDS).
 * NULL when out of memory. */
ld_records_t *ld_records_new(size_t max_records);
void ld_records_free(ld_records_t *r);

size_t ld_records_count(const ld_records_t *r);

/* Adds the record of an own send: sending, with `request_id` (NUL-terminated,
 * LD_MESSAGING_REQUEST_ID_LEN characters at most), a copy of `msg` and `pubsub_topic`, and
 * `hash` (NULL: not known). When a record of that hash exists already (the message was
 * received first), it takes the request ID and the sending flag. Returns 0, LD_ERR_INVALID_ARG,
 * LD_ERR_EXISTS (the request ID has a record), LD_ERR_NOMEM. */
int ld_records_add_send(ld_records_t *r, const char *request_id, const char *pubsub_topic,
                        const ld_waku_message_t *msg, const uint8_t hash[LD_WAKU_HASH_LEN]);

/* Marks `hash` received on `pubsub_topic`: updates its record, or adds one with a copy of `msg`.
 * Returns 0, LD_ERR_INVALID_ARG, LD_ERR_NOMEM. */
int ld_records_add_received(ld_records_t *r, const char *pubsub_topic,
                            const uint8_t hash[LD_WAKU_HASH_LEN], const ld_waku_message_t *msg);

/* Updates of an own send, found by request ID; false when it has no record (any more).
 * propagated: sending stays true unless `final` (no confirmation follows), then sent.
 * sent:       confirmed: sent and stored, not sending, error cleared.
 * error:      not sending, error set to a copy of `error`.
 * given_up:   not sending (propagated but never confirmed). */
bool ld_records_mark_propagated(ld_records_t *r, const char *request_id, bool final);
bool ld_records_mark_sent(ld_records_t *r, const char *request_id);
bool ld_records_mark_error(ld_records_t *r, const char *request_id, const char *error);
bool ld_records_mark_given_up(ld_records_t *r, const char *request_id);

/* An own send went out as `hash` with `timestamp` (its publisher may have stamped it again after
 * the send: RLN-relay stamps a message that waited for its proof): the record's message takes the
 * timestamp and the record is found by the new hash from now on. false when the request has no
 * record (any more) or out of memory (the record keeps its old hash). */
bool ld_records_set_published(ld_records_t *r, const char *request_id,
                              const uint8_t hash[LD_WAKU_HASH_LEN], int64_t timestamp);

const ld_message_record_t *ld_records_by_request(const ld_records_t *r, const char *request_id);
const ld_message_record_t *ld_records_by_hash(const ld_records_t *r,
                                              const uint8_t hash[LD_WAKU_HASH_LEN]);

/* The records whose message has `content_topic`, oldest first: skips `skip` of them (skip beyond
 * the total: none), then writes at most min(take, max) into `out` (take 0: none;
 * LD_RECORDS_ALL: all that remain) and returns how many it wrote. */
size_t ld_records_by_topic(const ld_records_t *r, const char *content_topic, size_t skip,
                           size_t take, const ld_message_record_t **out, size_t max);

#endif
