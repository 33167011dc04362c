import { Module } from '@nestjs/common';
import { AccessTimeRecorder } from './access-time.recorder';
import { StatsController } from './stats.controller';
import { StatsCoreModule } from './stats-core.module';

/**
 * Hourly statistics per context/type (count, sum, sumsq, min, max, quantiles) over HTTP, and every
 * route's access time (an HTTP-edge concern: only the service records it).
 */
@Module({
  imports: [StatsCoreModule],
  controllers: [StatsController],
  providers: [AccessTimeRecorder],
  exports: [StatsCoreModule, AccessTimeRecorder],
})
export class StatsModule {}
