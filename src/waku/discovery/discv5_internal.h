/* State shared by the files of the discv5 engine (discv5*.c); not part of its interface. */
#ifndef LD_WAKU_DISCOVERY_DISCV5_INTERNAL_H
#define LD_WAKU_DISCOVERY_DISCV5_INTERNAL_H

#include "base/hashmap.h"
#include "base/list.h"
#include "base/timerheap.h"
#include "waku/discovery/discv5.h"

/* Node ID ‖ IP length ‖ IP ‖ port: sessions, challenges and handshakes are per endpoint. */
#define PEER_KEY_LEN (LD_DISCV5_NODE_ID_LEN + 1 + 16 + 2)
/* Node ID ‖ request ID without leading zero bytes: how answers find their request. */
#define RESPONSE_KEY_MAX (LD_DISCV5_NODE_ID_LEN + LD_DISCV5_REQ_ID_MAX)
/* Random content of a packet sent before a session exists (nim-eth: the size of the smallest
 * PING, so that it looks like one). */
#define RANDOM_MESSAGE_LEN 20
#define MAX_PINGBACKS 64
/* Largest NODES plaintext in one ordinary packet. */
#define MAX_MESSAGE_PT (LD_DISCV5_MAX_PACKET - LD_DISCV5_MESSAGE_OVERHEAD)
/* Largest request plaintext: it may have to go in a handshake packet with our record. */
#define MAX_REQUEST_PT                                                                             \
  (LD_DISCV5_MAX_PACKET - LD_DISCV5_IV_LEN - LD_DISCV5_STATIC_HEADER_LEN -                         \
   LD_DISCV5_HANDSHAKE_HEAD_LEN - LD_DISCV5_SIG_LEN - LD_DISCV5_EPH_KEY_LEN - LD_ENR_MAX_SIZE -    \
   LD_DISCV5_TAG_LEN)

typedef struct peer_key {
  uint8_t b[PEER_KEY_LEN];
} peer_key_t;

void ld_discv5_peer_key(peer_key_t *k, const uint8_t *id, const ld_discv5_addr_t *a);

typedef enum timer_kind {
  TIMER_REQUEST,
  TIMER_CHALLENGE,
  TIMER_PINGBACK,
  TIMER_REVALIDATE,
  TIMER_REFRESH,
} timer_kind_t;

typedef struct timed {
  ld_timer_t timer; /* first */
  timer_kind_t kind;
} timed_t;

typedef struct session {
  peer_key_t key;
  uint8_t read_key[LD_DISCV5_KEY_LEN];
  uint8_t write_key[LD_DISCV5_KEY_LEN];
  uint32_t counter;
  ld_link_t lru; /* in the sessions' LRU: first is the most recently used */
} session_t;

typedef struct challenge {
  timed_t tm;
  peer_key_t key;
  uint8_t data[LD_DISCV5_CHALLENGE_LEN];
  uint8_t packet[LD_DISCV5_CHALLENGE_LEN];
  bool has_pubkey; /* the record we hold of the node, if any */
  uint8_t pubkey[LD_SECP256K1_PUBLIC_LEN];
} challenge_t;

typedef enum request_owner {
  OWNER_USER,
  OWNER_LOOKUP,
  OWNER_REVALIDATE,
  OWNER_PINGBACK,
  OWNER_ENR_FETCH,
} request_owner_t;

struct lookup;

typedef struct request {
  timed_t tm;
  uint64_t handle;
  request_owner_t owner;
  struct lookup *lookup;
  uint8_t node_id[LD_DISCV5_NODE_ID_LEN];
  uint8_t pubkey[LD_SECP256K1_PUBLIC_LEN];
  ld_discv5_addr_t addr;
  ld_discv5_msg_type_t type;
  uint8_t req_id[LD_DISCV5_REQ_ID_MAX];
  uint8_t req_id_len;
  bool has_nonce; /* the nonce of the packet that carried it last is in nonce_map */
  uint8_t nonce[LD_DISCV5_NONCE_LEN];
  bool handshake_sent; /* a WHOAREYOU was answered */
  bool queued;         /* waiting in its peer's handshake queue */
  struct request *queue_next;
  uint8_t *msg; /* the plaintext, for a resend as handshake */
  size_t msg_len;
  uint16_t *distances; /* FINDNODE */
  size_t n_distances;
  /* NODES answers so far */
  uint64_t total;
  uint32_t received;  /* NODES messages */
  uint32_t processed; /* records looked at, valid or not (≤ LD_DISCV5_MAX_NODES_RESULT) */
  uint32_t n_seen;    /* records accepted, by node ID in seen[] */
  uint8_t seen[LD_DISCV5_MAX_NODES_RESULT][LD_DISCV5_NODE_ID_LEN];
  ld_enr_t *found; /* OWNER_USER findnode: the records, reported at the end */
  size_t n_found;
} request_t;

