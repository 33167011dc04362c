import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { ADMIN, createBoard } from '../../../harness/app';
import { useSingleNodeApp } from '../../support/e2e';

/** Calls of one script the instance sent, from its /metrics. */
async function callsOf(app: NestFastifyApplication, script: string): Promise<number> {
  const metrics = (await request(app.getHttpServer()).get('/metrics').set(ADMIN)).text;
  const line = new RegExp(`^trendboard_redis_command_duration_seconds_count\\{command="${script}"\\} (\\d+)$`, 'm');
  return Number(line.exec(metrics)?.[1] ?? 0);
}

describe.each([
  ['on (WRITE_COALESCE_MS=1, the default)', undefined],
  ['off (WRITE_COALESCE_MS=0)', '0'],
])('concurrent HTTP increments, coalescing %s', (_, coalesceMs) => {
  const e2e = useSingleNodeApp({ env: { WRITE_COALESCE_MS: coalesceMs, RATE_LIMIT_PER_SEC: '0' } });

  beforeAll(async () => {
    await createBoard(e2e.app(), 'hot');
    await request(e2e.app().getHttpServer())
      .post('/boards/hot/items/warm/increment')
      .set('Content-Type', 'application/json')
      .expect(200);
  });

  it('answers each request with its own standing, and counts each once', async () => {
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        request(e2e.app().getHttpServer())
          .post('/boards/hot/items/x/increment')
          .set('Idempotency-Key', `key-${i % 90}`) // ten requests repeat an earlier key
          .send({ amount: 1 }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    const fresh = answers.filter((a) => a.headers['idempotent-replayed'] === undefined);
    expect(fresh.map((a) => a.body.windows['1h'].score).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 90 }, (_, i) => i + 1),
    );
    const item = await request(e2e.app().getHttpServer()).get('/boards/hot/items/x');
    expect(item.body).toMatchObject({ score: 90, rank: 1 });
    const coalesced = await callsOf(e2e.app(), 'tbRankIncrements');
    if (coalesceMs === '0') expect(coalesced).toBe(0);
    else expect(coalesced).toBeGreaterThan(0);
  });
});
