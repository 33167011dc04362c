import {
  ALIASES_PER_BOARD,
  MIN_ACTORS,
  MODERATED_GROUPS_PER_BOARD,
  MODERATED_ITEMS_PER_SHARD,
  QUEUE_DEPTH_ITEMS,
} from '../../src/ranking/core/ranking.limits';
import { EXCLUDE_GROUPS_MAX, PER_GROUP_ITEMS } from '../../src/ranking/options/groups/groups.limits';
import type { WorstRow } from './harness-types';

/**
 * What the harness must cover, read from the OpenAPI document: every operation, and every board option
 * (each field of the board PUT body, nested ones included) with its documented maximum.
 */
interface Schema {
  $ref?: string;
  type?: string;
  maximum?: number;
  maxItems?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>>;
  components: { schemas: Record<string, Schema> };
}

/** `METHOD /path/{param}` of every operation. */
export function operationsOf(document: OpenApiDocument): string[] {
  return Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
  );
}

export interface OptionField {
  /** e.g. `windows[].snapshots.keep`. */
  path: string;
  /** The documented maximum (a number's `maximum`, an array's `maxItems`), if any. */
  maximum?: number;
}

function resolve(document: OpenApiDocument, schema: Schema): Schema {
  return schema.$ref ? document.components.schemas[schema.$ref.split('/').pop()!] : schema;
}

function fieldsOf(document: OpenApiDocument, schema: Schema, prefix: string): OptionField[] {
  const fields: OptionField[] = [];
  for (const [name, raw] of Object.entries(resolve(document, schema).properties ?? {})) {
    const path = prefix ? `${prefix}.${name}` : name;
    const property = resolve(document, raw);
    if (property.type === 'array' && property.items) {
      fields.push({ path, maximum: property.maxItems });
      if (resolve(document, property.items).properties) fields.push(...fieldsOf(document, property.items, `${path}[]`));
    } else if (property.properties) {
      fields.push({ path }, ...fieldsOf(document, property, path));
    } else {
      fields.push({ path, maximum: property.maximum });
    }
  }
  return fields;
}

/** Every field of the board PUT body. */
export function boardOptionsOf(document: OpenApiDocument): OptionField[] {
  const put = document.paths['/admin/boards/{board}'].put;
  return fieldsOf(document, put.requestBody!.content['application/json'].schema, '');
}

/** Every value a board body sets, by the same paths (an array by its length, then its elements). */
export function valuesOf(body: unknown, prefix = '', into = new Map<string, unknown[]>()): Map<string, unknown[]> {
  const add = (path: string, value: unknown) => into.set(path, [...(into.get(path) ?? []), value]);
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    const path = prefix ? `${prefix}.${name}` : name;
    if (Array.isArray(value)) {
      add(path, value.length);
      for (const element of value)
        if (typeof element === 'object' && element !== null) valuesOf(element, `${path}[]`, into);
    } else if (typeof value === 'object' && value !== null) {
      add(path, value);
      valuesOf(value, path, into);
    } else {
      add(path, value);
    }
  }
  return into;
}

/** Options no harness board sets, or sets below their documented maximum. */
export function uncoveredOptions(options: readonly OptionField[], boards: readonly unknown[]): string[] {
  const values = new Map<string, unknown[]>();
  for (const board of boards) valuesOf(board, '', values);
  const missing: string[] = [];
  for (const { path, maximum } of options) {
    const set = values.get(path);
    if (!set) missing.push(`${path}: set by no board`);
    else if (maximum !== undefined && !set.includes(maximum)) missing.push(`${path}: never at its maximum ${maximum}`);
  }
  return missing;
}

/**
 * Redis functions no row runs yet, each with why: the harness fails on a function neither run by a row
 * nor listed here (a new function without its worst-case row), and on one listed here that a row runs
 * (the list kept true). Every library's `_loaded` marker is no call.
 */
export const FUNCTIONS_WITHOUT_ROWS: Readonly<Record<string, string>> = {
  ingest_apply:
    "ingest from Redis Streams and NATS: a source's consumer runs on its own timers against a broker, not yet driven by a row; measured by bench/ingest.ts",
  ingest_groups:
    "ingest from Redis Streams: the consumer group's setup on a source's refresh timer, not yet driven by a row",
};

