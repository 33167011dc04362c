import { applyDecorators, Param, Query } from '@nestjs/common';
import { WindowRead } from '../../access/access.decorators';
import { ErrorResponse, RedisBackedController } from '../../edge/route-decorators';
import { Charge, ReadCharge } from '../../governance/read-charge';
import { DEFAULT_DISTRIBUTION_BUCKETS, LOOKUP_COUNTS_PER_READ, SPREAD_COUNTS_PER_CALL } from '../core/ranking.limits';
import { BoardParams } from '../dto/board.dto';
import { DistributionQuery, DistributionResultDto, RankQuery, RankResultDto } from '../dto/standing.dto';
import { PROBES_PER_QUANTILE } from './spread-math';
import { StandingService } from './standing.service';

const RANK_NOTE =
  "Places a record without writing it: one count per shard, all in one round (O(log n) each). Reads windows only: a view's name is a 400; so is a tiebreak, since no board declares one yet.";

const DISTRIBUTION_NOTE = `Exact, over the items the window lists (on a sum board those scoring above 0; on a max, min or last board every item a live slot holds a score of, whatever its sign). Buckets split [min, max] into equal widths (from inclusive, to exclusive, the last bucket inclusive); a quantile q is the score at rank ⌈q × count⌉ counting from the lowest score (nearest rank), a score some listed item holds. Every Redis call is bounded (O(log n) counts and index reads: on one shard at most 99 + 6 x ${PROBES_PER_QUANTILE} a call, on several at most ${SPREAD_COUNTS_PER_CALL} weighted counts a call): one round for the range, then on an unsharded board one call for the buckets and the quantiles (read at their positions); on a sharded one a round counting the bucket edges, which places each quantile in its bucket, then a search there cutting each quantile's interval into ${PROBES_PER_QUANTILE + 1} parts a round (at most log${PROBES_PER_QUANTILE + 1}(bucket width + 2) rounds, each reading the shards of a Redis node in calls of a few shards). Reads windows only: a view's name is a 400. Costs: shards x buckets counts, plus 6 (unsharded) or shards x 6 x ${PROBES_PER_QUANTILE} x rounds; every ${LOOKUP_COUNTS_PER_READ} counts spend one read of the client's read rate budget (429 RATE_LIMITED past it).`;

/** What a read by score asks of its board, window and metric, charged to `admit`. */
function scoreReadOf(params: BoardParams, query: { window?: string; metric?: string }, admit: ReadCharge) {
  return { name: params.board, window: query.window, metric: query.metric, admit };
}

/**
 * GET `path`, a read of a window by score: WindowRead's answers, and 400 for a view's name (reads
 * windows only) or `invalid`.
 */
const ScoreRead = (path: string, summary: string, description: string, type: new () => object, invalid: string) =>
  applyDecorators(
    ErrorResponse(400, `INVALID_INPUT: a view named, ${invalid}`),
    WindowRead(path, summary, description, type),
  );

/** GET …/rank and …/distribution: reads of a window by score, through StandingService. */
@RedisBackedController('ranking')
export class StandingController {
  constructor(private readonly standing: StandingService) {}

  @ScoreRead(
    'boards/:board/rank',
    'The rank a record of a given score would get now',
    RANK_NOTE,
    RankResultDto,
    'a tiebreak sent, a score out of range',
  )
  rank(
    @Param() params: BoardParams,
    @Query() query: RankQuery,
    @Charge(LOOKUP_COUNTS_PER_READ) admit: ReadCharge,
  ): Promise<RankResultDto> {
    return this.standing.rank({ ...scoreReadOf(params, query, admit), score: query.score, tiebreak: query.tiebreak });
  }

  @ScoreRead(
    'boards/:board/distribution',
    "A window's score distribution: count, range, buckets and exact quantiles",
    DISTRIBUTION_NOTE,
    DistributionResultDto,
    'buckets out of 1-100',
  )
  distribution(
    @Param() params: BoardParams,
    @Query() query: DistributionQuery,
    @Charge(LOOKUP_COUNTS_PER_READ) admit: ReadCharge,
  ): Promise<DistributionResultDto> {
    const buckets = query.buckets ?? DEFAULT_DISTRIBUTION_BUCKETS;
    return this.standing.distribution({ ...scoreReadOf(params, query, admit), buckets });
  }
}
