/**
 * What one request cost Redis, read from every master's SLOWLOG with its threshold at 0 µs: each
 * command the request caused (scripts and plain ones, on every shard's node) with its own duration.
 * A SLOWLOG entry's duration is the command's execution time inside Redis, so a call's figure is the
 * time it held Redis, not a round trip.
 */
import { readFile } from 'node:fs/promises';
import type Redis from 'ioredis';
import { type SlowlogEntry, SlowlogReader } from './slowlog-reader';

/** Commands the meter itself and test plumbing send: never charged to a request. */
const PLUMBING = new Set(['slowlog', 'config', 'info', 'memory', 'scan', 'ping', 'client', 'cluster', 'hello']);
/** Entries kept per node between two readings: above the calls of the widest fan-out request. */
const SLOWLOG_ENTRIES = 100_000;

export interface RedisCost {
  /** Commands Redis ran for the request, all masters together. */
  calls: number;
  /** The longest of them, ms. */
  maxCallMs: number;
  /** All of them added up, ms. */
  totalMs: number;
  /** The longest call's command and first argument (the function's name for an FCALL). */
  maxCallName: string;
  /**
   * Commands the request's scripts ran inside Redis, by name: a figure the machine's load does not
   * move, which says where a slow call's time goes.
   */
  scriptCommands: Record<string, number>;
  /** The most commands one call's script ran (a figure the load does not move either). */
  maxCallCommands: number;
  /**
   * CPU time Redis's main threads spent (every master, ms) between two readings: no call of the request
   * can have held Redis's CPU longer, whatever a stalled host made of its wall time.
   */
  cpuMs: number;
  /**
   * The most time a master's main thread waited for a CPU, ready to run, between the two readings (the
   * kernel's schedstat run delay), ms: the part of a call's wall time the host's other processes took.
   * 0 where it cannot be read (a Redis of another host, a kernel without schedstats).
   */
  waitMs: number;
  /**
   * The least CPU time the longest call can have held (its time less every wait of its reading: all of
   * it might have fallen in that call), ms; the most over the readings a cost adds up.
   */
  leastHeldMs: number;
  /** The calls whose script ran a command on a key RedisMeter.mark matches (WorstRow.marks). */
  marked: MarkedCalls;
}

/** Calls of a kind: how many, the longest (ms) and the most commands one of them ran. */
export interface MarkedCalls {
  calls: number;
  maxMs: number;
  maxCommands: number;
}

/** All the commands of a script tally, added up. */
export function scriptCommandCount(tally: Readonly<Record<string, number>>): number {
  return Object.values(tally).reduce((sum, n) => sum + n, 0);
}

/** What a request that sent nothing cost. */
export const NO_COST: Readonly<RedisCost> = {
  calls: 0,
  maxCallMs: 0,
  totalMs: 0,
  maxCallName: '',
  scriptCommands: {},
  maxCallCommands: 0,
  cpuMs: 0,
  waitMs: 0,
  leastHeldMs: 0,
  marked: { calls: 0, maxMs: 0, maxCommands: 0 },
};

export class RedisMeter {
  /** The Redis functions the read requests ran (FCALL and FCALL_RO), by the name Redis knows them. */
  readonly functionsRun = new Set<string>();
  /** The keys (a command's first argument) that mark a call whose script ran a command on one (RedisCost.marked). */
  mark: RegExp | undefined;

  constructor(private readonly masters: () => Promise<Redis[]>) {}

  /** Keeps SLOWLOG_ENTRIES entries, paused until the first reset(). */
  async start(): Promise<void> {
    for (const node of await this.masters()) await node.config('SET', 'slowlog-max-len', String(SLOWLOG_ENTRIES));
    await this.pause();
  }

  /**
   * Logs nothing until the next reset(): what runs meanwhile (a row's filling, an unmeasured settle) is
   * never read, and logging each of its commands, then freeing the entries, cost Redis ~0.5 µs a command.
   */
  async pause(): Promise<void> {
    for (const node of await this.masters()) {
      await node.config('SET', 'slowlog-log-slower-than', '-1');
      await node.slowlog('RESET');
    }
  }

  private cpuMarkMs = 0;
  private waitMarkMs = new Map<Redis, number>();

  /** Forgets what Redis ran so far, and logs every command again (after a pause()): the next read() counts from here. */
  async reset(): Promise<void> {
    for (const node of await this.masters()) {
      await node.config('SET', 'slowlog-log-slower-than', '0');
      await node.slowlog('RESET');
    }
    this.polled = { ...NO_COST, scriptCommands: {} };
    this.cpuMarkMs = await this.cpuMs();
    this.waitMarkMs = await this.waits();
  }

  /** What poll() read since the last reading. */
  private polled: RedisCost = { ...NO_COST, scriptCommands: {} };
  /** The id of the newest entry read, by node: poll() reads the log without a reset, so nothing is lost. */
  private readonly lastIds = new Map<Redis, number>();

