import { Bounds } from '../../../common/limits';

/** A window's snapshots: how many boundaries of history it keeps, and how many rows each holds. */
export const SNAPSHOT_KEEP: Bounds = { min: 1, max: 1000 };
export const SNAPSHOT_TOP_ITEMS: Bounds = { min: 1, max: 1000 };
