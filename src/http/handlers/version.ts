import type { Request, Response } from 'express';
import type { OperationsDomain } from '../domain';
import { sendJson } from '../json';

export function getVersion(domain: OperationsDomain) {
  return (_req: Request, res: Response): void => {
    sendJson(res, 200, domain.version);
  };
}
