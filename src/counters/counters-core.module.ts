import { Module } from '@nestjs/common';
import { AppConfig } from '../common/config';
import { CountersSettings } from './counters.settings';
import { CountersScheduler } from './counters.scheduler';
import { CountersService } from './counters.service';
import { CounterStore } from './counters.store';

/** Counters without HTTP routes: the service and its cleaner, for the service and for TrendboardModule. */
@Module({
  providers: [
    {
      provide: CountersSettings,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => CountersSettings.from(config),
    },
    CounterStore,
    CountersService,
    CountersScheduler,
  ],
  exports: [CountersService, CountersScheduler],
})
export class CountersCoreModule {}
