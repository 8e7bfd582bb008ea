// The store's three functions switched off one at a time, seen by today's client: a js-waku light
// node (@waku/sdk createLightNode, tcp) queries store nodes of the node program that archive the
// same message (published through nwaku's REST). js-waku's queries carry include_data, so a
// content query needs wayback and key-value and a hash query key-value (README: the store's
// three functions). With --store-key-value=false both are refused; with --store-wayback=false
// only the content query is, and the hash query still returns the message; with
// --store-key-presence=false (js-waku never asks presence) both are served. A refusal reaches
// js-waku as its "Store query failed" error with status 503 and the node's description, never as
// silence or an empty answer. Skipped when LD_BIN is unset.
import './lib/node20-compat.mjs';

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import { missing, nodePath, stopAll } from './lib/cpeer.mjs';
import { Protocols, createLight, startServiceNode } from './lib/lightnode.mjs';
import { autoShard, shardTopic, wakuHash } from './lib/wakupeer.mjs';

const NODE = nodePath();
const NODE_SKIP = missing('logosdelivery', NODE);

const CLUSTER = 42;
const NUM_SHARDS = 8;
const CT = '/ld-functions/1/store/proto';
const STEP_MS = 30_000;
const SUITE_MS = 180_000;

const CASES = [
  { flag: '--store-key-value=false', content: 'key-value', hash: 'key-value' },
  { flag: '--store-wayback=false', content: 'wayback', hash: null },
  { flag: '--store-key-presence=false', content: null, hash: null },
];

describe('store functions switched off, queried by js-waku', { skip: NODE_SKIP ?? false, timeout: SUITE_MS }, () => {
  const shard = autoShard(CT, NUM_SHARDS);
  const topic = shardTopic(CLUSTER, shard);
  const peers = [];

  after(async () => {
    await Promise.all(peers.map((p) => p.stop().catch(() => {})));
    await stopAll();
  });

  /** Resolves with the query's messages, or with the error js-waku threw. */
  async function outcome(light, opts) {
    try {
      return { messages: (await light.storeQuery({ contentTopics: [CT], shard, ...opts })).messages };
    } catch (err) {
      return { error: err };
    }
  }

  function expect(result, refused, what, hash) {
    if (refused == null) {
      assert.equal(result.error, undefined, `${what}: ${result.error?.message}`);
      assert.deepEqual(result.messages.map((m) => m.hash), [hash], what);
      return;
    }
    assert.ok(result.error != null, `${what}: answered ${result.messages?.map((m) => m.hash).join(", ") || "no message"}`);
    assert.match(result.error.message,
      new RegExp(`status code: 503, description: SERVICE_UNAVAILABLE: not supported by this store node: ${refused}$`),
      what);
  }

  for (const c of CASES) {
    it(`${c.flag}: js-waku gets what is enabled, and 503 for the rest`, { timeout: STEP_MS * 3 }, async () => {
      const node = await startServiceNode({ path: NODE, clusterId: CLUSTER, numShardsInNetwork: NUM_SHARDS,
        lightpush: false, filter: false, extraArgs: [c.flag] });
      const light = await createLight({ transport: 'tcp', clusterId: CLUSTER, numShardsInCluster: NUM_SHARDS });
      peers.push(light);
      await node.rest.autoSubscribe([CT]);
      const msg = { payload: Buffer.from(`functions ${c.flag}`), contentTopic: CT,
        timestamp: BigInt(Date.now()) * 1_000_000n };
      const r = await node.rest.autoPublish(msg);
      assert.equal(r.status, 200, `publish answered ${r.status} ${r.text}`);
      const hash = wakuHash(topic, msg);
      await light.dial(node.addr);
      await light.waitForPeers([Protocols.Store], { timeoutMs: STEP_MS - 5_000 });
      expect(await outcome(light, {}), c.content, 'content query', hash);
      expect(await outcome(light, { messageHashes: [Buffer.from(hash, 'hex')] }), c.hash, 'hash query', hash);
      await light.stop();
      await node.stop();
    });
  }
});
