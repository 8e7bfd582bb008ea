// A fleet of relay node processes for the relay benchmarks, all driven the same way whatever
// implements them:
//   --impl js    lib/relaynode-cli.mjs: js-libp2p gossipsub configured as js-waku does
//                (/vac/waku/relay/2.0.0, StrictNoSign, sha256 message IDs), the js baseline
//   --impl node  logosdelivery ($LD_BIN or --node PATH; take figures from a Release build)
// Each process is started with nwaku's flags (--relay=true --cluster-id --shard --rest=true
// --rest-port=0 --rest-admin=true --tcp-port=0); the topology is made with POST /admin/v1/peers;
// messages are published with POST /relay/v1/messages/{pubsubTopic} round-robin over the nodes;
// a delivery is a log line of the receiving node holding the message's deterministic hash
// (nwaku's "received relay message … msg_hash=0x… receivedTime=<ns>"), and the latency runs
// from the origin's "sent relay message … msg_hash=0x… sentTime=<ns>" line to it (see
// Fleet.latencies).
import '../lib/node20-compat.mjs';

import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';

import { LISTEN_ADDR_RE, nodePath } from '../lib/cpeer.mjs';
import { REST_PORT_RE, REST_URL_RE, RestClient, SETUP_COMPLETE_RE, restMessageJson } from '../lib/relaynode.mjs';
import { wakuHash } from '../lib/wakupeer.mjs';

