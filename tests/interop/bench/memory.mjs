#!/usr/bin/env node
// Resident memory of the peer under test (VmRSS from /proc/<pid>/status, MiB): idle after start,
// then holding --connections connections from --peers distinct js-libp2p peers in this process,
// each connection identified by the server. Connections the server refuses (a connection cap) are
// counted in failedConnections.
//
//   node bench/memory.mjs [--server js|c|node|MA --pid PID] [--muxer yamux|mplex]
//                         [--connections N] [--peers P] [--settle S] [--server-arg ARG]
//
// Prints one JSON line.
import '../lib/node20-compat.mjs';

import { setTimeout as delay } from 'node:timers/promises';

import { readRss } from '../lib/cpeer.mjs';
import { createPeer } from '../lib/jspeer.mjs';
import { options, report, round, run, startServer } from './common.mjs';

/** Opens `total` connections round-robin from `clients`; a refused one is counted, not fatal. */
async function connectAll(server, clients, total) {
  const conns = [];
  const failures = [];
  for (let i = 0; i < total; i++) {
    const client = clients[i % clients.length];
    try {
      const conn = await client.dial(server.addr, { force: i >= clients.length });
      await client.identify(conn);
      conns.push(conn);
    } catch (err) {
      failures.push(`${err.name}: ${err.message}`);
    }
  }
  return { conns, failures };
}

async function serverIdentified(server, count) {
  if (server.proc == null || server.kind === 'node' || count === 0) return;
  await server.proc.waitEvent('identified', { skip: count - 1, timeoutMs: 60_000 });
}

run(async () => {
  const opts = options({
    connections: { type: 'string', default: '100' },
    peers: { type: 'string', default: '100' },
    settle: { type: 'string', default: '3' },
  });
  const server = await startServer(opts);
  if (server.pid == null) throw new Error('memory figures of an external peer need --pid');
  const settle = Number(opts.settle) * 1000;
  const clients = [];
  try {
    await delay(settle);
    const idle = await readRss(server.pid);
    for (let i = 0; i < Number(opts.peers); i++) {
      clients.push(await createPeer({ muxer: opts.muxer, listen: false, key: 'ed25519' }));
    }
    const total = Number(opts.connections);
    const { conns, failures } = await connectAll(server, clients, total);
    await serverIdentified(server, conns.length);
    await delay(settle);
    const open = conns.filter((c) => c.status === 'open').length;
    const loaded = await readRss(server.pid);
    report({
      bench: 'memory',
      server: server.kind,
      muxer: opts.muxer,
      idleRssMiB: round(idle.rss, 1),
      connections: open,
      peers: clients.length,
      loadedRssMiB: round(loaded.rss, 1),
      perConnectionKiB: round(((loaded.rss - idle.rss) * 1024) / Math.max(open, 1), 1),
      peakRssMiB: round(loaded.hwm, 1),
      failedConnections: failures.length,
      firstFailure: failures[0],
    });
  } finally {
    await Promise.all(clients.map((c) => c.stop()));
    await server.stop();
  }
});
