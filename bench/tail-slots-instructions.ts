/**
 * A tail board's reads against the pruned slots of its window, in Redis instructions (issue #45):
 * `npm run bench -- --part tail-slots-instructions` (TAIL_SLOTS closed minutes, 60 by default, of the
 * same TAIL_ITEMS items, 300, each seen once a minute: every slot drops them all but the head, and each
 * listed row's bound walks every pruned slot). redis-server runs under callgrind (startCallgrindRedis).
 * Four reads of a page of TAIL_ITEMS rows, one after the other (the first ones prune and learn, the
 * later ones answer from the row cache); per read its calls, their FCALL instructions, the rows each
 * answered and the commands its scripts ran.
 */
import { StandingStore } from '../src/ranking/standing/standing.store';
import { WriteCommands } from '../src/ranking/writes/write-commands';
import { perFcall, withCallgrindRanking, type CallgrindRanking } from './callgrind-ranking';

const SLOTS = Number(process.env.TAIL_SLOTS ?? 60);
const ITEMS = Number(process.env.TAIL_ITEMS ?? 300);
/** The client address SLOWLOG gives the commands a script ran. */
const SCRIPT_CLIENT = '?:0';

async function seed({ graph, clock }: CallgrindRanking): Promise<void> {
  const commands = new WriteCommands(clock);
  const windows = [{ name: 'h', period: `${SLOTS}m`, interval: '1m' }];
  await graph.ranking.putBoard({ name: 'p', windows, tail: { exact: 10, below: 2 } });
  const entries = Array.from({ length: ITEMS }, (_, k) => ({ item: `i${k}`, amount: 1 }));
  for (let slot = 0; slot < SLOTS - 1; slot += 1) {
    await graph.ranking.incrementBatch(commands.batch({ board: 'p', entries }));
    clock.advanceMs(60_000);
  }
}

/** One read's calls: instructions, rows answered, and the commands its scripts ran by name. */
async function readOnce(bench: CallgrindRanking, store: StandingStore, read: number): Promise<void> {
  const board = await bench.graph.cache.get('p');
  const answered: number[] = [];
  const call = store.functions.call.bind(store.functions);
  store.functions.call = (async (...args: Parameters<typeof call>) => {
    const part = (await call(...args)) as { rows: unknown[] };
    answered.push(part.rows.length);
    return part;
  }) as typeof call;
  await bench.redis.slowlog('RESET');
  const calls = await perFcall(bench.server, () =>
    store.tailTop({ board, window: board.config.windows[0], nowMs: bench.clock.nowMs() }, ITEMS),
  );
  store.functions.call = call;
  const log = (await bench.redis.slowlog('GET', 100_000)) as Array<[number, number, number, string[], string]>;
  const ran: Record<string, number> = {};
  for (const entry of log) if (entry[4] === SCRIPT_CLIENT) ran[entry[3][0]] = (ran[entry[3][0]] ?? 0) + 1;
  const own = calls.map((counted) => counted.own / 1e6);
  console.log(
    `| ${read} | ${calls.length} | ${own.reduce((a, b) => a + b, 0).toFixed(1)} | ${Math.max(...own).toFixed(2)} | ` +
      `${own.map((m) => m.toFixed(2)).join(', ')} | ${answered.join(', ')} |`,
  );
  console.log(`  commands: ${JSON.stringify(ran)}`);
}

export async function tailSlotsInstructionsBench(): Promise<void> {
  await withCallgrindRanking(1_700_000_000_000, async (bench) => {
    await seed(bench);
    await bench.redis.config('SET', 'slowlog-log-slower-than', '0');
    await bench.redis.config('SET', 'slowlog-max-len', '100000');
    console.log(`${SLOTS - 1} closed minutes of ${ITEMS} items seen once each`);
    console.log('| read | calls | M instructions | costliest (M) | calls (M) | rows a call |');
    const store = bench.graph.module.get(StandingStore);
    for (let read = 0; read < 4; read += 1) await readOnce(bench, store, read);
  });
}
