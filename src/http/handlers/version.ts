import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OperationsDomain } from '../domain';
import { sendJson } from '../json';

export function getVersion(domain: OperationsDomain) {
  return (_req: IncomingMessage, res: ServerResponse): void => {
    sendJson(res, 200, domain.version);
  };
}
