import { Test, TestingModule } from '@nestjs/testing';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Clock } from '../src/common/clock';
import { AppConfig } from '../src/common/config';
import { JobRegistry } from '../src/common/jobs';
import { BoardCache } from '../src/ranking/boards/board-cache';
import { BoardsStore } from '../src/ranking/boards/boards.store';
import { ExpiryService } from '../src/ranking/expiry/expiry.service';
import { ExpiryStore } from '../src/ranking/expiry/expiry.store';
import { GroupBoardsService } from '../src/ranking/group-boards/group-boards.service';
import { LookupService } from '../src/ranking/lookup/lookup.service';
import { StandingService } from '../src/ranking/standing/standing.service';
import { RankingCoreModule } from '../src/ranking/ranking-core.module';
import { RankingService } from '../src/ranking/ranking.service';
import { RetractionService } from '../src/ranking/retraction/retraction.service';
import { ActorWeightsService } from '../src/ranking/actor-weights/actor-weights.service';
import { AliasesService } from '../src/ranking/aliases/aliases.service';
import { RedisFunctions } from '../src/redis/redis-functions';
import { RedisService } from '../src/redis/redis.service';

/** One instance's ranking, composed from RankingCoreModule: the parts tests and benchmarks drive, and the module for the rest. */
export interface RankingGraph {
  module: TestingModule;
  ranking: RankingService;
  boards: BoardsStore;
  cache: BoardCache;
  expiry: ExpiryService;
  expiryStore: ExpiryStore;
  retractions: RetractionService;
  actorWeights: ActorWeightsService;
  aliases: AliasesService;
  lookup: LookupService;
  standing: StandingService;
  groupBoards: GroupBoardsService;
}

/**
 * The ranking as the service wires it (RankingCoreModule: its stores, config cache and services, one
 * per call) over a connection, config and Clock the caller owns, without the HTTP app. Lifecycle hooks
 * do not run: no scheduler interval, no drop or retraction resumed at start, the libraries loaded by
 * the first call that misses them. The caller drives time and passes; closing the connection is its own.
 */
export async function composeRanking(
  redis: RedisService,
  functions: RedisFunctions,
  config: AppConfig,
  clock: Clock,
): Promise<RankingGraph> {
  const foundation = [
    { provide: RedisService, useValue: redis },
    { provide: RedisFunctions, useValue: functions },
    { provide: AppConfig, useValue: config },
    { provide: Clock, useValue: clock },
    JobRegistry,
    SchedulerRegistry,
  ];
  const module = await Test.createTestingModule({
    imports: [
      { module: class RankingFoundation {}, global: true, providers: foundation, exports: foundation },
      RankingCoreModule,
    ],
  }).compile();
  return {
    module,
    ranking: module.get(RankingService),
    boards: module.get(BoardsStore),
    cache: module.get(BoardCache),
    expiry: module.get(ExpiryService),
    expiryStore: module.get(ExpiryStore),
    retractions: module.get(RetractionService),
    actorWeights: module.get(ActorWeightsService),
    aliases: module.get(AliasesService),
    lookup: module.get(LookupService),
    standing: module.get(StandingService),
    groupBoards: module.get(GroupBoardsService),
  };
}
