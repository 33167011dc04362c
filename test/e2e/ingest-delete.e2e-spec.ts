import Redis from 'ioredis';
import { ADMIN, createBoard } from '../../harness/app';
import { useSingleNodeApp } from '../support/e2e';
import { until } from '../support/until';

const T0 = 1_700_002_800_000;
// No timed refresh during the test (the longest allowed): only declarations and deletes start one.
const INGEST_ENV = { INGEST_REFRESH_MS: '60000', INGEST_LEASE_MS: '3000', INGEST_WAIT_MS: '1000' };

/** A deleted source stops on the instance that answered the delete, whatever refresh was under way. */
describe('deleting an ingest source (single)', () => {
  // Its own Redis: the source streams are outside the file's prefix.
  const e2e = useSingleNodeApp({ ownRedis: true, startMs: T0, env: INGEST_ENV });
  const { http } = e2e;
  const scoreOf = async (board: string, item: string) =>
    (await http().get(`/boards/${board}/items/${item}`).expect(200)).body.score as number;
  const declare = (name: string, body: object) =>
    http()
      .put(`/admin/ingest/${name}`)
      .set(ADMIN)
      .send({ kind: 'redis-stream', ...body });

  it('applies nothing written after the 204, though a refresh that read the declarations before it was running', async () => {
    for (const board of ['a', 'b', 'c']) await createBoard(e2e.app(), board);
    const client = e2e.redis().client as Redis;
    const send = (stream: string, item: string) => client.xadd(stream, '*', 'event', JSON.stringify({ item }));
    await declare('doomed', { stream: 'sa', board: 'a' }).expect(201);
    await send('sa', 'early');
    await until('the first source running', async () => ((await scoreOf('a', 'early')) === 1 ? true : undefined));
    await declare('other', { stream: 'sb', board: 'b' }).expect(201);
    await send('sb', 'early');
    await until('the second source running', async () => ((await scoreOf('b', 'early')) === 1 ? true : undefined));

    // A changed declaration: its refresh read the declarations (doomed among them) and now waits for the
    // old runner of `other` to leave its blocking read (up to INGEST_WAIT_MS).
    await declare('other', { stream: 'sb', board: 'c' }).expect(200);
    await http().delete('/admin/ingest/doomed').set(ADMIN).expect(204);
    await send('sa', 'late');
    // Once `other` (old or changed) read past a later message, doomed had every chance to read `late`.
    await send('sb', 'probe');
    const probed = async () => (await scoreOf('b', 'probe')) + (await scoreOf('c', 'probe'));
    await until('the probe applied', async () => ((await probed()) === 1 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await scoreOf('a', 'late')).toBe(0);
    // The change made during the refresh holds too (a refresh asked for meanwhile runs after it).
    expect(await scoreOf('c', 'probe')).toBe(1);
    expect((await http().get('/admin/ingest').set(ADMIN).expect(200)).body.sources).toMatchObject([{ name: 'other' }]);
  });
});
