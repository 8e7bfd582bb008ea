// zerokit as the oracle of the RLN-v2 tests: @waku/zerokit-rln-wasm 0.2.1 (zerokit v0.8's wasm
// build, pinned in package-lock.json) proves and verifies; the circuit's witness comes from the
// circom witness calculator in fixtures/rln-v2/rln.wasm; the proving key is beside it
// (LD_RLN_FIXTURES, default ../fixtures/rln-v2).
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import * as zk from '@waku/zerokit-rln-wasm';

const here = path.dirname(fileURLToPath(import.meta.url));
export const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;
export const TREE_DEPTH = 20;

export function fixtureDir() {
  const dir = process.env.LD_RLN_FIXTURES ?? path.join(here, '../fixtures/rln-v2');
  if (!fs.existsSync(path.join(dir, 'rln_final.zkey'))) {
    throw new Error(`RLN fixtures not found in ${dir} (set LD_RLN_FIXTURES)`);
  }
  return dir;
}

let initialised = false;
function init() {
  if (!initialised) {
    const require = createRequire(import.meta.url);
    const wasmPath = require.resolve('@waku/zerokit-rln-wasm/rln_wasm_bg.wasm');
    zk.initSync({ module: fs.readFileSync(wasmPath) });
    initialised = true;
  }
}

// ---- field elements as zerokit writes them: 32 bytes little-endian --------------------------
export const le32 = (v) => {
  const b = new Uint8Array(32);
  for (let i = 0; i < 32; i++) { b[i] = Number(v & 0xffn); v >>= 8n; }
  return b;
};
export const fromLe = (b) => { let v = 0n; for (let i = b.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i]); return v; };
export const u64le = (n) => { const b = new Uint8Array(8); new DataView(b.buffer).setBigUint64(0, BigInt(n), true); return b; };
export const concat = (...parts) => {
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out;
};
export const hex = (b) => Buffer.from(b).toString('hex');
export const randomFr = () => fromLe(randomBytes(32)) % R;

/** zerokit's Poseidon of 1..8 field elements. */
export function poseidon(...xs) {
  init();
  return fromLe(zk.poseidonHash(concat(u64le(xs.length), ...xs.map(le32))));
}

/** zerokit's hash_to_field (Keccak-256, little-endian, mod r). */
export function hashToField(bytes) {
  init();
  return fromLe(zk.hash(bytes));
}

/** A depth-20 tree holding `members` (Map index -> leaf), zero elsewhere: root and the Merkle
 * path of `index`. */
export function merklePath(members, index) {
  const zeros = [0n];
  for (let l = 0; l < TREE_DEPTH; l++) zeros.push(poseidon(zeros[l], zeros[l]));
  let level = new Map(members);
  const path = [];
  const bits = [];
  let idx = index;
  for (let l = 0; l < TREE_DEPTH; l++) {
    path.push(level.get(idx ^ 1) ?? zeros[l]);
    bits.push(idx & 1);
    const up = new Map();
    for (const i of level.keys()) {
      const p = i >> 1;
      if (!up.has(p)) up.set(p, poseidon(level.get(2 * p) ?? zeros[l], level.get(2 * p + 1) ?? zeros[l]));
    }
    level = up;
    idx >>= 1;
  }
  return { root: level.get(0), path, bits };
}

// ---- the circom witness calculator (circom 2 wasm interface) ---------------------------------
function fnv1a64(name) {
  let h = 0xcbf29ce484222325n;
  for (const c of Buffer.from(name)) { h ^= BigInt(c); h = (h * 0x100000001b3n) & 0xffffffffffffffffn; }
  return h;
}

