import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { Clock } from '../common/clock';
import { AccessSettings } from './access.settings';
import { ConflictError, InvalidInputError, NotFoundError } from '../common/errors';
import { GENERATED_SECRET_BYTES, MAX_STORED_API_KEYS } from './access.limits';
import { ACCESS_MESSAGES as M } from './access.messages';
import {
  ConfiguredKey,
  digestOf,
  isPrefixedAdmin,
  KeyGrant,
  parseConfiguredKeys,
  Scope,
  storedGrantOf,
} from './access-rules';
import { ApiKeyStore } from './api-keys.store';

/** A key as the admin routes show it: never its secret. */
export interface KeyView {
  name: string;
  scopes: Scope[];
  prefixes: string[];
  source: 'config' | 'redis';
  createdAt?: number;
}

/**
 * Every API key this instance accepts: those of API_KEYS and those stored in Redis (made by the admin
 * routes), held in memory as digests so checking a key costs no Redis call. The stored ones are read
 * again every API_KEYS_REFRESH_MS, so a key made or revoked on another instance counts here within
 * that time (at once on the instance that made it). Until the first read succeeds, requests that need
 * a key wait for it (fail closed: a Redis that is down answers 503, never "no keys, come in").
 * Once keys existed (here, or per the store's marker), or with ACCESS_MODE=keyed, the service stays
 * keyed: a key store found empty afterwards (Redis lost it) is logged as an error once, and never
 * opens the service.
 */
@Injectable()
export class ApiKeysService implements OnApplicationBootstrap {
  private readonly logger = new Logger('ApiKeys');
  private readonly fromConfig: ConfiguredKey[];
  private grants = new Map<string, KeyGrant>();
  private loading?: Promise<void>;
  private readOnce = false;
  private warnedOpen = false;
  private readonly droppedListeners: Array<(names: string[]) => void> = [];
  /** True once this deployment is known to have had keys (or must have them): never reset. */
  private keyed: boolean;
  /** True once a stored key was read or made by this process. */
  private hadStoredKeys = false;
  private warnedLost = false;

  constructor(
    private readonly store: ApiKeyStore,
    private readonly clock: Clock,
    config: AccessSettings,
  ) {
    this.fromConfig = parseConfiguredKeys(config.API_KEYS);
    this.keyed = config.ACCESS_MODE === 'keyed' || this.fromConfig.length > 0;
    this.rebuild([]);
  }

  /** Reads the stored keys at boot, so the first request does not wait for them (a Redis that is down: later). */
  async onApplicationBootstrap(): Promise<void> {
    await this.ready().catch(() => undefined);
  }

  /** Resolves once the stored keys were read at least once (a failed read is retried by the next caller). */
  ready(): Promise<void> {
    if (this.readOnce) return Promise.resolve();
    this.loading ??= this.reload().finally(() => (this.loading = undefined));
    return this.loading;
  }

  /** Reads the stored keys again (the refresh job; the admin list). */
  async reload(): Promise<void> {
    const stored = await this.store.all();
    const keys: ConfiguredKey[] = [];
    for (const [name, value] of Object.entries(stored.keys)) {
      const key = storedGrantOf(name, value);
      if (key) keys.push(key);
      else this.logger.warn(`stored API key "${name}" is unreadable and is ignored`);
    }
    this.rebuild(keys);
    this.readOnce = true;
    if (keys.length > 0 || stored.marked) this.keyed = true;
    if (keys.length > 0) this.hadStoredKeys = true;
    else if (this.hadStoredKeys || stored.marked) await this.storeLost(stored.marked);
    if (!this.configured && !this.warnedOpen) {
      this.warnedOpen = true;
      this.logger.warn(M.writesOpen());
    }
  }

  /** True once the stored keys were read (from then on checking a key needs no Redis call). */
  get loaded(): boolean {
    return this.readOnce;
  }

