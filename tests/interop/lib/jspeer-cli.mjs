#!/usr/bin/env node
// The command-line contract of ld_testpeer (and of `logosdelivery canary` and the node's listen
// log line) implemented on js-libp2p, for js baselines in the benchmarks and the harness self-test.
//
//   jspeer-cli.mjs listen [--key ed25519|secp256k1] [--addr MA] [--muxers yamux,mplex] [--agent S]
//   jspeer-cli.mjs dial MA [--key …] [--muxers …] [--ping N] [--echo-bytes N] [--echo-streams K]
//                          [--timeout S] [--agent S]
//   jspeer-cli.mjs canary MA [--ping N] [--timeout S] [--muxers …]
//   jspeer-cli.mjs --nodekey=HEX --listen-address=IP --tcp-port=N [--log-format=json|text]
//
// --muxers lists the muxers offered, in order of preference (default yamux,mplex).
// listen and dial print one JSON event per line on stdout; listen stops on SIGTERM, SIGINT or
// end of stdin.
import './node20-compat.mjs';

import { parseArgs } from 'node:util';

import { createPeer, privateKeyFromHex, withTimeout } from './jspeer.mjs';

const OPTIONS = {
  key: { type: 'string', default: 'ed25519' },
  addr: { type: 'string', default: '/ip4/127.0.0.1/tcp/0' },
  muxers: { type: 'string', default: 'yamux,mplex' },
  'log-level': { type: 'string' },
  agent: { type: 'string' },
  ping: { type: 'string', default: '0' },
  'echo-bytes': { type: 'string', default: '0' },
  'echo-streams': { type: 'string', default: '1' },
  timeout: { type: 'string', default: '60' },
  nodekey: { type: 'string' },
  'listen-address': { type: 'string', default: '0.0.0.0' },
  'tcp-port': { type: 'string', default: '60000' },
  'log-format': { type: 'string', default: 'text' },
};

const emit = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);

function muxers(list) {
  return list.split(',').filter((m) => m !== '');
}

function connectedEvent(conn) {
  return {
    event: 'connected',
    peerId: conn.remotePeer.toString(),
    muxer: conn.multiplexer,
    outbound: conn.direction === 'outbound',
  };
}

function identifiedEvent(info) {
  return {
    event: 'identified',
    peerId: info.peerId,
    agentVersion: info.agentVersion,
    protocolVersion: info.protocolVersion,
    protocols: info.protocols,
    listenAddrs: info.listenAddrs,
    observedAddr: info.observedAddr,
  };
}

/** Stops the peer and exits 0 on SIGTERM or SIGINT; installed before anything is printed. */
function stopOn(peer, after = () => {}) {
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await peer.stop().catch(() => {});
    after();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  return stop;
}

async function listen(opts) {
  const peer = await createPeer({ muxer: muxers(opts.muxers), key: opts.key, listenAddr: opts.addr,
    agentVersion: opts.agent });
  peer.node.addEventListener('connection:open', (evt) => {
    const conn = evt.detail;
    emit(connectedEvent(conn));
    peer.identify(conn).then((info) => emit(identifiedEvent(info)), () => {});
  });
  peer.node.addEventListener('connection:close', (evt) => {
    emit({ event: 'disconnected', peerId: evt.detail.remotePeer.toString(), reason: 'CLOSED' });
  });
  const stop = stopOn(peer);
  process.stdin.on('end', stop);
  process.stdin.resume();
  emit({ event: 'listening', peerId: peer.peerId, addrs: peer.addrs });
}

async function session(ma, opts) {
  const peer = await createPeer({ muxer: muxers(opts.muxers), listen: false, key: opts.key,
    agentVersion: opts.agent });
  try {
    const conn = await peer.dial(ma);
    const info = await peer.identify(conn);
    return { peer, conn, info };
  } catch (err) {
    await peer.stop().catch(() => {});
    throw err;
  }
}

async function dial(ma, opts) {
  const { peer, conn, info } = await session(ma, opts);
  emit(connectedEvent(conn));
  emit(identifiedEvent(info));
  for (const rttMs of await peer.ping(conn, Number(opts.ping))) emit({ event: 'ping', rttMs });
  const bytes = Number(opts['echo-bytes']);
  if (bytes > 0) {
    const r = await peer.echo(conn, bytes, { streams: Number(opts['echo-streams']) });
    if (!r.ok) throw Object.assign(new Error('echoed bytes differ'), { name: 'EchoMismatch' });
    emit({ event: 'echo', bytes, streams: r.streams, ok: r.ok, ms: r.ms, mbps: r.mbps });
  }
  await peer.stop();
  emit({ event: 'done' });
}

function canaryExitCode(err) {
  const text = `${err.name} ${err.message} ${err.errors?.map((e) => `${e.name} ${e.message}`).join(' ')}`;
  if (/Timeout|timed out|aborted/i.test(text)) return 5;
  if (/ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|NoValidAddresses|DialDenied/i.test(text)) return 2;
  if (/UnsupportedProtocol|protocol selection failed/i.test(text)) return 4;
  return 3;
}

async function canary(ma, opts) {
  const { peer, conn, info } = await session(ma, opts);
  const pings = await peer.ping(conn, Number(opts.ping));
  await peer.stop();
  emit({
    peerId: info.peerId,
    connected: true,
    muxer: conn.multiplexer,
    agentVersion: info.agentVersion,
    protocolVersion: info.protocolVersion,
    protocols: info.protocols,
    listenAddrs: info.listenAddrs,
    observedAddr: info.observedAddr,
    pings,
  });
}

async function node(opts) {
  const listenAddr = `/ip4/${opts['listen-address']}/tcp/${opts['tcp-port']}`;
  const peer = await createPeer({ muxer: ['yamux', 'mplex'], listenAddr,
    privateKey: privateKeyFromHex(opts.nodekey), agentVersion: opts.agent });
  const log = (msg, fields) => {
    if (opts['log-format'] === 'json') emit({ lvl: 'INF', msg, ...fields });
    else process.stdout.write(`INF ${msg} ${Object.entries(fields).map(([k, v]) => `${k}=${v}`).join(' ')}\n`);
  };
  stopOn(peer, () => log('Node stopped', {}));
  for (const addr of peer.addrs) log('Listening on', { full: addr });
}

async function main() {
  const { values: opts, positionals } = parseArgs({ options: OPTIONS, allowPositionals: true });
  const [cmd, target] = positionals;
  const deadline = Number(opts.timeout) * 1000;
  // js-libp2p 2.x lets some muxer aborts escape as unhandled rejections; report, do not die.
  process.on('unhandledRejection', (err) => process.stderr.write(`js-libp2p: ${err?.stack ?? err}\n`));
  if (cmd === 'listen') return listen(opts);
  if (cmd === 'dial') {
    return withTimeout(dial(target, opts), deadline, 'dial session').then(() => process.exit(0), (err) => {
      emit({ event: 'error', error: err.name, message: err.message });
      process.exit(1);
    });
  }
  if (cmd === 'canary') {
    return withTimeout(canary(target, opts), deadline, 'canary').then(() => process.exit(0), (err) => {
      process.stderr.write(`canary: ${target}: ${err.name}: ${err.message}\n`);
      process.exit(canaryExitCode(err));
    });
  }
  if (cmd === undefined && opts.nodekey !== undefined) return node(opts);
  process.stderr.write('usage: jspeer-cli.mjs listen|dial MA|canary MA|--nodekey=HEX …\n');
  process.exit(64);
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});
