import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type {
  HeaderObject,
  OperationObject,
  ResponseObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { ErrorBodyDto } from './route-decorators';
import { API_KEY_SCHEME, BEARER_SCHEME } from './security-schemes';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

/** The document's tags, one per controller group (`@ApiTags`), in the order the UI lists them. */
export const TAGS: Record<string, string> = {
  ranking: 'Boards and their items: increments, likes, top-N, ranks, history, views and segments',
  live: 'Live top-N streams (server-sent events) and the dashboard',
  counters: 'Per-second-to-per-day counters',
  stats: 'Numeric stats (count, sum, min, max, percentiles) and the slowest calls',
  ingest: 'Reading events from Redis Streams or NATS JetStream',
  access: 'API keys (admin)',
  operations: 'Health, readiness and metrics',
};

/**
 * The OpenAPI document served at /docs-json. `@redocly/cli lint` (recommended rules) finds no error
 * in it (test/e2e/openapi.e2e-spec.ts), and a client generated from it drives the walk-through.
 */
export function openApiDocument(app: INestApplication, version: string): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('trendboard')
    .setDescription('Rolling-window leaderboards over Redis: trending items, ranks, counters and stats.')
    .setVersion(version)
    .setLicense('MIT', 'https://opensource.org/license/mit')
    // Relative: paths resolve against wherever the document was fetched from.
    .addServer('/', 'This service')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        // Nest names every bearer scheme JWT by default; these are opaque keys and tokens.
        bearerFormat: undefined,
        description: 'An API key, or ADMIN_TOKEN on /admin routes',
      },
      BEARER_SCHEME,
    )
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'An API key' }, API_KEY_SCHEME);
  for (const [name, description] of Object.entries(TAGS)) builder.addTag(name, description);
  const document = SwaggerModule.createDocument(app, builder.build());
  markPublicOperations(document);
  addEdgeAnswers(document);
  return document;
}

/**
 * Every route declares its access (AccessGuard refuses one that does not), and only public routes
 * declare no security scheme: an operation without `security` is public, which OpenAPI says with an
 * empty list (absent would mean "the document's default").
 */
function markPublicOperations(document: OpenAPIObject): void {
  for (const path of Object.values(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = path[method];
      if (operation && operation.security === undefined) operation.security = [];
    }
  }
}

/** What every operation may answer besides its own: refusals of the HTTP edge, limits and headers. */
const EDGE = {
  requestTimeout: 'REQUEST_TIMEOUT: the headers or the body came too slowly (the connection is closed)',
  headersTooLarge: 'HEADERS_TOO_LARGE: the request headers are over 16 KB',
  bodyTooLarge: "BODY_TOO_LARGE: over the route's body size (1 MB for a batch, 64 KB elsewhere)",
  notJson: 'UNSUPPORTED_MEDIA_TYPE: send Content-Type: application/json',
  rateLimited:
    'RATE_LIMITED: the client is over its read or write rate (READ_RATE_LIMIT_PER_SEC, RATE_LIMIT_PER_SEC), or its network sent too many unknown keys or wrong tokens (AUTH_FAILURES_PER_SEC); retry after Retry-After',
  redisFull: 'REDIS_FULL: Redis reached maxmemory; nothing applied, reads still answer',
} as const;

const HEADERS: Record<'requestId' | 'retryAfter' | 'replayed', HeaderObject> = {
  requestId: {
    description: 'The request id: the X-Request-Id sent (when valid) or one made here; log lines carry it',
    schema: { type: 'string' },
  },
  retryAfter: { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 1 } },
  replayed: {
    description:
      'true when this is the stored answer of an earlier request with the same Idempotency-Key (nothing applied again)',
    schema: { type: 'string', enum: ['true'] },
  },
};

/** Adds an error answer, or its code to the answer of that status already listed. */
function addErrorAnswer(operation: OperationObject, status: number, text: string): void {
  const existing = operation.responses[status] as ResponseObject | undefined;
  if (!existing) {
    operation.responses[status] = {
      description: text,
      content: { 'application/json': { schema: { $ref: `#/components/schemas/${ErrorBodyDto.name}` } } },
    };
  } else if (!existing.description.includes(text.split(':', 1)[0])) {
    existing.description = `${existing.description}; ${text}`;
  }
}

/**
 * The answers the HTTP edge, the guards and Redis give any route, added here from what each operation
 * declares rather than repeated on every route: 408/431 on every operation (Node refuses those before
 * any route), 413/415 where a body is taken, 429 wherever a credential is checked (rate limits and
 * failed credentials), 507 on writes that reach Redis; and the headers: X-Request-Id on every answer,
 * Retry-After on 429 and 503, Idempotent-Replayed on a retry-safe write's answers. Additions only.
 */
function addEdgeAnswers(document: OpenAPIObject): void {
  for (const path of Object.values(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = path[method];
      if (!operation) continue;
      addErrorAnswer(operation, 408, EDGE.requestTimeout);
      addErrorAnswer(operation, 431, EDGE.headersTooLarge);
      if (operation.requestBody) {
        addErrorAnswer(operation, 413, EDGE.bodyTooLarge);
        addErrorAnswer(operation, 415, EDGE.notJson);
      }
      if ((operation.security ?? []).length > 0) addErrorAnswer(operation, 429, EDGE.rateLimited);
      if (method !== 'get' && method !== 'head' && operation.responses[503])
        addErrorAnswer(operation, 507, EDGE.redisFull);
      const retrySafe = (operation.parameters ?? []).some((p) => 'name' in p && p.name === 'Idempotency-Key');
      for (const [status, answer] of Object.entries(operation.responses) as Array<[string, ResponseObject]>) {
        answer.headers = { ...answer.headers, 'X-Request-Id': HEADERS.requestId };
        if (status === '429' || status === '503') answer.headers['Retry-After'] = HEADERS.retryAfter;
        if (retrySafe && status.startsWith('2')) answer.headers['Idempotent-Replayed'] = HEADERS.replayed;
      }
    }
  }
}
