/**
 * Seeded generation of PUT /logspec bodies: valid and invalid specs, wrong types, unknown keys,
 * empty bodies and malformed JSON. The same seed gives the same bodies on every machine.
 */

import { seededRandom } from '../support/random';

export interface GeneratedBody {
  category: string;
  body: string;
}

const levels = ['payload', 'debug', 'info', 'warn', 'warning', 'error', 'dpanic', 'panic', 'fatal', 'notice', 'critical'];
const nameParts = ['gossip', 'ledger', 'a', 'b', 'x_1', 'peer#2', 'msp-x', 'grpc', 'core', 'z9'];

export function generateBodies(seed: number, count: number): GeneratedBody[] {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const chance = (p: number): boolean => random() < p;

  const level = (): string => {
    const name = pick(levels);
    return chance(0.3) ? name.toUpperCase() : name;
  };
  const loggerName = (): string => {
    const parts = Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(nameParts));
    return parts.join('.') + (chance(0.15) ? '.' : '');
  };
  const segment = (): string => {
    if (chance(0.3)) return level();
    const names = Array.from({ length: 1 + Math.floor(random() * 3) }, loggerName);
    return `${names.join(',')}=${level()}`;
  };
  const validSpec = (): string => {
    if (chance(0.03)) return '';
    return Array.from({ length: 1 + Math.floor(random() * 4) }, segment).join(':');
  };
  const mutations: Array<(spec: string) => string> = [
    (s) => `${s}:Debug`,
    (s) => `${s}:bogus`,
    (s) => `=${level()}:${s}`,
    (s) => `${s}:a*=info`,
    (s) => `${s}:.a=debug`,
    (s) => `${s}:a..b=debug`,
    (s) => ` ${s}`,
    (s) => `${s}:a=b=info`,
    (s) => `${s}:,a=info`,
    (s) => `${s}:é=info`,
    (s) => `${s}:a=`,
    (s) => `${s}:${level().slice(0, 3)}`,
    (s) => `${s}:a b=info`,
    (s) => `${s}::`,
    (s) => `${s}:a=info:`,
  ];
  const json = (value: unknown): string => JSON.stringify(value);

  const generators: Record<string, () => string> = {
    'valid spec': () => json({ spec: validSpec() }),
    'invalid spec': () => json({ spec: pick(mutations)(validSpec()) }),
    'wrong type': () => json({ spec: pick<unknown>([5, true, null, [validSpec()], { level: 'debug' }, 1.5, -1]) }),
    'unknown keys': () =>
      pick([
        () => json({ spec: validSpec(), extra: 1 }),
        () => json({ level: validSpec() }),
        () => json({ Spec: validSpec() }),
        () => json({ SPEC: validSpec() }),
        () => '{}',
        () => json({ spec: validSpec(), spec2: 'debug' }),
      ])(),
    'empty body': () => pick(['', ' ', '\n', '\t\r\n']),
    'bad JSON': () => {
      const good = json({ spec: validSpec() });
      return pick([
        () => good.slice(0, Math.max(1, Math.floor(random() * (good.length - 1)))),
        () => `${good} x`,
        () => `${good}${good}`,
        () => good.replace(/"/g, "'"),
        () => `{spec: ${json(validSpec())}}`,
        () => `{"spec": ${json(validSpec())},}`,
        () => 'NaN',
        () => `[${good}`,
      ])();
    },
    'JSON not an object': () => pick(['null', '[]', json(validSpec()), '5', 'true', json([{ spec: 'debug' }])]),
  };
  const weights: Array<[string, number]> = [
    ['valid spec', 40],
    ['invalid spec', 25],
    ['wrong type', 8],
    ['unknown keys', 10],
    ['empty body', 3],
    ['bad JSON', 9],
    ['JSON not an object', 5],
  ];
  const total = weights.reduce((sum, [, w]) => sum + w, 0);
  const bodies: GeneratedBody[] = [];
  for (let i = 0; i < count; i++) {
    let roll = random() * total;
    let category = 'valid spec';
    for (const [name, weight] of weights) {
      roll -= weight;
      if (roll < 0) {
        category = name;
        break;
      }
    }
    const generate = generators[category];
    if (!generate) throw new Error(`no generator for ${category}`);
    bodies.push({ category, body: generate() });
  }
  return bodies;
}
