/** Most bytes of log lines held while the log output takes none (a pipe nobody reads): later lines are dropped. */
export const LOG_PENDING_MAX_BYTES = 8 * 1024 * 1024;

/** How soon a log write the output refused (EAGAIN) is tried again. */
export const LOG_RETRY_AFTER_MS = 10;
