#!/usr/bin/env node
// Relay mesh throughput, latency and CPU for both implementations in one command:
//   --impl js    runs relay-mesh.mjs --impl js unchanged (REST publishing, deliveries and
//                latencies from log lines) and prints its JSON line;
//   --impl node  the same fleet of logosdelivery processes (--nodes, each dialing --degree
//                others, one static shard) fed by bench_relay (bench/relay.c: one relay peer per
//                fleet node, publishing round-robin at a paced rate with timestamp = now), and
//                measured from each node's /metrics instead of its log:
//                  deliveries per node   growth of waku_relay_message_latency_seconds_count
//                  delivered to every    min over the nodes of that growth (capped at published)
//                  node
//                  rate                  that min / (first publish → the 50 ms scrape at which
//                                        the last node had it all)
//                  latency p50/p99       from the sum over the nodes of the histogram's growth
//                                        (now − message timestamp at the receiving node), as
//                                        the upper bound of the bucket holding the percentile
//                  CPU per delivery      CPU time (/proc/<pid>/stat) of all fleet nodes during
//                                        the run / deliveries (bench_relay's own CPU reported
//                                        apart as publisherCpuMs)
//
//   node bench/relay-rate.mjs [--impl js,node] [--node PATH] [--bench PATH] [--nodes 10]
//        [--degree 4] [--size 1024] [--ramp 1000,2000,4000,8000,16000] [--ramp-seconds 5]
//        [--rates 50,1000] [--seconds 10] [--js-ramp …] [--node-arg ARG …]
//   node bench/relay-rate.mjs --impl node --callgrind RATE,COUNT
//   node bench/relay-rate.mjs --impl node --status-page 1 [...]
//   node bench/relay-rate.mjs --impl node --rln 50:100,1000:3000 [--nodes 10] [--rln-threads 2]
//        [--rln-gap-ms 20000] [--rln-circuit DIR] [--rln-start-in SECONDS]
//
// --rln SEGMENTS: RLN validation on in every fleet node (--rln-relay with a static group of one
// member, --rln-relay-epoch-sec 3600, a user message limit above the message count), and every
// message carries an RLN-v2 proof made beforehand by bench_relay_rln_prove (bench/
// relay_rln_prove.c, on --rln-threads threads, while the fleet starts): one run per RATE:COUNT
// segment, each message's timestamp its planned send time (part of the proved signal), the
// segments --rln-gap-ms apart; bench_relay publishes each message at its timestamp (`replay`).
// The first segment doubles as the mesh's warm-up. Per run, besides the figures above: the
// delivered fraction, the CPU of the fleet in cores, and from each node's /metrics the proofs
// verified and the batches they were verified in (waku_rln_proof_verification_total,
// waku_rln_proof_verification_batches_total).
//
// --status-page S: node 0's status page (GET /, refreshing every S seconds) stays open in
// headless Chromium (puppeteer-core; $LD_CHROMIUM or /usr/bin/chromium) from the warm-up on, as
// an operator watching the node would have it; the report gives the page's refresh count.
//
// --callgrind: node 0 of the fleet runs under `valgrind --tool=callgrind --instr-atstart=no`;
// instrumentation is switched on (callgrind_control -i on, counters zeroed) just before COUNT
// messages are published at RATE/s and the counts are dumped once node 0 has them all; the
// figure is node 0's instructions (Ir) / the messages delivered at node 0 in that window
// (everything the node did meanwhile included: receiving duplicates, forwarding, heartbeats).
//
// Saturation (node): runs at each --ramp rate, stopping after a run that loses messages or
// delivers less than 90 % of its offered rate; the figure is the best delivered-to-every-node
// rate of a run without loss. Prints one JSON line per implementation.
import '../lib/node20-compat.mjs';

import { spawn } from 'node:child_process';
import { get } from 'node:http';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as delay } from 'node:timers/promises';

import { report, run } from './common.mjs';
import { Fleet } from './relay-fleet.mjs';

