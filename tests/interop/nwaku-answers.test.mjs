// Answers given as nwaku v0.36 gives them, where ours differed, seen by js-waku light nodes
// (@waku/sdk createLightNode, mplex, TCP) and through the REST API of the node program:
//
//  - `--relay=false --lightpush=true` starts, and every push is answered as nwaku's push handler
//    without relay answers it: v3 500 "no waku relay found", v2 the same text;
//  - store: a reversed time range is an empty page; a cursor shorter than 32 bytes is
//    zero-padded, so an unknown one is "cursor not found" (REST refuses it as nwaku's REST does);
//  - REST: a 10,000-character content topic in GET /relay/v1/auto/messages/… reaches its
//    handler (nwaku reads request heads up to 64 KiB); a head of 64 KiB + 1 byte is answered
//    431 (nwaku's body is empty, ours a JSON error);
//  - two light nodes push the same message to two of our service nodes (relay peers of each
//    other) at once, or one after the other once it has been relayed, also through the second
//    node's REST light push: both succeed (a deviation: nwaku answers the second 420 "Dropping
//    already-seen message");
//  - a js-waku node of another cluster reads our metadata before the node disconnects it.
//
// Skipped when LD_BIN is unset.
import './lib/node20-compat.mjs';

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';

import { peerIdFromString } from '@libp2p/peer-id';
import { multiaddr } from '@multiformats/multiaddr';
import { LightPushError } from '@waku/sdk';

import { missing, nodePath, stopAll } from './lib/cpeer.mjs';
import { withTimeout } from './lib/jspeer.mjs';
import {
  LIGHTPUSH_CODEC, LIGHTPUSH_V2_CODEC, Protocols, createLight, startServiceNode, wakuLog,
} from './lib/lightnode.mjs';
import { restMessageJson, startRelayNode } from './lib/relaynode.mjs';
import { createRelayPeer, shardTopic } from './lib/wakupeer.mjs';

const NODE = nodePath();
const SKIP = missing('logosdelivery', NODE);

const CLUSTER = 42;
const SHARD = 0;
const TOPIC = shardTopic(CLUSTER, SHARD);
const CT = '/ld/1/answers/proto';
const STEP_MS = 30_000;
const SUITE_MS = 180_000;
const MAX_HEAD = 64 * 1024;

let counter = 0;

/** A fresh message for LightPeer.send: unique payload and meta, timestamp in whole ms. */
function newMessage(label, extra = {}) {
  counter += 1;
  return {
    contentTopic: CT,
    shard: SHARD,
    payload: Buffer.concat([Buffer.from(`${label} #${counter} `), randomBytes(16)]),
    meta: Buffer.from(`meta-${counter}`),
    timestamp: new Date(),
    ...extra,
  };
}

/** Resolves with fn()'s first truthy value, trying every 100 ms for up to timeoutMs. */
async function eventually(fn, { timeoutMs = 10_000, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await delay(100);
  }
}

/** Light push without the sdk's retries; the result plus js-waku's light-push log lines. */
async function push(light, msg, options = {}) {
  const mark = wakuLog.mark();
  const sent = await light.send(msg, { autoRetry: false, ...options });
  return { ...sent, lines: wakuLog.since(mark, /light-push|Message relayed|Remote peer/).map((l) => l.text) };
}

function logged(sent, re) {
  assert.ok(sent.lines.some((l) => re.test(l)), `no js-waku log line ${re}:\n${sent.lines.join('\n')}`);
}

async function connectLight(light, node, protocols) {
  await light.dial(node.addr);
  await light.waitForPeers(protocols, { timeoutMs: STEP_MS - 5_000 });
}

/** Sends `head` (a whole request head) on a fresh socket; resolves with the raw answer. */
function rawHttp(port, head, { timeoutMs = 10_000 } = {}) {
  return withTimeout(new Promise((resolve, reject) => {
    const chunks = [];
    const sock = net.connect(port, '127.0.0.1', () => sock.end(head));
    sock.on('data', (d) => chunks.push(d));
    sock.on('error', reject);
    sock.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
  }), timeoutMs, 'an HTTP answer');
}

/** {status, headers (lower-case names), body} of a raw HTTP/1.1 answer. */
function parseHttp(text) {
  const [head, ...rest] = text.split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => {
    const i = l.indexOf(':');
    return [l.slice(0, i).trim().toLowerCase(), l.slice(i + 1).trim()];
  }));
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
}

