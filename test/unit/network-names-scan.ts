// The scanner of test/unit/network-registry-structure.test.ts: where a source file names a network instead of reading
// the registry (chains/registry.ts). Two kinds of network id:
// - ids that are no chain family's name (ethereum, bsc, base, arbitrum, ... any future entry): forbidden in code as a
//   string literal (or a word inside one: "one of ethereum, bsc"), an object key, an identifier naming it
//   (`bscAdapter`, `ETHEREUM_CHAIN_ID`), or an env name `CHAIN_<ID>_`;
// - ids that are also family names (tron, solana): legit in family code (`family === 'tron'`), so only a NETWORK
//   compared with or set to the literal is forbidden (`network === 'tron'`, `network: 'solana'`, `.network = 'tron'`,
//   `switch (network) { case 'tron': }`, SQL `network = 'solana'`, `'solana' as network`, PromQL `network="tron"`),
//   and lists of network ids (`['ethereum', 'bsc', 'tron', 'solana']`).
// Comments and prose are not code: "Ethereum" in a sentence, a capitalised name in a message, a word in a comment pass.
// Two protocol names happen to be a network's id: EIP-681's URI scheme `ethereum:` (the exact literal 'ethereum:' passes;
// chains/evm/adapter.ts EIP681_SCHEME) and EIP-1193's injected provider `window.ethereum` (passes inside a string).
import ts from 'typescript';

export interface NetworkVocabulary {
  /** Network ids that are no family's name. */
  networkOnly: readonly string[];
  /** Network ids that are also a family's name. */
  familyNamed: readonly string[];
  /**
   * Network ids that are also ordinary words of code and prose (`base`: base units, base58, a base URL). As words inside
   * identifiers or strings they mean something else; only the exact literal (`'base'`), an env name `CHAIN_BASE_` and
   * the network comparisons of family-named ids count.
   */
  ordinaryWords: readonly string[];
}

export interface Offence {
  line: number;
  text: string;
  why: string;
}

/** EIP-681's scheme: a protocol name that happens to be a network's id. */
export const EIP681_SCHEME_LITERAL = 'ethereum:';
/** EIP-1193's provider object, as the hosted pages' scripts (strings served to the browser) read it. */
const EIP1193_PROVIDER = /\bwindow\.ethereum\b/g;

const NETWORKISH = /network/i;

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Lower-case words of an identifier: `bscAdapter` -> bsc, adapter; `CHAIN_BSC_LIVE` -> chain, bsc, live. */
export function identifierWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+|(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

/** Words of a string literal's text that name a network: lower-case `ethereum`, or `CHAIN_ETHEREUM_`. */
function namesInText(literal: string, v: NetworkVocabulary): string[] {
  if (literal === EIP681_SCHEME_LITERAL) return [];
  const text = literal.replace(EIP1193_PROVIDER, '');
  const out: string[] = [];
  for (const id of v.networkOnly) {
    if (v.ordinaryWords.includes(id)) {
      if (text === id || new RegExp(`CHAIN_${escapeRe(id.toUpperCase())}_`).test(text)) out.push(id);
    } else if (new RegExp(`(?<![A-Za-z0-9_])${escapeRe(id)}(?![A-Za-z0-9_])`).test(text)) out.push(id);
    else if (new RegExp(`CHAIN_${escapeRe(id.toUpperCase())}_`).test(text)) out.push(id);
  }
  return out;
}

/** Ids checked only where a network is compared or set: family names and ordinary words. */
const comparedOnly = (v: NetworkVocabulary): string[] => [...v.familyNamed, ...v.ordinaryWords];

/** SQL or PromQL in a string that compares a network with a family-named id. */
function networkQueryNames(text: string, v: NetworkVocabulary): string[] {
  const out: string[] = [];
  for (const id of comparedOnly(v)) {
    const q = `['"]${escapeRe(id)}['"]`;
    const patterns = [
      new RegExp(`network\\s*(=|<>|!=|=~|!~)\\s*${q}`, 'i'),
      new RegExp(`${q}\\s+as\\s+\\w*network`, 'i'),
      new RegExp(`network\\s+(not\\s+)?in\\s*\\([^)]*${q}`, 'i'),
      new RegExp(`network\\s*(=~|!~)\\s*"[^"]*(?<![A-Za-z0-9_])${escapeRe(id)}(?![A-Za-z0-9_])`, 'i'),
      new RegExp(`CHAIN_${escapeRe(id.toUpperCase())}_`),
    ];
    if (patterns.some((p) => p.test(text))) out.push(id);
  }
  return out;
}

function stringValue(node: ts.Node | undefined): string | undefined {
  if (!node) return undefined;
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isLiteralTypeNode(node)) return stringValue(node.literal);
  if (ts.isParenthesizedExpression(node)) return stringValue(node.expression);
  return undefined;
}

/** The name an expression reads or writes: `network`, `w.network`, `row['network']` -> its last name. */
function lastName(node: ts.Node): string | undefined {
  if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) return node.text;
  if (ts.isPropertyAccessExpression(node)) return node.name.text;
  if (ts.isElementAccessExpression(node)) return stringValue(node.argumentExpression);
  if (ts.isParenthesizedExpression(node) || ts.isNonNullExpression(node)) return lastName(node.expression);
  if (ts.isAsExpression(node) || ts.isSatisfiesExpression(node)) return lastName(node.expression);
  if (ts.isStringLiteral(node)) return node.text;
  return undefined;
}

function declaredName(node: ts.Node): string | undefined {
  const name = (node as { name?: ts.Node }).name;
  return name ? lastName(name) : undefined;
}

