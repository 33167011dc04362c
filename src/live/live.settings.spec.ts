import { validateLiveSettings } from './live.settings';
import { itGivesDefaults, itRefusesEach } from '../../test/support/settings';

describe('validateLiveSettings', () => {
  itGivesDefaults(validateLiveSettings, {
    STREAM_COALESCE_MS: 250,
    STREAM_MAX_STREAMS: 2000,
    STREAM_MAX_PER_CLIENT: 32,
    STREAM_MAX_LIFETIME_MS: 1_800_000,
    STREAM_IDLE_TIMEOUT_MS: 60_000,
    HTTP_MAX_CONNECTIONS: 10_000,
    REDIS_MAX_PENDING_COMMANDS: 1024,
  });

  itRefusesEach(validateLiveSettings, [
    ['STREAM_COALESCE_MS', '10'],
    ['STREAM_COALESCE_MS', 'soon'],
    ['STREAM_MAX_PER_CLIENT', '0'],
  ]);
});
