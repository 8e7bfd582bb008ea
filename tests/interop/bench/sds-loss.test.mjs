// The short form of bench/sds-loss.mjs (js-waku's ReliableChannel on a simulated clock and a
// lossy in-memory wire): checks that the harness really drives the sdk's channels and counts
// their wire honestly, so that the figure in bench/RESULTS.md means what it says. Each run is a
// child process (the bench replaces the process's timers and Date).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

const BENCH = fileURLToPath(new URL('./sds-loss.mjs', import.meta.url));
const JS_BLOOM_BYTES = 18752; // @waku/sds 0.0.8's default filter, in every content and sync message

async function bench(...args) {
  const { stdout } = await promisify(execFile)(process.execPath, [BENCH, '--json', ...args],
    { cwd: fileURLToPath(new URL('..', import.meta.url)), timeout: 120_000 });
  return JSON.parse(stdout.trim().split('\n').pop());
}

function assertCountsConsistent(r) {
  const kinds = Object.keys(r.count);
  assert.equal(r.sends, kinds.reduce((a, k) => a + r.count[k], 0), 'sends are the sum of the kinds');
  assert.equal(r.wireBytes, kinds.reduce((a, k) => a + r.bytes[k], 0), 'wire bytes are the sum of the kinds');
  assert.equal(r.copiesDelivered + r.copiesLost, 2 * r.sends, 'every broadcast makes one copy per other participant');
  assert.equal(r.bloomBytes, JS_BLOOM_BYTES * r.sends, 'the bloom filter is in every message');
  assert.equal(r.count.content, r.messages, 'each message is sent once as content, then only retransmitted');
  assert.ok(r.deliveries <= r.expectedDeliveries && r.received <= r.expectedDeliveries);
  assert.ok(r.acknowledged <= r.messages);
  assert.equal(r.bytesPerPayloadByte, r.wireBytes / r.payloadBytes);
}

describe('bench/sds-loss.mjs: js-waku ReliableChannel on a simulated clock', () => {
  it('without loss every message is delivered everywhere and acknowledged, through the sdk\'s own timers', async () => {
    const r = await bench('--messages', '30', '--loss', '0', '--cap', '600');
    assertCountsConsistent(r);
    assert.equal(r.complete, true, JSON.stringify(r));
    assert.equal(r.deliveries, 60);
    assert.equal(r.received, 60);
    assert.equal(r.acknowledged, 30);
    assert.equal(r.copiesLost, 0);
    assert.equal(r.count.retransmission, 0, 'nothing is resent once acknowledged within the 30 s retry interval');
    // the last messages are acknowledged only by a sync: the sdk's sync timer ran on the clock
    assert.ok(r.count.sync > 0, 'sync messages were sent');
    assert.ok(r.simulatedS > 0 && r.simulatedS < 600, `simulated ${r.simulatedS} s`);
  });

  it('with 30 % loss and a store, the sdk fetches the lost messages from the store and completes', async () => {
    const r = await bench('--messages', '30', '--loss', '300', '--cap', '600', '--store');
    assertCountsConsistent(r);
    assert.ok(r.copiesLost > 0, 'copies were lost');
    assert.equal(r.complete, true, JSON.stringify(r));
    assert.equal(r.deliveries, 60);
    assert.ok(r.storeMessages > 0, 'lost messages came back from the store');
  });

  it('with 30 % loss and no store, js asks for SDS-R repairs and never answers one', async () => {
    const r = await bench('--messages', '30', '--loss', '300', '--cap', '600');
    assertCountsConsistent(r);
    assert.ok(r.copiesLost > 0, 'copies were lost');
    assert.ok(r.repairRequests > 0, 'repair requests were sent');
    assert.equal(r.count.repairAnswer, 0);
    assert.equal(r.repairAnswersSent, 0, 'ReliableChannel never calls sweepRepairIncomingBuffer');
  });
});
