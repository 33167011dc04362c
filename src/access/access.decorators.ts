import { applyDecorators, SetMetadata } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiSecurity } from '@nestjs/swagger';
import { RouteAccess } from './access-rules';

/** Metadata key of a route's access rule (read by AccessGuard and RateLimitGuard). */
export const ACCESS_RULE = 'trendboard:access';

/** The OpenAPI security schemes of the document (bootstrap.ts declares them). */
export const BEARER_SCHEME = 'bearer';
export const API_KEY_SCHEME = 'apiKey';

/**
 * What a route needs: every route declares it (AccessGuard refuses a route that does not, so a new
 * route is never open by mistake). `nameParam` names the route parameter a key's name prefixes apply to.
 * On a handler the rule also goes into the Fastify route's config, where AccessGate's onRequest hook
 * reads it before the body is read.
 */
export const Access = (rule: RouteAccess) =>
  rule.scope === 'public'
    ? SetMetadata(ACCESS_RULE, rule)
    : applyDecorators(
        SetMetadata(ACCESS_RULE, rule),
        RouteConfig({ access: rule }),
        ApiSecurity(BEARER_SCHEME),
        ApiSecurity(API_KEY_SCHEME),
      );

/** Health probes, the metrics scrape: no key ever. */
export const PublicRoute = () => Access({ scope: 'public' });
