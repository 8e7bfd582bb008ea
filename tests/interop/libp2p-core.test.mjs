// The libp2p core of ld_testpeer against js-libp2p 2.8: TCP + Noise + yamux or mplex, identify,
// ping and a 10 MiB echo, with js dialing the C peer and the C peer dialing js.
import './lib/node20-compat.mjs';

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { missing, runTestpeerDial, startTestpeer, stopAll, testpeerPath } from './lib/cpeer.mjs';
import {
  ECHO_PROTOCOL, IDENTIFY_PROTOCOL, MUXER_PROTOCOLS, PING_PROTOCOL, createPeer,
} from './lib/jspeer.mjs';

const TESTPEER = testpeerPath();
const SKIP = missing('ld_testpeer', TESTPEER);
const ECHO_BYTES = 10 * 1024 * 1024;
const PINGS = 5;
const OUR_PROTOCOLS = [IDENTIFY_PROTOCOL, PING_PROTOCOL, ECHO_PROTOCOL];
const KEY_PREFIX = { ed25519: '12D3KooW', secp256k1: '16Uiu2HA' };
const STEP_MS = 30_000;
const ECHO_MS = 120_000;

function assertProtocols(list, where) {
  for (const p of OUR_PROTOCOLS) assert.ok(list?.includes(p), `${where} lacks ${p}: ${JSON.stringify(list)}`);
}

function portOf(ma) {
  return ma.match(/\/tcp\/(\d+)/)?.[1];
}

