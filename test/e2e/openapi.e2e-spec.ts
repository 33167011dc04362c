import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useSingleNodeApp } from '../support/e2e';

interface Schema {
  $ref?: string;
  type?: string;
  properties?: Record<string, Schema>;
}
interface Operation {
  tags?: string[];
  security?: unknown[];
  parameters?: Array<{ name: string; in: string; schema?: Schema }>;
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }>; headers?: Record<string, unknown> }>;
}
interface Document {
  tags?: Array<{ name: string; description?: string }>;
  servers?: Array<{ url: string }>;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; securitySchemes: Record<string, { bearerFormat?: string }> };
}

describe('the OpenAPI document (/docs-json)', () => {
  const e2e = useSingleNodeApp();
  let document: Document;
  let dir: string;
  const operations = () =>
    Object.entries(document.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })),
    );

  beforeAll(async () => {
    document = (await e2e.http().get('/docs-json').expect(200)).body;
    dir = mkdtempSync(join(tmpdir(), 'tb-openapi-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('passes `redocly lint` (recommended rules) with no error', () => {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(document));
    const linted = spawnSync(
      join(__dirname, '../../node_modules/.bin/redocly'),
      ['lint', '--extends=recommended', '--format=json', file],
      { encoding: 'utf8', env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
    );
    const report = JSON.parse(linted.stdout) as {
      totals: { errors: number; warnings: number };
      problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }>;
    };
    const errors = report.problems.filter((problem) => problem.severity === 'error');
    expect(errors.map((e) => `${e.ruleId} ${e.location[0]?.pointer}: ${e.message}`)).toEqual([]);
    expect(report.totals.errors).toBe(0);
    // No warning either: the probes and the dashboard list the 408/431 the HTTP edge answers on any route.
    expect(report.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}`)).toEqual([]);
    expect(report.totals.warnings).toBe(0);
  });

  it('lists what the edge, the limits and Redis answer: 429 on reads, 413/415/507 on writes, 408/431 anywhere', () => {
    const answers = (path: string, method: string) => Object.keys(document.paths[path][method].responses);
    expect(answers('/boards/{board}/top', 'get')).toEqual(expect.arrayContaining(['408', '429', '431', '503']));
    for (const [path, method] of [
      ['/boards/{board}/items/{item}/increment', 'post'],
      ['/boards/{board}/increments', 'post'],
      ['/counters/{name}/increment', 'post'],
      ['/stats/{context}/{type}', 'post'],
      ['/admin/boards/{board}', 'put'],
    ]) {
      expect([path, answers(path, method)]).toEqual([path, expect.arrayContaining(['413', '415', '429', '507'])]);
    }
    expect(answers('/health/live', 'get')).toEqual(expect.arrayContaining(['408', '431']));
    expect(answers('/health/live', 'get')).not.toContain('429');
    expect(document.paths['/counters/{name}/increment'].post.responses['429']).toMatchObject({
      description: expect.stringMatching(/QUOTA_EXCEEDED.*; RATE_LIMITED/),
    });
  });

  it('lists the answer headers: X-Request-Id on every answer, Retry-After on 429/503, Idempotent-Replayed on retry-safe writes', () => {
    for (const { name, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses)) {
        const headers = Object.keys(response.headers ?? {});
        expect([name, status, headers.includes('X-Request-Id')]).toEqual([name, status, true]);
        if (status === '429' || status === '503')
          expect([name, status, headers.includes('Retry-After')]).toEqual([name, status, true]);
      }
    }
    const increment = document.paths['/boards/{board}/items/{item}/increment'].post.responses;
    expect(Object.keys(increment['200'].headers ?? {})).toContain('Idempotent-Replayed');
    expect(Object.keys(document.paths['/boards/{board}/top'].get.responses['200'].headers ?? {})).not.toContain(
      'Idempotent-Replayed',
    );
  });

  it('lists its tags, each described, and files every operation under one of them (issue #47: tags were [])', () => {
    const used = new Set(operations().flatMap(({ op }) => op.tags ?? []));
    for (const { name, op } of operations()) expect([name, op.tags?.length]).toEqual([name, 1]);
    expect(new Set(document.tags?.map((tag) => tag.name))).toEqual(used);
    for (const tag of document.tags ?? []) expect(tag.description).toMatch(/\w{3}/);
  });

  it('says who may call each route: public routes security: [], the bearer scheme not a JWT, a server', () => {
    for (const { name, op } of operations()) expect([name, Array.isArray(op.security)]).toEqual([name, true]);
    expect(document.paths['/health/live'].get.security).toEqual([]);
    expect(document.paths['/boards/{board}/top'].get.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
    expect(document.components.securitySchemes.bearer.bearerFormat).toBeUndefined();
    expect(document.servers?.length).toBeGreaterThan(0);
  });

  it('gives every error answer the one error body, whose message is always a string', () => {
    for (const { name, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        expect([name, status, response.content?.['application/json']?.schema?.$ref]).toEqual([
          name,
          status,
          '#/components/schemas/ErrorBodyDto',
        ]);
      }
    }
    const body = document.components.schemas.ErrorBodyDto.properties!;
    expect(body.message.type).toBe('string');
    expect(body.statusCode.type).toBe('integer');
  });

  it('types counts, ranks, times and bounds as integers', () => {
    const top = document.paths['/boards/{board}/top'].get.parameters!;
    for (const name of ['limit', 'offset']) expect(top.find((p) => p.name === name)?.schema?.type).toBe('integer');
    const around = document.paths['/boards/{board}/items/{item}/around'].get.parameters!;
    expect(around.find((p) => p.name === 'radius')?.schema?.type).toBe('integer');
    const local = document.paths['/admin/metrics/local'].get.parameters!;
    expect(local.find((p) => p.name === 'seconds')?.schema?.type).toBe('integer');
    const { schemas } = document.components;
    expect(schemas.IncrementDto.properties!.amount.type).toBe('integer');
    for (const [dto, field] of [
      ['ListedItemDto', 'rank'],
      ['StandingDto', 'score'],
      ['StandingDto', 'rank'],
      ['TopResultDto', 'from'],
      ['SampleDto', 'count'],
      ['WindowViewDto', 'period'],
    ]) {
      expect([dto, field, schemas[dto].properties![field].type]).toEqual([dto, field, 'integer']);
    }
    // A listed score is a window's integer sum or a trending view's fractional score.
    expect(schemas.ListedItemDto.properties!.score.type).toBe('number');
  });
});
