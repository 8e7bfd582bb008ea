// Library interop: one liblogosdelivery context (ld_libnode, which drives the shared library
// through the public C API only) in Core mode is the service node of js-waku light nodes
// (@waku/sdk 0.0.36 createLightNode, mplex, Noise), as nwaku is:
//
//  - a light node light-pushes on a content topic the context subscribed (logosdelivery_subscribe):
//    the context reports one message_received event with the same payload, content topic, meta
//    and timestamp, and the messageHash that @waku/message-hash and the nwaku rule compute; a
//    message on the same shard but another content topic is not reported;
//  - a light node subscribed through filter at the context receives what the context sends
//    (logosdelivery_send): the send answers a request ID, then message_propagated carries that ID
//    and the hash of what the light node got, pushed by the context on the connection the light
//    node opened;
//  - a js-waku relay peer in the context's mesh (it gives light push somewhere to relay to) gets
//    the same messages, and its own message reaches the context as message_received;
//  - QUIT: stop_node and destroy answer OK, no event callback reported an error, exit status 0.
//
// The content topic is autosharded (cluster 42, 8 shards). Every describe block runs over TCP
// (`libp2p.transports = [tcp()]`) and over /ws (the sdk's WebSocket transport, plain ws allowed
// as under NODE_ENV=test); the /ws block is skipped, saying why, when the context announces no
// /ws address with websocketSupport. Skipped when LD_LIBNODE is unset.
import './lib/node20-compat.mjs';

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';

import { stopAll } from './lib/cpeer.mjs';
import { MUXER_PROTOCOLS, withTimeout } from './lib/jspeer.mjs';
import { LIBNODE, LibNode } from './lib/libnode.mjs';
import { FILTER_SUBSCRIBE_CODEC, LIGHTPUSH_CODEC, Protocols, createLight } from './lib/lightnode.mjs';
import { autoShard, createRelayPeer, nwakuHash, shardTopic, wakuHash } from './lib/wakupeer.mjs';

const LIB_SKIP = LIBNODE ? false : 'ld_libnode is not built (set LD_LIBNODE)';

const CLUSTER = 42;
const NUM_SHARDS = 8;
const CT = '/ld-lib/1/interop/proto';
const SHARD = autoShard(CT, NUM_SHARDS);
const TOPIC = shardTopic(CLUSTER, SHARD);
const STEP_MS = 30_000;
const SUITE_MS = 180_000;
const EXIT_MS = 20_000;
const REQUEST_ID_RE = /^[0-9a-f]{20}$/;

/** Another generation-0 content topic on the same autoshard as CT. */
function sameShardTopic() {
  for (let i = 0; ; i += 1) {
    const t = `/ld-lib/1/other-${i}/proto`;
    if (autoShard(t, NUM_SHARDS) === SHARD) return t;
  }
}
const CT_OTHER = sameShardTopic();

/** The create_node configuration: a Core-mode service node for js-waku (flat, legacy shape). */
function libConfig({ websocket = false } = {}) {
  return {
    mode: 'Core',
    listenAddress: '127.0.0.1',
    tcpPort: 0,
    clusterId: CLUSTER,
    numShardsInNetwork: NUM_SHARDS,
    relay: true,
    lightpush: true,
    filter: true,
    store: false,
    discv5Discovery: false,
    websocketSupport: websocket,
    websocketPort: 0,
    logLevel: 'WARN',
  };
}

/** Resolves with false when the context announces a /ws address with websocketSupport, else the reason. */
async function probeWebSocket() {
  if (LIB_SKIP) return LIB_SKIP;
  let node;
  try {
    node = await LibNode.start(libConfig({ websocket: true }));
    return node.wsAddr != null ? false
      : `the context announced no /ws address with websocketSupport (MyMultiaddresses: ${node.addrs.join(',')})`;
  } catch (err) {
    return `the context did not start with websocketSupport: ${err.message.split('\n')[0]}`;
  } finally {
    await node?.quit().catch(() => {});
    await node?.proc.stop();
  }
}

const WS_SKIP = LIB_SKIP || await probeWebSocket();
const TRANSPORTS = [
  { name: 'tcp', skip: LIB_SKIP },
  { name: 'ws', skip: WS_SKIP },
];

// ---------------------------------------------------------------------------------------------

let counter = 0;

function newMessage(contentTopic, label) {
  counter += 1;
  return {
    contentTopic,
    payload: Buffer.concat([Buffer.from(`${label} #${counter} `), randomBytes(32)]),
    meta: Buffer.from(`meta-${counter}`),
    timestamp: new Date(),
  };
}

