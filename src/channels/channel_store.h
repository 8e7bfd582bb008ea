/* The persisted state of reliable channels: one SQLite file per context (WAL,
 * synchronous=NORMAL), so that a context destroyed and created again resumes its channels.
 *
 *   channel(id, topic, sender, lamport)                    one row per channel ever created
 *   state(channel, kind, key, ord, rec)                    the channel's records:
 *     LOG       key = message ID, ord = Lamport,   rec = [uvarint lamport][lp id][lp sender][lp
 * hint] OUTGOING  key = message ID, ord = retransmissions, rec = [lp request ID][lp SDS bytes]
 *     INCOMING  key = message ID, ord = 0,         rec = [lp hint][lp SDS bytes]
 *     QUEUED    key = request ID, ord = queue order, rec = the payload (a send accepted by
 *               channel_send that waits in the channel's send queue, not yet given to SDS)
 * (lp = uvarint length, then the bytes). The log keeps at most the engine's max_log entries per
 * channel (older rows are trimmed); outgoing and incoming rows mirror the engine's bounded
 * buffers. The bloom filter is not stored: it is rebuilt from the log.
 *
 * Writes are grouped: the first write opens a transaction, ld_channel_store_commit ends it (the
 * channel manager commits once per loop event). A write error is logged and counted, never
 * fatal to the channel. Loading checks every record (ld_channel_record_apply) and refuses a
 * channel whose state does not parse. A file that is not an SQLite database, or fails SQLite's
 * quick check, is refused at open with a reason.
 *
 * One thread at a time (the node's loop). */
#ifndef LD_CHANNELS_CHANNEL_STORE_H
#define LD_CHANNELS_CHANNEL_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "channels/sds.h"

#define LD_CHANNEL_STORE_FILE "channels.sqlite3"
/* Longest request ID accepted in a record. */
#define LD_CHANNEL_STORE_MAX_REQUEST_ID 64u

typedef enum ld_channel_record_kind {
  LD_CHANNEL_RECORD_LOG = 1,
  LD_CHANNEL_RECORD_OUTGOING = 2,
  LD_CHANNEL_RECORD_INCOMING = 3,
  LD_CHANNEL_RECORD_QUEUED = 4,
} ld_channel_record_kind_t;
/* Largest payload a QUEUED record holds (the largest segmented payload fits). */
#define LD_CHANNEL_STORE_MAX_QUEUED (64u * 1024 * 1024)

typedef struct ld_channel_store ld_channel_store_t;

/* Opens (or creates) the store at `path` (its directory is created when missing). Errors with a
 * reason: LD_ERR_IO ("cannot open <path>: …"), LD_ERR_DB ("<path> is corrupted: …" for a
 * file that is not a database or fails the quick check), LD_ERR_NOMEM. */
int ld_channel_store_open(const char *path, ld_channel_store_t **out, char *why, size_t why_cap);

/* Commits what is pending and closes. NULL is a no-op. */
void ld_channel_store_close(ld_channel_store_t *st);

/* Ends the open transaction, if any. */
void ld_channel_store_commit(ld_channel_store_t *st);

/* Write errors since open. */
uint64_t ld_channel_store_errors(const ld_channel_store_t *st);

/* SQL write statements run since open. */
uint64_t ld_channel_store_writes(const ld_channel_store_t *st);

/* State rows put and deleted since open, by ld_channel_record_kind_t. */
typedef struct ld_channel_store_counts {
  uint64_t puts[LD_CHANNEL_RECORD_QUEUED + 1];
  uint64_t deletes[LD_CHANNEL_RECORD_QUEUED + 1];
} ld_channel_store_counts_t;

/* The counts since open (zeros for NULL). */
void ld_channel_store_counts(const ld_channel_store_t *st, ld_channel_store_counts_t *out);

/* ---- writes (errors are logged and counted) -------------------------------------------------- */

void ld_channel_store_put_channel(ld_channel_store_t *st, const char *channel_id, const char *topic,
                                  const char *sender, uint64_t lamport);
