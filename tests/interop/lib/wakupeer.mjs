// Relay peers for the interop tests and benchmarks, both over TCP + Noise on loopback:
//
//  - createRelayPeer(): a js-waku relay node as js-waku builds one — @waku/relay's wakuGossipSub
//    (gossipsub on /vac/waku/relay/2.0.0, StrictNoSign, message ID = sha256(data), no floodsub)
//    and wakuRelay (WakuMessage validator, content-topic observers), @waku/core's metadata
//    service for its cluster, identify (agent js-waku) and ping; messages go through @waku/core's
//    encoders and decoders;
//  - createGossipPeer(): a plain js-libp2p gossipsub peer (@chainsafe/libp2p-gossipsub with the
//    same three settings) that publishes WakuMessage protobuf bytes it encodes itself, the way
//    nwaku writes them (every non-optional field present), and optionally answers
//    /vac/waku/metadata/1.0.0 for a cluster (a node gating on metadata disconnects peers that do
//    not answer it).
//
// Both record every WakuMessage they receive with its deterministic hash from @waku/message-hash
// (and, for the js-waku peer, the hash @waku/core's decoded message reports).
import './node20-compat.mjs';

import { createHash } from 'node:crypto';

import { GossipSub, gossipsub } from '@chainsafe/libp2p-gossipsub';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { identify } from '@libp2p/identify';
import { mplex } from '@libp2p/mplex';
import { ping } from '@libp2p/ping';
import { tcp } from '@libp2p/tcp';
import { multiaddr } from '@multiformats/multiaddr';
import { createDecoder, createEncoder, wakuMetadata } from '@waku/core';
import { messageHash } from '@waku/message-hash';
import { proto_message as protoMessage } from '@waku/proto';
import { wakuGossipSub, wakuRelay } from '@waku/relay';
import { contentTopicToShardIndex, createRoutingInfo } from '@waku/utils';
import { createLibp2p } from 'libp2p';

import { LOOPBACK_CIDRS, withTimeout } from './jspeer.mjs';

export const RELAY_CODEC = '/vac/waku/relay/2.0.0';
export const METADATA_CODEC = '/vac/waku/metadata/1.0.0';
/** What a plain js-libp2p gossipsub 14 peer offers when left alone. */
export const MESHSUB_CODECS = ['/meshsub/1.2.0', '/meshsub/1.1.0', '/meshsub/1.0.0'];

const MUXERS = { yamux: () => yamux(), mplex: () => mplex() };
const DEFAULT_TIMEOUT_MS = 20_000;
const METADATA_MAX_BYTES = 1024;
const MAX_RECORDED = 100_000;

// ---------------------------------------------------------------------------------------------
// Topics and messages

/** Static-shard pubsub topic /waku/2/rs/<cluster>/<shard>. */
export function shardTopic(clusterId, shard) {
  return `/waku/2/rs/${clusterId}/${shard}`;
}

/** Autosharding: the shard of a generation-0 content topic among `numShards` (js-waku's code). */
export function autoShard(contentTopic, numShards) {
  return contentTopicToShardIndex(contentTopic, numShards);
}

/** Pubsub topic of `contentTopic` under autosharding. */
export function autoTopic(contentTopic, clusterId, numShards) {
  return shardTopic(clusterId, autoShard(contentTopic, numShards));
}

/**
 * A network as js-waku describes it: {clusterId} for static sharding, {clusterId,
 * numShardsInCluster} for autosharding. Returns {networkConfig, pubsubTopic, routingInfo}
 * for a content topic (autosharding) or a shard (static).
 */
export function route({ clusterId, shard, numShardsInCluster, contentTopic }) {
  const networkConfig = numShardsInCluster == null ? { clusterId } : { clusterId, numShardsInCluster };
  const routingInfo = numShardsInCluster == null
    ? createRoutingInfo(networkConfig, { shardId: shard })
    : createRoutingInfo(networkConfig, { contentTopic });
  return { networkConfig, pubsubTopic: routingInfo.pubsubTopic, routingInfo };
}

function varint(n) {
  let x = BigInt(n);
  const out = [];
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x > 0n) b |= 0x80;
    out.push(b);
  } while (x > 0n);
  return out;
}

function zigzag64(n) {
  const x = BigInt.asIntN(64, BigInt(n));
  return BigInt.asUintN(64, (x << 1n) ^ (x >> 63n));
}

