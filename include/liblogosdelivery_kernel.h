/* liblogosdelivery kernel tier: per-protocol functions (relay, filter, lightpush, store, peer
 * management, discovery). Unsupported and unstable: they may change without notice. Use the
 * stable header for lifecycle (create / start / stop / destroy) and event registration.
 *
 * Every function follows the calling contract of liblogosdelivery.h. Relay and filter
 * subscriptions made here deliver their messages as "message" events. Negative timeouts mean no
 * timeout. */
#pragma once
#ifndef __liblogosdelivery_kernel__
#define __liblogosdelivery_kernel__

#include "liblogosdelivery.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version and topics --------------------------------------------------------------------- */

LOGOSDELIVERY_EXPORT int waku_version(void *ctx, FFICallBack callback, void *userData);
/* Reply "/<appName>/<appVersion>/<contentTopicName>/<encoding>". */
LOGOSDELIVERY_EXPORT int waku_content_topic(void *ctx, FFICallBack callback, void *userData,
                                            const char *appName, unsigned int appVersion,
                                            const char *contentTopicName, const char *encoding);
/* Reply "/waku/2/<topicName>". */
LOGOSDELIVERY_EXPORT int waku_pubsub_topic(void *ctx, FFICallBack callback, void *userData,
                                           const char *topicName);
/* Reply "/waku/2/rs/0/0". */
LOGOSDELIVERY_EXPORT int waku_default_pubsub_topic(void *ctx, FFICallBack callback, void *userData);

/* ---- relay ---------------------------------------------------------------------------------- */

/* `jsonWakuMessage`: {"payload":"<b64>","contentTopic":"…","version":N,"timestamp":N,
 * "ephemeral":bool,"meta":"<b64>","proof":"<b64>"}. Reply: the message hash, "0x" + 64 hex. */
LOGOSDELIVERY_EXPORT int waku_relay_publish(void *ctx, FFICallBack callback, void *userData,
                                            const char *pubSubTopic, const char *jsonWakuMessage,
                                            unsigned int timeoutMs);
LOGOSDELIVERY_EXPORT int waku_lightpush_publish(void *ctx, FFICallBack callback, void *userData,
                                                const char *pubSubTopic,
                                                const char *jsonWakuMessage);
LOGOSDELIVERY_EXPORT int waku_relay_subscribe(void *ctx, FFICallBack callback, void *userData,
                                              const char *pubSubTopic);
LOGOSDELIVERY_EXPORT int waku_relay_add_protected_shard(void *ctx, FFICallBack callback,
                                                        void *userData, int clusterId, int shardId,
                                                        char *publicKey);
LOGOSDELIVERY_EXPORT int waku_relay_unsubscribe(void *ctx, FFICallBack callback, void *userData,
                                                const char *pubSubTopic);

/* ---- filter (contentTopics: comma-separated) ------------------------------------------------ */

LOGOSDELIVERY_EXPORT int waku_filter_subscribe(void *ctx, FFICallBack callback, void *userData,
                                               const char *pubSubTopic, const char *contentTopics);
LOGOSDELIVERY_EXPORT int waku_filter_unsubscribe(void *ctx, FFICallBack callback, void *userData,
                                                 const char *pubSubTopic,
                                                 const char *contentTopics);
LOGOSDELIVERY_EXPORT int waku_filter_unsubscribe_all(void *ctx, FFICallBack callback,
                                                     void *userData);

/* ---- relay peers ---------------------------------------------------------------------------- */

LOGOSDELIVERY_EXPORT int waku_relay_get_num_connected_peers(void *ctx, FFICallBack callback,
                                                            void *userData,
                                                            const char *pubSubTopic);
LOGOSDELIVERY_EXPORT int waku_relay_get_connected_peers(void *ctx, FFICallBack callback,
                                                        void *userData, const char *pubSubTopic);
LOGOSDELIVERY_EXPORT int waku_relay_get_num_peers_in_mesh(void *ctx, FFICallBack callback,
                                                          void *userData, const char *pubSubTopic);
