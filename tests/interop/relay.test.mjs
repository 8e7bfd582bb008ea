// Relay interop: a js-waku relay node (@waku/relay over TCP, mplex, as js-waku builds it) and a
// plain js-libp2p gossipsub peer (StrictNoSign, message ID = sha256(data), on
// /vac/waku/relay/2.0.0 and on the meshsub IDs) exchange WakuMessages with the relay node in
// both directions, on a static shard and on an autoshard. The node publishes and is read through
// nwaku's REST API; the deterministic hashes js computes (@waku/message-hash, @waku/core) must
// equal the ones the node logs and those of the messages REST returns; a peer of another
// cluster is disconnected and its messages never delivered.
//
// Every suite runs against `logosdelivery` ($LD_BIN; skipped only when LD_BIN is unset) and
// against lib/relaynode-cli.mjs, a js stand-in with the same command line, REST and log lines,
// which checks the js side and the harness on their own.
import './lib/node20-compat.mjs';

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';

import { missing, nodePath, stopAll } from './lib/cpeer.mjs';
import { MUXER_PROTOCOLS } from './lib/jspeer.mjs';
import { startRelayNode } from './lib/relaynode.mjs';
import {
  MESHSUB_CODECS, RELAY_CODEC, autoShard, autoTopic, createGossipPeer, createRelayPeer, nowNs,
  nwakuHash, shardTopic, wakuHash,
} from './lib/wakupeer.mjs';

const NODE = nodePath();
const JS_STANDIN = [process.execPath, fileURLToPath(new URL('./lib/relaynode-cli.mjs', import.meta.url))];
const TARGETS = [
  { name: 'logosdelivery', path: NODE, skip: missing('logosdelivery', NODE) },
  { name: 'js stand-in', path: JS_STANDIN, skip: false },
];

const CLUSTER = 42;
const OTHER_CLUSTER = 99;
const SHARD = 3;
const NUM_SHARDS = 8;
const CONTENT_TOPIC = '/ld/1/relay-interop/proto';
// Autosharding vector of the digest: over 8 shards this content topic lands on shard 6.
const AUTO_CONTENT_TOPIC = '/app/29/sometopic/someencoding';
const AUTO_SHARD = 6;
const NODEKEY = '7b1c3e5a9d2f4068a1b3c5d7e9f10234a6b8cadcef0123456789abcdef012345';
const STEP_MS = 30_000;
const SUITE_MS = 240_000;

let counter = 0;

/** A fresh message: unique payload, a timestamp in whole ms (js-waku's resolution), some meta. */
function newMessage(contentTopic, label) {
  counter += 1;
  return {
    payload: Buffer.concat([Buffer.from(`${label} #${counter} `), randomBytes(48)]),
    contentTopic,
    timestamp: nowNs() + BigInt(counter) * 1_000_000n,
    meta: Buffer.from(`meta-${counter}`),
  };
}

const hex = (b) => (b == null ? '' : Buffer.from(b).toString('hex'));

/** Asserts the fields a WakuMessage hash covers are the ones sent. */
function assertSameMessage(got, sent, where) {
  assert.equal(hex(got.payload), hex(sent.payload), `${where}: payload`);
  assert.equal(got.contentTopic, sent.contentTopic, `${where}: content topic`);
  assert.equal(BigInt(got.timestamp ?? 0n), BigInt(sent.timestamp), `${where}: timestamp`);
  assert.equal(hex(got.meta), hex(sent.meta), `${where}: meta`);
}

/** Hash of `msg` on `pubsubTopic` by both rules (equal for a non-zero timestamp). */
function expectedHash(pubsubTopic, msg) {
  const h = wakuHash(pubsubTopic, msg);
  assert.equal(nwakuHash(pubsubTopic, msg), h, 'message-hash and the nwaku rule disagree');
  return h;
}

async function restPublish(node, kind, pubsubTopic, msg) {
  const r = kind === 'auto' ? await node.rest.autoPublish(msg) : await node.rest.publish(pubsubTopic, msg);
  assert.equal(r.status, 200, `REST publish answered ${r.status}: ${r.text}\n${node.describe()}`);
}

/**
 * The checks of one sharding mode. `net`: {kind: 'static'|'auto', topic (pubsub), contentTopic,
 * nodeOpts (startRelayNode), wakuOpts (createRelayPeer)}.
 */
