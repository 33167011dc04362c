import { Module } from '@nestjs/common';
import { AppConfig } from '../common/config';
import { StatsSettings } from './stats.settings';
import { StatsIndexScheduler } from './stats.scheduler';
import { StatsService } from './stats.service';
import { StatsStore } from './stats.store';

/** Hourly statistics without HTTP routes: the service and its index pruning, for TrendboardModule too. */
@Module({
  providers: [
    { provide: StatsSettings, inject: [AppConfig], useFactory: (config: AppConfig) => StatsSettings.from(config) },
    StatsStore,
    StatsService,
    StatsIndexScheduler,
  ],
  exports: [StatsSettings, StatsService, StatsIndexScheduler],
})
export class StatsCoreModule {}
