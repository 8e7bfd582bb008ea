#!/usr/bin/env node
// One-stream throughput between two processes over TCP + Noise + a muxer: a client process pushes
// --bytes through /ld/echo/1.0.0 on the server and checks the SHA-256 of what comes back.
//
//   node bench/throughput.mjs [--server js|c|node|MA] [--client js|c] [--muxer yamux|mplex]
//                             [--bytes N] [--streams K] [--runs R]
//
// Prints one JSON line: MB/s = payload bytes sent (each also comes back) / time, per run and median.
// Both ends offer only --muxer (a node server offers both; the line reports what was negotiated).
import '../lib/node20-compat.mjs';

import { Proc } from '../lib/cpeer.mjs';
import { MIB, median, options, peerCommand, report, round, run, startServer } from './common.mjs';

async function clientRun(opts, addr) {
  const args = ['dial', addr, '--muxers', opts.muxer, '--echo-bytes', opts.bytes, '--echo-streams', opts.streams,
    '--timeout', '600'];
  const proc = new Proc(peerCommand(opts.client, opts), args, { name: `${opts.client}-client` });
  const [echo, connected] = await Promise.all([
    proc.waitEvent('echo', { timeoutMs: 600_000 }),
    proc.waitEvent('connected', { timeoutMs: 60_000 }),
  ]);
  const status = await proc.waitExit({ timeoutMs: 30_000 });
  if (status.code !== 0 || !echo.ok) throw new Error(`client failed\n${proc.describe()}`);
  return { ms: echo.ms, muxer: connected.muxer };
}

run(async () => {
  const opts = options({
    client: { type: 'string', default: 'js' },
    bytes: { type: 'string', default: String(256 * MIB) },
    streams: { type: 'string', default: '1' },
    runs: { type: 'string', default: '3' },
  });
  const server = await startServer(opts);
  try {
    const bytes = Number(opts.bytes) * Number(opts.streams);
    const runs = [];
    let muxer;
    for (let i = 0; i < Number(opts.runs); i++) {
      const r = await clientRun(opts, server.addr);
      muxer = r.muxer;
      runs.push(bytes / r.ms / 1000);
    }
    report({
      bench: 'throughput',
      server: server.kind,
      client: opts.client,
      muxer,
      bytesPerRun: bytes,
      streams: Number(opts.streams),
      MBps: runs.map((x) => round(x)),
      medianMBps: round(median(runs)),
      medianMiBps: round(median(runs) * 1e6 / MIB),
    });
  } finally {
    await server.stop();
  }
});