const list = (text) => text.split(',').filter(Boolean).map(Number);
const HIST = 'waku_relay_message_latency_seconds';
const POLL_MS = 50;
const r2 = (x) => Number(x.toFixed(2));

run(async () => {
  const { values: o } = parseArgs({
    options: {
      impl: { type: 'string', default: 'js,node' },
      node: { type: 'string' },
      bench: { type: 'string' },
      'node-arg': { type: 'string', multiple: true, default: [] },
      nodes: { type: 'string', default: '10' },
      degree: { type: 'string', default: '4' },
      size: { type: 'string', default: '1024' },
      ramp: { type: 'string', default: '1000,2000,4000,8000,16000' },
      'js-ramp': { type: 'string', default: '50,100,200,400,800,1600' },
      'ramp-seconds': { type: 'string', default: '5' },
      rates: { type: 'string', default: '50,1000' },
      seconds: { type: 'string', default: '10' },
      cluster: { type: 'string', default: '42' },
      shard: { type: 'string', default: '0' },
      callgrind: { type: 'string' },
      'status-page': { type: 'string' },
      rln: { type: 'string' },
      'rln-threads': { type: 'string', default: '2' },
      'rln-gap-ms': { type: 'string', default: '20000' },
      'rln-circuit': { type: 'string' },
      'rln-start-in': { type: 'string' },
    },
  });
  for (const impl of o.impl.split(',')) {
    if (impl === 'js') await measureJs(o);
    else if (impl === 'node' && o.callgrind) await measureInstructions(o);
    else if (impl === 'node' && o.rln) await measureRln(o);
    else if (impl === 'node') await measureNode(o);
    else throw new Error(`unknown --impl ${impl}`);
  }
});

/** relay-mesh.mjs --impl js as it is; its JSON line is printed unchanged. */
async function measureJs(o) {
  const script = fileURLToPath(new URL('./relay-mesh.mjs', import.meta.url));
  const args = [script, '--impl', 'js', '--nodes', o.nodes, '--degree', o.degree, '--size', o.size,
    '--ramp', o['js-ramp'], '--ramp-seconds', o['ramp-seconds'], '--rates', o.rates, '--seconds', o.seconds,
    '--cluster', o.cluster, '--shard', o.shard];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d) => { out += d; });
  const code = await new Promise((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`relay-mesh.mjs --impl js exited ${code}`);
  process.stdout.write(out);
}

/** Node 0's status page in headless Chromium, refreshing every `seconds`; close() resolves with
 * {refreshSeconds, refreshes, errors}. */
async function openStatusPage(restUrl, seconds) {
  const { default: puppeteer } = await import('puppeteer-core');
  const executablePath = [process.env.LD_CHROMIUM, '/usr/bin/chromium'].find((p) => p && existsSync(p));
  if (executablePath == null) throw new Error('--status-page needs chromium ($LD_CHROMIUM)');
  const browser = await puppeteer.launch({ executablePath, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(`${restUrl}/?refresh=${seconds}`, { waitUntil: 'load' });
  return {
    async close() {
      const refreshes = await page.evaluate(() => Number(document.body.dataset.refreshes || 0));
      await browser.close();
      return { refreshSeconds: seconds, refreshes, errors: errors.length };
    },
  };
}

function benchPath(o) {
  const path = o.bench ?? process.env.LD_BENCH_RELAY
    ?? fileURLToPath(new URL('../../../build-rel/bench_relay', import.meta.url));
  if (!existsSync(path)) throw new Error(`bench_relay not found at ${path}: set LD_BENCH_RELAY or pass --bench`);
  return path;
}

/** GET a node's /metrics; resolves with {count, bounds, cum} of the latency histogram. */
function scrape(url) {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve(parseHistogram(text)));
      res.on('error', reject);
    }).on('error', reject);
  });
}

function parseHistogram(text) {
  const bounds = [];
  const cum = [];
  let count = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(HIST)) continue;
    const b = line.match(/_bucket\{le="([^"]+)"\} (\S+)/);
    if (b != null && b[1] !== '+Inf') {
      bounds.push(Number(b[1]));
      cum.push(Number(b[2]));
    } else if (line.startsWith(`${HIST}_count `)) {
      count = Number(line.split(' ')[1]);
    }
  }
  return { count, bounds, cum };
}

