// Light push through our RLN-relay service node, from a js-waku light node (@waku/sdk 0.0.36
// createLightNode, as lightnode.test.mjs): the node (--rln-relay with a static group of 8, the
// credentials of member 3, limit 2, cluster 42 shard 0) attaches a RateLimitProof to each message
// that comes without one, as nwaku does, and a js-waku relay peer (@waku/relay) receives the
// message with that proof, which zerokit (@waku/zerokit-rln-wasm 0.2.1) verifies against the
// group's root with nwaku's signal and external nullifier. Beyond the limit the node answers
// 504 OUT_OF_RLN_PROOF with nwaku's text; js-waku (@waku/core 0.0.40) reports a v3 refusal as
// "Remote peer rejected" (the status only logged) and maps the legacy v2 info, which carries
// "could not get new message id to generate an rln proof", to "Proof generation failed".
// The epoch is 10^9 s long, so that no epoch change falls inside the test.
import './lib/node20-compat.mjs';

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { LightPushError } from '@waku/sdk';

import { missing, nodePath, stopAll } from './lib/cpeer.mjs';
import { Protocols, createLight, startServiceNode, wakuLog } from './lib/lightnode.mjs';
import { createRelayPeer, shardTopic } from './lib/wakupeer.mjs';
import {
  concat, createZerokit, fixtureDir, fromLe, hashToField, le32, merklePath, poseidon, randomFr, u64le,
} from './lib/zerokit.mjs';

const NODE = nodePath();
const SKIP = missing('logosdelivery', NODE);
const CLUSTER = 42;
const CT = '/ld/1/rln-lightpush/proto';
const MEMBERS = 8;
const OURS = 3;
const LIMIT = 2;
const EPOCH_SEC = 1_000_000_000n;
const STEP_MS = 120_000;
const RLN_ID = (() => { const b = new Uint8Array(32); b.set(new TextEncoder().encode('rln/waku-rln-relay/v2.0.0')); return b; })();
const nonceText = (n) => 'could not get new message id to generate an rln proof: NonceLimitReached: Nonce limit reached. '
  + `Please wait for the next epoch. requested nonce: ${n} & nonceLimit: ${LIMIT}`;
// Our node makes its proofs on its loop thread (about 0.3 s, but seconds in the sanitizer build
// on a loaded machine), during which it answers no ping: the js peers here keep their connections
// through that (js-libp2p's connection monitor would abort one whose ping fails).
const MONITOR = { abortConnectionOnPingFailure: false };
const beHex = (v) => `0x${v.toString(16).padStart(64, '0')}`;

