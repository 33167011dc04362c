import { Clock } from '../../../src/common/clock';
import { IngestStore, progressName, StoredSource } from '../../../src/ingest/ingest.store';
import { SourceRunner } from '../../../src/ingest/source-runner';
import type { IngestSource, SourceMessage } from '../../../src/ingest/sources/source';
import { AliasMap } from '../../../src/ranking/aliases/alias-map';
import { AliasesStore } from '../../../src/ranking/aliases/aliases.store';
import { RedisFunctions } from '../../../src/redis/redis-functions';
import { RedisService } from '../../../src/redis/redis.service';
import { FakeClock } from '../../../harness/clock';
import { putActorBoard, useRankingGraph } from '../../support/ranking-graph';

const WINDOWS = [{ name: 'long', periodSec: 600, intervalSec: 60 }];

/**
 * Messages held in memory, delivered until acknowledged or dead-lettered as a stream's group does; with
 * `lostAcks`, every acknowledgement fails (the instance dies before it reaches the source).
 */
class MemorySource implements IngestSource {
  readonly dead: string[] = [];
  private messages: SourceMessage[] = [];
  /** Acknowledged or dead-lettered: never delivered again. */
  private readonly done = new Set<string>();
  /** Delivered since the last open. */
  private delivered = 0;
  private readonly answered = new Set<string>();
  private settled?: () => void;

  constructor(private readonly lostAcks: boolean) {}

  /** Delivers `messages` (ids ascending); resolves once each is acknowledged (or its ack lost) or dead-lettered. */
  deliver(messages: SourceMessage[]): Promise<void> {
    this.messages = messages;
    return new Promise((resolve) => (this.settled = resolve));
  }
  /** From the oldest message not acknowledged, as a group's pending entries are read again. */
  open(): Promise<void> {
    this.delivered = 0;
    return Promise.resolve();
  }
  close = () => Promise.resolve();
  lag = () => Promise.resolve(this.messages.length - this.done.size);
  async next(max: number): Promise<SourceMessage[]> {
    const left = this.messages.filter((m) => !this.done.has(m.id));
    const batch = left.slice(this.delivered, this.delivered + max);
    this.delivered += batch.length;
    // Nothing new: the runner's read waits as a blocking read would, so its loop does not spin.
    if (batch.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    return batch;
  }
  ack(messages: SourceMessage[]): Promise<void> {
    this.answer(messages.map((m) => m.id));
    if (this.lostAcks) return Promise.reject(new Error('connection lost'));
    this.finish(messages.map((m) => m.id));
    return Promise.resolve();
  }
  deadLetter(message: SourceMessage, reason: string): Promise<boolean> {
    this.dead.push(`${message.id} ${reason}`);
    this.answer([message.id]);
    this.finish([message.id]);
    return Promise.resolve(true);
  }
  private finish(ids: string[]): void {
    for (const id of ids) this.done.add(id);
    this.delivered -= ids.length;
  }
  private answer(ids: string[]): void {
    for (const id of ids) this.answered.add(id);
    if (this.messages.every((m) => this.answered.has(m.id))) this.settled?.();
  }
}

describe('stream ingest resolves aliases as HTTP writes do (single node)', () => {
  const clock = new FakeClock(1_700_000_000_000);
  const world = useRankingGraph('single', clock);

  /** A runner on a fresh instance's alias map (it knows no alias until a refusal makes it read the map). */
  function runner(board: string, source: MemorySource, stored: StoredSource, batch: number): SourceRunner {
    const redis = world.graph.module.get(RedisService);
    const functions = world.graph.module.get(RedisFunctions);
    const aliases = new AliasMap(world.graph.module.get(AliasesStore), clock as Clock);
    return new SourceRunner(stored, source, progressName(stored.name, stored.declaration), {
      store: new IngestStore(redis, functions),
      boards: world.graph.cache,
      instance: `test-${board}`,
      nowMs: () => clock.nowMs(),
      budgetFields: 1000,
      batch,
      waitMs: 5,
      leaseMs: 60_000,
      retryMs: 10,
      aliases,
      admit: () => Promise.resolve(() => undefined),
      observe: () => undefined,
    });
  }

  it.each([1, 3])(
    'an event naming an alias counts for its canonical item, once, redelivered or not (%i shards)',
    async (shards) => {
      const board = `ing${shards}`;
      await putActorBoard(world.graph, board, { windows: WINDOWS, shards });
      await world.graph.aliases.put(board, 'A', 'a');
      await world.graph.aliases.settled(board, 'A');
      const stored: StoredSource = {
        name: `src${shards}`,
        declaration: { kind: 'redis-stream', stream: `s${shards}`, board },
        declaredAt: 0,
      };
      const events = [
        { item: 'A', amount: 2 },
        { item: 'a', amount: 3 },
        { item: 'b', amount: 1 },
        { item: 'A', amount: 4, actor: 'ann' },
        { item: 'A', amount: 5 },
      ];
      const messages = events.map((event, n) => ({ id: `${n + 1}-0`, payload: JSON.stringify(event) }));
      for (const attempt of [1, 2]) {
        // The first loses its acknowledgements: every message is delivered again to another fresh
        // instance, which finds each applied (by its mark where it named the alias).
        const source = new MemorySource(attempt === 1);
        // One batch when its acknowledgement is lost (a second would wait behind it), else several.
        const running = runner(board, source, stored, attempt === 1 ? messages.length : 2);
        running.start();
        await source.deliver(messages);
        await running.stop();
        expect({ attempt, dead: source.dead }).toEqual({ attempt, dead: [] });
        const top = await world.graph.ranking.top(board, 'long', 0, 10);
        expect(top.items.map(({ item, score }) => ({ item, score }))).toEqual([
          { item: 'a', score: 14 },
          { item: 'b', score: 1 },
        ]);
      }
      // Acknowledged: no refusal or mark is left in any shard's progress.
      const redis = world.graph.module.get(RedisService).client;
      const progress = await redis.keys(`*:ingest:${progressName(stored.name, stored.declaration)}`);
      const marks = await Promise.all(progress.map((key) => redis.hkeys(key)));
      expect(marks.flat().filter((field) => /^[rx]:/.test(field))).toEqual([]);
    },
  );
});
