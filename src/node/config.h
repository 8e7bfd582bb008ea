/* The validated configuration of a node. The program fills it from flags, environment and
 * config file; the C library from its JSON configuration.
 *
 * Fill it in three steps: ld_node_config_default, then the setters below (each one checks its
 * value and, on failure, returns an LD_ERR_* and writes a one-line reason naming the value to
 * `err`, leaving the configuration unchanged), then ld_node_config_finalize for the checks that
 * involve several options and the defaults that depend on others (the shards). Pure functions on
 * caller storage; any thread. */
#ifndef LD_NODE_CONFIG_H
#define LD_NODE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/key.h"
#include "p2p/multiaddr.h"
#include "p2p/stream.h"
#include "waku/enr/enr.h"

#define LD_NODE_DEFAULT_TCP_PORT 60000
#define LD_NODE_DEFAULT_MAX_CONNECTIONS 50
#define LD_NODE_DEFAULT_MAX_MSG_SIZE (150u * 1024) /* nwaku "150KiB" */
#define LD_NODE_DEFAULT_REST_ADDRESS "127.0.0.1"
#define LD_NODE_DEFAULT_REST_PORT 8645
#define LD_NODE_DEFAULT_METRICS_ADDRESS "127.0.0.1"
#define LD_NODE_DEFAULT_METRICS_PORT 8008
#define LD_NODE_DEFAULT_COLOCATION_LIMIT 5 /* nwaku DefaultColocationLimit; 0 = no limit */
/* With static sharding and no --shard, the node subscribes to shards 0..7 of its cluster. */
#define LD_NODE_DEFAULT_STATIC_SHARDS 8

/* A serialized message and its gossipsub framing (nwaku's 64 KiB protocol overhead) must fit in
 * one stream write. */
#define LD_NODE_MAX_MSG_SIZE_LIMIT (LD_STREAM_MAX_BUFFERED - 64u * 1024)
#define LD_NODE_MAX_CONNECTIONS_LIMIT 100000
#define LD_NODE_MAX_SHARD 1023 /* shard indices are 0..1023 (ENR rs/rsv) */
#define LD_NODE_MAX_SHARDS_IN_NETWORK 1024
#define LD_NODE_MAX_SHARDS 1024         /* --shard values (or the autosharding default) */
#define LD_NODE_MAX_CONTENT_TOPICS 64   /* --content-topic values */
#define LD_NODE_CONTENT_TOPIC_MAX 256   /* bytes of one content topic, NUL included */
#define LD_NODE_MAX_STATIC_NODES 64     /* --staticnode values */
#define LD_NODE_DNS_URL_MAX 330         /* enrtree:// URL with its NUL */
#define LD_NODE_MAX_EXT_MULTIADDRS 16   /* --ext-multiaddr values */
#define LD_NODE_DNS4_NAME_MAX 254       /* --dns4-domain-name with its NUL */
#define LD_NODE_MAX_DNS_NAME_SERVERS 8  /* --dns-discovery-name-server values */
#define LD_NODE_DNS_NAME_SERVER_MAX 64  /* "[ip6]:port" with its NUL */
#define LD_NODE_MAX_PROTECTED_SHARDS 64 /* --protected-shard values */
#define LD_NODE_ADDRESS_MAX 64          /* an IPv4 or IPv6 literal with its NUL */
#define LD_NODE_SECP256K1_PUBLIC_LEN 33
#define LD_NODE_DEFAULT_REST_CACHE 50 /* --rest-relay-cache-capacity */
#define LD_NODE_MAX_REST_CACHE 10000  /* messages per cached topic */
#define LD_NODE_MAX_REST_ORIGINS 16   /* --rest-allow-origin values */
#define LD_NODE_REST_ORIGIN_MAX 256   /* bytes of one origin pattern, NUL included */

