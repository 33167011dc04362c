import { Injectable } from '@nestjs/common';
import { Clock } from '../../common/clock';
import { DomainError } from '../../common/errors';
import { PreparedBoard } from '../core/board';
import { AliasesStore } from './aliases.store';

/** How long (ms) an instance answers reads from a board's alias map before reading it again. */
export const ALIAS_MAP_FRESH_MS = 1000;

/** A write naming items: one item, or a batch's entries. */
type Naming = { item: string } | { entries: ReadonlyArray<{ item: string }> };

interface Cached {
  atMs: number;
  map: Promise<ReadonlyMap<string, string>>;
}

/**
 * The board's alias map as each instance sees it: read from shard 0 at most once a second per board
 * config (an alias is kept for good, so a map is only ever missing the newest ones). A write resolves
 * its items through it; one naming an alias this instance does not know yet is refused by the alias's
 * shard (the merge blocks the alias's events), and is written again, resolved, once the map is read again.
 */
@Injectable()
export class AliasMap {
  private readonly maps = new WeakMap<PreparedBoard, Cached>();

  constructor(
    private readonly store: AliasesStore,
    private readonly clock: Clock,
  ) {}

  /** The board's aliases (alias -> canonical item), at most ALIAS_MAP_FRESH_MS old. */
  of(board: PreparedBoard): Promise<ReadonlyMap<string, string>> {
    const cached = this.maps.get(board);
    const nowMs = this.clock.nowMs();
    if (cached && nowMs - cached.atMs < ALIAS_MAP_FRESH_MS) return cached.map;
    const map = this.store.map(board);
    this.maps.set(board, { atMs: nowMs, map });
    map.catch(() => this.maps.delete(board));
    return map;
  }

  /** Reads the map again (an alias just named, or a write refused for naming one). */
  reload(board: PreparedBoard): Promise<ReadonlyMap<string, string>> {
    this.maps.delete(board);
    return this.of(board);
  }

  /**
   * What an item read names: the canonical item `item` stands for (undefined when it is no alias) and
   * the aliases of the item answered, in byte order (a board holds at most ALIASES_PER_BOARD).
   */
  async spellingsOf(board: PreparedBoard, item: string): Promise<{ canonical?: string; aliases: string[] }> {
    const map = await this.of(board);
    const canonical = map.get(item);
    const answered = canonical ?? item;
    const aliases = [...map].filter(([, named]) => named === answered).map(([alias]) => alias);
    return { canonical, aliases: aliases.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)) };
  }

  /** The aliases this instance already knows (none when it never read the map), without reading it. */
  async known(board: PreparedBoard): Promise<ReadonlyMap<string, string>> {
    const known = this.maps.get(board);
    return known ? known.map.catch(() => NO_ALIASES) : NO_ALIASES;
  }

  /**
   * Runs the write with its items resolved through the aliases this instance already knows, without
   * reading the map first (a write stays one round trip); when the alias's shard refuses an item this
   * instance did not know as an alias, once more resolved through the map read again (at most once a
   * second per board, so writes to a retracted item do not read it each time).
   */
  resolving<C extends Naming, T>(board: PreparedBoard, command: C, run: (resolved: C) => Promise<T>): Promise<T> {
    const retried = (error: unknown) => this.runRetracted(error, board, command, run);
    // A board this instance never read the map of (most writes) runs at once, with no promise in between;
    // a `catch` on the write's own promise, not an async frame: every write passes here.
    if (!this.knows(board)) return started(run, command).catch(retried);
    return this.known(board).then((map) => started(run, renamed(command, map)).catch(retried));
  }

  /** True once this instance read (or is reading) the board's map: its writes are resolved through it. */
  knows(board: PreparedBoard): boolean {
    return this.maps.has(board);
  }

  /**
   * The write once more, resolved through the map read again, when its shard refused an item as an
   * alias (`error`); any other error, rejected as it is.
   */
  async runRetracted<C extends Naming, T>(
    error: unknown,
    board: PreparedBoard,
    command: C,
    run: (resolved: C) => Promise<T>,
  ): Promise<T> {
    if (!(error instanceof DomainError && error.code === 'RETRACTED')) throw error;
    const resolved = renamed(command, await this.of(board));
    if (resolved === command) throw error;
    return run(resolved);
  }
}

/** `run(command)`, a synchronous throw as a rejection (as an async frame would turn it). */
function started<C, T>(run: (command: C) => Promise<T>, command: C): Promise<T> {
  try {
    return run(command);
  } catch (error) {
    return Promise.reject(error);
  }
}

const NO_ALIASES: ReadonlyMap<string, string> = new Map();

/** The command with each alias it names replaced by its canonical item (the same object when none). */
function renamed<C extends Naming>(command: C, map: ReadonlyMap<string, string>): C {
  if (map.size === 0) return command;
  if ('entries' in command) {
    if (!command.entries.some((entry) => map.has(entry.item))) return command;
    const entries = command.entries.map((entry) => ({ ...entry, item: map.get(entry.item) ?? entry.item }));
    return { ...command, entries };
  }
  const item = map.get(command.item);
  return item === undefined ? command : { ...command, item };
}
