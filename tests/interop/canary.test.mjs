// `logosdelivery canary <multiaddr>` against js-libp2p peers: what it reports about a reachable
// peer, and how it fails on a closed port, a wrong peer ID, a silent listener and a missing protocol.
import './lib/node20-compat.mjs';

import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';

import { CANARY_EXIT, missing, nodePath, runCanary, stopAll } from './lib/cpeer.mjs';
import {
  ECHO_PROTOCOL, IDENTIFY_PROTOCOL, MUXER_PROTOCOLS, PING_PROTOCOL, createPeer,
} from './lib/jspeer.mjs';

const NODE = nodePath();
const SKIP = missing('logosdelivery', NODE);
const PINGS = 3;
const STEP_MS = 60_000;
const CANARY_TIMEOUT_S = 10;

function withoutP2p(ma) {
  return ma.replace(/\/p2p\/\w+$/, '');
}

function explain(run) {
  return `exit ${run.code}\n${run.proc.describe()}`;
}

/** A loopback TCP port nothing listens on (bound once, then released). */
async function closedPort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A loopback TCP listener that accepts connections and never writes a byte. */
async function silentListener() {
  const sockets = new Set();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

for (const muxer of ['yamux', 'mplex']) {
  describe(`canary against a js peer (${muxer})`, { skip: SKIP, timeout: 180_000 }, () => {
    let js;
    let run;
    let inbound;

    before(async () => {
      js = await createPeer({ muxer, listen: true, key: 'ed25519' });
    });

    after(async () => {
      await js?.stop();
      await stopAll();
    });

    it(`exits 0 with --ping ${PINGS}`, { timeout: STEP_MS }, async (t) => {
      inbound = js.nextConnection({ timeoutMs: STEP_MS }).then((conn) => ({ conn, info: js.identify(conn) }));
      inbound.catch(() => {});
      run = await runCanary(js.addr, { ping: PINGS, timeout: CANARY_TIMEOUT_S });
      assert.equal(run.code, CANARY_EXIT.ok, explain(run));
      assert.ok(run.result, `stdout is not one JSON object\n${explain(run)}`);
      t.diagnostic(`canary took ${run.ms.toFixed(0)} ms: ${JSON.stringify(run.result)}`);
    });

    it('reports the js peer, the connection and its muxer', () => {
      const r = run.result;
      assert.equal(r.peerId, js.peerId);
      assert.equal(r.connected, true);
      assert.equal(r.muxer, MUXER_PROTOCOLS[muxer]);
    });

    it('reports the js peer\'s identify', () => {
      const r = run.result;
      assert.match(r.agentVersion ?? '', /^js-libp2p\//);
      assert.equal(r.protocolVersion, 'ipfs/0.1.0');
      for (const p of [IDENTIFY_PROTOCOL, PING_PROTOCOL, ECHO_PROTOCOL]) {
        assert.ok(r.protocols?.includes(p), `protocols lack ${p}: ${JSON.stringify(r.protocols)}`);
      }
      const listen = withoutP2p(js.addr);
      assert.ok(r.listenAddrs?.some((a) => withoutP2p(a) === listen),
        `listenAddrs ${JSON.stringify(r.listenAddrs)} lack ${listen}`);
      assert.match(r.observedAddr ?? '', /^\/ip4\/127\.0\.0\.1\/tcp\/\d+/);
    });

    it(`reports ${PINGS} ping round trips`, () => {
      const { pings } = run.result;
      assert.equal(pings?.length, PINGS, JSON.stringify(pings));
      for (const rtt of pings) assert.ok(Number.isFinite(rtt) && rtt >= 0, `rtt ${rtt}`);
    });

    it('identifies itself to the js peer', { timeout: STEP_MS }, async () => {
      const { conn, info: identifying } = await inbound;
      const info = await identifying;
      assert.match(info.agentVersion ?? '', /^logosdelivery\//);
      assert.equal(info.publicKeyPeerId, conn.remotePeer.toString());
    });
  });
}

describe('canary failures', { skip: SKIP, timeout: 180_000 }, () => {
  let js;
  let other;

  before(async () => {
    js = await createPeer({ muxer: ['yamux', 'mplex'], listen: true, key: 'ed25519' });
    other = await createPeer({ listen: false, key: 'secp256k1' });
  });

  after(async () => {
    await js?.stop();
    await other?.stop();
    await stopAll();
  });

  it('exits 2 with a message on a closed port', { timeout: STEP_MS }, async () => {
    const port = await closedPort();
    const run = await runCanary(`/ip4/127.0.0.1/tcp/${port}/p2p/${js.peerId}`, { timeout: CANARY_TIMEOUT_S });
    assert.notEqual(run.code, 0, explain(run));
    assert.equal(run.code, CANARY_EXIT.unreachable, explain(run));
    assert.match(run.stderr, /refused|unreachable|connect/i, explain(run));
  });

  it('exits 3 with a message when the peer proves another ID', { timeout: STEP_MS }, async () => {
    const run = await runCanary(`${withoutP2p(js.addr)}/p2p/${other.peerId}`, { timeout: CANARY_TIMEOUT_S });
    assert.notEqual(run.code, 0, explain(run));
    assert.equal(run.code, CANARY_EXIT.handshake, explain(run));
    assert.match(run.stderr, /peer|identity|mismatch|unexpected/i, explain(run));
  });

  it('exits 5 when the listener never answers', { timeout: STEP_MS }, async () => {
    const silent = await silentListener();
    try {
      const run = await runCanary(`/ip4/127.0.0.1/tcp/${silent.port}/p2p/${js.peerId}`, { timeout: 2 });
      assert.equal(run.code, CANARY_EXIT.timeout, explain(run));
      assert.ok(run.stderr.trim().length > 0, explain(run));
      assert.ok(run.ms < 15_000, `took ${run.ms} ms with --timeout 2`);
    } finally {
      await silent.close();
    }
  });

  it('exits 4 when the peer does not serve ping', { timeout: STEP_MS }, async () => {
    const noPing = await createPeer({ muxer: 'yamux', listen: true, ping: false });
    try {
      const run = await runCanary(noPing.addr, { ping: 1, timeout: CANARY_TIMEOUT_S });
      assert.equal(run.code, CANARY_EXIT.unsupported, explain(run));
      assert.match(run.stderr, /ping|protocol|support/i, explain(run));
    } finally {
      await noPing.stop();
    }
  });
});
