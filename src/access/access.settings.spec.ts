import { validateAccessSettings } from './access.settings';
import { itGivesDefaults, itRefusesEach } from '../../test/support/settings';

describe('validateAccessSettings', () => {
  itGivesDefaults(
    validateAccessSettings,
    {
      API_KEYS: '',
      PUBLIC_READS: false,
      ACCESS_MODE: 'auto',
      AUTH_FAILURES_PER_SEC: 5,
      API_KEYS_REFRESH_MS: 5000,
      CLIENT_IPV4_PREFIX: 32,
      CLIENT_IPV6_PREFIX: 64,
    },
    ['ADMIN_TOKEN'],
  );

  it('reads only its own variables', () => {
    const settings = validateAccessSettings({ PORT: 'not-a-port', PUBLIC_READS: 'true' });
    expect(settings.PUBLIC_READS).toBe(true);
    expect(settings).not.toHaveProperty('PORT');
  });

  itRefusesEach(validateAccessSettings, [
    ['ADMIN_TOKEN', 'short'],
    ['API_KEYS', 'short'],
    ['API_KEYS', 'a-long-enough-key-1,has space in it 0123'],
    ['ACCESS_MODE', 'open'],
    ['CLIENT_IPV4_PREFIX', '33'],
  ]);
});
