import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';
import { setApiSecurityHeaders } from './api-security-headers';
import { addRequestHook } from '../common/request-hooks';

/**
 * HTML pages: helmet's headers with a Content-Security-Policy their own assets satisfy. Scripts only
 * as files of this origin (Swagger UI loads its bundle and its init script that way; a page here must
 * not use inline scripts or handlers). Styles may be inline: Swagger UI's page has <style> blocks and
 * its React code sets style attributes. Images also from data: URIs (Swagger UI's icons). Requests
 * (Swagger's "Try it out", the dashboard's event stream) only to this origin. Never framed.
 */
const HTML_PAGE_POLICY: HelmetOptions = {
  contentSecurityPolicy: {
    // helmet's defaults would add upgrade-insecure-requests, which breaks a page served over plain HTTP.
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      baseUri: ["'self'"],
      connectSrc: ["'self'"],
      fontSrc: ["'self'", 'data:'],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      imgSrc: ["'self'", 'data:'],
      objectSrc: ["'none'"],
      scriptSrc: ["'self'"],
      scriptSrcAttr: ["'none'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
    },
  },
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' },
  // HSTS belongs to whatever terminates TLS in front of the service, which itself speaks plain HTTP.
  strictTransportSecurity: false,
};

const SLASH = 0x2f;
const QUESTION_MARK = 0x3f;

/**
 * Whether a request URL is one of `paths` or below it (`/docs`, `/docs/`, `/docs/x.css`, `/docs?x`, not
 * `/docs-json`). A loop, not `some`: every request asks, and a callback over `url` is a closure each time.
 */
export function isUnder(url: string, paths: readonly string[]): boolean {
  for (let i = 0; i < paths.length; i++) {
    const page = paths[i];
    if (!url.startsWith(page)) continue;
    const after = url.charCodeAt(page.length);
    if (url.length === page.length || after === SLASH || after === QUESTION_MARK) return true;
  }
  return false;
}

/**
 * Security headers on every answer: the HTML pages under `htmlPaths` (and their assets) get helmet's
 * full set with HTML_PAGE_POLICY, everything else API_SECURITY_HEADERS. Call once, before the app
 * is initialised, with every HTML page the app serves (/docs, the dashboard). helmet's middleware is
 * built once and run on the raw response of those pages only (as @fastify/helmet runs it): that
 * plugin would add two hooks to every request, one of them async, and a closure per request.
 */
export function securityHeaders(fastify: FastifyInstance, htmlPaths: readonly string[]): void {
  const htmlPageHeaders = helmet(HTML_PAGE_POLICY);
  addRequestHook(fastify, (request, reply, done) => {
    if (isUnder(request.url, htmlPaths))
      return htmlPageHeaders(request.raw, reply.raw, (error) => done(error instanceof Error ? error : undefined));
    setApiSecurityHeaders(reply);
    done();
  });
}
