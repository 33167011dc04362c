import { Module } from '@nestjs/common';
import { RankingModule } from '../ranking/ranking.module';
import { LiveController } from './live.controller';
import { LiveHub } from './live-hub';

/** The live change stream of boards (SSE), polled per watched board. */
@Module({
  imports: [RankingModule],
  controllers: [LiveController],
  providers: [LiveHub],
  exports: [LiveHub],
})
export class LiveModule {}
