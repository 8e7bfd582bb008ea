// The WebSocket transports of ld_testpeer against js-libp2p 2.8's @libp2p/websockets (js-waku's
// default transport): js dials our /ws and /wss listeners (a self-signed certificate made by
// ld_testpeer, not verified by js), and ld_testpeer dials js's /ws listener; Noise on top, mplex
// (js-waku's default) and yamux, pings and an echo whose SHA-256 must come back unchanged.
import './lib/node20-compat.mjs';

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { missing, runTestpeerDial, startTestpeer, stopAll, testpeerPath } from './lib/cpeer.mjs';
import { MUXER_PROTOCOLS, createPeer } from './lib/jspeer.mjs';

const TESTPEER = testpeerPath();
const SKIP = missing('ld_testpeer', TESTPEER);
const ECHO_BYTES = 4 * 1024 * 1024;
const PINGS = 3;
const STEP_MS = 30_000;
const ECHO_MS = 120_000;

function certArgs(dir) {
  return ['--tls-cert', join(dir, 'cert.pem'), '--tls-key', join(dir, 'key.pem'),
    '--tls-generate', 'localhost'];
}

for (const muxer of ['mplex', 'yamux']) {
  for (const scheme of ['ws', 'wss']) {
    describe(`js (${muxer}) dials ld_testpeer over /${scheme}`, { skip: SKIP, timeout: 300_000 }, () => {
      let dir;
      let c;
      let js;
      let conn;
      let target;

      before(async () => {
        dir = mkdtempSync(join(tmpdir(), 'ld-ws-'));
        c = await startTestpeer({
          key: 'ed25519',
          extraArgs: ['--ws-addr', `/ip4/127.0.0.1/tcp/0/${scheme}`, ...certArgs(dir)],
        });
        js = await createPeer({ muxer, listen: false, transports: ['ws'] });
      });

      after(async () => {
        await js?.stop();
        await stopAll();
        if (dir != null) rmSync(dir, { recursive: true, force: true });
      });

      it(`lists a /${scheme} listen address with its port`, () => {
        assert.match(c.addrs[0], /^\/ip4\/127\.0\.0\.1\/tcp\/\d+\/p2p\//, 'TCP stays first');
        target = c.addrs.find((a) => a.includes(`/${scheme}/p2p/`));
        assert.ok(target, `no /${scheme} address in ${JSON.stringify(c.addrs)}`);
        assert.match(target, new RegExp(`^/ip4/127\\.0\\.0\\.1/tcp/[1-9]\\d*/${scheme}/p2p/${c.peerId}$`));
      });

      it(`connects over /${scheme} with Noise and ${MUXER_PROTOCOLS[muxer]}`, { timeout: STEP_MS }, async () => {
        conn = await js.dial(target);
        assert.equal(conn.remotePeer.toString(), c.peerId);
        assert.equal(conn.encryption, '/noise');
        assert.equal(conn.multiplexer, MUXER_PROTOCOLS[muxer]);
        assert.ok(conn.remoteAddr.toString().includes(`/${scheme}`), conn.remoteAddr.toString());
        const ev = await c.proc.waitEvent('connected', { pred: (e) => e.peerId === js.peerId });
        assert.equal(ev.muxer, MUXER_PROTOCOLS[muxer], c.proc.describe());
        assert.equal(ev.outbound, false);
      });

      it('advertises the WebSocket address through identify', { timeout: STEP_MS }, async () => {
        const info = await js.identify(conn);
        const port = target.match(/\/tcp\/(\d+)\//)[1];
        assert.ok(info.listenAddrs.some((a) => a.includes(`/tcp/${port}/${scheme}`)),
          `listen addresses ${JSON.stringify(info.listenAddrs)} lack /tcp/${port}/${scheme}`);
      });

      it(`answers ${PINGS} pings`, { timeout: STEP_MS }, async (t) => {
        const rtts = await js.ping(conn, PINGS);
        assert.equal(rtts.length, PINGS);
        for (const rtt of rtts) assert.ok(Number.isFinite(rtt) && rtt >= 0, `rtt ${rtt}`);
        t.diagnostic(`ping rtt ms: ${rtts.join(' ')}`);
      });

      it(`echoes ${ECHO_BYTES} bytes intact`, { timeout: ECHO_MS }, async (t) => {
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
    });
  }
}

for (const muxer of ['mplex', 'yamux']) {
  describe(`ld_testpeer dials js over /ws (${muxer} only)`, { skip: SKIP, timeout: 300_000 }, () => {
    let js;
    let run;

    before(async () => {
      js = await createPeer({ muxer, listen: true, transports: ['ws'], listenAddr: '/ip4/127.0.0.1/tcp/0/ws' });
    });

    after(async () => {
      await js?.stop();
      await stopAll();
    });

    it('listens on /ws', () => {
      assert.match(js.addr, /^\/ip4\/127\.0\.0\.1\/tcp\/\d+\/ws\/p2p\//);
    });

    it(`runs a session with --ping ${PINGS} --echo-bytes ${ECHO_BYTES}`, { timeout: ECHO_MS }, async (t) => {
      const inbound = js.nextConnection({ timeoutMs: ECHO_MS });
      inbound.catch(() => {});
      run = await runTestpeerDial(js.addr, { ping: PINGS, echoBytes: ECHO_BYTES, timeout: 90,
        timeoutMs: ECHO_MS - 5_000 });
      const log = run.proc.describe();
      assert.equal(run.error, undefined, log);
      assert.equal(run.code, 0, log);
      assert.ok(run.done, `no done event\n${log}`);
      const conn = await inbound;
      assert.match(conn.remoteAddr.toString(), /^\/ip4\/127\.0\.0\.1\/tcp\/\d+/);
      t.diagnostic(`echo: ${JSON.stringify(run.echo)}`);
    });

    it('reports the connection, the muxer, pings and an intact echo', () => {
      assert.equal(run.connected?.peerId, js.peerId, run.proc.describe());
      assert.equal(run.connected.muxer, MUXER_PROTOCOLS[muxer]);
      assert.equal(run.connected.outbound, true);
      assert.equal(run.pings.length, PINGS, run.proc.describe());
      assert.equal(run.echo?.ok, true, run.proc.describe());
      assert.equal(run.echo.bytes, ECHO_BYTES);
    });
  });
}
