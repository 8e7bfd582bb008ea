#!/usr/bin/env node
// The relay node's command line and REST contract (the subset the relay tests and benchmarks use)
// implemented on js-libp2p gossipsub as js-waku configures it: the other end of the relay
// tests' self-check and a js stand-in for the node in the benchmarks.
//
//   relaynode-cli.mjs --relay=true --cluster-id=N [--shard=S …] [--num-shards-in-network=K]
//                     [--listen-address=127.0.0.1] [--tcp-port=0] [--nodekey=HEX]
//                     [--rest=true] [--rest-address=127.0.0.1] [--rest-port=0] [--rest-admin=true]
//                     [--log-level=…] [--staticnode=MA …] [--max-msg-size=…]
//                     [--max-connections=N] [--ip-colocation-limit=N (0 = none; default 5)]
//
// Logs like nwaku: "Listening on <multiaddr>", "Starting REST HTTP server url=http://…/",
// "Node setup complete", "received relay message … msg_hash=0x… receivedTime=<ns>" and
// "sent relay message … msg_hash=0x…". Peers whose metadata names another cluster, or that
// do not answer metadata, are disconnected. REST: /debug/v1/info, /admin/v1/peers (POST),
// /relay/v1/subscriptions, /relay/v1/messages/{pubsubTopic}, /relay/v1/auto/subscriptions,
// /relay/v1/auto/messages[/{contentTopic}] with nwaku's JSON and status codes.
import './node20-compat.mjs';

import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { identify } from '@libp2p/identify';
import { mplex } from '@libp2p/mplex';
import { ping } from '@libp2p/ping';
import { tcp } from '@libp2p/tcp';
import { multiaddr } from '@multiformats/multiaddr';
import { wakuGossipSub } from '@waku/relay';
import { createLibp2p } from 'libp2p';

import { privateKeyFromHex } from './jspeer.mjs';
import {
  MESHSUB_CODECS, RELAY_CODEC, autoTopic, decodeWakuMessage, encodeWakuMessage, queryMetadata,
  serveMetadata, shardTopic, wakuHash,
} from './wakupeer.mjs';

const OPTIONS = {
  relay: { type: 'string', default: 'true' },
  'cluster-id': { type: 'string', default: '0' },
  shard: { type: 'string', multiple: true, default: [] },
  'num-shards-in-network': { type: 'string', default: '0' },
  'listen-address': { type: 'string', default: '0.0.0.0' },
  'tcp-port': { type: 'string', default: '60000' },
  nodekey: { type: 'string' },
  rest: { type: 'string', default: 'false' },
  'rest-address': { type: 'string', default: '127.0.0.1' },
  'rest-port': { type: 'string', default: '8645' },
  'rest-admin': { type: 'string', default: 'false' },
  'log-level': { type: 'string', default: 'INFO' },
  'log-format': { type: 'string', default: 'TEXT' },
  staticnode: { type: 'string', multiple: true, default: [] },
  'max-msg-size': { type: 'string', default: '150KiB' },
  'max-connections': { type: 'string', default: '50' },
  'ip-colocation-limit': { type: 'string', default: '5' },
};

const REST_CACHE_MAX = 50;
// gossipsub's TopicValidatorResult values (@libp2p/interface)
const TopicValidatorResult = { Accept: 'accept', Reject: 'reject', Ignore: 'ignore' };
const MAX_BODY = 2 * 1024 * 1024;

const log = (msg, fields = {}) => {
  const kv = Object.entries(fields).map(([k, v]) => `${k}=${v}`).join(' ');
  process.stdout.write(`INF ${new Date().toISOString()} ${msg} ${kv}\n`);
};

function parseSize(text) {
  const m = /^(\d+)\s*(KiB|MiB|KB|MB|B)?$/i.exec(text);
  if (m == null) throw new Error(`bad size ${text}`);
  const unit = { kib: 1024, mib: 1024 * 1024, kb: 1000, mb: 1_000_000, b: 1 }[(m[2] ?? 'b').toLowerCase()];
  return Number(m[1]) * unit;
}

class JsRelayNode {
  constructor(opts) {
    this.clusterId = Number(opts['cluster-id']);
    this.numShards = Number(opts['num-shards-in-network']);
    this.shards = opts.shard.map(Number);
    if (this.shards.length === 0) this.shards = this.numShards > 0 ? [...Array(this.numShards).keys()] : [0];
    this.maxMsgSize = parseSize(opts['max-msg-size']);
    this.opts = opts;
    this.cache = new Map(); // pubsub topic -> messages for REST GET
    this.autoCache = new Map(); // content topic -> messages
    this.topics = new Set();
  }

