/** Messages of the library module, written once. */
export const LIBRARY_MESSAGES = {
  adminUnguarded: () =>
    'TrendboardModule with http: true mounts the /admin routes (boards, retractions, stats): set ADMIN_TOKEN, or an API_KEYS key with the admin scope, in its settings (or the environment)',
  fastifyOnly: () =>
    'TrendboardModule with http: true mounts its routes on the Fastify adapter only (@nestjs/platform-fastify): its access check and body bounds are Fastify hooks',
};