LOGOSDELIVERY_EXPORT int waku_relay_get_peers_in_mesh(void *ctx, FFICallBack callback,
                                                      void *userData, const char *pubSubTopic);

/* ---- store ---------------------------------------------------------------------------------- */

LOGOSDELIVERY_EXPORT int waku_store_query(void *ctx, FFICallBack callback, void *userData,
                                          const char *jsonQuery, const char *peerAddr,
                                          int timeoutMs);

/* ---- peers ---------------------------------------------------------------------------------- */

/* `peerMultiAddr` may hold several addresses joined by ','. */
LOGOSDELIVERY_EXPORT int waku_connect(void *ctx, FFICallBack callback, void *userData,
                                      const char *peerMultiAddr, unsigned int timeoutMs);
LOGOSDELIVERY_EXPORT int waku_disconnect_peer_by_id(void *ctx, FFICallBack callback, void *userData,
                                                    const char *peerId);
LOGOSDELIVERY_EXPORT int waku_disconnect_all_peers(void *ctx, FFICallBack callback, void *userData);
LOGOSDELIVERY_EXPORT int waku_dial_peer(void *ctx, FFICallBack callback, void *userData,
                                        const char *peerMultiAddr, const char *protocol,
                                        int timeoutMs);
LOGOSDELIVERY_EXPORT int waku_dial_peer_by_id(void *ctx, FFICallBack callback, void *userData,
                                              const char *peerId, const char *protocol,
                                              int timeoutMs);
LOGOSDELIVERY_EXPORT int waku_get_peerids_from_peerstore(void *ctx, FFICallBack callback,
                                                         void *userData);
LOGOSDELIVERY_EXPORT int waku_get_connected_peers_info(void *ctx, FFICallBack callback,
                                                       void *userData);
LOGOSDELIVERY_EXPORT int waku_get_peerids_by_protocol(void *ctx, FFICallBack callback,
                                                      void *userData, const char *protocol);
LOGOSDELIVERY_EXPORT int waku_listen_addresses(void *ctx, FFICallBack callback, void *userData);
LOGOSDELIVERY_EXPORT int waku_get_connected_peers(void *ctx, FFICallBack callback, void *userData);

/* ---- discovery ------------------------------------------------------------------------------ */

LOGOSDELIVERY_EXPORT int waku_dns_discovery(void *ctx, FFICallBack callback, void *userData,
                                            const char *entTreeUrl, const char *nameDnsServer,
                                            int timeoutMs);
/* `bootnodes`: a JSON array of "enr:…" strings. */
LOGOSDELIVERY_EXPORT int waku_discv5_update_bootnodes(void *ctx, FFICallBack callback,
                                                      void *userData, char *bootnodes);
LOGOSDELIVERY_EXPORT int waku_start_discv5(void *ctx, FFICallBack callback, void *userData);
LOGOSDELIVERY_EXPORT int waku_stop_discv5(void *ctx, FFICallBack callback, void *userData);

/* ---- node information ----------------------------------------------------------------------- */

LOGOSDELIVERY_EXPORT int waku_get_my_enr(void *ctx, FFICallBack callback, void *userData);
LOGOSDELIVERY_EXPORT int waku_get_my_peerid(void *ctx, FFICallBack callback, void *userData);
LOGOSDELIVERY_EXPORT int waku_get_metrics(void *ctx, FFICallBack callback, void *userData);
LOGOSDELIVERY_EXPORT int waku_peer_exchange_request(void *ctx, FFICallBack callback, void *userData,
                                                    int numPeers);
LOGOSDELIVERY_EXPORT int waku_ping_peer(void *ctx, FFICallBack callback, void *userData,
                                        const char *peerAddr, int timeoutMs);
LOGOSDELIVERY_EXPORT int waku_is_online(void *ctx, FFICallBack callback, void *userData);

#ifdef __cplusplus
}
#endif

#endif /* __liblogosdelivery_kernel__ */