  async start() {
    const o = this.opts;
    const privateKey = o.nodekey ? privateKeyFromHex(o.nodekey) : await generateKeyPair('secp256k1');
    const pubsub = wakuGossipSub({
      allowPublishToZeroTopicPeers: true,
      maxInboundDataLength: this.maxMsgSize + 64 * 1024,
      scoreParams: {
        IPColocationFactorWeight: -50,
        IPColocationFactorThreshold: Number(o['ip-colocation-limit']) || 1e9,
      },
    });
    this.node = await createLibp2p({
      privateKey,
      addresses: { listen: [`/ip4/${o['listen-address']}/tcp/${o['tcp-port']}`] },
      transports: [tcp()],
      connectionEncrypters: [noise()],
      streamMuxers: [yamux(), mplex()],
      connectionManager: { allow: ['/ip4/127.0.0.0/ipcidr/8'], maxConnections: Number(o['max-connections']) },
      nodeInfo: { userAgent: 'logosdelivery-js' },
      services: {
        identify: identify(),
        ping: ping(),
        pubsub: (components) => {
          const g = pubsub(components);
          g.multicodecs = [RELAY_CODEC, ...MESHSUB_CODECS];
          return g;
        },
      },
      start: false,
    });
    await serveMetadata(this.node, { clusterId: this.clusterId, shards: this.shards }, new Map());
    await this.node.start();
    this.pubsub = this.node.services.pubsub;
    this.pubsub.addEventListener('gossipsub:message', (e) => this.onMessage(e.detail));
    this.node.addEventListener('connection:open', (e) => this.onConnection(e.detail));
    for (const s of this.shards) this.subscribe(shardTopic(this.clusterId, s));
    for (const ma of this.node.getMultiaddrs()) log('Listening on', { full: ma.toString() });
    for (const ma of o.staticnode) this.node.dial(multiaddr(ma)).catch((err) => log('static node dial failed', { err: err.message }));
  }

  subscribe(topic) {
    if (!this.cache.has(topic)) this.cache.set(topic, []);
    if (this.topics.has(topic)) return;
    this.topics.add(topic);
    this.pubsub.topicValidators.set(topic, (_peer, msg) => this.validate(msg));
    this.pubsub.subscribe(topic);
  }

  validate(msg) {
    if (msg.data.length > this.maxMsgSize) return TopicValidatorResult.Reject;
    try {
      const m = decodeWakuMessage(msg.data);
      return m.contentTopic ? TopicValidatorResult.Accept : TopicValidatorResult.Reject;
    } catch {
      return TopicValidatorResult.Reject;
    }
  }

  async onConnection(conn) {
    const peer = conn.remotePeer.toString();
    log('Connected to peer', { peerId: peer, direction: conn.direction });
    try {
      const info = await queryMetadata(conn, { clusterId: this.clusterId, shards: this.shards });
      if (info.clusterId === this.clusterId) return;
      log('disconnecting from peer', { peerId: peer, reason: `cluster ${info.clusterId} is not ours` });
    } catch (err) {
      log('disconnecting from peer', { peerId: peer, reason: `metadata failed: ${err.message}` });
    }
    await this.node.hangUp(conn.remotePeer).catch(() => {});
  }

  keep(topic, message) {
    const list = this.cache.get(topic);
    if (list != null) {
      list.push(message);
      if (list.length > REST_CACHE_MAX) list.shift();
    }
    const auto = this.autoCache.get(message.contentTopic);
    if (auto != null) {
      auto.push(message);
      if (auto.length > REST_CACHE_MAX) auto.shift();
    }
  }

  onMessage({ msg, propagationSource }) {
    let message;
    try {
      message = decodeWakuMessage(msg.data);
    } catch {
      return;
    }
    const receivedTime = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
    log('received relay message', {
      my_peer_id: this.node.peerId.toString(),
      msg_hash: `0x${wakuHash(msg.topic, message)}`,
      from_peer_id: propagationSource.toString(),
      topic: msg.topic,
      receivedTime,
      payloadSizeBytes: message.payload.length,
    });
    this.keep(msg.topic, message);
  }

  async publish(topic, message) {
    if (!this.topics.has(topic)) return { status: 400, text: `Failed to publish: Node not subscribed to topic: ${topic}` };
    if (message.timestamp == null || message.timestamp === 0n) {
      message.timestamp = BigInt(Date.now()) * 1_000_000n;
    }
    const wire = encodeWakuMessage(message);
    if (wire.length > this.maxMsgSize) return { status: 400, text: 'Message size exceeded maximum' };
    const sentTime = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
    const { recipients } = await this.pubsub.publish(topic, wire);
    log('sent relay message', {
      my_peer_id: this.node.peerId.toString(),
      msg_hash: `0x${wakuHash(topic, message)}`,
      topic,
      sentTime,
      recipients: recipients.length,
    });
    this.keep(topic, message);
    return { status: 200, text: 'OK' };
  }

  autoTopicOf(contentTopic) {
    return autoTopic(contentTopic, this.clusterId, this.numShards > 0 ? this.numShards : 1);
  }
}

// ---------------------------------------------------------------------------------------------
// REST

function messageJson(m) {
  const f = [`"payload":"${Buffer.from(m.payload).toString('base64')}"`, `"contentTopic":${JSON.stringify(m.contentTopic)}`,
    `"version":${m.version ?? 0}`, `"timestamp":${(m.timestamp ?? 0n).toString()}`, `"ephemeral":${Boolean(m.ephemeral)}`];
  if (m.meta != null) f.push(`"meta":"${Buffer.from(m.meta).toString('base64')}"`);
  return `{${f.join(',')}}`;
}

