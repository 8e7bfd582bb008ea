// Spawning the C programs (ld_testpeer and logosdelivery) and reading what they print.
// ld_testpeer prints one JSON object per line on stdout; logosdelivery logs free text or JSON lines.
import './node20-compat.mjs';

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

export const LISTEN_ADDR_RE = /\/ip4\/\S+?\/tcp\/\d+\/p2p\/\w+/;
export const CANARY_EXIT = { ok: 0, unreachable: 2, handshake: 3, unsupported: 4, timeout: 5 };

/** The js-libp2p implementation of the same command lines, as a `command` for Proc and helpers. */
export const JSPEER_CLI = [process.execPath, fileURLToPath(new URL('./jspeer-cli.mjs', import.meta.url))];

const STOP_GRACE_MS = 5_000;
const TAIL_LINES = 40;
const live = new Set();

/** Path of ld_testpeer from $LD_TESTPEER, or null when it is not built. */
export function testpeerPath() {
  const path = process.env.LD_TESTPEER;
  return path && existsSync(path) ? path : null;
}

/** Path of the node program from $LD_BIN, or null when it is not built. */
export function nodePath() {
  const path = process.env.LD_BIN;
  return path && existsSync(path) ? path : null;
}

/** Reason to skip a test when a program is missing, or false. */
export function missing(what, path) {
  return path ? false : `${what} is not built (set ${what === 'ld_testpeer' ? 'LD_TESTPEER' : 'LD_BIN'})`;
}

function timeoutError(what, ms, proc) {
  const err = new Error(`${what} not seen within ${ms} ms\n${proc.describe()}`);
  err.name = 'TimeoutError';
  return err;
}

/**
 * A child process whose output is read line by line. Lines of stdout that parse as JSON objects
 * are kept in `events`; every line of both streams is kept in `lines` ({stream, text, json}).
 * Waiters are matched against everything received so far, then against what comes next, and
 * fail as soon as the process exits without printing a match. `command` is a path, or an array
 * of a path and leading arguments ([process.execPath, 'script.mjs']).
 */