async function witnessCalculator() {
  const code = fs.readFileSync(path.join(here, '../fixtures/rln-v2/rln.wasm'));
  const fail = (code) => { throw new Error(`circom witness calculator error ${code}`); };
  const { instance } = await WebAssembly.instantiate(code, {
    runtime: { exceptionHandler: fail, printErrorMessage() {}, writeBufferMessage() {}, showSharedRWMemory() {} },
  });
  const e = instance.exports;
  const n32 = e.getFieldNumLen32();
  return (inputs) => {
    e.init(0);
    for (const [name, value] of Object.entries(inputs)) {
      const h = fnv1a64(name);
      const values = Array.isArray(value) ? value : [value];
      values.forEach((v, i) => {
        let x = BigInt(v);
        for (let j = 0; j < n32; j++) { e.writeSharedRWMemory(j, Number(x & 0xffffffffn)); x >>= 32n; }
        e.setInputSignal(Number(h >> 32n), Number(h & 0xffffffffn), i);
      });
    }
    const out = [];
    for (let i = 0, n = e.getWitnessSize(); i < n; i++) {
      e.getWitness(i);
      let v = 0n;
      for (let j = n32 - 1; j >= 0; j--) v = (v << 32n) | BigInt(e.readSharedRWMemory(j) >>> 0);
      out.push(v);
    }
    return out;
  };
}

/** The circom witness calculator of fixtures/rln-v2/rln.wasm: a function from the circuit's
 * named input signals (bigints, or arrays of them) to the full witness (bigints, wire order). */
export async function circomWitness() {
  return witnessCalculator();
}

/** A zerokit prover/verifier for the fixture's proving key (loading it takes several seconds). */
export async function createZerokit() {
  init();
  const ctx = zk.newRLN(new Uint8Array(fs.readFileSync(path.join(fixtureDir(), 'rln_final.zkey'))));
  const calc = await witnessCalculator();
  return {
    /**
     * Proves membership of a random identity at `index` among `others` (Map index -> leaf) for a
     * message: returns zerokit's output [proof<128> | root | external_nullifier | x | y |
     * nullifier] split up, with the inputs that produced it. `externalNullifier` replaces the
     * default Poseidon(hash_to_field(epoch), hash_to_field(rln_identifier)).
     */
    prove({ secret = randomFr(), limit = 100, messageId = 0, index = 0, others = new Map(),
            signal = randomBytes(48), epoch = le32(BigInt(Math.floor(Date.now() / 600000))),
            rlnIdentifier = new TextEncoder().encode('rln/waku-rln-relay/v2.0.0'),
            externalNullifier: givenExternalNullifier } = {}) {
      const rlnId = concat(rlnIdentifier, new Uint8Array(32 - rlnIdentifier.length));
      const leaf = poseidon(poseidon(secret), BigInt(limit));
      const members = new Map(others);
      members.set(index, leaf);
      const { root, path: pathElements, bits } = merklePath(members, index);
      const x = hashToField(signal);
      const externalNullifier = givenExternalNullifier ?? poseidon(hashToField(epoch), hashToField(rlnId));
      const serializedWitness = concat(le32(secret), le32(BigInt(limit)), le32(BigInt(messageId)),
        u64le(TREE_DEPTH), ...pathElements.map(le32), u64le(TREE_DEPTH), Uint8Array.from(bits),
        le32(x), le32(externalNullifier));
      const witness = calc(zk.rlnWitnessToJson(ctx, serializedWitness));
      const out = zk.generateRLNProofWithWitness(ctx, witness, serializedWitness);
      if (fromLe(out.subarray(128, 160)) !== root) throw new Error('zerokit proved another root');
      return {
        secret, limit, messageId, index, signal: Uint8Array.from(signal), epoch: Uint8Array.from(epoch),
        rlnIdentifier: rlnId, pathElements, bits, root,
        proof: out.slice(0, 128), values: out.slice(128, 288),
      };
    },
    /** zerokit's verify_with_roots: proof, values, x = hash_to_field(signal), root among roots. */
    verify(proof, values, signal, roots) {
      const input = concat(proof, values, u64le(signal.length), signal);
      return zk.verifyWithRoots(ctx, input, concat(...roots.map(le32)));
    },
  };
}
