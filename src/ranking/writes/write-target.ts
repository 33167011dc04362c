import { ConflictError } from '../../common/errors';
import { BoardCache } from '../boards/board-cache';
import type { PreparedBoard } from '../core/board';
import type { BoardWrite } from '../options/board-option';
import { GROUP_OF_MESSAGES } from '../options/group-of/group-of.option';
import { writeMismatch } from '../options/registry';
import type { WriteCommand } from './write-commands';

/** The BoardWrite of each kind of one item's write: made once, as every such write asks. */
const ITEM_WRITES: Readonly<Record<Exclude<WriteCommand['kind'], 'batch'>, BoardWrite>> = {
  score: { scores: true, write: 'score' },
  increment: { scores: false, write: 'increment' },
  like: { scores: false, write: 'like' },
  unlike: { scores: false, write: 'unlike' },
};

/** What a write gives (scores or amounts) and its name in an AGGREGATE_MISMATCH message. */
function boardWrite(command: WriteCommand): BoardWrite {
  if (command.kind !== 'batch') return ITEM_WRITES[command.kind];
  const scored = command.entries.some((entry) => entry.score !== undefined);
  return scored ? { scores: true, write: 'a batch of scores' } : { scores: false, write: 'increments' };
}

/** Why board `name` takes no `write`: a group board takes none, else its options say (writeMismatch); undefined: it takes it. */
function refusal(board: PreparedBoard, name: string, write: BoardWrite): ConflictError | undefined {
  const { groupOf } = board.config;
  // A group board's scores are derived from its members' (groupOf): a write of its own would never be read.
  if (groupOf) return new ConflictError('GROUP_BOARD_READ_ONLY', GROUP_OF_MESSAGES.readOnly(name, groupOf.board));
  const mismatch = writeMismatch(board.config, name, write);
  return mismatch === undefined ? undefined : new ConflictError('AGGREGATE_MISMATCH', mismatch);
}

/**
 * Whether a board takes a write: a sum board takes increments and likes, a max / min / last board
 * scores (a batch: its entries' kind), else 409 AGGREGATE_MISMATCH; a group board takes none (409
 * GROUP_BOARD_READ_ONLY). A refusal by the cached config is checked again against the stored one
 * (another instance may have changed it; a match needs no check: a changed config refuses the call).
 */
export class WriteTargets {
  constructor(private readonly cache: BoardCache) {}

  /** Undefined when the cached board takes the write, else the check against the stored config. */
  check(command: WriteCommand): Promise<void> | undefined {
    const cached = this.cache.cached(command.board);
    if (cached && this.takes(cached, command)) return undefined;
    return this.checkStored(command);
  }

  /** Whether `board` (the cached config of the board the command names) takes the write. */
  takes(board: PreparedBoard, command: WriteCommand): boolean {
    return refusal(board, command.board, boardWrite(command)) === undefined;
  }

  private async checkStored(command: WriteCommand): Promise<void> {
    const fresh = await this.cache.reload(command.board);
    const refused = refusal(fresh, command.board, boardWrite(command));
    if (refused) throw refused;
  }
}
