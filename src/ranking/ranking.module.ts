import { Module } from '@nestjs/common';
import { RankingController } from './ranking.controller';
import { RankingScheduler } from './ranking.scheduler';
import { RankingService } from './ranking.service';
import { RankingStore } from './ranking.store';

@Module({
  controllers: [RankingController],
  providers: [RankingStore, RankingService, RankingScheduler],
  exports: [RankingService, RankingScheduler],
})
export class RankingModule {}