  /**
   * True when read and write routes need a key (unless PUBLIC_READS, for reads): once a key exists or
   * ever existed, and always with ACCESS_MODE=keyed.
   */
  get configured(): boolean {
    return this.keyed || this.grants.size > 0;
  }

  /** The store holds no key although keys existed: say so once, and keep the marker for other instances. */
  private async storeLost(marked: boolean): Promise<void> {
    if (!this.warnedLost) {
      this.warnedLost = true;
      this.logger.error(M.keysLost());
    }
    if (!marked) await this.store.mark();
  }

  /** True when a key may use the admin routes (then they work without ADMIN_TOKEN). */
  get hasAdminKey(): boolean {
    for (const grant of this.grants.values()) if (grant.scopes.has('admin')) return true;
    return false;
  }

  /**
   * Calls `listener` with the names of keys no longer accepted here: revoked on this instance (at once)
   * or gone from the stored set at a refresh (revoked elsewhere). Live streams end with their key.
   */
  onKeysDropped(listener: (names: string[]) => void): void {
    this.droppedListeners.push(listener);
  }

  /** The key a secret belongs to. Digests are compared as map keys: timing tells nothing about the secret. */
  find(secret: string): KeyGrant | undefined {
    return this.grants.get(digestOf(secret));
  }

  /** Makes a key; its secret is answered here once and never stored. */
  async create(name: string, scopes: Scope[], prefixes: string[]): Promise<KeyView & { key: string }> {
    if (name.startsWith('config:')) throw new InvalidInputError(M.configName());
    if (isPrefixedAdmin(scopes, prefixes)) throw new InvalidInputError(M.prefixedAdmin());
    const secret = `tb_${randomBytes(GENERATED_SECRET_BYTES).toString('base64url')}`;
    const createdAtSec = Math.floor(this.clock.nowMs() / 1000);
    // Scopes arrive without repeats (the DTO refuses them).
    const stored = { digest: digestOf(secret), scopes, prefixes, createdAtSec };
    const outcome = await this.store.create(name, stored);
    if (outcome === 'exists') throw new ConflictError('API_KEY_EXISTS', M.keyExists(name));
    if (outcome === 'full') throw new ConflictError('API_KEYS_FULL', M.keysFull(MAX_STORED_API_KEYS));
    this.grants.set(stored.digest, { name, scopes: new Set(scopes), prefixes, source: 'redis', createdAtSec });
    this.keyed = true;
    this.hadStoredKeys = true;
    return { name, key: secret, scopes, prefixes, source: 'redis', createdAt: createdAtSec };
  }

  async list(): Promise<KeyView[]> {
    await this.reload();
    return [...this.grants.values()]
      .map((grant) => ({
        name: grant.name,
        scopes: [...grant.scopes],
        prefixes: [...grant.prefixes],
        source: grant.source,
        ...(grant.createdAtSec === undefined ? {} : { createdAt: grant.createdAtSec }),
      }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Revokes a stored key here at once, on other instances within API_KEYS_REFRESH_MS. */
  async delete(name: string): Promise<void> {
    if (name.startsWith('config:')) throw new InvalidInputError(M.configName());
    if (!(await this.store.delete(name))) throw new NotFoundError('API_KEY_NOT_FOUND', M.keyNotFound(name));
    const before = new Map(this.grants);
    for (const [digest, grant] of this.grants) {
      if (grant.source === 'redis' && grant.name === name) this.grants.delete(digest);
    }
    this.noteDropped(before);
  }

  private rebuild(stored: ConfiguredKey[]): void {
    const grants = new Map<string, KeyGrant>();
    for (const key of [...stored, ...this.fromConfig]) grants.set(key.digest, key.grant);
    const before = this.grants;
    this.grants = grants;
    this.noteDropped(before);
  }

  private noteDropped(before: Map<string, KeyGrant>): void {
    const names = [...before].filter(([digest]) => !this.grants.has(digest)).map(([, grant]) => grant.name);
    if (names.length > 0) for (const listener of this.droppedListeners) listener(names);
  }
}
