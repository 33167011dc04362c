/**
 * Batches a bench seeds with, sized by the service's own weight of a write (write-cost.ts's entryCost)
 * under its WRITE_COST_PER_CALL, so a seed never asks for a call the write bound refuses (422
 * REQUEST_TOO_COSTLY) when an option or the bound changes.
 */
import { validateConfig } from '../src/common/config';
import { type CostedEntry, entryCost } from '../src/ranking/core/write-cost';
import { type BoardOptionsPut, optionsOfPut } from '../src/ranking/options/registry';

/** A board as a bench declares it: its PUT body's windows, views and options. */
export interface DeclaredBoard extends BoardOptionsPut {
  windows: readonly unknown[];
}

/** The WRITE_COST_PER_CALL the service runs with: the environment's, else the default. */
export function writeCostPerCall(env: Readonly<Record<string, string | undefined>> = process.env): number {
  return validateConfig({ WRITE_COST_PER_CALL: env.WRITE_COST_PER_CALL }).WRITE_COST_PER_CALL;
}

/**
 * Most entries like `entry` (its segments and actor; none by default) one write call on `board` takes
 * within `bound`. On a sharded board a batch is weighed per shard, so this many always fit.
 */
export function entriesPerCall(board: DeclaredBoard, entry: CostedEntry = {}, bound = writeCostPerCall()): number {
  const options = optionsOfPut(board);
  const costed = { ...options, windows: board.windows, views: board.views ?? [] };
  return Math.max(1, Math.floor(bound / entryCost(entry, costed)));
}

/** `entries` in consecutive batches of at most `size`. */
export function batchesOf<T>(entries: readonly T[], size: number): T[][] {
  const batches: T[][] = [];
  for (let from = 0; from < entries.length; from += size) batches.push(entries.slice(from, from + size));
  return batches;
}