const isEquality = (k: ts.SyntaxKind): boolean =>
  k === ts.SyntaxKind.EqualsEqualsEqualsToken ||
  k === ts.SyntaxKind.ExclamationEqualsEqualsToken ||
  k === ts.SyntaxKind.EqualsEqualsToken ||
  k === ts.SyntaxKind.ExclamationEqualsToken;

export function scanScript(path: string, text: string, v: NetworkVocabulary): Offence[] {
  const kind = path.endsWith('.tsx') ? ts.ScriptKind.TSX : path.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, kind);
  const all = [...v.networkOnly, ...v.familyNamed];
  const compared = comparedOnly(v);
  const comparedId = (s: string | undefined): s is string => s !== undefined && compared.includes(s);
  const out: Offence[] = [];
  const add = (node: ts.Node, why: string): void => {
    const { line } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
    out.push({ line: line + 1, text: text.split('\n')[line]?.trim() ?? '', why });
  };

  const visit = (node: ts.Node): void => {
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      for (const id of namesInText(node.text, v)) add(node, `names ${id} in a string`);
      for (const id of networkQueryNames(node.text, v)) add(node, `compares a network with '${id}' in a query`);
    } else if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) {
      for (const id of [...v.networkOnly, ...v.familyNamed]) {
        if (new RegExp(`CHAIN_${escapeRe(id.toUpperCase())}_`).test(node.text)) add(node, `identifier ${node.text} names ${id}`);
      }
      const words = identifierWords(node.text);
      for (const id of v.networkOnly)
        if (!v.ordinaryWords.includes(id) && words.includes(id)) add(node, `identifier ${node.text} names ${id}`);
    }

    if (ts.isBinaryExpression(node)) {
      const op = node.operatorToken.kind;
      if (isEquality(op)) {
        for (const [lit, other] of [
          [node.right, node.left],
          [node.left, node.right],
        ] as const) {
          const s = stringValue(lit);
          const name = lastName(other);
          if (comparedId(s) && name && NETWORKISH.test(name)) add(node, `compares ${name} with the network '${s}'`);
        }
      } else if (op === ts.SyntaxKind.EqualsToken || op === ts.SyntaxKind.QuestionQuestionToken || op === ts.SyntaxKind.BarBarToken) {
        const s = stringValue(node.right);
        const name = lastName(node.left);
        if (comparedId(s) && name && NETWORKISH.test(name)) add(node, `sets ${name} to the network '${s}'`);
      }
    }
    if (
      ts.isPropertyAssignment(node) ||
      ts.isPropertySignature(node) ||
      ts.isPropertyDeclaration(node) ||
      ts.isVariableDeclaration(node) ||
      ts.isParameter(node) ||
      ts.isBindingElement(node)
    ) {
      const name = declaredName(node);
      const value = ts.isPropertySignature(node)
        ? stringValue(node.type)
        : stringValue((node as { initializer?: ts.Expression }).initializer);
      const typeValue = ts.isPropertyDeclaration(node) || ts.isParameter(node) ? stringValue(node.type) : undefined;
      for (const s of [value, typeValue]) {
        if (comparedId(s) && name && NETWORKISH.test(name)) add(node, `sets ${name} to the network '${s}'`);
      }
    }
    if (ts.isSwitchStatement(node)) {
      const name = lastName(node.expression);
      if (name && NETWORKISH.test(name)) {
        for (const c of node.caseBlock.clauses) {
          if (ts.isCaseClause(c) && comparedId(stringValue(c.expression)))
            add(c, `switches on ${name} with case '${stringValue(c.expression)}'`);
        }
      }
    }
    if (ts.isArrayLiteralExpression(node) && node.elements.length >= 2) {
      const values = node.elements.map((e) => stringValue(e));
      if (values.every((s) => s !== undefined && all.includes(s))) add(node, `lists networks ${values.join(', ')}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** YAML, JSON, CSS, HTML, shell: line by line, `#` comments dropped where the format has them. */
export function scanText(path: string, text: string, v: NetworkVocabulary): Offence[] {
  const hashComments = /\.(ya?ml|sh)$/.test(path);
  const out: Offence[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = hashComments ? raw.replace(/(^|\s)#.*$/, '') : raw;
    for (const id of namesInText(line, v)) out.push({ line: i + 1, text: raw.trim(), why: `names ${id}` });
    for (const id of networkQueryNames(line, v)) out.push({ line: i + 1, text: raw.trim(), why: `compares a network with '${id}'` });
  });
  return out;
}

/** Whether `text` can hold an offence at all: most files name no network, and parsing them all takes seconds. */
export function mayName(text: string, v: NetworkVocabulary): boolean {
  const plain = v.networkOnly.filter((id) => !v.ordinaryWords.includes(id));
  const cap = (id: string): string => id[0]!.toUpperCase() + id.slice(1);
  if (plain.some((id) => new RegExp(`(?<![a-z])${escapeRe(id)}|${escapeRe(cap(id))}|${escapeRe(id.toUpperCase())}`).test(text)))
    return true;
  if (v.familyNamed.some((id) => text.includes(id))) return true;
  return [...v.familyNamed, ...v.ordinaryWords].some((id) =>
    new RegExp(`['"\`]${escapeRe(id)}['"\`]|CHAIN_${escapeRe(id.toUpperCase())}_`).test(text),
  );
}

export function scanFile(path: string, text: string, v: NetworkVocabulary): Offence[] {
  if (!mayName(text, v)) return [];
  return /\.(m|c)?(t|j)sx?$/.test(path) ? scanScript(path, text, v) : scanText(path, text, v);
}
