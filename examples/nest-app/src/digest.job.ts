import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { CountersService, RankingService } from '@trendboard/nest';

/**
 * A scheduled job of the app: every minute (DIGEST_CRON, read at start, changes it), counts a digest
 * and remembers the leading post.
 */
@Injectable()
export class DigestJob implements OnApplicationBootstrap {
  leader?: string;
  runs = 0;

  constructor(
    private readonly ranking: RankingService,
    private readonly counters: CountersService,
  ) {}

  /** The board the app ranks posts on: an hour in 5-minute slots (an identical PUT changes nothing). */
  async onApplicationBootstrap(): Promise<void> {
    await this.ranking.putBoard({ name: 'posts', windows: [{ name: 'hour', period: '1h', interval: '5m' }] });
  }

  @Cron(process.env.DIGEST_CRON ?? CronExpression.EVERY_MINUTE)
  async digest(): Promise<void> {
    const top = await this.ranking.top('posts', 'hour', 0, 1);
    this.leader = top.items[0]?.item;
    await this.counters.increment('digests', 1);
    this.runs++;
  }
}
