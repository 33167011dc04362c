import { Module } from '@nestjs/common';
import { AccessTimeRecorder } from './access-time.recorder';
import { StatsController } from './stats.controller';
import { StatsIndexScheduler } from './stats.scheduler';
import { StatsService } from './stats.service';
import { StatsStore } from './stats.store';

/** Hourly statistics per context/type (count, sum, sumsq, min, max, quantiles) and every route's access time. */
@Module({
  controllers: [StatsController],
  providers: [StatsStore, StatsService, AccessTimeRecorder, StatsIndexScheduler],
  exports: [StatsService, AccessTimeRecorder, StatsIndexScheduler],
})
export class StatsModule {}
