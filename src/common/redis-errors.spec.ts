import { ReplyError } from 'ioredis';
import { redisErrorKind, TIMEOUT_MESSAGE } from './redis-errors';

describe('redisErrorKind', () => {
  it.each([
    [new Error(TIMEOUT_MESSAGE), 'timeout'],
    [new Error('Connection is closed.'), 'connection'],
    [new Error('connect ECONNREFUSED 127.0.0.1:6379'), 'connection'],
    [new Error('Too many Cluster redirections. Last error: ReplyError: MOVED 2052 127.0.0.1:25918'), 'connection'],
    [new ReplyError("OOM command not allowed when used memory > 'maxmemory'."), 'oom'],
    [new ReplyError('TB_QUOTA items 3'), 'refusal'],
    [new ReplyError('ERR user_script:12: attempt to compare nil with number'), 'script'],
    [new ReplyError('WRONGTYPE Operation against a key holding the wrong kind of value'), 'script'],
    [new Error('something else'), 'other'],
    ['not an error', 'other'],
  ])('%s is %s', (error, kind) => {
    expect(redisErrorKind(error)).toBe(kind);
  });
});
