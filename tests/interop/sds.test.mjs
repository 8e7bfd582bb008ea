// SDS (Scalable Data Sync) against js-waku's `@waku/sds` (pinned in package-lock.json):
// ld_sdstool (tests/interop/sdstool/sdstool.c, our src/channels/) and the js package get the same
// inputs and must agree byte for byte, both ways:
//   - js-waku's encoded messages decode in C to the same fields and class;
//   - C's encoding of those fields is js-waku's bytes, and js-waku decodes it back;
//   - bloom filters of the same items are the same bytes, with the same lookups;
//   - SDS-R T_req / T_resp / response groups equal js-waku's RepairManager;
//   - our engine and js-waku's MessageChannel in one channel: each delivers the other's
//     messages and acknowledges them (by causal history and by bloom filter, the other side's
//     acknowledged events fire), and each repairs a message the other missed (SDS-R).
import './lib/node20-compat.mjs';

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import readline from 'node:readline';
import { after, before, describe, test } from 'node:test';

import {
  DEFAULT_BLOOM_FILTER_OPTIONS,
  fromHex,
  jsBloom,
  jsClass,
  messageCases,
  prng,
  randomBytes,
  repairTiming,
  sds,
  SdsProto,
  sha256hex,
  toHex,
  toJson,
} from './lib/sds.mjs';

const TOOL = process.env.LD_SDSTOOL;
const skip = TOOL ? false : 'LD_SDSTOOL is not set (ld_sdstool not built)';

