// `logosdelivery generateRlnKeystore --rln-relay-eth-private-key K --execute` against a real local
// chain (ganache, RlnMembership.sol, as in onchain.test.mjs): the program signs register(…) with
// ganache's funded account, sends it, and files the identity under the index of the contract's
// MembershipRegistered event.
//
//  - Registered after another member, the identity gets index 1; a node with that keystore (no
//    --rln-relay-membership-index: the keystore's index) publishes, and a node following the
//    contract accepts its messages, which it would not with proofs for another leaf.
//  - Without --execute it is a dry run: checks, prints the gas limit, sends and writes nothing.
//  - The transaction is EIP-1559 (type 2); on a chain without a base fee (an endpoint that hides
//    it) it is a legacy EIP-155 one at twice the gas price, as nwaku pays; ganache recovers our
//    account from either signature.
//  - Bad input ends with `generateRlnKeystore: <what failed, with the value>; <what to do>`, a
//    non-zero exit and no keystore file: a key that is no key, an account without ether, a member
//    registered twice, a keystore path that could not be written after the registration, an endpoint that refuses connections, stalls, answers with another
//    transaction hash, a receipt without the event, or never a receipt, a transaction that reverts
//    on chain (an endpoint that under-estimates its gas).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';

import { missing, nodePath } from '../interop/lib/cpeer.mjs';
import { startRelayNode } from '../interop/lib/relaynode.mjs';
import * as rlnchain from './chain.mjs';
import { CHAIN_ID, PASSWORD, WAIT_MS } from './chain.mjs';

const CLUSTER = 42;
const TOPIC = `/waku/2/rs/${CLUSTER}/0`;
const CONTENT_TOPIC = '/rlnchain/1/register/proto';
const LIMIT = 5;

const bin = nodePath();
const fixtures = process.env.LD_RLN_FIXTURES;
const skip = missing('logosdelivery', bin) || (fixtures ? false : 'LD_RLN_FIXTURES is not set');

let chain; // rlnchain.startChain()
let dir;
let n = 0;

/** Runs generateRlnKeystore without blocking the event loop (ganache answers in this process). */
function generate(args, path = join(dir, `ks${n++}.json`)) {
  const argv = ['generateRlnKeystore', `--rln-relay-cred-path=${path}`, `--rln-relay-cred-password=${PASSWORD}`,
    '--kdf-iterations=1000', '--rpc-timeout-sec=300', ...args];
  return new Promise((resolve) => {
    execFile(bin, argv, { timeout: 600_000 }, (err, stdout, stderr) =>
      resolve({ path, status: err ? err.code : 0, stdout, stderr, written: existsSync(path) }));
  });
}

function registerArgs({ url = chain.url, key = chain.secretKey, limit = LIMIT, execute = true } = {}) {
  const args = [`--rln-relay-eth-client-address=${url}`, `--rln-relay-eth-contract-address=${chain.contract}`,
    `--rln-relay-eth-private-key=${key}`, `--rln-relay-user-message-limit=${limit}`];
  if (execute) args.push('--execute');
  return args;
}

async function nextFreeIndex() {
  const sel = await chain.rpc('web3_sha3', ['0x' + Buffer.from('nextFreeIndex()').toString('hex')]);
  return Number(BigInt(await chain.rpc('eth_call', [{ to: chain.contract, data: sel.slice(0, 10) }, 'latest'])));
}

/** A JSON-RPC endpoint in front of ganache; `lie[method](params, forward)` answers a method
 * instead ({result} or {error}, or undefined for no answer at all). */
