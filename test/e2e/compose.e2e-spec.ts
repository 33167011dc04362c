import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const read = (file: string) => readFileSync(join(__dirname, '../..', file), 'utf8');

/** The services of docker-compose.yml by name, each with its block of lines (no YAML library needed). */
function services(compose: string): Map<string, string> {
  const body = compose.slice(compose.indexOf('\nservices:\n'), compose.indexOf('\nvolumes:\n'));
  const blocks = new Map<string, string>();
  for (const part of body.split(/\n(?= {2}[\w-]+:)/).slice(1)) blocks.set(/^ {2}([\w-]+):/.exec(part)![1], part);
  return blocks;
}

/** docker-compose.yml as the README's Quick start uses it (issue #47). */
describe('docker-compose.yml', () => {
  const compose = read('docker-compose.yml');

  it('restarts every long-running service (unless stopped); the one-shot cluster-init runs once', () => {
    const policies = [...services(compose)].map(([name, block]) => [name, /\n {4}restart: (\S+)/.exec(block)?.[1]]);
    expect(policies).toEqual([
      ['redis', 'unless-stopped'],
      ['app', 'unless-stopped'],
      ['redis-node-1', 'unless-stopped'],
      ['redis-node-2', undefined], // the alias of redis-node-1's block: the same policy
      ['redis-node-3', undefined],
      ['cluster-init', undefined],
      ['app-cluster', 'unless-stopped'],
    ]);
    expect(compose).toMatch(/redis-node-2: \*cluster-node/);
  });

  it('says of API_KEYS what the README says: a bare secret is a read+write key', () => {
    expect(read('README.md')).toContain('a bare secret in API_KEYS is a read+write key');
    const refusals = compose.match(/\$\{API_KEYS:\?[^}]*\}/g) ?? [];
    expect(refusals.length).toBe(2);
    for (const refusal of refusals) expect(refusal).toContain('a secret (a read+write key), or secret:scope pairs');
    expect(compose).toContain('a bare secret is a read+write key');
  });
});
