import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import * as ts from 'typescript/unstable/ast';
import { typeScriptFiles, withSyntaxTrees } from '../support/syntaxTrees';

/**
 * Exit statuses are written by name: MAM's own as `ExitCode.<name>` (src/core/base/errors.ts), another
 * program's (git's) as a named constant beside the call. `exitCode === 45` says nothing to a reader
 * and drifts from the table unseen. 0 stays a number: it is success for every program.
 */

const SRC = path.resolve(__dirname, '../../src');
const EXIT_NAMES = new Set(['exitCode', 'exit_code']);
const COMPARISONS = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
  ts.SyntaxKind.LessThanToken,
  ts.SyntaxKind.LessThanEqualsToken,
  ts.SyntaxKind.GreaterThanToken,
  ts.SyntaxKind.GreaterThanEqualsToken,
]);
const FALLBACKS = new Set([ts.SyntaxKind.QuestionQuestionToken, ts.SyntaxKind.BarBarToken]);

function bare(e: ts.Expression): ts.Expression {
  return ts.isParenthesizedExpression(e) ? bare(e.expression) : e;
}

/** `exitCode`, `x.exitCode`, `x.exit_code`, `x['exitCode']`. */
function isExitValue(node: ts.Expression): boolean {
  const e = bare(node);
  if (ts.isIdentifier(e)) return EXIT_NAMES.has(e.text);
  if (ts.isPropertyAccessExpression(e)) return ts.isIdentifier(e.name) && EXIT_NAMES.has(e.name.text);
  return ts.isElementAccessExpression(e) && ts.isStringLiteral(e.argumentExpression) && EXIT_NAMES.has(e.argumentExpression.text);
}

/** What a value can come out as: itself, either branch of a ternary, either side of `??` / `||`. */
function outcomes(node: ts.Expression): ts.Expression[] {
  const e = bare(node);
  if (ts.isConditionalExpression(e)) return [...outcomes(e.whenTrue), ...outcomes(e.whenFalse)];
  if (ts.isBinaryExpression(e) && FALLBACKS.has(e.operatorToken.kind)) return [...outcomes(e.left), ...outcomes(e.right)];
  return [e];
}

function isNonZeroNumber(node: ts.Node): boolean {
  const e = ts.isParenthesizedExpression(node) ? bare(node) : node;
  if (ts.isNumericLiteral(e)) return Number(e.text) !== 0;
  return ts.isPrefixUnaryExpression(e) && e.operator === ts.SyntaxKind.MinusToken && ts.isNumericLiteral(e.operand) && Number(e.operand.text) !== 0;
}

/** The literals other than 0 a value can come out as. */
const nonZeroIn = (e: ts.Expression | undefined): ts.Node[] => (e === undefined ? [] : outcomes(e).filter(isNonZeroNumber));
const mentionsExitCode = (e: ts.Expression): boolean =>
  outcomes(e).some((x) => isExitValue(x) || (ts.isPropertyAccessExpression(x) && ts.isIdentifier(x.expression) && x.expression.text === 'ExitCode'));

/** The values a function returns (its own `return`s, not those of functions inside it). */
function returnedValues(fn: ts.FunctionLikeDeclaration): ts.Expression[] {
  const body = fn.body;
  if (body === undefined) return [];
  if (!ts.isBlock(body)) return [body];
  const values: ts.Expression[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isReturnStatement(n) && n.expression) values.push(n.expression);
    if (!ts.isFunctionLikeDeclaration(n) && !ts.isClassLikeDeclaration(n)) n.forEachChild(visit);
  };
  body.forEachChild(visit);
  return values;
}

/**
 * Whether a function returns an exit status: its type says ExitCode, it is a CLI command's `run`,
 * or another of its returns is an ExitCode or an exit code.
 */
function returnsExitStatus(fn: ts.FunctionLikeDeclaration, tree: ts.SourceFile, inCli: boolean): boolean {
  if (fn.type && /\bExitCode\b/.test(fn.type.getText(tree))) return true;
  const name = ('name' in fn ? fn.name : undefined) ?? (ts.isPropertyAssignment(fn.parent) ? fn.parent.name : undefined);
  if (inCli && name && ts.isIdentifier(name) && name.text === 'run') return true;
  return returnedValues(fn).some(mentionsExitCode);
}

/** The number literal types other than 0 in `type` (`0 | 44 | 45`). */
function nonZeroLiteralTypes(type: ts.TypeNode | undefined): ts.Node[] {
  const found: ts.Node[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isLiteralTypeNode(n) && isNonZeroNumber(n.literal)) found.push(n.literal);
    n.forEachChild(visit);
  };
  if (type) visit(type);
  return found;
}

