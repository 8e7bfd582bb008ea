// The C library's RLN settings against a real local chain (ganache, RlnMembership.sol as in
// onchain.test.mjs): a library context (ld_libnode, the public C API) whose messagingOverrides name
// the contract (rlnContractAddress, rlnChainId, ethRpcEndpoints) runs RLN-relay with the on-chain
// group as `--rln-relay --rln-relay-eth-contract-address …` does for the node program:
//
//   A (member 0, node program) ──► L (library context, validating) ◄── D (non-member)
//
//  - L follows the contract (it logs the member count it read) and reports A's message;
//  - D's message (a valid proof over a tree the contract never had) is refused by L's validator and
//    never reported, while A's next message is.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

import { missing, nodePath, stopAll } from '../interop/lib/cpeer.mjs';
import { LIBNODE, LibNode } from '../interop/lib/libnode.mjs';
import { restMessageJson, startRelayNode } from '../interop/lib/relaynode.mjs';
import { compile, link } from './compile.mjs';

const require = createRequire(import.meta.url);
const ganache = require('ganache');

const CHAIN_ID = 1337;
const CLUSTER = 42;
const TOPIC = `/waku/2/rs/${CLUSTER}/0`;
const CONTENT_TOPIC = '/rlnchain/1/library/proto';
const PASSWORD = 'correct horse battery staple';
const LIMIT = 5;
const WAIT_MS = 90_000;

const bin = nodePath();
const fixtures = process.env.LD_RLN_FIXTURES;
const skip = missing('logosdelivery', bin) || (fixtures ? false : 'LD_RLN_FIXTURES is not set')
  || (LIBNODE ? false : 'LD_LIBNODE is not set');

let chain; // {server, provider, url, from, contract}
let dir;