// One ld_sdstool process: JSON requests in, one JSON answer line each.
class SdsTool {
  constructor() {
    this.proc = spawn(TOOL, [], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.pending = [];
    readline.createInterface({ input: this.proc.stdout }).on('line', (line) => {
      this.pending.shift()(JSON.parse(line));
    });
    this.exited = new Promise((resolve) => this.proc.on('exit', (code) => resolve(code)));
  }

  call(req) {
    return new Promise((resolve) => {
      this.pending.push(resolve);
      this.proc.stdin.write(`${JSON.stringify(req)}\n`);
    });
  }

  async ok(req) {
    const ans = await this.call(req);
    assert.equal(ans.ok, true, `${req.op}: ${ans.error} ${ans.why}`);
    return ans;
  }

  // Closes stdin; the exit code must be 0 (sanitizer reports, leaks included, make it not).
  async close() {
    this.proc.stdin.end();
    assert.equal(await this.exited, 0, 'ld_sdstool exit code');
  }
}

// Random messages over every field: ASCII and non-ASCII text, Lamport timestamps beyond 2^53,
// histories with and without hints and senders, real bloom filters, repair requests, empty
// and absent optional fields.
function randomMessage(rand) {
  const pick = (a) => a[Math.floor(rand() * a.length)];
  const str = () => pick(['', 'alice', 'bob-1', 'participant-ü', 'αβγ', sha256hex(String(rand()))]);
  const entry = () => {
    const e = { messageId: sha256hex(String(rand())) };
    if (rand() < 0.7) e.retrievalHint = randomBytes(rand, pick([0, 32, 32, 64]));
    if (rand() < 0.7) e.senderId = str();
    return e;
  };
  const m = {
    senderId: str(),
    messageId: sha256hex(String(rand())),
    channelId: pick(['0', 'chan', '']),
    causalHistory: Array.from({ length: Math.floor(rand() * (rand() < 0.1 ? 400 : 5)) }, entry),
    repairRequest: Array.from({ length: Math.floor(rand() * 4) }, entry),
  };
  if (rand() < 0.8) {
    m.lamportTimestamp = pick([0n, 1763000000000n, 2n ** 53n + 7n, 2n ** 64n - 1n,
      BigInt(Math.floor(rand() * 2 ** 52))]);
  }
  if (rand() < 0.5) {
    const items = Array.from({ length: Math.floor(rand() * 20) }, () => sha256hex(String(rand())));
    m.bloomFilter = jsBloom(items, { capacity: 100, errorRate: 0.01 }).toBytes();
  }
  if (rand() < 0.8) m.content = randomBytes(rand, pick([0, 1, 50, 3000]));
  return m;
}

describe('SDS wire format: ld_sdstool and @waku/sds', { skip }, () => {
  let tool;
  before(() => {
    tool = new SdsTool();
  });
  after(async () => {
    await tool.close();
  });

  const rand = prng(4242);
  const corpus = [...messageCases().map((c) => c.msg),
    ...Array.from({ length: 300 }, () => randomMessage(rand))];

  test("js-waku's messages decode in C to the same fields and class", async () => {
    for (const msg of corpus) {
      const bytes = SdsProto.encode(msg);
      const ans = await tool.ok({ op: 'decode', hex: toHex(bytes) });
      assert.deepEqual(ans.message, toJson(SdsProto.decode(bytes)));
      assert.equal(ans.class, jsClass(bytes));
    }
  });

  test("C encodes the same fields to js-waku's bytes, which js-waku decodes", async () => {
    for (const msg of corpus) {
      const js = toHex(SdsProto.encode(msg));
      const ans = await tool.ok({ op: 'encode', message: toJson(msg) });
      assert.equal(ans.hex, js);
      assert.deepEqual(toJson(SdsProto.decode(fromHex(ans.hex))), toJson(SdsProto.decode(fromHex(js))));
    }
  });

  test('C refuses what it cannot read, with a named error', async () => {
    const bad = [
      ['0a05616c6963', 'BAD_PROTOBUF'], // truncated
      ['108090eaab06', 'BAD_PROTOBUF'], // nim-sds: Lamport in field 2
      ['0a02c328', 'BAD_ENCODING'], // invalid UTF-8
    ];
    for (const [hex, error] of bad) {
      const ans = await tool.call({ op: 'decode', hex });
      assert.equal(ans.ok, false);
      assert.equal(ans.error, error);
    }
    const many = { senderId: 'x', messageId: 'y', channelId: 'c',
      causalHistory: Array.from({ length: 1025 }, (_, i) => ({ messageId: `m${i}` })),
      repairRequest: [] };
    const ans = await tool.call({ op: 'decode', hex: toHex(SdsProto.encode(many)) });
    assert.equal(ans.error, 'LIMIT');
  });

  test('bloom filters of the same items are the same bytes, with the same lookups', async () => {
    const r = prng(99);
    const params = [DEFAULT_BLOOM_FILTER_OPTIONS, { capacity: 100, errorRate: 0.01 },
      { capacity: 1000, errorRate: 0.05 }, { capacity: 10, errorRate: 0.1 }];
    for (const options of params) {
      for (const n of [0, 1, 5, 50, 200]) {
        const items = Array.from({ length: n }, () => sha256hex(String(r())));
        const others = Array.from({ length: 50 }, () => sha256hex(String(r())));
        const f = jsBloom(items, options);
        const ans = await tool.ok({ op: 'bloom', capacity: options.capacity,
          errorRate: options.errorRate, items, lookup: [...items, ...others] });
        assert.equal(ans.hex, toHex(f.toBytes()), `capacity ${options.capacity}, ${n} items`);
        assert.deepEqual(ans.found, [...items, ...others].map((it) => f.lookup(it)));
      }
    }
  });

  test("SDS-R timing and response groups equal js-waku's RepairManager", async () => {
    const ids = Array.from({ length: 20 }, (_, i) => sha256hex(`id ${i}`));
    for (const config of [{}, { tMin: 10000, tMax: 300000, numResponseGroups: 5 }]) {
      for (const self of ['alice', 'bob', 'c-peer', 'js-peer']) {
        const js = repairTiming(self, config);
        const cases = ids.flatMap((messageId) =>
          ['alice', 'zed', self].map((senderId) => ({ messageId, senderId })));
        const ans = await tool.ok({ op: 'repair', self, tMin: js.config.tMin,
          tMax: js.config.tMax, groups: js.config.numResponseGroups, cases });
        ans.cases.forEach((got, i) => {
          const { messageId, senderId } = cases[i];
          assert.equal(got.tReq, js.calculateTReq(messageId, 0));
          assert.equal(got.tResp, js.calculateTResp(senderId, messageId, 0));
          assert.equal(got.inGroup, js.isInResponseGroup(senderId, messageId));
        });
      }
    }
  });
});

// ---- our engine and js-waku's MessageChannel in one channel ------------------------------------

const { Message, MessageChannel, MessageChannelEvent } = sds;
const enc = (s) => new TextEncoder().encode(s);
const hintOf = (bytes) => fromHex(sha256hex(toHex(bytes))); // stands in for the Waku hash

// js-waku's side: a MessageChannel with every event recorded.
class JsPeer {
  constructor(channel, sender, options) {
    this.ch = new MessageChannel(channel, sender, options);
    this.events = [];
    for (const type of Object.values(MessageChannelEvent)) {
      this.ch.addEventListener(type, (e) => this.events.push({ type, detail: e.detail }));
    }
  }

