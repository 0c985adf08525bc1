import type pg from 'pg';

// Plans with actual row counts, as PostgreSQL ran them, sent to the test's own connection: auto_explain (a contrib
// module of the server) at log level NOTICE, JSON format. For tests that bound the work a statement does whatever plan
// the planner (or PL/pgSQL's plan cache) chose: overview-trigger-plans, webhooks-ordering-plan.

export interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Parent Relationship'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Join Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

export interface ExplainedStatement {
  query: string;
  plan: PlanNode;
}

/** Turns auto_explain on for this session (superuser: LOAD); `nested` also explains statements run by functions and triggers. */
export async function explainToClient(client: pg.ClientBase, o: { nested?: boolean } = {}): Promise<void> {
  for (const s of [
    `load 'auto_explain'`,
    'set auto_explain.log_min_duration = 0',
    'set auto_explain.log_analyze = on',
    ...(o.nested ? ['set auto_explain.log_nested_statements = on'] : []),
    `set auto_explain.log_format = 'json'`,
    `set auto_explain.log_level = 'notice'`,
    `set client_min_messages = 'notice'`,
  ])
    await client.query(s);
}

/** Collects every plan auto_explain sends `client` into `into`. */
export function collectPlans(client: pg.ClientBase, into: ExplainedStatement[]): void {
  client.on('notice', (m) => {
    const text = m.message ?? '';
    const at = text.indexOf('{');
    if (!text.startsWith('duration:') || at < 0) return;
    const parsed = JSON.parse(text.slice(at)) as { 'Query Text': string; Plan: PlanNode };
    into.push({ query: parsed['Query Text'], plan: parsed.Plan });
  });
}

/**
 * The node that handled the most rows (rows out and rows removed by filters and rechecks, over all its loops: EXPLAIN's
 * per-loop figures are averages), with its path. `subPlansOnly`: count only nodes under a SubPlan.
 */
export function heaviestNode(
  node: PlanNode,
  o: { subPlansOnly?: boolean } = {},
  inSubPlan = false,
  path = '',
): { work: number; where: string } {
  const here = inSubPlan || node['Parent Relationship'] === 'SubPlan';
  const counted = !o.subPlansOnly || here;
  const loops = node['Actual Loops'] ?? 1;
  const perLoop =
    (node['Actual Rows'] ?? 0) +
    (node['Rows Removed by Filter'] ?? 0) +
    (node['Rows Removed by Join Filter'] ?? 0) +
    (node['Rows Removed by Index Recheck'] ?? 0);
  const where = `${path}/${node['Node Type']}${node['Index Name'] ? ` ${node['Index Name']}` : ''}`;
  let best = { work: counted ? perLoop * loops : 0, where };
  for (const child of node.Plans ?? []) {
    const c = heaviestNode(child, o, here, where);
    if (c.work > best.work) best = c;
  }
  return best;
}