function relaySuite(target, net) {
  describe(`${target.name}: relay on ${net.kind === 'auto' ? 'an autoshard' : 'a static shard'} (${net.topic})`,
    { skip: target.skip, timeout: SUITE_MS }, () => {
      let node;
      let waku;
      let plain;
      let meshsub;
      const published = []; // hashes the node must have returned over REST exactly once

      const restWait = (hash, what) => node.rest.waitMessage(net.kind === 'auto' ? 'auto' : 'pubsub',
        net.kind === 'auto' ? net.contentTopic : net.topic,
        (m) => wakuHash(net.topic, m) === hash, { timeoutMs: STEP_MS, what });

      before(async () => {
        node = await startRelayNode({ path: target.path, nodekey: NODEKEY, ...net.nodeOpts });
        if (net.kind === 'auto') await node.rest.autoSubscribe([net.contentTopic]);
        waku = await createRelayPeer({ listen: false, contentTopics: [net.contentTopic], ...net.wakuOpts });
        plain = await createGossipPeer({ listen: false, topics: [net.topic], metadata: { clusterId: CLUSTER, shards: [net.shard] } });
      });

      after(async () => {
        await Promise.all([waku, plain, meshsub].filter(Boolean).map((p) => p.stop().catch(() => {})));
        await stopAll();
      });

      it('a js-waku relay node (mplex) and a plain gossipsub peer (yamux) join the node\'s mesh', { timeout: STEP_MS }, async () => {
        const conn = await waku.dial(node.addr);
        assert.equal(conn.multiplexer, MUXER_PROTOCOLS.mplex);
        const pconn = await plain.dial(node.addr);
        assert.equal(pconn.multiplexer, MUXER_PROTOCOLS.yamux);
        assert.equal(waku.pubsubTopics[0], net.topic);
        await Promise.all([waku.waitMesh(node.peerId, net.topic), plain.waitMesh(node.peerId, net.topic)]);
        const streams = conn.streams.map((s) => s.protocol);
        assert.ok(streams.includes(RELAY_CODEC), `js-waku's streams: ${streams}`);
        assert.ok(pconn.streams.some((s) => s.protocol === RELAY_CODEC), 'plain peer not on the relay codec');
      });

      it('js-waku → node: REST returns the message, the node logs its hash and relays it on to the plain peer',
        { timeout: STEP_MS }, async () => {
          const sent = await waku.publish(newMessage(net.contentTopic, 'js-waku to node'));
          assert.equal(sent.pubsubTopic, net.topic);
          assert.deepEqual(sent.recipients, [node.peerId]);
          const hash = expectedHash(net.topic, sent.message);
          assert.equal(sent.hash, hash);
          const got = await restWait(hash, 'the js-waku message');
          assertSameMessage(got, sent.message, 'REST');
          published.push(hash);
          await node.waitHashLogged(hash);
          const relayed = await plain.waitHash(hash, { timeoutMs: STEP_MS });
          assert.equal(relayed.from, node.peerId);
          assert.equal(relayed.signed, false, 'StrictNoSign: the node must not sign what it relays');
          assert.equal(hex(relayed.raw), hex(sent.wire), 'the node must forward the data unchanged');
        });

      it('node (REST) → js-waku: delivered through @waku/relay with the same hash', { timeout: STEP_MS }, async () => {
        const msg = newMessage(net.contentTopic, 'node to js-waku');
        const hash = expectedHash(net.topic, msg);
        await restPublish(node, net.kind, net.topic, msg);
        const got = await waku.waitHash(hash, { timeoutMs: STEP_MS });
        assertSameMessage(got.message, msg, 'js-waku');
        assert.equal(got.pubsubTopic, net.topic);
        assert.equal(got.coreHash, hash, '@waku/core and @waku/message-hash disagree');
        assert.equal(got.message.version, 0);
        await node.waitHashLogged(hash);
        published.push(hash);
      });

      it('plain gossipsub → node: raw WakuMessage bytes, REST returns them, hashes match', { timeout: STEP_MS }, async () => {
        const sent = await plain.publish(net.topic, newMessage(net.contentTopic, 'gossipsub to node'));
        assert.ok(sent.recipients.includes(node.peerId), `sent to ${sent.recipients}`);
        const hash = expectedHash(net.topic, sent.message);
        const got = await restWait(hash, 'the gossipsub message');
        assertSameMessage(got, sent.message, 'REST');
        await node.waitHashLogged(hash);
        published.push(hash);
        const relayed = await waku.waitHash(hash, { timeoutMs: STEP_MS });
        assert.equal(relayed.coreHash, hash);
      });

      it('node (REST) → plain gossipsub: unsigned, decodable, same hash', { timeout: STEP_MS }, async () => {
        const msg = newMessage(net.contentTopic, 'node to gossipsub');
        const hash = expectedHash(net.topic, msg);
        await restPublish(node, net.kind, net.topic, msg);
        const got = await plain.waitHash(hash, { timeoutMs: STEP_MS });
        assert.equal(got.from, node.peerId);
        assert.equal(got.signed, false);
        assert.equal(got.pubsubTopic, net.topic);
        assertSameMessage(got.message, msg, 'gossipsub');
        await node.waitHashLogged(hash);
        published.push(hash);
      });

      it('a plain gossipsub peer offering only the meshsub IDs exchanges messages both ways', { timeout: STEP_MS }, async () => {
        meshsub = await createGossipPeer({ listen: false, topics: [net.topic], protocols: MESHSUB_CODECS,
          metadata: { clusterId: CLUSTER, shards: [net.shard] } });
        const conn = await meshsub.dial(node.addr);
        await meshsub.waitMesh(node.peerId, net.topic);
        const proto = conn.streams.find((s) => MESHSUB_CODECS.includes(s.protocol))?.protocol;
        assert.ok(proto, `no meshsub stream: ${conn.streams.map((s) => s.protocol)}`);
        const sent = await meshsub.publish(net.topic, newMessage(net.contentTopic, `${proto} to node`));
        const hash = expectedHash(net.topic, sent.message);
        assertSameMessage(await restWait(hash, 'the meshsub message'), sent.message, 'REST');
        published.push(hash);
        const msg = newMessage(net.contentTopic, `node to ${proto}`);
        await restPublish(node, net.kind, net.topic, msg);
        const got = await meshsub.waitHash(expectedHash(net.topic, msg), { timeoutMs: STEP_MS });
        assertSameMessage(got.message, msg, 'meshsub');
      });

      it('REST returned each message received from js exactly once', { timeout: STEP_MS }, async () => {
        const path = net.kind === 'auto'
          ? `/relay/v1/auto/messages/${encodeURIComponent(net.contentTopic)}`
          : `/relay/v1/messages/${encodeURIComponent(net.topic)}`;
        await node.rest.fetchMessages(path);
        const seen = (node.rest.inbox.get(path) ?? []).map((m) => wakuHash(net.topic, m));
        for (const h of published.filter((x) => seen.includes(x))) {
          assert.equal(seen.filter((x) => x === h).length, 1, `message ${h} returned ${seen.filter((x) => x === h).length} times`);
        }
        assert.ok(waku.isConnected(node.peerId) && plain.isConnected(node.peerId), 'the node dropped a js peer');
      });
    });
}