describe('light push through an RLN-relay service node', { skip: SKIP, timeout: 600_000 }, () => {
  const topic = shardTopic(CLUSTER, 0);
  let dir;
  let node;
  let light;
  let relay;
  let zk;
  let root;
  let counter = 0;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ld-rln-lp-'));
    const secrets = Array.from({ length: MEMBERS }, () => randomFr());
    const leaves = secrets.map((s) => poseidon(poseidon(s), BigInt(LIMIT)));
    root = merklePath(new Map(leaves.map((l, i) => [i, l])), 0).root;
    writeFileSync(join(dir, 'group.json'), JSON.stringify(leaves.map(beHex)));
    writeFileSync(join(dir, 'cred.json'), JSON.stringify({ identitySecret: beHex(secrets[OURS]) }));
    node = await startServiceNode({
      path: NODE, clusterId: CLUSTER, shards: [0], store: false, filter: false,
      extraArgs: ['--rln-relay=true', '--rln-relay-dynamic=false',
        `--rln-relay-static-group-file=${join(dir, 'group.json')}`, `--rln-relay-cred-path=${join(dir, 'cred.json')}`,
        `--rln-relay-membership-index=${OURS}`, `--rln-relay-user-message-limit=${LIMIT}`,
        `--rln-relay-epoch-sec=${EPOCH_SEC}`, `--rln-relay-circuit-dir=${fixtureDir()}`],
    });
    zk = await createZerokit();
    relay = await createRelayPeer({ listen: false, clusterId: CLUSTER, shard: 0, contentTopics: [CT], connectionMonitor: MONITOR });
    await relay.dial(node.addr);
    await relay.waitMesh(node.peerId, topic);
    light = await createLight({ transport: 'tcp', clusterId: CLUSTER, shard: 0, libp2p: { connectionMonitor: MONITOR } });
    await light.dial(node.addr);
    await light.waitForPeers([Protocols.LightPush], { timeoutMs: 30_000 });
  });

  after(async () => {
    await Promise.all([light, relay].filter(Boolean).map((p) => p.stop().catch(() => {})));
    await stopAll();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function newMessage(label) {
    counter += 1;
    return { contentTopic: CT, shard: 0, payload: new TextEncoder().encode(`${label} #${counter}`), timestamp: new Date() };
  }

  async function push(label, options = {}) {
    const mark = wakuLog.mark();
    const sent = await light.send(newMessage(label), { autoRetry: false, ...options });
    return { ...sent, lines: wakuLog.since(mark, /light-push/).map((l) => l.text) };
  }

  /** The relay peer got the message with a RateLimitProof that zerokit verifies. */
  async function assertProved(sent) {
    const got = await relay.waitHash(sent.hash, { timeoutMs: 30_000 });
    const p = got.rateLimitProof;
    assert.ok(p, 'the relayed message carries no RateLimitProof');
    const ts = BigInt(sent.message.timestamp);
    const epoch = le32(ts / 1_000_000_000n / EPOCH_SEC);
    assert.deepEqual([...p.epoch], [...epoch], 'epoch of the message timestamp');
    assert.deepEqual([...p.rlnIdentifier], [...RLN_ID], "nwaku's rln_identifier");
    assert.equal(fromLe(p.merkleRoot), root, "the group's root");
    const signal = concat(sent.message.payload, new TextEncoder().encode(CT), u64le(ts));
    assert.equal(fromLe(p.shareX), hashToField(signal), 'x = hash_to_field(payload ‖ topic ‖ ts)');
    const externalNullifier = poseidon(fromLe(p.epoch), fromLe(RLN_ID));
    const values = concat(p.merkleRoot, le32(externalNullifier), p.shareX, p.shareY, p.nullifier);
    assert.equal(zk.verify(p.proof, values, signal, [root]), true, 'zerokit rejects the attached proof');
    return p;
  }

  it('v3 and legacy v2 pushes get proofs that zerokit verifies; beyond the limit 504 (v3) and '
    + '"Proof generation failed" (v2)', { timeout: STEP_MS }, async () => {
    const first = await push('v3');
    assert.deepEqual(first.result, { successes: [node.peerId], failures: [] });
    const second = await push('v2', { useLegacy: true });
    assert.deepEqual(second.result, { successes: [node.peerId], failures: [] });
    const p1 = await assertProved(first);
    const p2 = await assertProved(second);
    assert.notDeepEqual([...p1.nullifier], [...p2.nullifier], 'message ids 0 and 1: two nullifiers');

    const third = await push('v3 over the limit');
    assert.deepEqual(third.result,
      { successes: [], failures: [{ error: LightPushError.REMOTE_PEER_REJECTED, peerId: node.peerId }] });
    assert.ok(third.lines.some((l) => l.endsWith(`Remote peer rejected with v3 status code 504: ${nonceText(2)}`)),
      `js-waku's log:\n${third.lines.join('\n')}`);
    const fourth = await push('v2 over the limit', { useLegacy: true });
    assert.deepEqual(fourth.result,
      { successes: [], failures: [{ error: LightPushError.RLN_PROOF_GENERATION, peerId: node.peerId }] });
    assert.equal(LightPushError.RLN_PROOF_GENERATION, 'Proof generation failed');
    assert.ok(fourth.lines.some((l) => /Remote peer fault: RLN generation/.test(l)),
      `js-waku's log:\n${fourth.lines.join('\n')}`);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(relay.received.some((m) => m.hash === third.hash || m.hash === fourth.hash), false,
      'a message beyond the limit was relayed');
  });
});