const hex = (b) => (b == null ? '' : Buffer.from(b).toString('hex'));
const bytesOf = (ints) => Buffer.from(ints ?? []);

/** message_received (the library's form: byte fields as integer arrays) against what js sent. */
function assertReceived({ event, timestamp }, sent, where) {
  const m = event.message;
  assert.equal(hex(bytesOf(m.payload)), hex(sent.payload), `${where}: payload`);
  assert.equal(m.contentTopic, sent.contentTopic, `${where}: content topic`);
  assert.equal(hex(bytesOf(m.meta)), hex(sent.meta), `${where}: meta`);
  assert.equal(timestamp, BigInt(sent.timestamp), `${where}: timestamp (ns)`);
  assert.equal(m.version, 0, `${where}: version`);
  assert.equal(m.ephemeral, false, `${where}: ephemeral`);
}

/** The first message of a filter collector matching `pred`, now or later. */
function waitCollected(collector, pred, timeoutMs, what) {
  const found = collector.messages.find(pred);
  if (found != null) return Promise.resolve(found);
  let w;
  const p = new Promise((resolve) => {
    w = { pred, resolve };
    collector.waiters.add(w);
  });
  return withTimeout(p, timeoutMs, what).finally(() => collector.waiters.delete(w));
}

const isReceived = (hash) => (e) => e.eventType === 'message_received' && e.messageHash === `0x${hash}`;

