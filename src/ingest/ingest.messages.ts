/** Messages of the ingest feature's errors. */
export const INGEST_MESSAGES = {
  sourceNotFound: (name: string) => `ingest source "${name}" does not exist`,
  sourcesFull: (most: number) => `at most ${most} ingest sources may be declared; delete one first`,
  fieldFor: (field: string, kind: string) => `${field} does not apply to a ${kind} source`,
  fieldNeeded: (field: string, kind: string) => `${field} is required for a ${kind} source`,
  hostNotAllowed: (endpoint: string) =>
    `${endpoint} is not a host sources may connect to: loopback, the service's own Redis and INGEST_ALLOWED_HOSTS are`,
  kindChanged: (name: string, kind: string) =>
    `ingest source "${name}" is a ${kind} source; delete it first to declare another kind under that name`,
};
