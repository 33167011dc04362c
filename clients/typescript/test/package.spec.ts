import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import ts from 'typescript';
import { SystemClock } from '../../../src/common/clock';
import { startTestApp } from '../../../harness/app';
import { startTestRedis, TestRedis } from '../../../harness/redis';
import { GENERATED_DIR, generatedFiles } from '../scripts/generate';
import * as client from '../src';
import { listen } from './helpers';

const PACKAGE = join(__dirname, '..');
/** The token the README's example uses. */
const README_ADMIN_TOKEN = 'change-me-to-a-long-secret';

/** The README's ```ts blocks, in order: each is a file of examples/ (which tsc -p clients/typescript checks). */
const EXAMPLES = ['readme.ts', 'walk-through.ts'];
function readmeExamples(): string[] {
  const readme = readFileSync(join(PACKAGE, 'README.md'), 'utf8');
  return [...readme.matchAll(/^```ts\n([\s\S]*?)^```/gm)].map((block) => block[1]);
}

/**
 * Runs the example against the service: its imports become a require of this client, its body an
 * async function (a README may use top-level await; CommonJS may not). Answers what it logged.
 */
async function run(example: string, baseUrl: string): Promise<string[]> {
  const lines = example.split('\n');
  const imports = lines.filter((line) => line.startsWith('import '));
  const body = lines.filter((line) => !line.startsWith('import ')).join('\n');
  const source = `${imports.join('\n')}\nexport async function main(): Promise<void> {\n${body}\n}`;
  const { outputText } = ts.transpileModule(source.replaceAll('http://localhost:3000', baseUrl), {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  });
  const logged: string[] = [];
  const exports: { main?: () => Promise<void> } = {};
  const load = new Function('require', 'exports', 'console', outputText) as (...args: unknown[]) => void;
  load(
    (name: string) => {
      if (name !== '@trendboard/client') throw new Error(`the example imports ${name}`);
      return client;
    },
    exports,
    { log: (...args: unknown[]) => logged.push(args.map((arg) => JSON.stringify(arg)).join(' ')) },
  );
  await exports.main?.();
  return logged;
}

describe('the client package', () => {
  let redis: TestRedis;
  let app: NestFastifyApplication;
  let base: string;

  beforeAll(async () => {
    redis = await startTestRedis();
    app = await startTestApp(redis, new SystemClock(), { ADMIN_TOKEN: README_ADMIN_TOKEN });
    base = await listen(app);
  });
  afterAll(async () => {
    await app.close();
    await redis.stop();
  });

  it('has generated sources equal to what the served document and error table generate now', async () => {
    const served = await app.getHttpAdapter().getInstance().inject({ method: 'GET', url: '/docs-json' });
    const files = await generatedFiles(JSON.parse(served.body) as object);
    for (const [name, content] of Object.entries(files)) {
      const committed = readFileSync(join(GENERATED_DIR, name), 'utf8');
      // On a failure: run `npm run client:generate` and commit the result.
      expect([name, committed === content]).toEqual([name, true]);
    }
  });

  it('README: names every code the error table calls retryable, and no other', () => {
    const readme = readFileSync(join(PACKAGE, 'README.md'), 'utf8');
    const bullet = /\*\*What is retried:\*\*([\s\S]*?)\n- /.exec(readme)?.[1] ?? '';
    const named = [...bullet.matchAll(/`([A-Z_]+)`/g)].map((match) => match[1]);
    const retryable = Object.entries(client.ERROR_TABLE).filter(([, row]) => row.retryable);
    expect(named.sort()).toEqual(retryable.map(([code]) => code).sort());
  });

  it('README: its examples (examples/*.ts, type-checked) run against the service as their comments show', async () => {
    const examples = readmeExamples();
    expect(examples).toEqual(EXAMPLES.map((file) => readFileSync(join(PACKAGE, 'examples', file), 'utf8')));
    expect(examples[0].trim().split('\n').length).toBeLessThanOrEqual(13); // the 10-line example
    for (const example of examples) {
      const shown = [...example.matchAll(/console\.log\(.*\); \/\/ (.*)$/gm)].map((match) => match[1]);
      expect(await run(example, base)).toEqual(shown);
    }
  });
});
