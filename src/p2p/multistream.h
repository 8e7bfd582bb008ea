/* multistream-select 1.0 ("/multistream/1.0.0") as a sans-I/O engine.
 *
 * One engine negotiates one protocol on one byte stream: the security protocol and the muxer of a
 * connection upgrade, and the application protocol of every muxed stream. Bytes received go in
 * with ld_mss_read; bytes to send are appended to the caller's buffer. Every message on the wire
 * is `uvarint(n) ‖ text ‖ '\n'` where n counts the newline; n must be 1..LD_MSS_MAX_MESSAGE.
 *
 * Initiator: ld_mss_start writes the header and the first proposal in one go; each `na` makes the
 * engine propose the next protocol; the exact echo of the proposal is agreement.
 * Listener: answers the initiator's header with its own (unless ld_mss_start already sent it, so
 * both orders work), echoes a supported protocol, answers `na` to the others and answers `ls`
 * with the list of supported protocols (or `na` without a list function). A listener gives up
 * after LD_MSS_MAX_ROUNDS `na`/`ls` answers.
 *
 * Bytes that follow the agreed line belong to the negotiated protocol: ld_mss_read stops right
 * after that line and reports how much of the input it consumed; the rest is the caller's.
 *
 * Caller storage; single-threaded. An engine holds heap memory only while a message is split
 * across reads; ld_mss_clear releases it. */
#ifndef LD_P2P_MULTISTREAM_H
#define LD_P2P_MULTISTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

#define LD_MSS_PROTOCOL_ID "/multistream/1.0.0"
/* Largest message, counting its newline but not its length prefix (go and js reject more). */
#define LD_MSS_MAX_MESSAGE 1024
/* `na` and `ls` answers a listener gives on one negotiation before it fails. */
#define LD_MSS_MAX_ROUNDS 32
/* Protocols listed in an `ls` answer. */
#define LD_MSS_MAX_LIST 64

/* ld_mss_read results besides errors. */
#define LD_MSS_PENDING 0 /* more input needed */
#define LD_MSS_DONE 1    /* a protocol was agreed */

/* Listener: looks up the proposed protocol (`len` bytes, not NUL-terminated, newline stripped).
 * Returns the registry's own NUL-terminated copy of the ID, which must stay valid for as long as
 * the caller uses ld_mss_selected, or NULL to answer `na`. */
typedef const char *(*ld_mss_select_fn)(void *user_data, const char *protocol, size_t len);

/* Listener, optional: stores up to `max` supported protocol IDs in `out` for an `ls` answer and
 * returns how many it stored. */
typedef size_t (*ld_mss_list_fn)(void *user_data, const char **out, size_t max);

typedef struct ld_mss {
  bool initiator;
  bool header_sent;
  bool header_received;
  bool done;
  uint16_t rounds;
  size_t next; /* initiator: index of the proposal awaiting an answer */
  const char *const *protocols;
  size_t n_protocols;
  ld_mss_select_fn select;
  ld_mss_list_fn list;
  void *user_data;
  const char *selected;
  ld_buf_t partial; /* an incomplete message carried over from earlier reads */
} ld_mss_t;

/* Prepares an initiator that proposes `protocols[0..n)` in order (n ≥ 1). The array and the
 * strings must outlive the engine; each ID must be 1..LD_MSS_MAX_MESSAGE-1 bytes. */
void ld_mss_init_initiator(ld_mss_t *m, const char *const *protocols, size_t n);

/* Prepares a listener. `select` is required, `list` optional; `user_data` is passed to both. */
void ld_mss_init_listener(ld_mss_t *m, ld_mss_select_fn select, ld_mss_list_fn list,
                          void *user_data);

/* Releases the partial-message memory. The engine may be initialised again afterwards. */
void ld_mss_clear(ld_mss_t *m);

/* Initiator: appends the header and the first proposal to `out`. Listener: appends the header
 * now instead of waiting for the initiator's (optional). Errors: LD_ERR_STATE when called twice
 * or after the first read, LD_ERR_INVALID_ARG for an empty or oversize proposal, LD_ERR_NOMEM. */
int ld_mss_start(ld_mss_t *m, ld_buf_t *out);

/* Feeds received bytes. Answers and further proposals are appended to `out`. *consumed receives
 * the number of input bytes used: all of them unless the result is LD_MSS_DONE, in which case
 * in[*consumed..len) already belongs to the negotiated protocol.
 * Returns LD_MSS_PENDING, LD_MSS_DONE (also when called again after agreement, consuming
 * nothing), or an error, after which the engine must not be used except for ld_mss_clear:
 *   LD_ERR_NEGOTIATION_FAILED  the first message is not the header, the listener answered
 *                              something other than `na` or the echo, or too many rounds;
 *   LD_ERR_PROTOCOL_UNSUPPORTED  the listener refused every proposal (initiator);
 *   LD_ERR_TOO_LARGE           a message longer than LD_MSS_MAX_MESSAGE;
 *   LD_ERR_MALFORMED           an empty message or one not ending in '\n';
 *   LD_ERR_VARINT_NONMINIMAL, LD_ERR_VARINT_TOO_LONG  a bad length prefix;
 *   LD_ERR_NOMEM. */
int ld_mss_read(ld_mss_t *m, const uint8_t *in, size_t len, size_t *consumed, ld_buf_t *out);

/* The agreed protocol ID after LD_MSS_DONE (initiator: the caller's string; listener: the string
 * `select` returned), NULL before. */
const char *ld_mss_selected(const ld_mss_t *m);

/* Initiator: index of the agreed protocol in the proposal list. */
size_t ld_mss_selected_index(const ld_mss_t *m);

static inline bool ld_mss_is_done(const ld_mss_t *m) {
  return m->done;
}

/* Appends one message `uvarint(len+1) ‖ text ‖ '\n'` to `out` (len+1 ≤ LD_MSS_MAX_MESSAGE). */
int ld_mss_write_message(ld_buf_t *out, const char *text, size_t len);

#endif