void ld_channel_store_put_log(ld_channel_store_t *st, const char *channel_id, const char *id,
                              uint64_t lamport, const char *sender, const uint8_t *hint,
                              size_t hint_len);
void ld_channel_store_put_outgoing(ld_channel_store_t *st, const char *channel_id, const char *id,
                                   const char *request_id, const uint8_t *wire, size_t len);
void ld_channel_store_count_retransmission(ld_channel_store_t *st, const char *channel_id,
                                           const char *id);
void ld_channel_store_put_incoming(ld_channel_store_t *st, const char *channel_id, const char *id,
                                   const uint8_t *wire, size_t len, const uint8_t *hint,
                                   size_t hint_len);
void ld_channel_store_put_queued(ld_channel_store_t *st, const char *channel_id,
                                 const char *request_id, uint64_t ord, const uint8_t *payload,
                                 size_t len);
/* Deletes a row. An INCOMING row is deleted only when this store wrote or loaded it (the store
 * keeps their IDs): a message delivered without being buffered costs no write. */
void ld_channel_store_delete(ld_channel_store_t *st, const char *channel_id,
                             ld_channel_record_kind_t kind, const char *id);
/* Keeps the newest `keep` log rows of the channel. */
void ld_channel_store_trim_log(ld_channel_store_t *st, const char *channel_id, size_t keep);

/* ---- loading --------------------------------------------------------------------------------- */

/* What a restored outgoing record gives back to the channel manager. */
typedef void (*ld_channel_restored_fn)(void *user_data, const char *message_id,
                                       const char *request_id);
/* A restored queued send: its request ID, queue order and payload (valid during the call). */
typedef void (*ld_channel_queued_fn)(void *user_data, const char *request_id, uint64_t ord,
                                     const uint8_t *payload, size_t len);

/* The loader's callbacks; either may be NULL. */
typedef struct ld_channel_restore_fns {
  ld_channel_restored_fn outgoing;
  ld_channel_queued_fn queued;
} ld_channel_restore_fns_t;

/* Applies one record to an engine being restored (the loader; see sds.h "persistence"): LOG →
 * ld_sds_restore_logged, OUTGOING → ld_sds_restore_outgoing with `ord` retransmissions (then
 * fns->outgoing with its message and request IDs), INCOMING → ld_sds_receive, QUEUED →
 * fns->queued (a request ID as OUTGOING's, a payload of 1..LD_CHANNEL_STORE_MAX_QUEUED bytes).
 * `fns` may be NULL.
 * Errors with a reason: LD_ERR_MALFORMED (a record that does not parse, an unknown kind, a
 * request ID that is not 1..LD_CHANNEL_STORE_MAX_REQUEST_ID printable characters) or the
 * engine's error. */
int ld_channel_record_apply(ld_sds_t *sds, uint64_t now_ms, int kind, uint64_t ord,
                            const uint8_t *rec, size_t len, const ld_channel_restore_fns_t *fns,
                            void *user_data, char *why, size_t why_cap);

/* ld_channel_record_apply with the row's key (a QUEUED record's request ID; the other kinds
 * ignore it): the loader's entry. */
int ld_channel_record_apply_keyed(ld_sds_t *sds, uint64_t now_ms, int kind, const uint8_t *key,
                                  size_t key_len, uint64_t ord, const uint8_t *rec, size_t len,
                                  const ld_channel_restore_fns_t *fns, void *user_data, char *why,
                                  size_t why_cap);

/* Restores channel `channel_id` of `sender` into the fresh engine `sds`: returns 1 when state was
 * found and applied, 0 when there is none (a channel stored under another sender is wiped), or
 * an error with a reason ("corrupted state of channel <id>: …"). */
int ld_channel_store_load(ld_channel_store_t *st, const char *channel_id, const char *sender,
                          ld_sds_t *sds, uint64_t now_ms, const ld_channel_restore_fns_t *fns,
                          void *user_data, char *why, size_t why_cap);

#endif
