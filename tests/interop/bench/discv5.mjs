#!/usr/bin/env node
// @chainsafe/discv5 11.0.0 figures, the js side of `bench_discv5 --udp` (bench/discv5.c): N nodes
// in this process, each on its own UDP socket on 127.0.0.1, every one started from node 0's
// record. Join: rounds of random lookups on every node until the routing tables stop growing (at
// most 20); then --lookups random lookups, one at a time, from random nodes: lookups per second
// of wall time and CPU per lookup (process.cpuUsage: the whole network is in this process).
// @chainsafe/discv5's rate limiter is off by default; the protocol-id is "discv5".
//
//   node bench/discv5.mjs [--nodes 200] [--lookups 1000] [--rounds 20]
//
// Prints one JSON line.
import '../lib/node20-compat.mjs';

import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';

import { Discv5 } from '@chainsafe/discv5';
import { SignableENR } from '@chainsafe/enr';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { multiaddr } from '@multiformats/multiaddr';

import { freeUdpPort } from '../lib/net.mjs';
import { report, round, run } from './common.mjs';

async function createNode() {
  const privateKey = await generateKeyPair('secp256k1');
  const port = await freeUdpPort();
  const enr = SignableENR.createFromPrivateKey(privateKey);
  enr.ip = '127.0.0.1';
  enr.udp = port;
  const discv5 = Discv5.create({
    enr,
    privateKey,
    bindAddrs: { ip4: multiaddr(`/ip4/127.0.0.1/udp/${port}`) },
    config: { enrUpdate: false },
  });
  await discv5.start();
  return { discv5, enr: enr.toENR() };
}

function tableTotal(nodes) {
  let total = 0;
  let min = Infinity;
  for (const n of nodes) {
    const size = n.discv5.kadValues().length;
    total += size;
    min = Math.min(min, size);
  }
  return { total, min };
}

function cpuMs() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e3;
}

run(async () => {
  const opts = parseArgs({
    options: {
      nodes: { type: 'string', default: '200' },
      lookups: { type: 'string', default: '1000' },
      rounds: { type: 'string', default: '20' },
    },
  }).values;
  const count = Number(opts.nodes);
  const lookups = Number(opts.lookups);
  const nodes = [];
  for (let i = 0; i < count; i++) nodes.push(await createNode());
  let w0 = performance.now();
  let c0 = cpuMs();
  for (const n of nodes.slice(1)) n.discv5.addEnr(nodes[0].enr);
  await delay(6000);
  let before = 0;
  let rounds = 0;
  let table = { total: 0, min: 0 };
  for (; rounds < Number(opts.rounds); rounds++) {
    await Promise.all(nodes.map((n) => n.discv5.findRandomNode().catch(() => [])));
    table = tableTotal(nodes);
    process.stderr.write(`round ${rounds + 1}: ${(performance.now() - w0).toFixed(0)} ms, tables ${table.total}\n`);
    if (table.total === before) break;
    before = table.total;
  }
  const join = {
    rounds: rounds + 1,
    wallMs: round(performance.now() - w0, 0),
    cpuMs: round(cpuMs() - c0, 0),
    tableAvg: round(table.total / count, 1),
    tableMin: table.min,
    rssKiB: Math.round(process.memoryUsage().rss / 1024),
  };
  w0 = performance.now();
  c0 = cpuMs();
  let found = 0;
  for (let i = 0; i < lookups; i++) {
    const n = nodes[Math.floor(Math.random() * count)];
    found += (await n.discv5.findRandomNode().catch(() => [])).length;
  }
  const wall = performance.now() - w0;
  const cpu = cpuMs() - c0;
  report({
    bench: 'discv5',
    impl: '@chainsafe/discv5 11.0.0',
    nodes: count,
    join,
    lookups,
    wallMs: round(wall, 0),
    cpuMs: round(cpu, 0),
    lookupsPerSec: round(lookups / (wall / 1e3), 2),
    cpuMsPerLookup: round(cpu / lookups, 3),
    resultsPerLookup: round(found / lookups, 1),
  });
  await Promise.all(nodes.map((n) => n.discv5.stop()));
});
