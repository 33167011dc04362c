import { Injectable } from '@nestjs/common';
import type { Idempotent } from '../../redis/idempotency';
import { RedisFunctions } from '../../redis/redis-functions';
import { guard } from '../core/ranking.errors';
import type { StandingsReply } from '../core/ranking.types';
import type { WriteCall } from '../core/script-call';
import { ScoreRecord, ScoresFunctions } from './scores.functions';

/** The score write of max / min / last boards on its item's shard; the write pipeline (writes/) runs it. */
@Injectable()
export class ScoresStore {
  private readonly fns: ScoresFunctions['functions'];

  constructor(
    private readonly functions: RedisFunctions,
    part: ScoresFunctions,
  ) {
    this.fns = part.functions;
    functions.define([part.library]);
  }

  /** One score on one shard (record_score.lua): its standings in each window, or the script's refusal as an error. */
  record(call: WriteCall & ScoreRecord): Promise<Idempotent<StandingsReply>> {
    return guard(this.functions.call(this.fns.recordScore, call));
  }
}
