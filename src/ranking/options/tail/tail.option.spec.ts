import { InvalidInputError } from '../../../common/errors';
import type { BoardSettings } from '../board-option';
import { MAX_TAIL_SLOTS, tailOption } from './tail.option';

const hour = { name: '1h', periodSec: 3600, intervalSec: 60 };
const refusal = (board: Partial<BoardSettings>) => {
  try {
    const holds = { views: false, segments: false, actors: false };
    tailOption.check?.({
      name: 'b',
      aggregate: 'sum',
      options: { tail: { exact: 10, below: 2 } },
      holds,
      windows: [hour],
      ...board,
    });
  } catch (error) {
    return error instanceof InvalidInputError ? error.message : `not refused as input: ${String(error)}`;
  }
  return undefined;
};

describe('the tail option', () => {
  it('refuses rolling windows of more than MAX_TAIL_SLOTS slots, naming the bound', () => {
    const wide = { name: 'wide', periodSec: (MAX_TAIL_SLOTS + 1) * 3600, intervalSec: 3600 };
    const widest = { name: 'widest', periodSec: MAX_TAIL_SLOTS * 3600, intervalSec: 3600 };
    expect(refusal({})).toBeUndefined();
    expect(refusal({ windows: [hour, widest] })).toBeUndefined();
    expect(refusal({ windows: [hour, wide] })).toMatch(
      new RegExp(`^windows\\.wide: .* at most ${MAX_TAIL_SLOTS} slots`),
    );
    expect(refusal({ windows: [{ ...wide, calendar: {} }] })).toBeUndefined();
    expect(refusal({ options: {}, windows: [wide] })).toBeUndefined();
  });
});
