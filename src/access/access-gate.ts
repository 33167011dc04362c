import { Injectable } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BearerToken } from '../common/bearer-token';
import { Clock } from '../common/clock';
import { declareRequestFields, routeConfigOf } from '../common/route-config';
import { COMMON_MESSAGES } from '../common/common.messages';
import { AccessSettings } from './access.settings';
import { AccessError, RateLimitedError } from '../common/errors';
import { RateLimiter } from '../common/rate-limiter';
import { AUTH_FAILURES_BURST_FACTOR, CLIENTS_BY_ADDRESS_MAX, SEEN_CREDENTIALS_MAX } from './access.limits';
import { ACCESS_MESSAGES as M } from './access.messages';
import { KeyGrant, refusalOf, RouteAccess, Scope } from './access-rules';
import { ApiKeysService } from './api-keys.service';
import { presentedKey } from '../edge/caller';
import { NetworkPrefixes, networkOf } from './client-network';
import { addRequestHook } from '../common/request-hooks';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set once the access rule of the request's route was checked (so AccessGuard does not repeat it). */
    accessChecked?: boolean;
  }
  interface FastifyContextConfig {
    /** The route's access rule (Access puts it in the route's config, for the onRequest check). */
    access?: RouteAccess;
  }
}

type KeyedRule = Extract<RouteAccess, { scope: Scope }>;

/** ADMIN_TOKEN's name among the credentials refuseFailingNetwork remembers (no key name holds a newline). */
const ADMIN_TOKEN_HOLDER = '\nADMIN_TOKEN';

/** Answers of a keyed read differ by credential: no shared cache may keep one for another client. */
const KEYED_READ_VARY = 'Authorization, X-Api-Key';

/** Marks a keyed read's answer private, adding to a Vary already set (CORS' `Origin`), never replacing it. */
function markKeyedRead(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  void reply
    .header('cache-control', 'private')
    .header('vary', vary ? `${String(vary)}, ${KEYED_READ_VARY}` : KEYED_READ_VARY);
}

/**
 * The one access check. Runs as an onRequest hook, before the body is read, so a keyed deployment
 * refuses a missing or unknown key without parsing anything; AccessGuard runs it for a route whose rule
 * the hook could not see. It admits a request or answers 401/403 with a code, and names the caller:
 * its key, else its network (CLIENT_IPV4_PREFIX, CLIENT_IPV6_PREFIX). Failed credential checks (an
 * unknown key, a wrong ADMIN_TOKEN) are counted per network: past AUTH_FAILURES_PER_SEC the network
 * is answered 429, so guessing keys costs the guesser time, except for a credential already admitted
 * from that network (refuseFailingNetwork).
 */
@Injectable()
export class AccessGate {
  private readonly adminToken?: BearerToken;
  private readonly publicReads: boolean;
  private readonly networks: NetworkPrefixes;
  private readonly clientsByAddress = new Map<string, string>();
  private readonly failures?: RateLimiter;
  /** `<client>\n<credential name>` of credentials admitted from a client network (refuseFailingNetwork). */
  private readonly seenCredentials = new Set<string>();

  constructor(
    private readonly keys: ApiKeysService,
    private readonly clock: Clock,
    config: AccessSettings,
  ) {
    if (config.ADMIN_TOKEN) this.adminToken = new BearerToken(config.ADMIN_TOKEN);
    this.publicReads = config.PUBLIC_READS;
    this.networks = { ipv4Bits: config.CLIENT_IPV4_PREFIX, ipv6Bits: config.CLIENT_IPV6_PREFIX };
    if (config.AUTH_FAILURES_PER_SEC > 0) {
      this.failures = new RateLimiter({
        perSecond: config.AUTH_FAILURES_PER_SEC,
        burst: config.AUTH_FAILURES_PER_SEC * AUTH_FAILURES_BURST_FACTOR,
        maxClients: config.RATE_LIMIT_MAX_CLIENTS,
      });
    }
  }

  /** Checks every request whose route declares its rule, before its body is read. */
  register(fastify: FastifyInstance): void {
    declareRequestFields(fastify, ['routeConfigRead', 'accessChecked', 'caller']);
    addRequestHook(fastify, (request, reply, done) => {
      const rule = routeConfigOf(request)?.access;
      if (!rule || rule.scope === 'public') return done();
      try {
        const checked = this.check(request, rule, reply);
        if (checked === true) return done();
        checked.then(() => done(), done);
      } catch (error) {
        done(error as Error);
      }
    });
  }

  /**
   * The client a request without a key counts as (rate limits, quotas): its address's network, kept
   * per address (a pure function of it; the regexes and splits cost every request otherwise), the
   * table emptied when it holds CLIENTS_BY_ADDRESS_MAX addresses.
   */
  clientOf(request: FastifyRequest): string {
    return this.clientOfAddress(request.ip);
  }

  /** The client an address counts as (clientOf; the per-client connection cap counts peers by it). */
  clientOfAddress(address: string): string {
    let client = this.clientsByAddress.get(address);
    if (client === undefined) {
      if (this.clientsByAddress.size >= CLIENTS_BY_ADDRESS_MAX) this.clientsByAddress.clear();
      client = `ip:${networkOf(address, this.networks)}`;
      this.clientsByAddress.set(address, client);
    }
    return client;
  }