#define LD_NODE_DEFAULT_WS_PORT 8000 /* --websocket-port */
#define LD_NODE_PATH_MAX 1024        /* a file path with its NUL */
#define LD_NODE_URL_MAX 1024         /* --store-message-db-url with its NUL */
#define LD_NODE_POLICY_MAX 256       /* --store-message-retention-policy */
#define LD_NODE_DEFAULT_STORE_DB_URL "sqlite://store.sqlite3"
#define LD_NODE_DEFAULT_RETENTION "time:172800"   /* two days */
#define LD_NODE_DEFAULT_DB_CONNECTIONS 50         /* --store-max-num-db-connections */
#define LD_NODE_DEFAULT_FILTER_TIMEOUT_S 300      /* --filter-subscription-timeout */
#define LD_NODE_DEFAULT_FILTER_MAX_PEERS 1000     /* --filter-max-peers-to-serve */
#define LD_NODE_DEFAULT_FILTER_MAX_CRITERIA 1000  /* --filter-max-criteria */
#define LD_NODE_DEFAULT_STORE_SYNC_INTERVAL_S 300 /* --store-sync-interval */
#define LD_NODE_DEFAULT_STORE_SYNC_RANGE_S 3600   /* --store-sync-range */
#define LD_NODE_DEFAULT_STORE_SYNC_JITTER_S 20    /* --store-sync-relay-jitter */
/* Options accepted and checked but without effect yet (their subsystem does not exist). */
#define LD_NODE_MAX_INERT 128

/* ---- discovery and peer management (config_discovery.c) ---- */
#define LD_NODE_DEFAULT_DISCV5_UDP_PORT 9000
#define LD_NODE_MAX_DISCV5_BOOTNODES 64 /* --discv5-bootstrap-node values */
#define LD_NODE_DEFAULT_RELAY_RATIO                                                                \
  60 /* --relay-service-ratio 60:40 (wakunode2; the library: 50) */
#define LD_NODE_DEFAULT_PEER_DB "peers.db"

/* discv5 (nwaku's --discv5-* flags). */
typedef struct ld_node_discv5_config {
  bool enabled;                /* --discv5-discovery */
  uint16_t udp_port;           /* --discv5-udp-port, ports shift applied; 0 = any */
  bool enr_auto_update;        /* --discv5-enr-auto-update */
  uint32_t table_ip_limit;     /* --discv5-table-ip-limit (10) */
  uint32_t bucket_ip_limit;    /* --discv5-bucket-ip-limit (2) */
  int bits_per_hop;            /* --discv5-bits-per-hop (1) */
  uint32_t search_interval_ms; /* pause between the search loop's lookups (5 s; no flag) */
  size_t n_bootnodes;          /* --discv5-bootstrap-node, verified records */
  ld_enr_t bootnodes[LD_NODE_MAX_DISCV5_BOOTNODES];
} ld_node_discv5_config_t;

/* The peer manager (peer_manager.h). */
typedef struct ld_node_pm_config {
  uint32_t relay_ratio;           /* relay share of max_connections in % (--relay-service-ratio) */
  size_t peer_store_capacity;     /* --peer-store-capacity; 0: the default (1000) */
  bool persistence;               /* --peer-persistence */
  char db_path[LD_NODE_PATH_MAX]; /* SQLite file of the persisted peer store ("peers.db") */
  uint32_t connectivity_interval_ms; /* nwaku's ConnectivityLoopInterval (30 s) */
  uint32_t prune_interval_ms;        /* nwaku's PrunePeerStoreInterval (10 min) */
  uint32_t keepalive_interval_ms;    /* pings of connected peers (2 min) */
  uint32_t initial_backoff_ms;       /* nwaku's InitialBackoffInSec (120 s) */
} ld_node_pm_config_t;

/* The service peers the node's clients use (--storenode, --filternode, --lightpushnode); the node
 * dials them at start and keeps them connected (node.h). */
typedef enum ld_node_service {
  LD_NODE_SERVICE_STORE = 0,
  LD_NODE_SERVICE_FILTER,
  LD_NODE_SERVICE_LIGHTPUSH,
  LD_NODE_SERVICES,
} ld_node_service_t;

/* WebSocket listening (nwaku: one port, /ws, or /wss with --websocket-secure-support). */
typedef struct ld_node_ws_config {
  bool enabled;                     /* --websocket-support */
  uint16_t port;                    /* --websocket-port, ports shift applied */
  bool secure;                      /* --websocket-secure-support: /wss on that port */
  char key_path[LD_NODE_PATH_MAX];  /* --websocket-secure-key-path (PEM) */
  char cert_path[LD_NODE_PATH_MAX]; /* --websocket-secure-cert-path (PEM chain) */
} ld_node_ws_config_t;

