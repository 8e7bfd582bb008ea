// js-waku light nodes (@waku/sdk createLightNode) using the node program as their service node
// for light push, filter and store, as a js-waku app uses nwaku:
//
//  - startServiceNode(): `logosdelivery --relay --lightpush --filter --store` with a fresh SQLite
//    archive, REST on an ephemeral port and optionally WebSocket; `wsAddr` is its /ws listen
//    address when it printed one;
//  - createLight(): a light node built by @waku/sdk's own createLightNode (mplex, Noise, identify
//    with agent js-waku, metadata for our cluster, filter-push handler) with either
//    `transports: [tcp()]` or the sdk's default WebSocket transport with the plain-ws filter
//    (what NODE_ENV=test selects; a browser app only dials /wss);
//  - LightPeer: dial, waitForPeers, send (light push v3, or v2 with useLegacy), filter
//    subscriptions with a message collector (and every push frame the node wrote, before
//    js-waku's de-duplication), store queries through queryWithOrderedCallback and
//    queryGenerator in either direction;
//  - wakuLog: js-waku's `debug` log lines, kept in memory (and printed on stderr as DEBUG asks),
//    for what the sdk only logs (light push status codes, store errors);
//  - storeWire: the StoreQueryRequest bytes js-waku writes, as it encodes them.
import './node20-compat.mjs';

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { format } from 'node:util';

import { peerIdFromString } from '@libp2p/peer-id';
import { tcp } from '@libp2p/tcp';
import { multiaddr } from '@multiformats/multiaddr';
import { proto_store as protoStore } from '@waku/proto';
import { Protocols, createDecoder, createEncoder, createLightNode } from '@waku/sdk';
import debug from 'debug';

import { withTimeout } from './jspeer.mjs';
import { startRelayNode } from './relaynode.mjs';
import { wakuHash } from './wakupeer.mjs';

export { Protocols };
export const LIGHTPUSH_CODEC = '/vac/waku/lightpush/3.0.0';
export const LIGHTPUSH_V2_CODEC = '/vac/waku/lightpush/2.0.0-beta1';
export const FILTER_SUBSCRIBE_CODEC = '/vac/waku/filter-subscribe/2.0.0-beta1';
export const FILTER_PUSH_CODEC = '/vac/waku/filter-push/2.0.0-beta1';
export const STORE_CODEC = '/vac/waku/store-query/3.0.0';

/** A /ws listen multiaddr as the node prints it. */
export const WS_ADDR_RE = /\/ip4\/[\d.]+\/tcp\/\d+\/ws\/p2p\/\w+/;

