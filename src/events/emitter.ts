import type { Logger } from '../logging/types';
import type { OperationsEvent, OperationsEventListener } from './types';
import { messageOf } from '../errors';

/**
 * Synchronous fan-out to listeners. A listener that throws is logged and skipped: the code that
 * emits (a request handler, the TLS watcher) never sees an integration's failure. Listeners
 * that do I/O must queue it themselves.
 */
export class OperationsEventEmitter {
  private readonly listeners = new Set<OperationsEventListener>();
  private readonly logger: Logger;

  constructor(logger: Logger) {
    this.logger = logger;
  }

  /** Returns the unsubscribe function. The same function subscribed twice is called twice. */
  subscribe(listener: OperationsEventListener): () => void {
    // A wrapper per subscription, so that a listener subscribed twice unsubscribes once at a time.
    const entry: OperationsEventListener = (event) => listener(event);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  emit(event: OperationsEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (error) {
        this.logger.error(`an operations event listener failed on ${event.type}: ${messageOf(error)}`, {
          eventType: event.type,
        });
      }
    }
  }
}