function suite(transport) {
  describe(`${transport.name}: a library context (Core mode) serves js-waku light nodes (${CT} → ${TOPIC})`,
    { skip: transport.skip, timeout: SUITE_MS }, () => {
      let node;
      let target;
      let sender;
      let receiver;
      let relay;
      let collector;

      before(async () => {
        node = await LibNode.start(libConfig({ websocket: transport.name === 'ws' }));
        target = transport.name === 'ws' ? node.wsAddr : node.addr;
        const net = { transport: transport.name, clusterId: CLUSTER, numShardsInCluster: NUM_SHARDS };
        sender = await createLight(net);
        receiver = await createLight(net);
        relay = await createRelayPeer({ listen: false, clusterId: CLUSTER, numShardsInCluster: NUM_SHARDS,
          contentTopics: [CT] });
      });

      after(async () => {
        await Promise.all([sender, receiver, relay].filter(Boolean).map((p) => p.stop().catch(() => {})));
        await stopAll();
      });

      it('the context subscribes; a js-waku relay peer meshes with it; light nodes connect (Noise, mplex) and '
        + 'find light push v3 and filter in its identify', { timeout: STEP_MS }, async () => {
        assert.ok(target, `no ${transport.name} address in ${node.addrs}`);
        assert.equal(target.split('/p2p/').pop(), node.peerId);
        const sub = await node.commandOk(`SUBSCRIBE ${CT}`);
        assert.equal(sub.text, '');
        await relay.dial(node.addr);
        await relay.waitMesh(node.peerId, TOPIC);
        for (const light of [sender, receiver]) {
          const conn = await light.dial(target);
          assert.equal(conn.encryption, '/noise');
          assert.equal(conn.multiplexer, MUXER_PROTOCOLS.mplex);
          assert.equal(conn.remoteAddr.toString().includes('/ws'), transport.name === 'ws', `${conn.remoteAddr}`);
        }
        await sender.waitForPeers([Protocols.LightPush], { timeoutMs: STEP_MS - 5_000 });
        await receiver.waitForPeers([Protocols.Filter], { timeoutMs: STEP_MS - 5_000 });
        const protocols = await sender.remoteProtocols(node.peerId);
        for (const codec of [LIGHTPUSH_CODEC, FILTER_SUBSCRIBE_CODEC]) {
          assert.ok(protocols.includes(codec), `identify lacks ${codec}: ${protocols}`);
        }
        await node.waitEvent((e) => e.eventType === 'connection_change' && e.peerId === sender.peerId,
          'connection_change for the sender');
      });

      it('light push → SUCCESS; the context reports message_received once, with the same bytes and hash; a '
        + 'message on an unsubscribed content topic of the same shard is not reported', { timeout: STEP_MS },
      async () => {
        const other = await sender.send(newMessage(CT_OTHER, 'not subscribed'));
        assert.deepEqual(other.result, { successes: [node.peerId], failures: [] });
        assert.equal(other.pubsubTopic, TOPIC);

        const sent = await sender.send(newMessage(CT, 'lightpush to the library'));
        assert.deepEqual(sent.result, { successes: [node.peerId], failures: [] });
        assert.equal(sent.pubsubTopic, TOPIC);
        assert.equal(nwakuHash(TOPIC, sent.message), sent.hash, 'message-hash and the nwaku rule disagree');

        const received = await node.waitEventLine(isReceived(sent.hash), `message_received 0x${sent.hash}`);
        assert.equal(Object.keys(received.event)[0], 'eventType');
        assertReceived(received, sent.message, 'message_received');
        const relayed = await relay.waitHash(sent.hash, { timeoutMs: 10_000 });
        assert.equal(relayed.coreHash, sent.hash, 'the relay peer got it from the context');

        // Both came over the same connection, in order: the first is never reported.
        assert.deepEqual(node.events((e) => e.eventType === 'message_received' && e.message?.contentTopic === CT_OTHER),
          [], 'a message on a content topic the context did not subscribe was reported');
        assert.equal(node.events(isReceived(other.hash)).length, 0);
        assert.equal(node.events(isReceived(sent.hash)).length, 1, 'message_received more than once');
      });

      it('a js-waku relay peer publishes: the context reports message_received with its hash', { timeout: STEP_MS },
        async () => {
          const r = await relay.publish({ ...newMessage(CT, 'relay to the library'),
            timestamp: BigInt(Date.now()) * 1_000_000n });
          assert.ok(r.recipients.includes(node.peerId), `relay publish went to ${r.recipients}`);
          const received = await node.waitEventLine(isReceived(r.hash), `message_received 0x${r.hash}`);
          assertReceived(received, r.message, 'message_received (relay)');
        });

      it('filter subscribe at the context; SEND → request ID, then message_propagated with the hash of what the '
        + 'light node got, pushed by the context', { timeout: STEP_MS }, async () => {
        collector = await receiver.subscribe([CT]);
        assert.equal(collector.ok, true, 'filter subscribe failed');
        const payload = Buffer.concat([Buffer.from('from the library '), randomBytes(32)]);
        const reply = await node.commandOk(`SEND ${CT} ${payload.toString('base64')}`);
        const requestId = reply.text;
        assert.match(requestId, REQUEST_ID_RE);

        const got = await waitCollected(collector, (m) => hex(m.payload) === hex(payload), 20_000,
          'the sent message through filter').catch((err) => {
          throw new Error(`${err.message}\n${node.describe()}`);
        });
        assert.equal(got.contentTopic, CT);
        assert.equal(got.pubsubTopic, TOPIC);
        assert.equal(got.version, 0);
        assert.equal(got.messageHash, got.hash, '@waku/message-hash and @waku/core agree');
        const pushes = receiver.pushes.filter((p) => p.hash === got.hash);
        assert.equal(pushes.length, 1, 'pushed once');
        assert.equal(pushes[0].from, node.peerId, 'pushed by the context over the connection the light node opened');
        assert.equal(pushes[0].pubsubTopic, TOPIC);

        const prop = await node.waitEventLine((e) => e.eventType === 'message_propagated' && e.requestId === requestId,
          `message_propagated ${requestId}`);
        assert.equal(prop.event.messageHash, `0x${got.hash}`, 'message_propagated names the pushed message');
        assert.ok(prop.index > reply.index, `message_propagated came before the send returned the request ID\n${node.describe()}`);
        assert.deepEqual(Object.keys(prop.event), ['eventType', 'requestId', 'messageHash']);
        const relayed = await relay.waitHash(got.hash, { timeoutMs: 10_000 });
        assert.equal(hex(relayed.message.payload), hex(payload), 'the relay peer got the same payload');
        assert.deepEqual(node.events((e) => e.requestId === requestId && e.eventType === 'message_error'), []);
      });

      it('QUIT: stop_node and destroy answer OK, no event callback reported an error, exit status 0',
        { timeout: EXIT_MS + 5_000 }, async () => {
          const { status, results } = await node.quitWithResults();
          assert.deepEqual(results.map((t) => t.split(' ')[0]), ['OK', 'OK'], results.join('\n'));
          assert.deepEqual(status, { code: 0, signal: null }, node.describe());
          assert.deepEqual(node.lines.filter((l) => l.text.startsWith('EVENTERR')).map((l) => l.text), []);
          assert.doesNotMatch(node.proc.stderr(), /AddressSanitizer|runtime error/);
        });
    });
}

for (const transport of TRANSPORTS) suite(transport);