function lenField(tag, bytes) {
  return [...varint(tag), ...varint(bytes.length), ...bytes];
}

/**
 * WakuMessage bytes written the way nwaku writes them: payload (1), content_topic (2),
 * version (3, also when 0), timestamp (10, zig-zag, when set), meta (11, when set),
 * ephemeral (31, always). `msg`: {payload: Uint8Array, contentTopic, version?, timestamp?
 * (bigint ns), meta?, ephemeral?}.
 */
export function encodeWakuMessage(msg) {
  const out = [
    ...lenField(0x0a, msg.payload),
    ...lenField(0x12, Buffer.from(msg.contentTopic, 'utf8')),
    0x18, ...varint(msg.version ?? 0),
  ];
  if (msg.timestamp != null) out.push(0x50, ...varint(zigzag64(msg.timestamp)));
  if (msg.meta != null) out.push(...lenField(0x5a, msg.meta));
  out.push(0xf8, 0x01, msg.ephemeral ? 1 : 0);
  return Uint8Array.from(out);
}

/** Decodes WakuMessage bytes with js-waku's protobuf code; timestamp stays a bigint (ns). */
export function decodeWakuMessage(bytes) {
  const m = protoMessage.WakuMessage.decode(bytes);
  return {
    payload: m.payload ?? new Uint8Array(),
    contentTopic: m.contentTopic ?? '',
    version: m.version ?? 0,
    timestamp: m.timestamp ?? undefined,
    meta: m.meta ?? undefined,
    ephemeral: Boolean(m.ephemeral),
  };
}

/** Deterministic message hash (hex) computed by @waku/message-hash. */
export function wakuHash(pubsubTopic, msg) {
  return Buffer.from(messageHash(pubsubTopic, {
    payload: msg.payload,
    contentTopic: msg.contentTopic,
    meta: msg.meta,
    timestamp: msg.timestamp,
  })).toString('hex');
}

/**
 * The same hash by the nwaku rule, written here independently: the timestamp always
 * contributes 8 big-endian bytes (0 when absent). Equal to wakuHash whenever timestamp != 0.
 */
export function nwakuHash(pubsubTopic, msg) {
  const ts = Buffer.alloc(8);
  ts.writeBigUInt64BE(BigInt.asUintN(64, BigInt(msg.timestamp ?? 0n)));
  return createHash('sha256')
    .update(pubsubTopic, 'utf8')
    .update(msg.payload)
    .update(msg.contentTopic, 'utf8')
    .update(msg.meta ?? new Uint8Array())
    .update(ts)
    .digest('hex');
}

/** Now, in nanoseconds since the epoch (a bigint, millisecond resolution like js-waku). */
export function nowNs() {
  return BigInt(Date.now()) * 1_000_000n;
}

// ---------------------------------------------------------------------------------------------
// Metadata, for the plain peer

function readVarint(buf, pos) {
  let x = 0;
  let shift = 0;
  for (let i = pos; i < buf.length && i < pos + 10; i++) {
    x += (buf[i] & 0x7f) * 2 ** shift;
    shift += 7;
    if ((buf[i] & 0x80) === 0) return { value: x, next: i + 1 };
  }
  return null;
}

/** Reads one unsigned-varint length-prefixed frame from a libp2p stream source. */
async function readLpFrame(source, maxBytes) {
  let buf = Buffer.alloc(0);
  for await (const chunk of source) {
    buf = Buffer.concat([buf, chunk.subarray()]);
    const len = readVarint(buf, 0);
    if (len == null) continue;
    if (len.value > maxBytes) throw new Error(`metadata frame of ${len.value} bytes`);
    if (buf.length >= len.next + len.value) return buf.subarray(len.next, len.next + len.value);
  }
  throw new Error('stream ended inside a metadata frame');
}

/** WakuMetadataResponse {cluster_id = 1, shards = 2 (packed)} as proto3 encoders write it. */
export function encodeMetadata({ clusterId, shards = [] }) {
  const packed = shards.flatMap((s) => varint(s));
  const body = [0x08, ...varint(clusterId), ...(packed.length ? lenField(0x12, packed) : [])];
  return Uint8Array.from([...varint(body.length), ...body]);
}