/** GET /debug/v1/version with a padding header making the request head exactly `size` bytes. */
function headOf(size) {
  const start = 'GET /debug/v1/version HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nX-Pad: ';
  return `${start}${'p'.repeat(size - start.length - 4)}\r\n\r\n`;
}

// ---------------------------------------------------------------------------------------------

describe('--relay=false --lightpush=true: the node starts and answers as nwaku without relay',
  { skip: SKIP, timeout: SUITE_MS }, () => {
    let node;
    let light;

    before(async () => {
      node = await startServiceNode({ path: NODE, relay: false, filter: false, store: false, clusterId: CLUSTER,
        shards: [SHARD] });
      light = await createLight({ transport: 'tcp', clusterId: CLUSTER, shard: SHARD });
    });

    after(async () => {
      await light?.stop().catch(() => {});
      await stopAll();
      await node?.stopped;
    });

    it('serves both light push versions', { timeout: STEP_MS }, async () => {
      await connectLight(light, node, [Protocols.LightPush]);
      const protocols = await light.remoteProtocols(node.peerId);
      for (const codec of [LIGHTPUSH_CODEC, LIGHTPUSH_V2_CODEC]) {
        assert.ok(protocols.includes(codec), `identify lacks ${codec}: ${protocols}`);
      }
    });

    it('v3: 500 "no waku relay found"; v2: the same text', { timeout: STEP_MS }, async () => {
      const rejected = { successes: [], failures: [{ error: LightPushError.REMOTE_PEER_REJECTED, peerId: node.peerId }] };
      const v3 = await push(light, newMessage('no relay'));
      assert.deepEqual(v3.result, rejected);
      logged(v3, /Remote peer rejected with v3 status code 500: no waku relay found$/);
      const v2 = await push(light, newMessage('no relay, v2'), { useLegacy: true });
      assert.deepEqual(v2.result, rejected);
      logged(v2, /Remote peer rejected the message: +no waku relay found$/);
    });
  });

describe('store: a reversed time range and a short cursor, over store v3 and REST',
  { skip: SKIP, timeout: SUITE_MS }, () => {
    let node;
    let light;
    let relay;
    let stored; // the one message in the store: {hash, at (Date)}

    before(async () => {
      node = await startServiceNode({ path: NODE, clusterId: CLUSTER, shards: [SHARD] });
      await node.proc.waitMatch(/Archive open/, { timeoutMs: STEP_MS }); // it stores from then on
      relay = await createRelayPeer({ listen: false, clusterId: CLUSTER, shard: SHARD, contentTopics: [CT] });
      await relay.dial(node.addr);
      await relay.waitMesh(node.peerId, TOPIC);
      light = await createLight({ transport: 'tcp', clusterId: CLUSTER, shard: SHARD });
      await connectLight(light, node, [Protocols.LightPush, Protocols.Store]);
      const at = new Date(); // the archive keeps only messages stamped within 20 s of now
      const sent = await push(light, newMessage('stored', { timestamp: at }));
      assert.deepEqual(sent.result.failures, []);
      stored = { hash: sent.hash, at };
      await eventually(async () => (await light.storeQuery({ contentTopics: [CT], shard: SHARD }))
        .messages.some((m) => m.hash === stored.hash), { what: 'the message in the store' });
    });

    after(async () => {
      await Promise.all([light, relay].filter(Boolean).map((p) => p.stop().catch(() => {})));
      await stopAll();
      await node?.stopped;
    });

    it('js-waku: time_start after time_end gives an empty result, not an error', { timeout: STEP_MS }, async () => {
      const around = await light.storeQuery({ contentTopics: [CT], shard: SHARD,
        timeStart: new Date(stored.at.getTime() - 1), timeEnd: new Date(stored.at.getTime() + 1) });
      assert.deepEqual(around.messages.map((m) => m.hash), [stored.hash]);
      const reversed = await light.storeQuery({ contentTopics: [CT], shard: SHARD,
        timeStart: new Date(stored.at.getTime() + 1), timeEnd: new Date(stored.at.getTime() - 1) });
      assert.deepEqual(reversed.messages, []);
    });

    it('js-waku: a 16-byte cursor is zero-padded as nwaku does: "cursor not found"', { timeout: STEP_MS },
      async () => {
        const cursor = Buffer.from(stored.hash, 'hex').subarray(0, 16);
        await assert.rejects(light.storeQuery({ contentTopics: [CT], shard: SHARD, cursor }), {
          message: 'Store query failed with status code: 300, description: '
            + 'BAD_RESPONSE: archive error: DRIVER_ERROR: cursor not found',
        });
      });

    it('REST: the reversed range is a 200 with no messages; a short cursor is refused as nwaku\'s REST does',
      { timeout: STEP_MS }, async () => {
        const ns = (d) => BigInt(d.getTime()) * 1_000_000n;
        const q = (extra) => `/store/v3/messages?pubsubTopic=${encodeURIComponent(TOPIC)}`
          + `&contentTopics=${encodeURIComponent(CT)}${extra}`;
        const ok = await node.rest.request('GET', q(`&startTime=${ns(stored.at) - 1n}&endTime=${ns(stored.at) + 1n}`));
        assert.equal(ok.status, 200, ok.text);
        assert.deepEqual(ok.json.messages.map((m) => m.messageHash.replace(/^0x/, '')), [stored.hash]);
        const rev = await node.rest.request('GET', q(`&startTime=${ns(stored.at) + 1n}&endTime=${ns(stored.at) - 1n}`));
        assert.equal(rev.status, 200, rev.text);
        assert.equal(rev.json.statusCode, 200, rev.text);
        assert.equal(rev.json.statusDesc, 'OK');
        assert.deepEqual(rev.json.messages, []);
        const short = await node.rest.request('GET', q(`&cursor=0x${stored.hash.slice(0, 32)}`));
        assert.equal(short.status, 400);
        assert.equal(short.text, 'waku message hash parsing error: invalid hash length: 16');
      });
  });

