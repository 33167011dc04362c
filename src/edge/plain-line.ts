import { tracingChannel } from 'node:diagnostics_channel';
import pino, { Logger } from 'pino';

const S = pino.symbols;
/** A child's message prefix (pino's msgPrefix option): exported by pino, absent from its types. */
const MSG_PREFIX: symbol = Reflect.get(pino.symbols, 'msgPrefixSym');

/** pino's own tracing channel of its serializer: with a subscriber, every line goes through pino. */
const PINO_AS_JSON = tracingChannel('pino_asJson');

/** pino's internal state of a logger, under its exported symbols. */
function internal<T>(root: Logger, symbol: symbol): T {
  return Reflect.get(root, symbol) as T;
}

/** What a plain line's fields and bindings may hold: printable ASCII strings and finite numbers. */
type Fields = Record<string, unknown>;

/**
 * A plain line of a request's child logger written straight to the root's stream, byte for byte what
 * pino writes through `root.child(bindings)`: `{"level":N,"time":T` and the root's bindings, the
 * child's bindings, the fields, `"msg"`, `}` and the newline. A plain line is one whose keys and
 * string values are printable ASCII without `"` or `\` (pino writes those bare, as here) and whose
 * other values are finite numbers (or undefined, skipped), on a root with none of what would change
 * the line: formatters of objects, a mixin, serializers or redaction of these keys, hooks, a nested
 * key, a message prefix, a stream that wants pino's metadata, a subscriber to pino's serializer. The
 * access line is one: pino's child and its generic serializer cost each answered request about
 * 3 µs of CPU (docs/benchmarks.md). Answers false, having written nothing, for any other line.
 */
export function writePlainLine(
  root: Logger,
  level: pino.Level,
  bindings: Fields,
  fields: Fields,
  msg: string,
): boolean {
  if (!rootWritesPlainly(root) || !isPlainText(msg)) return false;
  // Joined once: a line built by `+=` is a tree of partial strings, flattened again to be written.
  const parts = LINE;
  parts[0] = internal<Record<number, string>>(root, S.lsCacheSym)[root.levels.values[level]];
  parts[1] = internal<() => string>(root, S.timeSym).call(root);
  parts[2] = internal<string>(root, S.chindingsSym);
  let count = putMembers(root, bindings, parts, 3);
  if (count >= 0) count = putMembers(root, fields, parts, count);
  if (count < 0) return false;
  parts[count] = ',"msg":"';
  parts[count + 1] = msg;
  parts[count + 2] = '"';
  parts[count + 3] = internal<string>(root, S.endSym);
  // What a longer line (or one left to pino) put past this one's parts would be joined into it.
  for (let i = count + 4; i < parts.length; i++) parts[i] = '';
  internal<pino.DestinationStream>(root, S.streamSym).write(parts.join(''));
  if (parts.length > LINE_PARTS_KEPT) parts.length = LINE_PARTS;
  return true;
}

/** rootConfiguredPlainly's answer per root: what it reads is set when pino makes the logger, once. */
const PLAIN_ROOTS = new WeakMap<Logger, boolean>();

/** True when nothing configured on the root would make pino's line differ from writePlainLine's. */
function rootWritesPlainly(root: Logger): boolean {
  if (PINO_AS_JSON.hasSubscribers) return false;
  let plain = PLAIN_ROOTS.get(root);
  if (plain === undefined) PLAIN_ROOTS.set(root, (plain = rootConfiguredPlainly(root)));
  return plain;
}

function rootConfiguredPlainly(root: Logger): boolean {
  const hooks = internal<{ logMethod?: unknown; streamWrite?: unknown }>(root, S.hooksSym);
  return (
    internal<Record<symbol, unknown>>(root, S.streamSym)[S.needsMetadataGsym] !== true &&
    internal<{ log?: unknown }>(root, S.formattersSym).log === undefined &&
    internal<unknown>(root, S.mixinSym) === undefined &&
    internal<unknown>(root, S.nestedKeySym) === null &&
    !internal<unknown>(root, MSG_PREFIX) &&
    internal<unknown>(root, S.messageKeySym) === 'msg' &&
    internal<Record<symbol, unknown>>(root, S.stringifiersSym)[S.wildcardFirstSym] === undefined &&
    hooks.logMethod === undefined &&
    hooks.streamWrite === undefined
  );
}

/** Keys a child's bindings skip (pino's asChindings): a line holding one is left to pino. */
const RESERVED_KEYS = new Set(['level', 'serializers', 'formatters', 'customLevels', 'msg']);

/** `,"key":` of each plain key written (neither reserved nor other than plain text): the same few keys start every access line. */
const KEY_PARTS = new Map<string, string>();

/** `,"key":` of a plain key, undefined for any other. */
function keyPart(key: string): string | undefined {
  let part = KEY_PARTS.get(key);
  if (part === undefined) {
    if (RESERVED_KEYS.has(key) || !isPlainText(key)) return undefined;
    part = `,"${key}":`;
    if (KEY_PARTS.size < 256) KEY_PARTS.set(key, part);
  }
  return part;
}

/**
 * Puts `,"key":value` of each field into `parts` from index `at`: the index after them, or -1 (parts
 * then unused) when a field is not plain.
 */
function putMembers(root: Logger, fields: Fields, parts: string[], at: number): number {
  let next = at;
  const serializers = internal<Fields>(root, S.serializersSym);
  const stringifiers = internal<Fields>(root, S.stringifiersSym);
  for (const key in fields) {
    const value = fields[key];
    if (!Object.prototype.hasOwnProperty.call(fields, key) || value === undefined) continue;
    const part = keyPart(key);
    if (part === undefined || serializers[key] !== undefined || stringifiers[key] !== undefined) return -1;
    parts[next++] = part;
    if (typeof value === 'number' && Number.isFinite(value)) parts[next++] = String(value);
    else if (typeof value === 'string' && isPlainText(value)) {
      parts[next++] = '"';
      parts[next++] = value;
      parts[next++] = '"';
    } else return -1;
  }
  return next;
}

/** The parts of an access line: its level, time, the root's bindings, reqId, four fields and the message (23). */
const LINE_PARTS = 23;
/** A line of many fields grows LINE; past this many parts it is cut back once that line is written. */
const LINE_PARTS_KEPT = 64;

/**
 * The parts of the line being written, one array for every line (joined before writePlainLine returns):
 * a new array per line would cost every answered request about 200 bytes.
 */
const LINE: string[] = new Array<string>(LINE_PARTS).fill('');

/** Printable ASCII without `"` or `\`: what JSON and pino write between quotes unchanged. */
function isPlainText(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code > 0x7e || code === 0x22 || code === 0x5c) return false;
  }
  return true;
}
