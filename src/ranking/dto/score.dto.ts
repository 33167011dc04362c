import { ApiProperty } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { CompiledValidation, optional } from '../../common/compiled-checks';
import { OptionalUnixTimeProperty } from '../../common/dto';
import { MAX_FUTURE_SKEW_SEC, UNIX_SEC } from '../../common/limits';
import { SCORE_RANGE } from '../core/ranking.limits';
import { TIEBREAK_FIELD, TiebreakWriteProperty } from './row-fields';

/** A score recorded on a max / min / last board. */
@CompiledValidation({
  score: { kind: 'int', range: SCORE_RANGE },
  at: optional({ kind: 'finite', range: UNIX_SEC }),
  tiebreak: optional(TIEBREAK_FIELD),
})
export class ScoreDto {
  @ApiProperty({
    type: 'integer',
    minimum: SCORE_RANGE.min,
    maximum: SCORE_RANGE.max,
    description:
      'The score: each window answers the max / min / latest (by `at`, equal times by arrival) score the item recorded inside it. Listed and ranked whatever its sign (0 and negative included)',
    example: 4200,
  })
  @IsInt()
  @Min(SCORE_RANGE.min)
  @Max(SCORE_RANGE.max)
  score!: number;

  @TiebreakWriteProperty()
  tiebreak?: number;

  @OptionalUnixTimeProperty(
    `The event's time, unix seconds (fractions allowed; default now): it lands in the slot of that time in every window whose live span still holds it. At most ${MAX_FUTURE_SKEW_SEC} s ahead (counted as now); older than every window's live span is a 400`,
  )
  at?: number;
}
