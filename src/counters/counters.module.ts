import { Module } from '@nestjs/common';
import { CountersController } from './counters.controller';
import { CountersScheduler } from './counters.scheduler';
import { CountersService } from './counters.service';
import { CounterStore } from './counters.store';

@Module({
  controllers: [CountersController],
  providers: [CounterStore, CountersService, CountersScheduler],
  exports: [CountersService, CountersScheduler],
})
export class CountersModule {}
