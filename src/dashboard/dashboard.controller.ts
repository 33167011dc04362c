import { Controller, Get, Res } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PublicRoute } from '../access/access.decorators';

/** The page and its six assets, read once at boot (they ship in dist/dashboard/public). */
const PUBLIC_DIR = join(__dirname, 'public');
const read = (file: string) => readFileSync(join(PUBLIC_DIR, file));

/**
 * GET /dashboard: one page (plain HTML, CSS and browser JavaScript, no build step and nothing from a
 * CDN) that reads the API like any client: the page holds no data, so it is public; the data routes
 * it calls keep their own access rules (the page sends the key or token typed into it).
 */
@ApiTags('live')
@PublicRoute()
@Controller('dashboard')
export class DashboardController {
  private readonly html = read('index.html');
  private readonly script = read('dashboard.js');
  private readonly kit = read('kit.js');
  private readonly panels = read('panels.js');
  private readonly ingest = read('ingest.js');
  private readonly retractions = read('retractions.js');
  private readonly style = read('dashboard.css');

  @Get()
  @ApiOperation({
    summary: 'The live dashboard page',
    description:
      'Boards with a live top N (movement from previousRank), an item sparkline, counters, the stats hour and, with the admin token, the slowest routes, per-route requests and errors, each stream ingest source (lag, applied, dead-lettered, throughput, last error), and retractions started from the page (state, events, amount).',
  })
  @ApiProduces('text/html')
  @ApiResponse({ status: 200, description: 'text/html' })
  page(@Res() reply: FastifyReply): void {
    void reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(this.html);
  }

  @Get('dashboard.js')
  @ApiExcludeEndpoint()
  pageScript(@Res() reply: FastifyReply): void {
    void reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(this.script);
  }

  @Get('kit.js')
  @ApiExcludeEndpoint()
  kitScript(@Res() reply: FastifyReply): void {
    void reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(this.kit);
  }

  @Get('panels.js')
  @ApiExcludeEndpoint()
  panelsScript(@Res() reply: FastifyReply): void {
    void reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(this.panels);
  }

  @Get('ingest.js')
  @ApiExcludeEndpoint()
  ingestScript(@Res() reply: FastifyReply): void {
    void reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(this.ingest);
  }

  @Get('retractions.js')
  @ApiExcludeEndpoint()
  retractionsScript(@Res() reply: FastifyReply): void {
    void reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(this.retractions);
  }

  @Get('dashboard.css')
  @ApiExcludeEndpoint()
  stylesheet(@Res() reply: FastifyReply): void {
    void reply.type('text/css; charset=utf-8').header('cache-control', 'no-cache').send(this.style);
  }
}
