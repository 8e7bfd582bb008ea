/* libp2p identify: /ipfs/id/1.0.0 (request: the responder sends one message and half-closes) and
 * /ipfs/id/push/1.0.0 (the pusher sends one message with its changed info and closes).
 *
 * Two parts: a pure codec (our message from a local-info struct, a remote message into an
 * ld_identify_info_t with caps on everything) and a service on top of the switch that answers
 * requests, identifies every new connection, merges pushes and pushes our own changes. Signed
 * peer records are neither sent nor read (field 8 is skipped), as nwaku does by default. */
#ifndef LD_P2P_IDENTIFY_H
#define LD_P2P_IDENTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "p2p/key.h"
#include "p2p/multiaddr.h"
#include "p2p/peerid.h"
#include "p2p/peerstore.h"
#include "p2p/stream.h"
#include "p2p/switch.h"

#define LD_IDENTIFY_PROTOCOL "/ipfs/id/1.0.0"
#define LD_IDENTIFY_PUSH_PROTOCOL "/ipfs/id/push/1.0.0"
#define LD_IDENTIFY_PROTOCOL_VERSION "ipfs/0.1.0"
#define LD_IDENTIFY_AGENT_VERSION "logosdelivery/" LD_VERSION

/* Largest inbound message body (go and js accept 8 KiB). */
#define LD_IDENTIFY_MAX_MSG 8192
/* Our own message, length prefix included, stays within this (listen addresses are trimmed). */
#define LD_IDENTIFY_MAX_OWN_MSG 4096
/* Bytes read from one identify stream (go may send a second message with its signed record). */
#define LD_IDENTIFY_MAX_READ (2 * LD_IDENTIFY_MAX_MSG + 8)
/* Delimited messages merged from one identify stream. */
#define LD_IDENTIFY_MAX_MESSAGES 4
/* Caps on a decoded message: extra entries are dropped, overlong protocol IDs skipped, overlong
 * version strings cut. */
#define LD_IDENTIFY_MAX_PROTOCOLS 128
#define LD_IDENTIFY_MAX_ADDRS 32
#define LD_IDENTIFY_MAX_PROTOCOL_LEN 256
#define LD_IDENTIFY_MAX_STRING 256
/* Inbound identify and push streams served at the same time on one connection. */
#define LD_IDENTIFY_MAX_INBOUND_STREAMS 4
/* Request, push and push-receive deadline. */
#define LD_IDENTIFY_TIMEOUT_MS 5000

/* ---- decoded information -------------------------------------------------------------------- */

/* What a peer told us. Caller storage: ld_identify_info_init before use, ld_identify_info_clear
 * to free the protocol strings and address arrays. Strings are NUL-terminated valid UTF-8 without
 * NUL bytes; `*_present` flags tell a field that was in the message from an absent one (a push
 * only replaces what it carries). */
typedef struct ld_identify_info {
  ld_peerid_t peer_id; /* the connection's remote peer (set by the decoder from `remote`) */
  bool has_public_key;
  ld_pubkey_t public_key;
  bool has_agent_version;
  char agent_version[LD_IDENTIFY_MAX_STRING + 1];
  bool has_protocol_version;
  char protocol_version[LD_IDENTIFY_MAX_STRING + 1];
  bool protocols_present;
  size_t n_protocols;
  char **protocols; /* n_protocols heap strings */
  bool listen_addrs_present;
  size_t n_listen_addrs;
  ld_multiaddr_t *listen_addrs; /* transport addresses, any /p2p suffix removed */
  bool has_observed_addr;
  ld_multiaddr_t observed_addr;
} ld_identify_info_t;

void ld_identify_info_init(ld_identify_info_t *info);
void ld_identify_info_clear(ld_identify_info_t *info);

/* Deep copy into `dst` (initialised; its old content is cleared first). LD_ERR_NOMEM leaves
 * `dst` empty. */
int ld_identify_info_copy(ld_identify_info_t *dst, const ld_identify_info_t *src);

/* Applies `update` to `dst` as a push does: every field present in `update` replaces the one in
 * `dst`; absent fields are kept. LD_ERR_NOMEM leaves `dst` unchanged. */
int ld_identify_info_merge(ld_identify_info_t *dst, const ld_identify_info_t *update);

bool ld_identify_info_has_protocol(const ld_identify_info_t *info, const char *protocol);

/* ---- codec ---------------------------------------------------------------------------------- */

/* Everything our message says. Borrowed pointers, read only during ld_identify_encode. */
typedef struct ld_identify_local {
  const ld_pubkey_t *public_key; /* required */
  const ld_multiaddr_t *listen_addrs;
  size_t n_listen_addrs;
  const ld_multiaddr_t *observed_addr; /* NULL: omitted */
  const char *const *protocols;
  size_t n_protocols;
  const char *protocol_version; /* NULL: omitted (normally LD_IDENTIFY_PROTOCOL_VERSION) */
  const char *agent_version;    /* NULL: omitted */
} ld_identify_local_t;

