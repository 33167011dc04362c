import { ConflictError } from '../../common/errors';
import { BoardCache } from '../boards/board-cache';
import type { PreparedBoard } from '../core/board';
import { AGGREGATE_MESSAGES } from '../options/aggregate/aggregate.limits';
import { GROUP_OF_MESSAGES } from '../options/group-of/group-of.option';
import type { WriteCommand } from './write-commands';

/** What a board takes: amounts ('sum'), scores ('best': a max / min / last board) or nothing (a group board). */
type Takes = 'sum' | 'best' | 'none';

function takesOf(board: PreparedBoard): Takes {
  // A group board's scores are derived from its members' (groupOf): a write of its own would never be read.
  if (board.config.groupOf) return 'none';
  return (board.config.aggregate ?? 'sum') === 'sum' ? 'sum' : 'best';
}

/** What a write takes ('sum': amounts, 'best': scores) and its name in an AGGREGATE_MISMATCH message. */
function aggregateWrite(command: WriteCommand): { takes: Takes; write: string } {
  if (command.kind === 'score') return { takes: 'best', write: 'score' };
  if (command.kind !== 'batch') return { takes: 'sum', write: command.kind };
  const scored = command.entries.some((entry) => entry.score !== undefined);
  return scored ? { takes: 'best', write: 'a batch of scores' } : { takes: 'sum', write: 'increments' };
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
    if (cached && takesOf(cached) === aggregateWrite(command).takes) return undefined;
    return this.checkStored(command);
  }

  private async checkStored(command: WriteCommand): Promise<void> {
    const { takes, write } = aggregateWrite(command);
    const fresh = await this.cache.reload(command.board);
    const held = takesOf(fresh);
    if (held === takes) return;
    const name = command.board;
    if (held === 'none')
      throw new ConflictError('GROUP_BOARD_READ_ONLY', GROUP_OF_MESSAGES.readOnly(name, fresh.config.groupOf?.board));
    throw new ConflictError(
      'AGGREGATE_MISMATCH',
      AGGREGATE_MESSAGES.aggregateMismatch(name, fresh.config.aggregate ?? 'sum', write),
    );
  }
}
