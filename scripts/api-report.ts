/**
 * The library's API reference, docs/reference/api.md, generated from its types with the
 * TypeScript compiler API (`make docs`; test/unit/docs/api-report.test.ts fails when the committed
 * file differs, so a change of the public surface shows in review as a change of that file).
 *
 * How: the declarations `npm run build` would emit (tsconfig.build.json, `stripInternal` included)
 * are emitted in memory from the sources (no build needed), then read back as a program of `.d.ts`
 * files. For each entry point (`fabric-ops`: src/index.ts, `fabric-ops/chaincode`:
 * src/chaincode/index.ts) every export is printed with its declaration, as the published
 * declarations have it (its documentation comment above it as prose, its members' in the code), sorted by
 * name. Types that exports name but the entry points do not export (a parameter's interface, a
 * union's members) are printed too, in a section of their own, since changing them changes the
 * public surface as much.
 *
 * Why not @microsoft/api-extractor: 7.60.1 installs from the npm registry and bundles TypeScript
 * 6.0.3, so it would work here; but it reads the built `dist/*.d.ts` (a unit test would depend on a
 * build), it only warns about types reachable from the exports without printing them
 * (`ae-forgotten-export`), and it adds 43 packages to the development dependencies. This is a
 * couple of hundred lines over the TypeScript the project already has.
 */
import path from 'node:path';
import ts from 'typescript';

export interface EntryPoint {
  /** The import specifier users write. */
  specifier: string;
  /** The source file, relative to the repository. */
  source: string;
}

export const entryPoints: readonly EntryPoint[] = [
  { specifier: 'fabric-ops', source: 'src/index.ts' },
  { specifier: 'fabric-ops/chaincode', source: 'src/chaincode/index.ts' },
];

/** The declarations of the library as tsconfig.build.json emits them, in memory: absolute .d.ts path -> text. */
function emitDeclarations(root: string): { files: Map<string, string>; options: ts.CompilerOptions; outDir: string } {
  const configFile = path.join(root, 'tsconfig.build.json');
  const read = ts.readConfigFile(configFile, (file) => ts.sys.readFile(file));
  if (read.error) throw new Error(`${configFile}: ${ts.flattenDiagnosticMessageText(read.error.messageText, '\n')}`);
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, root, undefined, configFile);
  const outDir = parsed.options.outDir ?? path.join(root, 'dist');
  const options: ts.CompilerOptions = {
    ...parsed.options,
    declaration: true,
    emitDeclarationOnly: true,
    declarationMap: false,
    sourceMap: false,
    incremental: false,
    composite: false,
    noEmit: false,
  };
  delete options.tsBuildInfoFile;
  const program = ts.createProgram({ rootNames: entryPoints.map((entry) => path.join(root, entry.source)), options });
  const files = new Map<string, string>();
  const result = program.emit(undefined, (file, text) => {
    if (file.endsWith('.d.ts')) files.set(path.resolve(file), text);
  });
  const errors = [...program.getSyntacticDiagnostics(), ...result.diagnostics].filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length > 0) {
    throw new Error(
      `declaration emit failed:\n${ts.formatDiagnostics(errors, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => '\n' })}`,
    );
  }
  return { files, options, outDir: path.resolve(outDir) };
}

/** A program over the emitted declarations (the rest, node's types and the dependencies', from the disk). */
function declarationProgram(files: Map<string, string>, options: ts.CompilerOptions, roots: string[]): ts.Program {
  const host = ts.createCompilerHost({ ...options, noEmit: true });
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (file) => files.get(path.resolve(file)) ?? readFile(file);
  host.fileExists = (file) => files.has(path.resolve(file)) || fileExists(file);
  host.getSourceFile = (file, language, onError, create) => {
    const text = files.get(path.resolve(file));
    return text === undefined ? getSourceFile(file, language, onError, create) : ts.createSourceFile(file, text, language, true);
  };
  return ts.createProgram({ rootNames: roots, options: { ...options, noEmit: true }, host });
}

const printer = ts.createPrinter({ removeComments: false, newLine: ts.NewLineKind.LineFeed });

/** The statement to print for a declaration: a variable's whole statement, else the declaration itself. */
function printable(declaration: ts.Declaration): ts.Node {
  if (ts.isVariableDeclaration(declaration) && ts.isVariableDeclarationList(declaration.parent)) return declaration.parent.parent;
  return declaration;
}

/** The declaration as it reads in a .d.ts, its members' comments kept, without `export` and `declare` (every one printed here is either). */
function printDeclaration(declaration: ts.Declaration): string {
  const node = printable(declaration);
  const text = printer.printNode(ts.EmitHint.Unspecified, node, node.getSourceFile());
  // Its own documentation comment is the prose above the block; its members' stay in it.
  return text
    .replace(/^(?:\s*\/\*[\s\S]*?\*\/|\s*\/\/[^\n]*)*\s*/, '')
    .replace(/^export (default )?/, '')
    .replace(/^declare /, '');
}

/** Symbols a declaration's types name: type references, heritage clauses, typeof queries, import types. */
function referencedSymbols(node: ts.Node, checker: ts.TypeChecker): ts.Symbol[] {
  const found: ts.Symbol[] = [];
  const rightmost = (name: ts.EntityName | ts.Expression): ts.Node =>
    ts.isQualifiedName(name) ? name.right : ts.isPropertyAccessExpression(name) ? name.name : name;
  const add = (at: ts.Node | undefined): void => {
    if (!at) return;
    const symbol = checker.getSymbolAtLocation(at);
    if (symbol) found.push(symbol);
  };
  const visit = (child: ts.Node): void => {
    if (ts.isTypeReferenceNode(child)) add(rightmost(child.typeName));
    else if (ts.isExpressionWithTypeArguments(child)) add(rightmost(child.expression));
    else if (ts.isTypeQueryNode(child)) add(rightmost(child.exprName));
    else if (ts.isImportTypeNode(child) && child.qualifier) add(rightmost(child.qualifier));
    ts.forEachChild(child, visit);
  };
  visit(node);
  return found;
}