/* --protected-shard: messages on `shard` (of the node's cluster) must be signed by this key. */
typedef struct ld_node_protected_shard {
  uint16_t shard;
  uint8_t public_key[LD_NODE_SECP256K1_PUBLIC_LEN]; /* compressed secp256k1 */
  int32_t topic_cluster; /* cluster named by the /waku/2/rs/ form (checked by finalize), or -1 */
} ld_node_protected_shard_t;

/* An HTTP server (REST or metrics). */
typedef struct ld_node_http_config {
  bool enabled;
  char address[LD_NODE_ADDRESS_MAX]; /* IPv4 or IPv6 literal */
  uint16_t port;                     /* final port, ports shift applied */
} ld_node_http_config_t;

/* --nat (nwaku): how the node learns its public address and opens its port. */
typedef enum ld_node_nat {
  LD_NODE_NAT_ANY = 0, /* UPnP, else NAT-PMP (only for a non-loopback listen address) */
  LD_NODE_NAT_NONE,    /* announce the bound addresses */
  LD_NODE_NAT_UPNP,    /* an UPnP IGD port mapping (libminiupnpc) */
  LD_NODE_NAT_PMP,     /* a NAT-PMP port mapping (libnatpmp) */
  LD_NODE_NAT_EXTIP,   /* announce nat_ext_ip, map nothing */
} ld_node_nat_t;

typedef enum ld_node_reliability_mode {
  LD_NODE_RELIABILITY_STORE = 0, /* confirmation and recovery by store queries */
  LD_NODE_RELIABILITY_P2P,       /* by the Network Reliability Service */
} ld_node_reliability_mode_t;

#define LD_NODE_DEFAULT_RELIABILITY_CONFIRM_PEERS 2u
#define LD_NODE_DEFAULT_RELIABILITY_WINDOW_MS (7u * 60u * 1000u)

/* RLN-relay (node_rln.c). A static group only: the members' rate commitments listed in
 * static_group_file (a JSON array of 0x-hex field elements in membership-index order). With
 * cred_path (a JSON object {"identitySecret": "0x<hex>"}) the node is the member at
 * membership_index and attaches proofs to what it publishes; it needs the circuit's proving key
 * and witness graph (circuit_dir/rln_final.zkey, circuit_dir/graph.bin) for that. */
#define LD_NODE_RLN_DEFAULT_USER_MESSAGE_LIMIT 1
#define LD_NODE_RLN_DEFAULT_EPOCH_SEC 1
#define LD_NODE_RLN_MAX_ETH_CLIENTS 4
#define LD_NODE_RLN_DEFAULT_ETH_CLIENT "http://localhost:8540/"
typedef struct ld_node_rln_config {
  bool enabled; /* --rln-relay */
  bool dynamic; /* --rln-relay-dynamic: the on-chain group (not in this build) */
  char static_group_file[LD_NODE_PATH_MAX];
  char cred_path[LD_NODE_PATH_MAX];
  char circuit_dir[LD_NODE_PATH_MAX];
  bool has_membership_index;
  uint64_t membership_index;
  uint64_t user_message_limit; /* 0: LD_NODE_RLN_DEFAULT_USER_MESSAGE_LIMIT */
  uint64_t epoch_sec;          /* 0: LD_NODE_RLN_DEFAULT_EPOCH_SEC */
  /* nwaku's keystore (cred_path) and the on-chain group (node_rln_chain.c) */
  char cred_password[256]; /* --rln-relay-cred-password */
  char eth_clients[LD_NODE_RLN_MAX_ETH_CLIENTS]
                  [LD_NODE_PATH_MAX]; /* --rln-relay-eth-client-address */
  size_t n_eth_clients;               /* 0: LD_NODE_RLN_DEFAULT_ETH_CLIENT */
  char eth_contract[64];              /* --rln-relay-eth-contract-address: 0x and 40 hex digits */
  uint64_t chain_id;                  /* --rln-relay-chain-id; 0: the endpoint's */
} ld_node_rln_config_t;

