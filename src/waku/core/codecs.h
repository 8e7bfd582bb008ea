/* The Waku protocol IDs (nwaku waku_core/codecs.nim and the protocol modules), as negotiated with
 * multistream-select. Compile-time constants; the libp2p IDs live with their own modules. */
#ifndef LD_WAKU_CORE_CODECS_H
#define LD_WAKU_CORE_CODECS_H

/* Relay: this string is the gossipsub stream protocol (it replaces /meshsub/1.x). */
#define LD_WAKU_RELAY_CODEC "/vac/waku/relay/2.0.0"
#define LD_WAKU_STORE_CODEC "/vac/waku/store-query/3.0.0"
#define LD_WAKU_FILTER_SUBSCRIBE_CODEC "/vac/waku/filter-subscribe/2.0.0-beta1"
/* Mounted by filter clients: the service node opens it to push messages. */
#define LD_WAKU_FILTER_PUSH_CODEC "/vac/waku/filter-push/2.0.0-beta1"
#define LD_WAKU_LIGHTPUSH_CODEC "/vac/waku/lightpush/3.0.0"
#define LD_WAKU_LEGACY_LIGHTPUSH_CODEC "/vac/waku/lightpush/2.0.0-beta1"
/* Store sync: range-based set reconciliation, then the transfer of missing messages. */
#define LD_WAKU_RECONCILIATION_CODEC "/vac/waku/reconciliation/1.0.0"
#define LD_WAKU_TRANSFER_CODEC "/vac/waku/transfer/1.0.0"
#define LD_WAKU_METADATA_CODEC "/vac/waku/metadata/1.0.0"
#define LD_WAKU_PEER_EXCHANGE_CODEC "/vac/waku/peer-exchange/2.0.0-alpha1"
#define LD_WAKU_RENDEZVOUS_CODEC "/vac/waku/rendezvous/1.0.0"
/* Store v2: nwaku only (removed in logos-delivery); listed for recognition, never mounted. */
#define LD_WAKU_LEGACY_STORE_CODEC "/vac/waku/store/2.0.0-beta4"
/* libp2p mix (Sphinx packets), ENR capability bit 5. */
#define LD_WAKU_MIX_CODEC "/mix/1.0.0"

#endif
