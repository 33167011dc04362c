/** @trendboard/nest: what a Nest app imports (docs/library.md). */
export { TrendboardModule, type TrendboardAsyncOptions, type TrendboardOptions } from './trendboard.module';
export { RankingService, type ItemAnswer, type ReadOptions } from '../ranking/ranking.service';
export {
  CountersService,
  type CounterSeries,
  type CounterSummary,
  type IncrementResult,
} from '../counters/counters.service';
export { StatsService, type RecordResult, type StatsView } from '../stats/stats.service';
export { Clock, SystemClock } from '../common/clock';
export type { RedisClient } from '../redis/redis.service';
export {
  AccessError,
  ConflictError,
  DomainError,
  InvalidInputError,
  NotFoundError,
  NotReadyError,
  QuotaExceededError,
  RateLimitedError,
  RedisBusyError,
  RedisUnavailableError,
  type ErrorCode,
} from '../common/errors';
