/**
 * Calls `stop` on the first SIGINT or SIGTERM, and only then. A signal that comes while the
 * process stops is passed to `stillStopping` (to log it) and changes nothing: one Ctrl-C on
 * `npm start` delivers two, the terminal's SIGINT to the whole process group and the start
 * script's SIGTERM, so a second signal cannot mean "stop now". What bounds a stop is the
 * process's own limit (the worker's shutdown force time); SIGKILL stops it at once.
 */
export function stopOnSignals(
  stop: (signal: NodeJS.Signals) => void,
  stillStopping: (signal: NodeJS.Signals) => void,
): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return stillStopping(signal);
    stopping = true;
    stop(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