/** Each place in `tree` where an exit status is a bare number other than 0, as `label:line: that line`. */
export function numericExitCodes(tree: ts.SourceFile, label: string): string[] {
  const inCli = tree.fileName.split(path.sep).join('/').includes('/src/cli/');
  const lines = tree.text.split('\n');
  const seen = new Set<number>();
  const found: string[] = [];
  const flag = (literals: readonly ts.Node[]): void => {
    for (const literal of literals) {
      const at = literal.getStart(tree);
      if (seen.has(at)) continue; // `exitCode: r.exitCode ?? 1` breaks two rules with one number
      seen.add(at);
      const { line } = tree.getLineAndCharacterOfPosition(at);
      found.push(`${label}:${line + 1}: ${lines[line]!.trim().slice(0, 160)}`);
    }
  };
  const visit = (n: ts.Node): void => {
    if (ts.isCallExpression(n) && n.expression.getText(tree) === 'process.exit') flag(nonZeroIn(n.arguments[0]));
    else if (ts.isBinaryExpression(n)) {
      const op = n.operatorToken.kind;
      if (op === ts.SyntaxKind.EqualsToken && isExitValue(n.left)) flag(nonZeroIn(n.right));
      if (COMPARISONS.has(op) && isExitValue(n.left) && isNonZeroNumber(n.right)) flag([n.right]);
      if (COMPARISONS.has(op) && isExitValue(n.right) && isNonZeroNumber(n.left)) flag([n.left]);
      if (FALLBACKS.has(op) && isExitValue(n.left) && isNonZeroNumber(n.right)) flag([n.right]);
    } else if (ts.isSwitchStatement(n) && isExitValue(n.expression)) {
      for (const clause of n.caseBlock.clauses) if (ts.isCaseClause(clause) && isNonZeroNumber(clause.expression)) flag([clause.expression]);
    } else if ((ts.isPropertyAssignment(n) || ts.isVariableDeclaration(n)) && EXIT_NAMES.has(n.name.getText(tree))) flag(nonZeroIn(n.initializer));
    else if ((ts.isPropertySignatureDeclaration(n) || ts.isPropertyDeclaration(n)) && EXIT_NAMES.has(n.name.getText(tree))) flag(nonZeroLiteralTypes(n.type));
    if (ts.isFunctionLikeDeclaration(n) && n.body !== undefined && returnsExitStatus(n, tree, inCli)) {
      for (const value of returnedValues(n)) flag(nonZeroIn(value));
    }
    n.forEachChild(visit);
  };
  tree.forEachChild(visit);
  return found;
}

/** numericExitCodes of each file (path → text), labelled by `label`. */
function scan(files: Readonly<Record<string, string>>, label: (file: string) => string = (f) => f): Record<string, string[]> {
  return withSyntaxTrees(files, (tree) => Object.fromEntries(Object.keys(files).map((f) => [f, numericExitCodes(tree(f), label(f))])));
}

describe('exit statuses in src', () => {
  it('are written by name (ExitCode.<name>, or a named constant for a tool’s), never as a bare number other than 0', () => {
    const found = Object.values(scan(typeScriptFiles(SRC), (f) => path.relative(path.dirname(SRC), f))).flat();
    assert.deepEqual(found, [], `name these exit statuses: ExitCode.<name> from src/core/base/errors.ts, or a named constant for another program's:\n${found.join('\n')}`);
  });

  it('the scan finds each way a number stands for one, and leaves other numbers alone', () => {
    const flagged = [
      'if (outcome.exitCode === 45) say();',
      'const late = 45 !== r.exitCode;',
      'process.exit(3);',
      'process.exit(ok ? 0 : 64);',
      'process.exitCode = 70;',
      'function report(state: S): number { return state.exit_code ?? 1; }',
      'function f(): ExitCode { return 5; }',
      'function g(e: E) { if (e) return ExitCode.usage; return 64; }',
      'const x = (s: S) => (s.ok ? ExitCode.ok : 2);',
      'const o = { job, exitCode: 44 };',
      'interface R { exitCode: 0 | 44 | 45 }',
      'switch (r.exitCode) { case 45: break; }',
    ];
    const left = [
      'if (outcome.exitCode === ExitCode.onboardTimeout) say();',
      'if (r.exitCode === 0) return { conflicts: [] };',
      'process.exit(ExitCode.usage);',
      'const o = { job, exitCode: ExitCode.ok };',
      'function cmp(a: number, b: number) { return a < b ? -1 : 1; }',
      'if (code === 4 || code === 5) refuse();',
      'const port = r.port === 1883;',
      'function run() { return 1; }',
    ];
    const command = 'defineCommand({ async run(ctx) { if (ctx.bad) return 5; return 0; } });';
    const file = (group: string, i: number, folder = 'core'): string => path.join('/mam-samples', `${group}${i}`, 'src', folder, 'x.ts');
    const found = scan({
      ...Object.fromEntries(flagged.map((code, i) => [file('flagged', i), code])),
      ...Object.fromEntries(left.map((code, i) => [file('left', i), code])),
      [file('command', 0, 'cli')]: command,
    });
    flagged.forEach((code, i) => assert.notDeepEqual(found[file('flagged', i)], [], code));
    assert.equal(found[file('flagged', 5)]!.length, 1, 'one number breaking two rules is named once');
    left.forEach((code, i) => assert.deepEqual(found[file('left', i)], [], code));
    assert.equal(found[file('command', 0, 'cli')]!.length, 1, 'a CLI command’s run returns an exit status');
  });
});
