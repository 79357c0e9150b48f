/** parseurl (express's and its router's URL parser) ships no types; the one call src/http/request-path.ts makes. */
declare module 'parseurl' {
  import type { IncomingMessage } from 'node:http';

  function parseurl(req: IncomingMessage): { pathname: string | null } | undefined;
  export = parseurl;
}
