import { BoardKeys } from '../redis/keys';
import { WindowConfig } from './window-math';

export interface BoardConfig {
  name: string;
  /** Unique per change of the stored config; scripts refuse writes made with another version. */
  version: string;
  shards: number;
  windows: WindowConfig[];
}

/** A board config with everything a request needs precomputed once: key lists and script arguments. */
export class PreparedBoard {
  readonly keys: BoardKeys;
  /** [cfg, slots_1, top_1, ..., slots_W, top_W] */
  readonly incrementKeys: string[];
  /** [cfg, likes, slots_1, top_1, ..., slots_W, top_W] */
  readonly allKeys: string[];
  /** [W, period_1, interval_1, createdAtMs_1, ...] as the window scripts expect after their fixed args. */
  readonly windowArgs: number[];
  private readonly windowIndex: Map<string, number>;

  constructor(
    readonly config: BoardConfig,
    keys: BoardKeys,
  ) {
    this.keys = keys;
    const pairs = config.windows.flatMap((w) => [keys.slots(w.name), keys.top(w.name)]);
    this.incrementKeys = [keys.cfg(), ...pairs];
    this.allKeys = [keys.cfg(), keys.likes(), ...pairs];
    this.windowArgs = [config.windows.length, ...config.windows.flatMap((w) => [w.periodSec, w.intervalSec, w.createdAtMs])];
    this.windowIndex = new Map(config.windows.map((w, i) => [w.name, i]));
  }

  /** The named window, or the first one when no name is given; undefined when the board has no such window. */
  window(name?: string): WindowConfig | undefined {
    if (name === undefined) return this.config.windows[0];
    const index = this.windowIndex.get(name);
    return index === undefined ? undefined : this.config.windows[index];
  }
}
