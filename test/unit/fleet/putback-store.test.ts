/**
 * The put-back state file (`<stateDirectory>/fleet-putbacks.json`) as a file on a shared disk:
 * whoever can write its directory or the file could make the fleet put nodes back to what they
 * like, with the fleet's credentials and a writer's name. The directory and the file must be this
 * user's and writable by no one else; the file is read as certificates are (a regular file, not a
 * symbolic link, bounded); what it holds is checked entry by entry; the temporary file of a write
 * is a new file of a random name, never one planted beforehand. The test runs as root, so files
 * are given to uid 65534 (nobody) with chown.
 */
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../../../src/errors';
import {
  FilePutBackStore,
  formatPutBacks,
  maxPutBackDelayMs,
  maxPutBacks,
  parsePutBacks,
  PutBackPersistError,
  type PendingPutBack,
} from '../../../src/fleet/putback-store';

const entry = (node: string, more: Partial<PendingPutBack> = {}): PendingPutBack => ({
  node,
  previous: 'info',
  specs: ['gossip=debug:info'],
  dueAt: Date.now() + 3_600_000,
  actor: 'O=org1,CN=operator',
  ...more,
});

let root: string;

beforeAll(() => {
  if (process.geteuid?.() !== 0) throw new Error(`these tests give files to another user with chown and must run as root; euid is ${process.geteuid?.()}`);
  root = mkdtempSync(path.join(tmpdir(), 'fleet-putback-store-'));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

let count = 0;
/** A fresh state directory (0700, this user's) under the test's root. */
function stateDir(): string {
  count += 1;
  const dir = path.join(root, `state-${count}`);
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

/** What load() throws, as the one problem line of its ConfigError. */
async function loadProblem(store: FilePutBackStore): Promise<string> {
  const caught = await store.load().then(
    () => null,
    (error: unknown) => error,
  );
  expect(caught).toBeInstanceOf(ConfigError);
  return (caught as ConfigError).problems.join('\n');
}

describe('who may have written the state', () => {
  test('a state directory others can write (0777) is refused at start, naming it and its mode', async () => {
    const dir = stateDir();
    writeFileSync(path.join(dir, 'fleet-putbacks.json'), formatPutBacks([entry('peer0')]), { mode: 0o600 });
    chmodSync(dir, 0o777);
    expect(await loadProblem(new FilePutBackStore(dir))).toBe(
      `stateDirectory: ${dir} is mode 0777 (writable by its group and others): another user could plant put-backs there, which would run with the fleet credentials; give a directory of this user's that only it can write (chmod go-w)`,
    );
  });

  test('a group-writable state directory (the setgid 2770 of a shared volume) is refused too', async () => {
    const dir = stateDir();
    chmodSync(dir, 0o2770);
    expect(await loadProblem(new FilePutBackStore(dir))).toContain(`stateDirectory: ${dir} is mode 2770 (writable by its group)`);
  });

  test('a state directory owned by another user is refused, naming both uids', async () => {
    const dir = stateDir();
    chownSync(dir, 65534, 65534);
    expect(await loadProblem(new FilePutBackStore(dir))).toContain(`stateDirectory: ${dir} is owned by uid 65534, not by this process's user (uid 0)`);
  });

  test('a state directory that is a symbolic link is refused, naming it and its target', async () => {
    const target = stateDir();
    const link = path.join(root, `link-${count}`);
    symlinkSync(target, link);
    expect(await loadProblem(new FilePutBackStore(link))).toBe(`stateDirectory: ${link} is a symbolic link (to ${target}); give the directory itself`);
  });

  test('a state file owned by another user (planted) is refused, naming it and its owner; nothing of it is loaded', async () => {
    const dir = stateDir();
    const file = path.join(dir, 'fleet-putbacks.json');
    writeFileSync(file, formatPutBacks([entry('peer0', { previous: 'debug', actor: 'O=org1,CN=forged' })]), { mode: 0o600 });
    chownSync(file, 65534, 65534);
    expect(await loadProblem(new FilePutBackStore(dir))).toBe(
      `stateDirectory: cannot use ${file}: is owned by uid 65534, not by this process's user (uid 0): another user could plant put-backs there, which would run with the fleet credentials; move it away to start without its put-backs`,
    );
  });

  test('a state file others can write (0666) is refused, naming its mode', async () => {
    const dir = stateDir();
    const file = path.join(dir, 'fleet-putbacks.json');
    writeFileSync(file, formatPutBacks([entry('peer0')]));
    chmodSync(file, 0o666);
    expect(await loadProblem(new FilePutBackStore(dir))).toContain(`stateDirectory: cannot use ${file}: is mode 0666 (writable by its group and others)`);
  });

  test('a state file that is a symbolic link is not followed: refused, and what it points at is not quoted', async () => {
    const dir = stateDir();
    const secret = path.join(root, `secret-${count}.txt`);
    writeFileSync(secret, 'SECRET-TOKEN-0123456789 {not a put-back}', { mode: 0o600 });
    symlinkSync(secret, path.join(dir, 'fleet-putbacks.json'));
    const problem = await loadProblem(new FilePutBackStore(dir));
    expect(problem).toBe(
      `stateDirectory: cannot use ${path.join(dir, 'fleet-putbacks.json')}: is a symbolic link, not followed here; move it away to start without its put-backs`,
    );
    expect(problem).not.toContain('SECRET');
  });

  test('the state directory is created 0700 when missing, and a state written by this user loads back', async () => {
    const dir = path.join(stateDir(), 'made', 'here');
    const store = new FilePutBackStore(dir);
    expect(await store.load()).toEqual([]);
    expect(statSync(dir).mode & 0o7777).toBe(0o700);
    await store.save([entry('peer0'), entry('peer1')]);
    expect(statSync(path.join(dir, 'fleet-putbacks.json')).mode & 0o7777).toBe(0o600);
    expect((await new FilePutBackStore(dir).load()).map((e) => e.node)).toEqual(['peer0', 'peer1']);
  });
});

describe('writing the state', () => {
  test('a symbolic link planted at the temporary name a write used to take (<file>.<pid>.tmp) is not followed: its target is untouched', async () => {
    const dir = stateDir();
    const victim = path.join(root, `victim-${count}`);
    writeFileSync(victim, 'precious\n');
    const planted = path.join(dir, `fleet-putbacks.json.${process.pid}.tmp`);
    symlinkSync(victim, planted);
    const store = new FilePutBackStore(dir);
    await store.load();
    await store.save([entry('peer0')]);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(JSON.parse(readFileSync(path.join(dir, 'fleet-putbacks.json'), 'utf8'))).toEqual({
      version: 1,
      pending: [entry('peer0', { dueAt: expect.any(Number) as number })],
    });
    // The planted link is left as it was (not ours to remove), and no temporary file stays behind.
    expect(readdirSync(dir).sort()).toEqual(['fleet-putbacks.json', `fleet-putbacks.json.${process.pid}.tmp`]);
  });

  test(`more than ${maxPutBacks} put-backs are not written (so a start could not load them): PutBackPersistError naming the file and both counts`, async () => {
    const dir = stateDir();
    const many = Array.from({ length: maxPutBacks + 1 }, (_, index) => entry(`peer${index}.org1`));
    await expect(new FilePutBackStore(dir).save(many)).rejects.toThrow(PutBackPersistError);
    await expect(new FilePutBackStore(dir).save(many)).rejects.toThrow(
      new RegExp(
        `^cannot write the pending put-backs to ${path.join(dir, 'fleet-putbacks.json')}: ${maxPutBacks + 1} put-backs of \\d+ bytes, more than the ${maxPutBacks} put-backs`,
      ),
    );
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('reading the state', () => {
  test('a 300 MB state file is refused by its size before it is read', async () => {
    const dir = stateDir();
    const file = path.join(dir, 'fleet-putbacks.json');
    writeFileSync(file, '', { mode: 0o600 });
    // Sparse: 300 MB long, no disk taken.
    truncateSync(file, 300 * 1000 * 1000);
    expect(await loadProblem(new FilePutBackStore(dir))).toBe(
      `stateDirectory: cannot use ${file}: is 300000000 bytes, more than the 8388608 bytes (8 MiB) a put-back state file may hold; move it away to start without its put-backs`,
    );
  });

  test('a load error names the file and what is wrong, and quotes nothing of what it holds', async () => {
    const dir = stateDir();
    const file = path.join(dir, 'fleet-putbacks.json');
    writeFileSync(file, 'SECRET-TOKEN-0123456789 root:x:0:0', { mode: 0o600 });
    const problem = await loadProblem(new FilePutBackStore(dir));
    expect(problem).toBe(`stateDirectory: ${file} is not JSON; move it away to start without its put-backs`);
    writeFileSync(file, '{"version":1,"pending":[', { mode: 0o600 });
    expect(await loadProblem(new FilePutBackStore(dir))).toBe(
      `stateDirectory: ${file} is not JSON (it ends early); move it away to start without its put-backs`,
    );
    writeFileSync(file, '{"version":1,"pending":[] SECRET}', { mode: 0o600 });
    const positioned = await loadProblem(new FilePutBackStore(dir));
    expect(positioned).toMatch(/is not JSON \(at character 26, line 1 column 27\)/);
    expect(positioned).not.toContain('SECRET');
  });

  test('a dueAt of 1e20 (past the longest timer) is refused naming the entry and its node', async () => {
    const dir = stateDir();
    const file = path.join(dir, 'fleet-putbacks.json');
    writeFileSync(file, formatPutBacks([entry('peer0'), entry('peer1', { dueAt: 1e20 })]), { mode: 0o600 });
    const problem = await loadProblem(new FilePutBackStore(dir));
    expect(problem).toMatch(
      new RegExp(
        `^stateDirectory: ${file} is not a put-back document: pending\\.1\\.dueAt \\(node peer1\\): 100000000000000000000 is \\d+ days from now, past the 2147483647 ms \\(24\\.8 days\\) a timer can wait`,
      ),
    );
  });

  test("a previous of 'bogus=' (not a logging specification) is refused naming the entry, without quoting it", async () => {
    const dir = stateDir();
    const file = path.join(dir, 'fleet-putbacks.json');
    writeFileSync(file, formatPutBacks([entry('peer0', { previous: 'bogus=' })]), { mode: 0o600 });
    expect(await loadProblem(new FilePutBackStore(dir))).toBe(
      `stateDirectory: ${file} is not a put-back document: pending.0.previous (node peer0): not a valid logging specification; move it away to start without its put-backs`,
    );
  });
});

describe('parsePutBacks (the file and the ConfigMap key)', () => {
  const now = Date.now();
  const doc = (pending: unknown[]): string => JSON.stringify({ version: 1, pending });
  const problemOf = (text: string): string => {
    const parsed = parsePutBacks(text, now);
    if (parsed.ok) throw new Error(`accepted: ${text.slice(0, 200)}`);
    return parsed.problem;
  };

  test('a due time up to the longest timer from now is accepted, one ms more is not; an overdue one is accepted (it runs at once)', () => {
    expect(parsePutBacks(doc([entry('a', { dueAt: now + maxPutBackDelayMs })]), now).ok).toBe(true);
    expect(parsePutBacks(doc([entry('a', { dueAt: 0 })]), now).ok).toBe(true);
    expect(problemOf(doc([entry('a', { dueAt: now + maxPutBackDelayMs + 1 })]))).toMatch(
      /^is not a put-back document: pending\.0\.dueAt \(node a\): \d+ is 25 days from now/,
    );
  });

  test.each([
    ['a dueAt that is not a finite time', [{ ...entry('a'), dueAt: -1 }], 'pending.0.dueAt (node a): expected a time in ms since the epoch'],
    ['a dueAt as a string', [{ ...entry('a'), dueAt: '1' }], 'pending.0.dueAt (node a): expected a time in ms since the epoch'],
    ['a spec that does not parse', [entry('a', { specs: ['debug', 'x=nope'] })], 'pending.0.specs.1 (node a): not a valid logging specification'],
    ['no specs', [entry('a', { specs: [] })], 'pending.0.specs (node a): expected a list of at least one logging specification'],
    ['a node name with a newline and a bidi control', [entry('a\n\u202eb')], 'pending.0.node: expected a node name (1-512 characters of A-Z a-z 0-9 . _ : -)'],
    ['an actor that is not a string', [{ ...entry('a'), actor: 7 }], 'pending.0.actor (node a): expected a string'],
    ['two put-backs for one node', [entry('a'), entry('b'), entry('a')], 'pending.2.node (node a): pending.0 is for the same node'],
    ['an entry that is not an object', [entry('a'), 'peer0'], 'pending.1: expected an object'],
  ])('%s is refused, naming the entry', (_what, pending, problem) => {
    expect(problemOf(doc(pending))).toBe(`is not a put-back document: ${problem}`);
  });

  test(`more than ${maxPutBacks} entries are refused by their count before any is looked at`, () => {
    const many = Array.from({ length: maxPutBacks + 1 }, () => 0);
    expect(problemOf(doc(many))).toBe(`is not a put-back document: pending: ${maxPutBacks + 1} put-backs, more than the ${maxPutBacks} a document may hold`);
  });

  test('another version, or no list, is refused', () => {
    expect(problemOf('{"version":2,"pending":[]}')).toBe('is not a put-back document: version: expected 1');
    expect(problemOf('{"version":1}')).toBe('is not a put-back document: pending: expected a list');
    expect(problemOf('[1]')).toBe('is not a put-back document: document: expected an object {"version": 1, "pending": [...]}');
  });
});
