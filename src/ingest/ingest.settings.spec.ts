import { itGivesDefaults, itRefusesEach } from '../../test/support/settings';
import { validateIngestSettings } from './ingest.settings';

describe('validateIngestSettings', () => {
  itGivesDefaults(validateIngestSettings, { INGEST_WAIT_MS: 1000, INGEST_LEASE_MS: 10_000, INGEST_RETRY_MS: 250 });

  itRefusesEach(validateIngestSettings, [
    ['INGEST_RETRY_MS', '5'],
    ['INGEST_RETRY_MS', '1.5'],
    ['INGEST_LEASE_MS', '1000'],
  ]);

  it('takes a short retry wait (the fault tests: a restarted server is retried at once)', () => {
    expect(validateIngestSettings({ INGEST_RETRY_MS: '20' }).INGEST_RETRY_MS).toBe(20);
  });
});
