// What the benchmark scripts share: options, starting the peer under test, printing figures.
//
// The peer under test (--server) is a separate process:
//   js    lib/jspeer-cli.mjs listen (js-libp2p 2.8, the baseline)
//   c     ld_testpeer listen ($LD_TESTPEER or --testpeer PATH; use a Release build for figures)
//   node  logosdelivery with a fixed --nodekey ($LD_BIN or --node PATH)
//   /ip4/…/p2p/…  an already running peer (memory figures then need --pid)
// --server-arg ARG (repeatable) is appended to the server's command line
// (e.g. --server node --server-arg=--max-connections=200).
import '../lib/node20-compat.mjs';

import { parseArgs } from 'node:util';

import { JSPEER_CLI, nodePath, startNode, startTestpeer, testpeerPath } from '../lib/cpeer.mjs';

export const MIB = 1024 * 1024;
const BENCH_NODEKEY = '3c2e1a4f6b8d0c9e7a5b3d1f2e4c6a8b0d9f7e5c3a1b2d4f6e8c0a9b7d5f3e1c';

export const SERVER_OPTIONS = {
  server: { type: 'string', default: 'js' },
  muxer: { type: 'string', default: 'yamux' },
  key: { type: 'string', default: 'secp256k1' },
  testpeer: { type: 'string' },
  node: { type: 'string' },
  pid: { type: 'string' },
  'server-arg': { type: 'string', multiple: true, default: [] },
};

export function options(extra) {
  return parseArgs({ options: { ...SERVER_OPTIONS, ...extra }, allowPositionals: false }).values;
}

function need(path, what) {
  if (!path) throw new Error(`${what} not found: build it, or pass its path`);
  return path;
}

/** The command line of ld_testpeer or of its js-libp2p counterpart. */
export function peerCommand(kind, opts) {
  if (kind === 'js') return JSPEER_CLI;
  if (kind === 'c') return need(opts.testpeer ?? testpeerPath(), 'ld_testpeer ($LD_TESTPEER)');
  throw new Error(`unknown peer kind ${kind}`);
}

/**
 * Starts the peer under test. Resolves with {kind, addr, pid, proc, stop()}; `proc` is null for
 * an external peer. js and ld_testpeer servers offer only opts.muxer; the node offers both.
 */
export async function startServer(opts) {
  const kind = opts.server;
  if (kind.startsWith('/')) {
    return { kind: 'external', addr: kind, pid: opts.pid ? Number(opts.pid) : null, proc: null, stop: async () => {} };
  }
  let started;
  const extra = opts['server-arg'];
  if (kind === 'js' || kind === 'c') {
    started = await startTestpeer({ key: opts.key, path: peerCommand(kind, opts),
      extraArgs: ['--muxers', opts.muxer, ...extra] });
  } else if (kind === 'node') {
    started = await startNode({ nodekey: BENCH_NODEKEY, path: need(opts.node ?? nodePath(), 'logosdelivery ($LD_BIN)'),
      extraArgs: extra });
  } else {
    throw new Error(`unknown --server ${kind}`);
  }
  const { proc, addr } = started;
  return { kind, addr, pid: proc.pid, proc, stop: () => proc.stop() };
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function round(x, digits = 2) {
  return Number(x.toFixed(digits));
}

/** Prints one JSON line of figures on stdout. */
export function report(figures) {
  process.stdout.write(`${JSON.stringify({ ...figures, nodejs: process.version, at: new Date().toISOString() })}\n`);
}

/** Runs main(), stopping every spawned process on the way out; exits 1 on an error. */
export function run(main) {
  main().then(() => process.exit(0), (err) => {
    process.stderr.write(`${err.stack ?? err}\n`);
    process.exit(1);
  });
}