typedef struct ld_node_config {
  bool has_nodekey;
  ld_privkey_t nodekey;                     /* used when has_nodekey; otherwise a random key */
  char listen_address[LD_NODE_ADDRESS_MAX]; /* IPv4 or IPv6 literal; "0.0.0.0" by default */
  uint16_t tcp_port;                        /* final port, ports shift applied; 0 = any */
  size_t max_connections;                   /* nwaku --max-connections */
  uint32_t dial_timeout_ms;                 /* outbound dials (TCP + upgrade) */
  size_t colocation_limit;                  /* --ip-colocation-limit; 0 = no limit */

  bool relay;                     /* --relay (default true) */
  uint16_t cluster_id;            /* --cluster-id (default 0) */
  uint16_t num_shards_in_network; /* 0 = static sharding, else autosharding */
  size_t n_shards;                /* --shard, in order, without duplicates */
  uint16_t shards[LD_NODE_MAX_SHARDS];
  size_t n_content_topics; /* --content-topic */
  char content_topics[LD_NODE_MAX_CONTENT_TOPICS][LD_NODE_CONTENT_TOPIC_MAX];
  size_t n_static_nodes; /* --staticnode, each ending in /p2p/<id> */
  ld_multiaddr_t static_nodes[LD_NODE_MAX_STATIC_NODES];
  /* NAT and announced addresses (node_nat.c): --nat, --ext-multiaddr, --ext-multiaddr-only,
   * --dns4-domain-name. */
  ld_node_nat_t nat;
  char nat_ext_ip[LD_NODE_ADDRESS_MAX]; /* LD_NODE_NAT_EXTIP: the IP literal */
  size_t n_ext_multiaddrs;
  ld_multiaddr_t ext_multiaddrs[LD_NODE_MAX_EXT_MULTIADDRS];
  bool ext_multiaddr_only;
  char dns4_domain_name[LD_NODE_DNS4_NAME_MAX];
  /* DNS discovery (node_dns.c): --dns-discovery-url ("" none) and its name servers ("ip",
   * "ip:port" or "[ip6]:port"; none given: 1.1.1.1 and 1.0.0.1, as nwaku). */
  char dns_discovery_url[LD_NODE_DNS_URL_MAX];
  size_t n_dns_name_servers;
  char dns_name_servers[LD_NODE_MAX_DNS_NAME_SERVERS][LD_NODE_DNS_NAME_SERVER_MAX];
  size_t max_msg_size;       /* --max-msg-size in bytes */
  size_t n_protected_shards; /* --protected-shard */
  ld_node_protected_shard_t protected_shards[LD_NODE_MAX_PROTECTED_SHARDS];

  ld_node_http_config_t rest;       /* --rest, --rest-address, --rest-port */
  bool rest_admin;                  /* --rest-admin */
  size_t rest_relay_cache_capacity; /* --rest-relay-cache-capacity */
  size_t n_rest_allow_origins;      /* --rest-allow-origin */
  char rest_allow_origins[LD_NODE_MAX_REST_ORIGINS][LD_NODE_REST_ORIGIN_MAX];
  ld_node_http_config_t metrics; /* --metrics-server, -address, -port */

  ld_node_ws_config_t ws;

  bool lightpush;                         /* --lightpush: serve lightpush v3 and v2 */
  bool filter;                            /* --filter: serve filter v2 */
  uint32_t filter_subscription_timeout_s; /* --filter-subscription-timeout */
  uint32_t filter_max_peers;              /* --filter-max-peers-to-serve */
  uint32_t filter_max_criteria;           /* --filter-max-criteria */
  bool store;                             /* --store: archive relayed messages and serve store v3 */
  char store_db_url[LD_NODE_URL_MAX];     /* --store-message-db-url */
  char store_retention[LD_NODE_POLICY_MAX]; /* --store-message-retention-policy */
  uint32_t store_max_db_connections;        /* --store-max-num-db-connections */
  bool store_sync;                          /* --store-sync (with --store) */
  uint32_t store_sync_interval_s;           /* --store-sync-interval; 0: no periodic sync */
  uint32_t store_sync_range_s;              /* --store-sync-range */
  uint32_t store_sync_relay_jitter_s;       /* --store-sync-relay-jitter */
  /* The store functions served (waku/store/functions.h); a disabled one is answered 503. */
  bool store_key_value;    /* --store-key-value: by hash with data, listings with data */
  bool store_key_presence; /* --store-key-presence: by hash without data */
  bool store_wayback;      /* --store-wayback: listings by content topic and time */
  /* store-sync stream deadlines (no flag: nwaku has none); 0: the service's defaults */
  uint32_t store_sync_read_timeout_ms;
  uint32_t store_sync_session_timeout_ms;
  /* The Messaging API's reliability (--reliability-mode, --reliability-confirm-peers,
   * --reliability-window): store (default) or p2p, the Network Reliability Service
   * (waku/nrs/nrs.h), which the node then serves to its peers */
  ld_node_reliability_mode_t reliability_mode;
  uint32_t reliability_confirm_peers; /* distinct peers that confirm a send (p2p) */
  uint64_t reliability_window_ms;     /* the NRS's rolling window */
  uint32_t reliability_interval_ms;   /* NRS rounds (no flag); 0: nrs.h's default */
  /* --local-storage-path: where the node keeps small state (p2p reliability's last-online
   * time); empty: nothing is kept */
  char local_storage_path[LD_NODE_PATH_MAX];
  bool peer_exchange; /* --peer-exchange: serve peer exchange */
  bool has_service_node[LD_NODE_SERVICES];
  ld_multiaddr_t service_node[LD_NODE_SERVICES]; /* each ending in /p2p/<id> */

  uint32_t reconnect_min_ms; /* static peers: first redial delay (default 1 s) */
  uint32_t reconnect_max_ms; /* static peers: longest redial delay (default 60 s) */

  bool listen; /* accept connections (default true; clients such as `send` turn it off) */
  /* Disconnect peers that do not answer /vac/waku/metadata/1.0.0 (nwaku always does). Off by
   * default so that plain libp2p peers (js-libp2p gossipsub, canaries) can stay connected; a
   * peer of another cluster is disconnected either way. */
  bool require_metadata;

  ld_node_discv5_config_t discv5;
  ld_node_pm_config_t pm;
  /* RLN-relay with a static group (node_rln.c): --rln-relay, --rln-relay-dynamic,
   * --rln-relay-static-group-file, --rln-relay-cred-path, --rln-relay-membership-index,
   * --rln-relay-user-message-limit, --rln-relay-epoch-sec, --rln-relay-circuit-dir */
  ld_node_rln_config_t rln;
  /* --channels: the node program runs the Reliable Channels layer above its Messaging API client
   * and serves it on REST as /channels/v1 (with --rest); state in --local-storage-path */
  bool channels;

  /* Options that were set but have no effect yet (ld_node_config_add_inert): their names, static
   * strings, in the order first recorded. The node logs them once when it starts. */
  size_t n_inert;
  const char *inert[LD_NODE_MAX_INERT];
} ld_node_config_t;