/** Parses a publish body like nwaku: 400 with a reason unless it is a well-formed message. */
function parsePublishBody(text) {
  let body;
  try {
    body = JSON.parse(text.replace(/("timestamp"\s*:\s*)(-?\d+)/g, '$1"$2"'));
  } catch {
    return { error: 'Failed to decode request body' };
  }
  if (typeof body?.payload !== 'string' || body.payload === '') return { error: 'Payload must be a non-empty base64 string' };
  if (typeof body.contentTopic !== 'string' || body.contentTopic === '') return { error: 'contentTopic must be a non-empty string' };
  let timestamp;
  if (body.timestamp != null) {
    if (!/^-?\d+$/.test(String(body.timestamp))) return { error: 'timestamp must be an int64' };
    timestamp = BigInt(body.timestamp);
    if (timestamp > 2n ** 63n - 1n || timestamp < -(2n ** 63n)) return { error: 'timestamp must be an int64' };
  }
  return {
    message: {
      payload: Buffer.from(body.payload, 'base64'),
      contentTopic: body.contentTopic,
      timestamp,
      meta: body.meta ? Buffer.from(body.meta, 'base64') : undefined,
      ephemeral: Boolean(body.ephemeral),
    },
  };
}

async function readBody(req) {
  const chunks = [];
  let size = 0;
  for await (const c of req) {
    size += c.length;
    if (size > MAX_BODY) throw new Error('body too large');
    chunks.push(c);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function drain(map, key) {
  const list = map.get(key);
  if (list == null) return null;
  map.set(key, []);
  return `[${list.map(messageJson).join(',')}]`;
}

async function route(node, admin, method, path, text) {
  const seg = path.split('/').map((s) => decodeURIComponent(s));
  const at = (...want) => want.every((w, i) => seg[i + 1] === w);
  if (method === 'GET' && path === '/debug/v1/info') {
    return { status: 200, json: JSON.stringify({ listenAddresses: node.node.getMultiaddrs().map(String) }) };
  }
  if (method === 'GET' && path === '/health') return { status: 200, json: '{"nodeHealth":"Ready"}' };
  if (method === 'POST' && path === '/admin/v1/peers' && admin) {
    const list = JSON.parse(text);
    await Promise.all(list.map((ma) => node.node.dial(multiaddr(ma))));
    return { status: 200, text: 'OK' };
  }
  if (method === 'POST' && path === '/relay/v1/subscriptions') {
    for (const t of JSON.parse(text)) node.subscribe(t);
    return { status: 200, text: 'OK' };
  }
  if (method === 'POST' && path === '/relay/v1/auto/subscriptions') {
    for (const ct of JSON.parse(text)) {
      node.subscribe(node.autoTopicOf(ct));
      if (!node.autoCache.has(ct)) node.autoCache.set(ct, []);
    }
    return { status: 200, text: 'OK' };
  }
  if (at('relay', 'v1', 'auto', 'messages')) {
    if (method === 'POST' && seg.length === 5) {
      const { error, message } = parsePublishBody(text);
      if (error) return { status: 400, text: error };
      return node.publish(node.autoTopicOf(message.contentTopic), message);
    }
    if (method === 'GET' && seg.length === 6) {
      const json = drain(node.autoCache, seg[5]);
      // nwaku's 404 body: the content topic
      return json == null ? { status: 404, text: seg[5] } : { status: 200, json };
    }
  }
  if (at('relay', 'v1', 'messages') && seg.length === 5) {
    const topic = seg[4];
    if (method === 'POST') {
      const { error, message } = parsePublishBody(text);
      if (error) return { status: 400, text: error };
      return node.publish(topic, message);
    }
    if (method === 'GET') {
      const json = drain(node.cache, topic);
      return json == null ? { status: 404, text: '' } : { status: 200, json }; // nwaku: no body
    }
  }
  return { status: 404, text: 'Not found' };
}

function startRest(node, host, port, admin) {
  const server = createServer((req, res) => {
    readBody(req)
      .then((text) => route(node, admin, req.method, req.url.split('?')[0], text))
      .then((r) => {
        res.writeHead(r.status, { 'content-type': r.json != null ? 'application/json' : 'text/plain' });
        res.end(r.json ?? r.text);
      }, (err) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(err?.message ?? err));
      });
  });
  server.keepAliveTimeout = 120_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(port), host, () => resolve(server));
  });
}

async function main() {
  const { values: o } = parseArgs({ options: OPTIONS, allowPositionals: false });
  process.on('unhandledRejection', (err) => process.stderr.write(`js-libp2p: ${err?.stack ?? err}\n`));
  const node = new JsRelayNode(o);
  await node.start();
  let server = null;
  if (o.rest === 'true') {
    server = await startRest(node, o['rest-address'], o['rest-port'], o['rest-admin'] === 'true');
    log('Starting REST HTTP server', { url: `http://${o['rest-address']}:${server.address().port}/` });
  }
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    server?.close();
    await node.node.stop().catch(() => {});
    log('Node stopped');
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  log('Node setup complete');
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});
