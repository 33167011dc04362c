import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ACCESS } from '../access/access.functions';
import { COUNTERS } from '../counters/counters.functions';
import { CounterKeys } from '../counters/counter-keys';
import { INGEST } from '../ingest/ingest.functions';
import { RANKING, RANKING_SLICES } from '../ranking/ranking.functions';
import { PreparedBoard } from '../ranking/core/board';
import { RankingKeys } from '../ranking/core/ranking.keys';
import { StatsKeys } from '../stats/stats-keys';
import { STATS } from '../stats/stats.functions';
import type { FunctionDefinition, FunctionLibrary, LibraryFunction } from './function-library';
import { IDEM_FIELDS } from './idempotency';

/**
 * Functions still on positional args and replies (no `contract`: ARGV[n] in Lua, reply.int(n) in
 * TypeScript), per ranking slice and per other library: issue #46 converts them slice by slice to the
 * named contract (reader.read_call / reader.answer in Lua, callArgs / NamedReply in TypeScript). The
 * counts only shrink: converting a function lowers its count here; a new function is named from the
 * start.
 */
const POSITIONAL_LEFT: Record<string, number> = {
  'actor-weights': 0,
  aliases: 0,
  boards: 0,
  calendar: 0,
  expiry: 0,
  filters: 0,
  'group-boards': 0,
  history: 0,
  items: 0,
  leagues: 0,
  lookup: 0,
  moderation: 0,
  reads: 0,
  retraction: 0,
  scores: 0,
  shards: 0,
  spans: 0,
  standing: 0,
  views: 0,
  writes: 0,
  tb_access: 0,
  tb_counters: 0,
  tb_ingest: 0,
  tb_stats: 0,
};

type Definitions = Record<string, FunctionDefinition<never, unknown>>;

const PARTS: Array<[string, Definitions]> = [
  ...RANKING_SLICES.map(([slice, Part]): [string, Definitions] => [slice, Part.definitions]),
  ...[ACCESS, COUNTERS, INGEST, STATS].map(({ library, functions }): [string, Definitions] => [
    library.name.replace(/_[0-9a-f]{8}$/, ''),
    functions,
  ]),
];

function positional(definitions: Definitions): number {
  return Object.values(definitions).filter((definition) => definition.contract === undefined).length;
}

function handlerSource(library: FunctionLibrary, handler: string): string {
  const module = library.modules.find((path) => basename(path) === `${handler}.lua`);
  if (module === undefined) throw new Error(`${library.name}: no module ${handler}.lua`);
  return readFileSync(module, 'utf8');
}

/**
 * The code of the shared starts the handler hands its args to (`<module>.<start>(keys, args, CALLS.<handler>)`,
 * e.g. board_write's begin_board_write), and of those they hand them on to (`(keys, args, contract)`):
 * what they read of the contract the handler reads through them.
 */
function sharedStartsCode(library: FunctionLibrary, handler: string, code: string): string {
  const handed = new RegExp(`\\b(\\w+)\\.(\\w+)\\(keys, args, (?:CALLS\\.${handler}|contract)\\)`, 'g');
  const starts = [...code.matchAll(handed)];
  return starts
    .map(([, table, start]) => {
      const source = library.modules
        .map((path) => readFileSync(path, 'utf8'))
        .find((text) => text.startsWith(`-- module: ${table}\n`));
      const own = new RegExp(`^local function ${start}\\([\\s\\S]*?\\n^end$`, 'm').exec(source ?? '')?.[0] ?? '';
      return `${own}\n${sharedStartsCode(library, handler, own.replace(/^local function .*$/m, ''))}`;
    })
    .join('\n');
}

/** What groups_lib's filters_of reads of a filtered read's `arg` (group_page, read_view). */
const FILTER_FIELDS = ['per_group', 'seen', 'exclude_items', 'exclude_groups', 'min_actors'];

