import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SystemClock } from '../../src/common/clock';
import { ADMIN_TOKEN } from '../../harness/app';
import { useSingleNodeApp } from '../support/e2e';

const ROOT = join(__dirname, '../..');
/** Scratch space inside the project, so the generated program resolves the project's packages. */
const WORK = join(ROOT, 'node_modules/.cache/trendboard-typed-client');
const BIN = join(ROOT, 'node_modules/.bin');

/**
 * The README's walk-through, written against a client generated from the served OpenAPI document
 * (openapi-typescript + openapi-fetch). It must type-check under `strict` (a path, parameter or body
 * the document gets wrong does not compile) and then run against the service.
 */
const WALK_THROUGH = `
import createClient from 'openapi-fetch';
import type { paths } from './api';

const client = createClient<paths>({ baseUrl: process.env.TB });
const admin = { Authorization: \`Bearer \${process.env.ADMIN_TOKEN}\` };

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(what);
}

async function main(): Promise<void> {
  const board = { path: { board: 'posts' } };
  const made = await client.PUT('/admin/boards/{board}', {
    params: board,
    headers: admin,
    body: { windows: [{ period: '1h', interval: '5m' }, { name: 'day', period: '24h', interval: '1h' }] },
  });
  check(made.response.status === 201 && made.data?.windows.length === 2, 'board created');

  await client.POST('/boards/{board}/items/{item}/increment', { params: { path: { board: 'posts', item: 'post-1' } }, body: {} });
  const five = await client.POST('/boards/{board}/items/{item}/increment', {
    params: { path: { board: 'posts', item: 'post-2' } },
    body: { amount: 5 },
    headers: { 'Idempotency-Key': 'walk-1' },
  });
  const standing: { score: number; rank: number | null } | undefined = five.data?.windows['1h'];
  check(standing?.score === 5 && standing.rank === 1, 'post-2 leads the hour');

  const batch = await client.POST('/boards/{board}/increments', {
    params: board,
    body: { items: [{ item: 'post-3', amount: 3 }, { item: 'post-1' }] },
  });
  check(batch.data?.count === 2, 'batch applied');

  const like = await client.POST('/boards/{board}/items/{item}/likes', {
    params: { path: { board: 'posts', item: 'post-3' } },
    body: { userId: 'ann' },
  });
  check(like.data?.counted === true, 'like counted');
  const unlike = await client.DELETE('/boards/{board}/items/{item}/likes/{userId}', {
    params: { path: { board: 'posts', item: 'post-3', userId: 'ann' } },
  });
  check(unlike.data?.counted === true, 'like taken back');

  const top = await client.GET('/boards/{board}/top', { params: { ...board, query: { window: 'day', limit: 10 } } });
  const order: string[] | undefined = top.data?.items.map((row) => row.item);
  check(JSON.stringify(order) === JSON.stringify(['post-2', 'post-3', 'post-1']), \`top is \${JSON.stringify(order)}\`);

  const item = await client.GET('/boards/{board}/items/{item}', {
    params: { path: { board: 'posts', item: 'post-3' }, query: { window: '1h' } },
  });
  check(item.data?.rank === 2 && item.data.percentile === 50, 'post-3 is second');
  const around = await client.GET('/boards/{board}/items/{item}/around', {
    params: { path: { board: 'posts', item: 'post-3' }, query: { radius: 2 } },
  });
  check(around.data?.items.length === 3, 'post-3 with its neighbours');

  const refused = await client.POST('/boards/{board}/items/{item}/increment', {
    params: { path: { board: 'nope', item: 'x' } },
    body: {},
  });
  check(refused.response.status === 404 && refused.error?.code === 'BOARD_NOT_FOUND', 'an unknown board is a typed 404');

  const gone = await client.DELETE('/admin/boards/{board}', { params: board, headers: admin });
  check(gone.response.status === 204, 'board deleted');
}

main().then(
  () => console.log('walk-through done'),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
`;

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
  return new Promise<{ code: number; output: string }>((resolve) =>
    execFile(command, args, { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
    ),
  );
}

describe('a client generated from the OpenAPI document', () => {
  const e2e = useSingleNodeApp({ clock: new SystemClock() });
  let base: string;

  beforeAll(async () => {
    base = await e2e.app().getUrl();
    mkdirSync(WORK, { recursive: true });
  });

  it('type-checks the walk-through against the generated types and runs it against the service', async () => {
    const document = await e2e.app().getHttpAdapter().getInstance().inject({ method: 'GET', url: '/docs-json' });
    writeFileSync(join(WORK, 'openapi.json'), document.body);
    writeFileSync(join(WORK, 'walk.ts'), WALK_THROUGH);
    // Defaults make a field required in generated types unless told otherwise; a request may omit them.
    const generated = await run(join(BIN, 'openapi-typescript'), [
      join(WORK, 'openapi.json'),
      '-o',
      join(WORK, 'api.ts'),
      '--default-non-nullable',
      'false',
    ]);
    expect(generated).toMatchObject({ code: 0 });
    // Compiled, not run by ts-node: Node refuses to strip types of files under node_modules.
    const typed = await run(join(BIN, 'tsc'), [
      '--outDir',
      join(WORK, 'out'),
      '--strict',
      '--esModuleInterop',
      '--skipLibCheck',
      '--module',
      'commonjs',
      '--moduleResolution',
      'node10',
      '--target',
      'ES2022',
      '--types',
      'node',
      join(WORK, 'walk.ts'),
    ]);
    expect(typed).toEqual({ code: 0, output: '' });
    const walked = await run(process.execPath, [join(WORK, 'out', 'walk.js')], {
      ...process.env,
      TB: base,
      ADMIN_TOKEN,
    });
    expect(walked).toEqual({ code: 0, output: 'walk-through done\n' });
  });
});
