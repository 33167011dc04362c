import { DynamicModule, Module } from '@nestjs/common';
import { RankingModule } from '../ranking/ranking.module';
import { LiveController } from './live.controller';
import { LiveHub } from './live-hub';
import { LiveSettings, validateLiveSettings } from './live.settings';
import { StreamMetrics } from './stream-metrics';

/** The live change stream of boards (SSE), polled per watched board. */
@Module({})
export class LiveModule {
  /** Validates the live streams' settings at once: a bad value throws here, before anything connects. */
  static forRoot(env: Record<string, unknown>): DynamicModule {
    return {
      module: LiveModule,
      imports: [RankingModule],
      controllers: [LiveController],
      providers: [{ provide: LiveSettings, useValue: validateLiveSettings(env) }, LiveHub, StreamMetrics],
      exports: [LiveHub],
    };
  }
}
