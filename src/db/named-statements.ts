import type pg from 'pg';

// Named prepared statements for a few hot statements (docs/performance.md, "API: what bounds the ratio"). The ledger
// names a statement's SQL text once (`nameStatement`); a pool created with `namedStatements` (src/db/database.ts) then
// sends that text under its name, so each connection parses and plans it once and afterwards sends Bind/Execute only.
// Only statements of a fixed text whose result columns are listed explicitly are named (a `*` would fail the cached
// plan after a migration adds a column). Never through PgBouncer in transaction pooling: a name lives on one server
// connection, which such a pool does not keep (main.ts enables this for DATABASE_POOL_MODE=direct only).

const nameOfText = new Map<string, string>();
const textOfName = new Map<string, string>();

/** Names `text`; a name already given to another text keeps it (the statement then runs unnamed). */
export function nameStatement(name: string, text: string): void {
  const taken = textOfName.get(name);
  if (taken !== undefined) return;
  textOfName.set(name, text);
  nameOfText.set(text, name);
}

/** The name of `text`, if it has one. */
export function statementName(text: string): string | undefined {
  return nameOfText.get(text);
}

type QueryFn = (...args: unknown[]) => unknown;

/** Makes `client` send named texts as named statements (text and values calls only; configs pass through). */
export function sendNamedStatements(client: pg.ClientBase): void {
  const query = client.query as unknown as QueryFn;
  (client as unknown as { query: QueryFn }).query = function (this: pg.ClientBase, ...args: unknown[]) {
    const [text, values] = args;
    if (typeof text === 'string' && args.length <= 2) {
      const name = nameOfText.get(text);
      if (name !== undefined) return query.call(this, { name, text, values });
    }
    return query.apply(this, args);
  };
}

/** Whether the service's pool sends the named statements (DATABASE_NAMED_STATEMENTS): never through a bouncer. */
export function usesNamedStatements(c: { DATABASE_POOL_MODE: 'direct' | 'transaction'; DATABASE_NAMED_STATEMENTS: boolean }): boolean {
  return c.DATABASE_POOL_MODE === 'direct' && c.DATABASE_NAMED_STATEMENTS;
}
