/**
 * The standing worst-case harness: every route's costliest documented use (./board-rows.ts, ./read-rows.ts,
 * ./service-rows.ts) on boards with every option at its maximum (./boards.ts), measured from Redis's
 * own SLOWLOG: the longest call, the calls of a request added up, the bytes a growing request leaves.
 * `npm test` runs it small (test/e2e/worst-case.e2e-spec.ts); `npm run abuse` at full size.
 */
import { appendFileSync } from 'node:fs';
import { ERROR_CODES } from '../../src/common/errors';
import { WRITE_ROWS } from './board-rows';
import { READ_ROWS } from './read-rows';
import { STRICT_FILTER_ROWS } from './strict-filter-rows';
import { SPAN_FILTER_ROWS } from './span-filter-rows';
import type { HarnessContext, HeldFigure, HttpAnswer, RowFigures, WorstRow } from './harness-types';
import { AppConfig } from '../../src/common/config';
import { NO_COST, scriptCommandCount, type MarkedCalls, type RedisCost, type RedisMeter } from './redis-meter';
import { MODERATION_ROWS } from './moderation-rows';
import { GROUP_ARCHIVE_ROWS, GROUP_ROWS } from './group-rows';
import { GROUP_MODERATION_ROWS } from './group-moderation-rows';
import { PAGED_GROUP_ROWS } from './paged-group-rows';
import { HISTORY_GROUP_ROWS } from './history-group-rows';
import { SEGMENT_ARCHIVE_GROUP_ROWS } from './segment-archive-group-rows';
import { LEAGUE_ROWS } from './league-rows';
import { ADMIN_ROWS, SERVICE_ROWS } from './service-rows';
import { ALIAS_ROWS } from './alias-rows';
import { TAIL_ROWS } from './tail-rows';
import { FALLBACK_ROWS, JOB_ROWS } from './job-rows';

export const WORST_ROWS: readonly WorstRow[] = [
  ...MODERATION_ROWS,
  ...WRITE_ROWS,
  ...READ_ROWS,
  ...STRICT_FILTER_ROWS,
  ...SPAN_FILTER_ROWS,
  ...GROUP_ROWS,
  ...PAGED_GROUP_ROWS,
  ...GROUP_MODERATION_ROWS,
  ...HISTORY_GROUP_ROWS,
  ...SERVICE_ROWS,
  ...ALIAS_ROWS,
  // They move the clock by 11 minutes: before the leagues rows, which move it by a week.
  ...TAIL_ROWS,
  ...LEAGUE_ROWS,
  // They move the clock to the next midnight.
  ...GROUP_ARCHIVE_ROWS,
  // They move the clock to the next midnight again.
  ...SEGMENT_ARCHIVE_GROUP_ROWS,
  // A week after the seeding: the 64-shard board's other shards have boundaries and expired slots.
  ...FALLBACK_ROWS,
  // They delete boards, each drop run to its end.
  ...ADMIN_ROWS,
  // Last: the jobs after idle weeks, over what every row before left.
  ...JOB_ROWS,
];

const DEFAULT_TIMES = 2;
/** How often a job row's slow log is read while the pass runs: well before 100 000 entries log. */
const POLL_MS = 200;

/**
 * Most commands one write call's script may run: the default WRITE_COST_PER_CALL at 0.8 commands a
 * unit, above the most any write row ran per unit (0.75: 57 entries of the rated board, 6 006 commands
 * for 7 980 units; 0.73 for scores at now on a `last` board, 0.25-0.5 for segmented and metric entries).
 * A write call past it does more work than its cost bound admits, whatever the machine's load. An
 * admin step (a retraction's, a re-weighting's, an alias merge's) is held to it too: its units are
 * weighed in commands, within the same bound (write-cost.ts adminStepUnits).
 */
export const WRITE_CALL_COMMANDS = Math.ceil(new AppConfig().WRITE_COST_PER_CALL * 0.8);

