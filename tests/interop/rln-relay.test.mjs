// RLN-relay between js-waku relay nodes and ours. No js-waku package on npm does RLN-v2: @waku/rln
// 0.1.8 (the latest) depends on @waku/zerokit-rln-wasm ^0.0.13 and bundles the RLN-v1 circuit
// (verification key with 6 public inputs: y, root, nullifier, x, epoch, rln_identifier; a proving
// key other than zerokit v0.8's), which neither nwaku nor our node accepts. So the js side is put
// together as @waku/rln does it, from the RLN-v2 pieces: @waku/relay (gossipsub, js-waku's
// encoder, which carries a message's rateLimitProof in field 21) and @waku/zerokit-rln-wasm 0.2.1
// (zerokit v0.8) proving and verifying with the shared rln_final.zkey; the js validator is
// zerokit's verify_with_roots plus nwaku's nullifier log (spam: a second (epoch, nullifier)).
//
// Line P — N — Q: P and Q are js-waku relay peers that only know our node N (--rln-relay, static
// group of 8, member 5's credentials, limit 4, cluster 42 shard 0).
//  - P proves with zerokit and publishes; N validates and forwards; Q gets the message and the js
//    validator accepts it.
//  - N publishes (REST) with its own proof; Q's js validator accepts it.
//  - P signals twice in one epoch (same message id, another message): N drops the second (a later
//    valid message from P reaches Q, the second never does), and the js validator calls it spam.
// The epoch is 10^9 s long, so that no epoch change falls inside the test.
import './lib/node20-compat.mjs';

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { missing, nodePath, stopAll } from './lib/cpeer.mjs';
import { startRelayNode } from './lib/relaynode.mjs';
import { createRelayPeer, shardTopic } from './lib/wakupeer.mjs';
import { concat, createZerokit, fixtureDir, fromLe, le32, poseidon, randomFr, u64le } from './lib/zerokit.mjs';

const NODE = nodePath();
const SKIP = missing('logosdelivery', NODE);
const CLUSTER = 42;
const CT = '/ld/1/rln-relay/proto';
const MEMBERS = 8;
const NODE_MEMBER = 5;
const P_MEMBER = 2;
const LIMIT = 4;
const EPOCH_SEC = 1_000_000_000n;
const RLN_ID = (() => { const b = new Uint8Array(32); b.set(new TextEncoder().encode('rln/waku-rln-relay/v2.0.0')); return b; })();
// Our node makes its proofs on its loop thread (about 0.3 s, but seconds in the sanitizer build
// on a loaded machine), during which it answers no ping: the js peers here keep their connections
// through that (js-libp2p's connection monitor would abort one whose ping fails).
const MONITOR = { abortConnectionOnPingFailure: false };
const beHex = (v) => `0x${v.toString(16).padStart(64, '0')}`;
const enc = new TextEncoder();
const signalOf = (payload, ts) => concat(payload, enc.encode(CT), u64le(ts));

/** The js validator: zerokit's proof check against the group's root, then nwaku's nullifier log. */
class JsValidator {
  constructor(zk, root) {
    this.zk = zk;
    this.root = root;
    this.log = new Map(); // epoch hex -> Set of nullifier hex
  }

  validate(payload, ts, p) {
    if (!p) return 'invalid';
    const externalNullifier = poseidon(fromLe(p.epoch), fromLe(RLN_ID));
    const values = concat(p.merkleRoot, le32(externalNullifier), p.shareX, p.shareY, p.nullifier);
    if (fromLe(p.epoch) !== ts / 1_000_000_000n / EPOCH_SEC) return 'invalid';
    if (!this.zk.verify(p.proof, values, signalOf(payload, ts), [this.root])) return 'invalid';
    const epoch = Buffer.from(p.epoch).toString('hex');
    const seen = this.log.get(epoch) ?? new Set();
    this.log.set(epoch, seen);
    const nullifier = Buffer.from(p.nullifier).toString('hex');
    if (seen.has(nullifier)) return 'spam';
    seen.add(nullifier);
    return 'valid';
  }
}

