// The harness itself, with js-libp2p on both ends: the peer factory and its helpers, and the
// process helpers driving lib/jspeer-cli.mjs, which speaks the command-line contract of
// ld_testpeer, of `logosdelivery canary` and of the node's listen log line.
import './lib/node20-compat.mjs';

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import {
  CANARY_EXIT, JSPEER_CLI, runCanary, runTestpeerDial, startNode, startTestpeer, stopAll,
} from './lib/cpeer.mjs';
import { MUXER_PROTOCOLS, createPeer, peerIdFromHexKey } from './lib/jspeer.mjs';

const MIB = 1024 * 1024;
const NODEKEY = '0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0';

describe('harness self-test (js on both ends)', { concurrency: true, timeout: 30_000 }, () => {
  const peers = [];
  const peer = async (opts) => {
    const p = await createPeer(opts);
    peers.push(p);
    return p;
  };

  after(async () => {
    await Promise.all(peers.map((p) => p.stop()));
    await stopAll();
  });

  it('jspeer: dial, identify, peer store, ping and echo in process', async () => {
    const server = await peer({ muxer: 'mplex', key: 'secp256k1' });
    const client = await peer({ muxer: 'mplex', listen: false });
    const conn = await client.dial(server.addr);
    assert.equal(conn.multiplexer, MUXER_PROTOCOLS.mplex);
    const info = await client.identify(conn);
    assert.equal(info.publicKeyPeerId, server.peerId);
    assert.match(info.agentVersion, /^js-libp2p\//);
    const back = await server.waitForPeerInfo(client.peerId);
    assert.ok(back.protocols.includes('/ld/echo/1.0.0'));
    assert.equal((await client.ping(conn, 1)).length, 1);
    const r = await client.echo(conn, MIB, { streams: 2 });
    assert.ok(r.ok);
    await assert.rejects(client.dial(`${server.addr.split('/p2p/')[0]}/p2p/${peerIdFromHexKey(NODEKEY)}`),
      { name: 'UnexpectedPeerError' });
  });

  it('cpeer: listen events from a spawned peer', async () => {
    const c = await startTestpeer({ key: 'ed25519', path: JSPEER_CLI });
    const js = await peer({ muxer: 'yamux', listen: false });
    const conn = await js.dial(c.addr);
    const connected = await c.proc.waitEvent('connected', { pred: (e) => e.peerId === js.peerId });
    assert.equal(connected.muxer, MUXER_PROTOCOLS.yamux);
    const identified = await c.proc.waitEvent('identified');
    assert.match(identified.agentVersion, /^js-libp2p\//);
    await conn.close();
    await c.proc.waitEvent('disconnected');
    assert.equal((await c.proc.stop()).killed, undefined);
  });

  it('cpeer: a dial session from a spawned peer', async () => {
    const js = await peer({ muxer: 'yamux', key: 'ed25519' });
    const run = await runTestpeerDial(js.addr, { ping: 2, echoBytes: MIB, path: JSPEER_CLI });
    assert.equal(run.code, 0, run.proc.describe());
    assert.equal(run.connected.peerId, js.peerId);
    assert.equal(run.pings.length, 2);
    assert.equal(run.echo.ok, true);
    assert.ok(run.done);
  });

  it('cpeer: node listen line, peer ID from --nodekey, SIGTERM', async () => {
    const node = await startNode({ nodekey: NODEKEY, path: JSPEER_CLI });
    assert.equal(node.peerId, peerIdFromHexKey(NODEKEY));
    assert.equal((await node.proc.stop()).code, 0);
  });

  it('cpeer: canary result', async () => {
    const js = await peer({ muxer: 'mplex', key: 'ed25519' });
    const run = await runCanary(js.addr, { ping: 1, path: JSPEER_CLI });
    assert.equal(run.code, CANARY_EXIT.ok, run.proc.describe());
    assert.equal(run.result.peerId, js.peerId);
    assert.equal(run.result.pings.length, 1);
  });
});
