import { Module } from '@nestjs/common';
import { AppConfig } from '../common/config';
import { RankingSettings } from './core/ranking.settings';
import { BoardCache } from './boards/board-cache';
import { BoardsService } from './boards/boards.service';
import { BoardsStore } from './boards/boards.store';
import { ArchivesService } from './calendar/archives.service';
import { ArchivesStore } from './calendar/archives.store';
import { RankedSources } from './boards/ranked-sources';
import { ExpiryService } from './expiry/expiry.service';
import { ExpiryStore } from './expiry/expiry.store';
import { RankingScheduler } from './expiry/ranking.scheduler';
import { HistoryService } from './history/history.service';
import { HistoryStore } from './history/history.store';
import { ItemDataService } from './items/items.service';
import { ItemDataStore } from './items/items.store';
import { LookupService } from './lookup/lookup.service';
import { LookupStore } from './lookup/lookup.store';
import { RankingService } from './ranking.service';
import { ReadsService } from './reads/reads.service';
import { ReadsStore } from './reads/reads.store';
import { SpansService } from './spans/spans.service';
import { SpansStore } from './spans/spans.store';
import { ShardsStore } from './shards/shards.store';
import { ViewsService } from './views/views.service';
import { ViewsStore } from './views/views.store';
import { WriteCommands } from './writes/write-commands';
import { WritePipeline } from './writes/write-pipeline';
import { WritesStore } from './writes/writes.store';

/**
 * Ranking without HTTP routes (the service's RankingModule and TrendboardModule import it): the
 * feature in capability slices (docs/architecture.md). Layers, lowest first; a slice
 * imports only from its own layer's core or below, never from a layer above it:
 *
 *   core  <-  boards  <-  shards, history  <-  calendar  <-  reads, spans, views, writes, lookup, items  <-  expiry  <-  facade (RankingService), controllers
 *
 * (shards and history are peers, as are reads, spans, views, writes, lookup and items: peers never import each other.)
 */
@Module({
  providers: [
    { provide: RankingSettings, inject: [AppConfig], useFactory: (config: AppConfig) => RankingSettings.from(config) },
    BoardsStore,
    BoardCache,
    RankedSources,
    BoardsService,
    ShardsStore,
    HistoryStore,
    HistoryService,
    ArchivesStore,
    ArchivesService,
    ReadsStore,
    ReadsService,
    SpansStore,
    SpansService,
    ViewsStore,
    ViewsService,
    WritesStore,
    WritePipeline,
    WriteCommands,
    LookupStore,
    LookupService,
    ItemDataStore,
    ItemDataService,
    ExpiryStore,
    ExpiryService,
    RankingScheduler,
    RankingService,
  ],
  // BoardCache and RankingSettings: stream ingest applies events with the boards' cached configs and
  // the same drain budget. WriteCommands: the controller builds its write commands with it. Lookup,
  // item data: their controllers.
  exports: [
    RankingSettings,
    RankingService,
    RankingScheduler,
    BoardCache,
    WriteCommands,
    LookupService,
    ItemDataService,
  ],
})
export class RankingCoreModule {}
