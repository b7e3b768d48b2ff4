// docs/deploy.md agrees with itself, with the code and with docs/capacity.md: it links to the generated model's figures instead
// of restating them, names the migrations that cannot run in a transaction, and says that instances cache credentials.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { BEGIN, DOCUMENT, END } from '../../../scripts/capacity-model.ts';
import { loadPostgresMigrations } from '../../../src/store/postgres/migrate.ts';

const ROOT = new URL('../../../', import.meta.url).pathname;
const deploy = readFileSync(join(ROOT, 'docs/deploy.md'), 'utf8');
const capacity = readFileSync(DOCUMENT, 'utf8');

/** Figures that name a measurement rather than a count: a decimal point or a thousands separator (6.9, 105,794). */
const FIGURE = /\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+/g;

/** How a hand-written page would restate a generated figure: as printed, or rounded to a whole number when that is distinctive. */
function spellings(figure: string): string[] {
  const value = Number(figure.replaceAll(',', ''));
  return value >= 100 ? [figure, Math.round(value).toLocaleString('en-US')] : [figure];
}

/** Paragraphs and list items, as a reader meets a statement. */
function statements(markdown: string): string[] {
  return markdown.split(/\n\s*\n|\n(?=\s*(?:-|\d+\.) )/).map((text) => text.replace(/\s+/g, ' '));
}

describe('docs/deploy.md against itself, the code and docs/capacity.md', () => {
  test("restates none of capacity.md's generated figures, and links to them where it speaks of per-answer costs and one Redis's ceiling", () => {
    const generated = capacity.slice(capacity.indexOf(BEGIN), capacity.indexOf(END));
    // The per-answer costs and where each limit is reached: what a deployment page would quote (the sizing table's totals
    // for 10^8 accounts are the model's alone).
    const tables = generated.split(/\n\n/).filter((block) => /^\| (per answer|limit) \|/.test(block));
    assert.equal(tables.length, 2, 'the generated part should hold the per-answer table and the limits table');
    const cells = tables
      .flatMap((table) => table.split('\n'))
      .filter((line) => line.startsWith('|') && !line.startsWith('| ---'))
      .flatMap((line) => line.split('|').slice(2));
    const figures = new Set(cells.flatMap((cell) => cell.match(FIGURE) ?? []));
    assert.ok(figures.size > 15, `too few figures read from the generated part: ${[...figures].join(' ')}`);
    const restated = [...figures].filter((figure) =>
      spellings(figure).some((spelled) => new RegExp(`(?<![\\d.,])${spelled.replace(/[.]/g, '\\.')}(?![\\d]|[.,]\\d)`).test(deploy)),
    );
    assert.deepEqual(restated, [], `docs/deploy.md restates figures that docs/capacity.md generates; link to capacity.md#the-model instead`);
    const redisWhen = statements(deploy).find((text) => text.startsWith('**When.**'));
    assert.match(redisWhen ?? '', /\]\(capacity\.md#the-model\)/, "the Redis Cluster's 'When.' links to capacity.md's model for one Redis's ceiling");
    const costs = deploy.split('\n## What the scale-out path costs per answer\n')[1]?.split('\n## ')[0] ?? '';
    assert.match(costs, /\]\(capacity\.md#the-model\)/, "'What the scale-out path costs per answer' links to capacity.md's model");
    assert.match(capacity, /\n## The model\n/, 'capacity.md#the-model is the section the links name');
  });

  test('every statement about migrations and a direct connection names the migrations that run outside a transaction', () => {
    const outside = loadPostgresMigrations()
      .filter((migration) => migration.transactional === false)
      .map((migration) => String(migration.version).padStart(3, '0'));
    assert.ok(outside.length > 0, 'no migration is marked to run outside a transaction');
    for (const [file, text] of [['docs/deploy.md', deploy], ['docs/capacity.md', capacity]] as const) {
      const about = statements(text).filter((statement) => /migrat/i.test(statement) && /direct connection|directly/i.test(statement));
      assert.ok(about.length > 0, `${file} says nothing of migrations and a direct connection`);
      for (const statement of about) {
        const missing = outside.filter((version) => !statement.includes(version));
        assert.deepEqual(missing, [], `${file}: "${statement.slice(0, 160)}..." does not name migration(s) ${missing.join(', ')}, which run outside a transaction`);
        assert.doesNotMatch(statement, /none so far/, `${file} says no migration runs outside a transaction`);
      }
    }
  });

  test('no section says that instances on PostgreSQL cache no credentials', () => {
    assert.match(deploy, /\n## Credentials cached per instance\n/);
    const denying = statements(deploy).filter((statement) => /no instance caches|caches? no credentials/i.test(statement));
    assert.deepEqual(denying, [], 'docs/deploy.md contradicts its own "Credentials cached per instance"');
  });
});
