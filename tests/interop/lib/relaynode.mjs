// The relay node program (`logosdelivery --relay=true …`) under test, driven through nwaku's REST
// API, and what it logs about messages.
//
// What the node is expected to print (nwaku's behaviour):
//   - every listen address as a full multiaddr ending in /p2p/<peer id> (LISTEN_ADDR_RE);
//   - where its REST server listens, on a line containing "REST" and the URL http://<ip>:<port>
//     (nwaku: "Starting REST HTTP server url=http://127.0.0.1:8645/"), or a line containing
//     "REST" and port=<n>; with --rest-port=0 the port actually bound;
//   - "Node setup complete" once the node is up and REST answers;
//   - for every relay message it receives or publishes, a line holding the message's
//     deterministic hash as 64 hex digits (nwaku: "received relay message … msg_hash=0x…" and
//     "sent relay message … msg_hash=0x…", at DEBUG level in current nwaku, so tests start the
//     node with --log-level=DEBUG).
import './node20-compat.mjs';

import { setTimeout as delay } from 'node:timers/promises';

import { LISTEN_ADDR_RE, Proc, nodePath } from './cpeer.mjs';

export const REST_URL_RE = /\bREST\b[^\n]*?https?:\/\/(127\.0\.0\.1|localhost|0\.0\.0\.0|\[::1?\]|[\d.]+):(\d{1,5})/i;
export const REST_PORT_RE = /\bREST\b[^\n]*?\bport["=: ]+(\d{1,5})/i;
export const SETUP_COMPLETE_RE = /Node setup complete/;

const POLL_MS = 50;
const DEFAULT_TIMEOUT_MS = 20_000;

function b64(bytes) {
  return Buffer.from(bytes).toString('base64');
}

/**
 * JSON body of a REST publish. `msg`: {payload (bytes), contentTopic, timestamp (bigint ns),
 * meta?, ephemeral?}. The timestamp is written as a JSON integer (beyond 2^53, exactly).
 */
export function restMessageJson(msg) {
  const fields = [`"payload":${JSON.stringify(b64(msg.payload))}`, `"contentTopic":${JSON.stringify(msg.contentTopic)}`];
  if (msg.timestamp != null) fields.push(`"timestamp":${BigInt(msg.timestamp).toString()}`);
  if (msg.meta != null) fields.push(`"meta":${JSON.stringify(b64(msg.meta))}`);
  if (msg.ephemeral != null) fields.push(`"ephemeral":${msg.ephemeral ? 'true' : 'false'}`);
  return `{${fields.join(',')}}`;
}

/**
 * Parses a REST message list, keeping 64-bit timestamps exact: returns [{payload (Buffer),
 * contentTopic, version, timestamp (bigint), ephemeral, meta (Buffer|undefined)}].
 */
export function parseRestMessages(text) {
  const safe = text.replace(/("timestamp"\s*:\s*)(-?\d+)/g, '$1"$2"');
  const list = JSON.parse(safe);
  if (!Array.isArray(list)) throw new Error(`expected a JSON array, got ${text.slice(0, 200)}`);
  return list.map((m) => ({
    payload: Buffer.from(m.payload ?? '', 'base64'),
    contentTopic: m.contentTopic,
    version: m.version ?? 0,
    timestamp: m.timestamp == null ? undefined : BigInt(m.timestamp),
    ephemeral: Boolean(m.ephemeral),
    meta: m.meta == null || m.meta === '' ? undefined : Buffer.from(m.meta, 'base64'),
  }));
}

/** A small client for nwaku's REST API. Every call resolves with {status, text, json?}. */
export class RestClient {
  constructor(baseUrl) {
    this.base = baseUrl.replace(/\/$/, '');
    this.inbox = new Map(); // path -> messages returned by GETs so far
  }

  async request(method, path, body, { timeoutMs = 10_000 } = {}) {
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: body == null ? {} : { 'content-type': 'application/json' },
      body: body == null ? undefined : (typeof body === 'string' ? body : JSON.stringify(body)),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, text, json };
  }

  /** Like request() but rejects unless the status is 2xx. */
  async ok(method, path, body) {
    const r = await this.request(method, path, body);
    if (r.status < 200 || r.status >= 300) {
      throw Object.assign(new Error(`${method} ${path} answered ${r.status}: ${r.text.slice(0, 300)}`), { name: 'RestError', status: r.status });
    }
    return r;
  }

  info() {
    return this.ok('GET', '/debug/v1/info');
  }

  subscribe(pubsubTopics) {
    return this.ok('POST', '/relay/v1/subscriptions', pubsubTopics);
  }

  autoSubscribe(contentTopics) {
    return this.ok('POST', '/relay/v1/auto/subscriptions', contentTopics);
  }

  addPeers(multiaddrs) {
    return this.ok('POST', '/admin/v1/peers', multiaddrs);
  }

  /** POST /relay/v1/messages/{pubsubTopic} (raw result: the status is the caller's to judge). */
  publish(pubsubTopic, msg) {
    return this.request('POST', `/relay/v1/messages/${encodeURIComponent(pubsubTopic)}`, restMessageJson(msg));
  }

  /** POST /relay/v1/auto/messages (the content topic picks the shard). */
  autoPublish(msg) {
    return this.request('POST', '/relay/v1/auto/messages', restMessageJson(msg));
  }

  async fetchMessages(path) {
    const r = await this.ok('GET', path);
    const got = parseRestMessages(r.text);
    const all = this.inbox.get(path) ?? [];
    all.push(...got);
    this.inbox.set(path, all);
    return got;
  }

  /** GET /relay/v1/messages/{pubsubTopic}: the messages since the previous GET. */
  messages(pubsubTopic) {
    return this.fetchMessages(`/relay/v1/messages/${encodeURIComponent(pubsubTopic)}`);
  }

  /** GET /relay/v1/auto/messages/{contentTopic}. */
  autoMessages(contentTopic) {
    return this.fetchMessages(`/relay/v1/auto/messages/${encodeURIComponent(contentTopic)}`);
  }

  /**
   * Polls GET `kind` ('pubsub' with a pubsub topic, 'auto' with a content topic) until a message
   * matching `pred` has come back (REST offers no push, so polling is the only way to wait);
   * resolves with it. Everything returned meanwhile stays in `inbox`.
   */
  async waitMessage(kind, topic, pred, { timeoutMs = DEFAULT_TIMEOUT_MS, what = 'a message' } = {}) {
    const path = kind === 'auto'
      ? `/relay/v1/auto/messages/${encodeURIComponent(topic)}`
      : `/relay/v1/messages/${encodeURIComponent(topic)}`;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = (this.inbox.get(path) ?? []).find(pred);
      if (found != null) return found;
      if (Date.now() > deadline) {
        const err = new Error(`${what} not returned by GET ${path} within ${timeoutMs} ms `
          + `(${(this.inbox.get(path) ?? []).length} other messages)`);
        err.name = 'TimeoutError';
        throw err;
      }
      await this.fetchMessages(path);
      await delay(POLL_MS);
    }
  }
}

