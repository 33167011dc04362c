import { Module } from '@nestjs/common';
import { ArchivesController } from './calendar/archives.controller';
import { FiltersController } from './filters/filters.controller';
import { ItemDataController } from './items/item-data.controller';
import { LookupController } from './lookup/lookup.controller';
import { GroupBoardsController } from './group-boards/group-boards.controller';
import { LeaguesController } from './leagues/leagues.controller';
import { ModerationController } from './moderation/moderation.controller';
import { RankingController } from './ranking.controller';
import { RankingCoreModule } from './ranking-core.module';
import { RetractionController } from './retraction/retraction.controller';
import { ActorWeightsController } from './actor-weights/actor-weights.controller';
import { AliasesController } from './aliases/aliases.controller';
import { ScoresController } from './scores.controller';
import { StandingController } from './standing/standing.controller';

/** Ranking over HTTP: the core module (its slices and their layer order are there) and its routes. */
@Module({
  imports: [RankingCoreModule],
  controllers: [
    RankingController,
    ArchivesController,
    LookupController,
    StandingController,
    ItemDataController,
    ScoresController,
    RetractionController,
    ActorWeightsController,
    AliasesController,
    FiltersController,
    ModerationController,
    GroupBoardsController,
    LeaguesController,
  ],
  exports: [RankingCoreModule],
})
export class RankingModule {}
