import { Module } from '@nestjs/common';
import { BoardCache } from './board-cache';
import { RankingScheduler } from './ranking.scheduler';
import { RankingService } from './ranking.service';
import { RankingStore } from './ranking.store';

/** Ranking without HTTP routes: the facade and the expiry scheduler, for the service and for TrendboardModule. */
@Module({
  providers: [RankingStore, BoardCache, RankingService, RankingScheduler],
  exports: [RankingService, RankingScheduler],
})
export class RankingCoreModule {}
