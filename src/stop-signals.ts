/**
 * SIGTERM and SIGINT for a process that serves (the command, a chaincode with fabric-ops): the
 * first one stops it cleanly, a second one exits at once. A signal that comes before the process
 * knows how to stop (during its start) is kept, and the stop runs as soon as it is given.
 */
export interface StopSignals {
  /** How to stop; a signal already received runs it now. Called once. */
  stopWith(stop: (signal: NodeJS.Signals) => void): void;
  /** Where the "again; exiting now" line goes (a logger once there is one). */
  warnWith(warn: (line: string) => void): void;
  /** Removes the listeners (a stop that was not caused by a signal). */
  remove(): void;
}

export function handleStopSignals(options: { warn: (line: string) => void; exitCodeOnSecond: number }): StopSignals {
  let stop: ((signal: NodeJS.Signals) => void) | null = null;
  let received: NodeJS.Signals | null = null;
  let warn = options.warn;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (received !== null) {
      warn(`received ${signal} again; exiting now`);
      process.exit(options.exitCodeOnSecond);
    }
    received = signal;
    stop?.(signal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return {
    stopWith(given) {
      stop = given;
      if (received !== null) given(received);
    },
    warnWith(given) {
      warn = given;
    },
    remove() {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    },
  };
}
