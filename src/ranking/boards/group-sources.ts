import type { ReadCharge } from '../../governance/read-charge';
import type { PreparedBoard } from '../core/board';
import type { WindowConfig } from '../core/window-math';

/** A read of a group board's source: the groups' results, read like a window of the member board. */
export type GroupSourceRead<T> = (board: PreparedBoard, window: WindowConfig, nowMs: number) => Promise<T>;

/**
 * The sources of group boards (`groupOf`, src/ranking/group-boards/): RankedSources hands a group
 * board's reads to it. `read` runs once the groups' scores are exact; `{ draining: true }` when they
 * are not yet (RankedSources asks again, then answers 503 WINDOW_DRAINING).
 */
export abstract class GroupSources {
  abstract read<T extends object>(
    groupBoard: PreparedBoard,
    sourceName: string | undefined,
    nowMs: number,
    read: GroupSourceRead<T>,
    charge?: ReadCharge,
  ): Promise<T | { draining: true }>;
}
