import { join } from 'node:path';
import ts from 'typescript';
import { type Issue, type ManifestDoc, where } from './documents.js';
import { loadModel, modelPath } from './schema.js';

// Unknown fields. The Kubernetes OpenAPI definitions do not forbid extra properties, so the schema check lets a
// misspelt field (`readinesProbe`) through, and the API server would drop or refuse it only at apply time. This walks
// each document along the TypeScript declarations `kubernetes-models` generates from the same definitions (the
// interface of every object: its properties, or a string index for maps such as labels) and reports every key the
// declared type does not have.

const VIRTUAL = 'k8s-manifest-types.ts';
/** Programs by root and kinds: building one takes seconds, and a run (or a test) asks for the same kinds again. */
const programs = new Map<string, { checker: ts.TypeChecker; types: Map<string, ts.Type> }>();

function typeProgram(root: string, kinds: Array<[string, string]>): { checker: ts.TypeChecker; types: Map<string, ts.Type> } {
  const lines = kinds.map(([apiVersion, kind], i) => `import type { I${kind} as T${i} } from '${modelPath(apiVersion, kind)}';`);
  lines.push(...kinds.map((_, i) => `export declare const t${i}: T${i};`));
  const file = join(root, VIRTUAL);
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const text = lines.join('\n');
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, lang, ...rest) =>
    name === file ? ts.createSourceFile(name, text, lang) : getSourceFile(name, lang, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file)!;
  const types = new Map<string, ts.Type>();
  const moduleSymbol = checker.getSymbolAtLocation(source);
  if (!moduleSymbol) return { checker, types };
  kinds.forEach(([apiVersion, kind], i) => {
    const sym = checker.tryGetMemberInModuleExports(`t${i}`, moduleSymbol);
    if (!sym) return;
    const t = checker.getTypeOfSymbol(sym);
    if (!(t.flags & ts.TypeFlags.Any)) types.set(`${apiVersion} ${kind}`, t);
  });
  return { checker, types };
}

function objectMembers(checker: ts.TypeChecker, type: ts.Type): ts.Type[] {
  const t = checker.getNonNullableType(type);
  const members = t.isUnion() ? t.types : [t];
  return members.filter((m) => m.flags & ts.TypeFlags.Object);
}

function walk(checker: ts.TypeChecker, value: unknown, type: ts.Type, path: string, out: string[]): void {
  if (value === null || typeof value !== 'object') return;
  const members = objectMembers(checker, type);
  if (members.length === 0) return; // any, unknown or a primitive type: the schema check covers it
  if (Array.isArray(value)) {
    const element = members.map((m) => checker.getIndexTypeOfType(m, ts.IndexKind.Number)).find((e) => e !== undefined);
    if (element) {
      for (const [i, v] of value.entries()) walk(checker, v, element, `${path}/${i}`, out);
    }
    return;
  }
  for (const [key, v] of Object.entries(value)) {
    const prop = members.map((m) => m.getProperty(key)).find((p) => p !== undefined);
    if (prop) {
      walk(checker, v, checker.getTypeOfSymbol(prop), `${path}/${key}`, out);
      continue;
    }
    const index = members.map((m) => checker.getIndexTypeOfType(m, ts.IndexKind.String)).find((e) => e !== undefined);
    if (index) walk(checker, v, index, `${path}/${key}`, out);
    else out.push(`${path}/${key}: unknown field (${members.map((m) => checker.typeToString(m)).join(' | ')} has no "${key}")`);
  }
}

/** Unknown-field issues of documents whose kind has a model; `root` is where node_modules is found from. */
export function unknownFieldIssues(docs: ManifestDoc[], root: string): Issue[] {
  const kinds = new Map<string, [string, string]>();
  for (const d of docs) {
    const { apiVersion, kind } = d.body;
    if (typeof apiVersion === 'string' && typeof kind === 'string' && loadModel(apiVersion, kind)) {
      kinds.set(`${apiVersion} ${kind}`, [apiVersion, kind]);
    }
  }
  const wanted = [...kinds.values()].sort((a, b) => `${a}`.localeCompare(`${b}`));
  const cacheKey = `${root}|${wanted.join('|')}`;
  const program = programs.get(cacheKey) ?? typeProgram(root, wanted);
  programs.set(cacheKey, program);
  const { checker, types } = program;
  const issues: Issue[] = [];
  for (const d of docs) {
    const key = `${String(d.body.apiVersion)} ${String(d.body.kind)}`;
    if (!kinds.has(key)) continue; // no model for it: schemaIssues reports it
    const type = types.get(key);
    if (!type) {
      issues.push({ where: where(d), message: `no TypeScript declarations for ${key}: its fields cannot be checked` });
      continue;
    }
    const out: string[] = [];
    walk(checker, d.body, type, '', out);
    issues.push(...out.map((message) => ({ where: where(d), message })));
  }
  return issues;
}
