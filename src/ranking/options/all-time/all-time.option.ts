import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean } from 'class-validator';
import { IsOptionalNotNull } from '../../../common/dto';
import { InvalidInputError } from '../../../common/errors';
import type { WindowOption } from '../window-option';
import { ALL_TIME_MESSAGES as M, ALL_TIME_SEC } from './all-time.limits';

/** An all-time window's part of the window config: present (true) on one. */
export interface AllTimeSpec {
  /**
   * One slot from the epoch that never expires (periodSec and intervalSec hold ALL_TIME_SEC, so the
   * scripts treat it as a rolling window of one slot).
   */
  allTime?: true;
}

/** A PUT window's `allTime` field. */
class AllTimePutFields {
  @ApiPropertyOptional({
    description:
      'An all-time window: keeps every event for good (one slot, no expiry; reads answer from/to null). Takes a name only; the board needs maxItems',
  })
  @IsOptionalNotNull()
  @IsBoolean({ message: '$property must be true or false' })
  allTime?: boolean;
}

/** A window view's `allTime` field. */
class AllTimeViewFields {
  @ApiPropertyOptional({ description: 'Present (true) on an all-time window' }) allTime?: boolean;
}

/**
 * All-time windows: a window of a name only, one slot that never ends (`allTime: false` is a rolling
 * window). What else the board would keep for good, its options refuse (BoardSettings.allTimeWindow).
 */
export const allTimeOption: WindowOption<AllTimeSpec, { allTime?: boolean }, { allTime?: boolean }> = {
  name: 'all-time',
  putFields: AllTimePutFields,
  viewFields: AllTimeViewFields,
  putKeys: ['allTime'],
  setIn: (input) => (input.allTime === true ? ['allTime'] : []),
  kind: {
    asked: (input) => input.allTime === true,
    resolve: (input, field, others) => {
      for (const key of ['period', 'interval', ...others])
        if (input[key] !== undefined) throw new InvalidInputError(M.allTimeTakes(field, key));
      if (input.name === undefined) throw new InvalidInputError(M.allTimeNeedsName(field));
      return { name: input.name, periodSec: ALL_TIME_SEC, intervalSec: ALL_TIME_SEC, allTime: true };
    },
    holds: (window) => window.allTime === true,
    showsSpan: false,
  },
  fromPut: () => ({}),
  view: (window) => (window.allTime ? { allTime: true } : {}),
};