function resolve(symbol: ts.Symbol, checker: ts.TypeChecker): ts.Symbol {
  return symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
}

function documentation(symbol: ts.Symbol, checker: ts.TypeChecker): string {
  return ts
    .displayPartsToString(symbol.getDocumentationComment(checker))
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trim();
}

interface Printed {
  name: string;
  /** Where a type that is not exported is declared (relative to src/, without extension). */
  module?: string;
  doc: string;
  code: string;
}

/** Documentation text as Markdown prose: `<` and `>` outside code spans would read as HTML. */
function escapeProse(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part) => (part.startsWith('`') ? part : part.replace(/</g, '&lt;').replace(/>/g, '&gt;')))
    .join('');
}

/** Markdown: the documentation as prose (one paragraph per blank line), then the declaration. */
function renderEntry(entry: Printed, headingLevel: string): string {
  const title = entry.module === undefined ? `\`${entry.name}\`` : `\`${entry.name}\` (${entry.module})`;
  const prose = entry.doc === '' ? [] : [escapeProse(entry.doc.replace(/\n(?!\n)/g, ' ').replace(/ {2,}/g, ' ')), ''];
  return [`${headingLevel} ${title}`, '', ...prose, '```ts', entry.code, '```', ''].join('\n');
}

/** docs/reference/api.md for the repository at `root`. */
export function renderApiReport(root: string): string {
  const { files, options, outDir } = emitDeclarations(root);
  const srcDir = path.join(root, 'src');
  const declarationOf = (source: string): string => path.join(outDir, path.relative(srcDir, path.join(root, source)).replace(/\.ts$/, '.d.ts'));
  const program = declarationProgram(
    files,
    options,
    entryPoints.map((entry) => declarationOf(entry.source)),
  );
  const checker = program.getTypeChecker();
  const ours = (declaration: ts.Declaration): boolean => files.has(path.resolve(declaration.getSourceFile().fileName));

  const out: string[] = [
    '# Library API reference',
    '',
    "<!-- Generated by scripts/api-report.ts (make docs) from the library's types; test/unit/docs/api-report.test.ts fails when this file differs. Do not edit. -->",
    '',
    'Every export of the two entry points, as the published declarations (`dist/*.d.ts`) have it, with its',
    'documentation comment; then the types those exports use without exporting them by name. A change',
    'of the public surface is a change of this file. How to use the library: [the library guide](../library.md).',
    '',
  ];
  const exported = new Set<ts.Symbol>();
  const perEntry: Array<{ entry: EntryPoint; printed: Printed[] }> = [];
  const queue: ts.Symbol[] = [];
  for (const entry of entryPoints) {
    const file = program.getSourceFile(declarationOf(entry.source));
    if (!file) throw new Error(`${entry.source}: no declarations emitted`);
    const moduleSymbol = checker.getSymbolAtLocation(file);
    if (!moduleSymbol) throw new Error(`${entry.source}: not a module`);
    const printed: Printed[] = [];
    for (const exportSymbol of [...checker.getExportsOfModule(moduleSymbol)].sort((a, b) => a.name.localeCompare(b.name, 'en'))) {
      const target = resolve(exportSymbol, checker);
      exported.add(target);
      const declarations = target.declarations ?? [];
      const code = declarations.map(printDeclaration).join('\n');
      const renamed = target.name !== exportSymbol.name && target.name !== 'default' ? `// exported as ${exportSymbol.name}\n` : '';
      printed.push({ name: exportSymbol.name, doc: documentation(target, checker), code: `${renamed}${code}` });
      for (const declaration of declarations) queue.push(...referencedSymbols(printable(declaration), checker));
    }
    perEntry.push({ entry, printed });
  }

  // The types the exports use without exporting them, transitively.
  const reachable = new Map<ts.Symbol, Printed>();
  while (queue.length > 0) {
    const target = resolve(queue.pop() as ts.Symbol, checker);
    if (exported.has(target) || reachable.has(target)) continue;
    const declarations = (target.declarations ?? []).filter(ours);
    if (declarations.length === 0) continue;
    if (target.flags & (ts.SymbolFlags.TypeParameter | ts.SymbolFlags.EnumMember | ts.SymbolFlags.Property | ts.SymbolFlags.Method)) continue;
    const first = declarations[0] as ts.Declaration;
    const module = path
      .relative(outDir, first.getSourceFile().fileName)
      .replace(/\.d\.ts$/, '')
      .split(path.sep)
      .join('/');
    reachable.set(target, { name: target.name, module, doc: documentation(target, checker), code: declarations.map(printDeclaration).join('\n') });
    for (const declaration of declarations) queue.push(...referencedSymbols(printable(declaration), checker));
  }

  for (const { entry, printed } of perEntry) {
    out.push(`## \`${entry.specifier}\``, '', `From \`${entry.source}\`; ${printed.length} exports.`, '');
    for (const item of printed) out.push(renderEntry(item, '###'));
  }
  const used = [...reachable.values()].sort((a, b) => a.name.localeCompare(b.name, 'en') || (a.module ?? '').localeCompare(b.module ?? '', 'en'));
  out.push(
    '## Types the exports use without exporting them',
    '',
    'Named by an export above (a parameter, a member, a base type) but not exported by name: users meet them',
    'through those exports, so they are part of the surface too. The module (under `src/`) says where each is declared.',
    '',
  );
  for (const item of used) out.push(renderEntry(item, '###'));
  return `${out.join('\n').trimEnd()}\n`;
}
