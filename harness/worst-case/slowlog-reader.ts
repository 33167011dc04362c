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
  /** Its first argument (an FCALL's function), when it has one. */
  first: string | undefined;
  /** A command a script ran (its client address `?:0`): counted in the script's own time. */
  script: boolean;
}

const [CR, MINUS, ZERO] = [0x0d, 0x2d, 0x30];
const SCRIPT_CLIENT = Buffer.from('?:0');

/** A cursor over a RESP reply; `undefined` from a reader means the bytes end before the value does. */
class Resp {
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

  /**
   * Past the next bulk string: its text when `keep`, else whether it is `same`'s bytes (or false);
   * null for a null bulk, undefined when incomplete.
   */
  string(keep: boolean, same?: Buffer): string | boolean | null | undefined {
    const length = this.header();
    if (length === undefined) return undefined;
    if (length < 0) return null;
    const [from, to] = [this.at, this.at + length];
    if (to + 2 > this.bytes.length) return undefined;
    this.at = to + 2;
    if (keep) return this.bytes.toString('utf8', from, to);
    return same !== undefined && length === same.length && this.bytes.compare(same, 0, length, from, to) === 0;
  }
}

/** One entry (`*6`: id, time, µs, arguments, client address, client name), or undefined if incomplete. */
function entryOf(resp: Resp): SlowlogEntry | undefined {
  const [, id, , micros, args] = [resp.header(), resp.header(), resp.header(), resp.header(), resp.header()];
  if (args === undefined || micros === undefined || id === undefined) return undefined;
  let [command, first]: unknown[] = ['', undefined];
  for (let n = 0; n < args; n++) {
    const arg = resp.string(n < 2);
    if (arg === undefined) return undefined;
    if (n === 0) command = arg;
    if (n === 1) first = arg ?? undefined;
  }
  const script = resp.string(false, SCRIPT_CLIENT);
  if (script === undefined || resp.string(false) === undefined) return undefined;
  return {
    id,
    micros,
    command: String(command).toLowerCase(),
    first: first as string | undefined,
    script: script === true,
  };
}

/** A reply read as it arrives: whole entries parsed, the bytes of a part one kept for the next chunk. */
export class SlowlogReply {
  private rest = Buffer.alloc(0);
  private count: number | undefined;
  readonly entries: SlowlogEntry[] = [];

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
      const entry = entryOf(resp);
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

  /** The `count` newest entries of the node's SLOWLOG, newest first. */
  get(count: number): Promise<SlowlogEntry[]> {
    const next = this.queue.then(() => this.request(count));
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

  private async request(count: number): Promise<SlowlogEntry[]> {
    const reply = new SlowlogReply();
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