/* nwaku's defaults: 0.0.0.0, TCP port 60000, 50 connections, random key, relay on, cluster 0,
 * static sharding, 150 KiB messages, REST and metrics off on 127.0.0.1:8645 / :8008; listening,
 * metadata not required. */
void ld_node_config_default(ld_node_config_t *cfg);

/* Sets the node key from 64 hex characters (an optional 0x prefix is accepted). On failure
 * returns LD_ERR_BAD_KEY or LD_ERR_BAD_ENCODING and writes the reason to `err`. */
int ld_node_config_set_nodekey_hex(ld_node_config_t *cfg, const char *hex, char *err,
                                   size_t errlen);

/* Sets listen address and port: `port + shift` must fit in 16 bits (nwaku adds the shift to
 * every port, 0 included). The address must be an IPv4 or IPv6 literal. */
int ld_node_config_set_listen(ld_node_config_t *cfg, const char *address, int64_t port,
                              int64_t shift, char *err, size_t errlen);

/* The REST server and the metrics server: `enabled`, an IP literal, and `port + shift` (0 = any
 * free port). LD_ERR_INVALID_ARG. */
int ld_node_config_set_rest(ld_node_config_t *cfg, bool enabled, const char *address, int64_t port,
                            int64_t shift, char *err, size_t errlen);