async function liar(lie) {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', async () => {
      const { id, method, params } = JSON.parse(body);
      const forward = async () => {
        try {
          return { result: await chain.rpc(method, params) };
        } catch (e) {
          return { error: { code: e.code ?? -32000, message: e.message } };
        }
      };
      const answer = lie[method] ? await lie[method](params, forward) : await forward();
      if (answer !== undefined) res.end(JSON.stringify({ jsonrpc: '2.0', id, ...answer }));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`,
    close: () => { server.closeAllConnections(); server.close(); } };
}

function assertRefused(r, why) {
  assert.notEqual(r.status, 0, `exit 0: ${r.stdout}`);
  assert.match(r.stderr, /^generateRlnKeystore: .+; .+/, r.stderr);
  assert.match(r.stderr, why);
  assert.equal(r.written, false, `${r.path} was written`);
}

rlnchain.useChain('ld-rlnreg-', skip, (c, d) => {
  chain = c;
  dir = d;
});

test('--execute registers the identity, files the event index, and its node publishes to a follower',
  { skip, timeout: 900_000 }, async () => {
    await rlnchain.register(chain, 12345, LIMIT); // index 0 is someone else's

    const dry = await generate(registerArgs({ execute: false }));
    assert.equal(dry.status, 0, dry.stderr);
    const plan = JSON.parse(dry.stdout);
    assert.equal(plan.dryRun, true);
    assert.equal(plan.account, chain.from.toLowerCase());
    assert.ok(plan.gasLimit > 100_000, `gas limit ${plan.gasLimit}`);
    assert.equal(dry.written, false);
    assert.equal(await nextFreeIndex(), 1, 'the dry run registered');

    const r = await generate(registerArgs());
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.treeIndex, 1);
    assert.equal(out.chainId, CHAIN_ID);
    assert.equal(out.userMessageLimit, LIMIT);
    assert.equal(await nextFreeIndex(), 2);
    const tx = await chain.rpc('eth_getTransactionByHash', [out.transactionHash]);
    assert.equal(tx.type, '0x2'); // EIP-1559: ganache has a base fee
    assert.equal(BigInt(tx.chainId), BigInt(CHAIN_ID));
    const receipt = await chain.rpc('eth_getTransactionReceipt', [out.transactionHash]);
    assert.equal(receipt.status, '0x1');
    assert.equal(receipt.from, chain.from.toLowerCase());
    assert.equal(receipt.to, chain.contract.toLowerCase());
    const data = receipt.logs[0].data.slice(2);
    assert.equal(BigInt('0x' + data.slice(0, 64)), BigInt(out.idCommitment));
    assert.equal(BigInt('0x' + data.slice(128, 192)), 1n);

    const b = await startRelayNode({ clusterId: CLUSTER, shards: [0], name: 'B', timeoutMs: WAIT_MS,
      extraArgs: ['--rln-relay=true', `--rln-relay-eth-client-address=${chain.url}`,
        `--rln-relay-eth-contract-address=${chain.contract}`, `--rln-relay-chain-id=${CHAIN_ID}`] });
    await b.rest.subscribe([TOPIC]);
    await b.proc.waitMatch(/on-chain group: 2 members/, { timeoutMs: WAIT_MS });
    const a = await startRelayNode({ clusterId: CLUSTER, shards: [0], name: 'A', timeoutMs: WAIT_MS,
      extraArgs: ['--rln-relay=true', `--rln-relay-eth-client-address=${chain.url}`,
        `--rln-relay-eth-contract-address=${chain.contract}`, `--rln-relay-chain-id=${CHAIN_ID}`,
        `--rln-relay-cred-path=${r.path}`, `--rln-relay-cred-password=${PASSWORD}`,
        `--rln-relay-circuit-dir=${fixtures}`, `--staticnode=${b.addr}`] });
    await rlnchain.publishWhenReady(a, TOPIC, CONTENT_TOPIC, 'from the registered member');
    await b.rest.waitMessage('pubsub', TOPIC, (m) => m.payload.toString() === 'from the registered member',
      { timeoutMs: WAIT_MS, what: "the registered member's message" });
  });

test('on a chain without a base fee it sends a legacy EIP-155 transaction at twice the gas price',
  { skip, timeout: 900_000 }, async () => {
    const preLondon = await liar({ eth_getBlockByNumber: async (p, forward) => {
      const a = await forward();
      if (a.result) delete a.result.baseFeePerGas;
      return a;
    } });
    try {
      const r = await generate(registerArgs({ url: preLondon.url }));
      assert.equal(r.status, 0, r.stderr);
      const out = JSON.parse(r.stdout);
      const tx = await chain.rpc('eth_getTransactionByHash', [out.transactionHash]);
      assert.equal(tx.type, '0x0');
      assert.ok([CHAIN_ID * 2 + 35, CHAIN_ID * 2 + 36].includes(Number(tx.v)), `v ${tx.v}`);
      assert.equal(BigInt(tx.gasPrice), 2n * BigInt(await chain.rpc('eth_gasPrice')));
      assert.equal(tx.from, chain.from.toLowerCase()); // the signature recovers our account
      assert.ok(r.written);
    } finally { preLondon.close(); }
  });

test('bad keys, accounts and registrations are refused before anything is sent or written',
  { skip, timeout: 900_000 }, async () => {
    const before = await nextFreeIndex();
    for (const key of ['0x1234', 'zz'.repeat(32), '0x' + '00'.repeat(32)])
      assertRefused(await generate(registerArgs({ key })), /--rln-relay-eth-private-key \(\d+ characters\) is not a secp256k1 private key/);
    assert.doesNotMatch((await generate(registerArgs({ key: '0x1234' }))).stderr, /1234/, 'the key was echoed');
    assertRefused(await generate(['--execute', `--rln-relay-eth-contract-address=${chain.contract}`]),
      /--execute without --rln-relay-eth-private-key registers nothing/);
    assertRefused(await generate([...registerArgs(), '--rln-relay-membership-index=3']),
      /--rln-relay-membership-index is the contract's to give/);
    assertRefused(await generate([...registerArgs(), `--rln-relay-chain-id=${CHAIN_ID + 1}`]),
      new RegExp(`on chain ${CHAIN_ID}, not --rln-relay-chain-id=${CHAIN_ID + 1}`));
    assertRefused(await generate(registerArgs({ limit: 101 })),
      /--rln-relay-user-message-limit=101 is above the contract's maxMembershipRateLimit 100/);

    // a keystore path that could not be written after paying for the registration
    const notKeystore = join(dir, 'not-a-keystore.json');
    writeFileSync(notKeystore, '{"something": "else"}');
    const r = await generate(registerArgs(), notKeystore);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /^generateRlnKeystore: --rln-relay-cred-path=\S+ is not an RLN keystore; .*nothing was registered/);
    assert.equal(readFileSync(notKeystore, 'utf8'), '{"something": "else"}');

    // an account without ether: the endpoint refuses the transaction
    const poor = '0x' + '42'.repeat(32);
    assertRefused(await generate(registerArgs({ key: poor })), /eth_sendRawTransaction at .* failed: .*insufficient funds/);

    // a member registered twice: eth_estimateGas reports the contract's refusal
    const first = await generate([...registerArgs(), '--identity-secret=0x1234']);
    assert.equal(first.status, 0, first.stderr);
    assert.equal(JSON.parse(first.stdout).treeIndex, before);
    const again = await generate([...registerArgs(), '--identity-secret=0x1234']);
    assertRefused(again, /eth_estimateGas of register\(idCommitment, 5, \[\]\) from 0x[0-9a-f]{40} at .* failed: .*already a member/);
    assert.equal(await nextFreeIndex(), before + 1);
  });

test('an endpoint that refuses, stalls, lies or never mines gets a named error and nothing written',
  { skip, timeout: 900_000 }, async () => {
    // nothing listens
    const gone = await liar({});
    gone.close();
    assertRefused(await generate(registerArgs({ url: gone.url })), /eth_chainId at http:\/\/127\.0\.0\.1:\d+ failed: /);

    // no answer at all
    const mute = await liar({ eth_chainId: () => undefined });
    try {
      assertRefused(await generate([...registerArgs({ url: mute.url }), '--rpc-timeout-sec=2']),
        /eth_chainId at .* failed: no answer within 2000 ms/);
    } finally { mute.close(); }

    // another transaction's hash
    const other = await liar({ eth_sendRawTransaction: async (p, forward) => {
      await forward();
      return { result: '0x' + 'ab'.repeat(32) };
    } });
    try {
      assertRefused(await generate(registerArgs({ url: other.url })),
        /eth_sendRawTransaction at .* answered 0x(ab){32}, not the transaction's hash 0x[0-9a-f]{64}/);
    } finally { other.close(); }

    // a receipt without the event
    const noEvent = await liar({ eth_getTransactionReceipt: async (p, forward) => {
      const a = await forward();
      if (a.result) a.result.logs = [];
      return a;
    } });
    try {
      assertRefused(await generate(registerArgs({ url: noEvent.url })),
        /transaction 0x[0-9a-f]{64}: the receipt \(0 logs\) has no MembershipRegistered event of the contract/);
    } finally { noEvent.close(); }

    // never a receipt
    const never = await liar({ eth_getTransactionReceipt: async () => ({ result: null }) });
    try {
      const r = await generate([...registerArgs({ url: never.url }), '--receipt-timeout-sec=3']);
      assertRefused(r, /no receipt of transaction 0x[0-9a-f]{64} from .* within 3000 ms/);
      assert.equal(r.status, 5);
    } finally { never.close(); }

    // too little gas: the transaction is mined and reverts
    const stingy = await liar({ eth_estimateGas: async () => ({ result: '0xc350' }) }); // 50000 (+25 %)
    try {
      assertRefused(await generate(registerArgs({ url: stingy.url })),
        /transaction 0x[0-9a-f]{64}: the transaction reverted \(status 0x0\) in block \d+/);
    } finally { stingy.close(); }
  });
