import { createHash, randomUUID } from 'node:crypto';
import { DomainError } from '../common/errors';
import { IDEMPOTENCY_RETENTION_SEC, RESEND_GUARD_MS } from '../common/limits';
import { Reply, ScriptReplyError } from './replies';
import type { ScriptArg } from './scripts';

/** A write's Idempotency-Key and what the request asks for (a repeat of the key asking for something else is refused). */
export interface IdemRequest {
  key: string;
  fingerprint: string;
  /**
   * False when the client has no budget left to store a new answer (quota idempotentAnswers): the
   * write then only replays a stored answer, and is refused (IdempotentAnswerUnfundedError) before
   * anything is applied when there is none.
   */
  mayStore?: boolean;
  /** Idempotency-Retention: the answer is kept this long (s) instead of IDEMPOTENCY_TTL_SEC when shorter. */
  retentionSec?: number;
}

/** An idempotent write's part of a script call (see idem_lib.lua). */
export interface IdemCall extends IdemRequest {
  retentionMs: number;
  /** A key the service made, not the client: its replay is the request's own earlier send, not a repeat. */
  internal?: boolean;
}

/**
 * The key a write without one gets on a Cluster. ioredis re-sends a command whose connection closed
 * before its answer came (retryDelayOnFailover), and that command may already have run: with a key
 * of its own the second run is a replay. Client keys are printable ASCII, so the leading control
 * character keeps the two apart.
 */
export function internalIdemCall(retentionMs: number): IdemCall {
  return { key: `\x01${randomUUID()}`, fingerprint: '', retentionMs, internal: true };
}

/**
 * The idempotency part of every write script call: the client's key with the configured retention
 * (IDEMPOTENCY_TTL_SEC); on a Cluster, a write without one gets a key of the service's own, kept for
 * RESEND_GUARD_MS (see internalIdemCall). Each store that writes keeps one.
 */
export class IdemCalls {
  constructor(
    private readonly retentionMs: number,
    private readonly onCluster: boolean,
  ) {}

  /** For the connection `client` (its isCluster) and the configured retention. */
  static for(retentionMs: number, client: { isCluster: boolean }): IdemCalls {
    return new IdemCalls(retentionMs, client.isCluster);
  }

  of(idem: IdemRequest): IdemCall;
  of(idem: IdemRequest | undefined): IdemCall | undefined;
  of(idem: IdemRequest | undefined): IdemCall | undefined {
    if (idem)
      return {
        ...idem,
        retentionMs:
          idem.retentionSec === undefined ? this.retentionMs : Math.min(this.retentionMs, idem.retentionSec * 1000),
      };
    return this.onCluster ? internalIdemCall(RESEND_GUARD_MS) : undefined;
  }
}

/** A write's decoded reply, and whether it was replayed from the stored answer of its key. */
export interface Idempotent<T, Made extends string = never> {
  replayed: boolean;
  context: string;
  value: T;
  /** What the write created, by its contract's `created` names; zeros on a replay, which creates nothing. */
  created: Record<Made, number>;
}

export class IdempotencyKeyReusedError extends DomainError {
  constructor() {
    super('IDEMPOTENCY_KEY_REUSED', 'Idempotency-Key was already used for a different request; use a new key');
  }
}

/** A keyed write without budget to store its answer found none stored: refused, nothing applied (idem_lib outcome 3). */
export class IdempotentAnswerUnfundedError extends Error {
  constructor() {
    super('no stored answer for this Idempotency-Key and no budget to store one');
  }
}

/**
 * The key a client's Idempotency-Key is stored under: a digest of the client (callerOf) and its key, so
 * two clients sending the same key never see each other's answers (nor refuse each other's writes),
 * and a stored entry holds 22 characters whatever the key's length (128 bits: no collision to fear).
 */
export function scopedIdempotencyKey(client: string, key: string, retentionSec?: number): string {
  if (retentionSec === undefined)
    return createHash('sha256').update(`${client}\n${key}`).digest('base64url').slice(0, 22);
  // The retention is part of the key (another retention is another key: its answers sit in other
  // buckets), and rides after it to the write's IdemRequest (idemRequest).
  const digest = createHash('sha256').update(`${client}\n${key}\n${retentionSec}`).digest('base64url').slice(0, 22);
  return `${digest}${RETENTION_MARK}${retentionSec}`;
}

/** Between a scoped key and its retention (a digest is base64url: never this character). */
const RETENTION_MARK = '~';

/**
 * The share of one full answer (kept the contract's 24 h) that an answer kept `retentionSec` is: what
 * it costs of the quota of stored answers, so that the quota bounds answers x time, the bytes a
 * client makes Redis hold, rather than their count (issue #45 row 11).
 */
export function answerShare(idem: IdemRequest): number {
  return idem.retentionSec === undefined ? 1 : idem.retentionSec / IDEMPOTENCY_RETENTION_SEC.max;
}

