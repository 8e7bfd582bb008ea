// RLN-v2 proofs made in C (ld_zkprove: the witness from zerokit's witness graph, then Groth16 from
// rln_final.zkey) against zerokit v0.8 (@waku/zerokit-rln-wasm 0.2.1, lib/zerokit.mjs):
// - our witness equals the circom witness calculator's (fixtures/rln-v2/rln.wasm), wire for wire,
//   for random identities, limits, message ids, tree positions, paths, epochs and messages;
// - zerokit's verify_with_roots accepts our proofs, and rejects them with a flipped bit, another
//   root, another signal or another epoch;
// - proofs through a proving context (its cache of the member's sums): zerokit accepts them for
//   several messages of one member (the cache reused), after the member's path changed (a new
//   root: the cache remade, counted as a miss) and for another member;
// - RLN-relay: the RateLimitProof our node attaches to a message verifies in zerokit with nwaku's
//   signal (payload ‖ content topic ‖ uint64_le(timestamp)) and external nullifier (zerokit's
//   poseidon_hash of the epoch's and rln_identifier's bytes as field elements), and our relay
//   validator accepts zerokit's proofs made that way and calls a second message with the same
//   message id in the epoch spam, as nwaku does.
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

test('zerokit verifies proofs made through a proving context, reused and remade', { skip: !ZKPROVE && 'LD_ZKPROVE not set', timeout: 600_000 }, async () => {
  const zk = await createZerokit();
  const first = randomInputs();
  const another = (base) => {
    const next = randomInputs();
    return { ...base, messageId: randomInt(0, base.limit), signal: next.signal, epoch: next.epoch, x: next.x, externalNullifier: next.externalNullifier };
  };
  const cases = [first, another(first), another(first)];
  const moved = another(first);
  moved.path = [...first.path];
  moved.path[TREE_DEPTH - 1] = randomFr(); // the tree changed: a new root
  cases.push(moved, another(moved), randomInputs());
  // [hits, misses] after each proof
  const counts = [[0, 1], [1, 1], [2, 1], [2, 2], [3, 2], [3, 3]];
  const lines = await cProve(cases.map((c) => request('prove-ctx', c)));
  assert.equal(lines.length, cases.length);
  cases.forEach((c, k) => {
    assert.match(lines[k], /^[0-9a-f]{256} [0-9a-f]{320} \d+ \d+$/, `case ${k}: ${lines[k]}`);
    const [p, v, hits, misses] = lines[k].split(' ');
    assert.deepEqual([Number(hits), Number(misses)], counts[k], `case ${k}: the cache's hits and misses`);
    const values = Uint8Array.from(Buffer.from(v, 'hex'));
    const root = fromLe(values.subarray(0, 32));
    assert.equal(root, rootOf(c), `case ${k}: root`);
    assert.equal(fromLe(values.subarray(64, 96)), c.x);
    assert.equal(zk.verify(Uint8Array.from(Buffer.from(p, 'hex')), values, c.signal, [root]), true, `case ${k}: zerokit rejects the proof`);
    assert.equal(zk.verify(Uint8Array.from(Buffer.from(p, 'hex')), values, c.signal, [(root + 1n) % R]), false, `case ${k}: another root`);
  });
});

// ---- RLN-relay messages --------------------------------------------------------------------
const EPOCH_SEC = 600n;
const RLN_ID = (() => { const b = new Uint8Array(32); b.set(new TextEncoder().encode('rln/waku-rln-relay/v2.0.0')); return b; })();
const u64le = (v) => { const b = new Uint8Array(8); new DataView(b.buffer).setBigUint64(0, BigInt(v), true); return b; };
const cat = (...parts) => Uint8Array.from(parts.flatMap((p) => [...p]));
const signalOf = (payload, topic, ts) => cat(payload, new TextEncoder().encode(topic), u64le(ts));

