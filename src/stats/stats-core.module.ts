import { Module } from '@nestjs/common';
import { StatsIndexScheduler } from './stats.scheduler';
import { StatsService } from './stats.service';
import { StatsStore } from './stats.store';

/** Hourly statistics without HTTP routes: the service and its index pruning, for TrendboardModule too. */
@Module({
  providers: [StatsStore, StatsService, StatsIndexScheduler],
  exports: [StatsService, StatsIndexScheduler],
})
export class StatsCoreModule {}