function restUrlFrom(line) {
  const m = line.match(REST_URL_RE);
  if (m != null && Number(m[2]) > 0) {
    const host = m[1] === '0.0.0.0' || m[1] === 'localhost' ? '127.0.0.1' : m[1];
    return `http://${host}:${m[2]}`;
  }
  const p = line.match(REST_PORT_RE);
  return p == null || Number(p[1]) === 0 ? null : `http://127.0.0.1:${p[1]}`;
}

/**
 * Starts the node program as a relay node with REST on an ephemeral loopback port. opts:
 *   relay (default true: --relay=true; false starts it without relay), clusterId, shards ([] = the
 *   node's default), numShardsInNetwork (autosharding), nodekey,
 *   rest (default true; false starts no HTTP server and leaves the REST URL null), restAdmin,
 *   logLevel (default DEBUG: message hashes are logged at that level), extraArgs, path ($LD_BIN),
 *   timeoutMs.
 * Resolves once the listen address, the REST URL (with rest) and "Node setup complete" have been
 * logged, with a RelayNode.
 */
export async function startRelayNode(opts = {}) {
  const { relay = true, clusterId, shards = [], numShardsInNetwork, nodekey, rest = true, restAdmin = false,
    logLevel = 'DEBUG', extraArgs = [], path = nodePath(), timeoutMs = 30_000, name = 'logosdelivery' } = opts;
  const args = [];
  if (nodekey != null) args.push(`--nodekey=${nodekey}`);
  args.push('--listen-address=127.0.0.1', '--tcp-port=0', `--relay=${relay}`);
  if (clusterId != null) args.push(`--cluster-id=${clusterId}`);
  for (const s of shards) args.push(`--shard=${s}`);
  if (numShardsInNetwork != null) args.push(`--num-shards-in-network=${numShardsInNetwork}`);
  if (rest) args.push('--rest=true', '--rest-address=127.0.0.1', '--rest-port=0');
  if (rest && restAdmin) args.push('--rest-admin=true');
  if (logLevel != null) args.push(`--log-level=${logLevel}`);
  args.push(...extraArgs);
  const proc = new Proc(path, args, { name });
  try {
    const [addr] = await proc.waitMatch(LISTEN_ADDR_RE, { timeoutMs });
    const restLine = rest
      ? await proc.waitLine((l) => restUrlFrom(l.text) != null, (l) => l.text, 'the REST server URL', timeoutMs)
      : null;
    await proc.waitMatch(SETUP_COMPLETE_RE, { timeoutMs });
    return new RelayNode(proc, addr, restLine != null ? restUrlFrom(restLine) : null);
  } catch (err) {
    await proc.stop();
    throw err;
  }
}

export class RelayNode {
  constructor(proc, addr, restUrl) {
    this.proc = proc;
    this.addr = addr;
    this.peerId = addr.split('/p2p/').pop();
    this.restUrl = restUrl;
    this.rest = restUrl != null ? new RestClient(restUrl) : null;
  }

  get pid() {
    return this.proc.pid;
  }

  /** Lines of the node's output that mention `hash` (64 hex digits, any case, 0x or not). */
  linesWithHash(hash) {
    const h = hash.toLowerCase();
    return this.proc.lines.filter((l) => l.text.toLowerCase().includes(h));
  }

  /** Waits for a log line holding `hash`; resolves with its text. */
  waitHashLogged(hash, { timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
    const h = hash.toLowerCase();
    return this.proc.waitLine((l) => l.text.toLowerCase().includes(h), (l) => l.text,
      `a log line with message hash ${hash}`, timeoutMs);
  }

  /** Waits for a log line matching `re` that mentions peer `peerId`. */
  waitPeerLine(peerId, re, { timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
    return this.proc.waitLine((l) => l.text.includes(peerId) && re.test(l.text), (l) => l.text,
      `a line matching ${re} about ${peerId}`, timeoutMs);
  }

  describe() {
    return this.proc.describe();
  }

  stop(opts) {
    return this.proc.stop(opts);
  }
}
