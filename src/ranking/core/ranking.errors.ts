import { ConflictError, DomainError } from '../../common/errors';
import { growthRefusalOf } from '../../redis/refusals';
import { RANKING_MESSAGES as M } from './ranking.messages';
import { SEGMENTS_MESSAGES } from '../options/segments/segments.option';

/** A script refused a call because the board is gone or its config changed since it was cached. */
export class BoardGoneError extends Error {}
export class StaleConfigError extends Error {}
/** A write's event time (`at`) lies before every window's live span (see TB_AT_OUT_OF_SPAN in the scripts). */
export class AtOutOfSpanError extends Error {}
/**
 * A call that counts a group's items met a shard whose reset still prunes its groups maps (TB_PRUNING,
 * moderation_group_set.lua): nothing was read or written; the caller ends the prune and calls again.
 */
export class PruningError extends Error {}

/**
 * Turns the scripts' refusals (a cached config, an event time, growth) into errors the services act on.
 * A `catch` on the call's own promise, not an async wrapper: every write passes here, and a wrapper
 * would cost each one a promise more.
 */
export function guard<T>(pending: Promise<T>): Promise<T> {
  return pending.catch((error: unknown) => {
    throw refusalOf(error);
  });
}

/** A script's error as the domain error it stands for (guard's mapping, for a caller with its own `then`). */
export function refusalOf(error: unknown): unknown {
  const message = error instanceof Error ? error.message : '';
  if (message.startsWith('TB_NO_BOARD')) return new BoardGoneError(message);
  if (message.startsWith('TB_STALE_CONFIG')) return new StaleConfigError(message);
  if (message.startsWith('TB_AT_OUT_OF_SPAN')) return new AtOutOfSpanError(message);
  if (message.startsWith('TB_PRUNING')) return new PruningError(message);
  if (message.startsWith('TB_ACTOR_COUNTS_PENDING'))
    return new ConflictError('ACTOR_COUNTS_PENDING', M.actorCountsPending);
  if (message.startsWith('TB_LIKE_TAKE_BACK_PENDING'))
    return new ConflictError('LIKE_TAKE_BACK_PENDING', M.likeTakeBackPending);
  return growthRefusalOf(error) ?? segmentLimitOf(error) ?? retractedOf(error) ?? error;
}

/**
 * The 409 SEGMENT_LIMIT of a write naming new segments beyond segments.max
 * (`TB_SEGMENT_LIMIT <live> <max> <new>`, see segment_lib.lua; with ` board`, the claims of a sharded
 * board, segment_claim.lua): nothing of it was applied.
 */
export function segmentLimitOf(error: unknown): ConflictError | undefined {
  const refusal = /^TB_SEGMENT_LIMIT (\d+) (\d+) (\d+)( board)?/.exec(error instanceof Error ? error.message : '');
  if (!refusal) return undefined;
  const [live, max, wanted] = [Number(refusal[1]), Number(refusal[2]), Number(refusal[3])];
  const message = refusal[4]
    ? SEGMENTS_MESSAGES.boardSegmentLimit(live, max, wanted)
    : SEGMENTS_MESSAGES.segmentLimit(live, max, wanted);
  return new ConflictError('SEGMENT_LIMIT', message);
}

/** The 403 RETRACTED of an event whose actor or item a retraction blocks (`TB_RETRACTED <actor|item> <until ms>`, see actor_lib.lua). */
export function retractedOf(error: unknown): DomainError | undefined {
  const refusal = /^TB_RETRACTED (actor|item) (\d+)/.exec(error instanceof Error ? error.message : '');
  if (!refusal) return undefined;
  const until = new Date(Number(refusal[2])).toISOString();
  return new DomainError('RETRACTED', `${refusal[1]}: its events are refused until ${until} (a retraction blocked it)`);
}

/** A script refused the cached config: nothing was applied, a reload and retry is safe. */
export function isRefusal(error: unknown): boolean {
  return error instanceof StaleConfigError || error instanceof BoardGoneError;
}

/** A 409 SEGMENT_LIMIT (segmentLimitOf's). */
export function isSegmentLimit(error: unknown): boolean {
  return error instanceof ConflictError && error.code === 'SEGMENT_LIMIT';
}
