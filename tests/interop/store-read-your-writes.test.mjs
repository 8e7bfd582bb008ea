// Publish, then query, with no pause: a js-waku light node (@waku/sdk createLightNode, tcp,
// mplex) asks the node program's store for every message right after the node answered that it
// published it, as an app that publishes through nwaku's REST (or light push) and reads back
// through js-waku does. nwaku archives inside the publish call, so the query finds the message;
// so must ours. 200 rounds, taking turns: POST /relay/v1/auto/messages, POST
// /relay/v1/messages/{pubsubTopic} (each answered 200) and a js-waku light push (SUCCESS); each
// store query (by hash, through js-waku's queryWithOrderedCallback) sent right after the answer
// and required to return exactly that message with the @waku/message-hash hash. Once on the
// SQLite archive, once on PostgreSQL
// (LD_TEST_PG_URL, a schema of its own made with psql; skipped saying why when unset, failing
// when LD_REQUIRE_PG is set). Skipped when LD_BIN is unset.
import './lib/node20-compat.mjs';

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';

import { missing, nodePath, stopAll } from './lib/cpeer.mjs';
import { Protocols, createLight, startServiceNode } from './lib/lightnode.mjs';
import { autoShard, createRelayPeer, shardTopic, wakuHash } from './lib/wakupeer.mjs';

const NODE = nodePath();
const NODE_SKIP = missing('logosdelivery', NODE);

const CLUSTER = 42;
const NUM_SHARDS = 8;
const CT = '/ld-ryw/1/publish-then-query/proto';
const ROUNDS = 200;
const STEP_MS = 30_000;
const ROUNDS_MS = 240_000;
const SUITE_MS = 300_000;

/** The PostgreSQL archive URL of a fresh schema, or the reason to skip. */
function postgresArchive() {
  const base = process.env.LD_TEST_PG_URL;
  const required = process.env.LD_REQUIRE_PG != null;
  if (base == null) {
    if (required) throw new Error('LD_REQUIRE_PG is set but LD_TEST_PG_URL is not');
    return { skip: 'LD_TEST_PG_URL is not set' };
  }
  const schema = `ld_interop_ryw_${process.pid}`;
  const sql = (text) => spawnSync('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', base, '-c', text],
    { encoding: 'utf8' });
  const made = sql(`SET client_min_messages = warning; DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
  if (made.error != null || made.status !== 0) {
    const why = made.error?.message ?? made.stderr.trim();
    if (required) throw new Error(`cannot make the PostgreSQL schema ${schema}: ${why}`);
    return { skip: `psql cannot make a schema: ${why}` };
  }
  const url = `${base}${base.includes('?') ? '&' : '?'}options=-csearch_path%3D${schema}`;
  return { url, drop: () => sql(`SET client_min_messages = warning; DROP SCHEMA IF EXISTS ${schema} CASCADE`) };
}

const BACKENDS = [
  { name: 'SQLite', archive: () => ({}) },
  { name: 'PostgreSQL', archive: postgresArchive },
];

for (const backend of BACKENDS) {
  const archive = NODE_SKIP ? { skip: NODE_SKIP } : backend.archive();
  describe(`publish (REST, light push), then a js-waku store query at once (${backend.name} archive)`,
    { skip: archive.skip ?? false, timeout: SUITE_MS }, () => {
      const shard = autoShard(CT, NUM_SHARDS);
      const topic = shardTopic(CLUSTER, shard);
      let node;
      let light;
      let relay; // light push answers SUCCESS only with a relay peer to pass the message to

      before(async () => {
        const opts = { path: NODE, clusterId: CLUSTER, numShardsInNetwork: NUM_SHARDS, logLevel: 'INFO' };
        node = await startServiceNode(archive.url == null ? opts
          : { ...opts, store: false, extraArgs: ['--store=true', `--store-message-db-url=${archive.url}`] });
        light = await createLight({ transport: 'tcp', clusterId: CLUSTER, numShardsInCluster: NUM_SHARDS });
        relay = await createRelayPeer({ listen: false, clusterId: CLUSTER, numShardsInCluster: NUM_SHARDS,
          contentTopics: [CT] });
      });

      after(async () => {
        await Promise.all([light, relay].filter(Boolean).map((p) => p.stop().catch(() => {})));
        await stopAll();
        await node?.stopped;
        archive.drop?.();
      });

      it('the light node connects and finds store and light push; a relay peer joins the mesh', { timeout: STEP_MS }, async () => {
        await node.rest.autoSubscribe([CT]);
        await relay.dial(node.addr);
        await relay.waitMesh(node.peerId, topic);
        await light.dial(node.addr);
        await light.waitForPeers([Protocols.Store, Protocols.LightPush], { timeoutMs: STEP_MS - 5_000 });
      });

      /** Publishes message i one of three ways, stamped now (the relay refuses messages more than
       * 20 s off its clock, and a loaded machine can take longer than that for all rounds);
       * resolves with its hash once the node answered. */
      async function publish(i) {
        const base = BigInt(Date.now()) * 1_000_000n;
        const payload = Buffer.from(`publish then query #${i}`);
        if (i % 3 === 2) {
          const sent = await light.send({ contentTopic: CT, payload, timestamp: new Date(Number(base / 1_000_000n) + i) });
          assert.deepEqual(sent.result, { successes: [node.peerId], failures: [] }, `round ${i}: light push`);
          assert.equal(sent.pubsubTopic, topic);
          return sent.hash;
        }
        const msg = { payload, contentTopic: CT, timestamp: base + BigInt(i) };
        const r = i % 3 === 0 ? await node.rest.autoPublish(msg) : await node.rest.publish(topic, msg);
        assert.equal(r.status, 200, `round ${i}: publish answered ${r.status} ${r.text}`);
        return wakuHash(topic, msg);
      }

      it(`${ROUNDS} times: the store query sent right after the publish's answer returns the message`,
        { timeout: ROUNDS_MS }, async () => {
          for (let i = 0; i < ROUNDS; i += 1) {
            const hash = await publish(i);
            const q = await light.storeQuery({ contentTopics: [CT], messageHashes: [Buffer.from(hash, 'hex')] });
            assert.deepEqual(q.messages.map((m) => [m.hash, m.messageHash, m.pubsubTopic]), [[hash, hash, topic]],
              `round ${i}: the store query right after the publish`);
            assert.equal(Buffer.from(q.messages[0].payload).toString(), `publish then query #${i}`);
          }
        });
    });
}