int ld_node_config_set_metrics(ld_node_config_t *cfg, bool enabled, const char *address,
                               int64_t port, int64_t shift, char *err, size_t errlen);

/* --rest-relay-cache-capacity: 1..LD_NODE_MAX_REST_CACHE. LD_ERR_INVALID_ARG. */
int ld_node_config_set_rest_cache(ld_node_config_t *cfg, int64_t n, char *err, size_t errlen);

/* --rest-allow-origin: a CORS origin pattern ("localhost:*", "https://app.example"), non-empty,
 * shorter than LD_NODE_REST_ORIGIN_MAX, without blanks. LD_ERR_INVALID_ARG, LD_ERR_LIMIT. */
int ld_node_config_add_rest_origin(ld_node_config_t *cfg, const char *pattern, char *err,
                                   size_t errlen);

/* 1..LD_NODE_MAX_CONNECTIONS_LIMIT. LD_ERR_INVALID_ARG. */
int ld_node_config_set_max_connections(ld_node_config_t *cfg, int64_t n, char *err, size_t errlen);

/* 0..65535. LD_ERR_INVALID_ARG. */
int ld_node_config_set_cluster_id(ld_node_config_t *cfg, int64_t id, char *err, size_t errlen);

/* 0 (static sharding) ..LD_NODE_MAX_SHARDS_IN_NETWORK. LD_ERR_INVALID_ARG. */
int ld_node_config_set_num_shards(ld_node_config_t *cfg, int64_t n, char *err, size_t errlen);

/* Adds a shard index given as decimal text (0..1023; a repeated value is ignored).
 * LD_ERR_INVALID_ARG, LD_ERR_LIMIT (more than LD_NODE_MAX_SHARDS). */
int ld_node_config_add_shard(ld_node_config_t *cfg, const char *text, char *err, size_t errlen);

/* Adds a content topic: `/app/version/name/encoding` or `/generation/app/version/name/encoding`
 * with every part non-empty and the generation a decimal integer. A repeated value is ignored.
 * LD_ERR_INVALID_ARG, LD_ERR_LIMIT. */
int ld_node_config_add_content_topic(ld_node_config_t *cfg, const char *text, char *err,
                                     size_t errlen);

/* Adds a static peer: a multiaddr with a transport and a trailing /p2p/<peer id>; a repeated
 * value is ignored. LD_ERR_INVALID_ARG, LD_ERR_LIMIT. */
int ld_node_config_add_static_node(ld_node_config_t *cfg, const char *text, char *err,
                                   size_t errlen);

/* --nat: any, none, upnp, pmp or extip:<IPv4 or IPv6 literal> (case-insensitive).
 * --ext-multiaddr: a multiaddr to announce (a repeated value is ignored).
 * --dns4-domain-name: a domain name ("" none). LD_ERR_INVALID_ARG, LD_ERR_LIMIT. (config_nat.c) */
int ld_node_config_set_nat(ld_node_config_t *cfg, const char *text, char *err, size_t errlen);
int ld_node_config_add_ext_multiaddr(ld_node_config_t *cfg, const char *text, char *err,
                                     size_t errlen);
int ld_node_config_set_dns4_domain_name(ld_node_config_t *cfg, const char *text, char *err,
                                        size_t errlen);

/* --dns-discovery-url: an enrtree://<key>@<domain> URL, or "" for none. LD_ERR_INVALID_ARG.
 * --dns-discovery-name-server: an IPv4 or IPv6 address, optionally with a port ("ip:port",
 * "[ip6]:port"); a repeated value is ignored. LD_ERR_INVALID_ARG, LD_ERR_LIMIT. (config_dns.c) */
int ld_node_config_set_dns_discovery_url(ld_node_config_t *cfg, const char *text, char *err,
                                         size_t errlen);
int ld_node_config_add_dns_name_server(ld_node_config_t *cfg, const char *text, char *err,
                                       size_t errlen);

/* Sets the largest WakuMessage from a size text ("150KiB", "1MiB", "1500 B", "1.5KB"; see
 * ld_node_parse_size); it must lie in 1..LD_NODE_MAX_MSG_SIZE_LIMIT. LD_ERR_INVALID_ARG. */
int ld_node_config_set_max_msg_size(ld_node_config_t *cfg, const char *text, char *err,
                                    size_t errlen);

