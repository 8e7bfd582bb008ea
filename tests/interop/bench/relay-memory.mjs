#!/usr/bin/env node
// Resident memory (VmRSS, MiB) of one relay node process: idle after start, then with
// --peers relay peers connected — js-libp2p gossipsub peers in this process, each answering
// metadata for the node's cluster and subscribed to its shard, counted once the node's
// subscription has reached each of them over /vac/waku/relay/2.0.0.
//
//   node bench/relay-memory.mjs [--impl js|node|js,node] [--node PATH] [--node-arg ARG …]
//                               [--peers 50] [--settle 3]
//
// --impl js is lib/relaynode-cli.mjs (js-libp2p gossipsub as js-waku configures it, plus
// its REST server); --impl node is logosdelivery ($LD_BIN). Prints one JSON line per
// implementation.
import '../lib/node20-compat.mjs';

import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';

import { readRss } from '../lib/cpeer.mjs';
import { startRelayNode } from '../lib/relaynode.mjs';
import { createGossipPeer, shardTopic } from '../lib/wakupeer.mjs';
import { report, round, run } from './common.mjs';
import { fleetCommand } from './relay-fleet.mjs';

run(async () => {
  const { values: o } = parseArgs({
    options: {
      impl: { type: 'string', default: 'js' },
      node: { type: 'string' },
      'node-arg': { type: 'string', multiple: true, default: [] },
      peers: { type: 'string', default: '50' },
      settle: { type: 'string', default: '3' },
      cluster: { type: 'string', default: '42' },
      shard: { type: 'string', default: '0' },
      rest: { type: 'string', default: 'true' },
    },
  });
  for (const impl of o.impl.split(',')) await measure({ ...o, impl });
});

async function measure(o) {
  const clusterId = Number(o.cluster);
  const shard = Number(o.shard);
  const topic = shardTopic(clusterId, shard);
  const settle = Number(o.settle) * 1000;
  const rest = o.rest !== 'false';
  const node = await startRelayNode({ path: fleetCommand(o), clusterId, shards: [shard], logLevel: 'INFO', rest,
    extraArgs: ['--max-connections=200', '--ip-colocation-limit=0', ...o['node-arg']] });
  const peers = [];
  try {
    await delay(settle);
    const idle = await readRss(node.pid);
    const failures = [];
    for (let i = 0; i < Number(o.peers); i++) {
      const p = await createGossipPeer({ listen: false, topics: [topic], metadata: { clusterId, shards: [shard] } });
      peers.push(p);
      try {
        await p.dial(node.addr);
        await p.waitSubscribed(node.peerId, topic);
      } catch (err) {
        failures.push(`${err.name}: ${err.message}`);
      }
    }
    await delay(settle);
    const connected = peers.filter((p) => p.isConnected(node.peerId)).length;
    const loaded = await readRss(node.pid);
    report({
      bench: 'relay-memory',
      impl: o.impl,
      rest,
      idleRssMiB: round(idle.rss, 1),
      relayPeers: connected,
      loadedRssMiB: round(loaded.rss, 1),
      perPeerKiB: round(((loaded.rss - idle.rss) * 1024) / Math.max(connected, 1), 1),
      peakRssMiB: round(loaded.hwm, 1),
      failedPeers: failures.length,
      firstFailure: failures[0],
    });
  } finally {
    await Promise.all(peers.map((p) => p.stop().catch(() => {})));
    await node.stop();
  }
}
