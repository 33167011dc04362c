import { DynamicModule, Module } from '@nestjs/common';
import { moduleWithSettings } from '../common/settings';
import { RankingModule } from '../ranking/ranking.module';
import { LiveController } from './live.controller';
import { LiveHub } from './live-hub';
import { LiveSettings } from './live.settings';
import { StreamMetrics } from './stream-metrics';

/** The live change stream of boards (SSE), polled per watched board. */
@Module({
  imports: [RankingModule],
  controllers: [LiveController],
  providers: [LiveHub, StreamMetrics],
  exports: [LiveHub],
})
export class LiveModule {
  /** Validates the live streams' settings at once: a bad value throws here, before anything connects. */
  static forRoot(env: Record<string, unknown>): DynamicModule {
    return moduleWithSettings(LiveModule, LiveSettings, env);
  }
}
