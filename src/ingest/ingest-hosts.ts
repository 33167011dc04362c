import type { SourceDeclaration } from './dto/ingest.dto';

/** A host a source may connect to: any port of it (`port` undefined), or that port only. */
interface AllowedHost {
  host: string;
  port?: number;
}

/** Hosts allowed whatever the setting: this machine (a source on loopback reaches nothing beyond it). */
const LOOPBACK = ['localhost', '127.0.0.1', '::1'];
const DEFAULT_PORT: Record<string, number> = { 'redis:': 6379, 'rediss:': 6379, 'nats:': 4222, 'tls:': 4222 };

/**
 * Where a declared source may connect (issue #45: an admin token must not make the service reach any
 * host and port): loopback, the service's own Redis (REDIS_URL or REDIS_CLUSTER_NODES), the hosts of
 * the sources the configuration declares (INGEST_SOURCES: the operator's own), and INGEST_ALLOWED_HOSTS
 * (`host` for any port of it, `host:port`, `[v6]` or `[v6]:port`; `*` allows any). Hosts are compared as
 * written (lower case), never resolved: allow the names sources use.
 */
export class IngestHosts {
  private readonly allowed: AllowedHost[];
  private readonly any: boolean;

  constructor(options: { setting: string; redisUrl: string; clusterNodes?: string; configured: SourceDeclaration[] }) {
    const entries = options.setting
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== '');
    this.any = entries.includes('*');
    const own = options.clusterNodes ? options.clusterNodes.split(',') : [hostPortOf(options.redisUrl)];
    this.allowed = [
      ...LOOPBACK.map((host) => ({ host })),
      ...[...own, ...entries.filter((entry) => entry !== '*')].flatMap((entry) => allowedOf(entry) ?? []),
      ...options.configured.flatMap((declaration) => endpointsOf(declaration)),
    ];
  }

  /** The first endpoint of the declaration no rule allows, as `host:port`; undefined when all are allowed. */
  refused(declaration: SourceDeclaration): string | undefined {
    if (this.any) return undefined;
    for (const endpoint of endpointsOf(declaration)) {
      const ok = this.allowed.some(
        (rule) => rule.host === endpoint.host && (rule.port === undefined || rule.port === endpoint.port),
      );
      if (!ok)
        return endpoint.host.includes(':')
          ? `[${endpoint.host}]:${endpoint.port}`
          : `${endpoint.host}:${endpoint.port}`;
    }
    return undefined;
  }
}

/** A valid INGEST_ALLOWED_HOSTS: comma-separated `*`, `host`, `host:port`, `[v6]` or `[v6]:port`. */
export function isAllowedHostsSetting(value: string): boolean {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .every((entry) => entry === '' || entry === '*' || allowedOf(entry) !== undefined);
}

/** The endpoints a declaration connects to: its `url` (none: the service's own Redis) or its NATS `servers`. */
function endpointsOf(declaration: SourceDeclaration): Array<{ host: string; port: number }> {
  const urls = declaration.kind === 'nats' ? declaration.servers.split(',') : declaration.url ? [declaration.url] : [];
  return urls.map((url) => {
    const parsed = parseUrl(url.trim());
    // Unparsable: refused by name (the declaration's own checks let only URL-looking strings through).
    if (!parsed) return { host: url, port: 0 };
    return { host: unbracket(parsed.hostname), port: Number(parsed.port) || (DEFAULT_PORT[parsed.protocol] ?? 0) };
  });
}

function allowedOf(entry: string): AllowedHost | undefined {
  // IPv6 in brackets ([::1], [::1]:6379): a bare one's colons would read as a port.
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+))(?::(\d{1,5}))?$/.exec(entry);
  if (!match) return undefined;
  const host = (match[1] ?? match[2]).toLowerCase();
  return match[3] === undefined ? { host } : { host, port: Number(match[3]) };
}

/** `host:port` of the service's REDIS_URL (its port defaulted). */
function hostPortOf(url: string): string {
  const parsed = parseUrl(url);
  if (!parsed) return url;
  const host = parsed.hostname;
  return `${host}:${Number(parsed.port) || 6379}`;
}

function parseUrl(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

function unbracket(host: string): string {
  return (host.startsWith('[') ? host.slice(1, -1) : host).toLowerCase();
}
