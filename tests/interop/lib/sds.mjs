// The js-waku side of the SDS checks: `@waku/sds` (pinned in package-lock.json) and its wire
// schema from `@waku/proto`, plus the internals the package does not export (the bloom filter
// with its hash, the SDS-R timing) loaded from the package's own files.
//
// Used by sds.test.mjs (live comparison with ld_sdstool) and gen-sds-vectors.mjs (the vectors
// committed for the unit tests).
import './node20-compat.mjs';

import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { proto_sds_message } from '@waku/proto';
import * as sds from '@waku/sds';

// The package's entry point is dist/index.js; its other modules sit beside it.
const sdsDist = path.dirname(fileURLToPath(import.meta.resolve('@waku/sds')));
const internal = async (rel) => import(pathToFileURL(path.join(sdsDist, rel)).href);

export const { DefaultBloomFilter } = await internal('bloom_filter/bloom.js');
export const { hashN } = await internal('nim_hashn/nim_hashn.mjs');
export const { RepairManager } = await internal('message_channel/repair/repair.js');
export const { DEFAULT_BLOOM_FILTER_OPTIONS } = await internal(
  'message_channel/message_channel.js',
);
export const SdsProto = proto_sds_message.SdsMessage;
export { sds };

export const toHex = (u8) => Buffer.from(u8).toString('hex');
export const fromHex = (h) => new Uint8Array(Buffer.from(h, 'hex'));
export const sha256hex = (s) => createHash('sha256').update(s).digest('hex');

// A deterministic pseudo-random generator (mulberry32) so that generated vectors are stable.
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomBytes(rand, n) {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(rand() * 256);
  return out;
}

// SdsMessage objects (as @waku/proto's codec takes them) covering every field and presence
// rule: implicit-presence strings left empty, optional fields set to zero/empty, history entries
// with and without hint and sender, repair requests, non-ASCII text, Lamport at the limits.
export function messageCases() {
  const rand = prng(20251113);
  const hint = () => randomBytes(rand, 32);
  const id = (s) => sha256hex(s);
  return [
    {
      name: 'content with history, hints and bloom',
      msg: {
        senderId: 'alice',
        messageId: id('hello'),
        channelId: 'my-channel',
        lamportTimestamp: 1763000000123n,
        causalHistory: [
          { messageId: id('a'), retrievalHint: hint(), senderId: 'bob' },
          { messageId: id('b'), retrievalHint: hint(), senderId: 'carol' },
        ],
        bloomFilter: randomBytes(rand, 24),
        repairRequest: [],
        content: new TextEncoder().encode('hello'),
      },
    },
    {
      name: 'sync with repair requests',
      msg: {
        senderId: 'bob',
        messageId: 'sync-4fzyo82mvyr',
        channelId: 'my-channel',
        lamportTimestamp: 1763000000999n,
        causalHistory: [{ messageId: id('c'), senderId: 'alice' }],
        bloomFilter: randomBytes(rand, 16),
        repairRequest: [
          { messageId: id('x'), retrievalHint: hint(), senderId: 'carol' },
          { messageId: id('y'), senderId: 'alice' },
          { messageId: id('z') },
        ],
      },
    },
    {
      name: 'ephemeral',
      msg: {
        senderId: 'carol',
        messageId: id('typing'),
        channelId: 'my-channel',
        causalHistory: [],
        repairRequest: [],
        content: new TextEncoder().encode('typing'),
      },
    },
    {
      name: 'empty strings omitted, zero and empty optionals written',
      msg: {
        senderId: '',
        messageId: '',
        channelId: '',
        lamportTimestamp: 0n,
        causalHistory: [{ messageId: '', retrievalHint: new Uint8Array(0), senderId: '' }],
        bloomFilter: new Uint8Array(0),
        repairRequest: [],
        content: new Uint8Array(0),
      },
    },
    {
      name: 'lamport at the top of uint64, non-ASCII ids',
      msg: {
        senderId: 'αβγδε',
        messageId: 'message-ü',
        channelId: '0',
        lamportTimestamp: 18446744073709551615n,
        causalHistory: [],
        repairRequest: [],
        content: randomBytes(rand, 300),
      },
    },
    {
      name: 'nothing set',
      msg: { senderId: '', messageId: '', channelId: '', causalHistory: [], repairRequest: [] },
    },
  ];
}

// The same object in the JSON form ld_sdstool prints and reads: byte fields as hex, the Lamport
// timestamp as a decimal string, absent optional fields as null.
export function toJson(m) {
  const entry = (e) => ({
    messageId: e.messageId ?? '',
    retrievalHint: e.retrievalHint != null ? toHex(e.retrievalHint) : null,
    senderId: e.senderId ?? null,
  });
  return {
    senderId: m.senderId ?? '',
    messageId: m.messageId ?? '',
    channelId: m.channelId ?? '',
    lamportTimestamp: m.lamportTimestamp != null ? m.lamportTimestamp.toString() : null,
    causalHistory: (m.causalHistory ?? []).map(entry),
    bloomFilter: m.bloomFilter != null ? toHex(m.bloomFilter) : null,
    repairRequest: (m.repairRequest ?? []).map(entry),
    content: m.content != null ? toHex(m.content) : null,
  };
}

export function fromJson(j) {
  const entry = (e) => {
    const out = { messageId: e.messageId };
    if (e.retrievalHint != null) out.retrievalHint = fromHex(e.retrievalHint);
    if (e.senderId != null) out.senderId = e.senderId;
    return out;
  };
  const m = {
    senderId: j.senderId,
    messageId: j.messageId,
    channelId: j.channelId,
    causalHistory: j.causalHistory.map(entry),
    repairRequest: j.repairRequest.map(entry),
  };
  if (j.lamportTimestamp != null) m.lamportTimestamp = BigInt(j.lamportTimestamp);
  if (j.bloomFilter != null) m.bloomFilter = fromHex(j.bloomFilter);
  if (j.content != null) m.content = fromHex(j.content);
  return m;
}

// How @waku/sds classifies a decoded message (Message.decode picks the subclass).
export function jsClass(bytes) {
  const m = sds.Message.decode(bytes);
  if (m === undefined) return 'invalid';
  if (sds.isContentMessage(m)) return 'content';
  if (sds.isSyncMessage(m)) return 'sync';
  if (sds.isEphemeralMessage(m)) return 'ephemeral';
  return 'invalid';
}

// A js-waku bloom filter holding `items`, with the default or the given parameters.
export function jsBloom(items, options = DEFAULT_BLOOM_FILTER_OPTIONS) {
  const f = new DefaultBloomFilter(options);
  for (const it of items) f.insert(it);
  return f;
}

// The non-zero 64-bit words of serialised filter bytes: [[index, '16 hex digits'], ...].
export function sparseWords(bytes) {
  const out = [];
  for (let i = 0; i < bytes.length; i += 8) {
    const w = toHex(bytes.subarray(i, i + 8));
    if (w !== '0000000000000000') out.push([i / 8, w]);
  }
  return out;
}

// SDS-R timing as js-waku computes it, relative to current time 0.
export function repairTiming(participantId, config = {}) {
  return new RepairManager(participantId, config);
}
