// The set-up the tests of this folder share: a local chain (ganache from npm) with RlnMembership.sol
// (compiled by solc from npm) deployed on it, the hooks that start it and tear it down,
// registrations from ganache's own account, keystores made by `logosdelivery
// generateRlnKeystore`, and a REST publish that retries until the node takes the message.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';

import { stopAll } from '../interop/lib/cpeer.mjs';
import { restMessageJson } from '../interop/lib/relaynode.mjs';
import { compile, link } from './compile.mjs';

const require = createRequire(import.meta.url);
const ganache = require('ganache');

export const CHAIN_ID = 1337;
export const PASSWORD = 'correct horse battery staple';
export const WAIT_MS = 90_000;
const MAX_RATE_LIMIT = 100; // the contract's maxMembershipRateLimit

export const word = (v) => BigInt(v).toString(16).padStart(64, '0');

async function freePort() {
  const s = createServer();
  await new Promise((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address();
  await new Promise((resolve) => s.close(resolve));
  return port;
}

/** A running ganache on a loopback port with the membership contract deployed:
 * {server, provider, url, from, secretKey, contract, rpc(method, params), send(data, to)}; `from`
 * is ganache's funded account, `secretKey` its private key (0x hex). */
export async function startChain() {
  const port = await freePort();
  const server = ganache.server({ logging: { quiet: true }, chain: { chainId: CHAIN_ID },
    wallet: { deterministic: true, totalAccounts: 1 }, miner: { blockGasLimit: 30_000_000 } });
  await server.listen(port, '127.0.0.1');
  const chain = { server, provider: server.provider, url: `http://127.0.0.1:${port}` };
  chain.rpc = (method, params = []) => chain.provider.request({ method, params });
  chain.send = async (data, to) => {
    const tx = { from: chain.from, data, gas: '0x1c9c380' };
    if (to != null) tx.to = to;
    const hash = await chain.rpc('eth_sendTransaction', [tx]);
    const receipt = await chain.rpc('eth_getTransactionReceipt', [hash]);
    assert.equal(receipt.status, '0x1', `transaction ${hash} failed`);
    return receipt;
  };
  [chain.from] = await chain.rpc('eth_accounts');
  chain.secretKey = (await chain.provider.getInitialAccounts())[chain.from.toLowerCase()].secretKey;
  const { poseidon, membership } = compile();
  const lib = await chain.send('0x' + poseidon.bytecode);
  const code = link(membership.bytecode, membership.linkReferences, lib.contractAddress);
  chain.contract = (await chain.send('0x' + code + word(MAX_RATE_LIMIT))).contractAddress;
  return chain;
}

/** Registers the hooks of a test file: before its tests, a temporary folder named from `prefix`
 * and a chain (startChain), handed to `ready(chain, dir)`; after them, every process the tests
 * started stopped, the chain closed and the folder removed. With `skip` set, nothing is started. */
export function useChain(prefix, skip, ready) {
  let chain;
  let dir;
  before(async () => {
    if (skip) return;
    dir = mkdtempSync(join(tmpdir(), prefix));
    chain = await startChain();
    ready(chain, dir);
  });
  after(async () => {
    await stopAll();
    if (chain != null) await chain.server.close();
    if (dir != null) rmSync(dir, { recursive: true, force: true });
  });
}

/** Registers `idCommitment` with `limit` messages per epoch from ganache's account. */
export async function register(chain, idCommitment, limit) {
  const sel = await chain.rpc('web3_sha3', ['0x' + Buffer.from('register(uint256,uint32,uint256[])').toString('hex')]);
  await chain.send('0x' + sel.slice(2, 10) + word(idCommitment) + word(limit) + word(0x60) + word(0), chain.contract);
}

/** `logosdelivery generateRlnKeystore` into dir/name.json for membership `index` of the contract;
 * returns {path, idCommitment, rateCommitment, …} (the program's JSON answer). */
export function keystore(bin, dir, name, index, { limit, contract }) {
  const path = join(dir, `${name}.json`);
  const r = spawnSync(bin, ['generateRlnKeystore', `--rln-relay-cred-path=${path}`,
    `--rln-relay-cred-password=${PASSWORD}`, `--rln-relay-membership-index=${index}`,
    `--rln-relay-chain-id=${CHAIN_ID}`, `--rln-relay-eth-contract-address=${contract}`,
    `--rln-relay-user-message-limit=${limit}`, '--kdf-iterations=1000'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return { path, ...JSON.parse(r.stdout) };
}

/** Publishes through `node`'s REST API until it is taken (it needs a relay peer and, for RLN, its
 * Merkle proof); fails with the last refusal when it never is. The node proves before it answers:
 * on a loaded machine that takes a while, so each request may take up to WAIT_MS. */
export async function publishWhenReady(node, topic, contentTopic, text) {
  const deadline = Date.now() + WAIT_MS;
  const path = `/relay/v1/messages/${encodeURIComponent(topic)}`;
  const body = restMessageJson({ payload: Buffer.from(text), contentTopic });
  let last;
  while (Date.now() < deadline) {
    last = await node.rest.request('POST', path, body, { timeoutMs: WAIT_MS });
    if (last.status >= 200 && last.status < 300) return;
    await delay(250);
  }
  assert.fail(`${text}: REST publish never taken: ${last?.status} ${last?.text}`);
}
