import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { QuotaExceededError } from '../../common/errors';
import { IdemCalls, Idempotent, IdemRequest } from '../../redis/idempotency';
import { PreparedBoard } from '../core/board';
import { guard } from '../core/ranking.errors';
import { type BoardKeys, RankingKeys } from '../core/ranking.keys';
import { boardCall } from '../core/script-call';
import type { WindowConfig } from '../core/window-math';
import type { GroupOfSetting } from '../options/group-of/group-of.option';
import {
  GROUP_HISTORY_PAGE_ROWS,
  GROUP_SETTLE_ROWS,
  MAX_GROUP_BOARDS_PER_MEMBER,
  MAX_GROUPS_PER_BOARD,
  MAX_MEMBERS_PER_BOARD,
  MAX_MEMBERS_PER_GROUP,
  MAX_RECORDED_MEMBERS_PER_BOARD,
} from '../options/group-of/group-of.limits';
import { GROUP_BOARDS_MESSAGES as GM } from './group-boards.messages';
import { GroupBoardsFunctions } from './group-boards.functions';
import { sliceStore } from '../core/slice-store';
import { ascendingScores } from '../options/registry';
import { batchOf, batchSize, clearsOf, mergedScore, ShardRows } from './sharded-settle';
import { knownBoundaries, listingPages, mergedGroups, type ShardParts } from './group-history';
import type { ListingPart, PartEntry, ShardStep } from './group-boards.functions';

/** A membership change: `item` of the member board joins `group` of the group board (null: leaves its group). */
export interface MembershipChange {
  member: PreparedBoard;
  groupBoard: string;
  setting: GroupOfSetting;
  /** The member window (the call crosses its boundary first). */
  window: WindowConfig;
  item: string;
  group: string | null;
  nowMs: number;
  idem?: IdemRequest;
}

/** A group board's settling before a read, on its member board's shard. */
export interface GroupSettle {
  member: PreparedBoard;
  window: WindowConfig;
  groupBoard: string;
  setting: GroupOfSetting;
  nowMs: number;
}

/**
 * The limits a membership is checked against on its item's shard, where the counts live: on a sharded
 * member board each shard takes at most twice its even share of the members (items spread unevenly,
 * so an even share would refuse joins well before the limit), so the whole holds at most twice the
 * limits' members; the groups are counted per shard (the scores on shard 0 list at most shards x
 * MAX_GROUPS_PER_BOARD).
 */
function limitsOf(shards: number) {
  const share = (limit: number) => Math.min(limit, Math.ceil((2 * limit) / shards));
  return {
    boards: MAX_GROUP_BOARDS_PER_MEMBER,
    groups: MAX_GROUPS_PER_BOARD,
    perGroup: share(MAX_MEMBERS_PER_GROUP),
    members: share(MAX_MEMBERS_PER_BOARD),
    recordedMembers: MAX_RECORDED_MEMBERS_PER_BOARD,
  };
}

/** The rule groups are scored by ("<top> <decay>"), kept beside the scores: a changed one marks every group dirty (group_of_lib). */
function ruleOf(setting: GroupOfSetting): string {
  return `${setting.top} ${setting.decay}`;
}

/** A refusal of a membership beyond a limit (`TB_QUOTA <kind> <held>`), as the 429 naming it. */
function quotaOf(groupBoard: string) {
  return (error: unknown) => {
    const refusal = /^TB_QUOTA (?<kind>groupBoards|groups|groupSize|groupMembers) (?<held>\d+)/.exec(
      error instanceof Error ? error.message : '',
    )?.groups;
    if (!refusal) throw error;
    throw new QuotaExceededError(GM.full(groupBoard, refusal.kind, Number(refusal.held)), 60);
  };
}

/** The calls of a merge's part reads. */
function sumOf(read: Array<{ calls: number }>): number {
  return read.reduce((sum, shard) => sum + shard.calls, 0);
}

/** Memberships (one call) and settling (one bounded call), both on the member board's one shard. */
@Injectable()
export class GroupBoardsStore extends sliceStore(GroupBoardsFunctions) {
  private readonly idemCalls = IdemCalls.for(this.settings.idempotencyRetentionMs, this.redis.client);
  private readonly keys = new RankingKeys(this.redis.prefix);
  private readonly logger = new Logger('GroupBoards');
  /**
   * Member rows one call of the history merge reads or stores (GROUP_HISTORY_PAGE_ROWS): a property
   * spec sets fewer, so its few members span several pages of each part and of each record.
   */
  historyPageRows = GROUP_HISTORY_PAGE_ROWS;

