import { randomUUID } from 'node:crypto';
import { newRequestId } from '../../../src/http/request-ids';

/** A version 4 UUID as RFC 9562 writes it, lower case (what `crypto.randomUUID()` gives). */
const uuidV4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('newRequestId', () => {
  // Over 7 batches of 128: the ids of every batch, and those at the batches' edges.
  const ids = Array.from({ length: 1000 }, () => newRequestId());

  it("gives version 4 UUIDs in randomUUID's text form", () => {
    expect(randomUUID()).toMatch(uuidV4);
    for (const id of ids) expect(id).toMatch(uuidV4);
  });

  it('never gives the same id twice', () => {
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('draws every random digit afresh: each position takes all its values over 1,000 ids', () => {
    // A digit missing from 1,000 draws of 16 has a chance of (15/16)^1000, about 1e-28.
    const values = Array.from({ length: 36 }, () => new Set<string>());
    for (const id of ids) [...id].forEach((character, position) => values[position]?.add(character));
    const counts = values.map((set) => set.size);
    const dashes = [8, 13, 18, 23];
    const version = 14;
    const variant = 19;
    counts.forEach((count, position) => {
      const expected = dashes.includes(position) || position === version ? 1 : position === variant ? 4 : 16;
      expect({ position, count }).toEqual({ position, count: expected });
    });
  });
});