function otherClusterSuite(target) {
  describe(`${target.name}: a js-waku relay node of another cluster`, { skip: target.skip, timeout: SUITE_MS }, () => {
    const topic = shardTopic(CLUSTER, SHARD);
    let node;
    let good;
    let bad;

    before(async () => {
      node = await startRelayNode({ path: target.path, nodekey: NODEKEY, clusterId: CLUSTER, shards: [SHARD] });
      good = await createGossipPeer({ listen: false, topics: [topic], metadata: { clusterId: CLUSTER, shards: [SHARD] } });
      bad = await createRelayPeer({ listen: false, clusterId: OTHER_CLUSTER, shard: SHARD, contentTopics: [CONTENT_TOPIC],
        publishToZeroPeers: true });
    });

    after(async () => {
      await Promise.all([good, bad].filter(Boolean).map((p) => p.stop().catch(() => {})));
      await stopAll();
    });

    it('is disconnected by the node, its message is not delivered, and relaying goes on', { timeout: 60_000 }, async () => {
      await good.dial(node.addr);
      await good.waitMesh(node.peerId, topic);
      const conn = await bad.dial(node.addr);
      assert.equal(conn.remotePeer.toString(), node.peerId);
      const badSent = await bad.publish(newMessage(CONTENT_TOPIC, 'other cluster'));
      assert.equal(badSent.pubsubTopic, shardTopic(OTHER_CLUSTER, SHARD));
      await bad.waitDisconnected(node.peerId, { timeoutMs: STEP_MS });
      assert.equal(conn.status, 'closed');
      const control = await good.publish(topic, newMessage(CONTENT_TOPIC, 'control'));
      await node.rest.waitMessage('pubsub', topic, (m) => wakuHash(topic, m) === control.hash,
        { timeoutMs: STEP_MS, what: 'the control message' });
      const inbox = node.rest.inbox.get(`/relay/v1/messages/${encodeURIComponent(topic)}`) ?? [];
      assert.ok(!inbox.some((m) => hex(m.payload) === hex(badSent.message.payload)), 'the other cluster\'s message was delivered');
      for (const h of [badSent.hash, wakuHash(topic, badSent.message)]) {
        assert.deepEqual(node.linesWithHash(h).map((l) => l.text), [], 'the node logged the other cluster\'s message');
      }
      assert.ok(good.isConnected(node.peerId), 'the node dropped the peer of its own cluster');
      assert.ok(!bad.isConnected(node.peerId));
    });
  });
}

