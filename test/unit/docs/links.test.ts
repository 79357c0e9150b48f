/**
 * Every internal link of README.md and docs/**\/*.md resolves, offline: a relative link names a file
 * or folder of the repository, and a `#anchor` names a heading of its page as GitHub renders it
 * (github-slugger: the heading's text lower-cased, punctuation but `-` and `_` dropped, spaces as
 * `-`, a repeated heading suffixed `-1`, `-2`, ...). Links inside code are not links; links to
 * other sites are not checked (no network).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..', '..');

/** README.md and every .md under docs/, relative to the repository. */
function documentationFiles(): string[] {
  const files = ['README.md'];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const relative = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(relative);
      else if (entry.name.endsWith('.md')) files.push(relative);
    }
  };
  walk('docs');
  return files;
}

/** The text with fenced code blocks blanked (line numbers kept) and inline code spans removed. */
function withoutCode(text: string): string[] {
  let fence: string | null = null;
  return text.split('\n').map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker !== undefined) {
      if (fence === null) fence = marker;
      else if (line.trim().startsWith(fence) && line.trim().replace(/[`~]/g, '') === '') fence = null;
      return '';
    }
    if (fence !== null) return '';
    return line.replace(/(`+)[\s\S]*?\1/g, '');
  });
}

/** GitHub's anchor of a heading's text (github-slugger), before de-duplication. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links: their text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/`/g, '')
    .replace(/(\*\*|__|\*|~~)/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a page has: its headings (ATX, outside code), de-duplicated as GitHub does. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | null = null;
  for (const line of text.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker !== undefined) {
      if (fence === null) fence = marker;
      else if (line.trim().startsWith(fence) && line.trim().replace(/[`~]/g, '') === '') fence = null;
      continue;
    }
    if (fence !== null) continue;
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  for (const match of text.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(match[1] ?? '');
  return anchors;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

/** The links of a page: inline `[text](target)`, images, and reference definitions `[x]: target`. */
function linksOf(file: string, text: string): Link[] {
  const links: Link[] = [];
  withoutCode(text).forEach((line, index) => {
    for (const match of line.matchAll(/!?\[(?:[^\]]|\][^(])*?\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ file, line: index + 1, target: match[1] ?? '' });
    }
    const definition = /^ {0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(line);
    if (definition) links.push({ file, line: index + 1, target: definition[1] ?? '' });
  });
  return links;
}

/** Why a link does not resolve, or null when it does. */
function problemOf(link: Link, anchors: (file: string) => Set<string>): string | null {
  const { target } = link;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // https:, mailto:: another site
  if (target.startsWith('/')) return 'an absolute path: GitHub resolves it against the site, not the repository; use a relative link';
  const [pathPart = '', anchor] = target.split('#', 2);
  const resolved = pathPart === '' ? link.file : path.posix.normalize(path.posix.join(path.posix.dirname(link.file), decodeURIComponent(pathPart)));
  if (resolved.startsWith('../')) return `${resolved} is outside the repository`;
  const absolute = path.join(root, resolved);
  if (!existsSync(absolute)) return `${resolved} does not exist`;
  if (anchor === undefined || anchor === '') return null;
  if (!statSync(absolute).isFile() || !resolved.endsWith('.md')) return `#${anchor}: ${resolved} is not a Markdown page, it has no headings to link to`;
  if (!anchors(resolved).has(anchor)) return `${resolved} has no heading #${anchor}`;
  return null;
}

describe('internal links and anchors of README.md and docs/', () => {
  const files = documentationFiles();
  const cache = new Map<string, Set<string>>();
  const anchors = (file: string): Set<string> => {
    let found = cache.get(file);
    if (found === undefined) {
      found = anchorsOf(readFileSync(path.join(root, file), 'utf8'));
      cache.set(file, found);
    }
    return found;
  };

  test('the pages are found: the README, the index, the guides and the references', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/README.md', 'docs/tls.md', 'docs/reference/configuration.md', 'docs/reference/api.md']));
  });

  test.each(files)('%s: every relative link and #anchor resolves', (file) => {
    const problems = linksOf(file, readFileSync(path.join(root, file), 'utf8'))
      .map((link) => ({ link, problem: problemOf(link, anchors) }))
      .filter(({ problem }) => problem !== null)
      .map(({ link, problem }) => `${link.file}:${link.line}: (${link.target}) ${problem ?? ''}`);
    expect(problems).toEqual([]);
  });

  test('every page of docs/ is reachable from the index or the README', () => {
    const linked = new Set<string>();
    for (const from of ['README.md', 'docs/README.md']) {
      for (const link of linksOf(from, readFileSync(path.join(root, from), 'utf8'))) {
        const [pathPart = ''] = link.target.split('#', 1);
        if (pathPart === '' || /^[a-z][a-z0-9+.-]*:/i.test(pathPart)) continue;
        linked.add(path.posix.normalize(path.posix.join(path.posix.dirname(from), pathPart)));
      }
    }
    expect(files.filter((file) => file !== 'docs/README.md' && !linked.has(file))).toEqual([]);
  });
});

describe('the link checker itself', () => {
  test('anchors as GitHub makes them: code, punctuation and repeats', () => {
    const anchors = anchorsOf(
      [
        '# fabric-ops',
        '## The Kubernetes trap: `vm.endpoint` left in `core.yaml`',
        '### `cri`: containerd, CRI-O (the Kubernetes Container Runtime Interface)',
        '## Peer (`core.yaml`)',
        '## Limits',
        '## Limits',
        '```sh',
        '# not a heading',
        '```',
        "## The node's log level",
      ].join('\n'),
    );
    expect([...anchors]).toEqual([
      'fabric-ops',
      'the-kubernetes-trap-vmendpoint-left-in-coreyaml',
      'cri-containerd-cri-o-the-kubernetes-container-runtime-interface',
      'peer-coreyaml',
      'limits',
      'limits-1',
      'the-nodes-log-level',
    ]);
  });

  test('links in code are not links; reference definitions and images are', () => {
    const text = ['a [x](one.md) and `[y](two.md)`', '```', '[z](three.md)', '```', '![pic](img.png)', '[ref]: four.md'].join('\n');
    expect(linksOf('docs/a.md', text).map((link) => [link.line, link.target])).toEqual([
      [1, 'one.md'],
      [5, 'img.png'],
      [6, 'four.md'],
    ]);
  });

  test('a missing file, a missing heading and a link outside the repository are each reported', () => {
    const none = (): Set<string> => new Set(['there']);
    expect(problemOf({ file: 'docs/tls.md', line: 1, target: 'no-such-page.md' }, none)).toBe('docs/no-such-page.md does not exist');
    expect(problemOf({ file: 'docs/tls.md', line: 1, target: 'README.md#missing' }, none)).toBe('docs/README.md has no heading #missing');
    expect(problemOf({ file: 'docs/tls.md', line: 1, target: '#there' }, none)).toBeNull();
    expect(problemOf({ file: 'README.md', line: 1, target: '../elsewhere.md' }, none)).toBe('../elsewhere.md is outside the repository');
    expect(problemOf({ file: 'README.md', line: 1, target: 'https://example.org/#x' }, none)).toBeNull();
  });
});