/* Appends one length-prefixed Identify message to `out`, fields in field-number order. Listen
 * addresses lose any /p2p suffix; trailing ones are dropped until the whole message fits in
 * LD_IDENTIFY_MAX_OWN_MSG. Returns the number of listen addresses sent (≥ 0), or
 * LD_ERR_INVALID_ARG (no public key), LD_ERR_TOO_LARGE (does not fit even without listen
 * addresses), LD_ERR_NOMEM; `out` is unchanged on error. */
int ld_identify_encode(const ld_identify_local_t *local, ld_buf_t *out);

/* The public key may be absent (push messages); when present it must still match `remote`. */
#define LD_IDENTIFY_KEY_OPTIONAL 1u

/* Decodes the length-prefixed Identify message at the start of data[0..len) into `out`
 * (initialised; cleared first). Unknown fields and signedPeerRecord are skipped; invalid listen
 * or observed addresses and invalid protocol IDs are skipped; counts and lengths are capped as
 * above. `remote` is the connection's peer: out->peer_id is set to it, and the publicKey field
 * must derive it (NULL: no check, and out->peer_id is derived from the key if there is one).
 *
 * Returns the bytes consumed (> 0), or an error, and then `out` is left empty:
 * LD_ERR_TRUNCATED when the message is incomplete (more bytes may complete it);
 * LD_ERR_TOO_LARGE when the length prefix exceeds LD_IDENTIFY_MAX_MSG;
 * LD_ERR_VARINT_NONMINIMAL or LD_ERR_VARINT_TOO_LONG for a malformed length prefix;
 * LD_ERR_BAD_PROTOBUF when the body is not an Identify protobuf;
 * LD_ERR_BAD_KEY when publicKey is missing (unless LD_IDENTIFY_KEY_OPTIONAL) or undecodable;
 * LD_ERR_PEER_ID_MISMATCH when publicKey does not derive `remote`; LD_ERR_NOMEM.
 * Pure function; any thread. */
int ld_identify_decode(const uint8_t *data, size_t len, const ld_peerid_t *remote, unsigned flags,
                       ld_identify_info_t *out);

/* ---- service -------------------------------------------------------------------------------- */

/* Every service function must be called on the switch's loop thread; callbacks come from that
 * loop, never from inside these calls. */
typedef struct ld_identify ld_identify_t;

typedef struct ld_identify_events {
  /* A connection's peer was identified, or a push from it was merged; `info` is the merged view
   * and is valid only during the call. */
  void (*on_identified)(ld_conn_t *c, const ld_identify_info_t *info, void *user_data);
  /* Identifying a connection failed (LD_ERR_TIMEOUT, LD_ERR_PROTOCOL_UNSUPPORTED, a decode error,
   * LD_ERR_RESET, …). Never called with LD_ERR_CLOSED: a connection that goes away while being
   * identified is reported by the switch's on_disconnected only. Optional. */
  void (*on_failed)(ld_conn_t *c, int err, void *user_data);
} ld_identify_events_t;

/* Creates the service on `sw`: registers /ipfs/id/1.0.0 and /ipfs/id/push/1.0.0 and a connection
 * listener that identifies every new connection (both directions). `agent_version` is copied
 * (NULL: LD_IDENTIFY_AGENT_VERSION). NULL on allocation failure or when the protocols are already
 * registered. Because the switch cannot drop handlers or listeners, the service lives as long as
 * the switch: free it only after ld_switch_close has called its `done`. Loop thread only. */
ld_identify_t *ld_identify_new(ld_switch_t *sw, const char *agent_version);

/* Frees the service (see ld_identify_new for when). NULL is a no-op. */
void ld_identify_free(ld_identify_t *id);

/* Sets the event callbacks (`ev` is copied; NULL removes them). */
void ld_identify_set_events(ld_identify_t *id, const ld_identify_events_t *ev, void *user_data);

/* Results are also written to `ps` (borrowed; must outlive the service or be detached with NULL):
 * listen addresses, protocols, versions, public key and last-seen time. */
void ld_identify_set_peerstore(ld_identify_t *id, ld_peerstore_t *ps);

/* Announces `addrs` (copied, at most LD_IDENTIFY_MAX_ADDRS) instead of the switch's bound listen
 * addresses; n = 0 goes back to the switch's. Call ld_identify_push afterwards to tell peers. */
int ld_identify_set_listen_addrs(ld_identify_t *id, const ld_multiaddr_t *addrs, size_t n);

/* Sends our current info on /ipfs/id/push/1.0.0 to every connected peer that advertises it or
 * has not been identified yet. Failures are only logged. Returns the number of pushes started. */
int ld_identify_push(ld_identify_t *id);

/* The merged info of `c`'s peer, or NULL before it has been identified. Valid until the next
 * loop iteration. */
const ld_identify_info_t *ld_identify_get(const ld_identify_t *id, const ld_conn_t *c);

#endif
