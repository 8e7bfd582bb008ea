// discv5 between `logosdelivery discv5` and @chainsafe/discv5 11.0.0 on 127.0.0.1 UDP. Both use
// the Ethereum protocol-id "discv5" (@chainsafe/discv5 has no other; Waku networks use "d5waku").
// Our node joins through a js bootstrap node and finds the js node only that one knows (js answers
// our FINDNODE, we start the handshakes); a js node that knows only the bootstrap node finds ours
// (the bootstrap node learnt our record from our handshake); a js node that knows only ours gets
// our record, the js nodes we have seen, a PONG with its address and an empty TALKRESP (we answer,
// it starts the handshake), we learn it from its handshake, and its own lookups find the js nodes
// through ours.
import './lib/node20-compat.mjs';

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { Discv5 } from '@chainsafe/discv5';
import { ENR, SignableENR } from '@chainsafe/enr';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { multiaddr } from '@multiformats/multiaddr';

import { Proc, missing, nodePath, stopAll } from './lib/cpeer.mjs';
import { freeUdpPort } from './lib/net.mjs';

const NODE = nodePath();
const SKIP = missing('logosdelivery', NODE);
const STEP_MS = 30_000;

async function createJsNode() {
  const privateKey = await generateKeyPair('secp256k1');
  const port = await freeUdpPort();
  const enr = SignableENR.createFromPrivateKey(privateKey);
  enr.ip = '127.0.0.1';
  enr.udp = port;
  const discv5 = Discv5.create({
    enr,
    privateKey,
    bindAddrs: { ip4: multiaddr(`/ip4/127.0.0.1/udp/${port}`) },
    config: { enrUpdate: false, requestTimeout: 5_000, lookupTimeout: 20_000 },
  });
  const discovered = new Map();
  const waiters = [];
  discv5.on('discovered', (found) => {
    discovered.set(found.nodeId, found);
    for (const w of waiters.splice(0)) w();
  });
  await discv5.start();
  return {
    discv5,
    port,
    nodeId: enr.nodeId,
    enr: enr.toENR(),
    text: enr.encodeTxt(),
    discovered,
    /** Runs random lookups until `nodeId` was discovered. */
    async lookFor(nodeId, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (!discovered.has(nodeId) && Date.now() < deadline) {
        await discv5.findRandomNode().catch(() => []);
        if (!discovered.has(nodeId)) await new Promise((r) => setTimeout(r, 200));
      }
      return discovered.get(nodeId);
    },
  };
}

/** logdistance of two hex node IDs. */
function logDistance(a, b) {
  const x = BigInt(`0x${a}`) ^ BigInt(`0x${b}`);
  return x === 0n ? 0 : x.toString(2).length;
}

