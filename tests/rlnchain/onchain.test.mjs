// The on-chain RLN group against a real local chain: ganache from npm, with RlnMembership.sol
// (WakuRlnV2's interface subset over the same Poseidon tree, see the contract) compiled by solc
// from npm and deployed by the test. Our nodes get their identities from nwaku's keystore
// (logosdelivery generateRlnKeystore), follow the contract with --rln-relay-eth-client-address,
// --rln-relay-eth-contract-address and --rln-relay-chain-id, and relay on one shard:
//
//   A (member 0) ──► B (validator, no identity) ◄── D (non-member: a static group of its own)
//                    ▲
//                    └── E (member 1, registered while B runs)
//
//  - A's messages cross to B; D's (valid proofs over a tree the contract never had) are rejected
//    by B (its waku_rln_invalid_messages_total counts them) and never reach B's subscribers.
//  - E, registered after B started, is accepted once B's poll saw the new root.
//  - A node whose JSON-RPC endpoint answers garbage, huge bodies, errors, or nothing at all keeps
//    running and says why in its log; a wrong keystore password stops a node with an error
//    naming --rln-relay-cred-password.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

import { missing, nodePath, Proc } from '../interop/lib/cpeer.mjs';
import { startRelayNode } from '../interop/lib/relaynode.mjs';
import * as rlnchain from './chain.mjs';
import { CHAIN_ID, PASSWORD, WAIT_MS } from './chain.mjs';

const CLUSTER = 42;
const TOPIC = `/waku/2/rs/${CLUSTER}/0`;
const CONTENT_TOPIC = '/rlnchain/1/test/proto';
const LIMIT = 5;

const bin = nodePath();
const fixtures = process.env.LD_RLN_FIXTURES;
const skip = missing('logosdelivery', bin) || (fixtures ? false : 'LD_RLN_FIXTURES is not set');

let chain; // rlnchain.startChain()
let dir;

const register = (idCommitment, limit) => rlnchain.register(chain, idCommitment, limit);

/* ---- keystores and nodes -------------------------------------------------------------------- */

function keystore(name, index, { limit = LIMIT, contract = chain.contract } = {}) {
  return rlnchain.keystore(bin, dir, name, index, { limit, contract });
}

function onchainArgs({ url = chain.url, cred } = {}) {
  const args = ['--rln-relay=true', `--rln-relay-eth-client-address=${url}`,
    `--rln-relay-eth-contract-address=${chain.contract}`, `--rln-relay-chain-id=${CHAIN_ID}`];
  if (cred != null)
    args.push(`--rln-relay-cred-path=${cred.path}`, `--rln-relay-cred-password=${PASSWORD}`,
      `--rln-relay-circuit-dir=${fixtures}`);
  return args;
}

function startNode(extraArgs, name, staticNode) {
  const args = [...extraArgs];
  if (staticNode != null) args.push(`--staticnode=${staticNode.addr}`);
  return startRelayNode({ clusterId: CLUSTER, shards: [0], extraArgs: args, name, timeoutMs: WAIT_MS });
}

const publishWhenReady = (node, text) => rlnchain.publishWhenReady(node, TOPIC, CONTENT_TOPIC, text);

async function metric(url, name) {
  const text = await (await fetch(url)).text();
  let sum = 0;
  for (const line of text.split('\n'))
    if (line.startsWith(name) && (line[name.length] === ' ' || line[name.length] === '{'))
      sum += Number(line.split(' ').pop());
  return sum;
}

async function waitFor(what, cond) {
  const deadline = Date.now() + WAIT_MS;
  while (!(await cond())) {
    if (Date.now() > deadline) assert.fail(`${what} not within ${WAIT_MS} ms`);
    await delay(200);
  }
}

rlnchain.useChain('ld-rlnchain-', skip, (c, d) => {
  chain = c;
  dir = d;
});

