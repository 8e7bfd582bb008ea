// A js-libp2p 2.x peer for the interop tests and benchmarks: TCP (or WebSockets), Noise, one chosen muxer,
// identify, ping and the echo protocol /ld/echo/1.0.0 (every byte is written back until the
// remote closes its write side, then the stream is closed).
import './node20-compat.mjs';

import { createHash, randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';

import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { generateKeyPair, privateKeyFromRaw, publicKeyFromProtobuf } from '@libp2p/crypto/keys';
import { identify } from '@libp2p/identify';
import { mplex } from '@libp2p/mplex';
import { peerIdFromPrivateKey, peerIdFromPublicKey, peerIdFromString } from '@libp2p/peer-id';
import { ping } from '@libp2p/ping';
import { tcp } from '@libp2p/tcp';
import { webSockets } from '@libp2p/websockets';
import { multiaddr } from '@multiformats/multiaddr';
import { createLibp2p } from 'libp2p';

export const ECHO_PROTOCOL = '/ld/echo/1.0.0';
export const IDENTIFY_PROTOCOL = '/ipfs/id/1.0.0';
export const PING_PROTOCOL = '/ipfs/ping/1.0.0';
export const MUXER_PROTOCOLS = { yamux: '/yamux/1.0.0', mplex: '/mplex/6.7.0' };
export const LOOPBACK_CIDRS = ['/ip4/127.0.0.0/ipcidr/8', '/ip6/::1/ipcidr/128'];

const MUXER_FACTORIES = { yamux: () => yamux(), mplex: () => mplex() };
// WebSockets dials /ws, /wss and /tls/ws; wss servers' certificates are not verified (tests use
// self-signed ones, and Noise authenticates the peer).
const TRANSPORT_FACTORIES = {
  tcp: () => tcp(),
  ws: () => webSockets({ websocket: { rejectUnauthorized: false } }),
};
const KEY_TYPES = { ed25519: 'Ed25519', secp256k1: 'secp256k1' };
const ECHO_CHUNK = 64 * 1024;
const ECHO_POOL = randomBytes(1024 * 1024 + ECHO_CHUNK);
const MAX_ECHO_STREAMS = 256;
const DEFAULT_TIMEOUT_MS = 20_000;
export const MPLEX_PING_INTERVAL_MS = 600;
export const MPLEX_ECHO_WINDOW = 1024 * 1024;

/** Rejects with a named TimeoutError when `promise` takes longer than `ms`. */
export async function withTimeout(promise, ms, what) {
  let timer;
  const expiry = new Promise((_, reject) => {
    timer = setTimeout(() => {
      const err = new Error(`${what} timed out after ${ms} ms`);
      err.name = 'TimeoutError';
      reject(err);
    }, ms);
  });
  try {
    return await Promise.race([promise, expiry]);
  } finally {
    clearTimeout(timer);
  }
}

/** Secp256k1 private key from the 32-byte hex form nwaku's --nodekey takes. */
export function privateKeyFromHex(hex) {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error('a node key is 64 hex digits');
  return privateKeyFromRaw(Uint8Array.from(Buffer.from(hex, 'hex')));
}

/** Base58 peer ID of a 64-hex-digit secp256k1 node key. */
export function peerIdFromHexKey(hex) {
  return peerIdFromPrivateKey(privateKeyFromHex(hex)).toString();
}

/** Peer ID (base58) that a protobuf-encoded public key hashes to. */
export function peerIdFromPublicKeyBytes(bytes) {
  return peerIdFromPublicKey(publicKeyFromProtobuf(bytes)).toString();
}

function muxerList(muxer) {
  const names = Array.isArray(muxer) ? muxer : [muxer];
  for (const name of names) {
    if (!(name in MUXER_FACTORIES)) throw new Error(`unknown muxer ${name}`);
  }
  return names;
}

function isLoopback(ma) {
  const { address } = multiaddr(ma).nodeAddress();
  return address === '::1' || address.startsWith('127.');
}

async function makeKey(key, privateKey) {
  if (privateKey != null) return privateKey;
  if (!(key in KEY_TYPES)) throw new Error(`unknown key type ${key}`);
  return generateKeyPair(KEY_TYPES[key]);
}

/**
 * Creates and starts a js-libp2p peer.
 *   muxer: 'yamux' | 'mplex' | an ordered list of both (the only muxers offered)
 *   listen: listen on an ephemeral loopback TCP port (true) or only dial (false)
 *   key: 'ed25519' | 'secp256k1' (a new key), or privateKey: a @libp2p/crypto private key
 *   allowRemote: also dial non-loopback addresses (loopback only by default)
 *   agentVersion: replaces js-libp2p's own agent string in identify
 *   ping: false leaves /ipfs/ping/1.0.0 out (to test a remote's handling of a missing protocol)
 *   transports: ['tcp'] (default) and/or 'ws'; with 'ws' alone, listen with
 *     listenAddr: '/ip4/127.0.0.1/tcp/0/ws'
 */
export async function createPeer(opts = {}) {
  const {
    muxer = 'yamux',
    listen = true,
    key = 'ed25519',
    privateKey,
    allowRemote = false,
    agentVersion,
    listenAddr = '/ip4/127.0.0.1/tcp/0',
    maxConnections = 1000,
    ping: withPing = true,
    transports = ['tcp'],
  } = opts;
  for (const name of transports) {
    if (!(name in TRANSPORT_FACTORIES)) throw new Error(`unknown transport ${name}`);
  }
  const muxers = muxerList(muxer);
  const node = await createLibp2p({
    privateKey: await makeKey(key, privateKey),
    addresses: { listen: listen ? [listenAddr] : [] },
    transports: transports.map((name) => TRANSPORT_FACTORIES[name]()),
    connectionEncrypters: [noise()],
    streamMuxers: muxers.map((name) => MUXER_FACTORIES[name]()),
    services: {
      identify: identify({ runOnConnectionOpen: false, timeout: 10_000 }),
      ...(withPing ? { ping: ping() } : {}),
    },
    connectionGater: {
      denyDialMultiaddr: async (ma) => !allowRemote && !isLoopback(ma),
    },
    connectionManager: { allow: LOOPBACK_CIDRS, maxConnections },
    nodeInfo: agentVersion == null ? undefined : { userAgent: agentVersion },
    start: false,
  });
  const peer = new JsPeer(node, muxers);
  await peer.start();
  return peer;
}

/** Summary of an identify exchange or of a peer store entry, with plain strings. */
function identifySummary(result) {
  return {
    peerId: result.peerId.toString(),
    agentVersion: result.agentVersion,
    protocolVersion: result.protocolVersion,
    protocols: [...result.protocols],
    listenAddrs: result.listenAddrs.map((ma) => ma.toString()),
    observedAddr: result.observedAddr?.toString(),
    publicKeyPeerId: result.publicKey == null ? undefined : peerIdFromPublicKeyBytes(result.publicKey),
  };
}

function metadataString(peer, name) {
  const value = peer.metadata.get(name);
  return value == null ? undefined : Buffer.from(value).toString('utf8');
}

export class JsPeer {
  constructor(node, muxers) {
    this.node = node;
    this.muxers = muxers;
    this.identifies = new Map(); // connection id -> promise of identifySummary
    this.waiters = new Set();
  }

  async start() {
    await this.node.handle(ECHO_PROTOCOL, ({ stream }) => this.serveEcho(stream), {
      maxInboundStreams: MAX_ECHO_STREAMS,
      maxOutboundStreams: MAX_ECHO_STREAMS,
    });
    // Identify every new connection, as js-libp2p does by default, but keep the outcome.
    this.node.addEventListener('connection:open', (evt) => this.identify(evt.detail).catch(() => {}));
    this.node.addEventListener('connection:open', (evt) => this.notify('connection', evt.detail));
    this.node.addEventListener('connection:close', (evt) => this.identifies.delete(evt.detail.id));
    await this.node.start();
  }

  serveEcho(stream) {
    stream.sink(stream.source).catch((err) => stream.abort(err));
  }

  get peerId() {
    return this.node.peerId.toString();
  }

  /** Listen addresses ending in /p2p/<peer id>. */
  get addrs() {
    return this.node.getMultiaddrs().map((ma) => ma.toString());
  }

  get addr() {
    if (this.addrs.length === 0) throw new Error('this peer does not listen');
    return this.addrs[0];
  }

  notify(kind, detail) {
    for (const waiter of this.waiters) {
      if (waiter.kind === kind && waiter.match(detail)) {
        this.waiters.delete(waiter);
        waiter.resolve(detail);
      }
    }
  }

  waitEvent(kind, match, timeoutMs, what) {
    let waiter;
    const promise = new Promise((resolve) => {
      waiter = { kind, match, resolve };
      this.waiters.add(waiter);
    });
    return withTimeout(promise, timeoutMs, what).finally(() => this.waiters.delete(waiter));
  }

  /** Waits for a connection from/to `peerId` (base58); resolves with the Connection. */
  async waitForConnection(peerId, { timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
    const existing = this.node.getConnections().find((c) => c.remotePeer.toString() === peerId);
    if (existing != null) return existing;
    return this.waitEvent('connection', (c) => c.remotePeer.toString() === peerId, timeoutMs,
      `connection with ${peerId}`);
  }

  /** Waits for the next connection opened after this call (inbound only if `inbound`). */
  nextConnection({ inbound = true, timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
    return this.waitEvent('connection', (c) => !inbound || c.direction === 'inbound', timeoutMs,
      inbound ? 'an inbound connection' : 'a connection');
  }

  /**
   * Dials a multiaddr (string); resolves with the Connection. js-libp2p 2.8 accepts whichever
   * identity the remote proves in the Noise handshake, so the /p2p/ part is checked here: a
   * different remote peer closes the connection and rejects with UnexpectedPeerError.
   */
  async dial(ma, { timeoutMs = DEFAULT_TIMEOUT_MS, force = false } = {}) {
    const target = multiaddr(ma);
    const conn = await this.node.dial(target, { signal: AbortSignal.timeout(timeoutMs), force });
    const expected = target.getPeerId();
    if (expected != null && conn.remotePeer.toString() !== expected) {
      await conn.close().catch(() => conn.abort(new Error('unexpected peer')));
      const err = new Error(`dialed ${expected} but the remote proved ${conn.remotePeer}`);
      err.name = 'UnexpectedPeerError';
      throw err;
    }
    return conn;
  }

  /**
   * Identify of the remote end of `conn` (run once per connection when it opens; the first call
   * for a connection opened before start() runs it). Resolves with a plain summary:
   * {peerId, agentVersion, protocolVersion, protocols, listenAddrs, observedAddr, publicKeyPeerId}.
   */
  identify(conn, { timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
    let pending = this.identifies.get(conn.id);
    if (pending == null) {
      const signal = AbortSignal.timeout(timeoutMs);
      pending = this.node.services.identify.identify(conn, { signal }).then(identifySummary);
      pending.catch(() => {});
      this.identifies.set(conn.id, pending);
    }
    return withTimeout(pending, timeoutMs, `identify of ${conn.remotePeer}`);
  }

  /** The peer store's entry for `peerId` (base58), as identify left it. */
  async peerInfo(peerId) {
    const conn = this.node.getConnections().find((c) => c.remotePeer.toString() === peerId);
    const id = conn?.remotePeer ?? peerIdFromString(peerId);
    const peer = await this.node.peerStore.get(id);
    return {
      peerId: peer.id.toString(),
      agentVersion: metadataString(peer, 'AgentVersion'),
      protocolVersion: metadataString(peer, 'ProtocolVersion'),
      protocols: [...peer.protocols],
      addresses: peer.addresses.map((a) => a.multiaddr.toString()),
      publicKeyPeerId: peer.id.publicKey == null ? undefined : peerIdFromPublicKey(peer.id.publicKey).toString(),
    };
  }

  /** Waits until the remote `peerId` has identified over some connection; returns peerInfo(). */
  async waitForPeerInfo(peerId, { timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
    const conn = await this.waitForConnection(peerId, { timeoutMs });
    await this.identify(conn, { timeoutMs });
    return this.peerInfo(peerId);
  }

  /**
   * Pings the remote end of `conn` `count` times in a row; resolves with the RTTs in ms.
   * On mplex the pings are spaced (intervalMs, default MPLEX_PING_INTERVAL_MS): js mplex counts
   * every frame that arrives for a stream it has already closed (the remote's CLOSE after a ping)
   * and aborts the connection past 5 such frames per second.
   */
  async ping(conn, count = 1, { timeoutMs = DEFAULT_TIMEOUT_MS, intervalMs } = {}) {
    const gap = intervalMs ?? (conn.multiplexer === MUXER_PROTOCOLS.mplex ? MPLEX_PING_INTERVAL_MS : 0);
    const rtts = [];
    for (let i = 0; i < count; i++) {
      if (i > 0 && gap > 0) await delay(gap);
      const signal = AbortSignal.timeout(timeoutMs);
      rtts.push(await this.node.services.ping.ping(conn.remotePeer, { signal }));
    }
    return rtts;
  }

  /**
   * Pushes `bytes` through /ld/echo/1.0.0 on each of `streams` concurrent streams of `conn`,
   * reading the echo at the same time; at most `window` bytes per stream are in flight (sent and
   * not yet echoed; default MPLEX_ECHO_WINDOW on mplex, which has no flow control and whose js
   * side resets a stream holding more than 4 MiB unread, unbounded on yamux). Resolves with
   * {bytes, streams, ok, ms, mbps (10^6 bytes/s of payload sent), sha256, results[]};
   * rejects if a stream fails or does not finish within timeoutMs.
   */
  async echo(conn, bytes, { streams = 1, timeoutMs = 120_000, window } = {}) {
    const limit = window ?? (conn.multiplexer === MUXER_PROTOCOLS.mplex ? MPLEX_ECHO_WINDOW : Infinity);
    const start = performance.now();
    const signal = AbortSignal.timeout(timeoutMs);
    const results = await Promise.all(
      Array.from({ length: streams }, (_, i) => echoOne(conn, bytes, i, signal, limit)));
    const ms = performance.now() - start;
    return {
      bytes,
      streams,
      ok: results.every((r) => r.ok),
      ms,
      mbps: (bytes * streams) / ms / 1000,
      sha256: results[0]?.sent,
      results,
    };
  }

  async stop() {
    for (const waiter of this.waiters) waiter.resolve(undefined);
    this.waiters.clear();
    await this.node.stop();
  }
}

/** Counts echoed bytes and lets the writer wait until fewer than `window` are in flight. */
class EchoFlow {
  constructor(window) {
    this.window = window;
    this.sent = 0;
    this.received = 0;
    this.wake = null;
  }

  async room(n) {
    while (this.sent + n - this.received > this.window && this.sent > this.received) {
      await new Promise((resolve) => { this.wake = resolve; });
    }
    this.sent += n;
  }

  got(n) {
    this.received += n;
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  end() {
    this.got(0);
    this.window = Infinity;
  }
}

async function* echoPayload(bytes, seed, hash, flow) {
  let offset = (seed * 7919) % (ECHO_POOL.length - ECHO_CHUNK);
  for (let left = bytes; left > 0;) {
    const n = Math.min(left, ECHO_CHUNK);
    const chunk = ECHO_POOL.subarray(offset, offset + n);
    await flow.room(n);
    hash.update(chunk);
    left -= n;
    offset = (offset + 4099) % (ECHO_POOL.length - ECHO_CHUNK);
    yield chunk;
  }
}

async function echoOne(conn, bytes, seed, signal, window) {
  const stream = await conn.newStream(ECHO_PROTOCOL, { signal, maxOutboundStreams: MAX_ECHO_STREAMS });
  const onAbort = () => stream.abort(signal.reason ?? new Error('echo aborted'));
  signal.addEventListener('abort', onAbort, { once: true });
  const flow = new EchoFlow(window);
  try {
    const sentHash = createHash('sha256');
    const recvHash = createHash('sha256');
    const writing = stream.sink(echoPayload(bytes, seed, sentHash, flow));
    writing.catch(() => {});
    try {
      for await (const list of stream.source) {
        for (const buf of list) {
          recvHash.update(buf);
          flow.got(buf.byteLength);
        }
        if (flow.received > bytes) break;
      }
    } finally {
      flow.end();
    }
    await writing;
    if (signal.aborted) throw signal.reason;
    const sent = sentHash.digest('hex');
    const back = recvHash.digest('hex');
    return { ok: flow.received === bytes && sent === back, received: flow.received, sent, back };
  } finally {
    signal.removeEventListener('abort', onAbort);
    await stream.close().catch(() => stream.abort(new Error('echo stream close failed')));
  }
}