/** Percentile (0–100) of a cumulative histogram as the upper bound of its bucket, ms. */
function histPercentile(bounds, cum, total, p) {
  if (total === 0) return NaN;
  const want = Math.ceil((p / 100) * total);
  for (let i = 0; i < bounds.length; i++) if (cum[i] >= want) return bounds[i] * 1000;
  return Infinity;
}

/** bench_relay as a child: line protocol on stdin/stdout (see bench/relay.c). */
class Publisher {
  constructor(path, peers, o) {
    const args = peers.flatMap((p) => ['--peer', p]);
    args.push('--cluster', o.cluster, '--shard', o.shard, '--size', o.size);
    this.child = spawn(path, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    this.pid = this.child.pid;
    this.waiting = [];
    this.lines = [];
    let rest = '';
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (d) => {
      const lines = (rest + d).split('\n');
      rest = lines.pop();
      for (const line of lines) (this.waiting.shift() ?? ((l) => this.lines.push(l)))(line);
    });
    this.exited = new Promise((resolve) => this.child.on('close', resolve));
  }

  next(timeoutMs = 120_000) {
    if (this.lines.length > 0) return Promise.resolve(this.lines.shift());
    return Promise.race([
      new Promise((resolve) => this.waiting.push(resolve)),
      this.exited.then((c) => { throw new Error(`bench_relay exited ${c}`); }),
      delay(timeoutMs).then(() => { throw new Error('bench_relay did not answer'); }),
    ]);
  }

  async stop() {
    this.child.stdin.end('quit\n');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(timer);
  }
}

async function measureNode(o) {
  const size = Number(o.size);
  const extra = ['--metrics-server=true', '--metrics-server-address=127.0.0.1', '--metrics-server-port=0',
    '--log-level=INFO', ...o['node-arg']];
  const fleet = new Fleet({ impl: 'node', node: o.node, nodeArgs: extra, nodes: Number(o.nodes),
    clusterId: Number(o.cluster), shard: Number(o.shard) });
  let pub = null;
  let page = null;
  try {
    await fleet.start();
    for (let i = 0; i < 100 && fleet.nodes.some((n) => n.metricsUrl == null); i++) await delay(50);
    if (fleet.nodes.some((n) => n.metricsUrl == null)) throw new Error('a node has no metrics server');
    await fleet.connect(Number(o.degree));
    pub = new Publisher(benchPath(o), fleet.nodes.map((n) => n.addr), o);
    if ((await pub.next(60_000)) !== 'READY') throw new Error('bench_relay not ready');
    const runOnce = (rate, count, label, timed = true) => runRate(fleet, pub, { rate, count, label, timed });
    await awaitMesh(fleet, pub, { withinMs: 60_000, timed: true, pauseMs: 1000 });
    page = o['status-page'] != null ? await openStatusPage(fleet.nodes[0].restUrl, Number(o['status-page'])) : null;
    process.stderr.write(`${JSON.stringify(await runOnce(200, 1000, 'warm-up'))}\n`);
    // The fixed-rate runs come first, from the steady state after the warm-up: a 50 msg/s run
    // that follows the saturation ramp was measured at about 0.04 ms more CPU per delivery
    // (0.208–0.223 against 0.164–0.172 ms) while the nodes still carry the burst's state.
    const fixed = await runSeries(runOnce, { rates: list(o.rates), seconds: Number(o.seconds), label: 'rate',
      timed: false });
    const ramp = await runSeries(runOnce, { rates: list(o.ramp), seconds: Number(o['ramp-seconds']), label: 'ramp',
      timed: true, stopAfter: (r, rate) => r.deliveredToAll < r.published || r.deliveredToAllPerSecond < 0.9 * rate });
    const statusPage = page != null ? await page.close() : undefined;
    page = null;
    const clean = ramp.filter((r) => r.deliveredToAll === r.published);
    const best = (clean.length > 0 ? clean : ramp)
      .reduce((a, b) => (b.deliveredToAllPerSecond > a.deliveredToAllPerSecond ? b : a));
    report({
      bench: 'relay-rate',
      impl: 'node',
      publisher: 'bench_relay',
      nodes: fleet.nodes.length,
      degree: Number(o.degree),
      payloadBytes: size,
      statusPage,
      saturation: {
        deliveredToAllPerSecond: best.deliveredToAllPerSecond,
        offeredRate: best.offeredRate,
        p99LatencyMs: best.latencyMs.p99,
        cpuMsPerDelivery: best.cpuMsPerDelivery,
      },
      latency: Object.fromEntries(fixed.map((r) => [r.offeredRate, {
        p50Ms: r.latencyMs.p50,
        p99Ms: r.latencyMs.p99,
        deliveredToAll: `${r.deliveredToAll}/${r.published}`,
        cpuMsPerDelivery: r.cpuMsPerDelivery,
      }])),
      loadAverage: (await import('node:os')).loadavg().map(r2),
      runs: [...fixed, ...ramp],
    });
  } finally {
    await page?.close().catch(() => {});
    await pub?.stop();
    await fleet.stop();
  }
}

