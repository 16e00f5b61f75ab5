-- Template test suites (docs/template-tests.md): a template's test cases (a scripted callee, the
-- lead's variables, expectations) and the runs that play them as calls on the sandbox line. A
-- case and a run belong to their template's owners; they go with the template.
CREATE TABLE template_tests (
  id text PRIMARY KEY,
  template_id text NOT NULL REFERENCES templates (id) ON DELETE CASCADE,
  reseller_id text NOT NULL REFERENCES resellers (id) ON DELETE CASCADE,
  merchant_id text REFERENCES merchants (id) ON DELETE CASCADE,
  name text NOT NULL,
  callee jsonb NOT NULL,
  variables jsonb NOT NULL DEFAULT '{}',
  expectations jsonb NOT NULL DEFAULT '[]',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (template_id, name)
);

-- A run: each case's result (its lead, status, the evidence of every expectation) kept whole in
-- `cases`, rewritten as each case's call ends.
CREATE TABLE template_test_runs (
  id text PRIMARY KEY,
  template_id text NOT NULL REFERENCES templates (id) ON DELETE CASCADE,
  reseller_id text NOT NULL REFERENCES resellers (id) ON DELETE CASCADE,
  merchant_id text REFERENCES merchants (id) ON DELETE CASCADE,
  status text NOT NULL CHECK (status IN ('running', 'passed', 'failed', 'interrupted')),
  agent text NOT NULL,
  note text,
  cases jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX template_test_runs_template_idx ON template_test_runs (template_id, created_at DESC);
