import type { Request, Response } from 'express';
import type { OperationsDomain } from '../domain';

export function getVersion(domain: OperationsDomain) {
  return (_req: Request, res: Response): void => {
    res.status(200).json(domain.version);
  };
}
