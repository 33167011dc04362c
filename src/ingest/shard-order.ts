/**
 * A batch's place on one board shard when batches are sent ahead of the replies of the one before:
 * the last message id of the part sent to the shard before it (the apply script refuses this part,
 * TB_INGEST_ORDER, while the shard's recorded progress is below that id) and a promise settled once
 * that earlier part is applied (rejected when its batch failed), after which a refused part is sent again.
 */
export interface ShardTurn {
  /** "" when no part was sent to the shard before (since the runner started): nothing to check. */
  after: string;
  before?: Promise<void>;
  /** Marks this batch's part on the shard applied: the part after it may go. */
  applied: () => void;
}

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  // Awaited only by a part refused behind it: an unawaited failure is no unhandled rejection.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/**
 * One batch's turns, by shard hash tag. A part sent again for the same shard (BoardCache running
 * the batch again with a new config) keeps its first turn: its place behind the batch before.
 */
export class BatchTurns {
  private readonly turns = new Map<string, { turn: ShardTurn; done: Deferred }>();

  constructor(private readonly order: ShardOrder) {}

  turn(tag: string, lastId: string): ShardTurn {
    const known = this.turns.get(tag);
    if (known) return known.turn;
    const done = deferred();
    const turn = this.order.take(tag, lastId, done.promise);
    const held = { turn: { ...turn, applied: () => done.resolve() }, done };
    this.turns.set(tag, held);
    return held.turn;
  }

  /** The batch is over: every part of it applied (`error` undefined), or it failed and the parts behind it fail too. */
  finish(error?: unknown): void {
    for (const { done } of this.turns.values()) {
      if (error === undefined) done.resolve();
      else done.reject(error);
    }
  }
}

/** The last part sent to each shard by one runner (since it started consuming), in the order sent. */
export class ShardOrder {
  private readonly tails = new Map<string, { lastId: string; applied: Promise<void> }>();

  batch(): BatchTurns {
    return new BatchTurns(this);
  }

  /** Forgets every shard: nothing of this runner is under way any more (it starts over). */
  clear(): void {
    this.tails.clear();
  }

  /** The turn of a part ending at `lastId` on the shard `tag`, behind the last one sent there. */
  take(tag: string, lastId: string, applied: Promise<void>): Omit<ShardTurn, 'applied'> {
    const tail = this.tails.get(tag);
    this.tails.set(tag, { lastId, applied });
    return tail ? { after: tail.lastId, before: tail.applied } : { after: '' };
  }
}