/**
 * One run: `count` messages at `rate`/s from bench_relay; the nodes' histograms are scraped
 * before and every POLL_MS until every node has every message, or nothing changed for drainMs
 * after the publisher finished. Untimed runs (the latency runs) scrape only once the publisher
 * finished, so that scraping adds no load while the latencies are taken.
 */
async function runRate(fleet, pub, { rate, count, label, timed = true, drainMs = 2000, maxMs = 120_000, command,
  answerMs = 120_000 }) {
  const nodes = fleet.nodes;
  const base = await Promise.all(nodes.map((n) => scrape(n.metricsUrl)));
  const cpu0 = await Promise.all(nodes.map((n) => n.cpuMs()));
  pub.child.stdin.write(`${command ?? `run ${rate} ${count}`}\n`);
  let result = null;
  const resultP = pub.next(answerMs).then((line) => { result = JSON.parse(line); });
  resultP.catch(() => {});
  const doneAt = new Array(nodes.length).fill(null);
  let last = base;
  let lastTotal = -1;
  let quietSince = Date.now();
  const end = Date.now() + maxMs;
  for (;;) {
    if (!timed && result == null) await resultP;
    await delay(POLL_MS);
    const now = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
    last = await Promise.all(nodes.map((n) => scrape(n.metricsUrl)));
    const got = last.map((s, i) => s.count - base[i].count);
    const total = got.reduce((a, b) => a + b, 0);
    if (result != null) {
      if (result.error) throw new Error(`bench_relay: ${result.error}`);
      got.forEach((g, i) => { if (doneAt[i] == null && g >= result.published) doneAt[i] = now; });
      if (doneAt.every((t) => t != null)) break;
    }
    if (total !== lastTotal) {
      lastTotal = total;
      quietSince = Date.now();
    } else if (result != null && Date.now() - quietSince > drainMs) {
      break;
    }
    if (Date.now() > end) break;
  }
  await resultP;
  const cpu1 = await Promise.all(nodes.map((n) => n.cpuMs()));
  const cpuMs = cpu1.reduce((a, c, i) => a + c - cpu0[i], 0);
  const got = last.map((s, i) => s.count - base[i].count);
  const deliveries = got.reduce((a, b) => a + b, 0);
  const deliveredToAll = Math.min(result.published, ...got);
  const bounds = last[0].bounds;
  const cum = bounds.map((_, k) => last.reduce((a, s, i) => a + s.cum[k] - base[i].cum[k], 0));
  const lastDone = doneAt.every((t) => t != null) ? doneAt.reduce((a, b) => (b > a ? b : a)) : null;
  const spanS = lastDone != null ? Number(lastDone - BigInt(result.firstNs)) / 1e9 : NaN;
  return {
    label,
    offeredRate: rate,
    published: result.published,
    publishErrors: result.failed,
    payloadBytes: Number(pub.child.spawnargs[pub.child.spawnargs.indexOf('--size') + 1]),
    publishSeconds: r2((result.lastNs - result.firstNs) / 1e9),
    deliveredToAll,
    deliveredToAllPerSecond: Number.isFinite(spanS) ? r2(deliveredToAll / Math.max(spanS, 1e-3)) : 0,
    deliveries,
    latencyMs: {
      p50: histPercentile(bounds, cum, deliveries, 50),
      p99: histPercentile(bounds, cum, deliveries, 99),
      max: histPercentile(bounds, cum, deliveries, 100),
    },
    cpuMsPerDelivery: deliveries > 0 ? Number((cpuMs / deliveries).toFixed(4)) : null,
    cpuMsTotal: r2(cpuMs),
    publisherCpuMs: result.publisherCpuMs,
    lateMaxMs: result.lateMaxMs,
  };
}

