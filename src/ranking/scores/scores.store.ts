import { Injectable } from '@nestjs/common';
import { RedisFunctions } from '../../redis/redis-functions';
import { guard } from '../core/ranking.errors';
import type { WriteCall } from '../core/script-call';
import { ScoreRecord, ScoresFunctions, ScoreWritten } from './scores.functions';

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
  record(call: WriteCall & ScoreRecord): Promise<ScoreWritten> {
    return guard(this.functions.call(this.fns.recordScore, call));
  }
}