/** A row of a route that writes items (not an admin route, not a read sent as a POST). */
function writesItems(row: WorstRow): boolean {
  const [method, path] = row.route.split(' ');
  return method !== 'GET' && !path.startsWith('/admin') && !/\/(lookup|query)$/.test(path);
}

/** A row of an admin route whose work runs in bounded steps: retractions, re-weightings, alias merges. */
function runsSteps(row: WorstRow): boolean {
  return /^\/admin\/boards\/\{board\}\/(retractions|actors|aliases)(\/|$)/.test(row.route.split(' ')[1]);
}

/** The status that stops a growing row: its bound's refusal, else a quota's 429. */
function refusalStatus(row: WorstRow): number {
  return ERROR_CODES[row.grows?.refusal ?? 'QUOTA_EXCEEDED'].status;
}

function costlier(a: RedisCost, b: RedisCost): RedisCost {
  return {
    calls: Math.max(a.calls, b.calls),
    maxCallMs: Math.max(a.maxCallMs, b.maxCallMs),
    maxCallName: a.maxCallMs >= b.maxCallMs ? a.maxCallName : b.maxCallName,
    totalMs: Math.max(a.totalMs, b.totalMs),
    maxCallCommands: Math.max(a.maxCallCommands, b.maxCallCommands),
    cpuMs: Math.max(a.cpuMs, b.cpuMs),
    waitMs: a.maxCallMs >= b.maxCallMs ? a.waitMs : b.waitMs,
    leastHeldMs: Math.max(a.leastHeldMs, b.leastHeldMs),
    marked: a.marked.calls >= b.marked.calls ? a.marked : b.marked,
    scriptCommands:
      scriptCommandCount(a.scriptCommands) >= scriptCommandCount(b.scriptCommands)
        ? a.scriptCommands
        : b.scriptCommands,
  };
}

/** A row's attempt; a job's pass with the meter polled as it runs (see polling). */
async function sendRow(
  context: HarnessContext,
  meter: RedisMeter,
  row: WorstRow,
  attempt: number,
): Promise<HttpAnswer> {
  if (row.job) return { status: (await polling(meter, context.runJob(row.job))) ? 200 : 500, body: undefined };
  if (!row.request) throw new Error(`the row "${row.worst}" has neither a request nor a job`);
  const request = row.request(context, attempt);
  if (row.stream) return { status: await context.openStream(request.path), body: undefined };
  return context.send(request, row.caller ?? (request.path.startsWith('/admin') ? 'admin' : 'client'));
}

