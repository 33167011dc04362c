import { Module } from '@nestjs/common';
import { BoardCache } from './board-cache';
import { RankingController } from './ranking.controller';
import { RankingScheduler } from './ranking.scheduler';
import { RankingService } from './ranking.service';
import { RankingStore } from './ranking.store';

@Module({
  controllers: [RankingController],
  providers: [RankingStore, BoardCache, RankingService, RankingScheduler],
  exports: [RankingService, RankingScheduler, BoardCache, RankingStore],
})
export class RankingModule {}
