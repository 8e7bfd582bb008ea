// Light-node interop: js-waku light nodes (@waku/sdk 0.0.36 createLightNode, mplex, Noise) use
// the node program as their service node, as they use nwaku: a light node sends with light push,
// a second one receives through filter, a js-waku relay peer and the node itself (REST, log)
// receive the same message with the same deterministic hash, and the store returns it; paging
// through the store with a small page size in both directions; filter unsubscribe; filter and
// light push on shards the node does not serve; light push error answers as js-waku reports them.
//
// Every describe block runs over TCP (`libp2p.transports = [tcp()]`) and over /ws (the sdk's
// default WebSocket transport, plain ws allowed as under NODE_ENV=test); the /ws blocks are
// skipped, saying why, when the node prints no /ws listen address with --websocket-support.
// A fresh node per describe block; skipped when LD_BIN is unset.
import './lib/node20-compat.mjs';

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';

import { LightPushError } from '@waku/sdk';

import { missing, nodePath, stopAll } from './lib/cpeer.mjs';
import { MUXER_PROTOCOLS } from './lib/jspeer.mjs';
import {
  FILTER_SUBSCRIBE_CODEC, LIGHTPUSH_CODEC, LIGHTPUSH_V2_CODEC, Protocols, STORE_CODEC, createLight,
  probeWebSocket, protoFields, startServiceNode, storeWire, wakuLog,
} from './lib/lightnode.mjs';
import { autoShard, createRelayPeer, nwakuHash, shardTopic, wakuHash } from './lib/wakupeer.mjs';

const NODE = nodePath();
const NODE_SKIP = missing('logosdelivery', NODE);
const WS_SKIP = NODE_SKIP || await probeWebSocket({ path: NODE });
const TRANSPORTS = [
  { name: 'tcp', skip: NODE_SKIP },
  { name: 'ws', skip: WS_SKIP },
];

const CLUSTER = 42;
const SHARD = 0;
const NUM_SHARDS = 8;
const CT = '/ld/1/light-interop/proto';
const CT2 = '/ld/1/light-interop-2/proto';
const AUTO_CT = '/ld-light/1/auto/proto';
const PAGED_MESSAGES = 40;
const PAGE_SIZE = 7;
const STEP_MS = 30_000;
const SUITE_MS = 180_000;
// After a later message was pushed, how long an earlier one may still be on its way.
const NO_PUSH_GRACE_MS = 500;
const FIELD_FORWARD = 52;
const FIELD_CURSOR = 51;
const FIELD_LIMIT = 53;

let counter = 0;

/** A fresh message for LightPeer.send: unique payload, meta, timestamp in whole ms. */
function newMessage(contentTopic, label, extra = {}) {
  counter += 1;
  return {
    contentTopic,
    payload: Buffer.concat([Buffer.from(`${label} #${counter} `), randomBytes(32)]),
    meta: Buffer.from(`meta-${counter}`),
    timestamp: new Date(),
    ...extra,
  };
}

const hex = (b) => (b == null ? '' : Buffer.from(b).toString('hex'));

function assertSameMessage(got, sent, where) {
  assert.equal(hex(got.payload), hex(sent.payload), `${where}: payload`);
  assert.equal(got.contentTopic, sent.contentTopic, `${where}: content topic`);
  assert.equal(BigInt(got.timestamp ?? 0n), BigInt(sent.timestamp), `${where}: timestamp`);
  assert.equal(hex(got.meta), hex(sent.meta), `${where}: meta`);
}

/** Resolves with fn()'s first truthy value, trying every 100 ms for up to timeoutMs. */
async function eventually(fn, { timeoutMs = 10_000, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await fn();
    if (last) return last;
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await delay(100);
  }
}

/** Position in a process's output, and a wait for a line after it. */
const logMark = (node) => node.proc.lines.length;
function waitNodeLine(node, mark, re, { timeoutMs = 10_000 } = {}) {
  return node.proc.waitLine((l) => node.proc.lines.indexOf(l) >= mark && re.test(l.text), (l) => l.text,
    `a line matching ${re}`, timeoutMs);
}
const nodeLinesSince = (node, mark, re) => node.proc.lines.slice(mark).filter((l) => re.test(l.text)).map((l) => l.text);