async function freePort() {
  const s = createServer();
  await new Promise((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address();
  await new Promise((resolve) => s.close(resolve));
  return port;
}

async function rpc(method, params = []) {
  return chain.provider.request({ method, params });
}

async function send(data, to) {
  const tx = { from: chain.from, data, gas: '0x1c9c380' };
  if (to != null) tx.to = to;
  const hash = await rpc('eth_sendTransaction', [tx]);
  const receipt = await rpc('eth_getTransactionReceipt', [hash]);
  assert.equal(receipt.status, '0x1', `transaction ${hash} failed`);
  return receipt;
}

const word = (v) => BigInt(v).toString(16).padStart(64, '0');

async function deploy() {
  const { poseidon, membership } = compile();
  const lib = await send('0x' + poseidon.bytecode);
  const code = link(membership.bytecode, membership.linkReferences, lib.contractAddress);
  return (await send('0x' + code + word(100))).contractAddress;
}

async function register(idCommitment, limit) {
  const h = await rpc('web3_sha3', ['0x' + Buffer.from('register(uint256,uint32,uint256[])').toString('hex')]);
  await send('0x' + h.slice(2, 10) + word(idCommitment) + word(limit) + word(0x60) + word(0), chain.contract);
}

function keystore(name, index, { limit = LIMIT } = {}) {
  const path = join(dir, `${name}.json`);
  const r = spawnSync(bin, ['generateRlnKeystore', `--rln-relay-cred-path=${path}`,
    `--rln-relay-cred-password=${PASSWORD}`, `--rln-relay-membership-index=${index}`,
    `--rln-relay-chain-id=${CHAIN_ID}`, `--rln-relay-eth-contract-address=${chain.contract}`,
    `--rln-relay-user-message-limit=${limit}`, '--kdf-iterations=1000'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return { path, ...JSON.parse(r.stdout) };
}

function startNode(args, name, peer) {
  return startRelayNode({ clusterId: CLUSTER, shards: [0], name, timeoutMs: WAIT_MS,
    extraArgs: [...args, `--staticnode=${peer.addr}`] });
}

async function publishWhenReady(node, text) {
  const deadline = Date.now() + WAIT_MS;
  const path = `/relay/v1/messages/${encodeURIComponent(TOPIC)}`;
  const body = restMessageJson({ payload: Buffer.from(text), contentTopic: CONTENT_TOPIC });
  let last;
  while (Date.now() < deadline) {
    last = await node.rest.request('POST', path, body, { timeoutMs: WAIT_MS });
    if (last.status >= 200 && last.status < 300) return;
    await delay(250);
  }
  assert.fail(`${text}: REST publish never taken: ${last?.status} ${last?.text}`);
}

const received = (text) => (e) => e.eventType === 'message_received'
  && Buffer.from(e.message?.payload ?? []).toString() === text;

before(async () => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'ld-rlnlib-'));
  const port = await freePort();
  const server = ganache.server({ logging: { quiet: true }, chain: { chainId: CHAIN_ID },
    wallet: { deterministic: true, totalAccounts: 1 }, miner: { blockGasLimit: 30_000_000 } });
  await server.listen(port, '127.0.0.1');
  chain = { server, provider: server.provider, url: `http://127.0.0.1:${port}` };
  [chain.from] = await rpc('eth_accounts');
  chain.contract = await deploy();
});

after(async () => {
  await stopAll();
  if (chain != null) await chain.server.close();
  if (dir != null) rmSync(dir, { recursive: true, force: true });
});

test('messagingOverrides naming the RLN contract validate as --rln-relay with the on-chain group',
  { skip, timeout: 600_000 }, async () => {
    const a = keystore('a', 0);
    await register(a.idCommitment, LIMIT);

    const lib = await LibNode.start({
      mode: 'Core',
      messagingOverrides: {
        clusterId: CLUSTER, numShardsInCluster: 1, listenIpv4: '127.0.0.1', p2pTcpPort: 0,
        reliabilityEnabled: false, logLevel: 'DEBUG', ethRpcEndpoints: [chain.url],
        rlnContractAddress: chain.contract, rlnChainId: CHAIN_ID,
      },
    }, { timeoutMs: WAIT_MS, name: 'L' });
    await lib.commandOk(`SUBSCRIBE ${CONTENT_TOPIC}`);
    await lib.proc.waitMatch(/on-chain group: 1 members/, { timeoutMs: WAIT_MS });

    const na = await startNode(['--rln-relay=true', `--rln-relay-eth-client-address=${chain.url}`,
      `--rln-relay-eth-contract-address=${chain.contract}`, `--rln-relay-chain-id=${CHAIN_ID}`,
      `--rln-relay-cred-path=${a.path}`, `--rln-relay-cred-password=${PASSWORD}`,
      `--rln-relay-circuit-dir=${fixtures}`], 'A', lib);
    await publishWhenReady(na, 'from member A');
    await lib.waitEvent(received('from member A'), "member A's message", { timeoutMs: WAIT_MS });

    const d = keystore('d', 0, { limit: 1 });
    writeFileSync(join(dir, 'd-group.json'), JSON.stringify([d.rateCommitment]));
    const nd = await startNode(['--rln-relay=true', '--rln-relay-dynamic=false',
      `--rln-relay-static-group-file=${join(dir, 'd-group.json')}`, `--rln-relay-cred-path=${d.path}`,
      `--rln-relay-cred-password=${PASSWORD}`, `--rln-relay-circuit-dir=${fixtures}`], 'D', lib);
    await publishWhenReady(nd, 'from non-member D');
    // L's validator refuses it (relay logs the refusal at DEBUG with D's peer ID)
    await lib.proc.waitMatch(new RegExp(`message rejected: topic=${TOPIC} reason=validator from=${nd.peerId}`),
      { timeoutMs: WAIT_MS });
    await publishWhenReady(na, 'from member A again');
    await lib.waitEvent(received('from member A again'), "member A's second message", { timeoutMs: WAIT_MS });
    assert.deepEqual(lib.events(received('from non-member D')), [],
      "the library reported the non-member's message");
    assert.equal(lib.proc.child.exitCode, null);
    const { code } = await lib.quit();
    assert.equal(code, 0);
  });
