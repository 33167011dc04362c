import { Module } from '@nestjs/common';
import { BoardCache } from './boards/board-cache';
import { RankingController } from './ranking.controller';
import { RankingScheduler } from './expiry/ranking.scheduler';
import { RankingService } from './ranking.service';
import { RankingStore } from './ranking.store';

@Module({
  controllers: [RankingController],
  providers: [RankingStore, BoardCache, RankingService, RankingScheduler],
  exports: [RankingService, RankingScheduler],
})
export class RankingModule {}