/**
 * Redis functions whose callers reach them on a Cluster, where a single node takes another path (they
 * branch on the nodes serving the shards: RedisService.groupByNode), each with that branch: the
 * single-node harness does not require them, the Cluster harness (test/e2e/worst-case-cluster.e2e-spec.ts)
 * fails unless one of its rows runs each. The other functions of such branches run on a single node too
 * (a `_shards` count call over a node's shards, a stats merge), in calls no smaller than a Cluster's:
 * their single-node rows bound them.
 */
export const FUNCTIONS_ON_CLUSTER: Readonly<Record<string, string>> = {
  lookup_count_shards:
    'LookupStore.lookupOnOneNode: a sharded lookup on shards of several nodes (or with a shard to drain) counts in a second round',
};

/**
 * Keys a client's requests make Redis hold that no growth row's quota stops (bookkeeping of reads and
 * admin steps), each with what bounds it: the harness fails unless some row measures each (its `holds`,
 * by name) and holds it to that bound.
 */
export const HELD_KEYS: Readonly<Record<string, string>> = {
  segheld: "archive_held_lib: the items of a shard's segment archive texts Redis keeps (keep x top per segment)",
  segtext: 'archive_held_lib: the segment archive text holding each segheld item',
  rtr: "group_parts_lib: the retractions noted on a group board's shard 0, one an item for an hour",
  exheld: "moderation_count_lib: each window's index of the hidden items' scores, at most the shard's exceptions",
  exidx: 'moderation_count_lib: the windows of a shard whose index is built',
  staged: "span_stage: a filtered span read's copies, sums and counts, until the read ends or SPAN_STAGE_TTL_MS",
  'staged reads': "span_stage: a shard window's registry of its staged reads",
};

/**
 * Documented limits some row meets, and the words its text names the case with: the harness fails
 * unless a row's text names it (a row measuring the limit removed).
 */
export const LIMITS_MET: Readonly<Record<string, string>> = {
  MODERATED_GROUP_ARCHIVED_ITEMS_PER_SHARD: '1 000 archived items',
  // The options of issue #49 at their maxima: each has its row.
  PER_GROUP_ITEMS: `perGroup ${PER_GROUP_ITEMS.max} (its maximum)`,
  MIN_ACTORS: `minActors ${MIN_ACTORS.max} (its maximum)`,
  EXCLUDE_ITEMS_MAX: '1 000 excluded items',
  EXCLUDE_GROUPS_MAX: `${EXCLUDE_GROUPS_MAX} excluded groups`,
  MODERATED_ITEMS_PER_SHARD: `the last state a shard takes (${MODERATED_ITEMS_PER_SHARD})`,
  MODERATED_GROUPS_PER_BOARD: `the last group state a board takes (${MODERATED_GROUPS_PER_BOARD}`,
  QUEUE_DEPTH_ITEMS: `the deepest page (${QUEUE_DEPTH_ITEMS} rows) of a review board`,
  ALIASES_PER_BOARD: `an alias past the board's most (${ALIASES_PER_BOARD})`,
};

/** HELD_KEYS no row measures, and limits of LIMITS_MET no row's text names. */
export function unmeasured(rows: readonly WorstRow[]): string[] {
  const held = new Set(rows.flatMap((row) => (row.holds ?? []).map((keys) => keys.name)));
  const texts = rows.map((row) => row.worst);
  return [
    ...Object.keys(HELD_KEYS).filter((name) => !held.has(name)),
    ...Object.entries(LIMITS_MET)
      .filter(([, words]) => !texts.some((text) => text.includes(words)))
      .map(([limit]) => limit),
  ];
}

/**
 * Functions a timer sends, which the harness sends between rows instead: neither required nor refused.
 * `merge`: the stats service's batched samples (one call per batch), flushed by the harness before each
 * row's reading (HarnessContext.statsFlushed), its timer taken out (harness/worst-case/app-context.ts).
 */
export const FUNCTIONS_ON_TIMERS: ReadonlySet<string> = new Set(['merge']);

/** A function's handler as Redis names it `<library>_<version>_<handler>` (e.g. tb_ranking_3f0a9c12_increment). */
export function handlerOf(redisName: string): string {
  return redisName.replace(/^tb_[a-z]+_[0-9a-f]+_/, '');
}