/** {clusterId, shards} of a WakuMetadataRequest/Response body (fields 1, 2 and nwaku's 3). */
export function decodeMetadata(body) {
  const out = { clusterId: undefined, shards: [] };
  const packed = { 2: [], 3: [] };
  for (let pos = 0; pos < body.length;) {
    const tag = readVarint(body, pos);
    if (tag == null) throw new Error('bad metadata tag');
    const field = Math.floor(tag.value / 8);
    const wire = tag.value % 8;
    if (wire === 0) {
      const v = readVarint(body, tag.next);
      if (v == null) throw new Error('bad metadata varint');
      if (field === 1) out.clusterId = v.value;
      if (field === 2) out.shards.push(v.value);
      pos = v.next;
    } else if (wire === 2) {
      const len = readVarint(body, tag.next);
      if (len == null || len.next + len.value > body.length) throw new Error('bad metadata length');
      for (let p = len.next; p < len.next + len.value;) {
        const v = readVarint(body, p);
        if (v == null) throw new Error('bad packed shard');
        if (field === 2 || field === 3) packed[field].push(v.value);
        p = v.next;
      }
      pos = len.next + len.value;
    } else {
      throw new Error(`metadata wire type ${wire}`);
    }
  }
  if (packed[3].length) out.shards = packed[3];
  else if (packed[2].length) out.shards = packed[2];
  return out;
}

/**
 * Asks the remote end of `conn` for its metadata, sending our own {clusterId, shards} as nwaku
 * does; resolves with the remote's {clusterId, shards}.
 */
export async function queryMetadata(conn, info, { timeoutMs = 10_000 } = {}) {
  const signal = AbortSignal.timeout(timeoutMs);
  const stream = await conn.newStream(METADATA_CODEC, { signal });
  try {
    const reading = readLpFrame(stream.source, METADATA_MAX_BYTES);
    await stream.sink([encodeMetadata(info)]);
    return decodeMetadata(await withTimeout(reading, timeoutMs, 'metadata response'));
  } finally {
    await stream.close().catch(() => stream.abort(new Error('metadata stream close failed')));
  }
}