describe('REST: a 10,000-character content topic in the path, and 64 KiB request heads',
  { skip: SKIP, timeout: SUITE_MS }, () => {
    const longTopic = `/app/1/${'x'.repeat(10_000)}/proto`;
    let node;

    before(async () => {
      node = await startRelayNode({ path: NODE, clusterId: CLUSTER, numShardsInNetwork: 8 });
    });

    after(async () => {
      await stopAll();
    });

    it('GET /relay/v1/auto/messages/{10,000 characters}: 404 with the topic while not subscribed, then its '
      + 'messages as JSON', { timeout: STEP_MS }, async () => {
      const path = `/relay/v1/auto/messages/${encodeURIComponent(longTopic)}`;
      assert.ok(path.length > 4096);
      const before404 = await node.rest.request('GET', path);
      assert.equal(before404.status, 404);
      assert.equal(before404.text, longTopic, 'nwaku answers the content topic');
      await node.rest.autoSubscribe([longTopic]);
      const pub = await node.rest.autoPublish({ payload: Buffer.from('long'), contentTopic: longTopic,
        timestamp: 1_712_345_678_901_234_567n });
      assert.equal(pub.status, 200, pub.text);
      const got = await node.rest.request('GET', path);
      assert.equal(got.status, 200, got.text.slice(0, 200));
      assert.equal(got.json.length, 1);
      assert.equal(got.json[0].contentTopic, longTopic);
      assert.equal(got.json[0].payload, Buffer.from('long').toString('base64'));
    });

    it(`a request head of ${MAX_HEAD} bytes is read; one byte more is answered 431 with a JSON error, closed`,
      { timeout: STEP_MS }, async () => {
        const port = Number(new URL(node.restUrl).port);
        const ok = parseHttp(await rawHttp(port, headOf(MAX_HEAD)));
        assert.equal(ok.status, 200);
        const big = parseHttp(await rawHttp(port, headOf(MAX_HEAD + 1)));
        assert.equal(big.status, 431);
        assert.equal(big.headers['content-type'], 'application/json');
        assert.equal(big.headers.connection, 'close');
        assert.match(JSON.parse(big.body).error, /Request head over 65536 bytes/);
      });
  });

