import { Module } from '@nestjs/common';
import { AppConfig } from '../common/config';
import { ActorWeightsService } from './actor-weights/actor-weights.service';
import { ActorWeightsStore } from './actor-weights/actor-weights.store';
import { AliasMap } from './aliases/alias-map';
import { AliasesService } from './aliases/aliases.service';
import { AliasesStore } from './aliases/aliases.store';
import { RankingSettings } from './core/ranking.settings';
import { BoardCache, RankedSources } from './boards/board-cache';
import { BoardsService } from './boards/boards.service';
import { BoardsStore } from './boards/boards.store';
import { ArchivesService } from './calendar/archives.service';
import { ArchivesStore } from './calendar/archives.store';
import { ExpiryService } from './expiry/expiry.service';
import { ExpiryStore } from './expiry/expiry.store';
import { FiltersService } from './filters/filters.service';
import { FiltersStore } from './filters/filters.store';
import { RankingScheduler } from './expiry/ranking.scheduler';
import { HistoryService } from './history/history.service';
import { HistoryStore } from './history/history.store';
import { ItemDataService } from './items/items.service';
import { ItemDataStore } from './items/items.store';
import { LookupService } from './lookup/lookup.service';
import { LookupStore } from './lookup/lookup.store';
import { GroupSources } from './boards/group-sources';
import { GroupBoardsService } from './group-boards/group-boards.service';
import { GroupBoardsStore } from './group-boards/group-boards.store';
import { ModerationService } from './moderation/moderation.service';
import { ModerationStore } from './moderation/moderation.store';
import { LeaguesService } from './leagues/leagues.service';
import { LeaguesStore } from './leagues/leagues.store';
import { RANKING, RANKING_SLICES } from './ranking.functions';
import { RankingService } from './ranking.service';
import { ReadsService } from './reads/reads.service';
import { RowMetrics } from './core/row-metrics';
import { ReadsStore } from './reads/reads.store';
import { RetractionMetrics } from './retraction/retraction.metrics';
import { RetractionService } from './retraction/retraction.service';
import { RetractionStore } from './retraction/retraction.store';
import { ScoresStore } from './scores/scores.store';
import { SpansService } from './spans/spans.service';
import { SpansStore } from './spans/spans.store';
import { StandingService } from './standing/standing.service';
import { StandingStore } from './standing/standing.store';
import { ShardsStore } from './shards/shards.store';
import { ViewsService } from './views/views.service';
import { ViewFilterReader } from './core/view-filter';
import { ViewsStore } from './views/views.store';
import { WriteCommands } from './writes/write-commands';
import { WritePipeline } from './writes/write-pipeline';
import { WritesStore } from './writes/writes.store';

/**
 * Ranking without HTTP routes (the service's RankingModule and TrendboardModule import it): the
 * feature in capability slices, layered as the `ranking-layers` block of docs/architecture.md says
 * (src/layers.spec.ts checks it). Each slice's store receives its slice's part of the one library.
 */
@Module({
  providers: [
    ...RANKING_SLICES.map(([, Part]) => ({ provide: Part, useValue: new Part(RANKING) })),
    { provide: RankingSettings, inject: [AppConfig], useFactory: (config: AppConfig) => RankingSettings.from(config) },
    BoardsStore,
    BoardCache,
    RankedSources,
    BoardsService,
    ShardsStore,
    HistoryStore,
    ScoresStore,
    HistoryService,
    ArchivesStore,
    ArchivesService,
    ReadsStore,
    ReadsService,
    { provide: RowMetrics, useExisting: ReadsService },
    SpansStore,
    SpansService,
    ViewsStore,
    ViewsService,
    { provide: ViewFilterReader, useExisting: ViewsService },
    WritesStore,
    WritePipeline,
    WriteCommands,
    LookupStore,
    LookupService,
    StandingStore,
    StandingService,
    ItemDataStore,
    ItemDataService,
    FiltersStore,
    FiltersService,
    ExpiryStore,
    ExpiryService,
    RankingScheduler,
    RankingService,
    RetractionStore,
    RetractionMetrics,
    RetractionService,
    ActorWeightsStore,
    ActorWeightsService,
    AliasesStore,
    AliasMap,
    AliasesService,
    ModerationStore,
    ModerationService,
    GroupBoardsStore,
    GroupBoardsService,
    { provide: GroupSources, useExisting: GroupBoardsService },
    LeaguesStore,
    LeaguesService,
  ],
  // BoardCache and RankingSettings: stream ingest applies events with the boards' cached configs and
  // the same drain budget. WriteCommands, WritePipeline: the controller builds its write commands with
  // the one and sends them to the other. Lookup, standing (rank, distribution), item data, retractions,
  // actor weights, aliases, moderation: their controllers.
  exports: [
    RankingSettings,
    RankingService,
    RankingScheduler,
    BoardCache,
    WriteCommands,
    WritePipeline,
    LookupService,
    StandingService,
    ItemDataService,
    FiltersService,
    RetractionService,
    ActorWeightsService,
    AliasesService,
    AliasMap,
    ModerationService,
    GroupBoardsService,
    LeaguesService,
    ArchivesService,
  ],
})
export class RankingCoreModule {}
