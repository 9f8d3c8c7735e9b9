import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import * as ts from 'typescript/unstable/ast';
import { typeScriptFiles, withSyntaxTrees } from '../support/syntaxTrees';

/**
 * Type assertions in src stay few (issue 23: at most 60). What is read from disk or the wire is
 * parsed by a schema into its type, so an `as` is a claim the compiler cannot check; the ones left are
 * listed where they were counted down (git log: "Type assertions in src"). `as const` asserts
 * nothing and is not counted; `x as unknown as T` counts twice.
 */
const LIMIT = 60;
const SRC = path.resolve(__dirname, '../../src');

function isAsConst(n: ts.AsExpression): boolean {
  return ts.isTypeReferenceNode(n.type) && ts.isIdentifier(n.type.typeName) && n.type.typeName.text === 'const';
}

/** Every `x as T` and `<T>x` in `tree` (`as const` aside), as `label:line: code`. */
export function typeAssertions(tree: ts.SourceFile, label: string): string[] {
  const found: string[] = [];
  const visit = (n: ts.Node): void => {
    if ((ts.isAsExpression(n) && !isAsConst(n)) || ts.isTypeAssertion(n)) {
      const { line } = tree.getLineAndCharacterOfPosition(n.getStart(tree));
      found.push(`${label}:${line + 1}: ${n.getText(tree).replace(/\s+/g, ' ').slice(0, 120)}`);
    }
    n.forEachChild(visit);
  };
  tree.forEachChild(visit);
  return found;
}

function countIn(files: Readonly<Record<string, string>>, label: (file: string) => string = (f) => f): Record<string, string[]> {
  return withSyntaxTrees(files, (tree) => Object.fromEntries(Object.keys(files).map((f) => [f, typeAssertions(tree(f), label(f))])));
}

describe('type assertions in src', () => {
  it(`are at most ${LIMIT}`, () => {
    const found = Object.values(countIn(typeScriptFiles(SRC), (f) => path.relative(path.dirname(SRC), f))).flat();
    assert.ok(found.length <= LIMIT, `${found.length} type assertions in src, more than ${LIMIT}: parse with a schema (src/core/base/schema.ts) or narrow with a guard instead. All of them:\n${found.join('\n')}`);
  });

  it('the count takes `x as T` and `<T>x`, each `as` of `as unknown as T`, and not `as const`', () => {
    const samples: Record<string, [code: string, count: number]> = {
      as: ['const a = JSON.parse(text) as Job;', 1],
      angle: ['const a = <Job>JSON.parse(text);', 1],
      twice: ['const a = value as unknown as Job;', 2],
      nested: ['f((x as A).y, [z as B]);', 2],
      asConst: ["const names = ['a', 'b'] as const;", 0],
      none: ['const a: Job = parse(jobSchema, value); const b = a satisfies Job; const c = a!;', 0],
    };
    const file = (name: string): string => path.join('/mam-samples', 'src', `${name}.ts`);
    const found = countIn(Object.fromEntries(Object.entries(samples).map(([name, [code]]) => [file(name), code])));
    for (const [name, [code, count]] of Object.entries(samples)) assert.equal(found[file(name)]!.length, count, code);
  });
});
