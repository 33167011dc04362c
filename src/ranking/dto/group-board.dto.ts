import { CompiledValidation, ID_FIELD, NAME_FIELD } from '../../common/compiled-checks';
import { IdProperty, NameProperty } from '../../common/dto';

@CompiledValidation({ board: NAME_FIELD, group: ID_FIELD, item: ID_FIELD })
export class MemberParams {
  @NameProperty('Group board name (a board declaring groupOf)', 'teams')
  board!: string;

  @IdProperty('Group id (URL-encoded), compared after NFC normalisation like an item id', 'red')
  group!: string;

  @IdProperty('Item id of the member board (URL-encoded), compared after NFC normalisation', 'player-7')
  item!: string;
}
