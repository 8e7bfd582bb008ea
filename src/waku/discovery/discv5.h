/* The discv5 v5.1 engine, sans-I/O: datagrams and the current time go in; datagrams (through
 * the `send` callback), events (through `event`) and the next deadline come out. The libuv
 * adapter (discv5_uv.h) owns the UDP socket and the timer; tests and benchmarks drive engines
 * over an in-memory network.
 *
 * What it does (devp2p discv5-wire.md, discv5-theory.md; nim-eth's protocol.nim, which nwaku
 * runs, where the specification leaves a choice):
 * - Sessions: keys per (node ID, IP, port) in an LRU cache of max_sessions. A request to a node
 *   without a session goes out as a packet with random content; the WHOAREYOU that answers it is
 *   matched by its nonce and the request is sent again as a handshake packet (our record
 *   included when the challenge's enr-seq is older than ours). Requests made while a handshake
 *   is under way wait in a queue of LD_DISCV5_MAX_QUEUED per peer and go out once the session
 *   exists. An undecryptable packet gets a WHOAREYOU (one outstanding challenge per peer,
 *   resent unchanged while it lives); a handshake packet is checked (record signature, node ID,
 *   ID signature) before any key is derived, and its session kept only when its message
 *   decrypts and decodes.
 * - Requests: PING, FINDNODE and TALKREQ, matched to PONG, NODES and TALKRESP by node ID and
 *   request ID, within request_timeout_ms of the first send. NODES answers are checked as
 *   nim-eth checks them: at most LD_DISCV5_MAX_NODES_RESULT records in all, each verified,
 *   unique, at a requested distance, with an address that is public or in the sender's own
 *   class (loopback, site-local); the rest is dropped and counted.
 * - Answers: PONG with the address a PING came from; FINDNODE from the table (distance 0: our
 *   record; at most 16 seen nodes; over several NODES packets of at most 1280 bytes); TALKREQ
 *   through the `event` callback, answered in the callback or with an empty TALKRESP.
 * - The routing table (discv5_table.h): nodes learnt from NODES answers and from handshakes whose
 *   record matches the packet's address (then pinged back); liveness by PING of the least
 *   recently seen node of a random bucket every 0..revalidate_max_ms; a node that does not answer
 *   is replaced from its bucket's replacement cache (bootstrap nodes stay); a PONG announcing a
 *   newer record fetches it (FINDNODE [0]).
 * - Lookups: Kademlia, alpha LD_DISCV5_ALPHA = 3 requests in flight, each FINDNODE asking the
 *   three distances around the target (nim-eth's lookupDistances), until the 16 closest nodes
 *   seen have all been asked. Every verified record a lookup learns is reported once
 *   (LD_DISCV5_EV_DISCOVERED). A self lookup and a random lookup populate the table when it
 *   first has nodes, and a random lookup runs when none ran for refresh_interval_ms.
 * - Our record: replaced by ld_discv5_set_enr (higher seq); with enr_auto_update, when
 *   ip_vote_threshold nodes we pinged report the same address in their PONG (one vote per node,
 *   votes expire after 5 minutes, checked at most every ip_majority_interval_ms) and it differs
 *   from the record's `ip`/`udp`, the record is re-signed with it and seq + 1.
 * - Floods: WHOAREYOU packets sent and FINDNODE requests answered are rate-limited per source
 *   IP (token buckets); packets beyond go unanswered and are counted.
 *
 * Memory, bounded by the configuration: the table (max_table_nodes × ~430 B), sessions
 * (max_sessions × ~150 B), outstanding challenges (max_challenges × ~200 B), requests in flight
 * (max_requests × (~250 B + the message, ≤ 1.2 KB)), lookups (max_lookups × ~8 KB), rate-limit
 * entries (max_rate_entries × ~64 B), verified records (max_verified × ~800 B) and IP votes
 * (LD_DISCV5_MAX_VOTES × ~80 B). Defaults: about 4.5 MB for a full table, 40 KB of sessions,
 * 200 KB of challenges, 370 KB of requests, 130 KB of lookups, 256 KB of rate-limit entries,
 * 400 KB of verified records. Nothing grows with traffic beyond these caps.
 * - Cost: checking a record's signature is most of a lookup's CPU; a record the table holds, or
 *   one of the last max_verified verified, is recognised by its bytes and not checked again.
 *
 * Threading: one thread at a time (the node's loop). Callbacks run synchronously inside the call
 * that triggers them. `send` must not call into the engine. `event` may call the request
 * functions (lookup, ping, findnode, talkreq, add_enr, set_enr) but not ld_discv5_free,
 * ld_discv5_receive or ld_discv5_handle_timeout. A function that fails calls no callback. */
