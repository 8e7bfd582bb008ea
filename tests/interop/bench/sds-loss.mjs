// js-waku's reliable channel with 30 % loss, in memory and on a simulated clock: the counterpart
// of `bench_sds --only-loss 1` (bench/sds.c), for bench/RESULTS.md.
//
// Three @waku/sdk 0.0.36 ReliableChannels (over @waku/sds 0.0.8's MessageChannel) with the sdk's
// defaults: sync at random within 30 s (x2 after its own sync, x0.5 after a received content
// message), a resend every 30 s until acknowledged (10 times at most), incoming buffer swept
// every 5 s, received messages processed at most once a second, SDS-R T_min 30 s / T_max 120 s,
// causal history 200, and no store (as in bench_sds; --store adds one). The channels are the
// sdk's own code; only the node under them is replaced: its light push broadcasts the SDS bytes
// to the other two participants' filter callbacks, each copy lost with --loss permille
// (xorshift64 with bench_sds's seed, one draw per copy), and its timers and Date run on a
// simulated clock that jumps from one timer to the next. Nothing touches the network.
//
// Each participant sends --messages / 3 messages of --payload bytes, one every 100 ms in turn.
// The run ends when every participant has delivered every other participant's messages and every
// message is acknowledged, or at --cap simulated seconds. Printed: deliveries of expected,
// simulated seconds, SDS bytes on the wire per payload byte (each broadcast counted once, as
// bench_sds counts), the messages by kind, and the progress at fixed simulated times (968 s is
// where bench_sds completed). Prints figures; asserts nothing (--json prints the result as JSON
// for a caller that does; bench/sds-loss.test.mjs is the short form CI runs).
//
// --store: the node also has a store that holds every broadcast and answers the sdk's
// MissingMessageRetriever (a query by message hashes every 10 s for the dependencies it misses):
// js-waku's own repair path, which bench_sds leaves out. Its answers are counted apart.
// --causal-history N: MessageChannel's causalHistorySize (the sdk's default: 200).
//
//   node bench/sds-loss.mjs [--messages 300] [--payload 100] [--loss 300] [--cap 3600]
//                           [--causal-history N] [--store] [--json]
import '../lib/node20-compat.mjs';

import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

import { createEncoder, messageHash } from '@waku/core';
import { ReliableChannel } from '@waku/sdk';
import { MessageChannelEvent, Message as SdsMessage } from '@waku/sds';

const T0 = 1763000000000; // bench_sds's simulated start (ms)
const PEERS = ['alice', 'bob', 'carol'];
const CHANNEL = 'bench';
const PUBSUB = '/waku/2/rs/42/0';
const CONTENT_TOPIC = '/bench/1/sds-loss/proto';
const CHECKPOINTS_S = [30, 60, 120, 300, 600, 968, 1200, 1800, 2400, 3600];

/**
 * The timers and Date.now of this process on a simulated clock: setTimeout/setInterval queue
 * callbacks at simulated times, `step()` jumps to the earliest and runs it. Installed for the
 * whole process (the sdk reads the globals when it arms a timer).
 */
class SimClock {
  constructor(start) {
    this.now = start;
    this.timers = new Map();
    this.lastId = 0;
    this.realImmediate = globalThis.setImmediate;
  }

  install() {
    globalThis.setTimeout = (fn, ms, ...args) => this.add(fn, ms, args, false);
    globalThis.setInterval = (fn, ms, ...args) => this.add(fn, ms, args, true);
    globalThis.clearTimeout = (id) => this.timers.delete(id);
    globalThis.clearInterval = (id) => this.timers.delete(id);
    const clock = this;
    const RealDate = Date;
    // new Date() too: the sdk's encoder stamps messages with it, and the retrieval hint (the Waku
    // message hash) covers the stamp
    globalThis.Date = class SimDate extends RealDate {
      constructor(...args) {
        if (args.length === 0) super(clock.now);
        else super(...args);
      }

      static now() {
        return clock.now;
      }
    };
  }

  add(fn, ms, args = [], repeat = false) {
    const delay = Math.max(0, Math.floor(Number(ms) || 0));
    const id = ++this.lastId;
    this.timers.set(id, { id, at: this.now + delay, fn, args, every: repeat ? Math.max(1, delay) : 0 });
    return id;
  }

  /** The earliest timer due at or before `limit` (ties in the order they were armed), or null. */
  earliest(limit) {
    let best = null;
    for (const t of this.timers.values())
      if (t.at <= limit && (best === null || t.at < best.at || (t.at === best.at && t.id < best.id))) best = t;
    return best;
  }