describe('the named function contract (issue #46)', () => {
  it("groups_lib's filters_of reads a filtered read's filters by name", () => {
    const source = readFileSync(join(RANKING_DIR, 'options', 'groups', 'groups_lib.lua'), 'utf8');
    const filtersOf = /^local function filters_of\(cfg_key, arg\)[\s\S]*?\n^end$/m.exec(source)?.[0] ?? '';
    for (const field of FILTER_FIELDS) expect(filtersOf).toMatch(new RegExp(`\\barg\\.${field}\\b`));
  });

  it('counts the functions still positional, per slice: the allowlist only shrinks', () => {
    expect(Object.fromEntries(PARTS.map(([part, definitions]) => [part, positional(definitions)]))).toEqual(
      POSITIONAL_LEFT,
    );
  });

  it.each(
    [RANKING, ACCESS, COUNTERS, INGEST, STATS]
      .flatMap(({ functions }): Array<LibraryFunction<never, unknown>> => Object.values(functions))
      .filter((fn) => fn.contract !== undefined)
      .map((fn) => [fn.name, fn] as const),
  )('%s: its Lua reads and answers by the names of its contract', (_, fn) => {
    const own = handlerSource(fn.library, fn.handler).replace(/--.*$/gm, '');
    const code = `${own}\n${sharedStartsCode(fn.library, fn.handler, own).replace(/--.*$/gm, '')}`;
    const contract = fn.contract ?? { args: [], reply: [] };
    // Handing its `arg` to idem_lib's idem_of reads IDEM_FIELDS there, by name (scripts.spec.ts checks idem_lib).
    const throughIdem = new Set<string>(/\bidempotency\.idem_of\(arg\b/.test(code) ? IDEM_FIELDS : []);
    // Handing it to groups_lib's filters_of reads FILTER_FIELDS there, by name (the test above).
    const throughFilters = /\bgroups\.filters_of\(\w+, arg\)/.test(code) ? FILTER_FIELDS : [];
    for (const arg of contract.args.filter((name) => !throughIdem.has(name) && !throughFilters.includes(name)))
      expect(code).toMatch(new RegExp(`\\barg\\.${arg}\\b`));
    for (const field of contract.reply) expect(code).toMatch(new RegExp(`\\b${field} = `));
    expect(fn.library.source).toContain(`${fn.handler} = { name = '${fn.handler}'`);
  });
});

const RANKING_DIR = join(__dirname, '..', 'ranking');

/** Where a replay of an answer stored by a library from before the named contract reads its positional layout. */
const STORED_LAYOUTS = new Set(['core/standings.ts']);

/** A reply read at an entry (Reply's accessors): its object, accessor and first argument. */
const ENTRY_READ =
  /(\w+)\.(int|flag|string|isString|optionalString|number|nested|range|from|intsFrom)\(([^,()]*(?:\([^()]*\))?[^,()]*)[,)]/g;

/** A loop striding over a reply's entries by a record's width (`i += 3`, `i += width`). */
const STRIDE = /for \(let \w+ = [^;]*; [^;]*; \w+ \+= (?:[A-Za-z_]\w*|[2-9]\d*)\)/;

/**
 * The places a file decodes a reply by position: an entry read at a literal or computed place (a
 * name, a list's index and `intsFrom(0)`, the whole list, are not), or a loop striding over records.
 */
function positionalReads(file: string): string[] {
  const source = readFileSync(join(RANKING_DIR, file), 'utf8');
  const decodes = /\bdecode\b|\bReply\b/.test(source);
  return source.split('\n').flatMap((line, i) => {
    const code = line.replace(/\/\/.*$/, '');
    const reads = [...code.matchAll(ENTRY_READ)]
      .filter(([, object, accessor, first]) => {
        const arg = first.trim();
        if (object === 'Array' || /^['"`]/.test(arg) || /^[A-Za-z_$][\w$]*$/.test(arg)) return false;
        return !(accessor === 'intsFrom' && arg === '0');
      })
      .map(([read]) => `${file}:${i + 1} ${read}`);
    return decodes && STRIDE.test(code) ? [...reads, `${file}:${i + 1} ${code.trim()}`] : reads;
  });
}

describe('the replies of ranking functions (issue #46)', () => {
  it('are decoded by name in TypeScript: fields, records and heads, never an entry at a place', () => {
    const files = readdirSync(RANKING_DIR, { recursive: true, encoding: 'utf8' }).filter(
      (file) => file.endsWith('.ts') && !file.endsWith('.spec.ts') && !STORED_LAYOUTS.has(file),
    );
    expect(files.length).toBeGreaterThan(100);
    expect(files.flatMap(positionalReads)).toEqual([]);
  });
});

describe('answers stored by a library from before the named contract still replay', () => {
  const idem = { key: 'k', fingerprint: 'f', retentionMs: 1000 };

  it('a counter increment: its precisions as integers', () => {
    const call: Parameters<typeof COUNTERS.functions.increment.decode>[1] = {
      keys: new CounterKeys('t:', 1),
      name: 'c',
      precisionsSec: [60, 3600],
      samples: 10,
      nowMs: 1_700_000_000_000,
      atSec: 1_700_000_000,
      count: 1,
      idem,
      newCounters: 1,
      bucketCap: 0,
    };
    expect(COUNTERS.functions.increment.decode([1, '1700000000', 60, 3600], call).value).toEqual([60, 3600]);
    expect(COUNTERS.functions.increment.decode([1, '1700000000', '60,3600'], call).value).toEqual([60, 3600]);
  });

  it('a stats record: dropped as { 0 }, or its four figures', () => {
    const call: Parameters<typeof STATS.functions.record.decode>[1] = {
      keys: new StatsKeys('t:'),
      context: 'x',
      type: 'Load',
      nowMs: 1_700_000_000_000,
      hourStart: 1_699_999_200,
      value: 3,
      histogramField: 'h',
      idem,
      apply: true,
    };
    expect(STATS.functions.record.decode([1, '3600', 0], call).value).toEqual({
      status: 'dropped',
      count: 0,
      sum: 0,
      sumsq: 0,
    });
    expect(STATS.functions.record.decode([1, '3600', 1, '2', '3.5', '6.25'], call).value).toEqual({
      status: 'current',
      count: 2,
      sum: 3.5,
      sumsq: 6.25,
    });
  });

  describe('a ranking write: its standings in their positional layout', () => {
    const windows = [
      { name: 'h', periodSec: 3600, intervalSec: 60, createdAtMs: 0 },
      { name: 'd', periodSec: 86_400, intervalSec: 3600, createdAtMs: 0 },
    ];
    const board = new PreparedBoard(
      { name: 'b', version: 'v1', shards: 1, windows, maxItems: null, views: [] },
      (shard) => new RankingKeys('t:').board('b', shard),
    );
    const write = { board, shard: board.shards[0], nowMs: 1_700_000_000_000, budgetFields: 100, idem };
    const standings = [
      { score: 3, rank: 2, previousRank: null },
      { score: 3, rank: 4, previousRank: 1 },
    ];

    it('a score: draining, score/rank per window, previous ranks (and as the named answer)', () => {
      const call: Parameters<typeof RANKING.functions.recordScore.decode>[1] = {
        ...write,
        item: 'a',
        score: 3,
        newItems: 1,
        atMs: write.nowMs,
      };
      const legacy = RANKING.functions.recordScore.decode([1, 'h,d', 1, 3, 2, 3, 4, 0, 1], call);
      const named = RANKING.functions.recordScore.decode([1, 'h,d', 1, '3,3', '2,4', '0,1', 0], call);
      expect(legacy.value).toEqual({ draining: true, standings, marks: undefined });
      expect(named.value).toEqual(legacy.value);
    });

    it('a like: draining, counted, score/rank per window, previous ranks, marks', () => {
      const call: Parameters<typeof RANKING.functions.like.decode>[1] = {
        ...write,
        item: 'a',
        userId: 'u',
        undo: false,
        newItems: 1,
        newLikes: 1,
      };
      const legacy = RANKING.functions.like.decode([1, 'h,d', 0, 1, 3, 2, 3, 4, 0, 1, 'm1', 'm2'], call);
      const named = RANKING.functions.like.decode([1, 'h,d', 0, 1, '3,3', '2,4', '0,1', 'm1,m2'], call);
      expect(legacy.value).toEqual({ draining: false, counted: true, standings, marks: ['m1', 'm2'] });
      expect(named.value).toEqual(legacy.value);
    });

    it('a batch: draining and the entries applied, in the order the named answer keeps', () => {
      const call: Parameters<typeof RANKING.functions.incrementBatch.decode>[1] = {
        ...write,
        entries: [],
        newItems: 1,
      };
      expect(RANKING.functions.incrementBatch.decode([1, '', 1, 5], call).value).toEqual({
        draining: true,
        applied: 5,
      });
    });
  });
});
