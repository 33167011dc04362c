import { Injectable } from '@nestjs/common';
import { Clock } from '../../common/clock';
import type { WriteAnswer } from '../../common/retry-safe';
import type { ClientBudget } from '../../governance/growth-quotas';
import { IdemRequest, idemRequest } from '../../redis/idempotency';
import type { PreparedBoard } from '../core/board';
import { DEFAULT_AMOUNT } from '../core/ranking.limits';
import type { WindowStanding } from '../core/ranking.types';
import { createdOf, segmentsOf, timeOf } from './write-rules';

/**
 * The writes as objects, from the controller to the script: each names its board, carries its own
 * fields and the context every write shares. Built once (WriteCommands) and passed unchanged through
 * the facade to the pipeline (WritePipeline) and the store.
 */

/** What every write carries besides its own fields. */
export interface WriteContext {
  /** When the request arrived (unix ms): its checks and its script call go by this time. */
  nowMs: number;
  /** The client's Idempotency-Key (scoped to the client) and what the request asks for; none: not keyed. */
  idem?: IdemRequest;
  /** The client's allowance of growth (quotas on new items, likes, stored answers); none: unlimited. */
  budget?: ClientBudget;
}

/** An item increment; `atSec` the event's time (absent: now), `createdAtSec` the item's creation time. */
export interface IncrementCommand {
  kind: 'increment';
  board: string;
  item: string;
  amount: number;
  atSec?: number;
  createdAtSec?: number;
  /** The segments the event also counts in (absent: none). */
  segments?: string[];
  /** Who sent the event (a board with actors only; absent: no one). */
  actor?: string;
  /** The item's group from now on (a board with groups only; absent: unchanged). */
  group?: string;
  /** The counter it adds to, on a board with metrics (absent: the first). */
  metric?: string;
  context: WriteContext;
}

/** A score on a max / min / last board; `atSec` the event's time (absent: now). */
export interface ScoreCommand {
  kind: 'score';
  board: string;
  item: string;
  /** An integer, |score| <= MAX_ABS_SCORE. */
  score: number;
  /** On a board with a tiebreak: the record's (an integer, |tiebreak| <= 10^15; absent: 0). */
  tiebreak?: number;
  atSec?: number;
  context: WriteContext;
}

/** A batch entry as the client sent it: `at` (absent: now) and `createdAt` (absent: none) in unix seconds. */
export interface BatchInput {
  item: string;
  /** Undefined only beside a score. */
  amount?: number;
  /** A max / min / last board's entries carry a score instead of an amount. */
  score?: number;
  /** Beside a score on a board with a tiebreak (absent: 0). */
  tiebreak?: number;
  at?: number;
  createdAt?: number;
  segments?: string[];
  actor?: string;
  group?: string;
  /** The counter it adds to, on a board with metrics (absent: the first). */
  metric?: string;
}

/** Amounts for many items, applied together (atomically per shard). */
export interface BatchCommand {
  kind: 'batch';
  board: string;
  entries: BatchInput[];
  context: WriteContext;
}

/** A user's like of an item, counted once while it is inside any window. */
export interface LikeCommand {
  kind: 'like';
  board: string;
  item: string;
  userId: string;
  atSec?: number;
  /** The segments the like counts in (absent: none). */
  segments?: string[];
  context: WriteContext;
}

/** A like taken back: never refused for growth, it creates nothing. */
export interface UnlikeCommand {
  kind: 'unlike';
  board: string;
  item: string;
  userId: string;
  context: WriteContext;
}

/** A like or its take-back: one kind of write, answered LikeWritten. */
export type LikeChange = LikeCommand | UnlikeCommand;

/** A write of one item on its shard: an increment, a score, a like or an unlike. */
export type ItemCommand = IncrementCommand | ScoreCommand | LikeChange;

export type WriteCommand = ItemCommand | BatchCommand;

/** What an item write answers: each window's new standing. */
export interface ItemWritten {
  board: string;
  item: string;
  windows: Record<string, WindowStanding>;
  /**
   * True when expired data is left to subtract, the ranks off by it: a slot larger than one chunk, or
   * another shard's past the WRITE_RANK_SHARD_DRAINS a write drains (counted as it stands).
   */
  draining: boolean;
}

export type LikeWritten = ItemWritten & { userId: string; counted: boolean };

export type BatchWritten = { board: string; count: number; draining: boolean };

/** One run of a command on its board: the config as cached, its time, the key its idempotency strategy hands the script. */
export interface WriteAttempt {
  board: PreparedBoard;
  nowMs: number;
  idem?: IdemRequest;
}

/** An attempt as a kind of write runs it: `replaysInScript` when its script answers a repeat before its checks. */
export interface GuardedAttempt extends WriteAttempt {
  replaysInScript: boolean;
}

/**
 * One kind of write (increment, batch, like/unlike) as the pipeline runs it: how many script calls it
 * plans (each may store its answer), and its own steps (check the command, reserve growth, run on the
 * shard(s), settle, build the answer).
 */
export interface WriteKind<C extends WriteCommand, T> {
  calls(command: C, board: PreparedBoard): number;
  apply(command: C, attempt: GuardedAttempt): Promise<WriteAnswer<T>>;
}

/** An increment request's body as the route takes it: a batch entry's amount fields, an absent amount DEFAULT_AMOUNT. */
export type IncrementBody = Omit<BatchInput, 'item' | 'score' | 'tiebreak'>;

/** How a request was sent: its Idempotency-Key (already scoped to its client) and its client's budget. */
export interface SentWith {
  idemKey?: string;
  budget?: ClientBudget;
}

