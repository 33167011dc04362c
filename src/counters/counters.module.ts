import { Module } from '@nestjs/common';
import { CountersController } from './counters.controller';
import { CountersCoreModule } from './counters-core.module';

/** Counters over HTTP: the core module and its routes. */
@Module({
  imports: [CountersCoreModule],
  controllers: [CountersController],
  exports: [CountersCoreModule],
})
export class CountersModule {}
