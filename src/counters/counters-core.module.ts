import { Module } from '@nestjs/common';
import { CountersScheduler } from './counters.scheduler';
import { CountersService } from './counters.service';
import { CounterStore } from './counters.store';

/** Counters without HTTP routes: the service and its cleaner, for the service and for TrendboardModule. */
@Module({
  providers: [CounterStore, CountersService, CountersScheduler],
  exports: [CountersService, CountersScheduler],
})
export class CountersCoreModule {}