  async send(text) {
    let bytes;
    this.ch.pushOutgoingMessage(enc(text), async (m) => {
      bytes = m.encode();
      return { success: true, retrievalHint: hintOf(bytes) };
    });
    await this.ch.processTasks();
    return { id: MessageChannel.getMessageId(enc(text)), bytes };
  }

  async sync() {
    let bytes;
    await this.ch.pushOutgoingSyncMessage(async (m) => {
      bytes = m.encode();
      return true;
    });
    return bytes;
  }

  async receive(hex) {
    const bytes = fromHex(hex);
    this.ch.pushIncomingMessage(Message.decode(bytes), hintOf(bytes));
    await this.ch.processTasks();
    this.ch.sweepIncomingBuffer();
  }

  take(type) {
    const out = this.events.filter((e) => e.type === type).map((e) => e.detail);
    this.events = this.events.filter((e) => e.type !== type);
    return out;
  }
}

// Our side: the engine in ld_sdstool, driven with the wall clock as js-waku's side uses it.
class CPeer {
  constructor(tool) {
    this.tool = tool;
  }

  async start(channel, sender, config) {
    return this.tool.ok({ op: 'new', channel, sender, now: Date.now(),
      config: { sync_interval_ms: 0, random_seed: 7, ...config } });
  }

  async send(text) {
    const id = sha256hex(`c:${text}`);
    const ans = await this.tool.ok({ op: 'send', now: Date.now(), id, content: toHex(enc(text)) });
    const ev = ans.events.find((e) => e.type === 'send' && e.kind === 'content');
    await this.tool.ok({ op: 'hint', id, hint: toHex(hintOf(fromHex(ev.data))) });
    return { id, hex: ev.data };
  }

  async receive(bytes) {
    return this.tool.ok({ op: 'receive', now: Date.now(), hex: toHex(bytes),
      hint: toHex(hintOf(bytes)) });
  }

