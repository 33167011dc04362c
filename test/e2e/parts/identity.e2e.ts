import { ADMIN, createBoard } from '../../../harness/app';
import { useApp } from '../../support/e2e';
import { Topology } from '../../../harness/redis';

const BOARD = {
  windows: [{ name: 'hour', period: '1h', interval: '5m' }],
  views: [{ name: 'people', mode: 'unique', window: 'hour' }],
  actors: true,
};

const NFC = 'jos\u00e9';
const NFD = 'jose\u0301';
/** Spellings of `spammer` a block must bind: case, a trailing space, a full-width letter (NFKC). */
const SPELLINGS = ['Spammer', 'spammer ', '\uff53pammer', 'SPAMMER'];

type Row = { item: string; score: number };
const rowsOf = (body: { items: Row[] }) => body.items.map((r) => [r.item, r.score]);

/** Ids as one identity: NFC at the edge (one row for NFC and NFD), blocks bound by the actor's block key. */
describe.each<[Topology, number]>([
  ['single', 1],
  ['cluster', 3],
])('identity (%s, shards: %i)', (topology, shards) => {
  const e2e = useApp(topology, { fresh: true });
  const { http } = e2e;
  const increment = (item: string, body: object) =>
    http()
      .post(`/boards/b/items/${encodeURIComponent(item)}/increment`)
      .send(body);

  beforeEach(async () => {
    await createBoard(e2e.app(), 'b', { ...BOARD, shards });
  });

  it('an id in NFC and in NFD is one id: one row, one actor, in paths, bodies, batches and lookups', async () => {
    await increment(NFC, { amount: 2, actor: NFC }).expect(200);
    const second = await increment(NFD, { amount: 3, actor: NFD }).expect(200);
    expect(second.body.item).toBe(NFC);
    await http()
      .post('/boards/b/increments')
      .send({ items: [{ item: NFD, amount: 1, actor: NFD }] })
      .expect(200);
    await http()
      .post(`/boards/b/items/${encodeURIComponent(NFD)}/likes`)
      .send({ userId: NFD })
      .expect(200);

    expect(rowsOf((await http().get('/boards/b/top').expect(200)).body)).toEqual([[NFC, 7]]);
    // One actor however it was spelled: the unique view counts it once.
    expect(rowsOf((await http().get('/boards/b/top?window=people').expect(200)).body)).toEqual([[NFC, 1]]);
    const item = await http()
      .get(`/boards/b/items/${encodeURIComponent(NFD)}`)
      .expect(200);
    expect(item.body).toMatchObject({ item: NFC, score: 7, rank: 1 });
    const lookup = await http()
      .post('/boards/b/lookup')
      .send({ items: [NFD] })
      .expect(200);
    expect(lookup.body.items).toMatchObject([{ item: NFC, score: 7 }]);
  });

  it('a block of an actor refuses its events however its id is spelled (case, spaces, compatibility forms)', async () => {
    await increment('x', { actor: 'spammer' }).expect(200);
    await http().post('/admin/boards/b/retractions').set(ADMIN).send({ actor: 'spammer', block: '1h' }).expect(202);

    for (const actor of SPELLINGS) {
      expect((await increment('x', { actor }).expect(403)).body.code).toBe('RETRACTED');
      const batch = await http()
        .post('/boards/b/increments')
        .send({ items: [{ item: 'y', actor }] })
        .expect(403);
      expect(batch.body.code).toBe('RETRACTED');
      const like = await http().post('/boards/b/items/y/likes').send({ userId: actor }).expect(403);
      expect(like.body.code).toBe('RETRACTED');
    }
    // Another actor, and ids stored as sent (NFC): the block binds by key, it renames no one.
    await increment('x', { actor: 'spammers' }).expect(200);
    expect(rowsOf((await http().get('/boards/b/top').expect(200)).body)).toEqual([['x', 1]]);
  });

  it('a block of a spelling binds the plain actor too (the block is keyed, not the id as sent)', async () => {
    await http()
      .post('/admin/boards/b/retractions')
      .set(ADMIN)
      .send({ actor: '\uff33PAMMER', block: '1h' })
      .expect(202);
    expect((await increment('x', { actor: 'spammer' }).expect(403)).body.code).toBe('RETRACTED');
  });
});