#ifndef LD_WAKU_DISCOVERY_DISCV5_H
#define LD_WAKU_DISCOVERY_DISCV5_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/key.h"
#include "waku/discovery/discv5_msg.h"
#include "waku/discovery/discv5_packet.h"
#include "waku/discovery/discv5_table.h"
#include "waku/enr/enr.h"

#define LD_DISCV5_ALPHA 3
#define LD_DISCV5_LOOKUP_K 16          /* closest nodes a lookup converges on */
#define LD_DISCV5_LOOKUP_DISTANCES 3   /* distances per lookup FINDNODE */
#define LD_DISCV5_MAX_NODES_RESULT 16  /* records taken from the NODES answers to one request */
#define LD_DISCV5_MAX_QUEUED 8         /* requests waiting for a handshake, per peer */
#define LD_DISCV5_MAX_VOTES 256        /* PONG address votes kept */
#define LD_DISCV5_LOOKUP_MAX_ASKED 64  /* FINDNODE requests one lookup sends at most */
#define LD_DISCV5_LOOKUP_MAX_SEEN 1024 /* node IDs one lookup remembers (reported once each) */
#define LD_DISCV5_VOTE_TTL_MS 300000

typedef struct ld_discv5_config {
  /* LD_DISCV5_PROTOCOL_ID_WAKU ("d5waku", nwaku) or LD_DISCV5_PROTOCOL_ID_ETH ("discv5"). */
  const char *protocol_id;
  /* Our identity (secp256k1) and record: the record must carry this key, and an endpoint
   * (`ip`/`udp`) if others are to reach us through the DHT. Both are copied. */
  const ld_privkey_t *key;
  const ld_enr_t *enr;
  ld_discv5_table_config_t table; /* bits-per-hop, IP limits, max nodes */
  size_t max_sessions;
  size_t max_challenges;
  size_t max_requests;
  size_t max_lookups;
  size_t max_rate_entries;
  size_t max_verified;           /* records whose signature check is remembered */
  uint32_t request_timeout_ms;   /* from the first send to the (last) answer */
  uint32_t handshake_timeout_ms; /* how long a WHOAREYOU challenge stays valid */
  uint32_t revalidate_max_ms;    /* liveness pings every 0..this */
  uint32_t ping_back_max_ms;     /* a node added after its handshake is pinged within this */
  uint32_t refresh_interval_ms;  /* random lookup when none ran for this long */
  bool enr_auto_update;
  uint32_t ip_vote_threshold;
  uint32_t ip_majority_interval_ms;
  /* Per source IP: WHOAREYOU packets and FINDNODE answers per second, and bursts. */
  uint32_t whoareyou_rate, whoareyou_burst;
  uint32_t findnode_rate, findnode_burst;
  uint64_t seed; /* for non-cryptographic choices (targets, buckets, jitter) */
} ld_discv5_config_t;

/* nim-eth's and nwaku's values: protocol "d5waku", bits-per-hop 1, IP limits 2/10, 256
 * sessions, 1024 challenges, 256 requests in flight, 16 lookups, 4096 rate-limit entries, 512
 * verified records,
 * response timeout 4 s, handshake timeout 2 s, revalidation within 10 s, ping back within 5 s,
 * refresh every 5 min, no auto-update, 10 votes checked every 5 min, 20 WHOAREYOU/s burst 40
 * and 20 FINDNODE/s burst 40 per IP, seed 0. key and enr NULL: set them. */
