// Reliable channels against js-waku's own: @waku/sdk 0.0.36 `ReliableChannel` (over @waku/sds
// 0.0.8's MessageChannel) on a js-waku light node (createLightNode: light push + filter + store)
// and a C participant, one liblogosdelivery context (ld_libnode, the public C API:
// logosdelivery_channel_create / channel_send and the channel events) in Core mode, in one channel
// through our service node (`logosdelivery --relay --lightpush --filter --store`, cluster 42,
// autosharding over 8 shards), which the C participant reaches over relay (staticnodes):
//
//  - js → C: js's first message goes missing (its light push is swallowed, as by a lossy link),
//    the second arrives with the first in its causal history: C holds it back, delivers nothing
//    out of order, and once js's ReliableChannel sends the first again (its RetryManager resends
//    what is not acknowledged) C delivers both, in causal order (channel_message_received);
//  - C acknowledges js's messages: C's next message carries them in its causal history and
//    js-waku's `message-acknowledged` fires for each;
//  - C → js: js delivers C's messages (the SDS content unwrapped, as `message-received` and the
//    MessageChannel's causal delivery); one of C's messages is dropped on every filter push to js
//    (a test hook in js's receive path), the next carries it, with its Waku message hash as
//    retrieval hint, in its causal history: js-waku repairs it from our node's store (its
//    MissingMessageRetriever, a store query by message hash) and delivers both in order;
//  - js acknowledges C's messages (its sync messages carry them): C reports
//    channel_message_sent and channel_message_delivered for each of its messages;
//  - QUIT: stop and destroy answer OK, exit 0, no EVENTERR.
//
// js-waku's ReliableChannel never answers SDS-R repair requests (it never calls
// MessageChannel.sweepRepairIncomingBuffer), so a message js lost can only come back to C by js's
// retransmission (or a store fetch); a message C sent is repaired at js from the store.
// Skipped when LD_LIBNODE or LD_BIN is unset.
import './lib/node20-compat.mjs';

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { MessageChannelEvent, Message as SdsMessage } from '@waku/sds';
import { ReliableChannel } from '@waku/sdk';

import { nodePath, stopAll } from './lib/cpeer.mjs';
import { withTimeout } from './lib/jspeer.mjs';
import { LIBNODE, LibNode } from './lib/libnode.mjs';
import { Protocols, createLight, startServiceNode } from './lib/lightnode.mjs';

const NODE = nodePath();
const SKIP = !LIBNODE ? 'ld_libnode is not built (set LD_LIBNODE)' : !NODE ? 'logosdelivery is not built (set LD_BIN)' : false;

const CLUSTER = 42;
const NUM_SHARDS = 8;
const CT = '/ld-channels/1/interop/proto';
const CHANNEL = `interop-${randomBytes(4).toString('hex')}`;
const JS_SENDER = 'js-participant';
const C_SENDER = 'c-participant';
const STEP_MS = 60_000;
const SUITE_MS = 600_000;

const text = (bytes) => Buffer.from(bytes).toString('utf8');
const b64 = (s) => Buffer.from(s, 'utf8').toString('base64');

/** The C participant: Core mode, relay only, joined to the service node, its channel state in `stateDir`. */
function cConfig(serviceAddr, stateDir) {
  return {
    localStoragePath: stateDir,
    mode: 'Core',
    listenAddress: '127.0.0.1',
    tcpPort: 0,
    clusterId: CLUSTER,
    numShardsInNetwork: NUM_SHARDS,
    relay: true,
    lightpush: false,
    filter: false,
    store: false,
    discv5Discovery: false,
    staticnodes: [serviceAddr],
    logLevel: 'WARN',
  };
}

/** Resolves once `check()` is true (polled), or rejects after timeoutMs saying `what`. */
async function until(check, what, timeoutMs = STEP_MS) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * js-waku's ReliableChannel with the test hooks on the two paths it owns: `dropSend(content)`
 * swallows a light push (the send reports no failure, as when the message is lost on the way),
 * `dropPush(content)` drops a filter push before the channel sees it. Everything the channel
 * reports is recorded.
 */
class JsParticipant {
  static async create(light, hooks) {
    const encoder = light.encoder(CT);
    const decoder = light.decoder(CT);
    const channel = await ReliableChannel.create(light.waku, CHANNEL, JS_SENDER, encoder, decoder, {
      autoStart: false,
      syncMinIntervalMs: 2_000,
      retryIntervalMs: 3_000,
      maxRetryAttempts: 20,
      retrieveFrequencyMs: 1_000,
      sweepInBufIntervalMs: 500,
      processTaskMinElapseMs: 100,
    });
    const p = new JsParticipant(light, channel, decoder, hooks);
    assert.ok(await channel.start(), 'ReliableChannel.start (filter subscription)');
    return p;
  }

