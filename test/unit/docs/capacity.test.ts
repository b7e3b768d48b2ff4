// docs/capacity.md's numbers are the capacity model's, computed from the bench's committed results (scripts/capacity-model.ts).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, test } from 'node:test';
import { BEGIN, DOCUMENT, END, readModelInput, renderModel, RESULTS, size, type PerAnswer } from '../../../scripts/capacity-model.ts';

const ROOT = new URL('../../../', import.meta.url).pathname;

describe('the capacity model', () => {
  test("docs/capacity.md shows exactly what the script computes from bench/scale-out/results.json", () => {
    const document = readFileSync(DOCUMENT, 'utf8');
    const shown = document.slice(document.indexOf(BEGIN), document.indexOf(END) + END.length);
    assert.ok(shown.startsWith(BEGIN), 'docs/capacity.md has no generated part');
    const computed = renderModel(readModelInput(readFileSync(RESULTS, 'utf8')), relative(ROOT, RESULTS));
    assert.equal(shown, computed, 'docs/capacity.md and the model disagree: run `node scripts/capacity-model.ts --write` after a bench run');
  });

  test('sizes a deployment from per-answer figures as worked out by hand', () => {
    const answer = (serviceMicros: number, postgresMicros: number, redisMicros: number, retainedBytes: number): PerAnswer => ({
      serviceMicros,
      postgresMicros,
      redisMicros,
      pgTransactions: 0,
      redisCommands: 1,
      walBytes: 0,
      retainedBytes,
    });
    // 10^5 requests a second, 95 % reads at 100 µs of service CPU and 5 % writes at 1,000: 95 + 50 = 145 µs a request on
    // average, 14.5 cores, 25 processes at 60 % (14.5 / 0.6 = 24.2), 250 direct connections at 10 each.
    const sizing = size(answer(100, 10, 5, 0), answer(1000, 500, 20, 2000));
    assert.equal(sizing.serviceCores.toFixed(3), '14.500');
    assert.equal(sizing.processes, 25);
    assert.equal(sizing.directConnections, 250);
    // PostgreSQL: 0.95 × 10 + 0.05 × 500 = 34.5 µs, 3.45 cores, 7 server connections at 2 per core.
    assert.equal(sizing.postgresCores.toFixed(3), '3.450');
    assert.equal(sizing.pgbouncerServerConnections, 7);
    // Redis: 0.95 × 5 + 0.05 × 20 = 5.75 µs, 0.575 cores, 2 shards at 50 %.
    assert.equal(sizing.redisCores.toFixed(4), '0.5750');
    assert.equal(sizing.redisShards, 2);
    // Kept: 5,000 writes a second × 2,000 bytes × 86,400 s = 864 GB a day.
    assert.equal(sizing.storageBytesPerDay, 864e9);
    // Direct connections: 9 processes (97 / 10) × 0.6 cores / 145 µs = 37,241 requests a second, the lowest limit here
    // (one Redis: 1 / 5.75 µs = 173,913; 64 PostgreSQL cores / 34.5 µs = 1,855,072).
    assert.equal(Math.round(sizing.limits[0]!.requestsPerSecond), 37_241);
    assert.match(sizing.limits[0]!.what, /PostgreSQL connections, direct/);
    assert.equal(Math.round(sizing.limits[1]!.requestsPerSecond), 173_913);
  });
});
