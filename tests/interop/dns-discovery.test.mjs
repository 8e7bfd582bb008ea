// DNS discovery (EIP-1459): `logosdelivery dns-tree` builds and signs a tree of records, a real
// DNS server (dnsmasq, Debian's dnsmasq-base) serves it on 127.0.0.1, and js-waku's
// @waku/discovery (DnsNodeDiscovery, its tree walk and root check, over node's own DNS client
// pointed at that server) and our resolver (`logosdelivery dns-resolve`, c-ares) read it: both
// get the same records. A tree signed by another key than the URL's is refused by both.
import './lib/node20-compat.mjs';

import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Resolver } from 'node:dns/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';

import { SignableENR } from '@chainsafe/enr';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { DnsNodeDiscovery } from '@waku/discovery';

import { missing, nodePath } from './lib/cpeer.mjs';
import { freeUdpPort } from './lib/net.mjs';

const run = promisify(execFile);
const NODE = nodePath();
const DNSMASQ = ['/usr/sbin/dnsmasq', '/usr/bin/dnsmasq'].find((p) => {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
});
const SKIP = missing('logosdelivery', NODE) ||
  (DNSMASQ ? false : 'dnsmasq is not installed (Debian package dnsmasq-base; scripts/deps.sh)');
const DOMAIN = 'nodes.interop.test';
const TREE_KEY = '42'.repeat(32);
const OTHER_KEY = '43'.repeat(32);

const dir = mkdtempSync(join(tmpdir(), 'ld-dnsdisc-'));
const servers = [];

/** `count` records with a waku2 field (js-waku ignores records without one), as ENR text. */
async function makeRecords(count) {
  const out = [];
  for (let i = 0; i < count; i++) {
    const enr = SignableENR.createFromPrivateKey(await generateKeyPair('secp256k1'));
    enr.ip = '127.0.0.1';
    enr.tcp = 60000 + i;
    enr.set('waku2', new Uint8Array([1]));
    out.push({ text: enr.encodeTxt(), peerId: enr.peerId.toString() });
  }
  return out;
}

