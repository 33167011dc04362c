import { Injectable } from '@nestjs/common';
import { RedisService } from '../redis/redis.service';
import { RedisFunctions } from '../redis/redis-functions';
import { MAX_STORED_API_KEYS } from './access.limits';
import { ACCESS, StoredKey } from './access.functions';

/** What the key store holds: the stored keys, and whether this deployment has ever had any. */
export interface StoredKeys {
  keys: Record<string, string>;
  /** The marker set with the first stored key: it outlives a DEL of the hash (not a FLUSHALL). */
  marked: boolean;
}

/**
 * The only file of the access feature that talks to Redis: one hash of keys, `<prefix>apikeys`, and
 * the marker `{<prefix>apikeys}:keyed` (same Cluster slot: the hash's name is the marker's tag).
 */
@Injectable()
export class ApiKeyStore {
  private readonly hashKey: string;
  private readonly markerKey: string;

  constructor(
    private readonly redis: RedisService,
    private readonly functions: RedisFunctions,
  ) {
    this.hashKey = `${redis.prefix}apikeys`;
    this.markerKey = `{${this.hashKey}}:keyed`;
    functions.define([ACCESS.library]);
  }

  /** Every stored key: name -> stored JSON (checked by the caller). */
  async all(): Promise<StoredKeys> {
    const [keys, marker] = await Promise.all([
      this.redis.timed(this.redis.client.hgetall(this.hashKey)),
      this.redis.timed(this.redis.client.exists(this.markerKey)),
    ]);
    return { keys, marked: marker === 1 };
  }

  /** Sets the marker again (after Redis lost it while this process knew keys existed). */
  async mark(): Promise<void> {
    await this.redis.timed(this.redis.client.set(this.markerKey, '1'));
  }

  create(name: string, stored: StoredKey): Promise<'created' | 'exists' | 'full'> {
    return this.functions.call(ACCESS.functions.create, {
      hashKey: this.hashKey,
      markerKey: this.markerKey,
      name,
      stored,
      maxKeys: MAX_STORED_API_KEYS,
    });
  }

  /** True when the key existed. */
  async delete(name: string): Promise<boolean> {
    return (await this.redis.timed(this.redis.client.hdel(this.hashKey, name))) === 1;
  }
}