describe('light push of a message the node has just received by relay', { skip: SKIP, timeout: SUITE_MS }, () => {
  let a;
  let b;
  let l1;
  let l2;

  before(async () => {
    a = await startServiceNode({ path: NODE, filter: false, store: false, clusterId: CLUSTER, shards: [SHARD] });
    b = await startServiceNode({ path: NODE, filter: false, store: false, clusterId: CLUSTER, shards: [SHARD],
      extraArgs: [`--staticnode=${a.addr}`] });
    // A's messages reach B once the two are relay peers.
    let n = 0;
    await eventually(async () => {
      n += 1;
      const probe = { payload: Buffer.from(`probe ${n}`), contentTopic: CT, timestamp: BigInt(Date.now()) * 1_000_000n };
      const r = await a.rest.publish(TOPIC, probe);
      assert.equal(r.status, 200, r.text);
      await delay(200);
      return (await b.rest.messages(TOPIC)).length > 0;
    }, { timeoutMs: 20_000, what: 'A and B relay peers' });
    l1 = await createLight({ transport: 'tcp', clusterId: CLUSTER, shard: SHARD });
    l2 = await createLight({ transport: 'tcp', clusterId: CLUSTER, shard: SHARD });
    await connectLight(l1, a, [Protocols.LightPush]);
    await connectLight(l2, b, [Protocols.LightPush]);
  });

  after(async () => {
    await Promise.all([l1, l2].filter(Boolean).map((p) => p.stop().catch(() => {})));
    await stopAll();
    await Promise.all([a?.stopped, b?.stopped]);
  });

  it('v3: pushed to A, then (once B has it by relay) the same message to B: both succeed; B counts A',
    { timeout: STEP_MS }, async () => {
      const msg = newMessage('to A then B');
      const first = await push(l1, msg);
      assert.deepEqual(first.result, { successes: [a.peerId], failures: [] });
      await b.waitHashLogged(first.hash);
      const second = await push(l2, msg);
      assert.equal(second.hash, first.hash, 'the same message');
      assert.deepEqual(second.result, { successes: [b.peerId], failures: [] });
      logged(second, /Message relayed to 1 peers/);
    });

  it('v2 (useLegacy): the same order, both succeed', { timeout: STEP_MS }, async () => {
    const msg = newMessage('to A then B, v2');
    const first = await push(l1, msg, { useLegacy: true });
    assert.deepEqual(first.result, { successes: [a.peerId], failures: [] });
    await b.waitHashLogged(first.hash);
    const second = await push(l2, msg, { useLegacy: true });
    assert.deepEqual(second.result, { successes: [b.peerId], failures: [] });
  });

  it('REST POST /lightpush/v3/message on B of a message B has just received by relay: 200, relayPeerCount 1',
    { timeout: STEP_MS }, async () => {
      const msg = newMessage('to A, then over B\'s REST');
      const first = await push(l1, msg);
      assert.deepEqual(first.result, { successes: [a.peerId], failures: [] });
      await b.waitHashLogged(first.hash);
      const body = `{"pubsubTopic":${JSON.stringify(TOPIC)},"message":${restMessageJson({
        payload: msg.payload, contentTopic: msg.contentTopic, meta: msg.meta,
        timestamp: BigInt(msg.timestamp.getTime()) * 1_000_000n })}}`;
      const r = await b.rest.request('POST', '/lightpush/v3/message', body);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json, { relayPeerCount: 1 });
    });

  it('both light nodes push the same message at once: both succeed, ten times over', { timeout: STEP_MS },
    async () => {
      for (let i = 0; i < 10; i += 1) {
        const msg = newMessage(`at once ${i}`);
        const [r1, r2] = await Promise.all([push(l1, msg), push(l2, msg)]);
        assert.equal(r1.hash, r2.hash);
        assert.deepEqual([r1.result, r2.result],
          [{ successes: [a.peerId], failures: [] }, { successes: [b.peerId], failures: [] }], `round ${i}`);
      }
    });
});

describe('metadata: a js-waku node of another cluster reads ours before the disconnect',
  { skip: SKIP, timeout: SUITE_MS }, () => {
    let node;
    let light;

    before(async () => {
      node = await startRelayNode({ path: NODE, clusterId: CLUSTER, shards: [SHARD] });
      light = await createLight({ transport: 'tcp', clusterId: 99, shard: SHARD });
    });

    after(async () => {
      await light?.stop().catch(() => {});
      await stopAll();
    });

    it('the node rejects cluster 99, answers its metadata request with cluster 42, then disconnects',
      { timeout: STEP_MS }, async () => {
        await light.libp2p.dial(multiaddr(node.addr)); // waku.dial would also open a light push stream
        await node.waitPeerLine(light.peerId, /CLUSTER_MISMATCH/);
        const metadata = light.waku.libp2p.services.metadata;
        const r = await withTimeout(metadata.query(peerIdFromString(node.peerId)), 10_000, 'metadata query');
        assert.equal(r.error, null);
        assert.equal(r.shardInfo.clusterId, CLUSTER);
        assert.deepEqual(r.shardInfo.shards, [SHARD]);
        await eventually(() => !light.isConnected(node.peerId), { what: 'the disconnect' });
      });
  });
