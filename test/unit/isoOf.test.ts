import * as assert from 'node:assert/strict';
import { isoOf } from '../../src/core/base/clock';

describe('isoOf (the timestamps every record of .mam/ keeps)', () => {
  it("formats as toISOString does: every millisecond's digits, leap days, the year's ends", () => {
    const cases = [0, 1, 9, 10, 99, 100, 999, Date.UTC(2024, 1, 29, 23, 59, 59, 999), Date.UTC(2026, 11, 31, 23, 59, 59, 5), Date.UTC(1999, 0, 1), -1, -86_400_000 * 365];
    for (let i = 0; i < 2000; i++) cases.push(Math.floor((i * 7_919_993_101) % 253_402_300_799_999));
    for (const t of cases) assert.equal(isoOf(new Date(t)), new Date(t).toISOString(), `at ${t}`);
  });

  it('hands years outside 0–9999 to toISOString, and an invalid date throws as it does', () => {
    for (const t of [Date.UTC(10_000, 0, 1), Date.UTC(-1, 0, 1), Date.UTC(0, 0, 1) - 1, 8.64e15]) assert.equal(isoOf(new Date(t)), new Date(t).toISOString(), `at ${t}`);
    assert.throws(() => isoOf(new Date(Number.NaN)), RangeError);
  });
});