/** protobuf bytes fields 1..7 of a RateLimitProof. */
function decodeRlp(bytes) {
  const out = {};
  let i = 0;
  const varint = () => { let v = 0, s = 0, b; do { b = bytes[i++]; v |= (b & 0x7f) << s; s += 7; } while (b & 0x80); return v; };
  while (i < bytes.length) {
    const key = varint();
    assert.equal(key & 7, 2, 'length-delimited fields only');
    const len = varint();
    out[key >> 3] = bytes.subarray(i, i + len);
    i += len;
  }
  return out;
}

function encodeRlp(fields) {
  const parts = [];
  for (let f = 1; f <= 7; f++) {
    const b = fields[f];
    parts.push(Uint8Array.of((f << 3) | 2), b.length >= 128 ? Uint8Array.of((b.length & 0x7f) | 0x80, b.length >> 7) : Uint8Array.of(b.length), b);
  }
  return cat(...parts);
}

test('RLN-relay: zerokit verifies our messages\' proofs; our validator takes zerokit\'s and catches the double signal', { skip: !ZKPROVE && 'LD_ZKPROVE not set', timeout: 600_000 }, async () => {
  const zk = await createZerokit();
  const topic = '/rln/1/interop/proto';
  const ts = BigInt(Date.now()) * 1_000_000n;
  const epoch = le32(ts / 1_000_000_000n / EPOCH_SEC);
  const nwakuExternalNullifier = poseidon(fromLe(epoch), fromLe(RLN_ID));

  // ours → zerokit
  const c = randomInputs();
  const payload = randomBytes(64);
  const [line] = await cProve([['message', hex(le32(c.secret)), c.limit, c.messageId, c.index,
    c.path.map((p) => hex(le32(p))).join(''), hex(payload), topic, ts, EPOCH_SEC].join(' ')]);
  assert.match(line, /^[0-9a-f]+$/, line);
  const f = decodeRlp(Buffer.from(line, 'hex'));
  assert.equal(f[1].length, 128);
  assert.deepEqual([...f[3]], [...epoch], 'epoch of the timestamp');
  assert.deepEqual([...f[7]], [...RLN_ID], "nwaku's rln_identifier");
  const signal = signalOf(payload, topic, ts);
  assert.equal(fromLe(f[4]), hashToField(signal), 'x = hash_to_field(payload ‖ topic ‖ ts)');
  const root = fromLe(f[2]);
  assert.equal(root, rootOf(c));
  const values = cat(f[2], le32(nwakuExternalNullifier), f[4], f[5], f[6]);
  assert.equal(zk.verify(f[1], values, signal, [root]), true, 'zerokit rejects our RateLimitProof');

  // zerokit → our validator
  const secret = randomFr();
  const index = randomInt(0, 1 << TREE_DEPTH);
  const made = [];
  for (const [messageId, tag] of [[3, 1], [3, 2], [4, 3]]) {
    const body = randomBytes(40);
    body[0] = tag;
    const sig = signalOf(body, topic, ts);
    const m = zk.prove({ secret, limit: 10, messageId, index, signal: sig, epoch, externalNullifier: nwakuExternalNullifier });
    const v = m.values;
    made.push({ body, root: m.root, rlp: encodeRlp({ 1: m.proof, 2: v.subarray(0, 32), 3: epoch, 4: v.subarray(64, 96), 5: v.subarray(96, 128), 6: v.subarray(128, 160), 7: RLN_ID }) });
  }
  const validate = (m, body = m.body) => ['validate', hex(le32(m.root)), EPOCH_SEC, ts, hex(body), topic, ts, hex(m.rlp)].join(' ');
  const altered = Uint8Array.from(made[2].body);
  altered[1] ^= 1;
  const verdicts = await cProve([validate(made[0]), validate(made[1]), validate(made[2]), validate(made[2], altered), validate(made[0])]);
  assert.deepEqual(verdicts, ['VALID ok', 'SPAM spam', 'VALID ok', 'INVALID invalid_proof', 'SPAM spam']);
});
