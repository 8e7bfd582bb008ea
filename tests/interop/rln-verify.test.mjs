// RLN-v2 proofs made by zerokit (@waku/zerokit-rln-wasm 0.2.1, lib/zerokit.mjs) for random
// identities, tree positions, epochs, limits and messages: our C verifier (ld_zkverify) accepts
// every one and rejects each tampered variant (root, epoch, x, share, nullifier, another proof's
// values, flipped proof bytes), and zerokit gives the same verdict on each.
import './lib/node20-compat.mjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { createZerokit, fromLe, hex, le32, poseidon, hashToField, R, randomFr } from './lib/zerokit.mjs';

const ZKVERIFY = process.env.LD_ZKVERIFY;
const PROOFS = 6;

/** Runs ld_zkverify over [proof, values] pairs; returns its verdict lines. */
function cVerify(cases) {
  return new Promise((resolve, reject) => {
    const child = spawn(ZKVERIFY, [], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`ld_zkverify exited ${code}`));
      else resolve(out.trim().split('\n'));
    });
    child.stdin.end(cases.map(([p, v]) => `${hex(p)} ${hex(v)}\n`).join(''));
  });
}

const field = (values, i) => fromLe(values.subarray(32 * i, 32 * i + 32));
function withField(values, i, v) {
  const out = Uint8Array.from(values);
  out.set(le32(((v % R) + R) % R), 32 * i);
  return out;
}
const ROOT = 0, EXT_NULLIFIER = 1, X = 2, Y = 3, NULLIFIER = 4;

test('zerokit RLN-v2 proofs verify in C, tampered ones do not', { skip: !ZKVERIFY && 'LD_ZKVERIFY not set', timeout: 600_000 }, async () => {
  const zk = await createZerokit();
  const made = [];
  for (let i = 0; i < PROOFS; i++) {
    const limit = [1, 10, 100, 20][i % 4];
    const index = randomInt(0, 1 << 20);
    const others = new Map();
    for (let k = 0; k < 8; k++) others.set(randomInt(0, 1 << 20), randomFr());
    others.delete(index);
    made.push(zk.prove({
      secret: randomFr(), limit, messageId: randomInt(0, limit), index, others,
      signal: randomBytes(randomInt(0, 300)), epoch: le32(BigInt(randomInt(0, 2 ** 31))),
    }));
  }
  const cases = [];
  const expect = (name, proof, values, signal, roots, zerokitVerdict) => cases.push({ name, proof, values, signal, roots, zerokitVerdict });
  made.forEach((m, i) => {
    const { proof, values, signal, root } = m;
    expect(`proof ${i}`, proof, values, signal, [root], true);
    expect(`proof ${i}, root + 1`, proof, withField(values, ROOT, field(values, ROOT) + 1n), signal, [field(values, ROOT) + 1n], false);
    const epoch = Uint8Array.from(m.epoch);
    epoch[0] ^= 1;
    const otherEpoch = poseidon(hashToField(epoch), hashToField(m.rlnIdentifier));
    expect(`proof ${i}, another epoch`, proof, withField(values, EXT_NULLIFIER, otherEpoch), signal, [root], false);
    const otherSignal = Uint8Array.from([...signal, 1]);
    expect(`proof ${i}, another signal`, proof, withField(values, X, hashToField(otherSignal)), otherSignal, [root], false);
    expect(`proof ${i}, share y + 1`, proof, withField(values, Y, field(values, Y) + 1n), signal, [root], false);
    expect(`proof ${i}, nullifier - 1`, proof, withField(values, NULLIFIER, field(values, NULLIFIER) - 1n), signal, [root], false);
    const next = made[(i + 1) % made.length];
    expect(`proof ${i} with the values of proof ${(i + 1) % made.length}`, proof, next.values, next.signal, [next.root], false);
    const flipped = Uint8Array.from(proof);
    flipped[randomInt(0, 128)] ^= 1 << randomInt(0, 8);
    expect(`proof ${i}, a flipped bit`, flipped, values, signal, [root], null);
  });
  const verdicts = await cVerify(cases.map((c) => [c.proof, c.values]));
  assert.equal(verdicts.length, cases.length);
  cases.forEach((c, k) => {
    const ours = verdicts[k];
    if (c.zerokitVerdict === true) {
      assert.equal(ours, 'OK', c.name);
    } else {
      assert.match(ours, /^ERR (BAD_PROOF|BAD_POINT|OVERFLOW|MALFORMED)$/, c.name);
    }
    // zerokit's own verdict on the same bytes (a flipped bit may even fail its decoding)
    let theirs;
    try { theirs = zk.verify(c.proof, c.values, c.signal, c.roots); } catch { theirs = false; }
    assert.equal(theirs, ours === 'OK', `${c.name}: zerokit ${theirs}, ours ${ours}`);
  });
});