  /**
   * Reads what Redis ran so far without resetting the log (a reset would lose what runs between the
   * read and the reset): a run of more commands than the log keeps is read while it runs.
   */
  async poll(): Promise<void> {
    for (const node of await this.masters()) this.add(await this.newEntries(node));
  }

  /** What Redis ran since the last reset(), and a reset for the next reading. */
  async read(): Promise<RedisCost> {
    const cpuNowMs = await this.cpuMs();
    const waitMs = this.waitedSinceMark(await this.waits());
    for (const node of await this.masters()) {
      this.add(await this.newEntries(node));
      await node.slowlog('RESET');
    }
    const leastHeldMs = Math.max(0, this.polled.maxCallMs - waitMs);
    const cost = { ...this.polled, cpuMs: cpuNowMs - this.cpuMarkMs, waitMs, leastHeldMs };
    this.polled = { ...NO_COST, scriptCommands: {} };
    this.cpuMarkMs = await this.cpuMs();
    this.waitMarkMs = await this.waits();
    return cost;
  }

  /** By node, how many entries its log took while the last answer to a look travelled. */
  private readonly drifts = new Map<Redis, number>();

  /**
   * The entries logged since the last look, newest first: only those are asked for (ids count up across
   * resets), so a poll while a job runs does not hold Redis over the whole log each time.
   */
  private async newEntries(node: Redis): Promise<SlowlogEntry[]> {
    const [newest] = await this.slowlogGet(node, 1);
    const last = this.lastIds.get(node) ?? -1;
    if (!newest || newest.id <= last) return [];
    // Commands logged since that first look push older entries down: asked for twice as many more as
    // the log took over the last answer (a running job logs on while a reply travels), and again until
    // the answer reaches the entry after the last one read (ids count up by one an entry): an answer
    // short of it is read again whole.
    let [seen, logged] = [newest.id, this.drifts.get(node) ?? 0];
    for (;;) {
      const count = last < 0 ? SLOWLOG_ENTRIES : Math.min(seen - last + 2 * logged, SLOWLOG_ENTRIES);
      const entries = await this.slowlogGet(node, count);
      const oldest = entries[entries.length - 1];
      logged = Math.max(0, (entries[0]?.id ?? seen) - seen);
      this.drifts.set(node, logged);
      // Fewer than asked: the log holds no older entry (a reset since the last look dropped them).
      if (last < 0 || count >= SLOWLOG_ENTRIES || entries.length < count || oldest.id <= last + 1) {
        if (entries.length > 0) this.lastIds.set(node, Math.max(last, entries[0].id));
        return entries.filter(({ id }) => id > last);
      }
      seen = entries[0].id;
    }
  }

  private readonly readers = new Map<Redis, SlowlogReader>();

  /** The `count` newest entries of the node's SLOWLOG, newest first (a script's commands' keys only to mark calls by). */
  private slowlogGet(node: Redis, count: number): Promise<SlowlogEntry[]> {
    if (!this.readers.has(node)) this.readers.set(node, new SlowlogReader(node));
    return this.readers.get(node)!.get(count, this.mark !== undefined);
  }

  /** Adds entries of the log (newest first) to what was polled. */
  private add(entries: SlowlogEntry[]): void {
    const cost = this.polled;
    // Oldest first: a script's commands are logged as they end, before the call that ran them.
    let [inCall, marked] = [0, false];
    for (const { micros, command, first, script } of [...entries].reverse()) {
      if (script) {
        cost.scriptCommands[command] = (cost.scriptCommands[command] ?? 0) + 1;
        inCall += 1;
        marked ||= first !== undefined && this.mark?.test(first) === true;
        continue;
      }
      cost.maxCallCommands = Math.max(cost.maxCallCommands, inCall);
      if (marked) cost.marked = markedWith(cost.marked, micros / 1000, inCall);
      [inCall, marked] = [0, false];
      if (PLUMBING.has(command)) continue;
      if (command.startsWith('fcall')) this.functionsRun.add(String(first));
      const ms = micros / 1000;
      cost.calls += 1;
      cost.totalMs += ms;
      if (ms > cost.maxCallMs) {
        cost.maxCallMs = ms;
        cost.maxCallName = command.startsWith('fcall') ? `${command} ${first}` : command;
      }
    }
  }

