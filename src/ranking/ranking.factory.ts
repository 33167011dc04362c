import { Clock } from '../common/clock';
import { AppConfig } from '../common/config';
import { RedisFunctions } from '../redis/redis-functions';
import { RedisService } from '../redis/redis.service';
import { BoardCache } from './boards/board-cache';
import { RankingSettings } from './core/ranking.settings';
import { BoardsService } from './boards/boards.service';
import { BoardsStore } from './boards/boards.store';
import { ArchivesService } from './calendar/archives.service';
import { ArchivesStore } from './calendar/archives.store';
import { RankedSources } from './boards/ranked-sources';
import { ExpiryService } from './expiry/expiry.service';
import { ExpiryStore } from './expiry/expiry.store';
import { HistoryService } from './history/history.service';
import { HistoryStore } from './history/history.store';
import { LookupService } from './lookup/lookup.service';
import { LookupStore } from './lookup/lookup.store';
import { RankingService } from './ranking.service';
import { ReadsService } from './reads/reads.service';
import { ReadsStore } from './reads/reads.store';
import { SpansService } from './spans/spans.service';
import { SpansStore } from './spans/spans.store';
import { ShardsStore } from './shards/shards.store';
import { RetractionMetrics } from './retraction/retraction.metrics';
import { RetractionService } from './retraction/retraction.service';
import { RetractionStore } from './retraction/retraction.store';
import { ViewsService } from './views/views.service';
import { ViewsStore } from './views/views.store';
import { WriteCommands } from './writes/write-commands';
import { WritePipeline } from './writes/write-pipeline';
import { WritesStore } from './writes/writes.store';

/** The ranking slices wired by hand, as RankingModule wires them: for tests and benchmarks without the Nest app. */
export interface RankingGraph {
  ranking: RankingService;
  boards: BoardsStore;
  cache: BoardCache;
  expiry: ExpiryService;
  expiryStore: ExpiryStore;
  retractions: RetractionService;
  lookup: LookupService;
}

/** One instance's ranking graph over a connection: its own stores, config cache and services. */
export function createRankingGraph(
  redis: RedisService,
  functions: RedisFunctions,
  config: AppConfig,
  clock: Clock,
): RankingGraph {
  const settings = RankingSettings.from(config);
  const boards = new BoardsStore(redis, functions, settings, clock);
  const cache = new BoardCache(boards);
  const sources = new RankedSources(cache, clock);
  const shards = new ShardsStore(redis, functions, settings);
  const history = new HistoryStore(functions, settings);
  const archives = new ArchivesStore(functions, settings);
  const expiryStore = new ExpiryStore(redis, functions, settings);
  const expiry = new ExpiryService(expiryStore, boards, cache, clock);
  const ranking = new RankingService(
    new BoardsService(boards, cache, clock),
    new WritePipeline(new WritesStore(redis, functions, settings, shards, history), boards, cache, clock, settings),
    new WriteCommands(clock),
    new ReadsService(new ReadsStore(redis, functions, settings, shards, history)),
    new ViewsService(new ViewsStore(redis, functions, settings)),
    new HistoryService(history, sources),
    new ArchivesService(archives, sources),
    expiry,
    sources,
    new SpansService(new SpansStore(redis, functions, settings)),
  );
  const retractions = new RetractionService(
    new RetractionStore(redis, functions, settings),
    cache,
    clock,
    new RetractionMetrics(),
    history,
    archives,
  );
  const lookup = new LookupService(sources, new LookupStore(redis, functions, settings, history), settings);
  return { ranking, boards, cache, expiry, expiryStore, retractions, lookup };
}
