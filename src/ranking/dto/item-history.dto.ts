import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { HISTORY_ROWS_PER_CALL } from '../core/ranking.limits';
import { TiebreakRowProperty } from './row-fields';
import { HistoryMetricCountsProperty } from '../options/metrics/metrics.option';

export class HistoryPointDto {
  @ApiProperty({ type: 'integer', description: 'Snapshot boundary (unix s)' }) at!: number;
  @ApiProperty({ nullable: true, type: 'integer', minimum: 1, description: "null: not among the snapshot's rows" })
  rank!: number | null;
  @ApiProperty({ nullable: true, type: 'integer', description: "null: not among the snapshot's rows" })
  score!: number | null;
  @TiebreakRowProperty() tiebreak?: number;
  @HistoryMetricCountsProperty() metrics?: Record<string, number>;
}

export class ItemHistoryResultDto {
  @ApiProperty() board!: string;
  @ApiProperty() window!: string;
  @ApiProperty() item!: string;
  @ApiProperty({ type: [HistoryPointDto], description: 'One per kept snapshot in range, oldest first' })
  points!: HistoryPointDto[];
  @ApiPropertyOptional({ enum: [true], description: 'Moderation leaves the item out now: ranks null, scores kept' })
  hidden?: true;
  @ApiProperty({
    nullable: true,
    type: 'integer',
    description: `null: every kept snapshot in range is answered. Else the answer is one page (a read scans at most ${HISTORY_ROWS_PER_CALL} snapshot rows): ask again with \`from\` = nextFrom for the rest`,
  })
  nextFrom!: number | null;
}