  /** Sets the item's group (a repeat of an Idempotency-Key: the first answer, applied once). */
  async setMember(change: MembershipChange): Promise<Idempotent<{ previous: string | null }>> {
    const { member, item, group, nowMs, idem } = change;
    const pending = this.functions.call(this.fns.groupMemberSet, {
      ...boardCall(member, member.shardOf(item), nowMs, this.budgetFields),
      groupBoard: change.groupBoard,
      window: change.window,
      item,
      group: group ?? '',
      rule: ruleOf(change.setting),
      limits: limitsOf(member.shards.length),
      idem: this.idemCalls.of(idem),
    });
    const written = await guard(pending).catch(quotaOf(change.groupBoard));
    await this.indexDue(change.groupBoard, nowMs);
    return written;
  }

  /**
   * A membership changed: the group board is due at once (ZADD LT never delays it), so the scheduler
   * settles its dirty groups before the next read has to. A failure only waits for its next visit.
   */
  private async indexDue(groupBoard: string, nowMs: number): Promise<void> {
    await this.redis
      .timed(this.redis.client.zadd(this.keys.dueIndex(), 'LT', nowMs, groupBoard))
      .catch((error: unknown) => this.logger.warn(`due index not updated for "${groupBoard}": ${String(error)}`));
  }

  /** One settling call (a round of calls on a sharded member board): true while expired slots or dirty groups remain. */
  async settle(settle: GroupSettle): Promise<{ draining: boolean; calls: number }> {
    if (settle.member.sharded) return this.settleRound(settle);
    const { member, window, setting, nowMs } = settle;
    const answer = await guard(
      this.functions.call(this.fns.groupSettle, {
        ...boardCall(member, member.shards[0], nowMs, this.budgetFields),
        window,
        groupBoard: settle.groupBoard,
        top: setting.top,
        decay: setting.decay,
        rows: GROUP_SETTLE_ROWS,
      }),
    );
    return { draining: answer.draining, calls: 1 };
  }

  /**
   * One round over a sharded member board (sharded-settle.ts): draining while expired slots or dirty
   * groups may remain; its calls (the shards' once when none is dirty, else 3 x shards + 2).
   */
  private async settleRound(settle: GroupSettle): Promise<{ draining: boolean; calls: number }> {
    const { member, setting } = settle;
    const shards = member.shards.length;
    const size = batchSize(setting.top, shards, GROUP_SETTLE_ROWS);
    const named = await this.stepShards(settle, () => ({ clears: [], fetches: [], most: size }));
    if (named.some((step) => step.draining)) return { draining: true, calls: shards };
    const kept = named.some((step) => step.parts > 0) ? await this.keepListings(settle) : 0;
    const batch = batchOf(
      named.map((step) => step.dirty),
      size,
    );
    if (batch.length === 0) return { draining: false, calls: shards + kept };
    return { draining: await this.settleBatch(settle, batch), calls: 3 * shards + 2 + kept };
  }

  /**
   * The listings the shards' parts make known, merged and kept on shard 0, then every shard's parts
   * up to the newest read dropped (group-history.ts): the step round crossed every shard to now, so no
   * shard records a part of those boundaries later. Every call a bounded piece (GROUP_HISTORY_PAGE_ROWS):
   * a merge cut short (a crash, a later merge of the boundary) drops no part, so the next round
   * merges its boundaries again from the start (mergeListing). Answers the calls.
   */
  private async keepListings(settle: GroupSettle): Promise<number> {
    const { member, window, setting } = settle;
    const on = { groupBoard: settle.groupBoard, window: setting.window };
    const listed = await Promise.all(
      member.shards.map((shard, i) => {
        // Shard 0 names the group board where its listings will be kept (retractions find them there).
        const boards = i === 0 && window.snapshots ? MAX_GROUP_BOARDS_PER_MEMBER : 0;
        return guard(this.functions.call(this.fns.groupHistoryParts, { ...on, shard: shard.keys, upto: null, boards }));
      }),
    );
    const boundaries = window.snapshots ? knownBoundaries(listed, window.calendar !== undefined) : [];
    let calls = member.shards.length;
    for (const atSec of boundaries) {
      const merged = await this.mergeListing(settle, listed, { atSec, noted: listed[0].noted });
      calls += merged.calls;
      if (!merged.done) return calls;
    }
    const upto = Math.max(...listed.flatMap((shard) => shard.parts.map((part) => part.atSec)));
    if (upto === -Infinity) return calls;
    await Promise.all(
      member.shards.map((shard) =>
        guard(this.functions.call(this.fns.groupHistoryParts, { ...on, shard: shard.keys, upto })),
      ),
    );
    return calls + member.shards.length;
  }

