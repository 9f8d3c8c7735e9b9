import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The command and view IDs the extension's code uses and those package.json contributes are the
 * same: a view declares its own IDs in its own file (src/views/merge/mergeQueueTree.ts), shared
 * ones live in src/views/host/commandIds.ts, and nothing else has to list them. Every `'mam.…'`
 * string in src is a contributed command or view, a setting, a key a `when` clause or an
 * activation event names (context keys, tree items' context values, the report's webview type),
 * or one of the few strings listed below; every contributed command and view is used in src.
 */
const ROOT = path.resolve(__dirname, '../..');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  activationEvents: string[];
  contributes: {
    commands: Array<{ command: string }>;
    views: Record<string, Array<{ id: string }>>;
    viewsContainers: Record<string, Array<{ id: string }>>;
    configuration: { properties: Record<string, unknown> };
    menus: Record<string, Array<{ when?: string }>>;
    viewsWelcome?: Array<{ view: string; when?: string }>;
    mcpServerDefinitionProviders: Array<{ id: string }>;
  };
};

/** Strings that are not contributions, each with why: keys of VS Code's storage (mementos, secret storage) and the rest. */
const NOT_CONTRIBUTED = new Map([
  ...['mam.person.last', 'mam.statusBar.failuresSeenUntil', 'mam.init.notNow', 'mam.init.neverAsk', 'mam.gitignore.neverAsk', 'mam.broker.password'].map((k) => [k, 'a storage key'] as const),
  ['mam.round.unpinned', 'the context value of a round without a snapshot: no menu matches it, on purpose'],
  ['mam.svg', "the report panel's icon, a file in media/"],
]);

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

/** Every whole `'mam.…'` string literal in src, with the files it is in. */
function literals(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of sourceFiles(path.join(ROOT, 'src'))) {
    for (const m of fs.readFileSync(file, 'utf8').matchAll(/'(mam\.[A-Za-z][A-Za-z0-9]*(?:\.[A-Za-z][A-Za-z0-9]*)*)'/g)) {
      const files = found.get(m[1]!) ?? [];
      files.push(path.relative(ROOT, file));
      found.set(m[1]!, files);
    }
  }
  return found;
}

describe('the command and view IDs in src are the ones package.json contributes', () => {
  const c = pkg.contributes;
  const commands = new Set(c.commands.map((x) => x.command));
  const views = new Set(Object.values(c.views).flat().map((v) => v.id));
  const containers = new Set(Object.values(c.viewsContainers).flat().map((v) => v.id));
  const settings = new Set(Object.keys(c.configuration.properties));
  const mcpProviders = new Set(c.mcpServerDefinitionProviders.map((p) => p.id));
  /** What `when` clauses and activation events name (in regexes, dots escaped). */
  const conditions = [...Object.values(c.menus).flat().map((m) => m.when ?? ''), ...(c.viewsWelcome ?? []).map((w) => w.when ?? ''), ...pkg.activationEvents].join('\n').replace(/\\\\?\./g, '.');
  const used = literals();

  it('src uses many of them (the scan works)', () => {
    assert.ok(used.size > 40, `${used.size} IDs found`);
    assert.ok(used.has('mam.runMergeQueue') && used.has('mam.mergeQueue'), 'the Merge Queue view declares its own IDs');
  });

  it("every 'mam.…' string in src is contributed, or a key package.json's conditions name, or listed here", () => {
    const unknown = [...used].filter(([id]) => {
      if (commands.has(id) || views.has(id) || containers.has(id) || settings.has(id) || mcpProviders.has(id) || NOT_CONTRIBUTED.has(id)) return false;
      // `<view>.focus`: the command VS Code makes for every view.
      if (id.endsWith('.focus') && views.has(id.slice(0, -'.focus'.length))) return false;
      return !conditions.includes(id);
    });
    assert.deepEqual(unknown.map(([id, files]) => `${id} (${files.join(', ')})`), []);
  });

  it('every contributed command, view and MCP server provider is used in src', () => {
    assert.deepEqual([...commands].filter((id) => !used.has(id)), [], 'commands');
    assert.deepEqual([...views].filter((id) => !used.has(id)), [], 'views');
    assert.deepEqual([...mcpProviders].filter((id) => !used.has(id)), [], 'MCP server definition providers');
  });

  it('every string listed here as not contributed is still used', () => {
    assert.deepEqual([...NOT_CONTRIBUTED.keys()].filter((id) => !used.has(id)), []);
  });
});