  /** Admits the request (true, or a promise while the stored keys are first read) or throws its refusal. */
  check(request: FastifyRequest, rule: KeyedRule, reply?: FastifyReply): true | Promise<void> {
    request.accessChecked = true;
    request.caller = { client: this.clientOf(request) };
    const secret = presentedKey(request);
    // ADMIN_TOKEN needs no stored key: the admin routes work while Redis is away.
    if (rule.scope === 'admin' && this.isAdminToken(secret)) {
      this.refuseFailingNetwork(request, ADMIN_TOKEN_HOLDER);
      return true;
    }
    if (!this.keys.loaded) return this.admitOnceLoaded(request, secret, rule, reply);
    this.admit(request, secret, rule, reply);
    return true;
  }

  /** admit once the stored keys are first read: apart, so check's every call does not make the context this closure holds. */
  private admitOnceLoaded(request: FastifyRequest, secret: string | undefined, rule: KeyedRule, reply?: FastifyReply) {
    return this.keys.ready().then(() => this.admit(request, secret, rule, reply));
  }

  /** A presented key is looked up first (its digest, in memory: no Redis call), for refuseFailingNetwork. */
  private admit(request: FastifyRequest, secret: string | undefined, rule: KeyedRule, reply?: FastifyReply): void {
    const grant = secret === undefined ? undefined : this.keys.find(secret);
    if (secret !== undefined) this.refuseFailingNetwork(request, grant?.name);
    if (rule.scope === 'admin') return this.admitAdmin(request, secret, grant);
    if (!this.keys.configured) return;
    if (rule.scope === 'read' && reply) markKeyedRead(reply);
    if (secret === undefined) {
      if (rule.scope === 'read' && this.publicReads) return;
      throw new AccessError('API_KEY_MISSING', M.keyMissing(rule.scope));
    }
    if (!grant) throw this.failed(request, new AccessError('API_KEY_INVALID', M.keyInvalid()));
    this.admitGrant(request, grant, rule.scope, rule.nameParam);
  }

  /**
   * Whether the request presents a valid credential (a known key, ADMIN_TOKEN), whatever its scopes:
   * only such a caller's trace context is continued. False while the stored keys were never read.
   */
  presentsValidCredential(request: FastifyRequest): boolean {
    const secret = presentedKey(request);
    if (secret === undefined) return false;
    return this.isAdminToken(secret) || (this.keys.loaded && this.keys.find(secret) !== undefined);
  }

  private isAdminToken(secret: string | undefined): boolean {
    return secret !== undefined && this.adminToken !== undefined && this.adminToken.matches(secret);
  }

  /** A key with the admin scope (ADMIN_TOKEN was checked first). */
  private admitAdmin(request: FastifyRequest, secret: string | undefined, grant: KeyGrant | undefined): void {
    if (grant) return this.admitGrant(request, grant, 'admin', undefined);
    if (!this.adminToken && !this.keys.hasAdminKey)
      throw new AccessError('ADMIN_DISABLED', COMMON_MESSAGES.adminDisabled());
    if (secret === undefined) throw new AccessError('ADMIN_TOKEN_MISSING', COMMON_MESSAGES.adminTokenMissing());
    throw this.failed(request, new AccessError('ADMIN_TOKEN_INVALID', COMMON_MESSAGES.adminTokenInvalid()));
  }

  /** Admits a known key when it has the scope (and the name is inside its prefixes): it names the caller. */
  private admitGrant(request: FastifyRequest, grant: KeyGrant, scope: Scope, nameParam: string | undefined): void {
    const name = nameParam === undefined ? undefined : paramOf(request, nameParam);
    const refusal = refusalOf(grant, scope, name);
    if (refusal?.reason === 'scope') throw new AccessError('API_KEY_SCOPE', M.scopeMissing(refusal.scope));
    if (refusal?.reason === 'prefix') throw new AccessError('API_KEY_SCOPE', M.prefixMissing(refusal.prefixes, name));
    if (refusal?.reason === 'prefixedAdmin') throw new AccessError('API_KEY_SCOPE', M.prefixedAdmin());
    request.caller = { client: `key:${grant.name}` };
  }

  /**
   * 429 for a network past its failed checks, unless the presented credential (`known`: the name of
   * the key it is, or ADMIN_TOKEN_HOLDER) was already admitted from that network: a guesser sharing
   * an address cannot lock out the keys that address rightly uses. An unknown credential, and a known
   * one first seen from the network during its lockout, get the same 429, so a guesser learns nothing.
   */
  private refuseFailingNetwork(request: FastifyRequest, known: string | undefined): void {
    if (!this.failures) return;
    const client = request.caller!.client;
    const seen = known === undefined ? undefined : `${client}\n${known}`;
    if (seen !== undefined && this.seenCredentials.has(seen)) return;
    const decision = this.failures.peek(client, this.clock.nowMs());
    if (!decision.allowed)
      throw new RateLimitedError(
        M.authFailures(this.failures.options.perSecond, decision.retryAfterSec),
        decision.retryAfterSec,
      );
    if (seen === undefined) return;
    if (this.seenCredentials.size >= SEEN_CREDENTIALS_MAX) this.seenCredentials.clear();
    this.seenCredentials.add(seen);
  }

  /** Counts a failed credential check of the request's network; answers the error to throw. */
  private failed(request: FastifyRequest, error: AccessError): AccessError {
    this.failures?.count(request.caller!.client, this.clock.nowMs());
    return error;
  }
}

function paramOf(request: FastifyRequest, name: string): string | undefined {
  const params = request.params;
  if (typeof params !== 'object' || params === null) return undefined;
  const value = (params as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}
