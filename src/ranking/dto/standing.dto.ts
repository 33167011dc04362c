import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsNumber, Max, Min } from 'class-validator';
import { OptionalIntProperty, OptionalNameProperty } from '../../common/dto';
import { DEFAULT_DISTRIBUTION_BUCKETS, DISTRIBUTION_BUCKETS, MAX_ABS_SCORE } from '../core/ranking.limits';
import { TIEBREAK_BOUNDS } from '../options/tiebreak/tiebreak.limits';
import { WindowFiguresDto } from './item.dto';
import { MetricProperty } from '../options/metrics/metrics.option';

const WindowProperty = () => OptionalNameProperty("A window's name (default: the board's first window)", '24h');

/** Query-string number: "12", "-3.5" become numbers; anything else stays as is for the validators to refuse. */
const ToNumber = () =>
  Transform(({ value }) => (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value));

export class RankQuery {
  @WindowProperty()
  window?: string;

  @ApiProperty({
    type: Number,
    minimum: -MAX_ABS_SCORE,
    maximum: MAX_ABS_SCORE,
    description: 'The score of the record to place (decimal digits, a sign and a fraction allowed)',
    example: 42,
  })
  @ToNumber()
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'score must be a number' })
  @Min(-MAX_ABS_SCORE)
  @Max(MAX_ABS_SCORE)
  score!: number;

  @OptionalIntProperty(
    TIEBREAK_BOUNDS,
    {
      description:
        "The record's tiebreak on a board that declares one (default 0: the record is the pair); elsewhere a 400",
    },
    { fromQuery: true },
  )
  tiebreak?: number;

  @MetricProperty('The counter the window ranks by') metric?: string;
}

export class DistributionQuery {
  @WindowProperty()
  window?: string;

  @OptionalIntProperty(
    DISTRIBUTION_BUCKETS,
    { default: DEFAULT_DISTRIBUTION_BUCKETS, description: 'Equal-width buckets splitting [min, max]' },
    { fromQuery: true },
  )
  buckets?: number;

  @MetricProperty('The counter whose scores are spread') metric?: string;
}

export class RankResultDto extends WindowFiguresDto {
  @ApiProperty({ description: 'The score asked about' }) score!: number;
  @ApiProperty({
    nullable: true,
    type: 'integer',
    minimum: 1,
    description:
      'The rank a record of that score would get if written now: 1 + the items ahead of it (on a `ties: first` board items already holding the score are ahead); null when the window would not list it: on a sum board a score of 0 or below (a max, min or last board lists every score, whatever its sign, so it is never null there)',
  })
  rank!: number | null;
  @ApiProperty({
    nullable: true,
    type: Number,
    minimum: 0,
    maximum: 100,
    description: 'What GET …/items/:item would answer for an item holding that record (among the listed items and it)',
  })
  percentile!: number | null;
}

export class BucketDto {
  @ApiProperty({ description: 'Lowest score of the bucket (inclusive)' }) from!: number;
  @ApiProperty({ description: 'Highest score of the bucket (exclusive; inclusive for the last bucket)' }) to!: number;
  @ApiProperty({ type: 'integer', description: 'Listed items scoring in the bucket' }) count!: number;
}

const quantile = (percent: number) =>
  ApiProperty({
    nullable: true,
    type: Number,
    description: `The score at rank ⌈${percent / 100} × count⌉, lowest score first (nearest rank); null when count is 0`,
  });

export class QuantilesDto {
  @quantile(10) p10!: number | null;
  @quantile(25) p25!: number | null;
  @quantile(50) p50!: number | null;
  @quantile(75) p75!: number | null;
  @quantile(90) p90!: number | null;
  @quantile(99) p99!: number | null;
}

export class DistributionResultDto extends WindowFiguresDto {
  @ApiProperty({
    type: 'integer',
    description: 'Listed items (above 0 on a sum board, every score on max / min / last)',
  })
  count!: number;
  @ApiProperty({ nullable: true, type: Number, description: 'Lowest listed score (null when none)' })
  min!: number | null;
  @ApiProperty({ nullable: true, type: Number, description: 'Highest listed score (null when none)' })
  max!: number | null;
  @ApiProperty({ type: [BucketDto], description: 'Equal widths over [min, max], lowest first; empty when count is 0' })
  buckets!: BucketDto[];
  @ApiProperty({ type: QuantilesDto, description: 'Exact: each is a score some listed item holds' })
  quantiles!: QuantilesDto;
}