  /**
   * The listing at `atSec` merged from the shards' parts (read a page at a time) and kept on shard 0,
   * its record written a page at a time under one token (group_history_store: a merge begun again
   * starts it afresh, so no group counts twice). Not done: a part went or a later merge took the record.
   */
  private async mergeListing(
    settle: GroupSettle,
    listed: ShardParts<PartEntry>[],
    at: { atSec: number; noted: number },
  ) {
    const { member, window, setting, nowMs } = settle;
    const { atSec, noted } = at;
    const read = await Promise.all(member.shards.map((shard, i) => this.partAt(settle, shard.keys, listed[i], atSec)));
    if (read.some((shard) => shard.part === null)) return { done: false, calls: sumOf(read) };
    const shards = read.map((shard, i) => ({ parts: shard.part ? [shard.part] : [], since: listed[i].since }));
    const kept = { keep: window.snapshots?.keep ?? 0, top: window.snapshots?.top ?? 0 };
    const ascending = ascendingScores(member.config);
    const groups = mergedGroups(shards, atSec, { top: setting.top, decay: setting.decay, ascending, listed: kept.top });
    const pages = listingPages(groups, ascending, this.historyPageRows);
    const call = {
      ...{ groupBoard: settle.groupBoard, window: setting.window, shard: member.shards[0].keys, nowMs, atSec },
      ...{ ...kept, boards: MAX_GROUP_BOARDS_PER_MEMBER, rule: ruleOf(setting), token: randomUUID(), noted },
      ...{
        room: Math.floor(MAX_RECORDED_MEMBERS_PER_BOARD / (kept.keep + 2)),
        intervalSec: window.calendar ? 0 : window.intervalSec,
      },
    };
    for (const [n, page] of pages.entries()) {
      const listing = n === pages.length - 1 ? groups.map(([group, score]): [string, string] => [group, score]) : null;
      const stored = await guard(
        this.functions.call(this.fns.groupHistoryStore, { ...call, first: n === 0, groups: page, listing }),
      );
      if (stored.state !== 'ok') return { done: stored.state === 'kept', calls: sumOf(read) + n + 1 };
    }
    return { done: true, calls: sumOf(read) + pages.length };
  }

  /** A shard's part at `atSec` read a page of groups a call (undefined: it has none; null: it went meanwhile). */
  private async partAt(settle: GroupSettle, shard: BoardKeys, listed: ShardParts<PartEntry>, atSec: number) {
    const entry = listed.parts.find((part) => part.atSec === atSec);
    if (!entry || entry.groups === 0) return { part: undefined, calls: 0 };
    const on = { groupBoard: settle.groupBoard, window: settle.setting.window, shard, upto: null };
    const groups: ListingPart['groups'] = [];
    let calls = 0;
    for (let after = 0; after >= 0; calls++) {
      const page = { atSec, after, rows: this.historyPageRows };
      const answer = await guard(this.functions.call(this.fns.groupHistoryParts, { ...on, page }));
      groups.push(...answer.groups);
      after = answer.last;
    }
    const part = groups.length === entry.groups ? { atSec, over: entry.over, groups, quiet: entry.quiet } : null;
    return { part, calls };
  }

  /** Claims, reads, merges, stores and clears one batch of dirty groups: true while some may remain. */
  private async settleBatch(settle: GroupSettle, batch: string[]): Promise<boolean> {
    const { setting } = settle;
    const { token } = await this.scores(settle, { token: '', groups: batch, scores: [] });
    const fetched = await this.stepShards(settle, () => ({ clears: [], fetches: batch, most: 0 }));
    if (fetched.some((step) => step.draining)) return true;
    const rows: ShardRows[] = fetched.map((step) => step.rows);
    const rule = { top: setting.top, decay: setting.decay, ascending: ascendingScores(settle.member.config) };
    const scores = batch.flatMap((group, i) => [group, mergedScore(rows, i, rule)]);
    const { stored } = await this.scores(settle, { token, groups: [], scores });
    const clears = clearsOf(batch, stored, rows);
    const after = await this.stepShards(settle, (shard) => ({ clears: clears[shard], fetches: [], most: 1 }));
    return after.some((step) => step.draining || step.dirty.length > 0);
  }

  /** One group_shard_step call on every shard of the member board, in parallel. */
  private stepShards(settle: GroupSettle, stepOf: (shard: number) => Omit<ShardStep, 'rule' | 'top'>) {
    const { member, window, setting, nowMs } = settle;
    return Promise.all(
      member.shards.map((shard, index) =>
        guard(
          this.functions.call(this.fns.groupShardStep, {
            ...boardCall(member, shard, nowMs, this.budgetFields),
            window,
            groupBoard: settle.groupBoard,
            step: { rule: ruleOf(setting), top: setting.top, ...stepOf(index) },
          }),
        ),
      ),
    );
  }

  /** A claim (token "") or a store of scores on shard 0, where the group board's scores live. */
  private scores(settle: GroupSettle, sent: { token: string; groups: string[]; scores: string[] }) {
    const { member, setting } = settle;
    return guard(
      this.functions.call(this.fns.groupScoresStore, {
        shard: member.shards[0].keys,
        groupBoard: settle.groupBoard,
        window: setting.window,
        rule: ruleOf(setting),
        ...sent,
      }),
    );
  }
}
