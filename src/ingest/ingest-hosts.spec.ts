import { IngestHosts, isAllowedHostsSetting } from './ingest-hosts';
import type { SourceDeclaration } from './dto/ingest.dto';

const redis = (url?: string): SourceDeclaration => ({ kind: 'redis-stream', stream: 's', ...(url ? { url } : {}) });
const nats = (servers: string): SourceDeclaration => ({ kind: 'nats', stream: 'S', servers });

describe('IngestHosts', () => {
  const hosts = (setting = '', configured: SourceDeclaration[] = [], clusterNodes?: string) =>
    new IngestHosts({ setting, redisUrl: 'redis://cache.internal:6380/2', clusterNodes, configured });

  it('allows loopback, the service Redis (its port only) and a declaration without url', () => {
    const allowed = hosts();
    expect(allowed.refused(redis())).toBeUndefined();
    expect(allowed.refused(redis('redis://127.0.0.1:7000'))).toBeUndefined();
    expect(allowed.refused(redis('redis://[::1]:7000'))).toBeUndefined();
    expect(allowed.refused(nats('nats://localhost'))).toBeUndefined();
    expect(allowed.refused(redis('redis://cache.internal:6380'))).toBeUndefined();
    expect(allowed.refused(redis('redis://cache.internal:6379'))).toBe('cache.internal:6379');
    expect(allowed.refused(redis('rediss://user:pw@10.0.0.9'))).toBe('10.0.0.9:6379');
    expect(allowed.refused(nats('nats://127.0.0.1:4222, tls://[2001:db8::1]'))).toBe('[2001:db8::1]:4222');
  });

  it('allows the setting (host: any port; host:port; [v6]; *) and the configured sources hosts', () => {
    const allowed = hosts('Events.Example.com, 10.0.0.9:6390, [2001:db8::1]', [nats('nats://bus.internal:4333')]);
    expect(allowed.refused(nats('nats://events.example.com:9999'))).toBeUndefined();
    expect(allowed.refused(redis('redis://10.0.0.9:6390'))).toBeUndefined();
    expect(allowed.refused(redis('redis://10.0.0.9:6391'))).toBe('10.0.0.9:6391');
    expect(allowed.refused(nats('tls://[2001:db8::1]:1'))).toBeUndefined();
    expect(allowed.refused(nats('nats://bus.internal:4333'))).toBeUndefined();
    expect(allowed.refused(nats('nats://bus.internal:4334'))).toBe('bus.internal:4334');
    expect(hosts('*').refused(redis('redis://anywhere:1'))).toBeUndefined();
    expect(hosts('', [], 'node-a:7000,node-b:7001').refused(redis('redis://node-b:7001'))).toBeUndefined();
  });

  it('validates the setting', () => {
    expect(isAllowedHostsSetting('')).toBe(true);
    expect(isAllowedHostsSetting('a.b, c:1, [::1]:2, *')).toBe(true);
    expect(isAllowedHostsSetting('a b')).toBe(false);
    expect(isAllowedHostsSetting('::1')).toBe(false);
    expect(isAllowedHostsSetting('redis://a:1')).toBe(false);
  });
});
