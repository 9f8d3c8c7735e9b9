import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SourceFile } from 'typescript/unstable/ast';
import { createVirtualFileSystem } from 'typescript/unstable/fs';
import { API } from 'typescript/unstable/sync';

/**
 * TypeScript's own syntax trees, for tests that read how the code is written (type assertions,
 * exit statuses). TypeScript 7's API parses in its native compiler, a child process: this starts
 * one, parses `files` (absolute path → text) as a project of their own — nothing resolved, no lib,
 * nothing read from disk — hands each file's tree to `use`, and stops it.
 */
export function withSyntaxTrees<T>(files: Readonly<Record<string, string>>, use: (tree: (file: string) => SourceFile) => T): T {
  const names = Object.keys(files);
  const config = path.join(path.dirname(names[0] ?? process.cwd()), `__syntax-${process.pid}.tsconfig.json`);
  const fsView = createVirtualFileSystem({ ...files, [config]: JSON.stringify({ compilerOptions: { noResolve: true, noLib: true, types: [] }, files: names }) });
  const api = new API({ cwd: process.cwd(), fs: fsView });
  try {
    const project = api.updateSnapshot({ openProject: config }).getProject(config);
    if (!project) throw new Error('TypeScript opened no project for the files');
    return use((file) => {
      const tree = project.program.getSourceFile(file);
      if (!tree) throw new Error(`TypeScript did not parse ${file}`);
      return tree;
    });
  } finally {
    api.close();
  }
}

/** Every .ts file under `dir` (declaration files aside), with its text. */
export function typeScriptFiles(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      if (e.isDirectory()) walk(full);
      else if (/\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts')) files[full] = fs.readFileSync(full, 'utf8');
    }
  };
  walk(dir);
  return files;
}
