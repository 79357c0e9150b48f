export { OperationsEventEmitter } from './emitter';
export type { OperationsEvent, OperationsEventListener, OperationsEventType } from './types';
