import type { IncomingMessage } from 'node:http';
import parseurl from 'parseurl';
import { requestPath } from '../../../src/http/request-path';

/** A request as requestPath and parseurl read it: its target only. */
function requestFor(url: string): IncomingMessage {
  return { url } as IncomingMessage;
}

describe('requestPath', () => {
  it.each([
    ['/healthz', '/healthz'],
    ['/logspec?x=1', '/logspec'],
    ['/a/b%20c/', '/a/b%20c/'],
    ['//double', '//double'],
    ['/', '/'],
    ['/with#fragment', '/with'],
    ['/with space', '/with%20space'],
    ['/tab\there', '/tab%09here'],
    ['/nbsp\u00a0', '/nbsp'],
    ['/bom\ufeff', '/bom'],
    ['*', '*'],
    ['http://example.com/abs?q', '/abs'],
  ])('%j: the path parseurl gives (%j)', (target, path) => {
    expect(requestPath(requestFor(target))).toBe(path);
    expect(requestPath(requestFor(target))).toBe(parseurl(requestFor(target))?.pathname ?? '/');
  });
});
