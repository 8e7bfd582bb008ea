// A handful of relay node processes driven only through nwaku's REST API: started with
// startRelayNode, connected through POST /admin/v1/peers or --staticnode, checked through
// GET /admin/v1/peers, fed through POST /relay/v1/messages/{pubsubTopic} or
// /relay/v1/auto/messages, and read back through the matching GET (which returns what arrived
// since the previous GET). Every message read back is counted per node by its deterministic
// hash, so losses and duplicates show; the hashes the nodes log ("sent relay message" /
// "received relay message … msg_hash=0x…") are collected beside them.
import './node20-compat.mjs';

import { setTimeout as delay } from 'node:timers/promises';

import { startRelayNode } from './relaynode.mjs';
import { autoTopic, shardTopic, wakuHash } from './wakupeer.mjs';

const HASH_RE = /msg_hash["=:\s]+(?:0x)?([0-9a-fA-F]{64})/;
const RECEIVED_RE = /received relay message/i;
const SENT_RE = /sent relay message/i;
const POLL_MS = 100;

/**
 * The network of a fleet. `kind`: 'static' (a shard of `clusterId`) or 'auto' (autosharding over
 * `numShards`, the shard given by `contentTopic`). Returns {kind, clusterId, shard,
 * numShards?, contentTopic, topic (pubsub), nodeOpts (for startRelayNode)}.
 */
export function fleetNetwork({ kind, clusterId, shard, numShards, contentTopic }) {
  if (kind === 'auto') {
    const topic = autoTopic(contentTopic, clusterId, numShards);
    const autoShardIndex = Number(topic.split('/').pop());
    return { kind, clusterId, shard: autoShardIndex, numShards, contentTopic, topic,
      nodeOpts: { clusterId, numShardsInNetwork: numShards, shards: [autoShardIndex] } };
  }
  return { kind, clusterId, shard, contentTopic, topic: shardTopic(clusterId, shard),
    nodeOpts: { clusterId, shards: [shard] } };
}

function peerIdOf(addr) {
  return addr.split('/p2p/').pop();
}

/** Whether an entry of GET /admin/v1/peers describes a connected relay peer. */
function connectedRelayPeer(entry, relayCodec) {
  const connected = entry?.connected === true || /^connected$/i.test(String(entry?.connected ?? ''));
  const protocols = (entry?.protocols ?? []).map((p) => (typeof p === 'string' ? p : p?.protocol));
  return connected && protocols.includes(relayCodec);
}

/** One node of the fleet with what its REST GETs returned, counted by message hash. */
class FleetMember {
  constructor(index, node, net) {
    this.index = index;
    this.node = node;
    this.net = net;
    this.counts = new Map(); // hash -> times returned by GET
    this.messages = new Map(); // hash -> first message returned with it
  }

  get rest() {
    return this.node.rest;
  }

  /** One GET of the fleet's topic; counts what came back. Resolves with the number of messages. */
  async poll() {
    const got = this.net.kind === 'auto'
      ? await this.rest.autoMessages(this.net.contentTopic)
      : await this.rest.messages(this.net.topic);
    for (const m of got) {
      const h = wakuHash(this.net.topic, m);
      this.counts.set(h, (this.counts.get(h) ?? 0) + 1);
      if (!this.messages.has(h)) this.messages.set(h, m);
    }
    this.rest.inbox.clear(); // counted here; the client need not keep them too
    return got.length;
  }

  /** POST of `msg` on the fleet's topic; resolves with {status, text}. */
  publish(msg) {
    return this.net.kind === 'auto' ? this.rest.autoPublish(msg) : this.rest.publish(this.net.topic, msg);
  }

  /** Hashes this node logged as sent or received: {sent: Map, received: Map} hash -> lines. */
  loggedHashes() {
    const sent = new Map();
    const received = new Map();
    for (const { text } of this.node.proc.lines) {
      const into = RECEIVED_RE.test(text) ? received : SENT_RE.test(text) ? sent : null;
      const m = into == null ? null : text.match(HASH_RE);
      if (m != null) {
        const h = m[1].toLowerCase();
        into.set(h, (into.get(h) ?? 0) + 1);
      }
    }
    return { sent, received };
  }

  describe() {
    return `node ${this.index}: ${this.node.describe()}`;
  }
}

/**
 * `count` relay nodes of network `net` (from fleetNetwork). opts: path, extraArgs (every
 * node), topology: 'admin' (node i asks for node i+1 through POST /admin/v1/peers) or
 * 'staticnode' (node i is started with --staticnode=<node i-1>, node 0 asks for the last one
 * through POST /admin/v1/peers); either way a ring.
 */
export class RestFleet {
  constructor(net, { count = 5, path, extraArgs = [], topology = 'admin', relayCodec = '/vac/waku/relay/2.0.0' } = {}) {
    this.net = net;
    this.count = count;
    this.path = path;
    this.extraArgs = extraArgs;
    this.topology = topology;
    this.relayCodec = relayCodec;
    this.members = [];
  }

  async startOne(extra = []) {
    const node = await startRelayNode({ path: this.path, restAdmin: true, ...this.net.nodeOpts,
      extraArgs: [...this.extraArgs, ...extra] });
    const member = new FleetMember(this.members.length, node, this.net);
    this.members.push(member);
    if (this.net.kind === 'auto') await node.rest.autoSubscribe([this.net.contentTopic]);
    return member;
  }

  /** Starts the nodes and makes the ring. */
  async start() {
    if (this.topology === 'staticnode') {
      for (let i = 0; i < this.count; i++) {
        await this.startOne(i === 0 ? [] : [`--staticnode=${this.members[i - 1].node.addr}`]);
      }
      await this.members[0].rest.addPeers([this.members[this.count - 1].node.addr]);
      return;
    }
    for (let i = 0; i < this.count; i++) await this.startOne();
    await Promise.all(this.members.map((m, i) => m.rest.addPeers([this.members[(i + 1) % this.count].node.addr])));
  }

  /** Ring neighbours of member i (peer IDs). */
  neighbours(i) {
    const n = this.count;
    return [...new Set([(i + n - 1) % n, (i + 1) % n])].filter((j) => j !== i)
      .map((j) => peerIdOf(this.members[j].node.addr));
  }

  /**
   * Polls GET /admin/v1/peers on every node until it lists both ring neighbours as connected
   * relay peers; rejects after timeoutMs with what the nodes answered last.
   */
  async waitConnected({ timeoutMs = 30_000 } = {}) {
    const deadline = Date.now() + timeoutMs;
    const last = new Array(this.count).fill('');
    for (;;) {
      const done = await Promise.all(this.members.map(async (m, i) => {
        const r = await m.rest.ok('GET', '/admin/v1/peers');
        last[i] = r.text;
        const list = Array.isArray(r.json) ? r.json : [];
        return this.neighbours(i).every((id) => list.some((e) => String(e?.multiaddr ?? '').includes(id)
          && connectedRelayPeer(e, this.relayCodec)));
      }));
      if (done.every(Boolean)) return;
      if (Date.now() > deadline) {
        throw new Error(`ring not connected within ${timeoutMs} ms; GET /admin/v1/peers answered:\n`
          + last.map((t, i) => `  node ${i} (expects ${this.neighbours(i).join(', ')}): ${t.slice(0, 1500)}`).join('\n'));
      }
      await delay(POLL_MS);
    }
  }

  /** One GET on every node. */
  pollAll() {
    return Promise.all(this.members.map((m) => m.poll()));
  }

  /** Whether every node has returned each of `hashes` at least once. */
  allArrived(hashes) {
    return this.members.every((m) => hashes.every((h) => m.counts.has(h)));
  }

  /**
   * Polls every node until each has returned all of `hashes`, or until timeoutMs; resolves
   * with whether they all arrived.
   */
  async waitArrived(hashes, { timeoutMs }) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await this.pollAll();
      if (this.allArrived(hashes)) return true;
      if (Date.now() > deadline) return false;
      await delay(POLL_MS);
    }
  }

  /**
   * Waits until the mesh relays: in rounds, every node publishes a probe (made by
   * `makeProbe(round, index)`) and the round succeeds once every probe came back from every
   * node's GET. Resolves with {rounds, probes (all probe hashes)}; rejects after timeoutMs.
   */
  async waitMesh(makeProbe, { timeoutMs = 60_000, roundMs = 2_000 } = {}) {
    const deadline = Date.now() + timeoutMs;
    const probes = [];
    for (let round = 1; ; round++) {
      const hashes = [];
      const refused = [];
      for (const m of this.members) {
        const msg = makeProbe(round, m.index);
        const r = await m.publish(msg);
        // A node may refuse to publish while it has no relay peer yet: that round fails.
        if (r.status === 200) hashes.push(wakuHash(this.net.topic, msg));
        else refused.push(`node ${m.index} answered ${r.status}: ${r.text.slice(0, 200)}`);
      }
      probes.push(...hashes);
      const left = deadline - Date.now();
      if (await this.waitArrived(hashes, { timeoutMs: Math.max(0, Math.min(roundMs, left)) }) && refused.length === 0) {
        return { rounds: round, probes };
      }
      if (Date.now() > deadline) {
        const missingAt = this.members.map((m) => `node ${m.index}: ${hashes.filter((h) => !m.counts.has(h)).length} of ${hashes.length} probes missing`);
        throw new Error(`the mesh did not relay probes within ${timeoutMs} ms (${round} rounds)\n`
          + `${[...refused, ...missingAt].join('\n')}\n${this.members.map((m) => m.describe()).join('\n')}`);
      }
      if (refused.length > 0) await delay(POLL_MS * 5);
    }
  }

  /**
   * Publishes `msgs` round-robin over the nodes (message k through node k mod count), at most
   * `inflight` REST calls at once, while polling every node's GET. Resolves with
   * [{hash, origin, msg, status, text}] in publishing order.
   */
  async publishSpread(msgs, { inflight = 8 } = {}) {
    const results = new Array(msgs.length);
    let next = 0;
    let publishing = true;
    let pollError = null;
    const worker = async () => {
      while (next < msgs.length) {
        const k = next++;
        const member = this.members[k % this.count];
        const r = await member.publish(msgs[k]);
        results[k] = { hash: wakuHash(this.net.topic, msgs[k]), origin: member.index, msg: msgs[k], status: r.status, text: r.text };
      }
    };
    const poller = (async () => {
      while (publishing) {
        await this.pollAll();
        await delay(POLL_MS);
      }
    })().catch((err) => {
      pollError = err;
    });
    try {
      await Promise.all(Array.from({ length: inflight }, worker));
    } finally {
      publishing = false;
      await poller;
    }
    if (pollError != null) throw pollError;
    return results;
  }

  async stop() {
    return Promise.all(this.members.map((m) => m.node.stop()));
  }
}