test('a member crosses, a non-member is rejected, a new member is accepted after the next poll',
  { skip, timeout: 600_000 }, async () => {
    const a = keystore('a', 0);
    await register(a.idCommitment, LIMIT);
    const e = keystore('e', 1);

    const b = await startNode([...onchainArgs(), '--metrics-server=true',
      '--metrics-server-address=127.0.0.1', '--metrics-server-port=0'], 'B');
    const [metricsUrl] = await b.proc.waitMatch(/http:\/\/127\.0\.0\.1:\d+\/metrics/, { timeoutMs: WAIT_MS });
    await b.rest.subscribe([TOPIC]);
    const na = await startNode(onchainArgs({ cred: a }), 'A', b);
    await b.proc.waitMatch(/on-chain group: 1 members/, { timeoutMs: WAIT_MS });

    await publishWhenReady(na, 'from member A');
    await b.rest.waitMessage('pubsub', TOPIC, (m) => m.payload.toString() === 'from member A',
      { timeoutMs: WAIT_MS, what: "member A's message" });

    // D proves over a static group of its own: valid proofs, a root the contract never had.
    const d = keystore('d', 0, { limit: 1 });
    writeFileSync(join(dir, 'd-group.json'), JSON.stringify([d.rateCommitment]));
    const nd = await startNode(['--rln-relay=true', '--rln-relay-dynamic=false',
      `--rln-relay-static-group-file=${join(dir, 'd-group.json')}`, `--rln-relay-cred-path=${d.path}`,
      `--rln-relay-cred-password=${PASSWORD}`, `--rln-relay-circuit-dir=${fixtures}`], 'D', b);
    const invalidBefore = await metric(metricsUrl, 'waku_rln_invalid_messages_total');
    await publishWhenReady(nd, 'from non-member D');
    await waitFor("B's count of invalid RLN messages",
      async () => (await metric(metricsUrl, 'waku_rln_invalid_messages_total')) > invalidBefore);

    // E registers while B runs; B takes its root at the next poll.
    await register(e.idCommitment, LIMIT);
    await b.proc.waitMatch(/on-chain group: 2 members/, { timeoutMs: WAIT_MS });
    assert.equal(await metric(metricsUrl, 'waku_rln_number_registered_memberships'), 2);
    const ne = await startNode(onchainArgs({ cred: e }), 'E', b);
    await publishWhenReady(ne, 'from new member E');
    await b.rest.waitMessage('pubsub', TOPIC, (m) => m.payload.toString() === 'from new member E',
      { timeoutMs: WAIT_MS, what: "new member E's message" });
    await publishWhenReady(na, 'from member A again');
    await b.rest.waitMessage('pubsub', TOPIC, (m) => m.payload.toString() === 'from member A again',
      { timeoutMs: WAIT_MS, what: "member A's second message" });

    const seen = (b.rest.inbox.get(`/relay/v1/messages/${encodeURIComponent(TOPIC)}`) ?? [])
      .map((m) => m.payload.toString());
    assert.ok(!seen.includes('from non-member D'), `B delivered the non-member's message: ${seen}`);
    for (const n of [na, nd, ne, b]) assert.equal(n.proc.child.exitCode, null, `${n.proc.name} exited`);
  });

test('an endpoint that answers garbage, too much, errors or nothing does not stop the node',
  { skip, timeout: 600_000 }, async () => {
    const answers = [
      (res) => res.end('x'.repeat(200_000)),                                  // too large
      (res) => res.end('<html>502 Bad Gateway</html>'),                        // not JSON
      (res, id) => res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message: 'execution reverted' } })),
      (res, id) => res.end(JSON.stringify({ jsonrpc: '2.0', id: id + 7, result: '0x01' })), // another id
      (res, id) => res.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0xzz' })),          // not hex
      () => {},                                                                // never answers
    ];
    let calls = 0;
    const liar = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; });
      req.on('end', () => {
        const { id, method } = JSON.parse(body);
        if (method === 'eth_chainId') return res.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0x539' }));
        answers[Math.min(calls++, answers.length - 1)](res, id);
      });
    });
    await new Promise((resolve) => liar.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${liar.address().port}`;
    try {
      const f = await startNode(onchainArgs({ url }), 'F');
      for (const why of [/exceeds 65536 bytes/, /not a JSON object/, /JSON-RPC error -32000: execution reverted/,
        /not the request's id/, /not hex data/, /no answer within 10000 ms/])
        await f.proc.waitMatch(why, { timeoutMs: WAIT_MS });
      const info = await f.rest.info();
      assert.equal(info.status, 200);
      assert.equal(f.proc.child.exitCode, null);
    } finally {
      liar.closeAllConnections();
      liar.close();
    }
  });

test('a wrong keystore password stops the node with an error naming the flag', { skip, timeout: 120_000 },
  async () => {
    const g = keystore('g', 0);
    const proc = new Proc(bin, ['--listen-address=127.0.0.1', '--tcp-port=0', '--rest=false',
      ...onchainArgs({ cred: g }).map((x) => (x.startsWith('--rln-relay-cred-password=') ? '--rln-relay-cred-password=wrong' : x))],
    { name: 'G' });
    await proc.waitMatch(/rln-relay-cred-password does not open the keystore/, { timeoutMs: WAIT_MS });
    const { code } = await proc.waitExit({ timeoutMs: WAIT_MS });
    assert.notEqual(code, 0);
  });
