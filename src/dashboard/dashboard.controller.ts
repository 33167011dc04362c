import { Controller, Get, NotFoundException, Param, Res } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PublicRoute } from '../access/access.decorators';

/** The page and its assets, read once at boot (they ship in dist/dashboard/public). */
const PUBLIC_DIR = join(__dirname, 'public');
const read = (file: string) => readFileSync(join(PUBLIC_DIR, file));
const SCRIPT = 'text/javascript; charset=utf-8';

/** Each asset the page loads, by the name it is served under, with its content type. */
const ASSET_FILES: Record<string, string> = {
  'kit.js': SCRIPT,
  'rows.js': SCRIPT,
  'feed.js': SCRIPT,
  'dashboard.js': SCRIPT,
  'panels.js': SCRIPT,
  'ingest.js': SCRIPT,
  'retractions.js': SCRIPT,
  'moderation.js': SCRIPT,
  'competitions.js': SCRIPT,
  'dashboard.css': 'text/css; charset=utf-8',
};

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
  private readonly assets = new Map(
    Object.entries(ASSET_FILES).map(([file, type]) => [file, { type, body: read(file) }]),
  );

  @Get()
  @ApiOperation({
    summary: 'The live dashboard page',
    description:
      'Boards with a live top N (movement from previousRank; metrics, tiebreaks and the order of competition boards), an item sparkline, counters, the stats hour and, with the admin token, the slowest routes, per-route requests and errors, each stream ingest source (lag, applied, dead-lettered, throughput, last error), retractions started from the page (state, events, amount), moderation (hide and allow items, the review queue), and competitions (the cohorts of a league tier and the moves of the latest closed period; members of a group board joined and taken out).',
  })
  @ApiProduces('text/html')
  @ApiResponse({ status: 200, description: 'text/html' })
  page(@Res() reply: FastifyReply): void {
    void reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(this.html);
  }

  @Get(':asset')
  @ApiExcludeEndpoint()
  asset(@Param('asset') name: string, @Res() reply: FastifyReply): void {
    const asset = this.assets.get(name);
    if (!asset) throw new NotFoundException();
    void reply.type(asset.type).header('cache-control', 'no-cache').send(asset.body);
  }
}