export const JS_RELAY_CLI = [process.execPath, fileURLToPath(new URL('../lib/relaynode-cli.mjs', import.meta.url))];
const HASH_RE = /msg_hash["=:\s]+(?:0x)?([0-9a-fA-F]{64})/;
const RECEIVED_RE = /received relay message/i;
const SENT_RE = /sent relay message/i;
const RECEIVED_TIME_RE = /receivedTime["=:\s]+(\d{16,20})/;
const SENT_TIME_RE = /sentTime["=:\s]+(\d{16,20})/;
const METRICS_URL_RE = /Metrics HTTP server started at (http:\/\/\S+\/metrics)/;
const CLK_TCK = 100;
const PUBLISH_TIMEOUT_MS = 30_000;
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** POST `body` to `url` over a kept-alive connection; resolves with {status, text}. */
function post(url, body) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json' },
      timeout: PUBLISH_TIMEOUT_MS }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, text }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('publish timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

/** Wall clock in ns with sub-ms resolution (the same clock in every process of this machine). */
export function wallNs() {
  return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
}

function restUrlFrom(text) {
  const m = text.match(REST_URL_RE);
  if (m != null && Number(m[2]) > 0) return `http://127.0.0.1:${m[2]}`;
  const p = text.match(REST_PORT_RE);
  return p != null && Number(p[1]) > 0 ? `http://127.0.0.1:${p[1]}` : null;
}

/**
 * One relay node process. Its output is scanned line by line and not kept (a loaded node logs
 * tens of thousands of lines); `onEvent(kind ('sent'|'received'), index, hash, readNs, nodeNs)`
 * is called for every relay message line: readNs = when this process read the line, nodeNs =
 * the node's own sentTime/receivedTime field, or null.
 */
export class FleetNode {
  constructor(command, args, index, onEvent) {
    const [file, ...prefix] = [].concat(command);
    this.index = index;
    this.tail = [];
    this.onEvent = onEvent;
    this.child = spawn(file, [...prefix, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.pid = this.child.pid;
    this.exited = new Promise((resolve) => this.child.on('close', (code, signal) => resolve({ code, signal })));
    this.ready = new Promise((resolve, reject) => {
      this.readyResolve = resolve;
      this.exited.then((s) => reject(new Error(`node ${index} exited ${JSON.stringify(s)}\n${this.tail.join('\n')}`)));
    });
    this.ready.catch(() => {});
    for (const stream of [this.child.stdout, this.child.stderr]) this.read(stream);
  }

  read(stream) {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (data) => {
      const lines = (rest + data).split('\n');
      rest = lines.pop();
      for (const line of lines) this.line(line);
    });
  }

  line(text) {
    if (this.tail.length >= 30) this.tail.shift();
    this.tail.push(text);
    const kind = RECEIVED_RE.test(text) ? 'received' : SENT_RE.test(text) ? 'sent' : null;
    if (kind != null) {
      const h = text.match(HASH_RE);
      if (h != null) {
        const t = text.match(kind === 'received' ? RECEIVED_TIME_RE : SENT_TIME_RE);
        this.onEvent(kind, this.index, h[1].toLowerCase(), wallNs(), t != null ? BigInt(t[1]) : null);
      }
      return;
    }
    if (this.addr == null && LISTEN_ADDR_RE.test(text)) this.addr = text.match(LISTEN_ADDR_RE)[0];
    if (this.restUrl == null) this.restUrl = restUrlFrom(text);
    if (this.metricsUrl == null && METRICS_URL_RE.test(text)) this.metricsUrl = text.match(METRICS_URL_RE)[1];
    if (SETUP_COMPLETE_RE.test(text)) this.setup = true;
    if (this.addr != null && this.restUrl != null && this.setup) {
      this.rest ??= new RestClient(this.restUrl);
      this.readyResolve(this);
    }
  }

  /** CPU time used so far (user + system), ms. */
  async cpuMs() {
    const stat = await readFile(`/proc/${this.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
  }

  async rssMiB() {
    const status = await readFile(`/proc/${this.pid}/status`, 'utf8');
    return Number(status.match(/^VmRSS:\s+(\d+) kB/m)[1]) / 1024;
  }

  async stop() {
    if (this.child.exitCode != null || this.child.signalCode != null) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** The command line of one relay node of the fleet. */
export function fleetCommand(opts) {
  if (opts.impl === 'js') return JS_RELAY_CLI;
  if (opts.impl === 'node') {
    const path = opts.node ?? nodePath();
    if (!path) throw new Error('logosdelivery not found: set LD_BIN or pass --node PATH');
    return path;
  }
  throw new Error(`unknown --impl ${opts.impl}`);
}

export function nodeArgs({ clusterId, shard, extra = [] }) {
  return ['--listen-address=127.0.0.1', '--tcp-port=0', '--relay=true', `--cluster-id=${clusterId}`, `--shard=${shard}`,
    '--rest=true', '--rest-address=127.0.0.1', '--rest-port=0', '--rest-admin=true', '--max-connections=200',
    '--ip-colocation-limit=0', '--log-level=DEBUG', ...extra];
}

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * N relay processes on one static shard. `run()` publishes at a given total rate through the
 * nodes' REST APIs, round-robin over the nodes, and measures deliveries.
 */
export class Fleet {
  constructor(opts) {
    this.opts = opts;
    this.topic = `/waku/2/rs/${opts.clusterId}/${opts.shard}`;
    this.contentTopic = '/ld/1/bench/proto';
    this.nodes = [];
    this.sent = new Map(); // hash -> {origin, sentNs, seen (node indexes), latencies, run}
  }

  async start() {
    const cmd = fleetCommand(this.opts);
    const args = nodeArgs({ clusterId: this.opts.clusterId, shard: this.opts.shard, extra: this.opts.nodeArgs });
    const onEvent = (...event) => this.event(...event);
    // opts.firstPrefix: a command prefix for node 0 only (valgrind for the instruction count).
    for (let i = 0; i < this.opts.nodes; i++) {
      const c = i === 0 && this.opts.firstPrefix ? [...this.opts.firstPrefix, ...[].concat(cmd)] : cmd;
      this.nodes.push(new FleetNode(c, args, i, onEvent));
    }
    await Promise.all(this.nodes.map((n) => n.ready));
  }

  /** Node i dials nodes i+1 … i+degree (mod N) through POST /admin/v1/peers. */
  async connect(degree) {
    const n = this.nodes.length;
    await Promise.all(this.nodes.map((node, i) => {
      const targets = [];
      for (let k = 1; k <= degree && k < n; k++) targets.push(this.nodes[(i + k) % n].addr);
      return node.rest.addPeers(targets);
    }));
  }

  /**
   * Publishes probe messages until one published by every node reaches all the others
   * (the mesh is formed), within timeoutMs; then `seconds` of traffic at `rate` so that the
   * measured runs start warm. Resolves with the figures of that last run.
   */
  async warmUp({ timeoutMs = 60_000, seconds = 5, rate = 20 } = {}) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await this.run({ rate, count: this.nodes.length, drainMs: 3000, label: 'mesh' });
      if (r.deliveredToAll === r.published) break;
      if (Date.now() > deadline) throw new Error(`mesh not formed: ${JSON.stringify(r)}`);
      await delay(1000);
    }
    return this.run({ rate, count: rate * seconds, label: 'warm-up' });
  }

  event(kind, index, hash, readNs, nodeNs) {
    const m = this.sent.get(hash);
    if (m == null) return;
    if (kind === 'sent') {
      if (index === m.origin && m.sentRead == null) Object.assign(m, { sentRead: readNs, sentNode: nodeNs });
      return;
    }
    if (m.origin === index || m.seen.has(index)) return;
    m.seen.add(index);
    m.receipts.push({ readNs, nodeNs });
    if (readNs > m.run.lastNs) m.run.lastNs = readNs;
    if (m.seen.size === this.nodes.length - 1) m.run.deliveredToAll++;
  }

  /**
   * Latencies (ms) of one message: from its origin logging "sent relay message" to each other
   * node logging "received relay message" — by the nodes' own sentTime/receivedTime when both
   * are logged, else by when this process read the two lines; without a sent line, from the
   * REST publish call.
   */
  static latencies(m) {
    return m.receipts.map(({ readNs, nodeNs }) => {
      if (nodeNs != null && m.sentNode != null) return Number(nodeNs - m.sentNode) / 1e6;
      return Number(readNs - (m.sentRead ?? m.sentNs)) / 1e6;
    });
  }

  message(origin, seq, size) {
    const payload = Buffer.alloc(size);
    payload.write(`ld-bench ${this.runId} ${origin} ${seq} `);
    for (let i = 48; i < size; i += 4) payload.writeUInt32LE((seq * 2654435761 + i) >>> 0, i);
    return { payload, contentTopic: this.contentTopic, timestamp: wallNs() };
  }

  async publishOne(origin, seq, size, run) {
    const msg = this.message(origin, seq, size);
    const hash = wakuHash(this.topic, msg);
    this.sent.set(hash, { origin, sentNs: msg.timestamp, seen: new Set(), receipts: [], run });
    run.hashes.push(hash);
    try {
      const node = this.nodes[origin];
      const r = await post(`${node.restUrl}/relay/v1/messages/${encodeURIComponent(this.topic)}`, restMessageJson(msg));
      if (r.status !== 200) this.failed(hash, run, `${r.status} ${r.text.slice(0, 120)}`);
    } catch (err) {
      this.failed(hash, run, err.message);
    }
  }

  /** A publish the node refused or that failed: the message is left out of the figures. */
  failed(hash, run, why) {
    run.errors.push(why);
    const m = this.sent.get(hash);
    if (m != null && m.seen.size === this.nodes.length - 1) run.deliveredToAll--;
    this.sent.delete(hash);
  }

  /**
   * Publishes `count` messages of `size` bytes at `rate` messages/s in total (paced, open
   * loop, at most `inflight` REST calls at once), then waits until every message reached every
   * node or nothing arrived for drainMs. Returns the figures of the run.
   */
  async run({ rate, count, size = 1024, inflight = 64, drainMs = 3000, maxDrainMs = 60_000, label = '' }) {
    this.runId = (this.runId ?? 0) + 1;
    const cpu0 = await Promise.all(this.nodes.map((n) => n.cpuMs()));
    const t0 = wallNs();
    const run = { hashes: [], errors: [], deliveredToAll: 0, lastNs: t0 };
    let active = 0;
    let wake = null;
    for (let seq = 0; seq < count; seq++) {
      const due = Number(t0) / 1e6 + (seq * 1000) / rate;
      const wait = due - Number(wallNs()) / 1e6;
      if (wait > 1) await delay(wait);
      while (active >= inflight) await new Promise((resolve) => { wake = resolve; });
      active++;
      this.publishOne(seq % this.nodes.length, seq, size, run).finally(() => {
        active--;
        wake?.();
      });
    }
    while (active > 0) await new Promise((resolve) => { wake = resolve; });
    const tPublished = wallNs();
    const drainEnd = Date.now() + maxDrainMs;
    let last = -1;
    let quietSince = Date.now();
    while (run.deliveredToAll < count - run.errors.length && Date.now() < drainEnd) {
      const total = run.hashes.reduce((a, h) => a + (this.sent.get(h)?.seen.size ?? 0), 0);
      if (total !== last) {
        last = total;
        quietSince = Date.now();
      } else if (Date.now() - quietSince > drainMs) {
        break;
      }
      await delay(50);
    }
    const cpu1 = await Promise.all(this.nodes.map((n) => n.cpuMs()));
    return this.figures(run, { rate, count, size, label, t0, tPublished, cpuMs: cpu1.reduce((a, c, i) => a + c - cpu0[i], 0) });
  }

  figures(run, { rate, count, size, label, t0, tPublished, cpuMs }) {
    const latencies = [];
    let deliveries = 0;
    for (const h of run.hashes) {
      const m = this.sent.get(h);
      if (m == null) continue;
      deliveries += m.seen.size;
      latencies.push(...Fleet.latencies(m));
      this.sent.delete(h);
    }
    latencies.sort((a, b) => a - b);
    const spanS = Number(run.lastNs - t0) / 1e9;
    const r2 = (x) => Number(x.toFixed(2));
    return {
      label,
      offeredRate: rate,
      published: count - run.errors.length,
      publishErrors: run.errors.length,
      firstError: run.errors[0],
      payloadBytes: size,
      publishSeconds: r2(Number(tPublished - t0) / 1e9),
      deliveredToAll: run.deliveredToAll,
      deliveredToAllPerSecond: r2(run.deliveredToAll / Math.max(spanS, 1e-3)),
      deliveries,
      latencyMs: { p50: r2(percentile(latencies, 50)), p99: r2(percentile(latencies, 99)), max: r2(latencies.at(-1) ?? NaN) },
      cpuMsPerDelivery: deliveries > 0 ? Number((cpuMs / deliveries).toFixed(4)) : null,
      cpuMsTotal: r2(cpuMs),
    };
  }

  async stop() {
    await Promise.all(this.nodes.map((n) => n.stop()));
  }
}
