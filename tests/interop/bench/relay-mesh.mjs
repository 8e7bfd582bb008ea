#!/usr/bin/env node
// Relay mesh throughput and latency: --nodes relay processes on one shard, each dialing
// --degree others, --size-byte payloads published through REST round-robin over the nodes
// (see relay-fleet.mjs for how deliveries and latencies are taken).
//
//   node bench/relay-mesh.mjs [--impl js|node|js,node] [--node PATH] [--node-arg ARG …]
//                             [--nodes 10] [--degree 4] [--size 1024]
//                             [--ramp 50,100,200,…,12800] [--ramp-seconds 5]
//                             [--rates 50,1000] [--seconds 10]
//
// Saturation: runs at each --ramp rate (total messages/s offered) for --ramp-seconds, stopping
// after a run that loses messages, or delivers less than 90 % of its offered rate while offering
// at least twice the best rate seen so far (clearly past capacity, not a hiccup); the figure is
// the best rate of messages delivered to every node (messages that reached all other nodes /
// time from the first publish to the last delivery), with that run's p99 latency. Then one run at each --rates rate for --seconds: p50/p99 latency over every
// (message, receiving node) pair. CPU per delivery = CPU time of all node processes during the
// run / deliveries. Prints one JSON line.
import '../lib/node20-compat.mjs';

import { parseArgs } from 'node:util';

import { report, run } from './common.mjs';
import { Fleet } from './relay-fleet.mjs';

const list = (text) => text.split(',').filter(Boolean).map(Number);

run(async () => {
  const { values: o } = parseArgs({
    options: {
      impl: { type: 'string', default: 'js' },
      node: { type: 'string' },
      'node-arg': { type: 'string', multiple: true, default: [] },
      nodes: { type: 'string', default: '10' },
      degree: { type: 'string', default: '4' },
      size: { type: 'string', default: '1024' },
      ramp: { type: 'string', default: '50,100,200,400,800,1600,3200,6400,12800' },
      'ramp-seconds': { type: 'string', default: '5' },
      rates: { type: 'string', default: '50,1000' },
      seconds: { type: 'string', default: '10' },
      cluster: { type: 'string', default: '42' },
      shard: { type: 'string', default: '0' },
    },
  });
  for (const impl of o.impl.split(',')) await measure({ ...o, impl });
});

async function measure(o) {
  const size = Number(o.size);
  const fleet = new Fleet({ impl: o.impl, node: o.node, nodeArgs: o['node-arg'], nodes: Number(o.nodes),
    clusterId: Number(o.cluster), shard: Number(o.shard) });
  try {
    await fleet.start();
    await fleet.connect(Number(o.degree));
    process.stderr.write(`${JSON.stringify(await fleet.warmUp())}\n`);
    const ramp = [];
    for (const rate of list(o.ramp)) {
      const r = await fleet.run({ rate, count: Math.round(rate * Number(o['ramp-seconds'])), size, label: `ramp ${rate}` });
      ramp.push(r);
      process.stderr.write(`${JSON.stringify(r)}\n`);
      const best = Math.max(...ramp.map((x) => x.deliveredToAllPerSecond));
      if ((r.deliveredToAllPerSecond < 0.9 * rate && rate >= 2 * best) || r.deliveredToAll < r.published) break;
    }
    const best = ramp.reduce((a, b) => (b.deliveredToAllPerSecond > a.deliveredToAllPerSecond ? b : a));
    const fixed = [];
    for (const rate of list(o.rates)) {
      const r = await fleet.run({ rate, count: Math.round(rate * Number(o.seconds)), size, label: `rate ${rate}` });
      fixed.push(r);
      process.stderr.write(`${JSON.stringify(r)}\n`);
    }
    report({
      bench: 'relay-mesh',
      impl: o.impl,
      nodes: fleet.nodes.length,
      degree: Number(o.degree),
      payloadBytes: size,
      saturation: {
        deliveredToAllPerSecond: best.deliveredToAllPerSecond,
        offeredRate: best.offeredRate,
        p99LatencyMs: best.latencyMs.p99,
        cpuMsPerDelivery: best.cpuMsPerDelivery,
      },
      latency: Object.fromEntries(fixed.map((r) => [r.offeredRate, {
        p50Ms: r.latencyMs.p50,
        p99Ms: r.latencyMs.p99,
        deliveredToAll: `${r.deliveredToAll}/${r.published}`,
        cpuMsPerDelivery: r.cpuMsPerDelivery,
      }])),
      runs: [...ramp, ...fixed],
    });
  } finally {
    await fleet.stop();
  }
}
