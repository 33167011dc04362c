import { LiveHub, LiveListing } from '../../../src/live/live-hub';
import { ADMIN } from '../../../harness/app';
import { SseReader } from '../../support/sse';
import { E2eContext, T0, useClusterApp, useSingleNodeApp } from '../../support/e2e';

/**
 * A group board's live stream (issue #48, docs/api.md "Competition boards: group boards" and the
 * stream): after a member joins, a member board write and a member leaves, the next poll sends the
 * groups' new scores, as the group board's own top lists them. On one Redis and a Cluster.
 */
type Row = { rank: number; item: string; score: number };

const rowsOf = (rows: Row[]) => rows.map(({ rank, item, score }) => `${rank} ${item} ${score}`);

function groupStream(e2e: E2eContext) {
  const { http } = e2e;
  let reader: SseReader | undefined;
  afterEach(() => reader?.close());

  /** The latest frame's rows (snapshot or top). */
  const latest = (stream: SseReader) => {
    const frames = stream.events.filter((event) => event.event === 'snapshot' || event.event === 'top');
    return rowsOf((JSON.parse(frames[frames.length - 1].data!) as LiveListing).items as Row[]);
  };

  /** After a change: one poll, then the frame it sends must list `expected` (and the board's top must too). */
  async function expectFrame(stream: SseReader, board: string, expected: string[]): Promise<void> {
    const before = stream.events.length;
    await e2e.app().get(LiveHub).tick();
    await stream.waitFor(before + 1, 2000).catch(() => undefined);
    expect(stream.events.slice(before).map((event) => event.event)).toEqual(['top']);
    expect(latest(stream)).toEqual(expected);
    const top = await http().get(`/boards/${board}/top`).expect(200);
    expect(rowsOf(top.body.items as Row[])).toEqual(expected);
  }

  it("sends the groups' new scores after a member join, a member write and a leave", async () => {
    const windows = [{ name: 'day', period: '24h', interval: '1h' }];
    await http().put('/admin/boards/players').set(ADMIN).send({ windows }).expect(201);
    const groupOf = { board: 'players', window: 'day', top: 2 };
    await http().put('/admin/boards/teams').set(ADMIN).send({ groupOf }).expect(201);
    const items = [
      { item: 'p1', amount: 40 },
      { item: 'p2', amount: 30 },
      { item: 'p3', amount: 50 },
    ];
    await http().post('/boards/players/increments').send({ items }).expect(200);
    const member = (action: 'put' | 'delete', group: string, item: string) =>
      http()[action](`/boards/teams/members/${group}/${item}`).set('content-type', 'application/json').expect(204);

    reader = await SseReader.open(`http://127.0.0.1:${e2e.port()}/boards/teams/stream`);
    await reader.waitFor(1);
    expect(reader.named<LiveListing>('snapshot')[0]).toMatchObject({ board: 'teams', window: 'day', items: [] });

    await member('put', 'red', 'p1');
    await expectFrame(reader, 'teams', ['1 red 40']);
    await member('put', 'red', 'p2');
    await member('put', 'blue', 'p3');
    await expectFrame(reader, 'teams', ['1 red 70', '2 blue 50']);
    // A member board write moves its group.
    await http().post('/boards/players/items/p3/increment').send({ amount: 25 }).expect(200);
    await expectFrame(reader, 'teams', ['1 blue 75', '2 red 70']);
    // A leave: red keeps p2 alone.
    await member('delete', 'red', 'p1');
    await expectFrame(reader, 'teams', ['1 blue 75', '2 red 30']);
    // A move: p2 joins blue, whose best two are then p3 and p2; red lists no member any more.
    await member('put', 'blue', 'p2');
    await expectFrame(reader, 'teams', ['1 blue 105']);
    await http().delete('/admin/boards/teams').set(ADMIN).expect(204);
    await http().delete('/admin/boards/players').set(ADMIN).expect(204);
  });
}

describe("a group board's live stream (one Redis)", () => {
  groupStream(useSingleNodeApp({ startMs: T0, env: { STREAM_COALESCE_MS: '60000' } }));
});

describe("a group board's live stream (Cluster)", () => {
  groupStream(useClusterApp({ startMs: T0, env: { STREAM_COALESCE_MS: '60000' } }));
});