/**
 * One run per rate of `rates`, `seconds` long each, printed on stderr as it ends; stops after a
 * run for which `stopAfter(run, rate)` is true. Resolves with the runs.
 */
async function runSeries(runOnce, { rates, seconds, label, timed, stopAfter = () => false }) {
  const runs = [];
  for (const rate of rates) {
    const r = await runOnce(rate, Math.round(rate * seconds), `${label} ${rate}`, timed);
    runs.push(r);
    process.stderr.write(`${JSON.stringify(r)}\n`);
    if (stopAfter(r, rate)) break;
  }
  return runs;
}

/**
 * Publishes 20 messages at 20/s until every node has them all (the mesh has formed); throws after
 * `withinMs`. `timed` as in runRate; `pauseMs` between attempts.
 */
async function awaitMesh(fleet, pub, { withinMs, timed, pauseMs = 0 }) {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const r = await runRate(fleet, pub, { rate: 20, count: 20, label: 'mesh', timed });
    if (r.deliveredToAll === r.published && r.published > 0) return;
    if (Date.now() > deadline) throw new Error(`mesh not formed: ${JSON.stringify(r)}`);
    if (pauseMs > 0) await delay(pauseMs);
  }
}

/** GET a node's /metrics text. */
function metricsText(url) {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve(text));
      res.on('error', reject);
    }).on('error', reject);
  });
}

const RLN_COUNTERS = ['waku_rln_proof_verification_total', 'waku_rln_proof_verification_batches_total',
  'waku_rln_valid_messages_total', 'waku_rln_spam_messages_total'];

/** The RLN counters of every node, summed over the fleet, and waku_rln_invalid_messages_total by type. */
async function scrapeRln(nodes) {
  const sum = Object.fromEntries(RLN_COUNTERS.map((k) => [k, 0]));
  sum.invalid = 0;
  for (const text of await Promise.all(nodes.map((n) => metricsText(n.metricsUrl)))) {
    for (const line of text.split('\n')) {
      const [name, value] = line.split(' ');
      if (name in sum) sum[name] += Number(value);
      else if (name?.startsWith('waku_rln_invalid_messages_total{')) sum.invalid += Number(value);
    }
  }
  return sum;
}

function bin(name, envName, fallback) {
  const path = process.env[envName] ?? fileURLToPath(new URL(`../../../build-rel/${fallback}`, import.meta.url));
  if (!existsSync(path)) throw new Error(`${name} not found at ${path}: set ${envName}`);
  return path;
}