/**
 * What the key a write without one gets on a Cluster (internalIdemCall) costs of the quota of stored
 * answers: its answer is kept RESEND_GUARD_MS, so it costs that share of a 24 h answer, as an
 * Idempotency-Retention of as many seconds does (answerShare): 1/1440 of an answer.
 */
export const RESEND_GUARD_SHARE = RESEND_GUARD_MS / 1000 / IDEMPOTENCY_RETENTION_SEC.max;

/** The retention argument of a script: negative when the write may not store a new answer (idem_lib). */
export function retentionArg(idem: IdemCall): number {
  return idem.mayStore === false ? -idem.retentionMs : idem.retentionMs;
}

/**
 * The idempotency fields of a named call, by name: idem_lib's idem_of reads these names of the call's
 * arguments. `idem_context` is what the app needs back on a replay to rebuild the first answer byte for byte.
 */
export const IDEM_FIELDS = ['idem_key', 'idem_fingerprint', 'idem_context', 'idem_retention'] as const;

/** IDEM_FIELDS but the context: a request's record of a call answering several (the context is the call's). */
export const IDEM_RECORD_FIELDS = ['idem_key', 'idem_fingerprint', 'idem_retention'] as const;

/** The named idempotency arguments of a call ("" key: a write without one). */
export function idemNamedArgs(
  idem: IdemCall | undefined,
  context: string,
): Record<(typeof IDEM_FIELDS)[number], ScriptArg> {
  return idem
    ? {
        idem_key: idem.key,
        idem_fingerprint: idem.fingerprint,
        idem_context: context,
        idem_retention: retentionArg(idem),
      }
    : { idem_key: '', idem_fingerprint: '', idem_context: context, idem_retention: 0 };
}

/** idem_lib's outcomes, the first field of every idempotent reply. */
export const IDEM_OUTCOME = { applied: 0, replayed: 1, keyReused: 2, unfunded: 3 } as const;

/** What every idempotent reply leads with (idem_lib): its outcome, then its context. */
const IDEM_HEAD = ['outcome', 'context'] as const;

/** The refusal an idempotent reply's outcome is (a reused key, no budget to store), or undefined. */
export function idemRefusal(outcome: number): Error | undefined {
  if (outcome === IDEM_OUTCOME.keyReused) return new IdempotencyKeyReusedError();
  if (outcome === IDEM_OUTCOME.unfunded) return new IdempotentAnswerUnfundedError();
  return undefined;
}

/**
 * Reads { outcome, context, created..., reply... }: the counts of what the write created, one per name
 * of `createdNames` (its contract's `created`; applied writes only: a replay answers none), then the
 * script's own reply, decoded by `decode`.
 * A replay under the service's own key is this request's answer, not a repeat's; it is charged as
 * creating nothing (the first run's counts were lost with its answer).
 */
export function decodeIdempotent<T, Made extends string = never>(
  script: string,
  raw: unknown,
  idem: IdemCall | undefined,
  decode: (reply: Reply) => T,
  createdNames: readonly Made[] = [],
): Idempotent<T, Made> {
  return decodeIdempotentReply(new Reply(script, raw), idem, decode, createdNames);
}

/** decodeIdempotent of a reply already read as an array (one entry of a reply answering several writes). */
export function decodeIdempotentReply<T, Made extends string = never>(
  reply: Reply,
  idem: IdemCall | undefined,
  decode: (reply: Reply) => T,
  createdNames: readonly Made[] = [],
): Idempotent<T, Made> {
  const outcome = reply.head(IDEM_HEAD).int('outcome');
  const refusal = idemRefusal(outcome);
  if (refusal) throw refusal;
  const applied = outcome === IDEM_OUTCOME.applied;
  if (!applied && outcome !== IDEM_OUTCOME.replayed) {
    throw new ScriptReplyError(`${reply.script}.outcome`, `expected an outcome of 0, 1, 2 or 3, got ${outcome}`);
  }
  // Only an applied write counts what it created, after its context: a replay created nothing.
  const fields: readonly string[] = applied ? [...IDEM_HEAD, ...createdNames] : IDEM_HEAD;
  const head = reply.head(fields);
  const created = {} as Record<Made, number>;
  for (const name of createdNames) created[name] = applied ? head.int(name) : 0;
  return {
    replayed: !applied && !idem?.internal,
    context: head.string('context'),
    value: decode(reply.from(fields.length)),
    created,
  };
}

/** A short digest of what a request asks for (its operation and the values that decide its effect). */
export function fingerprintOf(parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 16);
}

/** The idempotency part of a write, when the client sent a key: `what` names the operation and its values. */
export function idemRequest(key: string | undefined, what: unknown[]): IdemRequest | undefined {
  if (key === undefined) return undefined;
  const mark = key.indexOf(RETENTION_MARK);
  if (mark < 0) return { key, fingerprint: fingerprintOf(what) };
  return { key, fingerprint: fingerprintOf(what), retentionSec: Number(key.slice(mark + 1)) };
}

/** The same request, allowed to replay only (no budget to store a new answer). */
export function replayOnly(idem: IdemRequest): IdemRequest {
  return { ...idem, mayStore: false };
}