void ld_discv5_config_default(ld_discv5_config_t *cfg);

typedef enum ld_discv5_event_type {
  LD_DISCV5_EV_DISCOVERED = 1, /* enr, node_id, addr, request (lookup or findnode handle) */
  LD_DISCV5_EV_NODE_ADDED,     /* enr, node_id, addr: a new routing table member */
  LD_DISCV5_EV_SESSION,        /* node_id, addr, initiator: a handshake completed */
  LD_DISCV5_EV_LOOKUP_DONE,    /* request, count (records reported), asked */
  LD_DISCV5_EV_PONG,           /* request, node_id, enr_seq, observed */
  LD_DISCV5_EV_NODES,          /* request, node_id, enrs[count]: the findnode's records */
  LD_DISCV5_EV_TALKRESP,       /* request, node_id, payload */
  LD_DISCV5_EV_REQUEST_FAILED, /* request, node_id, error (LD_ERR_TIMEOUT, LD_ERR_PROTOCOL) */
  LD_DISCV5_EV_TALKREQ,        /* node_id, addr, protocol, payload; set reply */
  LD_DISCV5_EV_ENR_UPDATED,    /* enr: our new record */
} ld_discv5_event_type_t;

/* Pointers are valid only during the callback. */
typedef struct ld_discv5_event {
  ld_discv5_event_type_t type;
  uint64_t request; /* the handle a request or lookup call returned */
  int error;
  const ld_enr_t *enr;
  const uint8_t *node_id;
  const ld_discv5_addr_t *addr;
  bool initiator;
  uint64_t enr_seq;
  ld_discv5_addr_t observed;
  const ld_enr_t *enrs;
  size_t count;
  size_t asked;
  const uint8_t *protocol;
  size_t protocol_len;
  const uint8_t *payload;
  size_t payload_len;
  /* TALKREQ: the callback may point these at its answer (valid until it returns, at most
   * LD_DISCV5_MAX_TALK_PAYLOAD bytes); left NULL, the answer is empty. */
  const uint8_t *reply;
  size_t reply_len;
} ld_discv5_event_t;

/* What a TALKRESP answer can carry in one ordinary packet (nim-eth's maxDiscv5TalkRespPayload). */
#define LD_DISCV5_MAX_TALK_PAYLOAD 1177

typedef struct ld_discv5_callbacks {
  /* Required: one datagram (len ≤ LD_DISCV5_MAX_PACKET) for `to`, bytes valid during the call. */
  void (*send)(void *ud, const ld_discv5_addr_t *to, const uint8_t *data, size_t len);
  /* Optional. */
  void (*event)(void *ud, ld_discv5_event_t *ev);
} ld_discv5_callbacks_t;

typedef struct ld_discv5_stats {
  uint64_t packets_in, packets_out, bytes_in, bytes_out;
  uint64_t dropped_malformed; /* not a packet of ours, or a message that does not decode */
  uint64_t dropped_undecryptable;
  uint64_t whoareyou_sent, whoareyou_rate_limited;
  uint64_t handshakes_ok, handshakes_failed; /* handshake packets received (we challenged) */
  uint64_t findnode_answered, findnode_rate_limited;
  uint64_t requests_sent, requests_timed_out, unsolicited;
  uint64_t nodes_records_dropped; /* forged, duplicate, wrong distance or address, over limit */
  uint64_t lookups_done, enr_updates;
} ld_discv5_stats_t;

typedef struct ld_discv5 ld_discv5_t;

/* Creates an engine. `cfg` (with its key and record) and `cb` are copied; `ud` goes to every
 * callback. NULL when the configuration is invalid (no key, a record of another key, a
 * protocol-id that is not 6 bytes, a zero cap or timeout, bad table settings), `send` is
 * missing, or out of memory. */
ld_discv5_t *ld_discv5_new(const ld_discv5_config_t *cfg, const ld_discv5_callbacks_t *cb, void *ud,
                           uint64_t now_ms);

/* Frees everything; no callback is called. NULL is a no-op. */
void ld_discv5_free(ld_discv5_t *d);