/** The fleet with RLN validation on, fed messages proved beforehand (see the header). */
async function measureRln(o) {
  const { mkdtemp, rm } = await import('node:fs/promises');
  const os = await import('node:os');
  const dir = await mkdtemp(`${os.tmpdir()}/ld-relay-rln-`);
  const segments = o.rln.split(',').map((s) => s.split(':').map(Number));
  const total = segments.reduce((a, [, c]) => a + c, 0);
  const limit = total + 10;
  const epochSec = 3600;
  const circuit = o['rln-circuit'] ?? process.env.LD_RLN_FIXTURES
    ?? fileURLToPath(new URL('../fixtures/rln-v2', import.meta.url));
  const group = `${dir}/group.json`;
  const proveArgs = ['--circuit', circuit, '--group-out', group, '--out', `${dir}/msgs`,
    '--threads', o['rln-threads'], '--gap-ms', o['rln-gap-ms'], '--size', o.size,
    '--epoch-sec', String(epochSec), '--limit', String(limit),
    ...segments.flatMap(([r, c]) => ['--segment', `${r}:${c}`])];
  // --rln-start-in S: the schedule starts S seconds from now rather than where the prover's
  // own estimate puts it (which a busy machine can make pessimistic)
  if (o['rln-start-in'] != null) {
    proveArgs.push('--start-ns', String(BigInt(Date.now()) * 1_000_000n + BigInt(Math.round(Number(o['rln-start-in']) * 1e9))));
  }
  const prover = spawn(bin('bench_relay_rln_prove', 'LD_BENCH_RELAY_RLN_PROVE', 'bench_relay_rln_prove'),
    proveArgs, { stdio: ['ignore', 'pipe', 'inherit'] });
  let proveOut = '';
  prover.stdout.setEncoding('utf8');
  prover.stdout.on('data', (d) => { proveOut += d; });
  const proved = new Promise((resolve) => prover.on('close', resolve));
  for (let i = 0; i < 600 && !existsSync(group); i++) await delay(100);
  const extra = ['--metrics-server=true', '--metrics-server-address=127.0.0.1', '--metrics-server-port=0',
    '--log-level=INFO', '--rln-relay=true', '--rln-relay-dynamic=false',
    `--rln-relay-static-group-file=${group}`, `--rln-relay-epoch-sec=${epochSec}`,
    `--rln-relay-user-message-limit=${limit}`, ...o['node-arg']];
  const fleet = new Fleet({ impl: 'node', node: o.node, nodeArgs: extra, nodes: Number(o.nodes),
    clusterId: Number(o.cluster), shard: Number(o.shard) });
  let pub = null;
  try {
    await fleet.start();
    for (let i = 0; i < 100 && fleet.nodes.some((n) => n.metricsUrl == null); i++) await delay(50);
    if (fleet.nodes.some((n) => n.metricsUrl == null)) throw new Error('a node has no metrics server');
    await fleet.connect(Number(o.degree));
    pub = new Publisher(benchPath(o), fleet.nodes.map((n) => n.addr), o);
    if ((await pub.next(60_000)) !== 'READY') throw new Error('bench_relay not ready');
    const code = await proved;
    if (code !== 0) throw new Error(`bench_relay_rln_prove exited ${code}`);
    const plan = JSON.parse(proveOut.trim().split('\n').pop());
    process.stderr.write(`${JSON.stringify({ ...plan, segments: undefined })}\n`);
    const runs = [];
    for (const seg of plan.segments) {
      const before = await scrapeRln(fleet.nodes);
      const r = await runRate(fleet, pub, { rate: seg.rate, count: seg.count, label: `rln ${seg.rate}`,
        timed: false, drainMs: 5000, command: `replay ${seg.file}`,
        answerMs: Math.max(0, (seg.firstNs - Date.now() * 1e6) / 1e6) + (seg.count / seg.rate) * 1000 + 120_000 });
      const after = await scrapeRln(fleet.nodes);
      const d = Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - before[k]]));
      const verified = d.waku_rln_proof_verification_total;
      const batches = d.waku_rln_proof_verification_batches_total;
      // first publish → the scrape at which the last node had every message (the run's length)
      const spanS = r.deliveredToAllPerSecond > 0 ? r.deliveredToAll / r.deliveredToAllPerSecond : NaN;
      Object.assign(r, {
        deliveredFraction: Number((r.deliveredToAll / seg.count).toFixed(4)),
        allDeliveredAfterS: r2(spanS),
        fleetCores: r2(r.cpuMsTotal / 1000 / spanS),
        cpuPerNodeMsPerMessage: Number((r.cpuMsTotal / fleet.nodes.length / seg.count).toFixed(3)),
        proofsVerified: verified,
        meanBatch: batches > 0 ? r2(verified / batches) : null,
        rlnValid: d.waku_rln_valid_messages_total,
        rlnInvalid: d.invalid,
        rlnSpam: d.waku_rln_spam_messages_total,
      });
      runs.push(r);
      process.stderr.write(`${JSON.stringify(r)}\n`);
    }
    report({
      bench: 'relay-rate',
      impl: 'node',
      rln: true,
      publisher: 'bench_relay (replay of proofs made beforehand)',
      nodes: fleet.nodes.length,
      degree: Number(o.degree),
      payloadBytes: Number(o.size),
      proofs: { count: plan.proofs, wallSeconds: plan.wallSeconds, cpuSeconds: plan.cpuSeconds },
      loadAverage: os.loadavg().map(r2),
      runs,
    });
  } finally {
    prover.kill();
    await pub?.stop();
    await fleet.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

function sh(file, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => { out += d; });
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${file} ${args.join(' ')} exited ${code}`))));
  });
}

/** Instructions per delivered message of one fleet node, counted by callgrind (see the header). */
async function measureInstructions(o) {
  const [rate, count] = list(o.callgrind);
  const outFile = `/tmp/ld-relay-callgrind.${process.pid}`;
  const prefix = ['valgrind', '--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${outFile}`];
  const extra = ['--metrics-server=true', '--metrics-server-address=127.0.0.1', '--metrics-server-port=0',
    '--log-level=INFO', ...o['node-arg']];
  const fleet = new Fleet({ impl: 'node', node: o.node, nodeArgs: extra, nodes: Number(o.nodes),
    clusterId: Number(o.cluster), shard: Number(o.shard), firstPrefix: prefix });
  let pub = null;
  try {
    await fleet.start();
    for (let i = 0; i < 200 && fleet.nodes.some((n) => n.metricsUrl == null); i++) await delay(50);
    await fleet.connect(Number(o.degree));
    pub = new Publisher(benchPath(o), fleet.nodes.map((n) => n.addr), o);
    if ((await pub.next(60_000)) !== 'READY') throw new Error('bench_relay not ready');
    await awaitMesh(fleet, pub, { withinMs: 120_000, timed: false });
    const node0 = fleet.nodes[0];
    const base = await scrape(node0.metricsUrl);
    const pid = String(node0.pid);
    await sh('callgrind_control', ['-i', 'on', pid]);
    await sh('callgrind_control', ['-z', pid]);
    pub.child.stdin.write(`run ${rate} ${count}\n`);
    const result = JSON.parse(await pub.next());
    let got = 0;
    for (let i = 0; i < 200 && got < result.published; i++) {
      await delay(100);
      got = (await scrape(node0.metricsUrl)).count - base.count;
    }
    const dump = await sh('callgrind_control', ['-d', pid]);
    await sh('callgrind_control', ['-i', 'off', pid]);
    const { readdir, readFile } = await import('node:fs/promises');
    const files = (await readdir('/tmp')).filter((f) => f.startsWith(`ld-relay-callgrind.${process.pid}`));
    let ir = 0;
    for (const f of files) {
      const text = await readFile(`/tmp/${f}`, 'utf8');
      const m = text.match(/^(?:summary|totals): (\d+)/m);
      if (m != null) ir = Math.max(ir, Number(m[1]));
    }
    report({
      bench: 'relay-rate',
      impl: 'node',
      figure: 'instructions per delivered message (callgrind, node 0 of the fleet)',
      offeredRate: rate,
      published: result.published,
      deliveredAtNode0: got,
      instructions: ir,
      instructionsPerDelivery: got > 0 ? Math.round(ir / got) : null,
      callgrindFiles: files.map((f) => `/tmp/${f}`),
      dump: dump.trim().split('\n').slice(-1)[0],
    });
  } finally {
    await pub?.stop();
    await fleet.stop();
  }
}
