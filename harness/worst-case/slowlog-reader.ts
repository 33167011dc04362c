/**
 * SLOWLOG GET over a socket of its own, its reply read as raw RESP: of each entry only its id, duration,
 * command, first argument and whether a script ran it. ioredis turns every argument of every entry into
 * a Buffer: with the threshold at 0 µs a row's scripts log millions of commands, and decoding them was
 * most of the harness's own CPU (about 5-10 µs an entry; a skipped argument costs next to nothing).
 */
import { connect, type Socket } from 'node:net';
import type Redis from 'ioredis';

export interface SlowlogEntry {
  id: number;
  micros: number;
  /** The command's name, lower case. */
  command: string;
  /** Its first argument (an FCALL's function), when it has one (a script's command's: when asked for). */
  first: string | undefined;
  /** A command a script ran (its client address `?:0`): counted in the script's own time. */
  script: boolean;
}

const [CR, MINUS, ZERO] = [0x0d, 0x2d, 0x30];
const SCRIPT_CLIENT = Buffer.from('?:0');

/** A cursor over a RESP reply; `undefined` from a reader means the bytes end before the value does. */
class Resp {
  /** Where the last bulk string read lies in `bytes`: [from, to). */
  from = 0;
  to = 0;

  constructor(
    readonly bytes: Buffer,
    public at = 0,
  ) {}

  /** The number of the next header line (a length, a count or an integer), past its type byte. */
  header(): number | undefined {
    const { bytes } = this;
    let [at, value, sign] = [this.at + 1, 0, 1];
    if (bytes[at] === MINUS) [at, sign] = [at + 1, -1];
    for (; at < bytes.length && bytes[at] !== CR; at++) value = value * 10 + bytes[at] - ZERO;
    if (at + 1 >= bytes.length) return undefined;
    this.at = at + 2;
    return sign * value;
  }

  /** Past the next bulk string, its bytes at [from, to): false for a null bulk, undefined when incomplete. */
  bulk(): boolean | undefined {
    const length = this.header();
    if (length === undefined) return undefined;
    this.from = this.at;
    this.to = this.at + Math.max(0, length);
    if (length < 0) return false;
    if (this.to + 2 > this.bytes.length) return undefined;
    this.at = this.to + 2;
    return true;
  }

  /** Whether the last bulk string read is `same`'s bytes. */
  is(same: Buffer): boolean {
    const { from, to } = this;
    return to - from === same.length && this.bytes.compare(same, 0, same.length, from, to) === 0;
  }
}

/** Command names as logged (upper case) and as an entry gives them (lower case): a few dozen, each lowered once. */
const COMMAND_NAMES = new Map<string, string>();

function commandName(resp: Resp): string {
  const logged = resp.bytes.toString('latin1', resp.from, resp.to);
  let name = COMMAND_NAMES.get(logged);
  if (name === undefined) COMMAND_NAMES.set(logged, (name = logged.toLowerCase()));
  return name;
}

/**
 * One entry (`*6`: id, time, µs, arguments, client address, client name), or undefined if incomplete.
 * A script's command's first argument (a key) is decoded only with `scriptKeys`: most entries are a
 * script's, and decoding their keys was about half of the reading's CPU.
 */
function entryOf(resp: Resp, scriptKeys: boolean): SlowlogEntry | undefined {
  resp.header();
  const id = resp.header();
  resp.header();
  const micros = resp.header();
  const args = resp.header();
  if (args === undefined || micros === undefined || id === undefined) return undefined;
  let [command, firstFrom, firstTo] = ['', -1, -1];
  for (let n = 0; n < args; n++) {
    const found = resp.bulk();
    if (found === undefined) return undefined;
    if (n === 0) command = commandName(resp);
    else if (n === 1 && found) [firstFrom, firstTo] = [resp.from, resp.to];
  }
  if (resp.bulk() === undefined) return undefined;
  const script = resp.is(SCRIPT_CLIENT);
  if (resp.bulk() === undefined) return undefined;
  const first = firstFrom >= 0 && (scriptKeys || !script) ? resp.bytes.toString('utf8', firstFrom, firstTo) : undefined;
  return { id, micros, command, first, script };
}

/** A reply read as it arrives: whole entries parsed, the bytes of a part one kept for the next chunk. */
export class SlowlogReply {
  private rest = Buffer.alloc(0);
  private count: number | undefined;
  readonly entries: SlowlogEntry[] = [];

  /** `scriptKeys`: a script's commands' first arguments decoded too (entryOf). */
  constructor(private readonly scriptKeys = true) {}

  /** Takes a chunk; true once the whole reply is read. */
  take(chunk: Buffer): boolean {
    const resp = new Resp(this.rest.length > 0 ? Buffer.concat([this.rest, chunk]) : chunk);
    if (this.count === undefined) {
      const count = resp.bytes[0] === MINUS ? NaN : resp.header();
      if (Number.isNaN(count)) throw new Error(`SLOWLOG GET: ${resp.bytes.toString('utf8')}`);
      if (count === undefined) return this.keep(resp, 0);
      this.count = count;
    }
    while (this.entries.length < this.count) {
      const start = resp.at;
      const entry = entryOf(resp, this.scriptKeys);
      if (!entry) return this.keep(resp, start);
      this.entries.push(entry);
    }
    return true;
  }

  private keep(resp: Resp, from: number): false {
    this.rest = resp.bytes.subarray(from);
    return false;
  }
}

/** A node's socket for SLOWLOG GET, one request at a time. */
export class SlowlogReader {
  private socket?: Socket;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly node: Redis) {}

  /** The `count` newest entries of the node's SLOWLOG, newest first; a script's commands' keys only with `scriptKeys`. */
  get(count: number, scriptKeys = true): Promise<SlowlogEntry[]> {
    const next = this.queue.then(() => this.request(count, scriptKeys));
    this.queue = next.catch(() => undefined);
    return next;
  }

  close(): void {
    this.socket?.destroy();
    this.socket = undefined;
  }

  private async opened(): Promise<Socket> {
    if (this.socket) return this.socket;
    const { host, port, password, username } = this.node.options;
    const socket = connect({ host: host ?? '127.0.0.1', port: port ?? 6379 });
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    this.socket = socket;
    if (password) await this.send(username ? ['AUTH', username, password] : ['AUTH', password], () => true);
    return socket;
  }

  private async request(count: number, scriptKeys: boolean): Promise<SlowlogEntry[]> {
    const reply = new SlowlogReply(scriptKeys);
    await this.send(['SLOWLOG', 'GET', String(count)], (chunk) => reply.take(chunk));
    return reply.entries;
  }

  /** Writes `args` as a RESP command; hands the reply's chunks to `take` until it says the reply is whole. */
  private async send(args: string[], take: (chunk: Buffer) => boolean): Promise<void> {
    const socket = this.socket ?? (await this.opened());
    await new Promise<void>((resolve, reject) => {
      const done = (error?: Error) => {
        socket.off('data', onData).off('error', done);
        if (error) reject(error);
        else resolve();
      };
      const onData = (chunk: Buffer) => {
        try {
          if (take(chunk)) done();
        } catch (error) {
          done(error as Error);
        }
      };
      socket.on('data', onData).on('error', done);
      socket.write(`*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('')}`);
    });
  }
}
