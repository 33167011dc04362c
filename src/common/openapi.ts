import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { API_KEY_SCHEME, BEARER_SCHEME } from '../access/access.decorators';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

/**
 * The OpenAPI document served at /docs-json. `@redocly/cli lint` (recommended rules) finds no error
 * in it (test/e2e/openapi.e2e-spec.ts), and a client generated from it drives the walk-through.
 */
export function openApiDocument(app: INestApplication, version: string): OpenAPIObject {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
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
      .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'An API key' }, API_KEY_SCHEME)
      .build(),
  );
  markPublicOperations(document);
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
