import { Type, type Static, type TLiteral, type TSchema, type TSchemaOptions, type TUnion } from 'typebox';

/** RFC 9457 problem details, as every error response is shaped. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details' },
);

/** The error responses a route can give, all problem details. */
export function problems(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const status of statuses) out[status] = Type.Ref('Problem');
  return out;
}

export const PageQuery = Type.Object({
  // Bounded: a page number of 40 digits must be a 400, not an OFFSET the database cannot hold.
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 50 })),
});
export type PageQuery = Static<typeof PageQuery>;

export function listOf<T extends TSchema>(item: T) {
  return Type.Object({
    data: Type.Array(item),
    total: Type.Integer(),
    page: Type.Integer(),
    page_size: Type.Integer(),
  });
}

export interface Page {
  page: number;
  pageSize: number;
  limit: number;
  offset: number;
}

export function toPage(query: { page?: number; page_size?: number }): Page {
  const page = query.page ?? 1;
  const pageSize = query.page_size ?? 50;
  return { page, pageSize, limit: pageSize, offset: (page - 1) * pageSize };
}

export interface Paged<T> {
  data: T[];
  total: number;
  page: number;
  page_size: number;
}

export function paged<T>(data: T[], total: number, page: Page): Paged<T> {
  return { data, total, page: page.page, page_size: page.pageSize };
}

/** A nullable ISO 8601 timestamp, as every `*_time`/`*_at` field leaves the service. */
export const Timestamp = Type.String({ format: 'date-time' });
export const NullableTimestamp = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);
export const Id = Type.String({ minLength: 1, maxLength: 64 });
export const IdParams = Type.Object({ id: Id });

/**
 * One of `values`, as a union of literals (`anyOf` of `const`s in the JSON schema, so each value is
 * named in the document and in validation errors), typed as the union of the values: a union
 * mapped from an array is otherwise typed `never`.
 */
export function literalUnion<const T extends readonly string[]>(values: T, options?: TSchemaOptions): TUnion<{ -readonly [I in keyof T]: TLiteral<T[I]> }> {
  return Type.Union(values.map((v) => Type.Literal(v)), options) as never;
}
