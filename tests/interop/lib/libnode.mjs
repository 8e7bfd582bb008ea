// ld_libnode (tests/interop/libnode/libnode.c), one liblogosdelivery context driven through the
// public C API: commands on stdin, one `OK …` / `ERR …` result line each, every event of the
// context as `EVENT <json>`. Used by the library and channel interop suites (library.test.mjs,
// reliable-channel.test.mjs).
import './node20-compat.mjs';

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';

import { Proc } from './cpeer.mjs';

export const LIBNODE = process.env.LD_LIBNODE && existsSync(process.env.LD_LIBNODE) ? process.env.LD_LIBNODE : null;

const RESULT_RE = /^(OK|ERR) ?/;
const START_MS = 30_000;
const STEP_MS = 30_000;
const EXIT_MS = 20_000;

function eventOf(line) {
  if (line.stream !== 'stdout' || !line.text.startsWith('EVENT ')) return null;
  if (line.event === undefined) {
    const raw = line.text.slice('EVENT '.length);
    line.event = JSON.parse(raw);
    // JSON numbers lose digits past 2^53: the nanosecond timestamp is read from the text.
    const ts = raw.match(/"timestamp":(-?\d+)/)?.[1];
    line.timestamp = ts == null ? undefined : BigInt(ts);
  }
  return line.event;
}

export class LibNode {
  /** Starts ld_libnode with the create_node configuration `config`; resolves once it printed ADDRS. */
  static async start(config, { timeoutMs = START_MS, name = 'ld_libnode' } = {}) {
    const proc = new Proc(LIBNODE, [JSON.stringify(config)], { name });
    let line;
    try {
      line = await proc.waitLine((l) => l.stream === 'stdout' && /^(ADDRS|ERR) /.test(l.text), (l) => l.text,
        'ADDRS', timeoutMs);
    } catch (err) {
      await proc.stop();
      throw err;
    }
    if (!line.startsWith('ADDRS ')) {
      await proc.stop();
      throw new Error(`ld_libnode did not start: ${line}\n${proc.describe()}`);
    }
    return new LibNode(proc, line.slice('ADDRS '.length).split(','));
  }

  constructor(proc, addrs) {
    this.proc = proc;
    this.addrs = addrs;
    this.addr = addrs.find((a) => /^\/ip4\/127\.0\.0\.1\/tcp\/\d+\/p2p\//.test(a));
    this.wsAddr = addrs.find((a) => /\/tcp\/\d+\/ws\/p2p\//.test(a)) ?? null;
    assert.ok(this.addr, `no TCP loopback address in ${addrs}`);
    this.peerId = this.addr.split('/p2p/').pop();
  }

  get lines() {
    return this.proc.lines;
  }

  describe() {
    return this.proc.describe();
  }

  /** Writes one command; resolves with {ok, text, index} of its result line. */
  async command(text, { timeoutMs = STEP_MS } = {}) {
    const mark = this.lines.length;
    this.proc.child.stdin.write(`${text}\n`);
    const line = await this.proc.waitLine(
      (l) => l.stream === 'stdout' && RESULT_RE.test(l.text) && this.lines.indexOf(l) >= mark, (l) => l,
      `the result of ${text.slice(0, 80)}`, timeoutMs);
    const [tag] = line.text.match(RESULT_RE);
    return { ok: tag.startsWith('OK'), text: line.text.slice(tag.length), index: this.lines.indexOf(line) };
  }

  async commandOk(text, opts) {
    const r = await this.command(text, opts);
    assert.ok(r.ok, `${text.slice(0, 80)} failed: ${r.text}\n${this.describe()}`);
    return r;
  }

  /** The first event whose JSON satisfies `pred`, now or later. */
  async waitEvent(pred, what, opts) {
    return (await this.waitEventLine(pred, what, opts)).event;
  }

  /**
   * The first EVENT line whose JSON satisfies `pred`, now or later: {event, timestamp (the
   * message timestamp read exactly, a bigint), index}.
   */
  waitEventLine(pred, what, { timeoutMs = STEP_MS } = {}) {
    return this.proc.waitLine((l) => {
      const e = eventOf(l);
      return e != null && pred(e);
    }, (l) => ({ event: l.event, timestamp: l.timestamp, index: this.lines.indexOf(l) }), what, timeoutMs);
  }

  /** Every event so far satisfying `pred`, in the order the library reported them. */
  events(pred = () => true) {
    return this.lines.map(eventOf).filter((e) => e != null && pred(e));
  }

  /** Sends QUIT; resolves with the exit status. */
  async quit() {
    return (await this.quitWithResults()).status;
  }

  /** Sends QUIT; resolves with {status, results (the stop and destroy lines)}. */
  async quitWithResults() {
    const mark = this.lines.length;
    this.proc.child.stdin.write('QUIT\n');
    const status = await this.proc.waitExit({ timeoutMs: EXIT_MS });
    const results = this.lines.slice(mark).filter((l) => l.stream === 'stdout' && RESULT_RE.test(l.text))
      .map((l) => l.text);
    return { status, results };
  }
}
