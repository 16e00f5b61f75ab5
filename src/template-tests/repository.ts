/** The SQL of template test suites: their cases, their runs, and the test leads a run watches. */
import type { Queryable } from '../db/index.js';
import type { Callee, CaseResult, Expectation } from './schema.js';

export interface TestCaseRow {
  id: string;
  template_id: string;
  reseller_id: string;
  merchant_id: string | null;
  name: string;
  callee: Callee;
  variables: Record<string, string | number | boolean>;
  expectations: Expectation[];
  created_at: Date;
  updated_at: Date;
}

export interface TestRunRow {
  id: string;
  template_id: string;
  reseller_id: string;
  merchant_id: string | null;
  status: 'running' | 'passed' | 'failed' | 'interrupted';
  agent: string;
  note: string | null;
  cases: CaseResult[];
  created_at: Date;
  finished_at: Date | null;
}

/** What a run reads of a test lead. */
export interface WatchedLead {
  id: string;
  status: string;
  outcome: string | null;
  call_id: string | null;
  duration_seconds: number | null;
  cost: string | number | null;
  recording_url: string | null;
  meta_data: Record<string, unknown>;
}

export class TemplateTestsRepository {
  constructor(private readonly db: Queryable) {}

  async insertCase(row: Omit<TestCaseRow, 'created_at' | 'updated_at'>): Promise<TestCaseRow> {
    const { rows } = await this.db.query<TestCaseRow>(
      `INSERT INTO template_tests (id, template_id, reseller_id, merchant_id, name, callee, variables, expectations)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
      [row.id, row.template_id, row.reseller_id, row.merchant_id, row.name, JSON.stringify(row.callee), JSON.stringify(row.variables), JSON.stringify(row.expectations)],
    );
    return rows[0]!;
  }

  async updateCase(id: string, row: Pick<TestCaseRow, 'name' | 'callee' | 'variables' | 'expectations'>): Promise<TestCaseRow | undefined> {
    const { rows } = await this.db.query<TestCaseRow>(
      `UPDATE template_tests SET name = $2, callee = $3, variables = $4, expectations = $5, updated_at = now() WHERE id = $1 RETURNING *`,
      [id, row.name, JSON.stringify(row.callee), JSON.stringify(row.variables), JSON.stringify(row.expectations)],
    );
    return rows[0];
  }

  async deleteCase(id: string): Promise<boolean> {
    const { rows } = await this.db.query(`DELETE FROM template_tests WHERE id = $1 RETURNING id`, [id]);
    return rows.length > 0;
  }

  async caseById(templateId: string, id: string): Promise<TestCaseRow | undefined> {
    const { rows } = await this.db.query<TestCaseRow>(`SELECT * FROM template_tests WHERE template_id = $1 AND id = $2`, [templateId, id]);
    return rows[0];
  }

  async cases(templateId: string): Promise<TestCaseRow[]> {
    const { rows } = await this.db.query<TestCaseRow>(`SELECT * FROM template_tests WHERE template_id = $1 ORDER BY created_at, id`, [templateId]);
    return rows;
  }

  async insertRun(row: Omit<TestRunRow, 'created_at' | 'finished_at'>): Promise<TestRunRow> {
    const { rows } = await this.db.query<TestRunRow>(
      `INSERT INTO template_test_runs (id, template_id, reseller_id, merchant_id, status, agent, note, cases)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
      [row.id, row.template_id, row.reseller_id, row.merchant_id, row.status, row.agent, row.note, JSON.stringify(row.cases)],
    );
    return rows[0]!;
  }

  /** Writes a run's cases as they stand; `status` other than running finishes it. */
  async saveRun(id: string, status: TestRunRow['status'], cases: CaseResult[]): Promise<void> {
    await this.db.query(
      `UPDATE template_test_runs SET status = $2, cases = $3, finished_at = CASE WHEN $2 = 'running' THEN NULL ELSE now() END WHERE id = $1`,
      [id, status, JSON.stringify(cases)],
    );
  }

  async run(id: string): Promise<TestRunRow | undefined> {
    const { rows } = await this.db.query<TestRunRow>(`SELECT * FROM template_test_runs WHERE id = $1`, [id]);
    return rows[0];
  }

  async runs(templateId: string, limit: number): Promise<TestRunRow[]> {
    const { rows } = await this.db.query<TestRunRow>(`SELECT * FROM template_test_runs WHERE template_id = $1 ORDER BY created_at DESC, id LIMIT $2`, [templateId, limit]);
    return rows;
  }

  /** Runs this process was carrying when it stopped: nothing will finish them now. */
  async interruptRunning(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.query(`UPDATE template_test_runs SET status = 'interrupted', finished_at = now() WHERE id = ANY($1::text[]) AND status = 'running'`, [ids]);
  }

  async leads(ids: readonly string[]): Promise<WatchedLead[]> {
    const { rows } = await this.db.query<WatchedLead>(
      `SELECT id, status, outcome, call_id, duration_seconds, cost, recording_url, meta_data FROM leads WHERE id = ANY($1::text[])`,
      [ids],
    );
    return rows;
  }
}
