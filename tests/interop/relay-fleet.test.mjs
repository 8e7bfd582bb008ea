// Five relay node processes over REST: `logosdelivery --relay=true --cluster-id=42 …
// --rest=true --rest-port=0 --ip-colocation-limit=0` ×5, joined in a ring (POST /admin/v1/peers
// on a static shard; --staticnode plus one POST under autosharding). Once GET /admin/v1/peers
// shows every ring neighbour connected on the relay codec and a probe from every node has come
// back from every node, 1,000 messages are published through POST /relay/v1/messages/{topic}
// (or /relay/v1/auto/messages), spread round-robin over the five nodes, and read back through
// the matching GET on every node: each message must come back exactly once from every node
// (its origin included), with the payload, content topic, timestamp and meta sent, within a
// bounded time; and every node must log each message's deterministic hash, as sent at its
// origin and as received exactly once elsewhere.
//
// Runs against $LD_BIN; skipped only when LD_BIN is unset.
import './lib/node20-compat.mjs';

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';

import { stopAll } from './lib/cpeer.mjs';
import { RestFleet, fleetNetwork } from './lib/restfleet.mjs';
import { nowNs } from './lib/wakupeer.mjs';

const NODE = process.env.LD_BIN || null;
const SKIP = NODE ? false : 'logosdelivery is not built (set LD_BIN)';

const NODES = 5;
const MESSAGES = 1_000;
const CLUSTER = 42;
const NODE_ARGS = ['--ip-colocation-limit=0', '--rest-relay-cache-capacity=2000', '--max-connections=50'];
const CONNECT_MS = 30_000;
const MESH_MS = 60_000;
const DELIVERY_MS = 120_000; // from the last publish until every node returned every message
const DUPLICATE_WATCH_MS = 1_500; // further GETs after the last arrival, for late duplicates
const STEP_MS = 300_000;
const SUITE_MS = 600_000;

const hex = (b) => (b == null ? '' : Buffer.from(b).toString('hex'));

function fleetMessages(net, label) {
  const base = nowNs();
  return Array.from({ length: MESSAGES }, (_, k) => ({
    payload: Buffer.concat([Buffer.from(`${label} #${k} `), randomBytes(16 + (k % 97))]),
    contentTopic: net.contentTopic,
    timestamp: base + BigInt(k) * 1_000n,
    ...(k % 3 === 0 ? { meta: Buffer.from(`meta ${k}`) } : {}),
  }));
}

function probe(net, label) {
  return (round, index) => ({
    payload: Buffer.from(`${label} probe ${round}.${index} ${randomBytes(8).toString('hex')}`),
    contentTopic: net.contentTopic,
    timestamp: nowNs(),
  });
}

/** Lists the first few items of a problem list for an assertion message. */
function some(list, n = 5) {
  return `${list.length}${list.length ? `: ${list.slice(0, n).join('; ')}${list.length > n ? '; …' : ''}` : ''}`;
}