  async tick() {
    return this.tool.ok({ op: 'tick', now: Date.now() + 1 });
  }
}

const ofType = (ans, type) => ans.events.filter((e) => e.type === type);
const text = (hex) => new TextDecoder().decode(fromHex(hex));

describe('SDS engine and js-waku MessageChannel in one channel', { skip }, () => {
  test('each delivers and acknowledges the other (causal history)', async () => {
    const tool = new SdsTool();
    const c = new CPeer(tool);
    await c.start('chan', 'c-peer', { causal_history_size: 2 });
    const js = new JsPeer('chan', 'js-peer', { causalHistorySize: 2 });

    const c1 = await c.send('hello from C');
    await js.receive(c1.hex);
    assert.deepEqual(js.take(MessageChannelEvent.InMessageDelivered), [c1.id]);

    const j1 = await js.send('hello from js');
    const got = await c.receive(j1.bytes);
    assert.equal(got.outcome, 'delivered');
    assert.deepEqual(ofType(got, 'acknowledged').map((e) => [e.messageId, e.count]), [[c1.id, 0]]);
    const delivered = ofType(got, 'delivered');
    assert.equal(delivered.length, 1);
    assert.equal(delivered[0].messageId, j1.id);
    assert.equal(delivered[0].senderId, 'js-peer');
    assert.equal(text(delivered[0].data), 'hello from js');

    // C's next message names j1 in its causal history, with j1's retrieval hint
    const c2 = await c.send('second from C');
    const decoded = SdsProto.decode(fromHex(c2.hex));
    assert.deepEqual(decoded.causalHistory.map((e) => e.messageId), [c1.id, j1.id]);
    assert.equal(toHex(decoded.causalHistory[1].retrievalHint), toHex(hintOf(j1.bytes)));
    await js.receive(c2.hex);
    assert.deepEqual(js.take(MessageChannelEvent.OutMessageAcknowledged), [j1.id]);
    assert.deepEqual(js.take(MessageChannelEvent.InMessageDelivered), [c2.id]);
    await tool.close();
  });

  test('each acknowledges the other through its bloom filter', async () => {
    const tool = new SdsTool();
    const c = new CPeer(tool);
    // Only the bloom filters may acknowledge: C sends no causal history; js-waku sends one
    // entry (its causalHistorySize 0 would send the whole log: localHistory.slice(-0)), and its
    // b0, which would name k1, never reaches C.
    await c.start('chan', 'c-peer', { causal_history_size: 0, possible_acks_threshold: 2 });
    const js = new JsPeer('chan', 'js-peer', { causalHistorySize: 1, possibleAcksThreshold: 2 });

    const k1 = await c.send('k1');
    await js.receive(k1.hex);
    const b0 = await js.send('b0');
    assert.deepEqual(SdsProto.decode(b0.bytes).causalHistory.map((e) => e.messageId), [k1.id]);
    const b1 = await js.send('b1');
    assert.deepEqual(SdsProto.decode(b1.bytes).causalHistory.map((e) => e.messageId), [b0.id]);
    let ans = await c.receive(b1.bytes);
    assert.deepEqual(ofType(ans, 'possibly-acknowledged').map((e) => [e.messageId, e.count]),
      [[k1.id, 1]]);
    const b2 = await js.send('b2');
    ans = await c.receive(b2.bytes);
    assert.deepEqual(ofType(ans, 'acknowledged').map((e) => [e.messageId, e.count]), [[k1.id, 2]]);

    // js-waku reads our filter: b1 and b2 are in it (b0 is not: C never got it)
    const k2 = await c.send('k2');
    await js.receive(k2.hex);
    assert.deepEqual(js.take(MessageChannelEvent.OutMessagePossiblyAcknowledged)
      .map((d) => [d.messageId, d.count]).sort(), [[b1.id, 1], [b2.id, 1]].sort());
    const k3 = await c.send('k3');
    await js.receive(k3.hex);
    assert.deepEqual(js.take(MessageChannelEvent.OutMessageAcknowledged).sort(),
      [b1.id, b2.id].sort());
    const st = await tool.ok({ op: 'stats' });
    assert.equal(st.stats.bloomSizeMismatch, 0);
    await tool.close();
  });

  test('js-waku takes content without a bloom filter and reads the filter of our sync', async () => {
    const tool = new SdsTool();
    const c = new CPeer(tool);
    // bloom_interval_ms: only C's first content message and its syncs carry the filter
    await c.start('chan', 'c-peer', { causal_history_size: 1, bloom_interval_ms: 600000 });
    const js = new JsPeer('chan', 'js-peer', { causalHistorySize: 1, possibleAcksThreshold: 2 });
    const j1 = await js.send('j1');
    const j2 = await js.send('j2');
    await c.receive(j1.bytes);
    await c.receive(j2.bytes);

    const c1 = await c.send('c1'); // names j2, carries the filter: j1 possibly acknowledged
    assert.equal(SdsProto.decode(fromHex(c1.hex)).bloomFilter.length, 18752);
    await js.receive(c1.hex);
    assert.deepEqual(js.take(MessageChannelEvent.OutMessageAcknowledged), [j2.id]);
    assert.deepEqual(js.take(MessageChannelEvent.OutMessagePossiblyAcknowledged)
      .map((d) => [d.messageId, d.count]), [[j1.id, 1]]);

    const c2 = await c.send('c2'); // names c1, no filter: delivered, acknowledges nothing
    const decoded = SdsProto.decode(fromHex(c2.hex));
    assert.equal(decoded.bloomFilter, undefined);
    assert.ok(fromHex(c2.hex).length < 400);
    await js.receive(c2.hex);
    assert.deepEqual(js.take(MessageChannelEvent.InMessageDelivered), [c1.id, c2.id]);
    assert.deepEqual(js.take(MessageChannelEvent.OutMessageAcknowledged), []);
    assert.deepEqual(js.take(MessageChannelEvent.OutMessagePossiblyAcknowledged), []);

    const ans = await tool.ok({ op: 'sync', now: Date.now() });
    const sync = ans.events.find((e) => e.type === 'send' && e.kind === 'sync');
    assert.equal(SdsProto.decode(fromHex(sync.data)).bloomFilter.length, 18752);
    await js.receive(sync.data); // the second bloom hit acknowledges j1
    assert.deepEqual(js.take(MessageChannelEvent.OutMessageAcknowledged), [j1.id]);

    // and js-waku's next message acknowledges c2 to C
    const j3 = await js.send('j3');
    const got = await c.receive(j3.bytes);
    assert.deepEqual(ofType(got, 'acknowledged').map((e) => e.messageId), [c2.id]);
    await tool.close();
  });

  test('js-waku repairs a message C missed, and C one js-waku missed (SDS-R)', async () => {
    const tool = new SdsTool();
    const c = new CPeer(tool);
    // T_min 0, T_max 1 ms on both sides: requests and answers are due at once
    await c.start('chan', 'c-peer', { causal_history_size: 2, repair_t_min_ms: 0,
      repair_t_max_ms: 1 });
    const js = new JsPeer('chan', 'js-peer', { causalHistorySize: 2,
      repairConfig: { tMin: 0, tMax: 1 } });

    // js-waku's j1 is lost on the way to C; j2 arrives and waits
    const j1 = await js.send('j1');
    const j2 = await js.send('j2');
    let ans = await c.receive(j2.bytes);
    assert.equal(ans.outcome, 'buffered');
    assert.deepEqual(ofType(ans, 'missing').map((e) => e.messageId), [j1.id]);
    // C's repair request rides on a sync message
    ans = await c.tick();
    const sync = ans.events.find((e) => e.type === 'send' && e.kind === 'sync');
    assert.ok(sync, 'C sends a sync carrying the repair request');
    assert.deepEqual(SdsProto.decode(fromHex(sync.data)).repairRequest.map((r) => r.messageId),
      [j1.id]);
    await js.receive(sync.data);
    assert.equal(js.take(MessageChannelEvent.InSyncReceived).length, 1);
    assert.deepEqual(js.take(MessageChannelEvent.RepairRequestReceived)
      .map((d) => d.messageIds), [[j1.id]]);
    let repaired;
    await js.ch.sweepRepairIncomingBuffer(async (m) => {
      repaired = m.encode();
    });
    assert.ok(repaired, 'js-waku answers the repair request');
    ans = await c.receive(repaired);
    assert.deepEqual(ofType(ans, 'delivered').map((e) => e.messageId), [j1.id, j2.id]);

    // C's c1 is lost on the way to js-waku; c2 arrives and waits there
    const c1 = await c.send('c1');
    const c2 = await c.send('c2');
    await js.receive(c2.hex);
    assert.deepEqual(js.take(MessageChannelEvent.InMessageDelivered), []);
    const request = await js.sync();
    assert.deepEqual(SdsProto.decode(request).repairRequest.map((r) => r.messageId), [c1.id]);
    ans = await c.receive(request);
    assert.equal(ans.outcome, 'sync');
    ans = await c.tick(); // the original sender answers at once
    const repair = ans.events.find((e) => e.type === 'send' && e.kind === 'repair');
    assert.ok(repair, 'C answers the repair request');
    assert.equal(repair.messageId, c1.id);
    await js.receive(repair.data);
    assert.deepEqual(js.take(MessageChannelEvent.InMessageDelivered), [c1.id, c2.id]);
    await tool.close();
  });
});