/* A handshake under way with a peer: the request that started it and those waiting. */
typedef struct handshake {
  peer_key_t key;
  request_t *first;
  request_t *queue_head, *queue_tail;
  size_t queued;
} handshake_t;

typedef enum cand_state { CAND_NEW, CAND_ASKED, CAND_DONE, CAND_FAILED } cand_state_t;

typedef struct lookup_cand {
  ld_discv5_node_t node;
  cand_state_t state;
} lookup_cand_t;

typedef struct lookup {
  uint64_t handle;
  uint8_t target[LD_DISCV5_NODE_ID_LEN];
  lookup_cand_t cands[LD_DISCV5_LOOKUP_K];
  size_t n_cands;
  ld_hashmap_t *seen; /* node IDs reported or queued */
  size_t pending, asked, reported;
  struct lookup *next;
} lookup_t;

typedef struct pingback {
  timed_t tm;
  uint8_t node_id[LD_DISCV5_NODE_ID_LEN];
} pingback_t;

typedef struct rate_entry {
  uint8_t key[17]; /* kind ‖ IP */
  uint8_t key_len;
  uint64_t milli_tokens;
  uint64_t last_ms;
  ld_link_t lru; /* in the rate limits' LRU */
} rate_entry_t;

/* A record verified lately (NODES answers repeat the same records): skips the signature check
 * and the node ID computation when it comes again, byte for byte. LRU of max_verified. */
typedef struct verified {
  ld_discv5_node_t node; /* its bytes are the key */
  ld_link_t lru;
} verified_t;

typedef struct vote {
  ld_discv5_addr_t addr;
  uint64_t expiry;
} vote_t;

struct ld_discv5 {
  ld_discv5_config_t cfg;
  char protocol_id[LD_DISCV5_PROTOCOL_ID_LEN + 1];
  ld_privkey_t key;
  ld_enr_t enr;
  uint8_t local_id[LD_DISCV5_NODE_ID_LEN];
  ld_discv5_callbacks_t cb;
  void *ud;
  uint64_t rng[4];
  uint64_t next_handle;
  ld_discv5_table_t *table;
  ld_timerheap_t timers;
  timed_t revalidate_timer, refresh_timer;
  bool populated;
  uint64_t last_lookup_ms;
  /* sessions: peer key → session_t, LRU list */
  ld_hashmap_t *sessions;
  ld_link_t sessions_lru;
  /* challenges: peer key → challenge_t */
  ld_hashmap_t *challenges;
  /* requests: nonce → request_t, response key → request_t; handshakes: peer key → handshake_t */
  ld_hashmap_t *by_nonce, *by_response, *handshakes;
  size_t n_requests;
  lookup_t *lookups;
  size_t n_lookups;
  size_t n_pingbacks;
  /* rate limits: kind ‖ IP → rate_entry_t, LRU list */
  ld_hashmap_t *rates;
  ld_link_t rates_lru;
  /* verified records: record bytes → verified_t, LRU list */
  ld_hashmap_t *verified;
  ld_link_t verified_lru;
  /* PONG address votes: node ID → vote_t */
  ld_hashmap_t *votes;
  uint64_t next_majority_check;
  ld_discv5_stats_t stats;
};