/* Adds `<shard>:<public key hex>` or `/waku/2/rs/<cluster>/<shard>:<public key hex>` (nwaku's
 * form; the key is a compressed or uncompressed secp256k1 key, optional 0x). A shard given twice
 * keeps the last key. LD_ERR_INVALID_ARG, LD_ERR_BAD_KEY, LD_ERR_LIMIT. */
int ld_node_config_add_protected_shard(ld_node_config_t *cfg, const char *text, char *err,
                                       size_t errlen);

/* RLN-relay (config_rln.c): paths shorter than LD_NODE_PATH_MAX (LD_ERR_TOO_LARGE); a
 * membership index >= 0, a user message limit and an epoch length >= 1 (LD_ERR_INVALID_ARG). */
int ld_node_config_set_rln_static_group_file(ld_node_config_t *cfg, const char *text, char *err,
                                             size_t errlen);
int ld_node_config_set_rln_cred_path(ld_node_config_t *cfg, const char *text, char *err,
                                     size_t errlen);
int ld_node_config_set_rln_circuit_dir(ld_node_config_t *cfg, const char *text, char *err,
                                       size_t errlen);
int ld_node_config_set_rln_membership_index(ld_node_config_t *cfg, int64_t n, char *err,
                                            size_t errlen);
int ld_node_config_set_rln_user_message_limit(ld_node_config_t *cfg, int64_t n, char *err,
                                              size_t errlen);
int ld_node_config_set_rln_epoch_sec(ld_node_config_t *cfg, int64_t n, char *err, size_t errlen);
/* --rln-relay-cred-password (< 256 bytes), --rln-relay-eth-client-address (an http:// or
 * https:// URL, at most LD_NODE_RLN_MAX_ETH_CLIENTS), --rln-relay-eth-contract-address (0x and
 * 40 hex digits), --rln-relay-chain-id. LD_ERR_INVALID_ARG, LD_ERR_TOO_LARGE, LD_ERR_LIMIT. */
int ld_node_config_set_rln_cred_password(ld_node_config_t *cfg, const char *text, char *err,
                                         size_t errlen);
int ld_node_config_add_rln_eth_client(ld_node_config_t *cfg, const char *text, char *err,
                                      size_t errlen);
int ld_node_config_set_rln_contract(ld_node_config_t *cfg, const char *text, char *err,
                                    size_t errlen);
int ld_node_config_set_rln_chain_id(ld_node_config_t *cfg, int64_t n, char *err, size_t errlen);

/* 0..100000 peers from one IP address (0 = no limit). LD_ERR_INVALID_ARG. */
int ld_node_config_set_colocation_limit(ld_node_config_t *cfg, int64_t n, char *err, size_t errlen);

/* WebSocket: `port + shift` must fit in 16 bits (0 = any); with `secure`, the key and certificate
 * paths are required (checked by finalize; the files are read when the node starts). Paths
 * shorter than LD_NODE_PATH_MAX; NULL leaves a path unchanged. LD_ERR_INVALID_ARG. */
int ld_node_config_set_websocket(ld_node_config_t *cfg, bool enabled, int64_t port, int64_t shift,
                                 bool secure, const char *key_path, const char *cert_path,
                                 char *err, size_t errlen);

/* --store-message-db-url: "sqlite://<path>", "postgres://…" / "postgresql://…" or "memory://".
 * LD_ERR_INVALID_ARG. */
int ld_node_config_set_store_db_url(ld_node_config_t *cfg, const char *url, char *err,
                                    size_t errlen);

/* --store-message-retention-policy: kept as text (shorter than LD_NODE_POLICY_MAX), parsed by
 * the archive when the store starts. LD_ERR_INVALID_ARG. */
int ld_node_config_set_store_retention(ld_node_config_t *cfg, const char *policy, char *err,
                                       size_t errlen);

/* --reliability-mode: "store" or "p2p". --reliability-window: a duration, a number with an
 * optional unit ms, s (the default), m or h, from 10 s to 24 h. LD_ERR_INVALID_ARG. */
int ld_node_config_set_reliability_mode(ld_node_config_t *cfg, const char *text, char *err,
                                        size_t errlen);
