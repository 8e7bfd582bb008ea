// The node program `logosdelivery` with nwaku's flags: its peer ID comes from --nodekey exactly as
// js-libp2p derives it, it logs its listen multiaddr, js peers dial, identify and ping it, and it
// stops cleanly on SIGTERM and SIGINT.
import './lib/node20-compat.mjs';

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { LISTEN_ADDR_RE, missing, nodePath, startNode, stopAll } from './lib/cpeer.mjs';
import { IDENTIFY_PROTOCOL, MUXER_PROTOCOLS, PING_PROTOCOL, createPeer, peerIdFromHexKey } from './lib/jspeer.mjs';

const NODE = nodePath();
const SKIP = missing('logosdelivery', NODE);
const NODEKEY = '5a0ab2f71f2a6b1e4c5d7b2f9e3c1a08d4b6e2f7c9a1b3d5e7f90213a4c6e8b1';
const STEP_MS = 30_000;

describe('logosdelivery node', { skip: SKIP, timeout: 180_000 }, () => {
  const expected = peerIdFromHexKey(NODEKEY);
  let node;
  const peers = [];

  before(async () => {
    node = await startNode({ nodekey: NODEKEY });
  });

  after(async () => {
    await Promise.all(peers.map((p) => p.stop()));
    await stopAll();
  });

  it('logs a loopback listen multiaddr with the peer ID of its --nodekey', () => {
    assert.ok(expected.startsWith('16Uiu2HA'), `js derived ${expected}`);
    assert.equal(node.peerId, expected, node.proc.describe());
    assert.match(node.addr, /^\/ip4\/127\.0\.0\.1\/tcp\/[1-9]\d*\/p2p\//);
  });

  for (const muxer of ['yamux', 'mplex']) {
    it(`is dialed, identified and pinged by js over ${muxer}`, { timeout: STEP_MS }, async () => {
      const js = await createPeer({ muxer, listen: false });
      peers.push(js);
      const conn = await js.dial(node.addr);
      assert.equal(conn.remotePeer.toString(), expected);
      assert.equal(conn.multiplexer, MUXER_PROTOCOLS[muxer]);
      const info = await js.identify(conn);
      assert.match(info.agentVersion ?? '', /^logosdelivery\//);
      assert.equal(info.protocolVersion, 'ipfs/0.1.0');
      for (const p of [IDENTIFY_PROTOCOL, PING_PROTOCOL]) {
        assert.ok(info.protocols.includes(p), `protocols lack ${p}: ${JSON.stringify(info.protocols)}`);
      }
      assert.equal(info.publicKeyPeerId, expected);
      const rtts = await js.ping(conn, 3);
      assert.equal(rtts.length, 3);
      await conn.close();
    });
  }

  it('exits 0 on SIGTERM', { timeout: STEP_MS }, async () => {
    const status = await node.proc.stop({ signal: 'SIGTERM', graceMs: 10_000 });
    assert.equal(status.killed, undefined, `needed SIGKILL\n${node.proc.describe()}`);
    assert.equal(status.code, 0, node.proc.describe());
  });
});

describe('logosdelivery node with --log-format=json', { skip: SKIP, timeout: 60_000 }, () => {
  let node;

  before(async () => {
    node = await startNode({ nodekey: NODEKEY, logFormat: 'json' });
  });

  after(() => stopAll());

  it('logs the listen address in a JSON line', () => {
    const line = node.proc.lines.find((l) => LISTEN_ADDR_RE.test(l.text));
    assert.ok(line?.json, `not a JSON object: ${line?.text}`);
    assert.equal(node.peerId, peerIdFromHexKey(NODEKEY));
  });

  it('exits 0 on SIGINT', { timeout: STEP_MS }, async () => {
    const status = await node.proc.stop({ signal: 'SIGINT', graceMs: 10_000 });
    assert.equal(status.killed, undefined, `needed SIGKILL\n${node.proc.describe()}`);
    assert.equal(status.code, 0, node.proc.describe());
  });
});
