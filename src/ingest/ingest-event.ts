import { ID_PATTERN, ID_RULE, isName, NAME_RULE, toNfc } from '../common/names';
import { SEGMENTS_PER_EVENT } from '../ranking/options/segments/segments.limits';
import { MAX_EVENT_AMOUNT } from './ingest.limits';

/** A message's event once checked: what one batch entry of the HTTP API carries, plus its board. */
export interface IngestEvent {
  board: string;
  item: string;
  amount: number;
  /** The event's time (unix ms); absent in the message: the time it is applied. */
  atMs?: number;
  /** The segments it also counts in, as a batch entry's `segments` (absent: none). */
  segments?: string[];
  /** Who sent it (boards with `actors: true`; absent: no one), as a batch entry's `actor`. */
  actor?: string;
}

/** Fields of the wider contract (api.md) this service does not count yet: refused by name, not dropped. */
const NOT_SUPPORTED = ['score', 'createdAt'];
const KNOWN = new Set(['board', 'item', 'amount', 'at', 'id', 'segments', 'actor']);

/**
 * Reads a message payload: the event, or why it is not one (the reason of its dead letter).
 * `defaultBoard`: the source's `board`, for messages that name none. An `at` after `nowMs` counts as
 * now (a producer's clock a little ahead must not lose events); too old for every window is refused
 * by the apply script (AT_OUT_OF_SPAN), which alone knows the windows' current span.
 */
export function parseEvent(payload: string, defaultBoard: string | undefined, nowMs: number): IngestEvent | string {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return 'NOT_JSON: the payload is not JSON';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'INVALID: not a JSON object';
  const event = value as Record<string, unknown>;
  for (const key of Object.keys(event)) {
    if (NOT_SUPPORTED.includes(key)) return `INVALID: ${key} is not supported by this service`;
    if (!KNOWN.has(key)) return `INVALID: unknown field ${key}`;
  }
  const board = event.board ?? defaultBoard;
  if (board === undefined) return 'INVALID: board is missing (and the source has no default board)';
  if (!isName(board)) return `INVALID: board must be ${NAME_RULE}`;
  const item = typeof event.item === 'string' ? toNfc(event.item) : undefined;
  if (item === undefined || !ID_PATTERN.test(item)) return `INVALID: item must be ${ID_RULE}`;
  const amount = event.amount ?? 1;
  if (typeof amount !== 'number' || !Number.isInteger(amount) || amount === 0 || Math.abs(amount) > MAX_EVENT_AMOUNT)
    return `INVALID: amount must be a non-zero integer of absolute value at most ${MAX_EVENT_AMOUNT}`;
  const parsed: IngestEvent = { board, item, amount };
  if (event.actor !== undefined) {
    const actor = typeof event.actor === 'string' ? toNfc(event.actor) : undefined;
    if (actor === undefined || !ID_PATTERN.test(actor)) return `INVALID: actor must be ${ID_RULE}`;
    parsed.actor = actor;
  }
  if (event.segments !== undefined) {
    const segments = segmentsOf(event.segments);
    if (typeof segments === 'string') return segments;
    parsed.segments = segments;
  }
  if (event.at !== undefined) {
    if (typeof event.at !== 'number' || !Number.isFinite(event.at) || event.at < 0)
      return 'INVALID: at must be a unix time in seconds';
    parsed.atMs = Math.min(Math.floor(event.at * 1000), nowMs);
  }
  return parsed;
}

/** A message's `segments` as a batch entry takes them (1-8 names, none twice), or why not. */
function segmentsOf(value: unknown): string[] | string {
  const { min, max } = SEGMENTS_PER_EVENT;
  if (!Array.isArray(value) || value.length < min || value.length > max || !value.every(isName))
    return `INVALID: segments must be ${min}-${max} names, each ${NAME_RULE}`;
  if (new Set(value).size !== value.length) return 'INVALID: segments names a segment twice';
  return value as string[];
}