/** The tree of `records` as dnsmasq lines, signed with `key`; its enrtree:// URL. */
async function buildTree(name, records, key, domain = DOMAIN) {
  const file = join(dir, `${name}.enrs`);
  writeFileSync(file, records.map((r) => r.text).join('\n') + '\n');
  const { stdout } = await run(NODE, ['dns-tree', `--domain=${domain}`, `--key=${key}`,
    `--enr-file=${file}`, '--format=dnsmasq'], { maxBuffer: 1 << 24 });
  const url = stdout.split('\n')[0].replace(/^# /, '');
  assert.match(url, /^enrtree:\/\/[A-Z2-7]{53}@/);
  return { url, conf: stdout };
}

/** dnsmasq serving `conf` on 127.0.0.1; resolves to "127.0.0.1:<port>" once it answers. */
async function startDnsmasq(name, conf) {
  const confFile = join(dir, `${name}.conf`);
  writeFileSync(confFile, conf);
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freeUdpPort();
    const args = ['--keep-in-foreground', '--listen-address=127.0.0.1', '--bind-interfaces',
      '--no-resolv', '--no-hosts', '--no-poll', `--port=${port}`, `--conf-file=${confFile}`,
      `--pid-file=${join(dir, `${name}.pid`)}`, `--log-facility=${join(dir, `${name}.log`)}`];
    if (process.getuid?.() === 0) args.push('--user=root');
    const child = spawn(DNSMASQ, args, { stdio: 'ignore' });
    servers.push(child);
    let exited = false;
    child.on('exit', () => { exited = true; });
    const resolver = new Resolver({ timeout: 500, tries: 1 });
    resolver.setServers([`127.0.0.1:${port}`]);
    for (let i = 0; i < 50 && !exited; i++) {
      try {
        await resolver.resolveTxt(DOMAIN);
        return `127.0.0.1:${port}`;
      } catch (err) {
        if (err.code !== 'ECONNREFUSED' && err.code !== 'ETIMEOUT') return `127.0.0.1:${port}`;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    child.kill('SIGKILL');
  }
  throw new Error('dnsmasq did not start');
}

/** Our resolver: the records `logosdelivery dns-resolve` prints, and its summary line. */
async function ourRecords(url, server) {
  let stdout;
  try {
    ({ stdout } = await run(NODE, ['dns-resolve', url, `--dns-discovery-name-server=${server}`],
      { maxBuffer: 1 << 24 }));
  } catch (err) {
    stdout = err.stdout; // a failed tree exits nonzero and still prints its summary
  }
  const lines = stdout.trim().split('\n').map((l) => JSON.parse(l));
  const done = lines.pop();
  assert.equal(done.event, 'done');
  return { records: lines, done };
}

/** js-waku's walk, over node's DNS client asking `server`, repeated until it finds nothing new. */
async function jsRecords(url, server) {
  const resolver = new Resolver({ timeout: 2000, tries: 2 });
  resolver.setServers([server]);
  const discovery = new DnsNodeDiscovery({
    // one record's character-strings, as DnsOverHttps hands them over
    resolveTXT: async (domain) => (await resolver.resolveTxt(domain))[0] ?? [],
  });
  const found = new Map();
  for (let round = 0, quiet = 0; round < 100 && quiet < 5; round++) {
    const before = found.size;
    for await (const enr of discovery.getNextPeer([url])) {
      found.set((await enr.peerId).toString(), enr);
    }
    quiet = found.size === before ? quiet + 1 : 0;
  }
  return found;
}

describe('DNS discovery: js-waku and logosdelivery read the same tree', { skip: SKIP }, () => {
  after(() => {
    for (const child of servers) child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('a one-branch tree of 8 records: the same 8 on both sides', async () => {
    const records = await makeRecords(8);
    const { url, conf } = await buildTree('eight', records, TREE_KEY);
    const server = await startDnsmasq('eight', conf);

    const ours = await ourRecords(url, server);
    assert.equal(ours.done.error, undefined, JSON.stringify(ours.done));
    assert.deepEqual(ours.records.map((r) => r.enr).sort(), records.map((r) => r.text).sort());
    assert.deepEqual(ours.records.map((r) => r.peerId).sort(), records.map((r) => r.peerId).sort());

    const js = await jsRecords(url, server);
    assert.deepEqual([...js.keys()].sort(), records.map((r) => r.peerId).sort());
  });

  it('a 60-record tree of nested branches: every record js-waku finds is one of ours', async () => {
    const records = await makeRecords(60);
    const { url, conf } = await buildTree('sixty', records, TREE_KEY);
    const server = await startDnsmasq('sixty', conf);
    const ours = await ourRecords(url, server);
    assert.equal(ours.records.length, 60, JSON.stringify(ours.done));
    assert.equal(ours.done.seq, 1);
    const ourPeers = new Set(ours.records.map((r) => r.peerId));
    assert.deepEqual([...ourPeers].sort(), records.map((r) => r.peerId).sort());
    // js-waku's random descent marks a branch visited after one leaf: it finds some, not all
    const js = await jsRecords(url, server);
    assert.ok(js.size > 0);
    for (const peer of js.keys()) assert.ok(ourPeers.has(peer), `${peer} is not in the tree`);
  });

  it('a root signed by another key than the URL names: refused by both', async () => {
    const records = await makeRecords(3);
    const genuine = await buildTree('genuine', records, TREE_KEY);
    const forged = await buildTree('forged', records, OTHER_KEY);
    const server = await startDnsmasq('forged', forged.conf);
    const ours = await ourRecords(genuine.url, server);
    assert.equal(ours.records.length, 0);
    assert.equal(ours.done.error, 'BAD_SIGNATURE');
    const js = await jsRecords(genuine.url, server);
    assert.equal(js.size, 0);
    // and the forged tree's own URL verifies on both sides
    assert.equal((await ourRecords(forged.url, server)).records.length, 3);
    assert.equal((await jsRecords(forged.url, server)).size, 3);
  });
});