/** (timestamp, hash) ascending: the store's order. */
function storeOrder(entries) {
  const cmp = (x, y) => (x < y ? -1 : x > y ? 1 : 0);
  return [...entries].sort((a, b) => cmp(a.ts, b.ts) || cmp(a.hash, b.hash));
}

/** The pages js-waku should yield for a backward query: newest page first, each ascending. */
function backwardPages(ordered, size) {
  const pages = [];
  for (let end = ordered.length; end > 0; end -= size) pages.push(ordered.slice(Math.max(0, end - size), end));
  return pages;
}

function chunk(list, size) {
  const out = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

/** Pages of hashes as positions in `ordered` (-1: a hash not sent), for short diffs. */
const pagePositions = (pages, ordered) => pages.map((p) => p.map((h) => ordered.indexOf(h)));
const positions = (pages, ordered) => JSON.stringify(pagePositions(pages, ordered));

/** Asserts that js-waku yielded exactly `expected` pages (hashes), comparing store positions. */
function assertPages(pages, expected, ordered, what) {
  assert.equal(positions(pages, ordered), positions(expected, ordered), `${what} (store positions)`);
  assert.deepEqual(pages, expected, what);
}

/** Starts the node, checks the /ws address when wanted; returns {node, target}. */
async function serviceNode(transport, opts) {
  const node = await startServiceNode({ path: NODE, websocket: transport === 'ws', ...opts });
  if (transport === 'ws') {
    assert.ok(node.wsAddr, `no /ws listen address\n${node.describe()}`);
    assert.equal(node.wsAddr.split('/p2p/').pop(), node.peerId);
  }
  return { node, target: transport === 'ws' ? node.wsAddr : node.addr };
}

/** Dials, checks the connection as js-waku needs it, waits for the protocols. */
async function connectLight(light, node, target, protocols) {
  const conn = await light.dial(target);
  assert.equal(conn.encryption, '/noise');
  assert.equal(conn.multiplexer, MUXER_PROTOCOLS.mplex, 'js-waku offers mplex only');
  const ws = conn.remoteAddr.toString().includes('/ws');
  assert.equal(ws, light.transport === 'ws', `remote address ${conn.remoteAddr}`);
  await light.waitForPeers(protocols, { timeoutMs: STEP_MS - 5_000 });
  return conn;
}

// ---------------------------------------------------------------------------------------------

function mainSuite(transport) {
  describe(`${transport.name}: light push, filter, relay and store on a static shard`,
    { skip: transport.skip, timeout: SUITE_MS }, () => {
      const topic = shardTopic(CLUSTER, SHARD);
      let node;
      let target;
      let sender;
      let receiver;
      let relay;
      let collector;
      const stored = []; // {hash, ts} of every message the archive must hold for CT
      let ordered = []; // their hashes in store order

      before(async () => {
        ({ node, target } = await serviceNode(transport.name, { clusterId: CLUSTER, shards: [SHARD] }));
        sender = await createLight({ transport: transport.name, clusterId: CLUSTER, shard: SHARD });
        receiver = await createLight({ transport: transport.name, clusterId: CLUSTER, shard: SHARD });
        relay = await createRelayPeer({ listen: false, clusterId: CLUSTER, shard: SHARD, contentTopics: [CT, CT2] });
      });

      after(async () => {
        storeWire.restore();
        await Promise.all([sender, receiver, relay].filter(Boolean).map((p) => p.stop().catch(() => {})));
        await stopAll();
        await node?.stopped;
      });

      it('light nodes connect (Noise, mplex), find lightpush v3, filter and store in identify, pass waitForPeers',
        { timeout: STEP_MS }, async () => {
          await connectLight(sender, node, target, [Protocols.LightPush, Protocols.Store]);
          await connectLight(receiver, node, target, [Protocols.Filter, Protocols.Store]);
          const protocols = await sender.remoteProtocols(node.peerId);
          for (const codec of [LIGHTPUSH_CODEC, LIGHTPUSH_V2_CODEC, FILTER_SUBSCRIBE_CODEC, STORE_CODEC]) {
            assert.ok(protocols.includes(codec), `identify lacks ${codec}: ${protocols}`);
          }
          assert.deepEqual(receiver.libp2p.getMultiaddrs(), [], 'a light node does not listen');
          await relay.dial(node.addr);
          await relay.waitMesh(node.peerId, topic);
        });

      it('light push → SUCCESS; the filter subscriber, the relay peer and the node get it with the same hash',
        { timeout: STEP_MS }, async () => {
          collector = await receiver.subscribe([CT, CT2], { shard: SHARD });
          assert.equal(collector.ok, true, 'filter subscribe failed');
          const sent = await sender.send(newMessage(CT, 'lightpush'));
          assert.deepEqual(sent.result, { successes: [node.peerId], failures: [] });
          assert.equal(sent.pubsubTopic, topic);
          const { hash } = sent;
          assert.equal(nwakuHash(topic, sent.message), hash, 'message-hash and the nwaku rule disagree');
          stored.push({ hash, ts: sent.message.timestamp });

          const got = await collector.waitHash(hash, { timeoutMs: 10_000 });
          assertSameMessage(got, sent.message, 'filter');
          assert.equal(got.messageHash, hash, '@waku/message-hash of the pushed message');
          assert.equal(got.pubsubTopic, topic);
          const push = receiver.pushes.find((p) => p.hash === hash);
          assert.equal(push.from, node.peerId, 'pushed by the node, over the connection the light node opened');
          assert.equal(push.pubsubTopic, topic);

          const relayed = await relay.waitHash(hash, { timeoutMs: 10_000 });
          assert.equal(relayed.coreHash, hash);
          assertSameMessage(relayed.message, sent.message, 'relay peer');

          const rest = await node.rest.waitMessage('pubsub', topic, (m) => wakuHash(topic, m) === hash,
            { timeoutMs: 10_000, what: 'the light-pushed message' });
          assertSameMessage(rest, sent.message, 'REST');
          const line = await node.waitHashLogged(hash);
          assert.match(line, new RegExp(`msg_hash=0x${hash}`), line);
        });

      it('the store returns it with the same hash (content query and hash query)', { timeout: STEP_MS }, async () => {
        const [{ hash }] = stored;
        const q = await eventually(async () => {
          const r = await sender.storeQuery({ contentTopics: [CT], shard: SHARD });
          return r.messages.some((m) => m.hash === hash) && r;
        }, { what: 'the message in the store' });
        const m = q.messages.find((x) => x.hash === hash);
        assert.equal(m.messageHash, hash);
        assert.equal(m.pubsubTopic, topic);
        assert.equal(q.messages.length, 1, `store returned ${q.messages.map((x) => x.hash)}`);
        const byHash = await receiver.storeQuery({ contentTopics: [CT], shard: SHARD,
          messageHashes: [Buffer.from(hash, 'hex')] });
        assert.deepEqual(byHash.messages.map((x) => x.hash), [hash]);
      });

      it(`${PAGED_MESSAGES} more messages (light push and relay) reach the filter subscriber once each; forward paging `
        + `with page size ${PAGE_SIZE} returns every message once, in order`, { timeout: 60_000 }, async () => {
        const base = Date.now();
        const sent = [];
        for (let i = 0; i < PAGED_MESSAGES; i += 1) {
          const at = new Date(base + i);
          if (i % 3 === 2) {
            const r = await relay.publish({ ...newMessage(CT, 'relay'), timestamp: BigInt(at.getTime()) * 1_000_000n });
            assert.ok(r.recipients.includes(node.peerId), `relay publish went to ${r.recipients}`);
            sent.push({ hash: r.hash, ts: r.message.timestamp, via: 'relay' });
          } else {
            const r = await sender.send(newMessage(CT, 'paged', { timestamp: at }));
            assert.deepEqual(r.result, { successes: [node.peerId], failures: [] }, `send ${i}`);
            sent.push({ hash: r.hash, ts: r.message.timestamp, via: 'lightpush' });
          }
        }
        stored.push(...sent);
        ordered = storeOrder(stored).map((e) => e.hash);

        for (const s of sent) await collector.waitHash(s.hash, { timeoutMs: 10_000 });
        for (const s of sent) {
          assert.equal(receiver.pushes.filter((p) => p.hash === s.hash).length, 1,
            `${s.via} message pushed more than once`);
          assert.equal(collector.messages.filter((m) => m.hash === s.hash).length, 1);
        }

        await eventually(async () => {
          const r = await sender.storeQuery({ contentTopics: [CT], shard: SHARD, pageSize: 100 });
          return r.messages.length >= stored.length;
        }, { what: `${stored.length} messages in the store` });

        storeWire.install();
        storeWire.requests.length = 0;
        const q = await sender.storeQuery({ contentTopics: [CT], shard: SHARD, pageSize: PAGE_SIZE, method: 'generator' });
        assertPages(q.pages, chunk(ordered, PAGE_SIZE), ordered, 'forward pages');
        assert.deepEqual(q.messages.map((m) => m.hash), ordered);
        const reqs = storeWire.requests.map((r) => protoFields(r.bytes));
        assert.equal(reqs.length, q.pages.length + 1, 'one request per page and one that comes back empty');
        reqs.forEach((fields, i) => {
          assert.equal(fields.find((f) => f.field === FIELD_FORWARD)?.value, 1n, 'forward is written as 52 = 1');
          assert.equal(fields.find((f) => f.field === FIELD_LIMIT)?.value, BigInt(PAGE_SIZE));
          const cursor = fields.find((f) => f.field === FIELD_CURSOR);
          assert.equal(cursor == null ? null : hex(cursor.bytes), i === 0 ? null : q.pages[i - 1].at(-1));
        });

        const all = await receiver.storeQuery({ contentTopics: [CT], shard: SHARD });
        assert.deepEqual(all.messages.map((m) => m.hash), ordered, 'queryWithOrderedCallback, default page size');
        for (const m of all.messages) assert.equal(m.messageHash, m.hash);
      });

      // js-waku omits field 52 for a backward query and takes the FIRST entry of each page as the
      // next cursor; the node reads the absent field as backward (the spec), so the pages come
      // newest first, each ascending, every message exactly once. With the other reading (absent
      // = forward) js-waku got overlapping pages sliding by one message: [0..6], [1..7], ….
      it(`backward paging with page size ${PAGE_SIZE} returns every message once, newest page first`,
        { timeout: 60_000 },
        async (t) => {
          assert.ok(ordered.length > PAGE_SIZE, 'needs the messages of the previous test');
          storeWire.requests.length = 0;
          const q = await sender.storeQuery({ contentTopics: [CT], shard: SHARD, pageSize: PAGE_SIZE, forward: false,
            method: 'generator', timeoutMs: 50_000 });
          t.diagnostic(`backward pages (store positions): ${positions(q.pages, ordered)}`);
          assertPages(q.pages, backwardPages(ordered, PAGE_SIZE), ordered, 'backward pages');
        });

      it('js-waku writes no field 52 for a backward query and takes the first entry of each page as the next cursor',
        { timeout: 60_000 }, async () => {
          storeWire.requests.length = 0;
          const q = await sender.storeQuery({ contentTopics: [CT], shard: SHARD, pageSize: PAGE_SIZE, forward: false,
            method: 'generator', timeoutMs: 50_000 });
          const reqs = storeWire.requests.map((r) => protoFields(r.bytes));
          assert.equal(reqs.length, q.pages.length + 1);
          reqs.forEach((fields, i) => {
            assert.equal(fields.some((f) => f.field === FIELD_FORWARD), false,
              `request ${i} carries field 52: ${storeWire.requests[i].bytes.toString('hex')}`);
            assert.equal(fields.find((f) => f.field === FIELD_LIMIT)?.value, BigInt(PAGE_SIZE));
            const cursor = fields.find((f) => f.field === FIELD_CURSOR);
            assert.equal(cursor == null ? null : hex(cursor.bytes), i === 0 ? null : q.pages[i - 1][0]);
          });
        });

      it('with field 52 = 0 on the wire (as nwaku\'s client writes it), js-waku\'s backward paging returns every '
        + 'message once, newest page first', { timeout: STEP_MS }, async () => {
        storeWire.rewrite = (obj, bytes) => (obj.paginationForward ? bytes
          : Buffer.concat([Buffer.from(bytes), Buffer.from([0xa0, 0x03, 0x00])]));
        try {
          storeWire.requests.length = 0;
          const q = await sender.storeQuery({ contentTopics: [CT], shard: SHARD, pageSize: PAGE_SIZE, forward: false,
            method: 'generator' });
          assertPages(q.pages, backwardPages(ordered, PAGE_SIZE), ordered, 'backward pages with 52 = 0');
          assert.equal(protoFields(storeWire.requests[0].bytes).find((f) => f.field === FIELD_FORWARD)?.value, 0n);
          const o = await receiver.storeQuery({ contentTopics: [CT], shard: SHARD, forward: false });
          assert.deepEqual(o.messages.map((m) => m.hash), backwardPages(ordered, 20).flat(),
            'queryWithOrderedCallback backward, default page size');
        } finally {
          storeWire.rewrite = null;
        }
      });

      it('filter unsubscribe stops the pushes of that content topic, then of all', { timeout: STEP_MS }, async () => {
        let mark = logMark(node);
        assert.equal(await collector.unsubscribe([CT2]), true);
        await waitNodeLine(node, mark, /UNSUBSCRIBE request answered: OK/);
        const off = await sender.send(newMessage(CT2, 'unsubscribed topic'));
        const on = await sender.send(newMessage(CT, 'still subscribed'));
        assert.deepEqual([off.result.failures, on.result.failures], [[], []]);
        await collector.waitHash(on.hash, { timeoutMs: 10_000 });
        await relay.waitHash(off.hash, { timeoutMs: 10_000 });
        await delay(NO_PUSH_GRACE_MS);
        assert.equal(receiver.pushes.some((p) => p.hash === off.hash), false, 'pushed after UNSUBSCRIBE');

        mark = logMark(node);
        assert.equal(await collector.unsubscribe([CT]), true);
        await waitNodeLine(node, mark, /UNSUBSCRIBE request answered: OK/);
        const last = await sender.send(newMessage(CT, 'nothing subscribed'));
        assert.deepEqual(last.result.failures, []);
        await relay.waitHash(last.hash, { timeoutMs: 10_000 });
        await node.waitHashLogged(last.hash);
        await delay(NO_PUSH_GRACE_MS);
        assert.equal(receiver.pushes.some((p) => p.hash === last.hash), false, 'pushed after the last UNSUBSCRIBE');
        assert.ok(receiver.isConnected(node.peerId) && sender.isConnected(node.peerId), 'the node dropped a light node');
      });
    });
}

function scopeSuite(transport) {
  describe(`${transport.name}: light push errors and shards the node does not serve`,
    { skip: transport.skip, timeout: SUITE_MS }, () => {
      // The node serves shards 0 and 1; the relay peer is on shard 0 only.
      const served = shardTopic(CLUSTER, 0);
      const lonely = shardTopic(CLUSTER, 1);
      let node;
      let target;
      let light;
      let relay;

      before(async () => {
        ({ node, target } = await serviceNode(transport.name, { clusterId: CLUSTER, shards: [0, 1] }));
        light = await createLight({ transport: transport.name, clusterId: CLUSTER });
        relay = await createRelayPeer({ listen: false, clusterId: CLUSTER, shard: 0, contentTopics: [CT] });
        await relay.dial(node.addr);
        await relay.waitMesh(node.peerId, served);
        await connectLight(light, node, target, [Protocols.LightPush, Protocols.Filter]);
      });

      after(async () => {
        await Promise.all([light, relay].filter(Boolean).map((p) => p.stop().catch(() => {})));
        await stopAll();
        await node?.stopped;
      });

      /** Sends without the sdk's background retries; returns the result and js-waku's log lines. */
      async function push(msg, options = {}) {
        const mark = wakuLog.mark();
        const sent = await light.send(msg, { autoRetry: false, ...options });
        const lines = wakuLog.since(mark, /light-push/).map((l) => l.text);
        return { ...sent, lines };
      }

      const rejected = (sent) => assert.deepEqual(sent.result,
        { successes: [], failures: [{ error: LightPushError.REMOTE_PEER_REJECTED, peerId: node.peerId }] });
      const logged = (sent, re) => assert.ok(sent.lines.some((l) => re.test(l)),
        `no js-waku log line ${re}:\n${sent.lines.join('\n')}`);

      it('shard 0 (a relay peer is there): SUCCESS, relayPeerCount 1', { timeout: STEP_MS }, async () => {
        const sent = await push(newMessage(CT, 'to the relay peer', { shard: 0 }));
        assert.deepEqual(sent.result, { successes: [node.peerId], failures: [] });
        logged(sent, /Message relayed to 1 peers/);
        await relay.waitHash(sent.hash, { timeoutMs: 10_000 });
      });

      it('shard 1 (served, no relay peer): 505 NO_PEERS_TO_RELAY, which js-waku reports as "Remote peer rejected"',
        { timeout: STEP_MS }, async () => {
          const mark = logMark(node);
          const sent = await push(newMessage(CT, 'nobody to relay to', { shard: 1 }));
          assert.equal(sent.pubsubTopic, lonely);
          rejected(sent);
          logged(sent, /Remote peer rejected with v3 status code 505: No peers for topic, skipping publish$/);
          await waitNodeLine(node, mark, new RegExp(`push on ${lonely} failed: 505`));
        });

      it('a message over --max-msg-size (200 KiB; js-waku allows 1 MiB): 420 INVALID_MESSAGE',
        { timeout: STEP_MS }, async () => {
        const mark = logMark(node);
        const sent = await push(newMessage(CT, 'too big', { shard: 0, payload: randomBytes(200 * 1024) }));
        rejected(sent);
        logged(sent, /Remote peer rejected with v3 status code 420: Message size exceeded maximum of 153600 bytes$/);
        await waitNodeLine(node, mark, new RegExp(`push on ${served} failed: 420`));
        const control = await push(newMessage(CT, 'after the big one', { shard: 0 }));
        assert.deepEqual(control.result.failures, []);
        await relay.waitHash(control.hash, { timeoutMs: 10_000 });
        assert.equal(relay.received.some((m) => m.hash === sent.hash), false, 'the oversized message was relayed');
      });

      it('legacy light push v2 (useLegacy): success on shard 0, "not_published_to_any_peer" on shard 1, the validator '
        + 'message for an oversized one', { timeout: STEP_MS }, async () => {
        const ok = await push(newMessage(CT, 'v2', { shard: 0 }), { useLegacy: true });
        assert.deepEqual(ok.result, { successes: [node.peerId], failures: [] });
        logged(ok, new RegExp(`protocol:${LIGHTPUSH_V2_CODEC.replace(/[.]/g, '\\.')}`));
        await relay.waitHash(ok.hash, { timeoutMs: 10_000 });
        const none = await push(newMessage(CT, 'v2 nobody', { shard: 1 }), { useLegacy: true });
        rejected(none);
        logged(none, /Remote peer rejected the message: +not_published_to_any_peer$/);
        const mark = logMark(node);
        const big = await push(newMessage(CT, 'v2 too big', { shard: 0, payload: randomBytes(200 * 1024) }),
          { useLegacy: true });
        rejected(big);
        logged(big, /Remote peer rejected the message: +Message size exceeded maximum of 153600 bytes$/);
        await waitNodeLine(node, mark, /legacy push failed: Message size exceeded/);
      });

      it('a shard the node does not serve (5): js-waku never asks the node (its metadata lists shards 0 and 1), '
        + '"No peer available"', { timeout: STEP_MS }, async () => {
        const mark = logMark(node);
        const sent = await push(newMessage(CT, 'unserved shard', { shard: 5 }));
        assert.deepEqual(sent.result,
          { successes: [], failures: [{ error: LightPushError.NO_PEER_AVAILABLE, peerId: undefined }] });
        await delay(NO_PUSH_GRACE_MS);
        assert.deepEqual(nodeLinesSince(node, mark, /lightpush|rs\/42\/5/), []);
      });

      it('filter on a shard the node does not serve (2): the sdk\'s subscribe resolves false without asking the node; '
        + 'a SUBSCRIBE sent anyway is answered 200, as nwaku does (no check of the pubsub topic)',
        { timeout: STEP_MS }, async () => {
          let mark = logMark(node);
          const sub = await light.subscribe([CT], { shard: 2 });
          assert.equal(sub.ok, false);
          await delay(NO_PUSH_GRACE_MS);
          assert.deepEqual(nodeLinesSince(node, mark, /SUBSCRIBE/), []);
          mark = logMark(node);
          const core = light.waku.filter.protocol;
          const peer = light.libp2p.getConnections().find((c) => c.remotePeer.toString() === node.peerId).remotePeer;
          const r = await core.subscribe(shardTopic(CLUSTER, 2), peer, [CT]);
          assert.equal(r.failure, null, JSON.stringify(r.failure));
          assert.equal(r.success.toString(), node.peerId);
          await waitNodeLine(node, mark, /SUBSCRIBE request answered: OK/);
          const served1 = await light.subscribe([CT], { shard: 1 });
          assert.equal(served1.ok, true, 'a served shard is subscribed through the sdk');
        });
    });
}

function autoSuite(transport) {
  const shard = autoShard(AUTO_CT, NUM_SHARDS);
  const topic = shardTopic(CLUSTER, shard);
  describe(`${transport.name}: light push, filter, relay and store with autosharding (${AUTO_CT} → ${topic})`,
    { skip: transport.skip, timeout: SUITE_MS }, () => {
      let node;
      let target;
      let sender;
      let receiver;
      let relay;
      let collector;
      const stored = [];

      before(async () => {
        ({ node, target } = await serviceNode(transport.name, { clusterId: CLUSTER, numShardsInNetwork: NUM_SHARDS }));
        const net = { transport: transport.name, clusterId: CLUSTER, numShardsInCluster: NUM_SHARDS };
        sender = await createLight(net);
        receiver = await createLight(net);
        relay = await createRelayPeer({ listen: false, clusterId: CLUSTER, numShardsInCluster: NUM_SHARDS,
          contentTopics: [AUTO_CT] });
      });

      after(async () => {
        await Promise.all([sender, receiver, relay].filter(Boolean).map((p) => p.stop().catch(() => {})));
        await stopAll();
        await node?.stopped;
      });

      it('connects and subscribes', { timeout: STEP_MS }, async () => {
        await connectLight(sender, node, target, [Protocols.LightPush, Protocols.Store]);
        await connectLight(receiver, node, target, [Protocols.Filter]);
        await relay.dial(node.addr);
        await relay.waitMesh(node.peerId, topic);
        collector = await receiver.subscribe([AUTO_CT]);
        assert.equal(collector.ok, true);
      });

      it('light push → SUCCESS; filter, relay peer, node (REST, log) and store agree on the hash',
        { timeout: STEP_MS }, async () => {
        const sent = await sender.send(newMessage(AUTO_CT, 'auto'));
        assert.deepEqual(sent.result, { successes: [node.peerId], failures: [] });
        assert.equal(sent.pubsubTopic, topic);
        const { hash } = sent;
        assert.equal(nwakuHash(topic, sent.message), hash);
        stored.push({ hash, ts: sent.message.timestamp });
        const got = await collector.waitHash(hash, { timeoutMs: 10_000 });
        assertSameMessage(got, sent.message, 'filter');
        assert.equal(got.messageHash, hash);
        assert.equal((await relay.waitHash(hash, { timeoutMs: 10_000 })).coreHash, hash);
        const rest = await node.rest.waitMessage('pubsub', topic, (m) => wakuHash(topic, m) === hash,
          { timeoutMs: 10_000, what: 'the light-pushed message' });
        assertSameMessage(rest, sent.message, 'REST');
        assert.match(await node.waitHashLogged(hash), new RegExp(`msg_hash=0x${hash}`));
        const q = await eventually(async () => {
          const r = await receiver.storeQuery({ contentTopics: [AUTO_CT] });
          return r.messages.length > 0 && r;
        }, { what: 'the message in the store' });
        assert.deepEqual(q.messages.map((m) => [m.hash, m.messageHash, m.pubsubTopic]), [[hash, hash, topic]]);
      });

      it('ten more from both sides page forward with page size 3 exactly once, in order', { timeout: STEP_MS }, async () => {
        const base = Date.now();
        for (let i = 0; i < 10; i += 1) {
          const at = new Date(base + i);
          if (i % 2) {
            const r = await relay.publish({ ...newMessage(AUTO_CT, 'auto relay'),
              timestamp: BigInt(at.getTime()) * 1_000_000n });
            assert.equal(r.pubsubTopic, topic);
            stored.push({ hash: r.hash, ts: r.message.timestamp });
          } else {
            const r = await sender.send(newMessage(AUTO_CT, 'auto paged', { timestamp: at }));
            assert.deepEqual(r.result.failures, []);
            stored.push({ hash: r.hash, ts: r.message.timestamp });
          }
        }
        for (const s of stored) await collector.waitHash(s.hash, { timeoutMs: 10_000 });
        const ordered = storeOrder(stored).map((e) => e.hash);
        await eventually(async () => (await sender.storeQuery({ contentTopics: [AUTO_CT], pageSize: 100 })).messages.length
          >= stored.length, { what: `${stored.length} messages in the store` });
        const q = await sender.storeQuery({ contentTopics: [AUTO_CT], pageSize: 3, method: 'generator' });
        assertPages(q.pages, chunk(ordered, 3), ordered, 'forward pages');
      });
    });
}

for (const transport of TRANSPORTS) {
  mainSuite(transport);
  scopeSuite(transport);
  autoSuite(transport);
}