function fleetSuite(name, spec, topology) {
  describe(`logosdelivery: ${NODES} relay processes over REST, ${name}`, { skip: SKIP, timeout: SUITE_MS }, () => {
    const net = fleetNetwork(spec);
    const fleet = new RestFleet(net, { count: NODES, path: NODE, extraArgs: NODE_ARGS, topology });
    let probes = [];
    let sent = [];
    let stopped = false;

    before(async () => {
      await fleet.start();
    });

    after(async () => {
      if (!stopped) await fleet.stop().catch(() => {});
      await stopAll();
    });

    it(`the ring connects (${topology === 'admin' ? 'POST' : '--staticnode and POST'} /admin/v1/peers) and the mesh relays a probe from every node`,
      { timeout: STEP_MS }, async () => {
        assert.equal(fleet.members.length, NODES);
        await fleet.waitConnected({ timeoutMs: CONNECT_MS });
        const r = await fleet.waitMesh(probe(net, name), { timeoutMs: MESH_MS });
        probes = r.probes;
      });

    it(`${MESSAGES} messages published across the ${NODES} nodes each come back exactly once from every node's GET`,
      { timeout: STEP_MS }, async () => {
        assert.ok(probes.length > 0, 'the mesh was not formed');
        const msgs = fleetMessages(net, `fleet ${name}`);
        const t0 = Date.now();
        sent = await fleet.publishSpread(msgs);
        const refused = sent.filter((s) => s.status !== 200).map((s) => `#${sent.indexOf(s)} via node ${s.origin}: ${s.status} ${s.text.slice(0, 100)}`);
        assert.equal(refused.length, 0, `publishes refused ${some(refused)}`);
        const hashes = sent.map((s) => s.hash);
        assert.equal(new Set(hashes).size, MESSAGES, 'the test messages must have distinct hashes');
        const tPublished = Date.now();
        const arrived = await fleet.waitArrived(hashes, { timeoutMs: DELIVERY_MS });
        const tArrived = Date.now();
        if (arrived) {
          const watchEnd = Date.now() + DUPLICATE_WATCH_MS;
          while (Date.now() < watchEnd) await fleet.pollAll();
        }

        const wanted = new Map(sent.map((s, k) => [s.hash, { ...s, k }]));
        const probeSet = new Set(probes);
        const problems = [];
        for (const m of fleet.members) {
          const lost = [];
          const doubled = [];
          const altered = [];
          for (const [h, s] of wanted) {
            const n = m.counts.get(h) ?? 0;
            if (n === 0) lost.push(`#${s.k} from node ${s.origin}`);
            else if (n > 1) doubled.push(`#${s.k} from node ${s.origin} ×${n}`);
            const got = m.messages.get(h);
            if (got != null && (hex(got.payload) !== hex(s.msg.payload) || got.contentTopic !== s.msg.contentTopic
              || got.timestamp !== s.msg.timestamp || hex(got.meta) !== hex(s.msg.meta))) altered.push(`#${s.k}`);
          }
          const strangers = [...m.counts].filter(([h]) => !wanted.has(h) && !probeSet.has(h)).map(([h]) => h.slice(0, 16));
          const probeDups = [...m.counts].filter(([h, n]) => probeSet.has(h) && n > 1).map(([h, n]) => `${h.slice(0, 16)} ×${n}`);
          if (lost.length) problems.push(`node ${m.index} lost ${some(lost)}`);
          if (doubled.length) problems.push(`node ${m.index} returned twice ${some(doubled)}`);
          if (altered.length) problems.push(`node ${m.index} returned altered fields ${some(altered)}`);
          if (strangers.length) problems.push(`node ${m.index} returned messages never published ${some(strangers)}`);
          if (probeDups.length) problems.push(`node ${m.index} returned probes twice ${some(probeDups)}`);
        }
        assert.deepEqual(problems, [], `${problems.join('\n')}\n(published in ${tPublished - t0} ms; `
          + `${arrived ? `all arrived ${tArrived - tPublished} ms later` : `not all arrived within ${DELIVERY_MS} ms`})`);
        assert.ok(arrived, `not every message arrived within ${DELIVERY_MS} ms`);
      });

    it('every node logs each message hash: sent at its origin, received exactly once at the others', { timeout: STEP_MS }, async () => {
      assert.equal(sent.length, MESSAGES, 'nothing was published');
      const deadline = Date.now() + 20_000;
      let problems;
      for (;;) {
        problems = [];
        for (const m of fleet.members) {
          const { sent: out, received: inn } = m.loggedHashes();
          const bad = [];
          for (const [k, s] of sent.entries()) {
            const want = s.origin === m.index ? [1, 0] : [0, 1];
            const have = [out.get(s.hash) ?? 0, inn.get(s.hash) ?? 0];
            if (have[0] !== want[0] || have[1] !== want[1]) bad.push(`#${k} from node ${s.origin}: sent ×${have[0]}, received ×${have[1]}`);
          }
          if (bad.length) problems.push(`node ${m.index}: ${some(bad)}`);
        }
        if (problems.length === 0 || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.deepEqual(problems, [], problems.join('\n'));
    });

    it('every node stops on SIGTERM with exit status 0', { timeout: STEP_MS }, async () => {
      stopped = true;
      const statuses = await fleet.stop();
      statuses.forEach((s, i) => assert.deepEqual({ code: s.code, signal: s.signal, killed: s.killed ?? false },
        { code: 0, signal: null, killed: false }, `node ${i} ${JSON.stringify(s)}\n${fleet.members[i].describe()}`));
    });
  });
}

fleetSuite('static shard /waku/2/rs/42/3', { kind: 'static', clusterId: CLUSTER, shard: 3, contentTopic: '/ld/1/relay-fleet/proto' }, 'admin');
// Autosharding vector of the digest: over 8 shards this content topic lands on shard 6.
fleetSuite('autoshard of /app/29/sometopic/someencoding (8 shards)',
  { kind: 'auto', clusterId: CLUSTER, numShards: 8, contentTopic: '/app/29/sometopic/someencoding' }, 'staticnode');
