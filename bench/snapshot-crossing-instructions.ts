/**
 * The call that crosses a snapshot boundary of a one-shard board, counted in Redis instructions (issue
 * #45): `npm run bench -- --part snapshot-crossing-instructions`, a few minutes. redis-server
 * runs under callgrind (startCallgrindRedis), which counts the user-space instructions it executes
 * whatever else the machine does. Each board of 2 400 items keeps snapshots of 1 000 rows; each round
 * moves the clock a minute and reads `top` 1 000: the read's first FCALLs store the listing (in pages of
 * 500 rows, one a call: TB_CROSSING) and the last leaves the page to the next
 * (READ_LEFT_ERROR), so every FCALL but the read's last is the crossing's alone. Per board and crossing
 * call: its instructions, those inside its FCALL alone (the dump also counts what ran beside the call:
 * serverCron, which callgrind's slowness lets fire mid-call, and a lazy free on Redis' background
 * thread), and the commands it ran, costliest first. INSTR_KEEP=1 prints each crossing's callgrind dump
 * (stderr), for `callgrind_annotate --inclusive=yes`; CROSSING_BOARDS=tiebreak,… runs those boards alone.
 */
import { fcallInstructionsOf, scriptCommandsOf } from './redis-instructions';
import { perFcall, withCallgrindRanking, type CountedFcall } from './callgrind-ranking';

const ITEMS = 2400;
const TOP = 1000;
const ROUNDS = 3;
const MINUTE_MS = 60_000;
const KEEP = process.env.INSTR_KEEP === '1';
const WINDOWS = [{ name: 'w', period: '1h', interval: '1m', snapshots: { keep: 3, top: TOP } }];
/**
 * A board of sums; one of minima ranked lowest first (every sign listed); a tiebreak board of maxima (its
 * listing in pair order, its previous listing ZADDed from Lua).
 */
const ALL_BOARDS = [
  { name: 'sum', options: {} },
  { name: 'min-asc', options: { aggregate: 'min', order: 'asc' } },
  { name: 'tiebreak', options: { aggregate: 'max', tiebreak: { order: 'asc' } } },
] as const;
const ASKED = process.env.CROSSING_BOARDS?.split(',');
const BOARDS = ALL_BOARDS.filter(({ name }) => !ASKED || ASKED.includes(name));

/** A score's arguments after it (idemKey, budget and atSec left out): on the tiebreak board its tiebreak, 0-9. */
const tiebreakOf = (board: string, k: number) =>
  [undefined, undefined, undefined, board === 'tiebreak' ? k % 10 : undefined] as const;

/** Millions of instructions, two decimals. */
const millions = (instructions: number) => (instructions / 1e6).toFixed(2);

/** One crossing call's row: its instructions, those inside its FCALL and its costliest commands. */
function printCrossing(board: string, call: string, crossing: CountedFcall): void {
  if (KEEP) console.error(crossing.file);
  const commands = scriptCommandsOf(crossing.file)
    .slice(0, 4)
    .map((c) => `${c.name} ${millions(c.ir)}`)
    .join(', ');
  const inside = millions(fcallInstructionsOf(crossing.file));
  console.log(`| ${board} | ${call} | ${millions(crossing.ir)} | ${inside} | ${commands} |`);
}

export async function snapshotCrossingInstructionsBench(): Promise<void> {
  await withCallgrindRanking(1_699_999_980_000, async ({ server, graph: { ranking }, clock }) => {
    console.log(
      '| board | crossing call | M instructions | inside its FCALL | its costliest commands (M instructions) |',
    );
    console.log('| --- | ---: | ---: | ---: | --- |');
    for (const { name, options } of BOARDS) {
      const board = `cross-${name}`;
      await ranking.putBoard({ name: board, windows: WINDOWS, ...options });
      for (let first = 0; first < ITEMS; first += 100) {
        const entries = Array.from({ length: 100 }, (_, k) => ({
          item: `i${first + k}`,
          amount: 1 + ((first + k) % 400),
        }));
        // The others record scores one at a time, some of them negative (listed there).
        if (name === 'sum') await ranking.incrementBatch(board, entries);
        else
          await Promise.all(
            entries.map((e, k) => ranking.score(board, e.item, e.amount - 100, ...tiebreakOf(name, k))),
          );
      }
      await ranking.top(board, 'w', 0, TOP);
      for (let round = 0; round < ROUNDS; round++) {
        clock.advanceMs(MINUTE_MS);
        const calls = await perFcall(server, () => ranking.top(board, 'w', 0, TOP));
        calls.slice(0, -1).forEach((crossing, k) => printCrossing(name, `${k + 1} of ${calls.length - 1}`, crossing));
      }
    }
  });
}