for (const target of TARGETS) {
  relaySuite(target, {
    kind: 'static',
    shard: SHARD,
    topic: shardTopic(CLUSTER, SHARD),
    contentTopic: CONTENT_TOPIC,
    nodeOpts: { clusterId: CLUSTER, shards: [SHARD] },
    wakuOpts: { clusterId: CLUSTER, shard: SHARD },
  });
  relaySuite(target, {
    kind: 'auto',
    shard: AUTO_SHARD,
    topic: shardTopic(CLUSTER, AUTO_SHARD),
    contentTopic: AUTO_CONTENT_TOPIC,
    nodeOpts: { clusterId: CLUSTER, numShardsInNetwork: NUM_SHARDS, shards: [AUTO_SHARD] },
    wakuOpts: { clusterId: CLUSTER, numShardsInCluster: NUM_SHARDS },
  });
  otherClusterSuite(target);
}

describe('js libraries against the digest vectors', () => {
  const payload = Buffer.from('010203045445535405060708', 'hex');
  const contentTopic = '/waku/2/default-content/proto';
  const timestamp = 0x175789bfa23f8400n;
  const meta12 = Buffer.from('super-secret');

  it('deterministic hashes', () => {
    const rs00 = '/waku/2/rs/0/0';
    assert.equal(wakuHash(rs00, { payload, contentTopic, timestamp, meta: meta12 }),
      'b9b4852f9d8c489846e8bfc6c5ca6a1a8d460a40d28832a966e029eb39619199');
    assert.equal(nwakuHash(rs00, { payload: new Uint8Array(), contentTopic, timestamp, meta: meta12 }),
      '0f6448cc23b2db6c696aa6ab4b693eff4cf3549ff346fe1dbeb281697396a09f');
    const legacy = '/waku/2/default-waku/proto';
    // js-waku omits a zero timestamp, nwaku hashes 8 zero bytes.
    assert.equal(wakuHash(legacy, { payload: new Uint8Array(), contentTopic, meta: meta12 }),
      'e1a9596237dbe2cc8aaf4b838c46a7052df6bc0d42ba214b998a8bfdbe8487d6');
    assert.equal(nwakuHash(legacy, { payload: new Uint8Array(), contentTopic, meta: meta12 }),
      '58e2fc032a82c4adeb967a8b87086d0d6fb304912f120d4404e6236add8f1f56');
  });

  it('autosharding', () => {
    assert.equal(autoShard(AUTO_CONTENT_TOPIC, NUM_SHARDS), AUTO_SHARD);
    assert.equal(autoShard('/toychat/2/huilong/proto', 8), 3);
    assert.equal(autoShard('/app/20/sometopic/someencoding', 16), 15);
    assert.equal(autoTopic('/toychat/2/huilong/proto', 1, 8), '/waku/2/rs/1/3');
  });
});

describe('js-waku relay ↔ plain gossipsub, js only', { timeout: 60_000 }, () => {
  const peers = [];
  after(() => Promise.all(peers.map((p) => p.stop().catch(() => {}))));

  it('exchange both ways with equal hashes; another cluster\'s topic gets nothing', async () => {
    const topic = autoTopic(AUTO_CONTENT_TOPIC, CLUSTER, NUM_SHARDS);
    const waku = await createRelayPeer({ clusterId: CLUSTER, numShardsInCluster: NUM_SHARDS, contentTopics: [AUTO_CONTENT_TOPIC] });
    const plain = await createGossipPeer({ listen: false, topics: [topic] });
    const other = await createRelayPeer({ listen: false, clusterId: OTHER_CLUSTER, numShardsInCluster: NUM_SHARDS,
      contentTopics: [AUTO_CONTENT_TOPIC], publishToZeroPeers: true });
    peers.push(waku, plain, other);
    await plain.dial(waku.addr);
    await other.dial(waku.addr);
    await Promise.all([plain.waitMesh(waku.peerId, topic), waku.waitMesh(plain.peerId, topic)]);
    const a = await waku.publish(newMessage(AUTO_CONTENT_TOPIC, 'waku to plain'));
    assert.equal((await plain.waitHash(a.hash)).hash, expectedHash(topic, a.message));
    const b = await plain.publish(topic, newMessage(AUTO_CONTENT_TOPIC, 'plain to waku'));
    assert.equal((await waku.waitHash(b.hash)).coreHash, b.hash);
    const c = await other.publish(newMessage(AUTO_CONTENT_TOPIC, 'other cluster'));
    assert.equal(c.pubsubTopic, autoTopic(AUTO_CONTENT_TOPIC, OTHER_CLUSTER, NUM_SHARDS));
    assert.deepEqual(c.recipients, []);
    const d = await plain.publish(topic, newMessage(AUTO_CONTENT_TOPIC, 'after'));
    await waku.waitHash(d.hash);
    assert.ok(!waku.received.some((m) => hex(m.message.payload) === hex(c.message.payload)));
  });
});
