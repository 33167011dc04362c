import { Injectable } from '@nestjs/common';
import { AnsweredRequest, AnsweredRequests } from '../common/answered-requests';

/**
 * One log line per answered request (Fastify's own two lines, "incoming request" and "request
 * completed", are off: neither names the route pattern, and the status is only on the second):
 * method, route pattern, status and duration, on the request's logger so it carries `reqId`. A 5xx is
 * the service failing: at error; anything else at info.
 */
@Injectable()
export class RequestLog {
  constructor(answered: AnsweredRequests) {
    answered.subscribe(logAnswered);
  }
}

function logAnswered({ method, route, statusCode, durationMs, log }: AnsweredRequest): void {
  const fields = { method, route, status: statusCode, durationMs: Math.round(durationMs * 1000) / 1000 };
  if (statusCode >= 500) log.error(fields, 'request');
  else log.info(fields, 'request');
}
