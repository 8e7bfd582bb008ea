// RLN-v2 proof verification, ours beside zerokit's wasm build in the same run: zerokit
// (@waku/zerokit-rln-wasm 0.2.1, lib/zerokit.mjs) proves --proofs random messages, then verifies
// each --rounds times (verify_with_roots: Groth16 + x = hash_to_field(signal) + root check);
// bench_zk verify-lines verifies the same proofs --rounds times. Prints one JSON line per figure.
//
//   node bench/zk-verify.mjs [--proofs 4] [--rounds 20] [--bench-zk PATH]   ($LD_BENCH_ZK)
import '../lib/node20-compat.mjs';
import { parseArgs } from 'node:util';
import { spawnSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createZerokit, hex, le32, randomFr } from '../lib/zerokit.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const opts = parseArgs({
  options: {
    proofs: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '20' },
    'bench-zk': { type: 'string' },
  },
}).values;
const benchZk = opts['bench-zk'] ?? process.env.LD_BENCH_ZK ?? path.join(here, '../../../build-rel/bench_zk');
const proofs = Number(opts.proofs);
const rounds = Number(opts.rounds);

const cpuMs = () => process.cpuUsage().user / 1000;
let t = performance.now();
const zk = await createZerokit();
const setupMs = performance.now() - t;
const made = [];
t = performance.now();
for (let i = 0; i < proofs; i++) {
  made.push(zk.prove({ secret: randomFr(), limit: 100, messageId: i, index: randomInt(0, 1 << 20),
                       signal: randomBytes(200), epoch: le32(BigInt(2741350 + i)) }));
}
const proveMs = (performance.now() - t) / proofs;
for (const m of made) if (!zk.verify(m.proof, m.values, m.signal, [m.root])) throw new Error('zerokit rejects its proof');
const c0 = cpuMs();
t = performance.now();
for (let r = 0; r < rounds; r++) {
  for (const m of made) zk.verify(m.proof, m.values, m.signal, [m.root]);
}
const zkWall = (performance.now() - t) / (rounds * proofs);
const zkCpu = (cpuMs() - c0) / (rounds * proofs);
const print = (figure, impl, value) => console.log(JSON.stringify({ figure, impl, value: Number(value.toFixed(3)) }));
print('rln_setup_ms', 'zerokit-wasm', setupMs);
print('rln_prove_ms (witness by circom wasm + zerokit prover)', 'zerokit-wasm', proveMs);
print('rln_verify_ms', 'zerokit-wasm', zkWall);
print('rln_verify_cpu_ms', 'zerokit-wasm', zkCpu);

const input = made.map((m) => `${hex(m.proof)} ${hex(m.values)}\n`).join('');
const ours = spawnSync(benchZk, ['verify-lines', String(rounds)], { input, encoding: 'utf8' });
if (ours.status !== 0) throw new Error(`bench_zk failed: ${ours.stderr}`);
process.stdout.write(ours.stdout);
