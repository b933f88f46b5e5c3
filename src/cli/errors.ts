// The two ways a command fails, which decide the exit code: the invocation itself is wrong (2, and the
// usage is shown so the caller can correct it), or the request was well formed but could not be done (1).
export class UsageError extends Error {
  override name = 'UsageError';
}

export class CommandError extends Error {
  override name = 'CommandError';
}