  /** Runs the earliest timer due by `limit` and lets every promise it started settle. */
  async step(limit) {
    const t = this.earliest(limit);
    if (t === null) return false;
    this.now = t.at;
    if (t.every) t.at += t.every;
    else this.timers.delete(t.id);
    t.fn(...t.args);
    // Nothing here waits on I/O: one turn of the real event loop runs every microtask the timer
    // started (the sdk's async send and receive paths).
    await new Promise((resolve) => this.realImmediate(resolve));
    return true;
  }
}

/** bench_sds's xorshift64 (bench/sds.c lossy_rand), same seed. */
function lossRandom(seed = 0x9e3779b97f4a7c15n) {
  let x = seed;
  const M = (1n << 64n) - 1n;
  return () => {
    x ^= (x << 13n) & M;
    x ^= x >> 7n;
    x ^= (x << 17n) & M;
    return x;
  };
}

/** A seeded Math.random (the sdk draws its sync delays and sync message IDs from it). */
function seededMathRandom(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0; // mulberry32
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The wire between the participants: counts every broadcast by kind, then hands a copy to each
 * other participant's filter callback (at the same simulated time, after the current timer),
 * losing each copy with probability lossPermille / 1000.
 */
class LossyWire {
  constructor(clock, lossPermille, withStore) {
    this.clock = clock;
    this.store = withStore ? new Map() : null; // every broadcast, by Waku message hash (hex)
    this.storeQueries = 0;
    this.storeMessages = 0;
    this.storeBytes = 0;
    this.lossPermille = BigInt(lossPermille);
    this.rand = lossRandom();
    this.subscribers = [];
    this.seenContent = new Set();
    this.count = { content: 0, retransmission: 0, sync: 0, repairAnswer: 0 };
    this.bytes = { content: 0, retransmission: 0, sync: 0, repairAnswer: 0 };
    this.bloomBytes = 0;
    this.causalEntries = 0;
    this.withRepairRequests = 0;
    this.repairRequests = 0;
    this.copiesLost = 0;
    this.copiesDelivered = 0;
  }

  /** Counts one broadcast by kind: content the first time a message ID is sent, then retransmission. */
  tally(sds, len) {
    const content = sds.content && sds.content.length > 0;
    const kind = !content ? 'sync' : this.seenContent.has(sds.messageId) ? 'retransmission' : 'content';
    if (content) this.seenContent.add(sds.messageId);
    this.count[kind]++;
    this.bytes[kind] += len;
    this.bloomBytes += sds.bloomFilter?.length ?? 0;
    this.causalEntries += sds.causalHistory.length;
    if (sds.repairRequest?.length > 0) {
      this.withRepairRequests++;
      this.repairRequests += sds.repairRequest.length;
    }
  }

  /** A received Waku message as the sdk's filter and store hand it to the channel. */
  decoded(payload, hash) {
    return {
      payload: Uint8Array.from(payload),
      hash,
      hashStr: Buffer.from(hash).toString('hex'),
      contentTopic: CONTENT_TOPIC,
      pubsubTopic: PUBSUB,
      timestamp: new Date(this.clock.now),
      version: 0,
      ephemeral: false,
      meta: undefined,
      rateLimitProof: undefined,
    };
  }

  /**
   * The store's queryGenerator as the sdk's MissingMessageRetriever calls it (a query by message
   * hashes): one page with every stored message asked for. Queries, messages and SDS bytes
   * returned are counted apart from the broadcasts.
   */
  async *query(_decoders, { messageHashes = [] } = {}) {
    this.storeQueries++;
    const page = [];
    for (const h of messageHashes) {
      const payload = this.store.get(Buffer.from(h).toString('hex'));
      if (payload === undefined) continue;
      this.storeMessages++;
      this.storeBytes += payload.length;
      page.push(Promise.resolve(this.decoded(payload, h)));
    }
    yield page;
  }

  /** The light push of participant `from`: what ReliableChannel calls to send. */
  async broadcast(from, encoder, wakuMessage) {
    const payload = wakuMessage.payload;
    const sds = SdsMessage.decode(payload);
    if (!sds) throw new Error('the channel sent bytes that are not an SDS message');
    this.tally(sds, payload.length);
    const proto = await encoder.toProtoObj(wakuMessage);
    const hash = messageHash(encoder.pubsubTopic, proto);
    this.store?.set(Buffer.from(hash).toString('hex'), payload);
    for (let to = 0; to < this.subscribers.length; to++) {
      if (to === from) continue;
      if (this.rand() % 1000n < this.lossPermille) {
        this.copiesLost++;
        continue;
      }
      this.copiesDelivered++;
      const msg = this.decoded(payload, hash);
      this.clock.add(() => this.subscribers[to](msg), 0);
    }
    return { successes: ['bench-peer'], failures: [] };
  }
}

/** One participant: a ReliableChannel on a node whose light push and filter are the wire. */
async function participant(index, wire, channelOptions) {
  const encoder = createEncoder({ contentTopic: CONTENT_TOPIC, routingInfo: { pubsubTopic: PUBSUB } });
  const decoder = { contentTopic: CONTENT_TOPIC, pubsubTopic: PUBSUB };
  const node = {
    lightPush: { send: (enc, message) => wire.broadcast(index, enc, message) },
    filter: {
      subscribe: async (_decoders, callback) => {
        wire.subscribers[index] = callback;
        return true;
      },
    },
    store: wire.store ? { queryGenerator: (decoders, options) => wire.query(decoders, options) } : undefined,
  };
  const channel = await ReliableChannel.create(node, CHANNEL, PEERS[index], encoder, decoder, channelOptions);
  const p = { channel, delivered: new Set(), received: new Set(), acked: new Set(), sentIds: new Set(),
    repairAnswers: 0, lastDeliveryAt: 0 };
  const mc = channel.messageChannel;
  mc.addEventListener(MessageChannelEvent.InMessageDelivered, (e) => {
    if (!p.delivered.has(e.detail)) p.lastDeliveryAt = Date.now();
    p.delivered.add(e.detail);
  });
  mc.addEventListener(MessageChannelEvent.OutMessageAcknowledged, (e) => p.acked.add(e.detail));
  mc.addEventListener(MessageChannelEvent.RepairResponseSent, () => p.repairAnswers++);
  channel.addEventListener('message-received', (e) => p.received.add(Buffer.from(e.detail.payload).toString('hex')));
  return p;
}

function payloadOf(n, size) {
  const bytes = new Uint8Array(size);
  // bench_sds copies the message number (a little-endian size_t) into a zeroed payload
  new DataView(bytes.buffer).setBigUint64(0, BigInt(n), true);
  return bytes.subarray(0, size);
}

/**
 * Runs the scenario; resolves with its figures. Installs the simulated clock and a seeded
 * Math.random for the rest of the process.
 */
export async function runLossScenario({ messages = 300, payload = 100, lossPermille = 300, capS = 3600,
  causalHistory, store = false } = {}) {
  if (payload < 8) throw new Error('--payload must be at least 8 bytes (the message number)');
  const clock = new SimClock(T0);
  clock.install();
  Math.random = seededMathRandom(1);
  const wire = new LossyWire(clock, lossPermille, store);
  const channelOptions = causalHistory === undefined ? {} : { causalHistorySize: causalHistory };
  const peers = [];
  for (let i = 0; i < PEERS.length; i++) peers.push(await participant(i, wire, channelOptions));

  const perPeer = Math.floor(messages / PEERS.length);
  const total = perPeer * PEERS.length;
  for (let n = 0; n < total; n++) {
    clock.add(() => {
      const id = peers[n % PEERS.length].channel.send(payloadOf(n, payload));
      peers[n % PEERS.length].sentIds.add(id);
    }, n * 100);
  }
  const deliveries = () => peers.reduce((s, p) => s + p.delivered.size, 0);
  const acknowledged = () => peers.reduce((s, p) => s + p.acked.size, 0);
  const received = () => peers.reduce((s, p) => s + p.received.size, 0);
  const progress = [];
  for (const s of CHECKPOINTS_S.filter((c) => c <= capS))
    clock.add(() => progress.push({ s, delivered: deliveries(), received: received(), acknowledged: acknowledged(),
      bytesPerPayloadByte: Object.values(wire.bytes).reduce((a, b) => a + b, 0) / (total * payload) }), s * 1000);

  const complete = () => peers.every((p) => p.delivered.size >= perPeer * (PEERS.length - 1) && p.acked.size >= perPeer);
  const limit = T0 + capS * 1000;
  const cpu0 = process.cpuUsage();
  let done = false;
  while (!done && (await clock.step(limit))) done = complete();
  const cpu = process.cpuUsage(cpu0);
  for (const p of peers) p.channel.stop();

  const wireBytes = Object.values(wire.bytes).reduce((a, b) => a + b, 0);
  const sends = Object.values(wire.count).reduce((a, b) => a + b, 0);
  const payloadBytes = total * payload;
  return {
    messages: total,
    payload,
    lossPermille,
    complete: done,
    simulatedS: ((done ? clock.now : limit) - T0) / 1000,
    deliveries: deliveries(),
    expectedDeliveries: total * (PEERS.length - 1),
    received: received(),
    acknowledged: acknowledged(),
    lastDeliveryS: (Math.max(...peers.map((p) => p.lastDeliveryAt)) - T0) / 1000,
    wireBytes,
    payloadBytes,
    bytesPerPayloadByte: wireBytes / payloadBytes,
    bloomBytes: wire.bloomBytes,
    withoutBloomPerPayloadByte: (wireBytes - wire.bloomBytes) / payloadBytes,
    sends,
    count: wire.count,
    bytes: wire.bytes,
    causalEntriesPerMessage: wire.causalEntries / Math.max(1, sends),
    messagesWithRepairRequests: wire.withRepairRequests,
    repairRequests: wire.repairRequests,
    repairAnswersSent: peers.reduce((s, p) => s + p.repairAnswers, 0),
    store,
    storeQueries: wire.storeQueries,
    storeMessages: wire.storeMessages,
    storeBytes: wire.storeBytes,
    copiesDelivered: wire.copiesDelivered,
    copiesLost: wire.copiesLost,
    progress,
    cpuS: (cpu.user + cpu.system) / 1e6,
  };
}

function print(r) {
  const kb = (b) => `${(b / 1e6).toFixed(1)} MB`;
  console.log(`js-waku ReliableChannel (@waku/sdk 0.0.36, @waku/sds 0.0.8), loss ${r.lossPermille}/1000 per copy, `
    + `3 participants, ${r.messages} messages of ${r.payload} bytes: ${r.complete ? 'complete' : 'INCOMPLETE'} after `
    + `${r.simulatedS.toFixed(1)} s (simulated); ${r.deliveries} of ${r.expectedDeliveries} deliveries `
    + `(causal; ${r.received} received), ${r.acknowledged} of ${r.messages} acknowledged, last delivery at `
    + `${r.lastDeliveryS.toFixed(1)} s`);
  console.log(`  wire bytes / payload bytes: ${r.bytesPerPayloadByte.toFixed(1)} (${r.wireBytes} / ${r.payloadBytes}; `
    + `each broadcast counted once, ${kb(r.wireBytes)})`);
  console.log(`  of which the bloom filter in every message: ${r.bloomBytes} bytes; without it `
    + `${r.withoutBloomPerPayloadByte.toFixed(2)}; causal history ${r.causalEntriesPerMessage.toFixed(1)} entries per message`);
  for (const k of ['content', 'retransmission', 'sync', 'repairAnswer'])
    console.log(`  ${k.padEnd(15)} ${String(r.count[k]).padStart(6)} sends, ${String(r.bytes[k]).padStart(10)} bytes`);
  console.log(`  repair requests: ${r.repairRequests} in ${r.messagesWithRepairRequests} messages; `
    + `repair answers sent: ${r.repairAnswersSent}`);
  if (r.store)
    console.log(`  store: ${r.storeQueries} queries by hash answered ${r.storeMessages} messages, `
      + `${r.storeBytes} SDS bytes (not in the wire figure; ${((r.wireBytes + r.storeBytes) / r.payloadBytes).toFixed(1)} `
      + 'per payload byte with them)');
  console.log(`  copies: ${r.copiesDelivered} delivered, ${r.copiesLost} lost`);
  console.log('  progress (simulated s: deliveries, received, acknowledged, wire bytes / payload bytes so far): '
    + r.progress.map((p) => `${p.s}: ${p.delivered}, ${p.received}, ${p.acknowledged}, ${p.bytesPerPayloadByte.toFixed(1)}`)
      .join('; '));
  console.log(`  process CPU ${r.cpuS.toFixed(2)} s`);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      messages: { type: 'string', default: '300' },
      payload: { type: 'string', default: '100' },
      loss: { type: 'string', default: '300' },
      cap: { type: 'string', default: '3600' },
      'causal-history': { type: 'string' },
      store: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  const r = await runLossScenario({
    messages: Number(values.messages),
    payload: Number(values.payload),
    lossPermille: Number(values.loss),
    capS: Number(values.cap),
    causalHistory: values['causal-history'] === undefined ? undefined : Number(values['causal-history']),
    store: values.store,
  });
  if (values.json) console.log(JSON.stringify(r));
  else print(r);
  process.exit(0);
}