  constructor(light, channel, decoder, { dropSend, dropPush }) {
    this.light = light;
    this.channel = channel;
    this.decoder = decoder;
    this.received = []; // message-received: unwrapped content (text), in order
    this.delivered = []; // the MessageChannel's causal delivery: content (text), in order
    this.sent = new Set(); // message-sent: message IDs
    this.acked = new Set(); // message-acknowledged: message IDs
    this.droppedSends = [];
    this.droppedPushes = [];
    this.storeRetrieved = []; // content of what the MissingMessageRetriever brought back
    this.contentById = new Map();

    const send = channel._send;
    channel._send = async (enc, msg) => {
      const sds = SdsMessage.decode(msg.payload);
      if (sds?.content?.length && dropSend(text(sds.content))) {
        this.droppedSends.push(text(sds.content));
        return { successes: [], failures: [] };
      }
      return send(enc, msg);
    };
    channel._subscribe = (dec, callback) => light.waku.filter.subscribe(dec, async (msg) => {
      const sds = SdsMessage.decode(msg.payload);
      if (sds?.content?.length && dropPush(text(sds.content))) {
        this.droppedPushes.push(text(sds.content));
        return;
      }
      await callback(msg);
    });
    const retriever = channel.missingMessageRetriever;
    // Its timer calls retrieveMissingMessage() without handling a rejection: the queries in
    // flight are kept (stop() waits for them) and their errors recorded.
    this.retrievals = new Set();
    this.retrieveErrors = [];
    const retrieve = retriever.retrieveMissingMessage.bind(retriever);
    retriever.retrieveMissingMessage = () => {
      const run = retrieve().catch((err) => this.retrieveErrors.push(err));
      this.retrievals.add(run);
      return run.finally(() => this.retrievals.delete(run));
    };
    const onRetrieved = retriever.onMessageRetrieved;
    retriever.onMessageRetrieved = async (msg) => {
      const sds = SdsMessage.decode(msg.payload);
      if (sds?.content?.length) this.storeRetrieved.push(text(sds.content));
      return onRetrieved(msg);
    };

    channel.addEventListener('message-received', (e) => this.received.push(text(e.detail.payload)));
    channel.addEventListener('message-sent', (e) => this.sent.add(e.detail));
    channel.addEventListener('message-acknowledged', (e) => this.acked.add(e.detail));
    const mc = channel.messageChannel;
    mc.addEventListener(MessageChannelEvent.InMessageReceived, (e) => {
      if (e.detail.content?.length) this.contentById.set(e.detail.messageId, text(e.detail.content));
    });
    mc.addEventListener(MessageChannelEvent.InMessageDelivered, (e) => {
      this.delivered.push(this.contentById.get(e.detail));
    });
  }

  send(content) {
    return this.channel.send(Buffer.from(content, 'utf8'));
  }

  /**
   * ReliableChannel.stop() leaves its filter subscription (a TODO in the sdk), the RetryManager's
   * timers and a queued task timer running, any of which keeps the process alive: they go too.
   */
  async stop() {
    this.channel.stop();
    for (const timer of this.channel.retryManager?.timeouts.values() ?? []) clearTimeout(timer);
    clearTimeout(this.channel.processTaskTimeout);
    await this.light.waku.filter.unsubscribe([this.decoder]).catch(() => {});
    await Promise.all([...this.retrievals]);
  }
}

