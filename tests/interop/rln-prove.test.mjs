// RLN-v2 proofs made in C (ld_zkprove: the witness from zerokit's witness graph, then Groth16 from
// rln_final.zkey) against zerokit v0.8 (@waku/zerokit-rln-wasm 0.2.1, lib/zerokit.mjs):
// - our witness equals the circom witness calculator's (fixtures/rln-v2/rln.wasm), wire for wire,
//   for random identities, limits, message ids, tree positions, paths, epochs and messages;
// - zerokit's verify_with_roots accepts our proofs, and rejects them with a flipped bit, another
//   root, another signal or another epoch.
import './lib/node20-compat.mjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { circomWitness, createZerokit, fromLe, hex, le32, poseidon, hashToField, randomFr, R, TREE_DEPTH } from './lib/zerokit.mjs';

const ZKPROVE = process.env.LD_ZKPROVE;
const WITNESSES = 12;
const PROOFS = 8;

/** Runs ld_zkprove over request lines; resolves with its answer lines. */
function cProve(lines) {
  return new Promise((resolve, reject) => {
    const child = spawn(ZKPROVE, [], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`ld_zkprove exited ${code}`));
      else resolve(out.trim().split('\n'));
    });
    child.stdin.end(lines.map((l) => `${l}\n`).join(''));
  });
}

/** Random circuit inputs: the secret's leaf at a random index over a random path. */
function randomInputs() {
  const limit = [1, 2, 10, 100, 65535][randomInt(0, 5)];
  const index = randomInt(0, 1 << TREE_DEPTH);
  const signal = randomBytes(randomInt(0, 200));
  const epoch = le32(BigInt(randomInt(0, 2 ** 31)));
  const rlnId = new Uint8Array(32);
  rlnId.set(new TextEncoder().encode('rln/waku-rln-relay/v2.0.0'));
  return {
    secret: randomFr(), limit, messageId: randomInt(0, limit), index,
    path: Array.from({ length: TREE_DEPTH }, () => randomFr()),
    signal, epoch, rlnId,
    x: hashToField(signal),
    externalNullifier: poseidon(hashToField(epoch), hashToField(rlnId)),
  };
}

const request = (cmd, i) => [cmd, hex(le32(i.secret)), i.limit, i.messageId, i.index,
  i.path.map((p) => hex(le32(p))).join(''), hex(le32(i.x)), hex(le32(i.externalNullifier))].join(' ');

/** The root the path leads to from the secret's leaf (zerokit's Poseidon). */
function rootOf(i) {
  let node = poseidon(poseidon(i.secret), BigInt(i.limit));
  for (let l = 0; l < TREE_DEPTH; l++) {
    node = (i.index >> l) & 1 ? poseidon(i.path[l], node) : poseidon(node, i.path[l]);
  }
  return node;
}

test('our witness equals the circom witness calculator\'s, wire for wire', { skip: !ZKPROVE && 'LD_ZKPROVE not set', timeout: 600_000 }, async () => {
  const calc = await circomWitness();
  const cases = Array.from({ length: WITNESSES }, randomInputs);
  cases[0].messageId = cases[0].limit - 1; // the range check's edge
  cases[1].index = 0;
  cases[2].index = (1 << TREE_DEPTH) - 1;
  const lines = await cProve(cases.map((c) => request('witness', c)));
  assert.equal(lines.length, cases.length);
  cases.forEach((c, k) => {
    const reference = calc({
      identitySecret: c.secret, userMessageLimit: BigInt(c.limit), messageId: BigInt(c.messageId),
      pathElements: c.path, identityPathIndex: Array.from({ length: TREE_DEPTH }, (_, l) => BigInt((c.index >> l) & 1)),
      x: c.x, externalNullifier: c.externalNullifier,
    });
    const ours = lines[k];
    assert.equal(ours.length, 64 * reference.length, `case ${k}: ${ours.slice(0, 40)}`);
    for (let w = 0; w < reference.length; w++) {
      const v = fromLe(Buffer.from(ours.slice(64 * w, 64 * w + 64), 'hex'));
      if (v !== reference[w]) assert.fail(`case ${k}: wire ${w} is ${v}, the calculator's ${reference[w]}`);
    }
    assert.equal(reference[2], rootOf(c), `case ${k}: the root wire`);
  });
});

test('zerokit verifies our proofs and rejects them tampered', { skip: !ZKPROVE && 'LD_ZKPROVE not set', timeout: 600_000 }, async () => {
  const zk = await createZerokit();
  const cases = Array.from({ length: PROOFS }, randomInputs);
  const lines = await cProve(cases.map((c) => request('prove', c)));
  assert.equal(lines.length, cases.length);
  cases.forEach((c, k) => {
    assert.match(lines[k], /^[0-9a-f]{256} [0-9a-f]{320}$/, `case ${k}: ${lines[k]}`);
    const [p, v] = lines[k].split(' ');
    const proof = Uint8Array.from(Buffer.from(p, 'hex'));
    const values = Uint8Array.from(Buffer.from(v, 'hex'));
    const root = fromLe(values.subarray(0, 32));
    assert.equal(root, rootOf(c), `case ${k}: root`);
    assert.equal(fromLe(values.subarray(32, 64)), c.externalNullifier);
    assert.equal(fromLe(values.subarray(64, 96)), c.x);
    assert.equal(zk.verify(proof, values, c.signal, [root]), true, `case ${k}: zerokit rejects our proof`);

    assert.equal(zk.verify(proof, values, c.signal, [(root + 1n) % R]), false, `case ${k}: another root`);
    const other = Uint8Array.from([...c.signal, 7]);
    const otherValues = Uint8Array.from(values);
    otherValues.set(le32(hashToField(other)), 64);
    assert.equal(zk.verify(proof, otherValues, other, [root]), false, `case ${k}: another signal`);
    const epochValues = Uint8Array.from(values);
    epochValues.set(le32(poseidon(hashToField(le32(fromLe(c.epoch) + 1n)), hashToField(c.rlnId))), 32);
    assert.equal(zk.verify(proof, epochValues, c.signal, [root]), false, `case ${k}: another epoch`);
    const flipped = Uint8Array.from(proof);
    flipped[randomInt(0, 128)] ^= 1 << randomInt(0, 8);
    let verdict;
    try { verdict = zk.verify(flipped, values, c.signal, [root]); } catch { verdict = false; }
    assert.equal(verdict, false, `case ${k}: a flipped bit`);
  });
});