const DEFAULT_TIMEOUT_MS = 20_000;
const MAX_RECORDED = 100_000;
const LOG_LINES_KEPT = 50_000;
// eslint-disable-next-line no-control-regex
const ANSI_RE = /\x1b\[[0-9;]*m/g;

// ---------------------------------------------------------------------------------------------
// js-waku's log

/** A DEBUG-style pattern list as a predicate on namespaces ("a:*,-a:b" etc.). */
function debugMatcher(spec) {
  const enabled = [];
  const skipped = [];
  for (const part of (spec ?? '').split(/[\s,]+/).filter(Boolean)) {
    const re = new RegExp(`^${part.replace(/^-/, '').replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
    (part.startsWith('-') ? skipped : enabled).push(re);
  }
  return (ns) => enabled.some((re) => re.test(ns)) && !skipped.some((re) => re.test(ns));
}

/**
 * js-waku's log lines (namespaces waku:*), kept in memory. js-waku logs through `debug`
 * (`waku:<module>:<level>`); every waku namespace is enabled here so that the lines can be
 * read, and only those DEBUG selects reach stderr.
 */
class WakuLog {
  constructor() {
    this.lines = [];
    this.base = 0; // index in the whole history of lines[0]
    this.waiters = new Set();
    const userSpec = process.env.DEBUG ?? '';
    const shown = debugMatcher(userSpec);
    const print = debug.log;
    const self = this;
    debug.log = function log(...args) {
      const ns = this?.namespace ?? '';
      if (ns.startsWith('waku:')) self.add(ns, format(...args).replace(ANSI_RE, ''));
      if (shown(ns)) (print ?? console.error).apply(this, args);
    };
    debug.enable([userSpec, 'waku:*'].filter(Boolean).join(','));
  }

  add(namespace, text) {
    const line = { namespace, text, at: Date.now() };
    this.lines.push(line);
    if (this.lines.length > LOG_LINES_KEPT) {
      this.lines.splice(0, this.lines.length - LOG_LINES_KEPT);
      this.base += 1;
    }
    for (const w of this.waiters) {
      if (w.re.test(text)) {
        this.waiters.delete(w);
        w.resolve(line);
      }
    }
  }

  /** A position in the log, for since(). */
  mark() {
    return this.base + this.lines.length;
  }

  /** Lines logged since `mark` (all kept lines without it) whose text matches `re`. */
  since(mark, re = /./) {
    const from = Math.max(0, (mark ?? 0) - this.base);
    return this.lines.slice(from).filter((l) => re.test(l.text));
  }

  /** The first line from `mark` on matching `re`, now or later. */
  waitFor(re, { mark, timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
    const found = this.since(mark, re)[0];
    if (found != null) return Promise.resolve(found);
    let w;
    const p = new Promise((resolve) => {
      w = { re, resolve };
      this.waiters.add(w);
    });
    return withTimeout(p, timeoutMs, `js-waku log line matching ${re}`).finally(() => this.waiters.delete(w));
  }
}

export const wakuLog = new WakuLog();

// ---------------------------------------------------------------------------------------------
// Store request bytes

/**
 * Records the StoreQueryRequest bytes js-waku encodes (@waku/core encodes every store request
 * through @waku/proto's StoreQueryRequest.encode). `rewrite(obj, bytes)` may return other bytes
 * to send instead (to try a variant of the request on the wire); restore() undoes it.
 */
export const storeWire = {
  requests: [],
  original: protoStore.StoreQueryRequest.encode,
  rewrite: null,
  install() {
    if (protoStore.StoreQueryRequest.encode !== this.original) return;
    protoStore.StoreQueryRequest.encode = (obj) => {
      let bytes = this.original(obj);
      if (this.rewrite != null) bytes = this.rewrite(obj, bytes) ?? bytes;
      if (this.requests.length < MAX_RECORDED) this.requests.push({ obj, bytes: Buffer.from(bytes) });
      return bytes;
    };
  },
  restore() {
    protoStore.StoreQueryRequest.encode = this.original;
    this.rewrite = null;
  },
};

/** Top-level protobuf fields of `bytes`: [{field, wire, value (varint as bigint) | bytes}]. */
export function protoFields(bytes) {
  const out = [];
  let pos = 0;
  const varint = () => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= bytes.length) throw new Error('truncated varint');
      const b = bytes[pos++];
      v |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return v;
      shift += 7n;
    }
  };
  while (pos < bytes.length) {
    const key = Number(varint());
    const field = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ field, wire, value: varint() });
    else if (wire === 2) {
      const len = Number(varint());
      out.push({ field, wire, bytes: bytes.subarray(pos, pos + len) });
      pos += len;
    } else throw new Error(`wire type ${wire} at field ${field}`);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The service node

/**
 * Starts the node program as a service node: relay, light push, filter and store (SQLite in a
 * fresh directory), REST on an ephemeral port, log level DEBUG. opts: clusterId, shards,
 * numShardsInNetwork, websocket (adds --websocket-support=true --websocket-port=0), extraArgs,
 * path, and the rest of startRelayNode's options. Resolves with the RelayNode plus `wsAddr`
 * (the /ws listen address, or null when none was printed) and `dbDir`, removed once the process
 * has exited (`stopped` resolves then).
 */
export async function startServiceNode(opts = {}) {
  const { websocket = false, extraArgs = [], lightpush = true, filter = true, store = true } = opts;
  const dbDir = mkdtempSync(join(tmpdir(), 'ld-light-'));
  const args = [];
  if (lightpush) args.push('--lightpush=true');
  if (filter) args.push('--filter=true');
  if (store) args.push('--store=true', `--store-message-db-url=sqlite://${join(dbDir, 'store.sqlite3')}`);
  if (websocket) args.push('--websocket-support=true', '--websocket-port=0');
  let node;
  try {
    node = await startRelayNode({ ...opts, extraArgs: [...args, ...extraArgs] });
  } catch (err) {
    rmSync(dbDir, { recursive: true, force: true });
    throw err;
  }
  node.dbDir = dbDir;
  node.wsAddr = node.proc.lines.map((l) => l.text.match(WS_ADDR_RE)?.[0]).find(Boolean) ?? null;
  // However the process ends (node.stop(), stopAll(), a crash), the archive goes with it.
  node.stopped = node.proc.exit.then((status) => {
    rmSync(dbDir, { recursive: true, force: true });
    return status;
  });
  const stop = node.stop.bind(node);
  node.stop = async (o) => {
    await stop(o);
    return node.stopped;
  };
  return node;
}

/**
 * Whether the node serves WebSocket: starts it once with --websocket-support=true
 * --websocket-port=0 and looks for a /ws listen address. Resolves with false when it printed
 * one, else with the reason to skip the /ws tests.
 */
export async function probeWebSocket({ path, clusterId = 42, shards = [0] } = {}) {
  if (path == null) return 'logosdelivery is not built (set LD_BIN)';
  let node;
  try {
    node = await startServiceNode({ path, clusterId, shards, websocket: true, logLevel: 'INFO' });
    return node.wsAddr != null ? false
      : 'the node printed no /ws listen address with --websocket-support=true --websocket-port=0 '
        + '(WebSocket not served yet)';
  } catch (err) {
    return `the node did not start with --websocket-support=true: ${err.message.split('\n')[0]}`;
  } finally {
    await node?.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// Light nodes

/** A js-waku network config: static sharding {clusterId} or autosharding {clusterId, numShardsInCluster}. */
export function networkConfig({ clusterId, numShardsInCluster }) {
  return numShardsInCluster == null ? { clusterId } : { clusterId, numShardsInCluster };
}

/**
 * A js-waku light node from @waku/sdk createLightNode. opts:
 *   transport: 'tcp' (libp2p.transports = [tcp()]) or 'ws' (the sdk's default WebSocket
 *     transport; filterMultiaddrs: false lets it dial plain /ws on loopback, as NODE_ENV=test does)
 *   clusterId, numShardsInCluster (autosharding; absent = static sharding), shard (the static
 *     shard used when a call names none)
 *   lightPush, filter, store: the sdk's protocol options (e.g. {autoRetry: false})
 *   numPeersToUse, libp2p (more libp2p options)
 */
export async function createLight(opts) {
  const { transport = 'tcp', lightPush, filter, store, numPeersToUse, libp2p = {} } = opts;
  const libp2pOptions = { hideWebSocketInfo: true, ...libp2p };
  if (transport === 'tcp') libp2pOptions.transports = [tcp()];
  else if (transport === 'ws') libp2pOptions.filterMultiaddrs = false;
  else throw new Error(`unknown transport ${transport}`);
  const waku = await createLightNode({
    networkConfig: networkConfig(opts),
    defaultBootstrap: false,
    discovery: { dns: false, peerExchange: false, peerCache: false },
    libp2p: libp2pOptions,
    ...(lightPush ? { lightPush } : {}),
    ...(filter ? { filter } : {}),
    ...(store ? { store } : {}),
    ...(numPeersToUse ? { numPeersToUse } : {}),
  });
  return new LightPeer(waku, transport, opts.shard);
}


/** What a store query or a filter push gives for a decoded message. */
function describeDecoded(msg) {
  const fields = {
    payload: msg.payload,
    contentTopic: msg.contentTopic,
    timestamp: msg.proto.timestamp ?? undefined,
    meta: msg.meta ?? undefined,
  };
  return {
    hash: msg.hashStr,
    messageHash: wakuHash(msg.pubsubTopic, fields),
    pubsubTopic: msg.pubsubTopic,
    version: msg.version,
    ephemeral: msg.ephemeral,
    ...fields,
  };
}

export class LightPeer {
  constructor(waku, transport, shard) {
    this.waku = waku;
    this.transport = transport;
    this.shard = shard;
    this.pushes = []; // every MessagePush frame the node wrote: {pubsubTopic, hash, from, at}
    this.waiters = new Set();
    this.collectors = new Set();
    const core = waku.filter.protocol;
    const handle = core.handleIncomingMessage;
    core.handleIncomingMessage = async (pubsubTopic, wakuMessage, from) => {
      const fields = { payload: wakuMessage.payload, contentTopic: wakuMessage.contentTopic,
        timestamp: wakuMessage.timestamp ?? undefined, meta: wakuMessage.meta ?? undefined };
      this.record({ pubsubTopic, contentTopic: wakuMessage.contentTopic, hash: wakuHash(pubsubTopic, fields), from,
        at: Date.now() });
      return handle(pubsubTopic, wakuMessage, from);
    };
  }

  get libp2p() {
    return this.waku.libp2p;
  }

  get peerId() {
    return this.waku.peerId.toString();
  }

  record(push) {
    if (this.pushes.length < MAX_RECORDED) this.pushes.push(push);
    for (const w of this.waiters) {
      if (w.pred(push)) {
        this.waiters.delete(w);
        w.resolve(push);
      }
    }
  }

  /** The first push frame matching `pred`, now or later. */
  waitPush(pred, { timeoutMs = DEFAULT_TIMEOUT_MS, what = 'a filter push' } = {}) {
    const found = this.pushes.find(pred);
    if (found != null) return Promise.resolve(found);
    let w;
    const p = new Promise((resolve) => {
      w = { pred, resolve };
      this.waiters.add(w);
    });
    return withTimeout(p, timeoutMs, `${this.peerId.slice(-6)}: ${what}`).finally(() => this.waiters.delete(w));
  }

  /** Routing info of a content topic (autosharding) or of `shard` (static sharding). */
  routing(contentTopic, shard) {
    return this.waku.createRoutingInfo(contentTopic, shard ?? this.shard);
  }

  encoder(contentTopic, { shard, ephemeral = false, meta } = {}) {
    return createEncoder({
      contentTopic,
      routingInfo: this.routing(contentTopic, shard),
      ephemeral,
      metaSetter: meta == null ? undefined : () => meta,
    });
  }

  decoder(contentTopic, { shard } = {}) {
    return createDecoder(contentTopic, this.routing(contentTopic, shard));
  }

  /** Dials `ma` the way an app does (waku.dial); resolves with the open connection to it. */
  async dial(ma, { timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
    const target = multiaddr(ma);
    await withTimeout(this.waku.dial(target), timeoutMs, `dial ${ma}`);
    const expected = target.getPeerId();
    const conn = this.libp2p.getConnections().find((c) => c.remotePeer.toString() === expected && c.status === 'open');
    if (conn == null) throw new Error(`no open connection to ${expected} after dialing ${ma}`);
    return conn;
  }

  /**
   * waku.waitForPeers(protocols) (identify, then the metadata handshake) under our own timeout:
   * the sdk's timeout timer is never cleared and would keep the process alive for its length.
   */
  waitForPeers(protocols, { timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
    return withTimeout(this.waku.waitForPeers(protocols), timeoutMs, `waitForPeers(${protocols})`);
  }

  /** The protocols the remote peer announced in identify, from the peer store. */
  async remoteProtocols(peerId) {
    return (await this.libp2p.peerStore.get(peerIdFromString(peerId))).protocols;
  }

  isConnected(peerId) {
    return this.libp2p.getConnections().some((c) => c.remotePeer.toString() === peerId && c.status === 'open');
  }

  /**
   * Light push. msg: {contentTopic, payload, timestamp? (Date, default now), meta?, ephemeral?,
   * shard? (static sharding)}. sendOptions: the sdk's (useLegacy, autoRetry, …). Resolves with
   * {result ({successes: [peer id strings], failures: [{error, peerId}]}), hash, pubsubTopic,
   * message (the WakuMessage fields js-waku put on the wire)}.
   */
  async send(msg, sendOptions = {}) {
    const encoder = this.encoder(msg.contentTopic, msg);
    const message = { payload: msg.payload, timestamp: msg.timestamp ?? new Date() };
    const proto = await encoder.toProtoObj(message);
    const fields = { payload: proto.payload, contentTopic: proto.contentTopic, timestamp: proto.timestamp,
      meta: proto.meta ?? undefined, ephemeral: Boolean(proto.ephemeral), version: proto.version ?? 0 };
    const r = await this.waku.lightPush.send(encoder, message, sendOptions);
    return {
      result: {
        successes: r.successes.map((p) => p.toString()),
        failures: r.failures.map((f) => ({ error: f.error, peerId: f.peerId?.toString() })),
      },
      hash: wakuHash(encoder.pubsubTopic, fields),
      pubsubTopic: encoder.pubsubTopic,
      message: fields,
    };
  }

  /**
   * waku.filter.subscribe for `contentTopics` (one pubsub topic: all on `shard`, or all on the
   * same autoshard). Resolves with a FilterCollector (ok = what the sdk returned).
   */
  async subscribe(contentTopics, { shard } = {}) {
    const collector = new FilterCollector(this, contentTopics.map((t) => this.decoder(t, { shard })));
    this.collectors.add(collector);
    collector.ok = await this.waku.filter.subscribe(collector.decoders, (m) => collector.add(m));
    return collector;
  }

  /**
   * Store query through waku.store. opts: contentTopics, shard, forward (default true),
   * pageSize, timeStart/timeEnd (Date), messageHashes (Uint8Array[]), cursor, method
   * ('ordered' = queryWithOrderedCallback, 'generator' = queryGenerator, page by page).
   * Resolves with {messages: [decoded message summaries, in the order js-waku gave them],
   * pages: [[hash…] per page] (generator only)}.
   */
  async storeQuery(opts) {
    const { contentTopics, shard, forward = true, pageSize, method = 'ordered', timeoutMs = DEFAULT_TIMEOUT_MS } = opts;
    const decoders = contentTopics.map((t) => this.decoder(t, { shard }));
    const options = { paginationForward: forward };
    if (pageSize != null) options.paginationLimit = pageSize;
    if (opts.timeStart != null) options.timeStart = opts.timeStart;
    if (opts.timeEnd != null) options.timeEnd = opts.timeEnd;
    if (opts.messageHashes != null) options.messageHashes = opts.messageHashes;
    if (opts.cursor != null) options.paginationCursor = opts.cursor;
    const messages = [];
    const pages = [];
    const run = async () => {
      if (method === 'ordered') {
        await this.waku.store.queryWithOrderedCallback(decoders, (m) => {
          messages.push(describeDecoded(m));
        }, options);
        return;
      }
      for await (const page of this.waku.store.queryGenerator(decoders, options)) {
        const got = (await Promise.all(page)).filter(Boolean).map(describeDecoded);
        pages.push(got.map((m) => m.hash));
        messages.push(...got);
        if (pages.length > (opts.maxPages ?? 1000)) throw new Error(`more than ${opts.maxPages ?? 1000} pages`);
      }
    };
    await withTimeout(run(), timeoutMs, 'store query');
    return { messages, pages };
  }

  /**
   * Unsubscribes what is still subscribed (waku.stop() leaves the sdk's subscription timers
   * running, which would keep the process alive), then stops the node.
   */
  async stop() {
    for (const w of this.waiters) w.resolve(undefined);
    this.waiters.clear();
    for (const c of this.collectors) await c.unsubscribe(c.decoders.map((d) => d.contentTopic)).catch(() => {});
    await this.waku.stop();
  }
}

/** Messages a filter subscription delivered through the sdk (after its de-duplication). */
export class FilterCollector {
  constructor(peer, decoders) {
    this.peer = peer;
    this.decoders = decoders;
    this.messages = [];
    this.waiters = new Set();
    this.ok = false;
  }

  add(msg) {
    const m = describeDecoded(msg);
    if (this.messages.length < MAX_RECORDED) this.messages.push(m);
    for (const w of this.waiters) {
      if (w.pred(m)) {
        this.waiters.delete(w);
        w.resolve(m);
      }
    }
  }

  waitHash(hash, { timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
    const found = this.messages.find((m) => m.hash === hash);
    if (found != null) return Promise.resolve(found);
    let w;
    const p = new Promise((resolve) => {
      w = { pred: (m) => m.hash === hash, resolve };
      this.waiters.add(w);
    });
    return withTimeout(p, timeoutMs, `filter delivery of ${hash}`).finally(() => this.waiters.delete(w));
  }

  /**
   * waku.filter.unsubscribe for the decoders of some content topics; resolves with the sdk's
   * result (false when none of them is subscribed any more).
   */
  async unsubscribe(contentTopics) {
    const decoders = this.decoders.filter((d) => contentTopics.includes(d.contentTopic));
    if (decoders.length === 0) return false;
    this.decoders = this.decoders.filter((d) => !decoders.includes(d));
    if (this.decoders.length === 0) this.peer.collectors.delete(this);
    return this.peer.waku.filter.unsubscribe(decoders);
  }
}