describe('reliable channel: js-waku ReliableChannel and the C library in one channel', { skip: SKIP, timeout: SUITE_MS },
  () => {
    let service;
    let light;
    let cnode;
    let js;
    let stateDir;
    const cRequests = new Map(); // content → C request ID

    const cReceived = () => cnode.events((e) => e.eventType === 'channel_message_received' && e.channelId === CHANNEL)
      .map((e) => ({ sender: e.senderId, content: Buffer.from(e.payload, 'base64').toString('utf8') }));
    const cEvent = (type, requestId) => cnode.waitEvent(
      (e) => e.eventType === type && e.requestId === requestId && e.channelId === CHANNEL,
      `${type} for ${requestId}`, { timeoutMs: STEP_MS });

    async function cSend(content) {
      const r = await cnode.commandOk(`CHANNEL_SEND ${CHANNEL} ${b64(content)}`);
      const id = r.text.trim();
      assert.match(id, /^[0-9a-f]{20}$/, `request ID of ${content}`);
      cRequests.set(content, id);
      return id;
    }

    before(async () => {
      service = await startServiceNode({ path: NODE, clusterId: CLUSTER, numShardsInNetwork: NUM_SHARDS,
        logLevel: 'INFO' });
      stateDir = mkdtempSync(join(tmpdir(), 'ld-rc-'));
      cnode = await LibNode.start(cConfig(service.addr, stateDir));
      await cnode.commandOk(`CHANNEL_CREATE ${CHANNEL} ${CT} ${C_SENDER}`);
      light = await createLight({ transport: 'tcp', clusterId: CLUSTER, numShardsInCluster: NUM_SHARDS });
      await light.dial(service.addr);
      await light.waitForPeers([Protocols.LightPush, Protocols.Filter, Protocols.Store]);
      // Light push succeeds once the service node has the C participant in its mesh for the
      // shard. The probe is no SDS message: the C channel must ignore it.
      await until(async () => {
        const r = await light.send({ contentTopic: CT, payload: Buffer.from('not an SDS message') });
        return r.result.successes.length > 0;
      }, 'a light push relayed to the C participant');
      js = await JsParticipant.create(light, {
        dropSend: (content) => content === 'js-1' && !js?.droppedSends.includes('js-1'),
        dropPush: (content) => content === 'c-2',
      });
    });

    after(async () => {
      await js?.stop();
      await light?.stop().catch(() => {});
      await cnode?.quit().catch(() => {});
      await stopAll();
      await service?.stopped;
      if (stateDir) rmSync(stateDir, { recursive: true, force: true });
    });

    it('js → C: the message js lost is sent again, and C delivers both in causal order', async () => {
      const j1 = js.send('js-1');
      await until(() => js.droppedSends.includes('js-1'), 'js-1 to be dropped');
      const j2 = js.send('js-2');
      assert.equal(j1, ReliableChannel.getMessageId(Buffer.from('js-1')));
      await until(() => cReceived().length >= 2, 'C to deliver js-1 and js-2');
      assert.deepEqual(cReceived(), [{ sender: JS_SENDER, content: 'js-1' }, { sender: JS_SENDER, content: 'js-2' }],
        'C delivers js-1 before js-2, each once');
      assert.ok(js.sent.has(j1) && js.sent.has(j2), 'js-waku message-sent for both');
      assert.deepEqual(js.droppedSends, ['js-1'], 'only the first send of js-1 went missing');
    });

    it('C → js: js delivers C\'s message, and C\'s message acknowledges js\'s (message-acknowledged)', async () => {
      const id = await cSend('c-1');
      await cEvent('channel_message_sent', id);
      await until(() => js.received.includes('c-1'), 'js to receive c-1');
      await until(() => js.acked.has(ReliableChannel.getMessageId(Buffer.from('js-1')))
        && js.acked.has(ReliableChannel.getMessageId(Buffer.from('js-2'))), 'js-waku to see js-1 and js-2 acknowledged');
    });

    it('C → js: a message dropped on every filter push to js is repaired from the store, in causal order',
      async () => {
        const id2 = await cSend('c-2');
        await cEvent('channel_message_sent', id2); // its Waku hash is now c-3's retrieval hint
        const id3 = await cSend('c-3');
        await cEvent('channel_message_sent', id3);
        await until(() => js.delivered.includes('c-2') && js.delivered.includes('c-3'),
          'js to deliver c-2 and c-3');
        assert.ok(js.droppedPushes.includes('c-2'), 'the filter push of c-2 was dropped');
        assert.ok(!js.droppedPushes.some((c) => c !== 'c-2'), 'nothing else was dropped');
        assert.ok(js.storeRetrieved.includes('c-2'), 'js-waku got c-2 back from the store');
        assert.deepEqual(js.delivered, ['c-1', 'c-2', 'c-3'], 'js delivers C\'s messages in causal order, each once');
        assert.deepEqual(js.retrieveErrors, [], 'js-waku\'s store queries by hash succeeded');
      });

    it('js acknowledges C\'s messages: channel_message_sent and channel_message_delivered for each', async () => {
      for (const [content, id] of cRequests) {
        await withTimeout(cEvent('channel_message_delivered', id), STEP_MS, `delivered ${content}`);
      }
      for (const id of cRequests.values()) {
        assert.equal(cnode.events((e) => e.eventType === 'channel_message_sent' && e.requestId === id).length, 1);
        assert.equal(cnode.events((e) => e.eventType === 'channel_message_delivered' && e.requestId === id).length, 1);
        assert.equal(cnode.events((e) => /error/.test(e.eventType) && e.requestId === id).length, 0);
      }
      assert.deepEqual(cReceived().map((m) => m.content), ['js-1', 'js-2'], 'C delivered nothing more');
    });

    it('QUIT: stop and destroy answer OK, exit 0, no event error', async () => {
      const status = await cnode.quit();
      assert.equal(status.code, 0, cnode.describe());
      assert.ok(!cnode.lines.some((l) => l.text.startsWith('EVENTERR')), cnode.describe());
    });
  });
