/* The validated configuration of a node. The program fills it from flags, environment and
 * config file; the C library from its JSON configuration. */
#ifndef LD_NODE_CONFIG_H
#define LD_NODE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/key.h"

#define LD_NODE_DEFAULT_TCP_PORT 60000
#define LD_NODE_DEFAULT_MAX_CONNECTIONS 50

typedef struct ld_node_config {
  bool has_nodekey;
  ld_privkey_t nodekey;     /* used when has_nodekey; otherwise a random secp256k1 key */
  char listen_address[64];  /* IPv4 or IPv6 literal; "0.0.0.0" by default */
  uint16_t tcp_port;        /* final port, ports shift applied; 0 = any free port */
  size_t max_connections;   /* nwaku --max-connections */
  uint32_t dial_timeout_ms; /* outbound dials (TCP + upgrade) */
} ld_node_config_t;

/* nwaku's defaults: 0.0.0.0, TCP port 60000, 50 connections, random key. */
void ld_node_config_default(ld_node_config_t *cfg);

/* Sets the node key from 64 hex characters (an optional 0x prefix is accepted). On failure
 * returns LD_ERR_BAD_KEY or LD_ERR_BAD_ENCODING and writes the reason to `err`. */
int ld_node_config_set_nodekey_hex(ld_node_config_t *cfg, const char *hex, char *err,
                                   size_t errlen);

/* Sets listen address and port: `port + shift` must fit in 16 bits (nwaku adds the shift to
 * every port, 0 included). The address must be an IPv4 or IPv6 literal. */
int ld_node_config_set_listen(ld_node_config_t *cfg, const char *address, int64_t port,
                              int64_t shift, char *err, size_t errlen);

#endif
