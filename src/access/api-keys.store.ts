import { Injectable } from '@nestjs/common';
import { RedisService } from '../redis/redis.service';
import { MAX_STORED_API_KEYS } from './access.limits';
import { ACCESS_SCRIPTS as S, StoredKey } from './access.scripts';

/** The only file of the access feature that talks to Redis: one hash of keys, `<prefix>apikeys`. */
@Injectable()
export class ApiKeyStore {
  private readonly hashKey: string;

  constructor(private readonly redis: RedisService) {
    this.hashKey = `${redis.prefix}apikeys`;
    redis.defineScripts(Object.values(S));
  }

  /** Every stored key: name -> stored JSON (checked by the caller). */
  all(): Promise<Record<string, string>> {
    return this.redis.timed(this.redis.client.hgetall(this.hashKey));
  }

  create(name: string, stored: StoredKey): Promise<'created' | 'exists' | 'full'> {
    return this.redis.call(S.create, { hashKey: this.hashKey, name, stored, maxKeys: MAX_STORED_API_KEYS });
  }

  /** True when the key existed. */
  async delete(name: string): Promise<boolean> {
    return (await this.redis.timed(this.redis.client.hdel(this.hashKey, name))) === 1;
  }
}
