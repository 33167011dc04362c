import { DynamicModule, Module } from '@nestjs/common';
import { moduleWithSettings } from '../common/settings';
import { RankingCoreModule } from '../ranking/ranking-core.module';
import { ConfiguredSources, readConfiguredSources } from './ingest-config';
import { IngestController } from './ingest.controller';
import { IngestMetrics } from './ingest.metrics';
import { IngestService } from './ingest.service';
import { IngestSettings } from './ingest.settings';
import { IngestStore } from './ingest.store';

/** Stream ingest: sources declared by admin routes, consumed with exactly-once effect (docs/ingest.md). */
@Module({
  imports: [RankingCoreModule],
  controllers: [IngestController],
  providers: [IngestStore, IngestMetrics, IngestService],
})
export class IngestModule {
  /** `env`: the environment the app was started with (INGEST_* and the configured sources validated here, at boot). */
  static forRoot(env: Record<string, unknown>): DynamicModule {
    return moduleWithSettings(IngestModule, IngestSettings, env, [
      { provide: ConfiguredSources, useValue: readConfiguredSources(env) },
    ]);
  }
}