/* discv5.c */
uint64_t ld_discv5_rand(ld_discv5_t *d);
void ld_discv5_emit(ld_discv5_t *d, ld_discv5_event_t *ev);
void ld_discv5_send(ld_discv5_t *d, const ld_discv5_addr_t *to, const uint8_t *data, size_t len);
session_t *ld_discv5_session_get(ld_discv5_t *d, const uint8_t *id, const ld_discv5_addr_t *a);
int ld_discv5_session_put(ld_discv5_t *d, const uint8_t *id, const ld_discv5_addr_t *a,
                          const uint8_t read_key[LD_DISCV5_KEY_LEN],
                          const uint8_t write_key[LD_DISCV5_KEY_LEN]);
void ld_discv5_session_nonce(session_t *s, uint8_t nonce[LD_DISCV5_NONCE_LEN]);
/* An ordinary message packet to a peer we hold a session with; LD_ERR_NOT_FOUND without. */
int ld_discv5_send_message(ld_discv5_t *d, const uint8_t *id, const ld_discv5_addr_t *a,
                           const uint8_t *pt, size_t pt_len);
/* Takes one token of `kind` ('W', 'F') for the IP of `a`; false when none is left. */
bool ld_discv5_rate_allow(ld_discv5_t *d, char kind, const ld_discv5_addr_t *a, uint64_t now);
/* A record from the network, decoded and checked once: from the table or the verified cache
 * when its bytes are known (no signature check), else verified and remembered. Fills `enr` and
 * `n` (seen and bootstrap as the table has them, else false). ld_enr_decode's errors, or
 * LD_ERR_NOT_FOUND for a record without a discv5 endpoint. */
int ld_discv5_check_record(ld_discv5_t *d, const uint8_t *rec, size_t len, ld_enr_t *enr,
                           ld_discv5_node_t *n);
void ld_discv5_vote(ld_discv5_t *d, const uint8_t *node_id, const ld_discv5_addr_t *observed,
                    uint64_t now);
int ld_discv5_arm(ld_discv5_t *d, timed_t *tm, uint64_t deadline);
void ld_discv5_schedule_pingback(ld_discv5_t *d, const uint8_t *node_id, uint64_t now);
void ld_discv5_table_grew(ld_discv5_t *d, uint64_t now);
/* Adds a verified node learnt from the network; emits NODE_ADDED for a new member. */
int ld_discv5_learn(ld_discv5_t *d, const ld_discv5_node_t *n, const ld_enr_t *enr, uint64_t now);

/* discv5_recv.c */
int ld_discv5_recv(ld_discv5_t *d, const ld_discv5_addr_t *from, const uint8_t *data, size_t len,
                   uint64_t now);
void ld_discv5_challenge_expired(ld_discv5_t *d, challenge_t *c);

/* discv5_req.c */
int ld_discv5_request_new(ld_discv5_t *d, request_owner_t owner, const ld_discv5_node_t *to,
                          const ld_discv5_msg_t *m, uint64_t now, request_t **out);
void ld_discv5_request_whoareyou(ld_discv5_t *d, request_t *r, const ld_discv5_packet_t *p,
                                 const ld_discv5_addr_t *from, uint64_t now);
void ld_discv5_request_answer(ld_discv5_t *d, const uint8_t *src_id, const ld_discv5_addr_t *from,
                              const ld_discv5_msg_t *m, uint64_t now);
void ld_discv5_request_expired(ld_discv5_t *d, request_t *r, uint64_t now);
void ld_discv5_request_free_all(ld_discv5_t *d);
int ld_discv5_ping_node(ld_discv5_t *d, request_owner_t owner, const ld_discv5_node_t *n,
                        uint64_t now);

/* discv5_lookup.c */
int ld_discv5_lookup_start(ld_discv5_t *d, const uint8_t *target, uint64_t now, uint64_t *handle);
void ld_discv5_lookup_nodes(ld_discv5_t *d, lookup_t *l, const ld_enr_t *enr,
                            const ld_discv5_node_t *n, uint64_t now);
void ld_discv5_lookup_answered(ld_discv5_t *d, lookup_t *l, const uint8_t *node_id, bool ok,
                               uint64_t now);
void ld_discv5_lookup_free_all(ld_discv5_t *d);
/* nim-eth's lookupDistances: logdistance(target, dest) and its neighbours, 3 in all. */
size_t ld_discv5_lookup_distances(const uint8_t *target, const uint8_t *dest, uint16_t out[3]);

#endif