/** Answers metadata requests for `info`; remembers each request's raw bytes per peer. */
export async function serveMetadata(node, info, requests) {
  await node.handle(METADATA_CODEC, async ({ stream, connection }) => {
    try {
      const request = await readLpFrame(stream.source, METADATA_MAX_BYTES);
      requests.set(connection.remotePeer.toString(), Buffer.from(request).toString('hex'));
      await stream.sink([encodeMetadata(info)]);
    } catch (err) {
      stream.abort(err);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Peers

function isLoopback(ma) {
  const { address } = multiaddr(ma).nodeAddress();
  return address === '::1' || address.startsWith('127.');
}

function baseConfig(opts, privateKey) {
  const { listen = true, muxers = ['yamux'], allowRemote = false, maxConnections = 1000 } = opts;
  return {
    privateKey,
    addresses: { listen: listen ? ['/ip4/127.0.0.1/tcp/0'] : [] },
    transports: [tcp()],
    connectionEncrypters: [noise()],
    streamMuxers: muxers.map((m) => MUXERS[m]()),
    connectionGater: { denyDialMultiaddr: async (ma) => !allowRemote && !isLoopback(ma) },
    connectionManager: { allow: LOOPBACK_CIDRS, maxConnections },
    ...(opts.connectionMonitor ? { connectionMonitor: opts.connectionMonitor } : {}),
    start: false,
  };
}

/**
 * gossipsub settings shared by both peers. `ipColocationThreshold` lifts gossipsub's
 * IP-colocation penalty (every test peer is on 127.0.0.1); `publishToZeroPeers` lets publish
 * succeed with no subscribed peer (a message that must go nowhere).
 */
function gossipInit({ ipColocationThreshold = 1000, publishToZeroPeers = false, gossip = {} }) {
  return {
    allowPublishToZeroTopicPeers: publishToZeroPeers,
    scoreParams: { IPColocationFactorThreshold: ipColocationThreshold },
    ...gossip,
  };
}

const sha256 = (data) => Uint8Array.from(createHash('sha256').update(data).digest());

class RelayPeerBase {
  constructor(node, kind) {
    this.node = node;
    this.kind = kind;
    this.pubsub = node.services.pubsub;
    this.received = [];
    this.waiters = new Set();
    this.metadataRequests = new Map();
    this.listeners = [];
  }

  get peerId() {
    return this.node.peerId.toString();
  }

  get addrs() {
    return this.node.getMultiaddrs().map((ma) => ma.toString());
  }

  get addr() {
    if (this.addrs.length === 0) throw new Error('this peer does not listen');
    return this.addrs[0];
  }

  /** Adds a received message record and wakes the waiters it matches. */
  record(entry) {
    if (this.received.length < MAX_RECORDED) this.received.push(entry);
    this.fire('message', entry);
  }

  fire(kind, detail) {
    for (const w of this.waiters) {
      if (w.kind === kind && w.match(detail)) {
        this.waiters.delete(w);
        w.resolve(detail);
      }
    }
  }

  on(target, event, fn) {
    target.addEventListener(event, fn);
    this.listeners.push(() => target.removeEventListener(event, fn));
  }

  /** Resolves when `cond()` holds, re-checked on each `kinds` event; rejects after timeoutMs. */
  waitFor(kinds, cond, timeoutMs, what) {
    const value = cond();
    if (value) return Promise.resolve(value);
    const entries = [];
    const promise = new Promise((resolve) => {
      for (const kind of kinds) {
        const w = {
          kind,
          match: () => Boolean(cond()),
          resolve: () => resolve(cond()),
        };
        entries.push(w);
        this.waiters.add(w);
      }
    });
    return withTimeout(promise, timeoutMs, `${this.kind} ${this.peerId.slice(-6)}: ${what}`)
      .finally(() => entries.forEach((w) => this.waiters.delete(w)));
  }

  watch() {
    this.on(this.pubsub, 'subscription-change', (e) => this.fire('pubsub', e.detail));
    this.on(this.pubsub, 'gossipsub:graft', (e) => this.fire('pubsub', e.detail));
    this.on(this.pubsub, 'gossipsub:prune', (e) => this.fire('pubsub', e.detail));
    this.on(this.node, 'connection:open', (e) => this.fire('connection', e.detail));
    this.on(this.node, 'connection:close', (e) => this.fire('connection', e.detail));
    this.on(this.node, 'peer:disconnect', (e) => this.fire('connection', e.detail));
  }

  /** Dials a multiaddr string; checks the /p2p/ part like jspeer.dial. */
  async dial(ma, { timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
    const target = multiaddr(ma);
    const conn = await this.node.dial(target, { signal: AbortSignal.timeout(timeoutMs) });
    const expected = target.getPeerId();
    if (expected != null && conn.remotePeer.toString() !== expected) {
      await conn.close().catch(() => {});
      throw Object.assign(new Error(`dialed ${expected}, reached ${conn.remotePeer}`), { name: 'UnexpectedPeerError' });
    }
    return conn;
  }

  isConnected(peerId) {
    return this.node.getConnections().some((c) => c.remotePeer.toString() === peerId && c.status === 'open');
  }

  /** Resolves once no open connection to `peerId` is left (the remote closed it). */
  waitDisconnected(peerId, { timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
    return this.waitFor(['connection'], () => !this.isConnected(peerId), timeoutMs, `disconnect of ${peerId}`);
  }

  /** Peers this peer knows to be subscribed to `topic` (base58 strings). */
  subscribers(topic) {
    return this.pubsub.getSubscribers(topic).map((p) => p.toString());
  }

  meshPeers(topic) {
    return this.pubsub.getMeshPeers(topic).map((p) => p.toString());
  }

  /** Waits until `peerId` announced a subscription to `topic` to this peer. */
  waitSubscribed(peerId, topic, { timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
    return this.waitFor(['pubsub'], () => this.subscribers(topic).includes(peerId), timeoutMs,
      `subscription of ${peerId} to ${topic}`);
  }

  /** Waits until `peerId` is in this peer's mesh for `topic` (both sides know both subscriptions). */
  waitMesh(peerId, topic, { timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
    return this.waitFor(['pubsub'], () => this.meshPeers(topic).includes(peerId), timeoutMs,
      `mesh with ${peerId} on ${topic}`);
  }

  /** The first received record matching `pred`, now or later. */
  waitMessage(pred, { timeoutMs = DEFAULT_TIMEOUT_MS, what = 'a message' } = {}) {
    return this.waitFor(['message'], () => this.received.find(pred), timeoutMs, what);
  }

  waitHash(hash, opts = {}) {
    return this.waitMessage((m) => m.hash === hash, { what: `message ${hash}`, ...opts });
  }

  async stop() {
    for (const w of this.waiters) w.resolve(undefined);
    this.waiters.clear();
    for (const off of this.listeners) off();
    await this.node.stop();
  }
}

/**
 * A js-waku relay node. opts:
 *   clusterId, and shard (static sharding) or numShardsInCluster (autosharding)
 *   contentTopics: content topics to subscribe to and publish on (default ['/ld/1/relay/proto'])
 *   shards: static shards subscribed (default [shard])
 *   metadata: false leaves out /vac/waku/metadata/1.0.0 (default true, for clusterId)
 *   muxers: default ['mplex'] (js-waku's own default); listen, key ('secp256k1'|'ed25519')
 *   ipColocationThreshold, publishToZeroPeers, gossip (more gossipsub options)
 *   connectionMonitor: js-libp2p's connection monitor options (it pings every 10 s and aborts the
 *     connection when a ping fails)
 *   userAgent: the agent string identify sends (default 'js-waku')
 */
export async function createRelayPeer(opts) {
  const { clusterId, numShardsInCluster, metadata = true, key = 'secp256k1' } = opts;
  const contentTopics = opts.contentTopics ?? ['/ld/1/relay/proto'];
  const auto = numShardsInCluster != null;
  const routes = auto
    ? contentTopics.map((contentTopic) => route({ clusterId, numShardsInCluster, contentTopic }))
    : (opts.shards ?? [opts.shard]).map((shard) => route({ clusterId, shard }));
  const pubsubTopics = [...new Set(routes.map((r) => r.pubsubTopic))];
  const privateKey = await generateKeyPair(key === 'ed25519' ? 'Ed25519' : 'secp256k1');
  const node = await createLibp2p({
    ...baseConfig({ muxers: ['mplex'], ...opts }, privateKey),
    nodeInfo: { userAgent: opts.userAgent ?? 'js-waku' },
    services: {
      identify: identify({ protocolPrefix: 'ipfs' }),
      ping: ping(),
      pubsub: wakuGossipSub(gossipInit(opts)),
      ...(metadata ? { metadata: wakuMetadata(clusterId) } : {}),
    },
  });
  await node.start();
  const peer = new WakuRelayPeer(node, { clusterId, numShardsInCluster, routes, pubsubTopics, contentTopics });
  peer.watch();
  peer.subscribeAll();
  return peer;
}

export class WakuRelayPeer extends RelayPeerBase {
  constructor(node, network) {
    super(node, 'js-waku');
    Object.assign(this, network);
    this.relay = wakuRelay(network.pubsubTopics)(node);
  }

  routeOf(contentTopic, pubsubTopic) {
    if (this.numShardsInCluster != null) {
      return route({ clusterId: this.clusterId, numShardsInCluster: this.numShardsInCluster, contentTopic }).routingInfo;
    }
    return (this.routes.find((r) => r.pubsubTopic === (pubsubTopic ?? this.pubsubTopics[0])) ?? this.routes[0])
      .routingInfo;
  }

  subscribeAll() {
    const decoders = [];
    for (const pubsubTopic of this.pubsubTopics) {
      for (const contentTopic of this.contentTopics) {
        const routing = this.routeOf(contentTopic, pubsubTopic);
        if (routing.pubsubTopic === pubsubTopic) decoders.push(createDecoder(contentTopic, routing));
      }
    }
    this.relay.subscribe(decoders, (msg) => {
      const fields = {
        payload: msg.payload,
        contentTopic: msg.contentTopic,
        version: msg.version,
        timestamp: msg.proto.timestamp ?? undefined,
        meta: msg.meta,
        ephemeral: msg.ephemeral,
      };
      this.record({
        pubsubTopic: msg.pubsubTopic,
        message: fields,
        hash: wakuHash(msg.pubsubTopic, fields),
        coreHash: msg.hashStr,
        rateLimitProof: msg.proto.rateLimitProof ?? undefined,
        at: Date.now(),
      });
    });
  }

  /**
   * Publishes a message through @waku/relay. msg: {payload, contentTopic?, timestamp? (bigint ns,
   * whole milliseconds), meta?, ephemeral?, pubsubTopic? (static sharding), rateLimitProof? (the
   * RateLimitProof fields as @waku/proto names them, carried in field 21 as @waku/rln's encoder
   * adds them)}. Resolves with
   * {hash, pubsubTopic, message, recipients (peer IDs), wire (the bytes sent)}.
   */
  async publish(msg) {
    const contentTopic = msg.contentTopic ?? this.contentTopics[0];
    const routingInfo = this.routeOf(contentTopic, msg.pubsubTopic);
    const meta = msg.meta;
    const encoder = createEncoder({
      contentTopic,
      routingInfo,
      ephemeral: msg.ephemeral ?? false,
      metaSetter: meta == null ? undefined : () => meta,
    });
    const timestamp = new Date(Number((msg.timestamp ?? nowNs()) / 1_000_000n));
    const message = { payload: msg.payload, timestamp, rateLimitProof: msg.rateLimitProof };
    const proto = await encoder.toProtoObj(message);
    const wire = await encoder.toWire(message);
    const result = await this.relay.send(encoder, message);
    if (result.failures.length > 0) throw new Error(`relay send failed: ${JSON.stringify(result.failures)}`);
    return {
      hash: wakuHash(routingInfo.pubsubTopic, proto),
      pubsubTopic: routingInfo.pubsubTopic,
      message: { ...proto, meta: proto.meta ?? undefined },
      recipients: result.successes.map((p) => p.toString()),
      wire,
    };
  }
}

/**
 * A plain js-libp2p gossipsub peer exchanging raw WakuMessage bytes. opts:
 *   topics: pubsub topics to subscribe to
 *   protocols: gossipsub protocol IDs offered (default [RELAY_CODEC]; MESHSUB_CODECS for a
 *     gossipsub left at its defaults)
 *   metadata: {clusterId, shards} to answer /vac/waku/metadata/1.0.0 with, or null (default)
 *   muxers (default ['yamux', 'mplex']), listen, key, ipColocationThreshold, publishToZeroPeers, gossip
 */
export async function createGossipPeer(opts) {
  const { topics = [], protocols = [RELAY_CODEC], metadata = null, key = 'ed25519' } = opts;
  const privateKey = await generateKeyPair(key === 'ed25519' ? 'Ed25519' : 'secp256k1');
  const factory = gossipsub({
    ...gossipInit(opts),
    globalSignaturePolicy: 'StrictNoSign',
    msgIdFn: (m) => sha256(m.data),
    fallbackToFloodsub: false,
  });
  const node = await createLibp2p({
    ...baseConfig({ muxers: ['yamux', 'mplex'], ...opts }, privateKey),
    services: {
      identify: identify(),
      ping: ping(),
      pubsub: (components) => {
        const g = factory(components);
        g.multicodecs = [...protocols];
        return g;
      },
    },
  });
  const peer = new GossipPeer(node, topics);
  if (metadata != null) await serveMetadata(node, metadata, peer.metadataRequests);
  await node.start();
  peer.watch();
  peer.listen();
  for (const t of topics) peer.pubsub.subscribe(t);
  return peer;
}

export class GossipPeer extends RelayPeerBase {
  constructor(node, topics) {
    super(node, 'gossipsub');
    this.topics = topics;
    if (!(this.pubsub instanceof GossipSub)) throw new Error('pubsub service is not gossipsub');
  }

  listen() {
    this.on(this.pubsub, 'gossipsub:message', (e) => {
      const { msg, propagationSource } = e.detail;
      let message;
      try {
        message = decodeWakuMessage(msg.data);
      } catch {
        message = null;
      }
      this.record({
        pubsubTopic: msg.topic,
        message,
        raw: msg.data,
        hash: message == null ? null : wakuHash(msg.topic, message),
        from: propagationSource.toString(),
        signed: msg.type === 'signed',
        at: Date.now(),
      });
    });
  }

  /**
   * Publishes WakuMessage bytes on `pubsubTopic`. msg: {payload, contentTopic, timestamp?
   * (bigint ns, default now), meta?, ephemeral?} or raw bytes as msg.wire. Resolves with
   * {hash, pubsubTopic, message, recipients, wire}.
   */
  async publish(pubsubTopic, msg) {
    const message = msg.wire == null ? { ...msg, timestamp: msg.timestamp ?? nowNs() } : null;
    const wire = msg.wire ?? encodeWakuMessage(message);
    const { recipients } = await this.pubsub.publish(pubsubTopic, wire);
    return {
      hash: message == null ? null : wakuHash(pubsubTopic, message),
      pubsubTopic,
      message,
      recipients: recipients.map((p) => p.toString()),
      wire,
    };
  }
}