/** Polls the meter while `work` runs: a job's pass runs more commands than the slow log keeps. */
async function polling<T>(meter: RedisMeter, work: Promise<T>): Promise<T> {
  let done = false;
  const poller = (async () => {
    while (!done) {
      await meter.poll();
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  })();
  try {
    return await work;
  } finally {
    done = true;
    await poller;
  }
}

async function measureRow(context: HarnessContext, meter: RedisMeter, row: WorstRow): Promise<RowFigures> {
  await row.prepare?.(context);
  await context.statsFlushed();
  meter.mark = row.marks?.key;
  const times = row.grows?.times ?? row.times ?? DEFAULT_TIMES;
  let cost: RedisCost = NO_COST;
  const statuses = new Set<number>();
  let [refusedAt, applied]: [number | null, number] = [null, 0];
  // The slow log logs from here: not a prepare's calls (paused since the row before), only the row's own.
  await meter.reset();
  const bytesBefore = row.grows ? await meter.usedBytes() : 0;
  let answer: HttpAnswer | undefined;
  for (let attempt = 0; attempt < times; attempt++) {
    const sent = await sendRow(context, meter, row, attempt);
    const status = sent.status;
    const code = sent.body?.code;
    answer = sent;
    cost = costlier(cost, await meter.read());
    statuses.add(status);
    if (status < 300) applied += 1;
    if (row.grows && status === refusalStatus(row) && code === (row.grows.refusal ?? 'QUOTA_EXCEEDED')) {
      refusedAt = attempt + 1;
      break;
    }
  }
  const grown = row.grows ? (await meter.usedBytes()) - bytesBefore : 0;
  const requests = cost;
  if (!row.measuresSettle) await meter.pause();
  await row.settle?.(context, answer);
  if (row.measuresSettle) cost = costlier(cost, await meter.read());
  const held = await heldFigures(context, meter, row);
  await row.release?.(context);
  await meter.pause();
  return {
    ...costFigures(row, requests, cost),
    statuses: [...statuses].sort(),
    bytesPerRequest: row.grows && applied > 0 ? Math.round(grown / applied) : null,
    ...{ refusedAt, held },
  };
}

/** The row's held keys as Redis holds them now, beside their bounds. */
async function heldFigures(context: HarnessContext, meter: RedisMeter, row: WorstRow): Promise<HeldFigure[]> {
  const figures: HeldFigure[] = [];
  for (const keys of row.holds ?? []) {
    const mostEntries = keys.mostEntries(context);
    const mostBytes = mostEntries * keys.bytesPerEntry;
    figures.push({ name: keys.name, ...(await meter.held(keys.match)), mostEntries, mostBytes });
  }
  return figures;
}

/**
 * A row's Redis figures: `all` of its every call (a measured settle's too), `requests` of its requests'
 * own, whose longest call and CPU the time bound judges. A job's pass is hundreds of calls, not measured
 * again: judged by their commands, as a settle's steps.
 */
function costFigures(row: WorstRow, requests: RedisCost, all: RedisCost) {
  return {
    ...{ route: row.route, worst: row.worst, open: row.open },
    ...{ calls: all.calls, maxCallMs: all.maxCallMs, maxCallName: all.maxCallName, requestMs: all.totalMs },
    judgedCallMs: row.job ? 0 : requests.maxCallMs,
    judgedHeldMs: row.job ? 0 : requests.leastHeldMs,
    redisWaitMs: requests.waitMs,
    redisCpuMs: requests.cpuMs,
    ...{ scriptCommands: all.scriptCommands, maxCallCommands: all.maxCallCommands },
    ...(row.marks ? { marked: { ...all.marked, name: row.marks.name } } : {}),
  };
}

/** Measurements of a row past its time bound, in all, before the fault stands. */
const TIME_FAULT_RUNS = 3;

/** A row that leaves nothing behind it, so measuring it again measures the same work. */
function repeatable(row: WorstRow): boolean {
  return !row.grows && !row.prepare && !row.settle && !row.stream;
}

/**
 * Runs `rows` (every row by default) in order; answers their figures in the same order. With `bounds`,
 * a repeatable row past its time bound is measured again, up to TIME_FAULT_RUNS in all, and keeps its
 * fastest run: a real cost repeats, a pause of the shared machine's scheduler does not.
 */
export async function runWorstCase(
  context: HarnessContext,
  meter: RedisMeter,
  rows: readonly WorstRow[] = WORST_ROWS,
  bounds?: TimeBounds,
): Promise<RowFigures[]> {
  const figures: RowFigures[] = [];
  for (const row of rows) {
    let best = await withCpuLog(meter, row, () => measureRow(context, meter, row));
    for (let run = 1; bounds && repeatable(row) && run < TIME_FAULT_RUNS && timeFaults(row, best, bounds) > 0; run++) {
      const again = await measureRow(context, meter, row);
      best = { ...(fasterRun(row, again, best, bounds) ? again : best), runs: run + 1 };
    }
    figures.push(best);
  }
  return figures;
}

/**
 * `work`; with WORST_CASE_ROW_CPU=<path>, a line appended there of the CPU it took (this process's and
 * Redis's main thread's: a lazy free on a background thread is not in it) and the commands Redis ran (a
 * script's own too): a row's filling, requests and settle, to see where the harness's time goes.
 */
async function withCpuLog<T>(meter: RedisMeter, row: WorstRow, work: () => Promise<T>): Promise<T> {
  const path = process.env.WORST_CASE_ROW_CPU;
  if (!path) return work();
  const [here, redisMs, commands] = [process.cpuUsage(), await meter.cpuMs(), await meter.commandCounts()];
  const result = await work();
  const { user, system } = process.cpuUsage(here);
  const redis = (await meter.cpuMs()) - redisMs;
  const ran = (await meter.commandCounts()).commands - commands.commands;
  appendFileSync(
    path,
    `${((user + system) / 1000).toFixed(0)}\t${redis.toFixed(0)}\t${ran}\t${row.route} (${row.worst})\n`,
  );
  return result;
}

/** `again` is kept over `best` when it has fewer time faults, or as many and a shorter longest call (then request). */
function fasterRun(row: WorstRow, again: RowFigures, best: RowFigures, bounds: TimeBounds): boolean {
  const [faultsAgain, faultsBest] = [timeFaults(row, again, bounds), timeFaults(row, best, bounds)];
  if (faultsAgain !== faultsBest) return faultsAgain < faultsBest;
  if (again.judgedCallMs !== best.judgedCallMs) return again.judgedCallMs < best.judgedCallMs;
  return again.requestMs < best.requestMs;
}

function timeFaults(row: WorstRow, figures: RowFigures, bounds: TimeBounds): number {
  if (row.open) return 0;
  return Number(callPastBound(figures, bounds)) + Number(requestPastBound(row, figures, bounds));
}

/**
 * A call's SLOWLOG time is wall time: a host that runs another process meanwhile stretches it. The fault
 * stands only when Redis also spent the bound's CPU over one of the row's requests (every call of it,
 * every master): below that, no call can have held Redis's CPU that long. A request of many calls
 * spends that CPU in all (the 64-shard lookup's 31 calls, ~65 ms), so the fault stands only when the
 * call is also past the bound without every moment Redis's thread waited for a CPU over the request
 * (RedisCost.leastHeldMs): one of its 325-command calls took 1 to 391 ms at a load of 13 on 2 cores.
 * On a quiet host the wait is ~0 and the call is judged by its wall time, as before.
 */
function callPastBound(figures: RowFigures, bounds: TimeBounds): boolean {
  const { judgedCallMs, judgedHeldMs, redisCpuMs } = figures;
  return judgedCallMs > bounds.callMs && redisCpuMs > bounds.callMs && judgedHeldMs > bounds.callMs;
}

function requestPastBound(row: WorstRow, figures: RowFigures, bounds: TimeBounds): boolean {
  return figures.requestMs > bounds.requestMs && figures.redisCpuMs > bounds.requestMs && !row.manyCalls;
}

/** Redis time a row may take: per call, and per request (all its calls added up). */
export interface TimeBounds {
  callMs: number;
  requestMs: number;
}

/**
 * What a row did that it should not have: answered a status it does not accept, grew with no quota
 * refusal, or (unless the row is marked open) held Redis past the bounds, or ran a write call, an
 * admin step, a drain call or a background job's call of more commands than WRITE_CALL_COMMANDS, or a
 * call of more than the row's own callCommands.
 */
export function rowFaults(row: WorstRow, figures: RowFigures, bounds: TimeBounds): string[] {
  const faults: string[] = [];
  const accepted = (status: number) => (row.expect ? row.expect.includes(status) : status >= 200 && status < 300);
  const growthRefusal = (status: number) => row.grows !== undefined && status === refusalStatus(row);
  const wrong = figures.statuses.filter((status) => !accepted(status) && !growthRefusal(status));
  if (wrong.length > 0) faults.push(`answered ${wrong.join(', ')}`);
  if (row.grows && figures.refusedAt === null) faults.push(`grew ${row.grows.times} times without a refusal`);
  if (row.open) return faults;
  const runs = figures.runs ? ` (fastest of ${figures.runs} runs)` : '';
  const cpu = `, ${figures.redisCpuMs.toFixed(1)} ms of Redis CPU, ${figures.redisWaitMs.toFixed(1)} ms waiting for one`;
  if (callPastBound(figures, bounds))
    faults.push(`a call of ${figures.judgedCallMs.toFixed(1)} ms (${figures.maxCallName})${runs}${cpu}`);
  if (requestPastBound(row, figures, bounds))
    faults.push(`${figures.requestMs.toFixed(1)} ms of Redis for one request${cpu}`);
  const kind = row.job
    ? 'job call'
    : writesItems(row)
      ? 'write call'
      : runsSteps(row)
        ? 'step call'
        : row.drains
          ? 'drain call'
          : undefined;
  if (kind && figures.maxCallCommands > WRITE_CALL_COMMANDS)
    faults.push(`a ${kind} of ${figures.maxCallCommands} commands (WRITE_CALL_COMMANDS: ${WRITE_CALL_COMMANDS})`);
  if (row.callCommands && figures.maxCallCommands > row.callCommands.most)
    faults.push(`a call of ${figures.maxCallCommands} commands (the row's most: ${row.callCommands.most})`);
  if (row.marks && figures.marked?.calls === 0) faults.push(`no ${row.marks.name} call`);
  for (const held of figures.held ?? []) {
    const { name, keys, entries, bytes, mostEntries, mostBytes } = held;
    // None: the row did not make what it measures (a row before it, which it builds on, not run).
    if (keys === 0) faults.push(`${name}: no key held`);
    if (entries > mostEntries) faults.push(`${name} holds ${entries} entries (its most: ${mostEntries})`);
    if (bytes > mostBytes) faults.push(`${name} holds ${bytes} bytes (its most: ${mostBytes})`);
  }
  return faults;
}

/** The tally's total and its three most frequent commands; the most of one call when calls share them. */
function commandsCell(row: RowFigures): string {
  const tally = row.scriptCommands;
  const top = Object.entries(tally)
    .sort(([, a], [, b]) => b - a)
    .slice(0, 3)
    .map(([name, n]) => `${name} ${n}`);
  const total = scriptCommandCount(tally);
  const perCall = row.maxCallCommands < total ? ` (${row.maxCallCommands} in one call at most)` : '';
  const marked = row.marked ? `; ${markedCell(row.marked)}` : '';
  return top.length === 0 ? `0${marked}` : `${total}${perCall}: ${top.join(', ')}${marked}`;
}

function markedCell({ name, calls, maxMs, maxCommands }: MarkedCalls & { name: string }): string {
  return `${name}: ${calls} calls, longest ${maxMs.toFixed(2)} ms, at most ${maxCommands} commands in one`;
}

/** The longest call's name, the runs measured, and the wait for a CPU that stretched it (from 1 ms). */
function callNotes(row: RowFigures): string {
  const runs = row.runs ? `, fastest of ${row.runs} runs` : '';
  const waited = row.redisWaitMs >= 1 ? `, Redis waited ${row.redisWaitMs.toFixed(1)} ms for a CPU` : '';
  return `${row.maxCallName}${runs}${waited}`;
}

/** A growth row's bytes per request; each held key's bytes and entries, beside their most. */
function bytesCell(row: RowFigures): string {
  const held = (row.held ?? []).map(
    ({ name, keys, entries, bytes, mostEntries, mostBytes }) =>
      `${name}: ${bytes} B in ${keys} key(s), ${entries} entries (most ${mostBytes} B, ${mostEntries} entries)`,
  );
  return [...(row.bytesPerRequest === null ? [] : [String(row.bytesPerRequest)]), ...held].join('; ');
}

export function worstCaseTable(figures: readonly RowFigures[]): string {
  const lines = [
    '| route | worst request | answers | Redis calls | longest call ms | request ms | Redis CPU ms, costliest request | commands in scripts | bytes per request; held keys | quota refused at |',
    '| --- | --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: |',
  ];
  for (const row of figures)
    lines.push(
      `| \`${row.route}\` | ${row.worst}${row.open ? ' (open)' : ''} | ${row.statuses.join(', ')} | ${row.calls} | ${row.maxCallMs.toFixed(2)} (${callNotes(row)}) | ${row.requestMs.toFixed(2)} | ${row.redisCpuMs.toFixed(1)} | ${commandsCell(row)} | ${bytesCell(row)} | ${row.refusedAt ?? ''} |`,
    );
  return lines.join('\n');
}
