import { InvalidInputError } from '../../common/errors';
import { blockKeyOf } from '../../common/names';
import type { PreparedBoard } from './board';
import { ACTORS_MESSAGES } from '../options/actors/actors.option';

/** Refuses (400 naming `field`) an actor on a board that keeps none. */
export function checkActor(field: string, actor: string | undefined, board: PreparedBoard): void {
  if (actor === undefined || board.config.actors) return;
  throw new InvalidInputError(ACTORS_MESSAGES.noActors(board.config.name, field));
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