describe('RLN-relay: js-waku relay peers with zerokit and our node', { skip: SKIP, timeout: 900_000 }, () => {
  const topic = shardTopic(CLUSTER, 0);
  let dir;
  let node;
  let p;
  let q;
  let zk;
  let secrets;
  let members;
  let root;
  let validator;
  let counter = 0;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ld-rln-relay-'));
    secrets = Array.from({ length: MEMBERS }, () => randomFr());
    const leaves = secrets.map((s) => poseidon(poseidon(s), BigInt(LIMIT)));
    members = new Map(leaves.map((l, i) => [i, l]));
    writeFileSync(join(dir, 'group.json'), JSON.stringify(leaves.map(beHex)));
    writeFileSync(join(dir, 'cred.json'), JSON.stringify({ identitySecret: beHex(secrets[NODE_MEMBER]) }));
    node = await startRelayNode({
      path: NODE, clusterId: CLUSTER, shards: [0],
      extraArgs: ['--rln-relay=true', '--rln-relay-dynamic=false',
        `--rln-relay-static-group-file=${join(dir, 'group.json')}`, `--rln-relay-cred-path=${join(dir, 'cred.json')}`,
        `--rln-relay-membership-index=${NODE_MEMBER}`, `--rln-relay-user-message-limit=${LIMIT}`,
        `--rln-relay-epoch-sec=${EPOCH_SEC}`, `--rln-relay-circuit-dir=${fixtureDir()}`],
    });
    zk = await createZerokit();
    p = await createRelayPeer({ listen: false, clusterId: CLUSTER, shard: 0, contentTopics: [CT], connectionMonitor: MONITOR });
    q = await createRelayPeer({ listen: false, clusterId: CLUSTER, shard: 0, contentTopics: [CT], connectionMonitor: MONITOR });
    await p.dial(node.addr);
    await q.dial(node.addr);
    await p.waitMesh(node.peerId, topic);
    await q.waitMesh(node.peerId, topic);
  });

  after(async () => {
    await Promise.all([p, q].filter(Boolean).map((x) => x.stop().catch(() => {})));
    await stopAll();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A message of member P_MEMBER with `messageId`, proved by zerokit; timestamp in whole ms, 10 s
   * ahead, so that it is within the node's 20 s clock gap of the time it arrives however long
   * zerokit's wasm takes to prove (0 to 30 s). */
  function proved(label, messageId) {
    counter += 1;
    const payload = enc.encode(`${label} #${counter}`);
    const ts = BigInt(Date.now() + 10_000) * 1_000_000n;
    const epoch = le32(ts / 1_000_000_000n / EPOCH_SEC);
    const others = new Map(members);
    others.delete(P_MEMBER);
    const m = zk.prove({
      secret: secrets[P_MEMBER], limit: LIMIT, messageId, index: P_MEMBER, others, signal: signalOf(payload, ts),
      epoch, externalNullifier: poseidon(fromLe(epoch), fromLe(RLN_ID)),
    });
    root ??= m.root;
    assert.equal(m.root, root);
    const v = m.values;
    const rateLimitProof = {
      proof: m.proof, merkleRoot: v.subarray(0, 32), epoch, shareX: v.subarray(64, 96), shareY: v.subarray(96, 128),
      nullifier: v.subarray(128, 160), rlnIdentifier: RLN_ID,
    };
    return { payload, timestamp: ts, contentTopic: CT, rateLimitProof };
  }

  it('a js-waku message proved by zerokit crosses our node and passes the js validator; so does our node\'s own',
    { timeout: 300_000 }, async () => {
      const m = proved('from js', 0);
      validator = new JsValidator(zk, root);
      const sent = await p.publish(m);
      const got = await q.waitHash(sent.hash, { timeoutMs: 30_000 });
      assert.ok(got.rateLimitProof, 'no RateLimitProof at Q');
      assert.equal(validator.validate(got.message.payload, BigInt(got.message.timestamp), got.rateLimitProof), 'valid');

      const payload = enc.encode('from our node');
      const ts = BigInt(Date.now()) * 1_000_000n;
      const r = await node.rest.request('POST', `/relay/v1/messages/${encodeURIComponent(topic)}`,
        { payload: Buffer.from(payload).toString('base64'), contentTopic: CT, timestamp: Number(ts) },
        { timeoutMs: 120_000 });
      assert.equal(r.status, 200, r.text);
      const ours = await q.waitFor(['message'], () => q.received.find((x) => Buffer.from(x.message.payload).equals(Buffer.from(payload))),
        30_000, 'our node\'s message at Q');
      assert.equal(validator.validate(ours.message.payload, BigInt(ours.message.timestamp), ours.rateLimitProof), 'valid');
    });

  it('a double signal in one epoch: our node drops it and the js validator calls it spam', { timeout: 300_000 }, async () => {
    // each published as soon as it is proved (zerokit's wasm takes seconds; the node's clock-gap
    // rule allows 20 s)
    const first = proved('signal', 1);
    const a = await p.publish(first);
    const second = proved('double signal', 1);
    const b = await p.publish(second);
    const sentinel = proved('sentinel', 2);
    const c = await p.publish(sentinel);
    await q.waitHash(a.hash, { timeoutMs: 90_000 });
    await q.waitHash(c.hash, { timeoutMs: 90_000 });
    assert.equal(q.received.some((x) => x.hash === b.hash), false, 'the double signal crossed our node');
    assert.equal(validator.validate(first.payload, first.timestamp, first.rateLimitProof), 'valid');
    assert.equal(validator.validate(second.payload, second.timestamp, second.rateLimitProof), 'spam');
    assert.equal(validator.validate(sentinel.payload, sentinel.timestamp, sentinel.rateLimitProof), 'valid');
  });
});
