import { validateEdgeSettings } from './edge.settings';
import { deadlineCheckIntervalMs } from './http-edge';
import { isUnder } from './security-headers';

describe('deadlineCheckIntervalMs', () => {
  it('checks at a quarter of the header timeout, at most once a second', () => {
    expect(deadlineCheckIntervalMs(validateEdgeSettings({}))).toBe(1000);
    expect(deadlineCheckIntervalMs(validateEdgeSettings({ HTTP_HEADERS_TIMEOUT_MS: '300' }))).toBe(75);
    expect(deadlineCheckIntervalMs(validateEdgeSettings({ HTTP_HEADERS_TIMEOUT_MS: '100' }))).toBe(25);
  });
});

describe('isUnder', () => {
  it.each([
    ['/docs', true],
    ['/docs/', true],
    ['/docs?x=1', true],
    ['/docs/swagger-ui.css', true],
    ['/docs-json', false],
    ['/docsx', false],
    ['/boards/docs', false],
    ['/', false],
  ])('%s under /docs: %s', (url, expected) => {
    expect(isUnder(url, ['/docs'])).toBe(expected);
  });
});
