import { Controller, Get, Param, Post } from '@nestjs/common';
import { RankingService } from '@trendboard/nest';
import { DigestJob } from './digest.job';

/** The app's own routes, using trendboard's ranking in process: no HTTP hop, no client. */
@Controller('posts')
export class TrendingController {
  constructor(
    private readonly ranking: RankingService,
    private readonly digestJob: DigestJob,
  ) {}

  @Post(':post/views')
  async view(@Param('post') post: string): Promise<{ post: string; score: number; rank: number | null }> {
    const { body } = await this.ranking.increment('posts', post, 1);
    const hour = body.windows.hour;
    return { post, score: hour.score, rank: hour.rank };
  }

  @Get('trending')
  async trending(): Promise<Array<{ post: string; score: number }>> {
    const top = await this.ranking.top('posts', 'hour', 0, 5);
    return top.items.map((row) => ({ post: row.item, score: row.score }));
  }

  /** What the scheduled digest saw last. */
  @Get('digest')
  digest(): { leader: string | null; runs: number } {
    return { leader: this.digestJob.leader ?? null, runs: this.digestJob.runs };
  }
}
