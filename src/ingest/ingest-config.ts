import { readFileSync } from 'node:fs';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { InvalidInputError } from '../common/errors';
import { isName, NAME_RULE } from '../common/names';
import { DeclareSourceDto, SourceDeclaration } from './dto/ingest.dto';
import { MAX_INGEST_SOURCES } from './ingest.limits';
import { INGEST_MESSAGES as M } from './ingest.messages';

const REDIS_ONLY = ['url', 'group'] as const;
const NATS_ONLY = ['servers', 'subject', 'durable'] as const;

/** A source declared by the configuration: declared at boot as `PUT /admin/ingest/:name` would. */
export interface ConfiguredSource {
  name: string;
  declaration: SourceDeclaration;
}

/** The sources of INGEST_SOURCES (JSON) or INGEST_SOURCES_FILE (a JSON file), checked at boot. */
export class ConfiguredSources {
  constructor(readonly sources: ConfiguredSource[]) {}
}

/**
 * Reads `{ "<name>": <declaration>, … }` from INGEST_SOURCES or the file INGEST_SOURCES_FILE names.
 * Every declaration is checked as the admin route checks its body; throws one error naming each bad
 * field as `INGEST_SOURCES.<name>.<field>`, so the process stops at boot instead of at first use.
 */
export function readConfiguredSources(env: Record<string, unknown>): ConfiguredSources {
  const inline = nonEmpty(env.INGEST_SOURCES);
  const file = nonEmpty(env.INGEST_SOURCES_FILE);
  if (inline !== undefined && file !== undefined)
    throw invalid(['INGEST_SOURCES, INGEST_SOURCES_FILE: set one of them, not both']);
  const variable = file === undefined ? 'INGEST_SOURCES' : 'INGEST_SOURCES_FILE';
  const text = file === undefined ? inline : readSourcesFile(file);
  if (text === undefined) return new ConfiguredSources([]);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw invalid([`${variable}: not JSON (${error instanceof Error ? error.message : String(error)})`]);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid([`${variable}: must be a JSON object { "<source name>": { "kind": … }, … }`]);
  const entries = Object.entries(value);
  if (entries.length > MAX_INGEST_SOURCES)
    throw invalid([`${variable}: at most ${MAX_INGEST_SOURCES} sources (${entries.length} given)`]);
  const problems: string[] = [];
  const sources = entries.flatMap(([name, body]) => {
    const checkedSource = checkSource(name, body);
    if (typeof checkedSource !== 'string') return [checkedSource];
    problems.push(`${variable}.${name}${checkedSource}`);
    return [];
  });
  if (problems.length > 0) throw invalid(problems);
  return new ConfiguredSources(sources);
}

/** The source, or what is wrong with it (".<field>: <rule>" or ": <rule>"). */
function checkSource(name: string, body: unknown): ConfiguredSource | string {
  if (!isName(name)) return `: a source name must be ${NAME_RULE}`;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return ': must be a JSON object';
  const dto = plainToInstance(DeclareSourceDto, body);
  // The global pipe's rules: unknown fields refused, first error per field.
  const errors = validateSync(dto, { whitelist: true, forbidNonWhitelisted: true, stopAtFirstError: true });
  if (errors.length > 0) {
    const error = errors[0];
    return `.${error.property}: ${Object.values(error.constraints ?? {}).join('; ')}`;
  }
  try {
    return { name, declaration: checkedDeclaration(dto) };
  } catch (error) {
    return `: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** The declaration with only its kind's fields; a field of the other kind, or a missing one, is a 400. */
export function checkedDeclaration(body: DeclareSourceDto): SourceDeclaration {
  const foreign = body.kind === 'nats' ? REDIS_ONLY : NATS_ONLY;
  for (const field of foreign) if (body[field] !== undefined) throw new InvalidInputError(M.fieldFor(field, body.kind));
  const common = {
    stream: body.stream,
    ...(body.board === undefined ? {} : { board: body.board }),
    ...(body.deadLetter === undefined ? {} : { deadLetter: body.deadLetter }),
  };
  if (body.kind === 'redis-stream')
    return {
      kind: 'redis-stream',
      ...common,
      ...(body.url === undefined ? {} : { url: body.url }),
      ...(body.group === undefined ? {} : { group: body.group }),
    };
  if (body.servers === undefined) throw new InvalidInputError(M.fieldNeeded('servers', 'nats'));
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(body.stream))
    throw new InvalidInputError('stream must be a JetStream stream name: 1-64 characters of A-Z a-z 0-9 _ -');
  return {
    kind: 'nats',
    servers: body.servers,
    ...common,
    ...(body.subject === undefined ? {} : { subject: body.subject }),
    ...(body.durable === undefined ? {} : { durable: body.durable }),
  };
}

function readSourcesFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw invalid([
      `INGEST_SOURCES_FILE: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    ]);
  }
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** The same shape as the other settings' boot errors (common/settings.ts). */
function invalid(lines: string[]): Error {
  return new Error(`Invalid configuration:\n  ${lines.join('\n  ')}`);
}
