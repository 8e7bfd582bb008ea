// ld_libnode (tests/interop/libnode/libnode.c), one liblogosdelivery context driven through the
// public C API: commands on stdin, one `OK …` / `ERR …` result line each, every event of the
// context as `EVENT <json>`. Used by the channel interop suite (reliable-channel.test.mjs).
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
  if (line.event === undefined) line.event = JSON.parse(line.text.slice('EVENT '.length));
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
    assert.ok(this.addr, `no TCP loopback address in ${addrs}`);
    this.peerId = this.addr.split('/p2p/').pop();
  }

  get lines() {
    return this.proc.lines;
  }

  describe() {
    return this.proc.describe();
  }

  /** Writes one command; resolves with {ok, text} of its result line. */
  async command(text, { timeoutMs = STEP_MS } = {}) {
    const mark = this.lines.length;
    this.proc.child.stdin.write(`${text}\n`);
    const line = await this.proc.waitLine(
      (l) => l.stream === 'stdout' && RESULT_RE.test(l.text) && this.lines.indexOf(l) >= mark, (l) => l,
      `the result of ${text.slice(0, 80)}`, timeoutMs);
    const [tag] = line.text.match(RESULT_RE);
    return { ok: tag.startsWith('OK'), text: line.text.slice(tag.length) };
  }

  async commandOk(text, opts) {
    const r = await this.command(text, opts);
    assert.ok(r.ok, `${text.slice(0, 80)} failed: ${r.text}\n${this.describe()}`);
    return r;
  }

  /** The first event whose JSON satisfies `pred`, now or later. */
  waitEvent(pred, what, { timeoutMs = STEP_MS } = {}) {
    return this.proc.waitLine((l) => {
      const e = eventOf(l);
      return e != null && pred(e);
    }, (l) => l.event, what, timeoutMs);
  }

  /** Every event so far satisfying `pred`, in the order the library reported them. */
  events(pred = () => true) {
    return this.lines.map(eventOf).filter((e) => e != null && pred(e));
  }

  /** Sends QUIT; resolves with the exit status. */
  async quit() {
    this.proc.child.stdin.write('QUIT\n');
    return this.proc.waitExit({ timeoutMs: EXIT_MS });
  }
}