describe('discv5 against @chainsafe/discv5', { skip: SKIP, timeout: 180_000 }, () => {
  let jsA; // the bootstrap node
  let jsB; // known only to jsA
  let jsC; // knows only our node
  let jsD; // knows only jsA
  let ours;
  let ourEnr;
  let ourId;

  before(async () => {
    jsA = await createJsNode();
    jsB = await createJsNode();
    jsA.discv5.addEnr(jsB.enr);
    jsB.discv5.addEnr(jsA.enr);
    await jsA.discv5.sendPing(jsB.enr); // a session, so that both are live to each other
    ours = new Proc(NODE, [
      'discv5', '--protocol-id', 'discv5', '--listen-address', '127.0.0.1', '--discv5-udp-port', '0',
      '--discv5-bootstrap-node', jsA.text, '--interval', '500', '--log-level', 'INFO',
    ], { name: 'logosdelivery discv5' });
    const listening = await ours.waitEvent('listening');
    ourEnr = ENR.decodeTxt(listening.enr);
    ourId = listening.nodeId;
    assert.equal(ourEnr.nodeId, ourId, 'js derives the same node ID from our record');
    assert.equal(ourEnr.ip, '127.0.0.1');
    assert.equal(ourEnr.udp, listening.udp);
  });

  after(async () => {
    await Promise.all([jsA, jsB, jsC, jsD].filter(Boolean).map((n) => n.discv5.stop()));
    await stopAll();
  });

  it('our node handshakes with the js bootstrap node (we initiate)', { timeout: STEP_MS }, async () => {
    const s = await ours.waitEvent('session', { pred: (e) => e.nodeId === jsA.nodeId, timeoutMs: STEP_MS });
    assert.equal(s.initiator, true);
    assert.equal(s.addr, `127.0.0.1:${jsA.port}`);
  });

  // On a loaded machine this has taken longer than STEP_MS once in a while; the wait ends before
  // the test's own timeout, so that a failure shows our node's output and the bootstrap node's
  // table.
  it('finds the js node only the bootstrap node knows: js answers our FINDNODE', { timeout: 3 * STEP_MS }, async () => {
    const d = await ours.waitEvent('discovered', { pred: (e) => e.nodeId === jsB.nodeId, timeoutMs: 3 * STEP_MS - 5_000 })
      .catch((err) => {
        const table = jsA.discv5.kadValues().map((e) => e.nodeId);
        throw new Error(`${err.message}\njsB ${jsB.nodeId}; the bootstrap node's table: ${table.join(' ')}`);
      });
    assert.equal(ENR.decodeTxt(d.enr).nodeId, jsB.nodeId);
    assert.equal(d.addr, `127.0.0.1:${jsB.port}`);
    // Our lookups go on to ask jsB itself: a second handshake we start.
    const s = await ours.waitEvent('session', { pred: (e) => e.nodeId === jsB.nodeId, timeoutMs: STEP_MS });
    assert.equal(s.initiator, true);
  });

  it('a js node that knows only the bootstrap node finds ours', { timeout: STEP_MS }, async () => {
    jsD = await createJsNode();
    jsD.discv5.addEnr(jsA.enr);
    const found = await jsD.lookFor(ourId, STEP_MS - 5_000);
    assert.ok(found, `jsD never discovered our node; it found ${[...jsD.discovered.keys()]}\n${ours.describe()}`);
    assert.equal(found.encodeTxt(), ourEnr.encodeTxt());
  });

  it('answers a js node that knows only ours: FINDNODE, PING, TALKREQ', { timeout: STEP_MS }, async () => {
    jsC = await createJsNode();
    jsC.discv5.addEnr(ourEnr);
    // Distance 0: our own record. This first request makes jsC start the handshake.
    const own = await jsC.discv5.sendFindNode(ourEnr, [0]);
    assert.equal(own.length, 1);
    assert.equal(own[0].encodeTxt(), ourEnr.encodeTxt());
    const s = await ours.waitEvent('session', { pred: (e) => e.nodeId === jsC.nodeId, timeoutMs: STEP_MS });
    assert.equal(s.initiator, false);
    // The js nodes we have seen, at their distances from us.
    const distances = [...new Set([jsA.nodeId, jsB.nodeId].map((id) => logDistance(ourId, id)))];
    const nodes = await jsC.discv5.sendFindNode(ourEnr, distances);
    const ids = nodes.map((e) => e.nodeId).sort();
    // jsD, which looked us up in the previous step, is in our table too when it handshook with
    // us, and is then rightly answered when it happens to sit at one of these distances.
    const jsDAtAskedDistance = distances.includes(logDistance(ourId, jsD.nodeId));
    const expected = [jsA.nodeId, jsB.nodeId];
    if (jsDAtAskedDistance && ids.includes(jsD.nodeId)) expected.push(jsD.nodeId);
    assert.deepEqual(ids, expected.sort(), `FINDNODE ${distances} answered ${ids}`);
    const pong = await jsC.discv5.sendPing(ourEnr);
    assert.equal(pong.enrSeq, 1n);
    assert.equal(pong.addr.port, jsC.port);
    const resp = await jsC.discv5.sendTalkReq(ourEnr, new Uint8Array([1, 2, 3]), 'unknown');
    assert.equal(resp.length, 0);
  });

  it('learns the js node from its handshake record; that node finds the others through ours', { timeout: STEP_MS }, async () => {
    const added = await ours.waitEvent('added', { pred: (e) => e.nodeId === jsC.nodeId, timeoutMs: STEP_MS });
    assert.equal(ENR.decodeTxt(added.enr).nodeId, jsC.nodeId);
    // jsC finds jsA and jsB through us with a lookup of its own.
    const foundA = await jsC.lookFor(jsA.nodeId, STEP_MS - 5_000);
    assert.ok(foundA, `jsC did not find jsA through our node\n${ours.describe()}`);
  });

  it('exits 0 on SIGTERM with its figures', { timeout: STEP_MS }, async () => {
    const status = await ours.stop();
    assert.equal(status.code, 0, ours.describe());
    const stats = ours.eventsNamed('stats')[0];
    assert.ok(stats, ours.describe());
    // Handshakes counts the ones the other side started (we challenged): jsC's for certain; jsD's
    // when jsD reached us before our own lookups, which learn jsD from jsA, started one with it.
    const answered = ours.eventsNamed('session').filter((e) => !e.initiator);
    assert.ok(answered.some((e) => e.nodeId === jsC.nodeId), ours.describe());
    assert.equal(stats.handshakes, answered.length, JSON.stringify(stats));
    assert.ok(stats.findnodeAnswered >= 2, JSON.stringify(stats)); // jsC's two FINDNODEs
  });
});
