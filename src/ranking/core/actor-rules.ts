import { InvalidInputError } from '../../common/errors';
import { blockKeyOf } from '../../common/names';
import type { Aggregate } from '../options/aggregate/aggregate';
import type { PreparedBoard } from './board';
import { RANKING_MESSAGES as M } from './ranking.messages';
import type { ViewConfig } from '../options/views/trending-math';

/** What decides whether a board may keep actors: its aggregate and views as they will be stored. */
export interface ActorsSetting {
  board: string;
  actors: boolean;
  aggregate: Aggregate;
  views: ViewConfig[];
}

/**
 * Refuses (400 naming the field) a board config where actors make no sense: a max / min / last board (a
 * retraction could not take one actor's share out of a maximum), and a unique view on a board without
 * actors (it would count no one).
 */
export function checkActorsSetting(setting: ActorsSetting): void {
  const { board, actors, aggregate, views } = setting;
  if (!actors) {
    const unique = views.find((view) => view.mode === 'unique');
    if (unique)
      throw new InvalidInputError(
        `views: unique view "${unique.name}" counts distinct actors: board "${board}" needs "actors": true`,
      );
    return;
  }
  if (aggregate !== 'sum')
    throw new InvalidInputError(
      `actors: kept for sum boards only: board "${board}" would aggregate by ${aggregate} (a retraction cannot take one actor's share out of a ${aggregate})`,
    );
}

/** Refuses (400 naming `field`) an actor on a board that keeps none. */
export function checkActor(field: string, actor: string | undefined, board: PreparedBoard): void {
  if (actor === undefined || board.config.actors) return;
  throw new InvalidInputError(M.noActors(board.config.name, field));
}

/**
 * An event's actor as the write scripts take it (ACTORS.split in actor_lib): "" for none, the actor
 * when it is its own block key (most), else "<actor><US><block key>" (ids never hold US), so that a
 * block binds every spelling of the actor while its contributions keep the id as sent (NFC).
 */
export function actorArg(actor: string | undefined): string {
  if (actor === undefined) return '';
  const key = blockKeyOf(actor);
  return key === actor ? actor : `${actor}\u001f${key}`;
}