int ld_node_config_set_reliability_window(ld_node_config_t *cfg, const char *text, char *err,
                                          size_t errlen);
/* --local-storage-path: shorter than LD_NODE_PATH_MAX ("" keeps nothing). LD_ERR_INVALID_ARG. */
int ld_node_config_set_local_storage_path(ld_node_config_t *cfg, const char *path, char *err,
                                          size_t errlen);
/* "store" / "p2p". */
const char *ld_node_reliability_mode_name(ld_node_reliability_mode_t mode);

/* --storenode / --filternode / --lightpushnode: a multiaddr with a transport and a trailing
 * /p2p/<peer id>. LD_ERR_INVALID_ARG. */
int ld_node_config_set_service_node(ld_node_config_t *cfg, ld_node_service_t which,
                                    const char *text, char *err, size_t errlen);

/* Cross-option checks and derived defaults; call once after the setters:
 * - no --shard: static sharding subscribes to 0..7, autosharding to 0..N-1;
 * - with autosharding every shard (also protected ones) must be < --num-shards-in-network;
 * - content topics with generation > 0 are refused with autosharding;
 * - a --protected-shard given as a pubsub topic must name the node's cluster;
 * - secure WebSocket needs the key and certificate paths (lightpush without relay is accepted:
 *   its pushes are answered 500 "no waku relay found", as nwaku v0.36 answers them).
 * LD_ERR_INVALID_ARG with the reason. */
int ld_node_config_finalize(ld_node_config_t *cfg, char *err, size_t errlen);

/* Parses a size as nwaku's parse_size_units does: a decimal number (',' or '.' for the fraction)
 * then a unit — B, KB (1000), KiB (1024), and here also MB (10^6) and MiB (2^20) — in any case,
 * blanks allowed around them. The result is truncated to whole bytes. LD_ERR_INVALID_ARG with the
 * reason in `err` (may be NULL). */
int ld_node_parse_size(const char *text, uint64_t *bytes, char *err, size_t errlen);

/* Records that the option `name` (a static string such as the option's CLI name) was given but
 * has no effect yet. A name already recorded is ignored; past LD_NODE_MAX_INERT names the rest
 * are dropped (returns LD_ERR_LIMIT). */
int ld_node_config_add_inert(ld_node_config_t *cfg, const char *name);

/* Writes the recorded names joined by ", " (NUL-terminated, truncated to `cap`); returns how many
 * names there are. */
size_t ld_node_config_inert_text(const ld_node_config_t *cfg, char *out, size_t cap);

/* ---- discovery and peer management (config_discovery.c) ---- */

/* Fills cfg->discv5 and cfg->pm with nwaku's defaults (called by ld_node_config_default). */
void ld_node_config_discovery_default(ld_node_config_t *cfg);

/* --discv5-bootstrap-node: an "enr:…" record whose signature verifies. A repeated record is
 * ignored. LD_ERR_INVALID_ARG (with the decoder's reason), LD_ERR_LIMIT. */
int ld_node_config_add_discv5_bootnode(ld_node_config_t *cfg, const char *text, char *err,
                                       size_t errlen);

/* --relay-service-ratio "<relay>:<service>", two integers adding up to 100. LD_ERR_INVALID_ARG. */
int ld_node_config_set_relay_ratio(ld_node_config_t *cfg, const char *text, char *err,
                                   size_t errlen);

/* --peer-store-capacity: 1..LD_NODE_MAX_CONNECTIONS_LIMIT * 10. LD_ERR_INVALID_ARG. */
int ld_node_config_set_peer_store_capacity(ld_node_config_t *cfg, int64_t n, char *err,
                                           size_t errlen);

/* --discv5-bits-per-hop: 1..8. LD_ERR_INVALID_ARG. */
int ld_node_config_set_discv5_bits_per_hop(ld_node_config_t *cfg, int64_t n, char *err,
                                           size_t errlen);

/* True when the shard is subscribed by the configuration (after finalize). */
bool ld_node_config_has_shard(const ld_node_config_t *cfg, uint16_t shard);

/* The key protecting `shard`, or NULL. */
const ld_node_protected_shard_t *ld_node_config_protected_shard(const ld_node_config_t *cfg,
                                                                uint16_t shard);

#endif