/**
 * Builds the commands: stamps the arrival time and fingerprints the request. A fingerprint holds the
 * operation and the values that decide its effect; `at` and `createdAt` count only when sent, so
 * requests without them keep the fingerprint they always had (stored answers stay valid).
 */
@Injectable()
export class WriteCommands {
  constructor(private readonly clock: Clock) {}

  /** Its fields named one by one, not spread: every increment passes here. */
  increment(fields: Omit<IncrementCommand, 'kind' | 'context'>, sent: SentWith = {}): IncrementCommand {
    const { board, item, amount, atSec, createdAtSec, segments, actor, group, metric } = fields;
    const context = this.context(sent, incrementFingerprint, fields);
    return { kind: 'increment', board, item, amount, atSec, createdAtSec, segments, actor, group, metric, context };
  }

  /**
   * An increment from its route's item and body, built without a copy of its fields first (increment's
   * argument): every increment request passes here. The fingerprint, of the command itself, only when keyed.
   */
  incrementOf(board: string, item: string, body: IncrementBody, sent: SentWith): IncrementCommand {
    const context: WriteContext = { nowMs: this.clock.nowMs(), idem: undefined, budget: sent.budget };
    const command: IncrementCommand = {
      kind: 'increment',
      board,
      item,
      amount: body.amount ?? DEFAULT_AMOUNT,
      atSec: body.at,
      createdAtSec: body.createdAt,
      segments: body.segments,
      actor: body.actor,
      group: body.group,
      metric: body.metric,
      context,
    };
    if (sent.idemKey !== undefined) context.idem = idemRequest(sent.idemKey, incrementFingerprint(command));
    return command;
  }

  batch(fields: Omit<BatchCommand, 'kind' | 'context'>, sent: SentWith = {}): BatchCommand {
    return { kind: 'batch', ...fields, context: this.context(sent, batchFingerprint, fields) };
  }

  score(fields: Omit<ScoreCommand, 'kind' | 'context'>, sent: SentWith = {}): ScoreCommand {
    return { kind: 'score', ...fields, context: this.context(sent, scoreFingerprint, fields) };
  }

  like(fields: Omit<LikeCommand, 'kind' | 'context'>, sent: SentWith = {}): LikeCommand {
    return { kind: 'like', ...fields, context: this.context(sent, likeFingerprint, fields) };
  }

  unlike(fields: Omit<UnlikeCommand, 'kind' | 'context'>, sent: SentWith = {}): UnlikeCommand {
    return { kind: 'unlike', ...fields, context: this.context(sent, unlikeFingerprint, fields) };
  }

  /** The fingerprint is built only for a keyed request: a plain write would build its arrays for nothing. */
  private context<F>(sent: SentWith, fingerprint: (fields: F) => unknown[], fields: F): WriteContext {
    const idem = sent.idemKey === undefined ? undefined : idemRequest(sent.idemKey, fingerprint(fields));
    return { nowMs: this.clock.nowMs(), idem, budget: sent.budget };
  }
}

function scoreFingerprint({ board, item, score, atSec, tiebreak }: Omit<ScoreCommand, 'kind' | 'context'>): unknown[] {
  return ['score', board, item, score, ...timeOf(atSec), ...tiebreakOf(tiebreak)];
}

function likeFingerprint({ board, item, userId, atSec, segments }: Omit<LikeCommand, 'kind' | 'context'>): unknown[] {
  return ['like', board, item, userId, ...timeOf(atSec), ...segmentsOf(segments)];
}

function unlikeFingerprint({ board, item, userId }: Omit<UnlikeCommand, 'kind' | 'context'>): unknown[] {
  return ['unlike', board, item, userId];
}

/**
 * An increment's fingerprint: `at`, `createdAt` and `segments` are part of it only when sent, so
 * requests without them keep the fingerprint they always had.
 */
function incrementFingerprint(fields: Omit<IncrementCommand, 'kind' | 'context'>): unknown[] {
  const { board, item, amount, atSec, createdAtSec, segments, actor, group, metric } = fields;
  return [
    'increment',
    ...[board, item, amount, ...timeOf(atSec), ...createdOf(createdAtSec), ...segmentsOf(segments)],
    ...actorOf(actor),
    ...groupOf(group),
    ...metricOf(metric),
  ];
}

/** A tiebreak in a fingerprint only when sent (writes without one keep the fingerprint they always had). */
function tiebreakOf(tiebreak: number | undefined): unknown[] {
  return tiebreak === undefined ? [] : ['tiebreak', tiebreak];
}

/**
 * A batch's fingerprint: each entry's item and amount, its score, `at`, `createdAt` and segments only
 * when sent (batches without them keep the fingerprint they always had).
 */
function batchFingerprint({ board, entries }: Omit<BatchCommand, 'kind' | 'context'>): unknown[] {
  return [
    'increments',
    board,
    entries.map((e) => [
      e.item,
      e.amount,
      ...(e.score === undefined ? [] : ['score', e.score]),
      ...tiebreakOf(e.tiebreak),
      ...timeOf(e.at),
      ...createdOf(e.createdAt),
      ...segmentsOf(e.segments),
      ...actorOf(e.actor),
      ...groupOf(e.group),
      ...metricOf(e.metric),
    ]),
  ];
}

/** The fingerprint part of an optional group: nothing when absent. */
function groupOf(group: string | undefined): string[] {
  return group === undefined ? [] : ['group', group];
}

/** The fingerprint part of an optional metric: nothing when absent. */
function metricOf(metric: string | undefined): string[] {
  return metric === undefined ? [] : ['metric', metric];
}

/** The fingerprint part of an optional actor: nothing when absent. */
function actorOf(actor: string | undefined): string[] {
  return actor === undefined ? [] : ['actor', actor];
}