/* Adds a verified record to the routing table (a bootstrap node when `bootstrap`: never dropped
 * for failing to answer). Returns an ld_discv5_add_result_t (≥ 0) or LD_ERR_NOT_FOUND (no
 * discv5 endpoint), LD_ERR_LIMIT, LD_ERR_NOMEM. */
int ld_discv5_add_enr(ld_discv5_t *d, const ld_enr_t *enr, bool bootstrap, uint64_t now_ms);

/* One datagram received from `from`. Returns 0 when it was handled (answered, or dropped by
 * policy: a rate limit, an unsolicited answer), or the error that made it drop it (the packet
 * decoder's, LD_ERR_DECRYPT, LD_ERR_BAD_SIGNATURE, LD_ERR_MALFORMED for a message that does
 * not decode, LD_ERR_NOT_FOUND for a handshake without a challenge); nothing else changes then. */
int ld_discv5_receive(ld_discv5_t *d, const ld_discv5_addr_t *from, const uint8_t *data, size_t len,
                      uint64_t now_ms);

/* When ld_discv5_handle_timeout must run next (never UINT64_MAX: maintenance always runs). */
uint64_t ld_discv5_next_deadline(const ld_discv5_t *d);

/* Runs what is due at `now_ms`: request and challenge expiry, liveness pings, refresh lookups. */
void ld_discv5_handle_timeout(ld_discv5_t *d, uint64_t now_ms);

/* Starts a lookup of `target` (NULL: a random ID). *handle (may be NULL) identifies its
 * DISCOVERED and LOOKUP_DONE events. With an empty table it completes at once (LOOKUP_DONE with
 * count 0, before this returns). LD_ERR_LIMIT when max_lookups are running. */
int ld_discv5_lookup(ld_discv5_t *d, const uint8_t target[LD_DISCV5_NODE_ID_LEN], uint64_t now_ms,
                     uint64_t *handle);

/* Requests to the node of `enr` (which needs a discv5 endpoint: else LD_ERR_NOT_FOUND). Answers
 * come as PONG, NODES or TALKRESP events, failures as REQUEST_FAILED, with *handle. distances:
 * 1..LD_DISCV5_MAX_DISTANCES values (0 asks for the node's own record). LD_ERR_LIMIT when
 * max_requests are in flight or the peer's handshake queue is full; LD_ERR_TOO_LARGE for a
 * TALKREQ that does not fit a packet. */
int ld_discv5_ping(ld_discv5_t *d, const ld_enr_t *enr, uint64_t now_ms, uint64_t *handle);
int ld_discv5_findnode(ld_discv5_t *d, const ld_enr_t *enr, const uint16_t *distances, size_t n,
                       uint64_t now_ms, uint64_t *handle);
int ld_discv5_talkreq(ld_discv5_t *d, const ld_enr_t *enr, const uint8_t *protocol,
                      size_t protocol_len, const uint8_t *request, size_t request_len,
                      uint64_t now_ms, uint64_t *handle);

/* Our current record. Valid until the record changes (set_enr, auto-update). */
const ld_enr_t *ld_discv5_local_enr(const ld_discv5_t *d);
const uint8_t *ld_discv5_local_id(const ld_discv5_t *d);

/* Replaces our record with `enr` (same key, higher seq): e.g. new shards or addresses. Emits
 * ENR_UPDATED. LD_ERR_INVALID_ARG for another key, LD_ERR_STATE for a seq not above ours. */
int ld_discv5_set_enr(ld_discv5_t *d, const ld_enr_t *enr);

/* The routing table, for reading (the search loop samples it; tests inspect it). */
ld_discv5_table_t *ld_discv5_table(ld_discv5_t *d);

void ld_discv5_get_stats(const ld_discv5_t *d, ld_discv5_stats_t *out);

/* Sessions held, challenges outstanding, requests in flight, lookups running. */
size_t ld_discv5_sessions(const ld_discv5_t *d);
size_t ld_discv5_challenges(const ld_discv5_t *d);
size_t ld_discv5_requests(const ld_discv5_t *d);
size_t ld_discv5_lookups(const ld_discv5_t *d);

#endif
