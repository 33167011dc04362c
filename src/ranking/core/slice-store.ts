import { Inject, Injectable, Type } from '@nestjs/common';
import { RedisFunctions } from '../../redis/redis-functions';
import { RedisService } from '../../redis/redis.service';
import type { FunctionLibrary } from '../../redis/function-library';
import { RankingSettings } from './ranking.settings';

/** A slice's part of tb_ranking (sliceFunctions): its library and its own functions. */
interface SlicePart {
  library: FunctionLibrary;
  functions: object;
}

/**
 * The base of a slice's store: every store of the ranking wing starts the same way, with the slice's
 * part injected (`Part` is its token), its library defined on RedisFunctions (loaded once per node,
 * whichever store defines it first), its functions bound and the expiry budget of its calls read
 * from the settings. A store with more to inject declares its own constructor and passes these on.
 * Its members are public: the class is anonymous, and the Nest package's declarations cannot name a
 * protected member of an anonymous class (TS4094).
 */
export function sliceStore<P extends SlicePart>(Part: Type<P>) {
  @Injectable()
  class SliceStore {
    /** The slice's own functions (its part's `functions`). */
    readonly fns: P['functions'];
    /** Most expired-slot fields one call drains (EXPIRE_CHUNK). */
    readonly budgetFields: number;

    constructor(
      readonly redis: RedisService,
      readonly functions: RedisFunctions,
      @Inject(Part) part: P,
      readonly settings: RankingSettings,
    ) {
      this.fns = part.functions;
      this.budgetFields = settings.expireChunk;
      functions.define([part.library]);
    }

    /** Refuses (503 REDIS_BUSY) while Redis is busy: before each round of a sharded read. */
    readonly admit = (): void => this.redis.admit();
  }
  return SliceStore;
}