export class Proc {
  constructor(command, args, { env, name } = {}) {
    const [file, ...prefix] = [].concat(command);
    this.name = name ?? file.split('/').pop();
    this.args = [...prefix, ...args];
    this.lines = [];
    this.events = [];
    this.waiters = new Set();
    this.started = performance.now();
    this.child = spawn(file, this.args, {
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.pid = this.child.pid;
    live.add(this);
    this.exit = new Promise((resolve) => {
      this.child.on('error', (err) => {
        this.spawnError = err;
        resolve({ code: null, signal: null, error: err });
      });
      this.child.on('close', (code, signal) => resolve({ code, signal }));
    }).then((status) => {
      live.delete(this);
      this.status = status;
      this.flushWaiters();
      return status;
    });
    this.child.stdin.on('error', () => {});
    this.readLines(this.child.stdout, 'stdout');
    this.readLines(this.child.stderr, 'stderr');
  }

  readLines(stream, which) {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (data) => {
      const parts = (rest + data).split('\n');
      rest = parts.pop();
      for (const text of parts) this.addLine(which, text);
    });
    stream.on('end', () => {
      if (rest !== '') this.addLine(which, rest);
    });
  }

  addLine(stream, text) {
    let json;
    if (text.startsWith('{')) {
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
    }
    const line = { stream, text, json };
    this.lines.push(line);
    if (stream === 'stdout' && json != null) this.events.push(json);
    for (const waiter of this.waiters) {
      if (waiter.match(line)) {
        this.waiters.delete(waiter);
        waiter.resolve(waiter.pick(line));
      }
    }
  }

  flushWaiters() {
    for (const waiter of this.waiters) waiter.reject(this.exitError(waiter.what));
    this.waiters.clear();
  }

  exitError(what) {
    const err = new Error(`${this.name} exited (${JSON.stringify(this.status)}) before ${what}\n${this.describe()}`);
    err.name = 'ExitedError';
    return err;
  }

  /** The command line and the last lines printed, for assertion messages. */
  describe() {
    const tail = this.lines.slice(-TAIL_LINES).map((l) => `  [${l.stream}] ${l.text}`).join('\n');
    return `$ ${this.name} ${this.args.join(' ')}\n${tail}`;
  }

  waitLine(match, pick, what, timeoutMs) {
    const found = this.lines.find(match);
    if (found != null) return Promise.resolve(pick(found));
    if (this.status != null) return Promise.reject(this.exitError(what));
    let waiter;
    let timer;
    return new Promise((resolve, reject) => {
      waiter = { match, pick, what, resolve, reject };
      this.waiters.add(waiter);
      timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(timeoutError(what, timeoutMs, this));
      }, timeoutMs);
    }).finally(() => clearTimeout(timer));
  }

  /**
   * The first stdout JSON event whose `event` equals `name` and for which `pred` holds.
   * `skip` matching events are passed over first (waitEvent('ping', {skip: 2}) is the third).
   */
  waitEvent(name, { pred = () => true, skip = 0, timeoutMs = 20_000 } = {}) {
    let seen = 0;
    const match = (l) => l.stream === 'stdout' && l.json?.event === name && pred(l.json) && seen++ >= skip;
    return this.waitLine(match, (l) => l.json, `event ${name}`, timeoutMs);
  }

  /** The first line (either stream) matching `re`; resolves with the match array. */
  waitMatch(re, { timeoutMs = 20_000 } = {}) {
    return this.waitLine((l) => re.test(l.text), (l) => l.text.match(re), `a line matching ${re}`, timeoutMs);
  }

  /** All stdout JSON events named `name` received so far. */
  eventsNamed(name) {
    return this.events.filter((e) => e.event === name);
  }

  stdout() {
    return this.lines.filter((l) => l.stream === 'stdout').map((l) => l.text).join('\n');
  }

  stderr() {
    return this.lines.filter((l) => l.stream === 'stderr').map((l) => l.text).join('\n');
  }

  /** Resolves with {code, signal} once the process has exited, or rejects after timeoutMs. */
  async waitExit({ timeoutMs = 20_000 } = {}) {
    let timer;
    const expiry = new Promise((_, reject) => {
      timer = setTimeout(() => reject(timeoutError('exit', timeoutMs, this)), timeoutMs);
    });
    try {
      return await Promise.race([this.exit, expiry]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends `signal`, waits up to graceMs for the exit, then SIGKILLs. Resolves with the status. */
  async stop({ signal = 'SIGTERM', graceMs = STOP_GRACE_MS } = {}) {
    if (this.status != null) return this.status;
    this.child.kill(signal);
    try {
      return await this.waitExit({ timeoutMs: graceMs });
    } catch {
      this.child.kill('SIGKILL');
      await this.exit;
      return { ...this.status, killed: true };
    }
  }

  closeStdin() {
    this.child.stdin.end();
  }
}

/** Stops every child still running (for after() hooks). */
export async function stopAll() {
  await Promise.all([...live].map((p) => p.stop({ graceMs: 2_000 })));
}

process.on('exit', () => {
  for (const p of live) p.child.kill('SIGKILL');
});

function flag(args, name, value) {
  if (value != null) args.push(`--${name}`, String(value));
}

/**
 * Starts `ld_testpeer listen`; resolves once it printed its `listening` event with
 * {proc, peerId, addr (first address, with /p2p/), addrs}.
 */
export async function startTestpeer({ key, addr, path = testpeerPath(), extraArgs = [], timeoutMs = 20_000 } = {}) {
  const args = ['listen'];
  flag(args, 'key', key);
  flag(args, 'addr', addr);
  args.push(...extraArgs);
  const proc = new Proc(path, args, { name: 'ld_testpeer' });
  try {
    const ev = await proc.waitEvent('listening', { timeoutMs });
    return { proc, peerId: ev.peerId, addrs: ev.addrs, addr: ev.addrs[0] };
  } catch (err) {
    await proc.stop();
    throw err;
  }
}

/**
 * Runs `ld_testpeer dial <ma>` to completion. Resolves with
 * {code, events, connected, identified, pings[], echo, done, error, proc}.
 */
export async function runTestpeerDial(ma, { ping, echoBytes, echoStreams, timeout, path = testpeerPath(),
  extraArgs = [], timeoutMs = 120_000 } = {}) {
  const args = ['dial', ma];
  flag(args, 'ping', ping);
  flag(args, 'echo-bytes', echoBytes);
  flag(args, 'echo-streams', echoStreams);
  flag(args, 'timeout', timeout);
  args.push(...extraArgs);
  const proc = new Proc(path, args, { name: 'ld_testpeer' });
  let status;
  try {
    status = await proc.waitExit({ timeoutMs });
  } finally {
    await proc.stop();
  }
  const first = (name) => proc.eventsNamed(name)[0];
  return {
    code: status.code,
    events: proc.events,
    connected: first('connected'),
    identified: first('identified'),
    pings: proc.eventsNamed('ping').map((e) => e.rttMs),
    echo: first('echo'),
    done: first('done'),
    error: first('error'),
    proc,
  };
}

/**
 * Starts the node program with nwaku's flags; resolves once it logged a listen address with
 * {proc, addr (the logged multiaddr), peerId}.
 */
export async function startNode({ nodekey, logFormat, path = nodePath(), extraArgs = [], timeoutMs = 30_000 } = {}) {
  const args = [];
  if (nodekey != null) args.push(`--nodekey=${nodekey}`);
  args.push('--listen-address=127.0.0.1', '--tcp-port=0');
  if (logFormat != null) args.push(`--log-format=${logFormat}`);
  args.push(...extraArgs);
  const proc = new Proc(path, args, { name: 'logosdelivery' });
  try {
    const [addr] = await proc.waitMatch(LISTEN_ADDR_RE, { timeoutMs });
    return { proc, addr, peerId: addr.split('/p2p/').pop() };
  } catch (err) {
    await proc.stop();
    throw err;
  }
}

/** The JSON object a program printed on stdout: the whole output, else its last JSON line. */
function parseJsonOutput(proc) {
  try {
    return JSON.parse(proc.stdout());
  } catch {
    return proc.lines.filter((l) => l.stream === 'stdout' && l.json != null).at(-1)?.json;
  }
}

/**
 * Runs `logosdelivery canary <ma>`. Resolves with {code, result (the parsed JSON object or
 * undefined), stdout, stderr, ms, proc}.
 */
export async function runCanary(ma, { ping, timeout, path = nodePath(), extraArgs = [], timeoutMs = 60_000 } = {}) {
  const args = ['canary', ma];
  flag(args, 'ping', ping);
  flag(args, 'timeout', timeout);
  args.push(...extraArgs);
  const proc = new Proc(path, args, { name: 'logosdelivery' });
  let status;
  try {
    status = await proc.waitExit({ timeoutMs });
  } finally {
    await proc.stop();
  }
  return {
    code: status.code,
    result: parseJsonOutput(proc),
    stdout: proc.stdout(),
    stderr: proc.stderr(),
    ms: performance.now() - proc.started,
    proc,
  };
}

/** Resident memory of a process in MiB: {rss (VmRSS), hwm (VmHWM)} from /proc/<pid>/status. */
export async function readRss(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (name) => Number(status.match(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm'))?.[1]);
  return { rss: kib('VmRSS') / 1024, hwm: kib('VmHWM') / 1024 };
}
