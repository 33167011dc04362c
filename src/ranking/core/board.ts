import type { CallHeader } from '../../redis/function-args';
import { BoardKeys } from './ranking.keys';
import type { BoardOptionsConfig } from '../options/registry';
import { shardOf } from './shard-math';
import type { ViewConfig } from '../options/views/trending-math';
import { slotRule, WindowConfig } from './window-math';

/** A board's config; the options' fields (BoardOptionsConfig) are absent when off. */
export interface BoardConfig extends BoardOptionsConfig {
  name: string;
  /** Unique per change of the stored config; scripts refuse writes made with another version. */
  version: string;
  shards: number;
  windows: WindowConfig[];
  /** Most items the board holds (each shard ceil(maxItems / shards)); null: no cap. */
  maxItems: number | null;
  /** Trending views, read like windows (names never a window's). */
  views: ViewConfig[];
}

/** The keys of one shard and the key lists its scripts take. */
export interface ShardKeys {
  keys: BoardKeys;
  /** [cfg, slots_1, top_1, ..., slots_W, top_W] */
  incrementKeys: string[];
  /** [cfg, likes, slots_1, top_1, ..., slots_W, top_W] */
  allKeys: string[];
}

/** A board config with everything a request needs precomputed once: key lists and script arguments. */
export class PreparedBoard {
  /** Shard 0's keys: all of an unsharded board's. */
  readonly keys: BoardKeys;
  readonly incrementKeys: string[];
  readonly allKeys: string[];
  /** Every shard's keys, shard 0 first (one entry for an unsharded board). */
  readonly shards: ShardKeys[];
  /** The window names joined by commas (names hold no comma): what a write's answer is keyed by. */
  readonly windowNames: string;
  /** The window names in order: windowNames split, made once (a write's answer names its windows by them). */
  readonly windowNameList: readonly string[];
  private readonly windowIndex: Map<string, number>;
  private readonly metricBoards = new Map<string, PreparedBoard>();

  /** The board's own (its first metric's) keys: a metric's board answers its other metrics from there. */
  private readonly root: PreparedBoard;

  constructor(
    readonly config: BoardConfig,
    keysOfShard: (shard: number) => BoardKeys,
    root?: PreparedBoard,
  ) {
    this.root = root ?? this;
    this.shards = Array.from({ length: Math.max(1, config.shards) }, (_, shard) => {
      const keys = keysOfShard(shard);
      const pairs = config.windows.flatMap((w) => [keys.slots(w.name), keys.top(w.name)]);
      return { keys, incrementKeys: [keys.cfg(), ...pairs], allKeys: [keys.cfg(), keys.likes(), ...pairs] };
    });
    ({ keys: this.keys, incrementKeys: this.incrementKeys, allKeys: this.allKeys } = this.shards[0]);
    this.windowNameList = config.windows.map((w) => w.name);
    this.windowNames = this.windowNameList.join(',');
    this.windowIndex = new Map(config.windows.map((w, i) => [w.name, i]));
  }

  get sharded(): boolean {
    return this.shards.length > 1;
  }

  /** The shard holding an item. */
  shardOf(item: string): ShardKeys {
    return this.shards[shardOf(item, this.shards.length)];
  }

  /**
   * The board as its segment `name` reads: the same config, views and shards, each window's, view's
   * and snapshot's keys the segment's.
   */
  segment(name: string): PreparedBoard {
    return new PreparedBoard(this.config, (shard) => this.shards[shard].keys.inSegment(name));
  }

  /**
   * The board as its metric `name` reads and writes (the board itself for the first metric, or none):
   * the same config, views and shards, each window's keys the metric's ("<window>~@<metric>", in the
   * shard's hash tag; metrics_lib.lua), so that each metric is a board of its own.
   */
  metric(name: string | undefined): PreparedBoard {
    const metrics = this.config.metrics;
    if (this.root !== this) return this.root.metric(name);
    if (name === undefined || metrics === undefined || name === metrics[0]) return this;
    return this.metricBoards.get(name) ?? this.newMetricBoard(name);
  }

  /** A metric's board, made once (metric): apart, so metric's every call does not make the context its keys' closure holds. */
  private newMetricBoard(name: string): PreparedBoard {
    const board = new PreparedBoard(this.config, (shard) => this.shards[shard].keys.inSegment(`@${name}`), this);
    this.metricBoards.set(name, board);
    return board;
  }

  /** The named view; undefined when the board has none of that name. */
  view(name: string | undefined): ViewConfig | undefined {
    return this.config.views.find((view) => view.name === name);
  }

  /** The named window, or the first one when no name is given; undefined when the board has no such window. */
  window(name?: string): WindowConfig | undefined {
    if (name === undefined) return this.config.windows[0];
    const index = this.windowIndex.get(name);
    return index === undefined ? undefined : this.config.windows[index];
  }
}

/**
 * What one call per shard answers of `items` (each item once, asked of the shard holding it; `read`
 * answers a value or null per id, in order), by item, items answered null left out: every per-item
 * read of a sharded board (groups, item data) in one round.
 */
export async function readPerShard<T>(
  board: PreparedBoard,
  items: string[],
  read: (shard: ShardKeys, ids: string[]) => Promise<ReadonlyArray<T | null>>,
): Promise<Map<string, T>> {
  const byShard = new Map<ShardKeys, string[]>();
  for (const item of new Set(items)) {
    const shard = board.shardOf(item);
    byShard.set(shard, [...(byShard.get(shard) ?? []), item]);
  }
  const found = new Map<string, T>();
  await Promise.all(
    [...byShard].map(async ([shard, ids]) => {
      const values = await read(shard, ids);
      ids.forEach((item, i) => {
        const value = values[i];
        if (value !== null) found.set(item, value);
      });
    }),
  );
  return found;
}

/**
 * The header's windows (CallHeader, written by name by headerArgs) of a call at `nowMs`: each window's
 * slot rule (a calendar window's slot is its period at `nowMs`) and creation time.
 */
export function headerWindowsOf(windows: readonly WindowConfig[], nowMs: number): CallHeader['windows'] {
  return windows.map((window) => ({ ...slotRule(window, nowMs), createdAtMs: window.createdAtMs }));
}

export type PutBoardResult =
  | { status: 'created' | 'updated' | 'unchanged'; config: BoardConfig }
  | { status: 'conflict'; message: string; dropping?: true };