for (const muxer of ['yamux', 'mplex']) {
  for (const key of ['secp256k1', 'ed25519']) {
    describe(`js (${muxer}) dials ld_testpeer (${key})`, { skip: SKIP, timeout: 300_000 }, () => {
      let c;
      let js;
      let conn;

      before(async () => {
        c = await startTestpeer({ key });
        js = await createPeer({ muxer, listen: false, key: 'ed25519' });
      });

      after(async () => {
        await js?.stop();
        await stopAll();
      });

      it('prints a listening event with a loopback address and a peer ID of its key type', () => {
        assert.ok(c.peerId.startsWith(KEY_PREFIX[key]), `peer ID ${c.peerId} is not ${key}`);
        assert.match(c.addr, new RegExp(`^/ip4/127\\.0\\.0\\.1/tcp/[1-9]\\d*/p2p/${c.peerId}$`));
      });

      it(`connects over Noise with ${MUXER_PROTOCOLS[muxer]}`, { timeout: STEP_MS }, async () => {
        conn = await js.dial(c.addr);
        assert.equal(conn.remotePeer.toString(), c.peerId);
        assert.equal(conn.encryption, '/noise');
        assert.equal(conn.multiplexer, MUXER_PROTOCOLS[muxer]);
        const ev = await c.proc.waitEvent('connected', { pred: (e) => e.peerId === js.peerId });
        assert.equal(ev.muxer, MUXER_PROTOCOLS[muxer], c.proc.describe());
        assert.equal(ev.outbound, false);
      });

      it('identifies itself to js', { timeout: STEP_MS }, async () => {
        const info = await js.identify(conn);
        assert.match(info.agentVersion ?? '', /^logosdelivery\//);
        assert.equal(info.protocolVersion, 'ipfs/0.1.0');
        assertProtocols(info.protocols, 'identify');
        assert.equal(info.publicKeyPeerId, c.peerId, 'the identify public key hashes to another peer ID');
        assert.ok(info.listenAddrs.length > 0, 'no listen addresses');
        assert.ok(info.listenAddrs.some((a) => portOf(a) === portOf(c.addr)),
          `listen addresses ${info.listenAddrs} lack port ${portOf(c.addr)}`);
        if (info.observedAddr != null) assert.match(info.observedAddr, /^\/ip4\/127\.0\.0\.1\/tcp\/\d+/);
        const stored = await js.peerInfo(c.peerId);
        assert.equal(stored.agentVersion, info.agentVersion);
        assert.equal(stored.protocolVersion, 'ipfs/0.1.0');
        assertProtocols(stored.protocols, 'peer store');
        assert.ok(stored.addresses.length > 0, 'peer store has no addresses');
      });

      it('identifies js', { timeout: STEP_MS }, async () => {
        const ev = await c.proc.waitEvent('identified', { pred: (e) => e.peerId === js.peerId });
        assert.match(ev.agentVersion ?? '', /^js-libp2p\//, c.proc.describe());
        assert.equal(ev.protocolVersion, 'ipfs/0.1.0');
        assertProtocols(ev.protocols, 'the identified event');
        assert.ok(Array.isArray(ev.listenAddrs), 'listenAddrs is not a list');
        assert.match(ev.observedAddr ?? '', /^\/ip4\/127\.0\.0\.1\/tcp\/\d+/);
      });

      it(`answers ${PINGS} pings`, { timeout: STEP_MS }, async (t) => {
        const rtts = await js.ping(conn, PINGS);
        assert.equal(rtts.length, PINGS);
        for (const rtt of rtts) assert.ok(Number.isFinite(rtt) && rtt >= 0, `rtt ${rtt}`);
        t.diagnostic(`ping rtt ms: ${rtts.join(' ')}`);
      });

      it('echoes 10 MiB intact', { timeout: ECHO_MS }, async (t) => {
        const r = await js.echo(conn, ECHO_BYTES, { timeoutMs: ECHO_MS - 5_000 });
        const [one] = r.results;
        assert.equal(one.received, ECHO_BYTES, 'echoed byte count');
        assert.equal(one.back, one.sent, 'SHA-256 of the echoed bytes');
        assert.ok(r.ok);
        t.diagnostic(`echo ${ECHO_BYTES} B in ${r.ms.toFixed(0)} ms (${r.mbps.toFixed(1)} MB/s)`);
      });

      it('reports the disconnect', { timeout: STEP_MS }, async () => {
        await conn.close();
        const ev = await c.proc.waitEvent('disconnected', { pred: (e) => e.peerId === js.peerId });
        assert.equal(typeof ev.reason, 'string');
      });

      it('exits on SIGTERM', { timeout: STEP_MS }, async () => {
        const status = await c.proc.stop();
        assert.equal(status.killed, undefined, `needed SIGKILL\n${c.proc.describe()}`);
      });
    });
  }
}

const DIALER_KEYS = { yamux: 'ed25519', mplex: 'secp256k1' };

for (const muxer of ['yamux', 'mplex']) {
  describe(`ld_testpeer dials js (${muxer} only, ${DIALER_KEYS[muxer]})`, { skip: SKIP, timeout: 300_000 }, () => {
    let js;
    let run;
    let inbound;

    before(async () => {
      js = await createPeer({ muxer, listen: true, key: DIALER_KEYS[muxer] });
    });

    after(async () => {
      await js?.stop();
      await stopAll();
    });

    it(`runs a session with --ping ${PINGS} --echo-bytes ${ECHO_BYTES}`, { timeout: ECHO_MS }, async (t) => {
      // Identify starts when the connection opens; keep its outcome past the disconnect.
      inbound = js.nextConnection({ timeoutMs: ECHO_MS }).then((conn) => ({ conn, info: js.identify(conn) }));
      inbound.catch(() => {});
      run = await runTestpeerDial(js.addr, { ping: PINGS, echoBytes: ECHO_BYTES, timeout: 90,
        timeoutMs: ECHO_MS - 5_000 });
      const log = run.proc.describe();
      assert.equal(run.error, undefined, log);
      assert.equal(run.code, 0, log);
      assert.ok(run.done, `no done event\n${log}`);
      t.diagnostic(`echo: ${JSON.stringify(run.echo)}`);
    });

    it('reports the connection and the muxer js offered', () => {
      assert.equal(run.connected?.peerId, js.peerId, run.proc.describe());
      assert.equal(run.connected.muxer, MUXER_PROTOCOLS[muxer]);
      assert.equal(run.connected.outbound, true);
    });

    it('reports js identify data', () => {
      const id = run.identified;
      assert.equal(id?.peerId, js.peerId, run.proc.describe());
      assert.match(id.agentVersion ?? '', /^js-libp2p\//);
      assert.equal(id.protocolVersion, 'ipfs/0.1.0');
      assertProtocols(id.protocols, 'the identified event');
      assert.ok(id.listenAddrs?.some((a) => portOf(a) === portOf(js.addr)),
        `listen addresses ${JSON.stringify(id.listenAddrs)} lack port ${portOf(js.addr)}`);
      assert.match(id.observedAddr ?? '', /^\/ip4\/127\.0\.0\.1\/tcp\/\d+/);
    });

    it(`reports ${PINGS} pings and an intact echo`, () => {
      assert.equal(run.pings.length, PINGS, run.proc.describe());
      for (const rtt of run.pings) assert.ok(Number.isFinite(rtt) && rtt >= 0, `rtt ${rtt}`);
      assert.equal(run.echo?.ok, true, run.proc.describe());
      assert.equal(run.echo.bytes, ECHO_BYTES);
      assert.equal(run.echo.streams ?? 1, 1);
    });

    it('is identified by js as logosdelivery', { timeout: STEP_MS }, async () => {
      const { conn, info: identifying } = await inbound;
      const info = await identifying;
      assert.match(info.agentVersion ?? '', /^logosdelivery\//);
      assert.equal(info.protocolVersion, 'ipfs/0.1.0');
      assertProtocols(info.protocols, 'identify');
      assert.equal(info.publicKeyPeerId, conn.remotePeer.toString());
      const stored = await js.peerInfo(conn.remotePeer.toString());
      assert.equal(stored.agentVersion, info.agentVersion);
      assertProtocols(stored.protocols, 'peer store');
    });
  });
}
