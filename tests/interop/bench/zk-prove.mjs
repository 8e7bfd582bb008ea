// RLN-v2 proof generation, ours beside zerokit's wasm build in the same run: zerokit
// (@waku/zerokit-rln-wasm 0.2.1, lib/zerokit.mjs: the witness by the circom wasm calculator, then
// zerokit's Groth16 prover) proves --proofs random messages; bench_zk_prove (the witness from the
// circuit's graph, then our prover) proves as many. Prints one JSON line per figure.
//
//   node bench/zk-prove.mjs [--proofs 5] [--bench-zk-prove PATH]   ($LD_BENCH_ZK_PROVE)
import '../lib/node20-compat.mjs';
import { parseArgs } from 'node:util';
import { spawnSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createZerokit, fixtureDir, le32, randomFr } from '../lib/zerokit.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const opts = parseArgs({
  options: {
    proofs: { type: 'string', default: '5' },
    'bench-zk-prove': { type: 'string' },
  },
}).values;
const bench = opts['bench-zk-prove'] ?? process.env.LD_BENCH_ZK_PROVE ?? path.join(here, '../../../build-rel/bench_zk_prove');
const proofs = Number(opts.proofs);

const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const zk = await createZerokit();
zk.prove({ secret: randomFr() }); // warm-up
const c0 = cpuMs();
const t = performance.now();
for (let i = 0; i < proofs; i++) {
  zk.prove({ secret: randomFr(), limit: 100, messageId: i, index: randomInt(0, 1 << 20),
             signal: randomBytes(200), epoch: le32(BigInt(2741350 + i)) });
}
const print = (figure, impl, value) => console.log(JSON.stringify({ figure, impl, value: Number(value.toFixed(3)) }));
print('rln_prove_ms (circom wasm witness + zerokit prover)', 'zerokit-wasm', (performance.now() - t) / proofs);
print('rln_prove_cpu_ms', 'zerokit-wasm', (cpuMs() - c0) / proofs);

const ours = spawnSync(bench, [fixtureDir(), String(proofs)], { encoding: 'utf8' });
if (ours.status !== 0) throw new Error(`bench_zk_prove failed: ${ours.stderr}`);
process.stdout.write(ours.stdout);