  /** Bytes Redis holds in all (used_memory over every master). */
  async usedBytes(): Promise<number> {
    let bytes = 0;
    for (const node of await this.masters()) {
      const info = await node.info('memory');
      bytes += Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? 0);
    }
    return bytes;
  }

  /** Keys matching `match` on every master: how many, their entries (members, fields) and MEMORY USAGE bytes. */
  async held(match: string): Promise<{ keys: number; entries: number; bytes: number }> {
    const held = { keys: 0, entries: 0, bytes: 0 };
    for (const node of await this.masters()) {
      const keys = new Set<string>();
      let cursor = '0';
      do {
        const [next, found] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1000);
        for (const key of found) keys.add(key);
        cursor = next;
      } while (cursor !== '0');
      for (const key of keys) {
        held.keys += 1;
        held.bytes += Number(await node.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
        held.entries += await entriesOf(node, key);
      }
    }
    return held;
  }

  /**
   * CPU time Redis's main threads have spent (user and system, every master), ms: the thread that runs
   * every call, so a call cannot have held Redis's CPU longer. It does not advance while the host runs
   * something else, so a stalled call's wall time does not reach it, nor does a background thread's
   * work (a lazy free of a deleted key, the allocator's purge) that ran beside the call.
   */
  async cpuMs(): Promise<number> {
    let ms = 0;
    for (const node of await this.masters()) {
      const info = await node.info('cpu');
      const seconds = (name: string) => {
        const value = new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1];
        if (value === undefined) throw new Error(`INFO cpu has no ${name} (Redis >= 7.0 reports it)`);
        return Number(value);
      };
      ms += (seconds('used_cpu_user_main_thread') + seconds('used_cpu_sys_main_thread')) * 1000;
    }
    return ms;
  }

  /**
   * Function calls Redis was sent (FCALL and FCALL_RO) and commands it ran in all, a script's own too
   * (commandstats: total_commands_processed counts a script's commands as well), every master.
   */
  async commandCounts(): Promise<{ calls: number; commands: number }> {
    const counts = { calls: 0, commands: 0 };
    for (const node of await this.masters())
      for (const [, name, calls] of (await node.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
        counts.commands += Number(calls);
        if (name === 'fcall' || name === 'fcall_ro') counts.calls += Number(calls);
      }
    return counts;
  }

  /** Where each master's main thread's schedstat is read (null: not a process of this host). */
  private readonly schedstats = new Map<Redis, string | null>();

  /** Each master's main thread's wait for a CPU so far, ms (those whose schedstat this host has). */
  async waits(): Promise<Map<Redis, number>> {
    const waits = new Map<Redis, number>();
    for (const node of await this.masters()) {
      if (!this.schedstats.has(node)) this.schedstats.set(node, await schedstatOf(node));
      const path = this.schedstats.get(node);
      // Fields: ns on a CPU, ns waiting on a run queue, time slices.
      if (path) waits.set(node, Number((await readFile(path, 'utf8')).split(' ')[1]) / 1e6);
    }
    return waits;
  }

  /** Whether every master's waits are read: else a stalled call's wall time is judged as it stands. */
  async measuresWaits(): Promise<boolean> {
    return (await this.waits()).size === (await this.masters()).length;
  }

  /** The most any master waited since the last mark, ms. */
  private waitedSinceMark(now: Map<Redis, number>): number {
    return Math.max(0, ...[...now].map(([node, ms]) => ms - (this.waitMarkMs.get(node) ?? ms)));
  }

  async stop(): Promise<void> {
    for (const node of await this.masters()) {
      await node.config('SET', 'slowlog-log-slower-than', '10000');
      await node.config('SET', 'slowlog-max-len', '128');
      await node.slowlog('RESET');
    }
    for (const reader of this.readers.values()) reader.close();
    this.readers.clear();
  }
}

/** `marked` with one more call of `ms` and `commands`. */
function markedWith(marked: MarkedCalls, ms: number, commands: number): MarkedCalls {
  return {
    calls: marked.calls + 1,
    maxMs: Math.max(marked.maxMs, ms),
    maxCommands: Math.max(marked.maxCommands, commands),
  };
}

/** A key's entries: a sorted set's members, a hash's fields, a set's members, a list's elements; else 1. */
async function entriesOf(node: Redis, key: string): Promise<number> {
  const count: Record<string, () => Promise<number>> = {
    zset: () => node.zcard(key),
    hash: () => node.hlen(key),
    set: () => node.scard(key),
    list: () => node.llen(key),
    // Gone since the scan (expired): nothing held.
    none: async () => 0,
  };
  return (await count[await node.type(key)]?.()) ?? 1;
}

/**
 * The schedstat file of `node`'s main thread (its thread id is its process id) when `node` is a
 * redis-server of this host: the process of its process_id must be a redis-server on its port (its
 * title, `redis-server 127.0.0.1:<port>`), not another host's process whose id this host reuses.
 */
async function schedstatOf(node: Redis): Promise<string | null> {
  const info = await node.info('server');
  const field = (name: string) => new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1];
  const [pid, port] = [field('process_id'), field('tcp_port')];
  const path = `/proc/${pid}/task/${pid}/schedstat`;
  try {
    const title = await readFile(`/proc/${pid}/cmdline`, 'utf8');
    if (!title.startsWith('redis-server') || !title.includes(`:${port}`)) return null;
    await readFile(path, 'utf8');
    return path;
  } catch {
    return null;
  }
}
