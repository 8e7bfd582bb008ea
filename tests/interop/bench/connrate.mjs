#!/usr/bin/env node
// Connection set-ups per second: this process (js-libp2p) opens connections to the server for
// --seconds, each one TCP + Noise + muxer + identify of the server, then closes it.
//
//   node bench/connrate.mjs [--server js|c|node|MA] [--muxer yamux|mplex] [--seconds S]
//                           [--concurrency K] [--warmup S]
//
// K dialing peers work in parallel, each one connection at a time, after --warmup seconds (default
// 1) of the same that are not counted. Prints one JSON line.
import '../lib/node20-compat.mjs';

import { performance } from 'node:perf_hooks';

import { createPeer } from '../lib/jspeer.mjs';
import { median, options, report, round, run, startServer } from './common.mjs';

async function worker(client, addr, deadline, latencies) {
  while (performance.now() < deadline) {
    const start = performance.now();
    const conn = await client.dial(addr, { force: true });
    await client.identify(conn);
    await conn.close();
    latencies.push(performance.now() - start);
  }
}

run(async () => {
  const opts = options({
    seconds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '1' },
    warmup: { type: 'string', default: '1' },
  });
  const server = await startServer(opts);
  const clients = [];
  try {
    for (let i = 0; i < Number(opts.concurrency); i++) {
      clients.push(await createPeer({ muxer: opts.muxer, listen: false, key: 'ed25519' }));
    }
    await Promise.all(clients.map((c) => worker(c, server.addr, performance.now() + Number(opts.warmup) * 1000, [])));
    const latencies = [];
    const start = performance.now();
    const deadline = start + Number(opts.seconds) * 1000;
    await Promise.all(clients.map((c) => worker(c, server.addr, deadline, latencies)));
    const elapsed = (performance.now() - start) / 1000;
    report({
      bench: 'connrate',
      server: server.kind,
      client: 'js',
      muxer: opts.muxer,
      concurrency: clients.length,
      connections: latencies.length,
      seconds: round(elapsed),
      perSecond: round(latencies.length / elapsed, 1),
      medianSetupMs: round(median(latencies)),
    });
  } finally {
    await Promise.all(clients.map((c) => c.stop()));
    await server.stop();
  }
});
