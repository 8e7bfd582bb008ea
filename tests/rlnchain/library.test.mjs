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
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { missing, nodePath } from '../interop/lib/cpeer.mjs';
import { LIBNODE, LibNode } from '../interop/lib/libnode.mjs';
import { startRelayNode } from '../interop/lib/relaynode.mjs';
import * as rlnchain from './chain.mjs';
import { CHAIN_ID, PASSWORD, WAIT_MS } from './chain.mjs';

const CLUSTER = 42;
const TOPIC = `/waku/2/rs/${CLUSTER}/0`;
const CONTENT_TOPIC = '/rlnchain/1/library/proto';
const LIMIT = 5;

const bin = nodePath();
const fixtures = process.env.LD_RLN_FIXTURES;
const skip = missing('logosdelivery', bin) || (fixtures ? false : 'LD_RLN_FIXTURES is not set')
  || (LIBNODE ? false : 'LD_LIBNODE is not set');

let chain; // rlnchain.startChain()
let dir;

const register = (idCommitment, limit) => rlnchain.register(chain, idCommitment, limit);

function keystore(name, index, { limit = LIMIT } = {}) {
  return rlnchain.keystore(bin, dir, name, index, { limit, contract: chain.contract });
}

function startNode(args, name, peer) {
  return startRelayNode({ clusterId: CLUSTER, shards: [0], name, timeoutMs: WAIT_MS,
    extraArgs: [...args, `--staticnode=${peer.addr}`] });
}

const publishWhenReady = (node, text) => rlnchain.publishWhenReady(node, TOPIC, CONTENT_TOPIC, text);

const received = (text) => (e) => e.eventType === 'message_received'
  && Buffer.from(e.message?.payload ?? []).toString() === text;

rlnchain.useChain('ld-rlnlib-', skip, (c, d) => {
  chain = c;
  dir = d;
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
